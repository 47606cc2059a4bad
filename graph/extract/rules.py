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
observation they describe. Sections stay in the text as ``FINDINGS :`` headers.

Requires the optional extra ``cxrkg[extract]`` (spaCy, medspaCy); ImportError names it otherwise.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator, Mapping

from graph.vocabulary import Vocabulary, normalise_phrase, vocabulary

DATA_SOURCE = "cxrkg-rules"
SECTION_ORDER = ("comparison", "indication", "history", "technique", "findings", "impression")
_DEVICE_CATEGORIES = {"tubesandlines", "device"}
_SIDE_WORDS = ("left", "right", "bilateral", "left-sided", "right-sided", "bilaterally", "both")

#: change cue -> (class for a condition, class for a device); None: not a change of that kind.
CHANGE_CUES: dict[str, tuple[str | None, str | None]] = {
    **{w: ("CHAN-NC", "CHAN-NC") for w in (
        "unchanged", "stable", "stably", "no change", "no significant change", "no interval change",
        "not significantly changed", "without change", "similar", "persistent", "persists", "persist",
        "again seen", "again noted", "again demonstrated", "redemonstrated", "re-demonstrated",
        "grossly unchanged", "remains", "remain", "unchanged in position", "in unchanged position")},
    **{w: ("CHAN-CON-WOR", None) for w in (
        "increased", "increasing", "increase", "worsened", "worsening", "worse", "enlarging",
        "progressed", "progression", "progressive", "more prominent", "larger", "interval increase")},
    **{w: ("CHAN-CON-IMP", None) for w in (
        "improved", "improving", "improvement", "decreased", "decreasing", "decrease", "smaller",
        "less prominent", "diminished", "reduced", "interval improvement", "interval decrease")},
    **{w: ("CHAN-CON-AP", "CHAN-DEV-AP") for w in (
        "new", "newly", "interval development", "interval appearance", "developing", "new onset")},
    **{w: (None, "CHAN-DEV-AP") for w in ("placed", "inserted", "interval placement", "placement of")},
    **{w: ("CHAN-CON-RES", "CHAN-DEV-DISA") for w in (
        "resolved", "resolution", "resolving", "cleared", "no longer seen", "no longer visualized",
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
_POSSIBLE_AFTER = ("may be present", "could be present", "is suspected", "are suspected", "not excluded",
                   "cannot be excluded", "can not be excluded", "is possible", "are possible", "is questioned")
_POSSIBLE_BEFORE = ("could be", "may", "could", "question of", "questionable", "suspicious for", "cannot exclude",
                    "can not exclude", "could indicate", "may indicate", "versus", "vs", "differential")
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
    infixes = [p for p in nlp.Defaults.infixes if "-" not in p and "/" not in p]
    nlp.tokenizer.infix_finditer = compile_infix_regex(infixes).finditer
    nlp.add_pipe("sentencizer", config={"punct_chars": [".", "?", "!", ":", ";"]})

    findings = nlp.add_pipe("medspacy_target_matcher", name="cxr_findings")
    rules = []
    for f in v.findings.values():
        for form in dict.fromkeys(normalise_phrase(x) for x in (f.name, *f.synonyms)):
            if form and v.finding_for(form) == f.name:
                rules.append(TargetRule(form, "OBS", attributes=None, metadata={"finding": f.name}))
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


def _sections(doc) -> list[str | None]:
    out, section = [], None
    toks = [t.text for t in doc]
    for i, tok in enumerate(toks):
        word = tok.rstrip(":").upper()
        if word in {s.upper() for s in SECTION_ORDER} and (tok.endswith(":") or (i + 1 < len(toks) and toks[i + 1] == ":")):
            section = word.lower()
        out.append(section)
    return out


def _spans(doc, v: Vocabulary) -> tuple[list[_Span], list[_Span]]:
    """(observations, modifiers) with overlaps resolved: findings win; an anatomy phrase overlapping the
    start of a finding keeps its leading part (``left`` of ``left pleural`` + ``pleural effusion``)."""
    from spacy.util import filter_spans

    obs = [_Span(e.start, e.end, "OBS", e.text, v.finding_for(e.text)) for e in doc.ents if v.finding_for(e.text)]
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


def _polarity(ent, section: str | None) -> str | None:
    """RadGraph label for a finding, or None to skip it."""
    if ent._.is_family or section == "comparison":
        return None
    if ent._.is_negated:
        return "OBS-DA"
    if ent._.is_uncertain or ent._.is_hypothetical or section in ("indication", "history"):
        return "OBS-U"
    return "OBS-DP"


def _gap(a: _Span, b: _Span) -> int:
    return b.start - a.end if a.end <= b.start else a.start - b.end if b.end <= a.start else 0


def doc_to_radgraph(doc, v: Vocabulary | None = None, data_source: str = DATA_SOURCE) -> dict:
    """Turn one processed spaCy Doc into a RadGraph v1 / RadGraph2 document (see the module docstring)."""
    v = v or vocabulary()
    sections = _sections(doc)
    sent_of = [0] * len(doc)
    for n, sent in enumerate(doc.sents):
        for i in range(sent.start, sent.end):
            sent_of[i] = n
    obs_spans, mods = _spans(doc, v)
    ents_by_start = {e.start: e for e in doc.ents}

    entities: list[dict] = []  # with "_start", "_end" spaCy indices; ids assigned at the end
    obs_items: list[tuple[_Span, dict]] = []
    for o in obs_spans:
        label = _polarity(ents_by_start[o.start], sections[o.start])
        if label is None:
            continue
        item = {"_start": o.start, "_end": o.end, "label": label, "rel": [], "_finding": o.value}
        entities.append(item)
        obs_items.append((o, item))

    def same_sentence(m: _Span) -> list[tuple[_Span, dict]]:
        return [(o, it) for o, it in obs_items if sent_of[o.start] == sent_of[m.start]]

    def nearest(m: _Span, max_gap: int, only_after: bool = False):
        cands = [(o, it) for o, it in same_sentence(m) if _gap(m, o) <= max_gap and (not only_after or o.start >= m.end)]
        return min(cands, key=lambda p: (_gap(m, p[0]), p[0].start < m.start)) if cands else None

    changed: set[int] = set()
    for m in mods:
        if m.kind == "ANAT":
            hit = nearest(m, 6)
            if hit:
                anat = {"_start": m.start, "_end": m.end, "label": "ANAT-DP", "rel": []}
                entities.append(anat)
                hit[1]["rel"].append(("located_at", anat))
        elif m.kind == "SIDE":
            hit = nearest(m, 3)
            if hit:
                entities.append({"_start": m.start, "_end": m.end, "label": "ANAT-DP", "rel": [("modify", hit[1])]})
        elif m.kind == "SEV":
            hit = nearest(m, 3)
            if hit:
                entities.append({"_start": m.start, "_end": m.end, "label": "OBS-DP", "rel": [("modify", hit[1])]})
        elif m.kind == "CHANGE":
            cond_label, dev_label = CHANGE_CUES[m.value]
            after = nearest(m, 4, only_after=True)
            # attributive cue ("new effusion") -> the next finding; predicative ("effusions are unchanged")
            # -> the findings before it in the sentence that carry no change yet
            targets = [after] if after and after[0].start - m.end <= 2 else [
                (o, it) for o, it in same_sentence(m) if o.end <= m.start and id(it) not in changed]
            if not targets and after:
                targets = [after]
            for o, it in targets:
                is_device = v.findings[o.value].category in _DEVICE_CATEGORIES
                label = dev_label if is_device else cond_label
                if label is None or (it["label"] == "OBS-DA" and label not in ("CHAN-CON-RES", "CHAN-DEV-DISA", "CHAN-NC")):
                    continue
                if label in ("CHAN-CON-RES", "CHAN-DEV-DISA"):
                    it["label"] = "OBS-DA"
                entities.append({"_start": m.start, "_end": m.end, "label": label, "rel": [("modify", it)]})
                changed.add(id(it))
        elif m.kind == "SUGG":
            before = [(o, it) for o, it in same_sentence(m) if o.end <= m.start]
            after = [(o, it) for o, it in same_sentence(m) if o.start >= m.end]
            if before and after:
                src, dst = before[-1][1], after[0][1]
                src["rel"].append(("suggestive_of", dst))

    # merge entities that share a span (one cue modifying several findings) and number them in text order
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

    # spaCy token index -> whitespace token index (whitespace-only tokens are dropped)
    kept = [t for t in doc if not t.is_space]
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
