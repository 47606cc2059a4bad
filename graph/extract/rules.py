"""The ``rules`` extractor: report text -> RadGraph v1 / RadGraph2 JSON, offline, no model weights.

Built on spaCy's blank English pipeline and medspaCy: two ``medspacy_target_matcher`` components (findings
as ``doc.ents``; anatomy, side, severity, change and "suggestive of" cues as a span group) and
``medspacy_context`` for negation / uncertainty / history. Findings, anatomy phrases and severity words come
from :func:`graph.vocabulary.vocabulary` (one source of truth); only the change cues, side words and the few
ConText rule additions below are defined here.

Output, per document (exactly what :func:`graph.formats.radgraph.parse_radgraph` reads)::

    {"text": "FINDINGS : Small left pleural effusion , increased .",   # spaCy tokens joined by one space
     "entities": {"1": {"tokens": "Small", "label": "OBS-DP", "start_ix": 2, "end_ix": 2,
                        "relations": [["modify", "3"]]}, ...},
     "data_source": "cxrkg-rules", "data_split": "inference"}

Labels: ANAT-DP, OBS-DP / OBS-U / OBS-DA (ConText: negated -> OBS-DA; possible, hypothetical, or stated
in the indication / history section -> OBS-U; historical stays OBS-DP; family history and the comparison
section are skipped), severity words as OBS-DP ``modify`` -> observation, a side word before/after a
finding as ANAT-DP ``modify`` -> observation, ``located_at`` observation -> nearest anatomy phrase in the
sentence, ``suggestive_of`` between observations around "suggestive of" / "consistent with" cues, and
RadGraph2 change entities (CHAN-NC, CHAN-CON-AP/WOR/IMP/RES, CHAN-DEV-AP/PLACE/DISA) ``modify`` -> the
observation they describe (how a cue finds it, including sentences that refer back such as "Unchanged.":
:func:`doc_to_radgraph`), and the direction of a scoliosis curve ("dextro", "convex to the right") as an
ANAT-DP ``modify`` (:func:`curve_side`). Sections stay in the text as ``FINDINGS :`` headers.

Requires the optional extra ``cxrkg[extract]`` (spaCy, medspaCy); ImportError names it otherwise.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Iterable, Iterator, Mapping

from graph.formats.radgraph import token_sections
from graph.vocabulary import Vocabulary, normalise_phrase, vocabulary

DATA_SOURCE = "cxrkg-rules"
SECTION_ORDER = ("comparison", "indication", "history", "technique", "findings", "impression")
_DEVICE_CATEGORIES = {"tubesandlines", "device"}
_SIDE_WORDS = ("left", "right", "bilateral", "left-sided", "right-sided", "bilaterally", "both")

#: change cue -> (class for a condition, class for a device); None: not a change of that kind.
CHANGE_CUES: dict[str, tuple[str | None, str | None]] = {
    **{w: ("CHAN-NC", "CHAN-NC") for w in (
        "unchanged", "stable", "stably", "no change", "no significant change", "no interval change",
        "not significantly changed", "without change", "similar to prior", "similar to the prior", "appears similar",
        "similar in appearance", "persistent", "persistently", "redemonstration", "again demonstrated are", "persists", "persist",
        "again seen", "again noted", "again demonstrated", "redemonstrated", "re-demonstrated",
        "grossly unchanged", "remains", "remain", "unchanged in position", "in unchanged position")},
    **{w: ("CHAN-CON-WOR", None) for w in (
        "increased", "increasing", "increase", "worsened", "worsening", "worse", "enlarging",
        "progressed", "progression", "progressive", "more prominent", "larger", "interval increase")},
    **{w: ("CHAN-CON-IMP", None) for w in (
        "improved", "improving", "improvement", "decreased", "decreasing", "decrease", "smaller", "resolving",
        "clearing", "near complete clearing", "partially resolved",
        "less prominent", "diminished", "reduced", "interval improvement", "interval decrease")},
    **{w: ("CHAN-CON-AP", "CHAN-DEV-AP") for w in (
        "new", "newly", "interval development", "interval appearance", "developing", "new onset", "developed",
        "has developed", "have developed", "development of")},
    **{w: (None, "CHAN-DEV-AP") for w in ("placed", "inserted", "interval placement", "placement of")},
    **{w: ("CHAN-CON-RES", "CHAN-DEV-DISA") for w in (
        "resolved", "resolution", "cleared", "no longer seen", "no longer visualized",
        "no longer present", "no longer identified", "interval resolution")},
    **{w: (None, "CHAN-DEV-DISA") for w in ("removed", "removal", "interval removal", "extubated")},
    **{w: (None, "CHAN-DEV-PLACE") for w in (
        "advanced", "withdrawn", "retracted", "repositioned", "pulled back", "interval advancement")},
}
SUGGESTIVE_CUES = ("suggestive of", "consistent with", "compatible with", "may represent", "could represent",
                   "likely represents", "likely representing", "representing", "represents", "due to",
                   "concerning for", "secondary to", "reflecting", "reflects")
_NO_NEGATION = ("no change", "no significant change", "no interval change", "without change",
                "not significantly changed", "no longer")
_POSSIBLE_AFTER = ("may be present", "could be present", "is suspected", "are suspected", "suspected", "not excluded",
                   "cannot be excluded", "can not be excluded", "is possible", "are possible", "is questioned",
                   "difficult to exclude", "difficult to entirely exclude", "not entirely excluded",
                   "not completely excluded", "may not be demonstrated", "may not be visualized", "may not be seen",
                   "is not excluded", "are not excluded", "would be difficult to exclude")
_POSSIBLE_BEFORE = ("could be", "may", "could", "question of", "questionable", "suspicious for", "cannot exclude",
                    "can not exclude", "could indicate", "may indicate", "versus", "vs", "differential",
                    "possibly", "question", "questioned", "suspected", "suspicion for", "suspicion of",
                    "concern for", "evaluation for", "evaluate for", "for evaluation of", "to evaluate for",
                    "if there is", "if", "consider", "rule out", "r/o", "might", "might be", "potentially")
_NORMAL_AFTER = ("within normal limits", "within limits of normal", "appear normal", "appears normal",
                 "are normal", "is normal", "are within normal limits", "is within normal limits")
_DROPPED_CONTEXT_RULES = {": no", ": none"}
_TERMINATE = ("there is", "there are", "which", "however", "although", "but", "otherwise", "with the exception",
              "except", "while", "though")


@dataclass(frozen=True)
class _Span:
    start: int
    end: int  # exclusive, spaCy token indices
    kind: str  # OBS, ANAT, SIDE, SEV, CHANGE, SUGG
    text: str
    value: str | None = None  # finding name, change cue, ...


def _require_spacy():
    try:
        import medspacy  # noqa: F401
        import spacy
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise ImportError("the rules extractor needs spaCy and medspaCy: pip install 'cxrkg[extract]'") from exc
    return spacy


def _region_forms(v: Vocabulary) -> list[str]:
    """Every anatomy surface form the vocabulary knows (region names and region synonyms)."""
    return sorted(set(getattr(v, "_region_forms", {})) | {normalise_phrase(n) for n in v.regions})


_PIPELINES: dict[int, object] = {}


def build_pipeline(v: Vocabulary | None = None):
    """The spaCy ``Language`` (built once per vocabulary): tokenizer (hyphen / slash words kept whole),
    sentencizer, target matchers, ConText."""
    v = v or vocabulary()
    if id(v) not in _PIPELINES:
        _PIPELINES[id(v)] = _build(v)
    return _PIPELINES[id(v)]


def _build(v: Vocabulary):
    spacy = _require_spacy()
    from medspacy.context import ConText, ConTextRule
    from medspacy.target_matcher import TargetRule
    from spacy.util import compile_infix_regex

    nlp = spacy.blank("en")
    # hyphenated and slashed words stay whole ("left-sided", "and/or"), except two words joined by a slash
    # ("atelectasis/scarring"), which are two findings
    infixes = [p for p in nlp.Defaults.infixes if "-" not in p and "/" not in p] + [r"(?<=[a-zA-Z]{3})/(?=[a-zA-Z]{3})"]
    nlp.tokenizer.infix_finditer = compile_infix_regex(infixes).finditer
    nlp.add_pipe("sentencizer", config={"punct_chars": [".", "?", "!", ":", ";"]})

    findings = nlp.add_pipe("medspacy_target_matcher", name="cxr_findings")
    rules = []
    for f in v.findings.values():
        for form in dict.fromkeys(normalise_phrase(x) for x in (f.name, *f.synonyms)):
            if form and v.finding_for(form) == f.name:
                rules.append(TargetRule(form, "OBS", attributes=None, metadata={"finding": f.name}))
    # "the heart is large": "large" is a severity word elsewhere, so only this predicate names cardiomegaly; the
    # observation is the word "large", located at the heart (RadGraph's "heart" + "large", which the
    # vocabulary composes as "heart large")
    rules.append(TargetRule("heart is large", "OBS_PRED", pattern=[
        {"LOWER": {"IN": ["heart", "cardiac"]}}, {"LOWER": {"IN": ["size", "silhouette", "shadow", "xxxx"]}, "OP": "?"},
        {"LOWER": {"IN": ["is", "remains", "appears", "appear", "was"]}},
        {"LOWER": {"IN": list(_DEGREE_WORDS)}, "OP": "?"}, {"LOWER": "large"}],
        metadata={"finding": v.finding_for("heart large")}))
    findings.add(rules)

    mods = nlp.add_pipe("medspacy_target_matcher", name="cxr_modifiers",
                        config={"result_type": "group", "span_group_name": "cxr_modifiers", "prune": False})
    mods.add([TargetRule(form, "ANAT") for form in _region_forms(v)]
             + [TargetRule(w, "SIDE") for w in _SIDE_WORDS]
             + [TargetRule(w, "SEV") for w in v.severity_scores]
             + [TargetRule(w, "CHANGE") for w in CHANGE_CUES]
             + [TargetRule(w, "SUGG") for w in SUGGESTIVE_CUES])

    # medspaCy's default rules, less ": no" / ": none" (backward negation, which would negate across our
    # "FINDINGS: No ..." section headers)
    defaults = [r for r in ConText(nlp, rules="default").rules if r.literal not in _DROPPED_CONTEXT_RULES]
    context = nlp.add_pipe("medspacy_context", config={"rules": None})
    context.add(defaults)
    context.add([ConTextRule(w, "PSEUDO_NEGATED_EXISTENCE") for w in _NO_NEGATION]
                + [ConTextRule(w, "TERMINATE", direction="TERMINATE") for w in _TERMINATE]
                + [ConTextRule(w, "POSSIBLE_EXISTENCE", direction="BACKWARD") for w in _POSSIBLE_AFTER]
                + [ConTextRule(w, "POSSIBLE_EXISTENCE", direction="FORWARD") for w in _POSSIBLE_BEFORE]
                + [ConTextRule(w, "NEGATED_EXISTENCE", direction="BACKWARD") for w in _NORMAL_AFTER])
    return nlp


def compose_text(report: str | Mapping[str, str]) -> str:
    """Report text with section headers: a mapping ``{"findings": ..., "impression": ...}`` becomes
    ``"FINDINGS: ... IMPRESSION: ..."`` (known sections in report order, then the rest); text is kept as is."""
    if isinstance(report, str):
        return " ".join(report.split())
    keys = sorted(report, key=lambda k: SECTION_ORDER.index(k.lower()) if k.lower() in SECTION_ORDER else 99)
    return " ".join(f"{k.upper()}: {' '.join(report[k].split())}" for k in keys if report[k] and report[k].strip())


def _spans(doc, v: Vocabulary) -> tuple[list[_Span], list[_Span]]:
    """(observations, modifiers) with overlaps resolved: findings win; an anatomy phrase overlapping the
    start of a finding keeps its leading part (``left`` of ``left pleural`` + ``pleural effusion``)."""
    from spacy.util import filter_spans

    obs = []
    for e in doc.ents:
        if e.label_ == "OBS_PRED":  # "heart is large": the observation is its last word
            obs.append(_Span(e.end - 1, e.end, "OBS", doc[e.end - 1].text, v.finding_for("heart large")))
        elif v.finding_for(e.text) and not _not_a_finding(e, doc):
            obs.append(_Span(e.start, e.end, "OBS", e.text, v.finding_for(e.text)))
    taken = set().union(*(range(o.start, o.end) for o in obs)) if obs else set()
    cands = []
    for s in filter_spans(list(doc.spans.get("cxr_modifiers", []))):
        rng = set(range(s.start, s.end))
        if not rng & taken:
            cands.append(_Span(s.start, s.end, s.label_, s.text, normalise_phrase(s.text)))
            continue
        if s.label_ == "ANAT":
            end = s.start
            while end < s.end and end not in taken:
                end += 1
            head = doc[s.start:end]
            if len(head) and normalise_phrase(head.text) in _SIDE_WORDS:
                cands.append(_Span(s.start, end, "SIDE", head.text, normalise_phrase(head.text)))
            elif len(head) and v.regions_for(head.text):
                cands.append(_Span(s.start, end, "ANAT", head.text, normalise_phrase(head.text)))
    return obs, sorted(cands, key=lambda s: s.start)


#: forms that are not the finding after these words ("bone density" is not a lung opacity)
_NOT_AFTER = {"density": ("bone", "osseous", "mineral"), "densities": ("bone", "osseous", "mineral")}


def _not_a_finding(ent, doc) -> bool:
    before = _NOT_AFTER.get(normalise_phrase(ent.text))
    return bool(before) and ent.start > 0 and doc[ent.start - 1].lower_ in before


def _polarity(ent, section: str | None) -> str | None:
    """RadGraph label for a finding, or None to skip it."""
    if ent._.is_family or section == "comparison":
        return None
    if ent._.is_negated:
        return "OBS-DA"
    if ent._.is_uncertain or ent._.is_hypothetical or section in ("indication", "history"):
        return "OBS-U"
    return "OBS-DP"


#: bare forms that name a finding only when their subject is in the sentence ("the heart is enlarged",
#: not "enlarged pulmonary arteries"): form -> words one of which must occur in the same sentence
_NEEDS_SUBJECT = {"enlarged": ("heart", "cardiac", "cardiomediastinal", "cardiopericardial", "silhouette"),
                  "enlargement": ("heart", "cardiac", "cardiomediastinal", "cardiopericardial", "silhouette")}


def _has_subject(o: _Span, doc, sent_of: list[int]) -> bool:
    words = _NEEDS_SUBJECT.get(normalise_phrase(o.text))
    if not words:
        return True
    n = sent_of[o.start]
    return any(t.lower_ in words for t in doc if sent_of[t.i] == n)


def _gap(a: _Span, b: _Span) -> int:
    return b.start - a.end if a.end <= b.start else a.start - b.end if b.end <= a.start else 0


#: words between a change cue and its finding that do not break the link ("improved right basilar consolidation")
_LINK_WORDS = {"of", "the", "in", "and", ",", "a", "an", "both", "bilateral", "bilaterally", "mild", "small", "patchy",
               "streaky", "focal", "XXXX", "lung", "lobe", "base", "basilar", "interstitial", "airspace", "pulmonary",
               "appearance", "previously", "zone"}
#: findings whose own name uses a change word as a state ("increased interstitial markings")
_STATE_FINDINGS = {"increased reticular markings/ild pattern"}
_STATE_WORDS = {"increased", "increase", "decreased", "decrease", "increasing", "decreasing"}
_SIDE_WORDS_ONLY = {"left", "right"}
#: adverbs of degree allowed inside a predicate ("the heart is slightly large")
_DEGREE_WORDS = ("slightly", "mildly", "moderately", "markedly", "very", "quite", "somewhat", "again", "still")

#: forms that name a finding only as the subject of a stated change ("decreasing lung volumes" -> low lung
#: volumes worsened, "improved aeration" -> atelectasis improved); without a change cue they are dropped
#: ("normal lung volumes", "aeration of the lungs") and their quantity cues read inversely
_CHANGE_SUBJECTS = {"lung volumes", "lung volume", "aeration"}
_MORE = {"increased", "increasing", "increase", "enlarging", "larger", "more prominent", "interval increase"}
_LESS = {"decreased", "decreasing", "decrease", "smaller", "less prominent", "diminished", "reduced",
         "interval decrease"}
#: cues that also state a state ("decreased lung volumes", "lung volumes are decreased"): they change a change
#: subject only in a sentence that names a comparison ("decreased from the prior study")
_STATE_FORMS = {"increased", "decreased", "increase", "decrease", "reduced", "diminished"}
_COMPARISON_WORDS = {"prior", "previous", "previously", "since", "compared", "comparison", "interval", "earlier",
                     "before", "last", "from", "preceding", "recent"}
#: cues that can stand before a noun ("stable cardiomediastinal contours"); verbs and phrases ("remain low",
#: "again seen overlying", "similar to prior exams") cannot
_ATTRIBUTIVE_CUES = {"stable", "unchanged", "grossly unchanged", "increased", "decreased", "improved", "worsened",
                     "increasing", "decreasing", "improving", "worsening", "persistent", "new", "enlarging",
                     "progressive", "resolving", "resolved", "diminished", "reduced", "larger", "smaller", "worse",
                     "more prominent", "less prominent", "redemonstrated", "re-demonstrated", "developing"}
#: words after a cue that do not make it attributive ("effusion, increased in size", "stable since")
_FUNCTION_AFTER = {"from", "since", "in", "compared", "comparison", "to", "with", "when", "as", "and", "on", "at", "by",
                   "than", "relative", "over", "of", "the", "or", "but", "which", "versus", "vs", "now", "there",
                   "this", "is", "are", "was", "were", "has", "have", "been", "be", "appears", "appear", "position",
                   "positioning", "size", "appearance", "configuration", "extent", "degree", "xxxx", "without", "for"}
#: the only words of a sentence that refers back ("Unchanged.", "This is increased since the previous study.")
_REFER_WORDS = {"this", "it", "these", "they", "that", "there", "which", "finding", "findings", "appearance",
                "abnormality", "abnormalities", "change", "changes", "process", "is", "are", "was", "were", "has",
                "have", "had", "been", "be", "does", "do", "did", "appear", "appears", "appeared", "seem", "seems",
                "to", "of", "the", "a", "an", "since", "from", "compared", "comparison", "with", "than", "as", "prior",
                "previous", "previously", "study", "studies", "exam", "exams", "examination", "examinations",
                "radiograph", "radiographs", "film", "films", "image", "images", "xxxx", "slightly", "mildly",
                "minimally", "somewhat", "considerably", "significantly", "markedly", "substantially", "further",
                "overall", "also", "however", "in", "size", "interval", "last", "earlier", "essentially",
                "grossly", "relatively", "again", "and", "on", "date", "dated", "recent", "one", "all", "both"}

#: findings whose side is the direction of a curve (MeSH "Scoliosis/right": dextroscoliosis), not a body side
CURVE_FINDINGS = {"scoliosis"}
_RIGHTWARD = {"dextro", "dextro-convex", "dextroconvex", "rightward", "rightwards", "right-convex"}
_LEFTWARD = {"levo", "levo-convex", "levoconvex", "leftward", "leftwards", "left-convex"}


def curve_side(text: str) -> str | None:
    """The direction a curve word states: ``dextroscoliosis`` / ``dextro`` / ``rightward`` / ``right`` -> right,
    ``levo...`` / ``leftward`` / ``left`` -> left, else None (both -> None)."""
    sides = set()
    for w in normalise_phrase(text).split():
        if w.startswith("dextro") or w in _RIGHTWARD or w in ("right", "right-sided"):
            sides.add("right")
        elif w.startswith("levo") or w in _LEFTWARD or w in ("left", "left-sided"):
            sides.add("left")
    return sides.pop() if len(sides) == 1 else None


def _free_gap(m: _Span, o: _Span, doc, covered: set[int]) -> int:
    """Tokens between a cue and a later finding that are neither anatomy / side / severity nor link words."""
    return sum(1 for i in range(m.end, o.start) if i not in covered and doc[i].text not in _LINK_WORDS
               and doc[i].lower_ not in _LINK_WORDS)


def _side_comparison(m: _Span, doc) -> bool:
    """``larger than left``, ``left worse than right``: a comparison of sides (or of two things), not of studies."""
    if m.end < len(doc) and doc[m.end].lower_ == "than":
        nxt = doc[m.end + 1].lower_ if m.end + 1 < len(doc) else ""
        return nxt in _SIDE_WORDS_ONLY or (m.start > 0 and doc[m.start - 1].lower_ in _SIDE_WORDS_ONLY)
    return m.start > 0 and doc[m.start - 1].lower_ in _SIDE_WORDS_ONLY and m.value in ("worse", "larger", "smaller")


def _comparison_in(n: int, doc, sent_of: list[int]) -> bool:
    return any(t.lower_ in _COMPARISON_WORDS for t in doc if sent_of[t.i] == n)


def _attributive(m: _Span, doc, sent_of: list[int], obs_tokens: set[int]) -> bool:
    """The cue describes the unknown word after it ("increased AP diameter", "stable mediastinal contours"),
    so it says nothing about the findings before it."""
    if m.value not in _ATTRIBUTIVE_CUES:
        return False
    i = m.end
    while i < len(doc) and sent_of[i] == sent_of[m.start] and doc[i].lower_.endswith("ly"):
        i += 1
    if i >= len(doc) or sent_of[i] != sent_of[m.start] or i in obs_tokens:
        return False
    tok = doc[i]
    if tok.text.rstrip(":").lower() in SECTION_ORDER:
        return False  # a section header ("unchanged IMPRESSION:") ends the sentence
    return tok.is_alpha and tok.lower_ not in _FUNCTION_AFTER


def _curve_direction(o: _Span, doc, sent_of: list[int], obs_tokens: set[int]) -> int | None:
    """Token index of the word that gives a curve's direction: before it ("dextro curvature", "rightward
    curvature", "right apex curvature", "mild left curvature") or after it ("convex to the right")."""
    n = sent_of[o.start]
    for i in range(o.start - 1, max(o.start - 4, -1), -1):
        if sent_of[i] != n or doc[i].is_punct or i in obs_tokens:
            break
        low = doc[i].lower_
        if low in _RIGHTWARD or low in _LEFTWARD or low in ("right", "left", "right-sided", "left-sided"):
            return i
    for i in range(o.end, min(o.end + 6, len(doc))):
        if sent_of[i] != n or i in obs_tokens or doc[i].lower_ in (".", ";"):
            break
        low = doc[i].lower_
        if low in _RIGHTWARD or low in _LEFTWARD:
            return i
        if low in ("right", "left") and i >= 1 and doc[i - 1].lower_ in ("convex", "the", "toward", "towards"):
            if doc[i - 1].lower_ == "convex" or any(doc[j].lower_ in ("convex", "to", "toward", "towards")
                                                    for j in range(max(i - 3, 0), i - 1)):
                return i
    return None


def _lateral(finding: str, v: Vocabulary) -> bool:
    return any("{side}" in p for p in v.findings[finding].region_patterns)


def _place_unanchored(obs_items: list, mods: list[_Span], entities: list[dict], sent_of: list[int],
                      v: Vocabulary) -> None:
    """Give a sided finding stated without anatomy or side a place, so the graph does not put it on both
    sides by default:

    1. the nearest anatomy phrase or side word of its sentence ("opacity in the left base, representing
       atelectasis" -> atelectasis located_at "left base");
    2. else another present mention of the same finding in the report that has one ("Left base
       atelectasis." in the impression for "... atelectasis." in the findings): the same anatomy and side.
    """
    def anchors(item: dict) -> tuple[list[dict], list[dict]]:
        located = [t for r, t in item["rel"] if r == "located_at"]
        sides = [e for e in entities if e["label"] == "ANAT-DP" and any(r == "modify" and t is item for r, t in e["rel"])]
        return located, sides

    by_span = {(e["_start"], e["_end"]): e for e in entities if e["label"] == "ANAT-DP"}
    todo = [(o, it) for o, it in obs_items if _lateral(o.value, v) and anchors(it) == ([], [])]
    for o, it in todo:
        near = [m for m in mods if m.kind in ("ANAT", "SIDE") and sent_of[m.start] == sent_of[o.start]]
        if not near:
            continue
        m = min(near, key=lambda m: (_gap(m, o), m.start > o.start))
        anat = by_span.get((m.start, m.end))
        if anat is None:
            anat = {"_start": m.start, "_end": m.end, "label": "ANAT-DP", "rel": []}
            entities.append(anat)
            by_span[(m.start, m.end)] = anat
        if m.kind == "ANAT":
            it["rel"].append(("located_at", anat))
        else:
            anat["rel"].append(("modify", it))
    for o, it in todo:
        if anchors(it) != ([], []) or it["label"] != "OBS-DP":
            continue
        for o2, it2 in obs_items:
            if it2 is it or o2.value != o.value or it2["label"] != "OBS-DP":
                continue
            located, sides = anchors(it2)
            if located or sides:
                it["rel"].extend(("located_at", a) for a in located)
                for side in sides:
                    side["rel"].append(("modify", it))
                break


def _compose(obs_items: list, entities: list[dict], doc, sent_of: list[int], obs_tokens: set[int],
             v: Vocabulary) -> list:
    """A word before a finding that, with it, names another finding becomes an OBS-DP ``modify`` of it and
    changes its finding, as ingestion composes modifier + span ("calcified right hilar lymph nodes" ->
    granulomatous disease, not enlarged hilum). Looks back at most six tokens in the sentence, not across another
    finding."""
    out = []
    for o, it in obs_items:
        for i in range(o.start - 1, max(o.start - 7, -1), -1):
            if sent_of[i] != sent_of[o.start] or i in obs_tokens or doc[i].lower_ in (".", ";", ":"):
                break
            f = v.finding_for(f"{doc[i].text} {o.text}")
            if f and f != o.value:
                entities.append({"_start": i, "_end": i + 1, "label": "OBS-DP", "rel": [("modify", it)], "_mod": True})
                it["_finding"] = f
                o = replace(o, value=f)
                break
        out.append((o, it))
    return out


def _refer_back(m: _Span, doc, sent_of: list[int], sections: list[str | None], mods: list[_Span],
                obs_items: list, changed: set[int]) -> list:
    """What a change cue alone in its sentence refers to (rule 4 of :func:`doc_to_radgraph`).

    The sentence must hold no finding, anatomy or side and no word outside :data:`_REFER_WORDS` (besides
    the cue): "Unchanged.", "Decreased from prior radiograph.", "However, it has decreased considerably
    since the previous examination." Then: the present (OBS-DP) findings of the previous sentence of the
    same section (list numbers such as "2." skipped); none when that sentence states only absent findings
    ("No acute disease. Unchanged."). A section that opens with it: the present findings of the earlier
    findings / impression sections that carry no change yet."""
    n = sent_of[m.start]
    sent = [t for t in doc if sent_of[t.i] == n]
    if any(sent_of[o.start] == n for o, _ in obs_items) or any(
            x.kind in ("ANAT", "SIDE") and sent_of[x.start] == n for x in mods):
        return []
    cue_tokens = set(range(m.start, m.end))
    for t in sent:
        if t.is_alpha and t.i not in cue_tokens and t.lower_ not in _REFER_WORDS:
            return []
    section = sections[m.start]
    headers = {s.upper() for s in SECTION_ORDER}

    def content(k: int) -> bool:
        return any(t.is_alpha and t.text.rstrip(":").upper() not in headers for t in doc if sent_of[t.i] == k)

    k = n - 1
    first = sent[0].i
    while k >= 0:
        toks = [t for t in doc if sent_of[t.i] == k]
        if not toks or sections[toks[0].i] != section:
            k = -1
            break
        if content(k):
            break
        k -= 1
    if k >= 0:
        return [(o, it) for o, it in obs_items if sent_of[o.start] == k and it["label"] == "OBS-DP"]
    return [(o, it) for o, it in obs_items if o.start < first and sections[o.start] in ("findings", "impression")
            and sections[o.start] != section and it["label"] == "OBS-DP" and id(it) not in changed]


def _curve_sides(obs_items: list, entities: list[dict], doc, sent_of: list[int], obs_tokens: set[int]) -> None:
    """A curve finding (scoliosis) takes the direction word near it as an ANAT-DP ``modify`` and drops a
    ``located_at`` to a sided anatomy phrase that only held that word ("right apex curvature" is a curve
    with a right-sided apex, not scoliosis of the right lung apex)."""
    for o, it in obs_items:
        if o.value not in CURVE_FINDINGS or curve_side(o.text):
            continue
        i = _curve_direction(o, doc, sent_of, obs_tokens)
        if i is None:
            continue
        it["rel"] = [(r, tgt) for r, tgt in it["rel"]
                     if not (r == "located_at" and tgt["_start"] <= i < tgt["_end"])]
        entities.append({"_start": i, "_end": i + 1, "label": "ANAT-DP", "rel": [("modify", it)], "_mod": True})
        located = {id(tgt) for _, x in obs_items for r, tgt in x["rel"] if r == "located_at"}
        entities[:] = [e for e in entities if not (e.get("_mod") and e["label"] == "ANAT-DP" and not e["rel"]
                                                   and id(e) not in located and e["_start"] <= i < e["_end"]
                                                   and e["_end"] - e["_start"] > 1)]


def doc_to_radgraph(doc, v: Vocabulary | None = None, data_source: str = DATA_SOURCE) -> dict:
    """Turn one processed spaCy Doc into a RadGraph v1 / RadGraph2 document (see the module docstring).

    Change cues link to their observation in this order:

    1. attributive: the next finding after the cue, with at most two other words between ("improved right
       basilar consolidation", "unchanged appearance of ... granuloma");
    2. predicative: the findings before it in the sentence that carry no change yet ("effusions are
       unchanged"), unless the cue is an adjective that describes the word after it ("increased AP
       diameter", "stable mediastinal contours");
    3. a finding just after it (at most four tokens);
    4. refer-back (:func:`_refer_back`): a sentence with nothing but the cue and words that point back
       ("Unchanged.", "This is increased since the previous study.") changes the present findings of the
       previous sentence of its section; a section that opens with such a sentence ("IMPRESSION: No
       change.") changes the report's earlier present findings that carry no change yet.

    Change subjects ("lung volumes", "aeration") are kept only when a cue links to them, their quantity
    cues read inversely ("decreasing lung volumes" -> CHAN-CON-WOR), and a state word ("decreased") changes
    them only in a sentence that names a comparison ("decreased from the prior study"). A scoliosis
    mention gets the direction of its curve ("dextro", "rightward", "convex to the right") as an ANAT-DP
    ``modify`` (the side MeSH gives it); the direction inside the word ("dextroscoliosis") needs none.
    """
    v = v or vocabulary()
    sections = token_sections([t.text for t in doc], SECTION_ORDER)
    sent_of = [0] * len(doc)
    for n, sent in enumerate(doc.sents):
        for i in range(sent.start, sent.end):
            sent_of[i] = n
    obs_spans, mods = _spans(doc, v)
    obs_spans = [o for o in obs_spans if _has_subject(o, doc, sent_of)]
    ent_at = {i: e for e in doc.ents for i in range(e.start, e.end)}
    obs_tokens = {i for o in obs_spans for i in range(o.start, o.end)}

    entities: list[dict] = []  # with "_start", "_end" spaCy indices; ids assigned at the end
    obs_items: list[tuple[_Span, dict]] = []
    for o in obs_spans:
        label = _polarity(ent_at[o.start], sections[o.start])
        if label is None:
            continue
        item = {"_start": o.start, "_end": o.end, "label": label, "rel": [], "_finding": o.value}
        entities.append(item)
        obs_items.append((o, item))
    obs_items = _compose(obs_items, entities, doc, sent_of, obs_tokens, v)

    def same_sentence(m: _Span) -> list[tuple[_Span, dict]]:
        return [(o, it) for o, it in obs_items if sent_of[o.start] == sent_of[m.start]]

    def nearest(m: _Span, max_gap: int, only_after: bool = False):
        cands = [(o, it) for o, it in same_sentence(m) if _gap(m, o) <= max_gap and (not only_after or o.start >= m.end)]
        return min(cands, key=lambda p: (_gap(m, p[0]), p[0].start < m.start)) if cands else None

    changed: set[int] = set()

    def link_change(m: _Span, targets: list) -> bool:
        cond_label, dev_label = CHANGE_CUES[m.value]
        linked = False
        for o, it in targets:
            subject = normalise_phrase(o.text) in _CHANGE_SUBJECTS
            if subject and m.value in _STATE_FORMS and not _comparison_in(sent_of[m.start], doc, sent_of):
                continue  # "decreased lung volumes" is a state
            is_device = v.findings[o.value].category in _DEVICE_CATEGORIES
            label = dev_label if is_device else cond_label
            if subject and label in ("CHAN-CON-WOR", "CHAN-CON-IMP"):
                label = "CHAN-CON-IMP" if m.value in _MORE else "CHAN-CON-WOR" if m.value in _LESS else label
            if label is None or (it["label"] == "OBS-DA" and label not in ("CHAN-CON-RES", "CHAN-DEV-DISA", "CHAN-NC")):
                continue
            if it["label"] == "OBS-U" or (o.value in _STATE_FINDINGS and m.value in _STATE_WORDS):
                continue  # a possible diagnosis has no stated change; "increased markings" is a state
            if label in ("CHAN-CON-RES", "CHAN-DEV-DISA"):
                it["label"] = "OBS-DA"
            entities.append({"_start": m.start, "_end": m.end, "label": label, "rel": [("modify", it)]})
            changed.add(id(it))
            linked = True
        return linked

    unlinked: list[_Span] = []
    covered = {i for m in mods if m.kind in ("ANAT", "SIDE", "SEV") for i in range(m.start, m.end)}
    for m in mods:
        if m.kind == "ANAT":
            hit = nearest(m, 6)
            if hit:
                anat = {"_start": m.start, "_end": m.end, "label": "ANAT-DP", "rel": [], "_mod": True}
                entities.append(anat)
                hit[1]["rel"].append(("located_at", anat))
        elif m.kind == "SIDE":
            hit = nearest(m, 3)
            if hit:
                entities.append({"_start": m.start, "_end": m.end, "label": "ANAT-DP", "rel": [("modify", hit[1])],
                                 "_mod": True})
        elif m.kind == "SEV":
            hit = nearest(m, 3)
            if hit:
                entities.append({"_start": m.start, "_end": m.end, "label": "OBS-DP", "rel": [("modify", hit[1])],
                                 "_mod": True})
        elif m.kind == "CHANGE":
            if _side_comparison(m, doc):
                continue  # "right larger than left" compares sides, not studies
            after = [(o, it) for o, it in same_sentence(m) if o.start >= m.end and _free_gap(m, o, doc, covered)
                     <= (0 if normalise_phrase(o.text) in _CHANGE_SUBJECTS else 2)]
            after = min(after, key=lambda p: p[0].start) if after else None
            # attributive cue ("new effusion", "improved right basilar consolidation") -> the next finding;
            # predicative ("effusions are unchanged") -> the findings before it in the sentence that carry no change
            # yet, unless the cue describes the word after it ("increased AP diameter")
            targets = [after] if after else []
            if not targets and not _attributive(m, doc, sent_of, obs_tokens):
                targets = [(o, it) for o, it in same_sentence(m) if o.end <= m.start and id(it) not in changed]
            if not targets:
                hit = nearest(m, 4, only_after=True)
                targets = [hit] if hit else []
            if not link_change(m, targets) and not targets:
                unlinked.append(m)
        elif m.kind == "SUGG":
            before = [(o, it) for o, it in same_sentence(m) if o.end <= m.start]
            after = [(o, it) for o, it in same_sentence(m) if o.start >= m.end]
            if before and after:
                src, dst = before[-1][1], after[0][1]
                src["rel"].append(("suggestive_of", dst))

    for m in unlinked:
        targets = _refer_back(m, doc, sent_of, sections, mods, obs_items, changed)
        if targets:
            link_change(m, targets)

    obs_items, entities = _drop_unchanged_subjects(obs_items, entities, changed)
    _curve_sides(obs_items, entities, doc, sent_of, obs_tokens)
    _place_unanchored(obs_items, mods, entities, sent_of, v)

    return _numbered(entities, doc, data_source)

def _drop_unchanged_subjects(obs_items: list[tuple[_Span, dict]], entities: list[dict],
                             changed: set[int]) -> tuple[list[tuple[_Span, dict]], list[dict]]:
    """Change subjects without a change are not findings ("normal lung volumes"): they go, with the
    relations to them and the modifiers left without a target."""
    dropped = {id(it) for o, it in obs_items if normalise_phrase(o.text) in _CHANGE_SUBJECTS and id(it) not in changed}
    if not dropped:
        return obs_items, entities
    obs_items = [(o, it) for o, it in obs_items if id(it) not in dropped]
    entities = [e for e in entities if id(e) not in dropped]
    for e in entities:
        e["rel"] = [(r, tgt) for r, tgt in e["rel"] if id(tgt) not in dropped]
    targeted = {id(tgt) for e in entities for _, tgt in e["rel"]}
    return obs_items, [e for e in entities if not (e.get("_mod") and not e["rel"] and id(e) not in targeted)]


def _numbered(entities: list[dict], doc, data_source: str) -> dict:
    """The RadGraph document: entities that share a span merged (one cue modifying several findings),
    numbered in text order, spaCy token indexes turned into whitespace-token indexes."""
    merged: dict[tuple[int, int, str], dict] = {}
    for e in entities:
        key = (e["_start"], e["_end"], e["label"])
        if key in merged and e is not merged[key]:
            merged[key]["rel"].extend(e["rel"])
            e["_alias"] = merged[key]
        else:
            merged.setdefault(key, e)
    ordered = sorted(merged.values(), key=lambda e: (e["_start"], e["_end"], e["label"]))
    ids = {id(e): str(n) for n, e in enumerate(ordered, start=1)}
    for e in entities:
        if "_alias" in e:
            ids[id(e)] = ids[id(e["_alias"])]
    kept = [t for t in doc if not t.is_space]  # whitespace-only tokens are dropped
    index = {t.i: n for n, t in enumerate(kept)}
    out = {}
    for e in ordered:
        s, last = index[e["_start"]], index[e["_end"] - 1]
        rels = list(dict.fromkeys((r, ids[id(t)]) for r, t in e["rel"]))
        out[ids[id(e)]] = {"tokens": " ".join(t.text for t in kept[s:last + 1]), "label": e["label"],
                           "start_ix": s, "end_ix": last, "relations": [list(r) for r in rels]}
    return {"text": " ".join(t.text for t in kept), "entities": out, "data_source": data_source,
            "data_split": "inference"}


def extract(items: Iterable[tuple[str, str | Mapping[str, str]]], v: Vocabulary | None = None,
            data_source: str = DATA_SOURCE, batch_size: int = 64) -> Iterator[tuple[str, dict]]:
    """Stream ``(doc_key, RadGraph document)`` for ``(doc_key, text or {section: text})`` items (nlp.pipe)."""
    v = v or vocabulary()
    nlp = build_pipeline(v)
    keyed = ((compose_text(report), key) for key, report in items)
    for doc, key in nlp.pipe(keyed, as_tuples=True, batch_size=batch_size):
        yield key, doc_to_radgraph(doc, v, data_source)


def extract_text(text: str | Mapping[str, str], doc_key: str = "doc", v: Vocabulary | None = None) -> dict:
    """``{doc_key: document}`` for one report."""
    return dict(extract([(doc_key, text)], v))


def write_radgraph_json(items: Iterable[tuple[str, str | Mapping[str, str]]], path: Path,
                        v: Vocabulary | None = None) -> int:
    """Extract and write one RadGraph JSON object ``{doc_key: doc}`` to ``path``, streamed; returns the count."""
    n = 0
    with Path(path).open("w", encoding="utf-8") as fh:
        fh.write("{")
        for key, doc in extract(items, v):
            fh.write(("," if n else "") + "\n" + json.dumps(key) + ": " + json.dumps(doc))
            n += 1
        fh.write("\n}\n")
    return n
