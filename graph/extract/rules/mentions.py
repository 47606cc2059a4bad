"""Mentions of one processed Doc: the findings (``doc.ents``) and the modifiers (anatomy, side, severity,
change and "suggestive of" cues of the ``cxr_modifiers`` span group) as :class:`Mention` spans, with
overlaps resolved, and the token-distance and subject checks that the linking rules share."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from graph.vocabulary import Vocabulary, normalise_phrase

SIDE_WORDS = ("left", "right", "bilateral", "left-sided", "right-sided", "bilaterally", "both")
#: both sides named in one phrase: bilateral (the annotation guide's §5); a side word alone links to one finding
SIDE_COORDINATIONS = tuple(f"{a} {link} {b}" for a, b in (("right", "left"), ("left", "right"))
                           for link in ("and", "greater than", "more than", "worse than", "larger than", ">"))

#: the vocabulary categories of devices, tubes and lines (Chest ImaGenome's "device" and "tubesandlines")
DEVICE_CATEGORIES = frozenset({"device", "tubesandlines"})

#: forms that are not the finding after these words ("bone density" is not a lung opacity)
_BONE_WORDS = ("bone", "bony", "osseous")
_NOT_AFTER = {"density": _BONE_WORDS + ("mineral",), "densities": _BONE_WORDS + ("mineral",),
              # "no suspicious bony opacities" denies a bone lesion, not a lung opacity (the guide's §2; a bony opacity
              # with no "suspicious" in its sentence is no finding at all, see _NEEDS_SUBJECT)
              "opacity": _BONE_WORDS, "opacities": _BONE_WORDS,
              # a side before a redacted "cardiac XXXX" makes it a heart border, not a redacted pacemaker
              "cardiac xxxx": ("left", "right"),
              # a bare "failure" is the heart's ("cardiomegaly without failure"), not another organ's
              "failure": ("respiratory", "renal", "kidney", "liver", "hepatic", "organ", "multiorgan", "graft"),
              # "old fracture deformities of the ribs" are healed fractures, no deformity besides them
              "deformity": ("fracture",), "deformities": ("fracture",)}

#: bare forms that name a finding only when their subject is in the sentence ("the heart is enlarged",
#: not "enlarged pulmonary arteries"): form -> words one of which must occur in the same sentence
_NEEDS_SUBJECT = {"enlarged": ("heart", "cardiac", "cardiomediastinal", "cardiopericardial", "silhouette"),
                  "enlargement": ("heart", "cardiac", "cardiomediastinal", "cardiopericardial", "silhouette"),
                  # "widening of the right acromioclavicular joint" is no mediastinal widening
                  "widening": ("mediastinum", "mediastinal", "paratracheal"),
                  # "the mediastinal silhouette is widened" (the guide's §2: a widened mediastinum); "widened
                  # acromioclavicular joints", "widened AP diameter" are none
                  "widened": ("mediastinum", "mediastinal"),
                  # "flattening of the left hemidiaphragm" is hyperaeration (the guide's §2: flattened hemidiaphragms)
                  "flattening": ("diaphragm", "diaphragms", "hemidiaphragm", "hemidiaphragms"),
                  # "pleural effusion versus thickening" offers pleural thickening (the guide's §2: scarring);
                  # "bronchial wall thickening" or "paratracheal thickening" is none
                  "thickening": ("pleural", "pleura", "costophrenic", "apical", "apex", "apices", "biapical"),
                  # "deformity of the lateral left 6th rib" is a rib deformity; of a vertebra or clavicle, none here
                  "deformity": ("rib", "ribs"), "deformities": ("rib", "ribs"), "contour deformity": ("rib", "ribs"),
                  "contour deformities": ("rib", "ribs"),
                  # a bony opacity called suspicious is a bone lesion ("No suspicious bony opacities": the guide's
                  # §2, a sclerotic focus of a bone); one that merely overlies the lung is the bone itself
                  "bony opacity": ("suspicious",), "bony opacities": ("suspicious",),
                  "osseous opacity": ("suspicious",), "osseous opacities": ("suspicious",),
                  # "fullness of the left hilum" is an enlarged hilum (the guide's §2: "hilar fullness"); of an
                  # atrium, none
                  "fullness": ("hilum", "hila"),
                  # "prominence of the left hilum", "the left hilar contour is prominent" (the guide's §2: prominent
                  # hila are an enlarged hilum); a prominent aorta, heart or vasculature is none here
                  "prominent": ("hilum", "hila", "hilar"), "prominence": ("hilum", "hila", "hilar"),
                  # "resection of left upper lobe" is a lobectomy (the guide's §7); of a rib or a clavicle, none here
                  "resection": ("lobe", "lobes", "lung"),
                  # "sternotomy XXXX is disrupted", "broken XXXX sternotomy XXXX": broken wires (the guide's §7)
                  **dict.fromkeys(("broken", "fractured", "disrupted"), ("sternotomy", "sternal"))}

#: forms that name no finding of their own when one of these words is in their sentence: surgical clips said to be
#: a bypass graft's ("surgical clips consistent with prior CABG", "CABG clips") are the graft's markers (the
#: annotation guide's §7: `other:surgical clips` are clips not said to be CABG's; 10 IU reports outside the held-out
#: ones)
_CABG_WORDS = ("cabg", "bypass")
_PART_OF = {"surgical clips": _CABG_WORDS, "surgical clip": _CABG_WORDS, "clips": _CABG_WORDS, "clip": _CABG_WORDS,
            "mediastinal clips": _CABG_WORDS}


#: words that state a change of a change subject of the vocabulary ("heart size has increased", "interval increase
#: in heart size": the guide's §6); without one next to it the subject is a normal structure ("heart size is stable")
_QUANTITY_WORDS = {"increased", "increase", "increasing", "enlarging", "larger", "decreased", "decrease", "decreasing",
                   "smaller", "reduced", "diminished"}
#: words between a change subject and the quantity word after it ("heart size has slightly increased") or before it
#: ("increase in the heart size")
_VERBS_BETWEEN = {"is", "has", "have", "was", "been", "appears", "appear"}
_BEFORE_SUBJECT = {"in", "the"}
_QUANTITY_REACH = 4


@dataclass(frozen=True)
class Mention:
    """One matched span of a Doc: ``start`` / ``end`` (exclusive) are spaCy token indices; ``kind`` is OBS,
    ANAT, SIDE, SEV, CHANGE or SUGG; ``value`` the finding name (OBS) or the normalised phrase (the others)."""

    start: int
    end: int
    kind: str
    text: str
    value: str


class TokenTexts(Protocol):
    """Token texts by spaCy token index (a list, or a Doc's read lazily): ``texts[i]`` is token i's."""

    def __getitem__(self, i: int, /) -> str:
        """Token ``i``'s text."""
        ...


def mention_spans(doc, v: Vocabulary, keep=None, text: str | None = None) -> tuple[list[Mention], list[Mention]]:
    """(observations, modifiers) with overlaps resolved: findings win; an anatomy phrase overlapping the
    start of a finding keeps its leading part (``left`` of ``left pleural`` + ``pleural effusion``).

    ``keep``: a test a finding must pass to be one (:func:`has_subject`); one that fails it leaves its words to
    the modifiers ("These are more prominent than on the prior study": "prominent" names an enlarged hilum
    only beside a hilum, so "more prominent" is the change cue).

    ``text``: the Doc's text, when the caller has it (``Doc.text`` joins it anew from the tokens)."""
    from spacy.util import filter_spans

    text = doc.text if text is None else text
    obs = []
    for e in doc.ents:
        if e.label_ == "OBS_PRED":  # "heart is large": the observation is its last word
            obs.append(Mention(e.end - 1, e.end, "OBS", doc[e.end - 1].text, _predicate_finding(v)))
        elif (finding := v.finding_for(words := span_text(e, text))) and not _not_a_finding(e, doc, words):
            start = _after_side_word(e, doc, v)
            obs.append(Mention(start, e.end, "OBS", span_text(doc[start:e.end], text), finding))
    obs = [o for o in obs if keep is None or keep(o)]
    taken = set().union(*(range(o.start, o.end) for o in obs)) if obs else set()
    cands = []
    for s in filter_spans(list(doc.spans.get("cxr_modifiers", []))):
        rng = set(range(s.start, s.end))
        if not rng & taken:
            words = span_text(s, text)
            cands.append(Mention(s.start, s.end, s.label_, words, normalise_phrase(words)))
            continue
        if s.label_ == "CHANGE" and s.start not in taken and s.end - 1 in taken:
            # "the left hilum is more prominent": the finding keeps "prominent", the cue its head "more"
            end = next(i for i in range(s.start, s.end) if i in taken)
            cands.append(Mention(s.start, end, "CHANGE", span_text(doc[s.start:end], text),
                                 normalise_phrase(span_text(s, text))))
        elif s.label_ == "ANAT":
            end = s.start
            while end < s.end and end not in taken:
                end += 1
            head = span_text(doc[s.start:end], text) if end > s.start else ""
            if head and normalise_phrase(head) in SIDE_WORDS + SIDE_COORDINATIONS:
                cands.append(Mention(s.start, end, "SIDE", head, normalise_phrase(head)))
            elif head and v.regions_for(head):
                cands.append(Mention(s.start, end, "ANAT", head, normalise_phrase(head)))
            elif end > s.start and _yield_to_anatomy(s, obs, doc, v):
                words = span_text(s, text)
                cands.append(Mention(s.start, s.end, "ANAT", words, normalise_phrase(words)))
    return obs, sorted(cands, key=lambda s: s.start)


def span_text(span, text: str) -> str:
    """``span.text`` (a spaCy Span's verbatim text) read from its Doc's text ``text`` by character offsets: the
    same string (the Doc's text is its tokens' texts with their trailing whitespace, and a Span's text leaves out
    its last token's), without the Token objects spaCy builds, twice per token, to join it."""
    return text[span.start_char:span.end_char]


def _predicate_finding(v: Vocabulary) -> str:
    """The finding of the predicate rule "heart is large" (label OBS_PRED,
    :mod:`graph.extract.rules.spacy_pipeline`): the one the vocabulary maps "heart large" to.

    Raises:
        ValueError: the vocabulary maps "heart large" to no finding.
    """
    finding = v.finding_for("heart large")
    if finding is None:
        raise ValueError('the vocabulary maps "heart large" to no finding, which the rule for "heart is large" '
                         '(label OBS_PRED) names: add "heart large" to the synonyms of the enlarged heart (the '
                         'packaged vocabulary\'s "enlarged cardiac silhouette")')
    return finding


def _after_side_word(ent, doc, v: Vocabulary) -> int:
    """Where a finding's span starts once a side word that opens it is given up: a name that the vocabulary
    composes from a place and a finding ("left clavicle fracture", "right shoulder degenerative changes", so
    that "fracture of the left clavicle" reads as a clavicle fracture) keeps its side as a side word when the
    rest of it names the same finding."""
    if len(ent) > 2 and ent[0].lower_ in ("left", "right") and v.finding_for(ent[1:].text) == v.finding_for(ent.text):
        return ent.start + 1
    return ent.start


def _yield_to_anatomy(s, obs: list[Mention], doc, v: Vocabulary) -> bool:
    """An anatomy phrase that ends inside a finding whose rest names the same finding ("left lower lung" +
    "lung nodule"): the finding gives up the shared words ("nodule"), so that the place keeps its side.
    Changes ``obs`` in place; False when there is no such finding."""
    for n, o in enumerate(obs):
        if s.start < o.start < s.end < o.end and v.finding_for(doc[s.end:o.end].text) == o.value:
            obs[n] = Mention(s.end, o.end, "OBS", doc[s.end:o.end].text, o.value)
            return True
    return False


def _not_a_finding(ent, doc, words: str) -> bool:
    """``words`` (the entity's text) name no finding after the word before them ("bone density")."""
    before = _NOT_AFTER.get(normalise_phrase(words), ())
    return bool(before) and ent.start > 0 and doc[ent.start - 1].lower_ in before


def has_subject(o: Mention, lower: list[str], sentence: tuple[int, int], v: Vocabulary) -> bool:
    """False for a bare form of :data:`_NEEDS_SUBJECT` whose subject word is not in its sentence, for a form of
    :data:`_PART_OF` whose whole is, and for a change subject of the vocabulary (:func:`is_change_subject`) without a
    quantity word next to it (``lower``: the Doc's lower-case tokens; ``sentence``: the (start, end) tokens of
    ``o``'s sentence)."""
    form = normalise_phrase(o.text)
    if is_change_subject(o, v):
        return quantity_next_to(o.start, o.end, lower, sentence)
    words, whole = _NEEDS_SUBJECT.get(form), _PART_OF.get(form)
    if not words and not whole:
        return True
    said = lower[sentence[0]:sentence[1]]
    return (not words or any(w in words for w in said)) and not (whole and any(w in whole for w in said))


def is_change_subject(o: Mention, v: Vocabulary) -> bool:
    """The finding mention is one of its finding's change subjects ("heart size": the vocabulary's ``subjects``)."""
    return any(normalise_phrase(s) == normalise_phrase(o.text) for s in v.findings[o.value].subjects)


def quantity_next_to(start: int, end: int, lower: TokenTexts, sentence: tuple[int, int]) -> bool:
    """A quantity word follows tokens ``start:end``, with verbs and adverbs only between ("heart size has
    increased", "the heart is slightly larger"), or stands before them, with "in" or "the" only between ("increase
    in heart size", "increased heart size"); ``lower``: the lower-case tokens, ``sentence``: its (start, end)."""
    i = end
    while i < min(sentence[1], end + _QUANTITY_REACH) and (lower[i] in _VERBS_BETWEEN or lower[i].endswith("ly")):
        i += 1
    if i < sentence[1] and lower[i] in _QUANTITY_WORDS:
        return True
    j = start - 1
    while j >= max(sentence[0], start - 2) and lower[j] in _BEFORE_SUBJECT:
        j -= 1
    return j >= sentence[0] and lower[j] in _QUANTITY_WORDS


def gap(a: Mention, b: Mention) -> int:
    """Tokens between two mentions (0 when they overlap)."""
    return b.start - a.end if a.end <= b.start else a.start - b.end if b.end <= a.start else 0
