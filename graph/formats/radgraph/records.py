"""One RadGraph document's validated entities as normalised records: a report and its mentions.

How entities become mentions (findings from spans and their modifiers, regions from located_at targets or
the finding's default regions, severity, linked RadGraph2 change entities, sentences and report sections)
is in :func:`doc_to_records`.
"""

from __future__ import annotations

import re
from collections import defaultdict
from functools import lru_cache
from itertools import pairwise

from graph.formats.radgraph.doc_mapping import DocStudy
from graph.formats.radgraph.entities import Entity
from graph.records import MentionRecord, ReportRecord, joined_id, record_maker
from graph.terms import Source, State
from graph.vocabulary import Vocabulary, normalise_phrase, normalise_region_phrase

#: Report section headers recognised in tokenized text (``FINDINGS :`` or ``FINDINGS:``), MIMIC-CXR's and
#: Open-i's section names.
SECTION_NAMES = ("comparison", "indication", "history", "technique", "examination", "findings", "impression")
_SENTENCE_END = {".", "?", "!"}
_mention = record_maker(MentionRecord)  # MentionRecord(*values), made faster: a report has a dozen
_report = record_maker(ReportRecord)  # ReportRecord(*values)


def token_sections(tokens: list[str], names: tuple[str, ...] = SECTION_NAMES) -> list[str | None]:
    """Per token, the (lower-case) report section it sits in: a header is a section name followed by a colon,
    in the token or the next one (``FINDINGS :``); None before the first header."""
    return _sections(tokens, [i for i, tok in enumerate(tokens) if tok.endswith(":")], names)


def _sections(tokens: list[str], colons: list[int], names: tuple[str, ...] = SECTION_NAMES) -> list[str | None]:
    """:func:`token_sections`, given the indices of the tokens that end with a colon (the colon first: it rules
    out most tokens)."""
    n = len(tokens)
    if not colons:
        return [None] * n
    headers = sorted({*colons, *(i - 1 for i in colons if i and tokens[i] == ":")})
    out: list[str | None] = [None] * n
    starts: list[int] = []
    words: list[str] = []
    for i in headers:
        if (word := tokens[i].rstrip(":").lower()) in names:
            starts.append(i)
            words.append(word)
    for (i, end), word in zip(pairwise([*starts, n]), words, strict=True):
        out[i:end] = [word] * (end - i)
    return out


def sentence_index(tokens: list[str]) -> list[int]:
    """Per token, the index of its sentence (0-based): a sentence ends after ``.``, ``?``, ``!`` or a
    section header's ``:``. A RadGraph mention's ``sentence_id`` is ``<doc_key>|<index>``."""
    return _sentences_of_tokens(_sentence_ends(tokens))


def _sentences_of_tokens(ends: list[int]) -> list[int]:
    """Per token, the index of its sentence, from the sentences' ends (:func:`_sentence_ends`)."""
    sent_of: list[int] = []
    start = 0
    for sent, end in enumerate(ends):
        sent_of += [sent] * (end - start)
        start = end
    return sent_of


def _token_indices(text: str, pattern: re.Pattern) -> list[int]:
    """The index in ``text.split(" ")`` of the token where each match of ``pattern`` starts, in text order: the
    spaces before it, counted by ``str.count`` from the previous match (a few matches per report, found in C,
    where a loop over the tokens makes a Python comparison per token)."""
    out: list[int] = []
    n = last = 0
    for m in pattern.finditer(text):
        n += text.count(" ", last, at := m.start())
        last = at
        out.append(n)
    return out


#: a whole token ``.``, ``?``, ``!`` or ``:`` (:func:`_sentence_ends`); a token ending with a colon
_ENDING_TOKEN = re.compile(r"(?<![^ ])[.?!:](?![^ ])")
_COLON_END = re.compile(r":(?![^ ])")


def _sentence_ends_of(text: str, n_tokens: int) -> list[int]:
    """:func:`_sentence_ends` of ``text.split(" ")`` (``n_tokens`` tokens), read off the text."""
    ends = [i + 1 for i in _token_indices(text, _ENDING_TOKEN)]
    if not ends or ends[-1] != n_tokens:
        ends.append(n_tokens)
    return ends


def _sentence_ends(tokens: list[str]) -> list[int]:
    """The end (exclusive) of each sentence of :func:`sentence_index`, the last one ``len(tokens)``."""
    ends = [i + 1 for i, tok in enumerate(tokens) if tok in _SENTENCE_END or tok == ":"]
    if not ends or ends[-1] != len(tokens):
        ends.append(len(tokens))
    return ends


def doc_to_records(doc_key: str, text: str, entities: dict[str, Entity], study: DocStudy, file: str,
                   vocab: Vocabulary) -> tuple[ReportRecord, list[MentionRecord]]:
    """Normalise one document's entities into mentions.

    For each observation entity: the finding is its span, or anatomy + span (``pleural`` + ``effusion``),
    or modifier + span, looked up in the vocabulary; its anatomy is the located_at target with that
    target's own modifiers (``left`` -> ``base``), else the finding's default regions on the stated side;
    severity comes from modifying severity words; a change comes from a CHAN entity linked by a relation
    in either direction, else from an unlinked CHAN entity in the same sentence. Observation spans that only
    modify another observation (``small``, ``increased``) are modifiers, not findings. Unknown terms are
    returned on the report's ``unmapped_terms``. What an observation states (:func:`_observation`) is read
    once per wording (:func:`_observation_key`) and vocabulary.
    """
    tokens = text.split(" ")
    ends = _sentence_ends_of(text, len(tokens))
    sent_of, section_of = _sentences_of_tokens(ends), _sections(tokens, _token_indices(text, _COLON_END))
    evidence_of: dict[int, str] = {}  # sentence -> its text, the evidence of each mention in it
    incoming: dict[str, list[tuple[str, Entity]]] = defaultdict(list)  # eid -> relations into it
    for ent in entities.values():
        for rtype, target in ent.relations:
            incoming[target].append((rtype, ent))
    linked_changes = _changes_by_observation(entities, incoming, sent_of)
    known = vocab.memo("radgraph observation")  # _observation_key -> _observation
    mentions: list[MentionRecord] = []
    unmapped: list[str] = []
    id_prefix = f"{Source.RADGRAPH}|{study.study_id}|{doc_key}|"  # stable_id(source, study, doc_key, region, ..)
    for obs in entities.values():
        if obs.kind != "OBS":
            continue
        key = _observation_key(obs, entities, incoming)
        if key is None or (read := known.get(key)) is None:
            read = _observation(obs, entities, incoming, vocab)
            if key is not None:
                if len(known) >= _MAX_REMEMBERED:
                    known.clear()
                known[key] = read
        stated, side, severity, normal, terms = read
        unmapped.extend(terms)
        if stated is None:
            continue
        changes = linked_changes.get(obs.eid)
        if changes and normal:
            changes = _resolutions(changes, vocab)
        change_label = changes[0].change_label if changes else None  # a CHAN entity's, never None
        change = vocab.change_labels[change_label] if change_label else None
        sentence = sent_of[min(obs.start, len(tokens) - 1)] if tokens else 0
        if (evidence := evidence_of.get(sentence)) is None:
            evidence = evidence_of[sentence] = " ".join(tokens[ends[sentence - 1] if sentence else 0:ends[sentence]])
        section = section_of[min(obs.start, len(section_of) - 1)] if section_of else None
        sentence_id = f"{doc_key}|{sentence}"
        for finding, region, polarity in stated:
            mentions.append(_mention(  # every MentionRecord field, in its order
                joined_id(f"{id_prefix}{region}|{finding}|{obs.eid}"),
                study.study_id, region, finding, polarity, severity[1], severity[0],  # .. severity_score
                change, change_label, None, evidence, Source.RADGRAPH, file, doc_key, section, sentence_id,
                (), (), (), side, None, None, None,  # no cues; side; term, entity_group, temporal_group
            ))
    report = _report(doc_key, study.study_id, text, Source.RADGRAPH, tuple(unmapped))
    return report, mentions


#: observations remembered per vocabulary (:func:`doc_to_records`); the table starts again when full
_MAX_REMEMBERED = 1 << 15

#: what an observation states (:func:`_observation`): [(finding, region, polarity)] (None: no finding, not a
#: normal statement), side, (severity score, word), whether it is a normal statement, unmapped terms
_Observation = tuple[list[tuple[str, str, str | None]] | None, str | None, tuple[int | None, str | None], bool,
                     tuple[str, ...]]


def _observation_key(obs: Entity, entities: dict[str, Entity],
                     incoming: dict[str, list[tuple[str, Entity]]]) -> tuple | None:
    """Everything :func:`_observation` reads of an observation and its neighbours, as text: its span and
    polarity, whether it modifies an observation, its located_at anatomy targets (span, and span with their
    own anatomy modifiers), the observation and anatomy spans that modify it. None (not remembered) when two
    located_at relations name the same entity (the finding's name may use one entity twice)."""
    into = incoming.get(obs.eid)
    if not obs.relations and not into:  # the span alone (a key of its own shape)
        return obs.tokens, obs.polarity
    targets: list[tuple[str, str]] = []
    seen: set[str] = set()
    modifies_obs = False
    for rtype, t in obs.relations:
        target = entities[t]
        if rtype == "located_at" and target.kind == "ANAT":
            if t in seen:
                return None
            seen.add(t)
            targets.append((target.tokens, _anatomy_phrase(target, incoming)))
        elif rtype == "modify" and target.kind == "OBS":
            modifies_obs = True
    obs_mods: list[str] = []
    anat_mods: list[str] = []
    for rtype, src in into or ():
        if rtype == "modify":
            (obs_mods if src.kind == "OBS" else anat_mods if src.kind == "ANAT" else []).append(src.tokens)
    return obs.tokens, obs.polarity, modifies_obs, tuple(targets), tuple(obs_mods), tuple(anat_mods)


def _observation(obs: Entity, entities: dict[str, Entity], incoming: dict[str, list[tuple[str, Entity]]],
                 vocab: Vocabulary) -> _Observation:
    """What one observation states, from its wording and its neighbours' (see :func:`doc_to_records`)."""
    targets = [entities[t] for rtype, t in obs.relations if rtype == "located_at" and entities[t].kind == "ANAT"]
    anatomy_ents = [a for a in targets if not _side_only(a, incoming)]
    modifiers = [src for rtype, src in incoming[obs.eid] if rtype == "modify" and src.kind == "OBS"]
    finding, consumed = _finding_of(obs, anatomy_ents, modifiers, vocab)
    unmapped: list[str] = []
    if finding is not None:
        regions, side = _regions_of(obs, finding, anatomy_ents, consumed, incoming, vocab, unmapped, targets)
        scored = [(vocab.severity_of(mod.tokens), mod.tokens.lower()) for mod in modifiers]
        severity = max(((sc, w) for sc, w in scored if sc is not None), key=lambda x: x[0], default=(None, None))
        return [(finding, region, obs.polarity) for region in dict.fromkeys(regions)], side, severity, False, \
            tuple(unmapped)
    if absences := _normal_absences(obs, anatomy_ents, incoming, vocab):
        side, stated = _normal_stated(obs, targets, absences, incoming, vocab)
        return stated, side, (None, None), True, ()
    modifies_obs = any(rtype == "modify" and entities[t].kind == "OBS" for rtype, t in obs.relations)
    if not modifies_obs and vocab.severity_of(obs.tokens) is None:
        unmapped.append(obs.tokens.lower())
    return None, None, (None, None), False, tuple(unmapped)


def _resolutions(changes: list[Entity], vocab: Vocabulary) -> list[Entity]:
    """The changes of a normal statement that count: a normal structure called stable is no change, one whose
    abnormality resolved is (the annotation guide's §9a: "heart size is normal, decreased from the prior": the
    enlarged heart absent, resolved)."""
    return [c for c in changes if c.change_label and vocab.change_labels[c.change_label] == "resolved"]


def _normal_stated(obs: Entity, targets: list[Entity], absences: dict[str, str],
                   incoming: dict[str, list[tuple[str, Entity]]],
                   vocab: Vocabulary) -> tuple[str | None, list[tuple[str, str, str | None]]]:
    """(side, [(finding, region, polarity)]) of a normal statement's absences: on the side it states only ("the
    left lung is clear" denies on the left: the annotation guide's §5)."""
    side = _stated_side(obs, targets, incoming, vocab)
    return side, [(f, region, absences[f]) for f in absences
                  for region in vocab.default_regions(f, side if side in ("left", "right") else None)]


#: a normal statement's polarity -> the polarity of the absences it states; a denied normal ("the lungs
#: are not clear") states no specific finding
_NORMAL_POLARITY: dict[str, str] = {State.PRESENT: State.ABSENT, State.UNCERTAIN: State.UNCERTAIN}


def _normal_absences(obs: Entity, anatomy_ents: list[Entity], incoming: dict[str, list[tuple[str, Entity]]],
                     vocab: Vocabulary) -> dict[str, str]:
    """finding -> polarity for a normal statement: an observation (``clear``) located at the structures it
    speaks for (``lungs``; a structure is its ANAT entity with the ANAT entities that modify it, in text
    order: ``costophrenic`` + ``angles``), looked up in the vocabulary's normal-statement table; {} when it
    is none."""
    polarity = _NORMAL_POLARITY.get(obs.polarity or "present")
    if polarity is None:
        return {}
    out: dict[str, str] = {}
    for a in anatomy_ents:
        parts = sorted([src for rtype, src in incoming[a.eid] if rtype == "modify" and src.kind == "ANAT"] + [a],
                       key=lambda e: e.start)
        for subject in dict.fromkeys((a.tokens, " ".join(p.tokens for p in parts))):
            out.update((f, polarity) for f in vocab.normal_absences(subject, obs.tokens))
    return out


def _changes_by_observation(entities: dict[str, Entity], incoming: dict[str, list[tuple[str, Entity]]],
                            sent_of: list[int]) -> dict[str, list[Entity]]:
    """observation eid -> its CHAN entities: linked by a relation in either direction, else (an unlinked
    CHAN) the nearest observation of the same sentence."""
    linked: dict[str, list[Entity]] = {}
    unlinked: list[Entity] = []
    for ent in entities.values():
        if ent.kind != "CHAN":
            continue
        targets = [entities[t] for _, t in ent.relations if entities[t].kind == "OBS"]
        targets += [src for _, src in incoming[ent.eid] if src.kind == "OBS"]
        for t in targets:
            linked.setdefault(t.eid, []).append(ent)
        if not targets:
            unlinked.append(ent)
    if not unlinked:
        return linked
    observations = [e for e in entities.values() if e.kind == "OBS"]
    last = len(sent_of) - 1
    for chan in unlinked:
        same = [o for o in observations if sent_of[min(o.start, last)] == sent_of[min(chan.start, last)]]
        if same:
            linked.setdefault(min(same, key=lambda o: abs(o.start - chan.start)).eid, []).append(chan)
    return linked


def _finding_of(obs: Entity, anatomy_ents: list[Entity], modifiers: list[Entity],
                vocab: Vocabulary) -> tuple[str | None, set[str]]:
    """(finding, eids of the anatomy entities its name used): modifier + span, anatomy + span
    (``pleural`` + ``effusion``), "lung" + span when every place is lung tissue (:func:`_in_lung_tissue`), else the
    span alone; None when the vocabulary knows none of them."""
    finding, consumed = None, set()
    for mod in modifiers:
        finding = finding or vocab.finding_for(f"{mod.tokens} {obs.tokens}")
    for anat in anatomy_ents:
        if finding is None and (f := vocab.finding_for(f"{anat.tokens} {obs.tokens}")):
            finding, consumed = f, {anat.eid}
    if finding is None and anatomy_ents and all(_in_lung_tissue(a.tokens, vocab) for a in anatomy_ents):
        finding = vocab.finding_for(f"lung {obs.tokens}")
    return finding or vocab.finding_for(obs.tokens), consumed


#: words of a place that is no lung tissue though the vocabulary places it in a lung ("left pleural", "left chest")
_NOT_LUNG_TISSUE = {"pleural", "pleura", "hemithorax", "chest", "hilar", "hilum", "hila", "costophrenic",
                    "cardiophrenic"}


def _in_lung_tissue(phrase: str, vocab: Vocabulary) -> bool:
    """The place is lung tissue: a lung, a lobe or a zone of it ("left upper lobe", "right lung base"), so that a
    finding stated there is also the lung's ("calcification" in the left upper lobe is a "lung calcification", a
    calcified nodule: the annotation guide's §2, calcifications in the lung); not a hilum, an angle or the pleura."""
    table = vocab.memo("radgraph lung tissue")  # a pure function of the phrase: computed once per phrase
    if phrase not in table:
        regions = vocab.regions_for(phrase)
        table[phrase] = (bool(regions) and not set(normalise_region_phrase(phrase).split()) & _NOT_LUNG_TISSUE
                         and all(r == "lungs" or vocab.regions[r].parent in ("lungs", "left lung", "right lung")
                                 for r in regions))
    return bool(table[phrase])


#: words that state a side or a direction and no place: an anatomy entity of only these that a finding is
#: located at is its side (RadGraph's "effusion" located_at "left"; a curve's "dextro"), not an unknown place
_SIDE_ONLY_WORDS = {"left", "right", "bilateral", "bilaterally", "both", "sided", "and", "greater", "more", "worse",
                    "larger", "than", ">", "rightward", "rightwards", "leftward", "leftwards", "convex"}


def _side_only(ent: Entity, incoming: dict[str, list[tuple[str, Entity]]]) -> bool:
    """The anatomy entity (with the anatomy words that modify it) states only a side or a curve's direction:
    each of its words is a side word (:data:`_SIDE_ONLY_WORDS`) or starts with "dextro" / "levo". "bilateral"
    alone, which the vocabulary also reads as both lungs, is the side of "bilateral effusions", not a place."""
    return _side_only_phrase(_anatomy_phrase(ent, incoming))


@lru_cache(maxsize=1 << 16)  # asked per located_at target, of a few thousand phrases
def _side_only_phrase(phrase: str) -> bool:
    """Each word of the anatomy phrase is a side word or a curve's direction (:func:`_side_only`)."""
    words = normalise_phrase(phrase).replace("-", " ").split()
    return bool(words) and all(w in _SIDE_ONLY_WORDS or w.startswith(("dextro", "levo")) for w in words)


def _anatomy_phrase(ent: Entity, incoming: dict[str, list[tuple[str, Entity]]]) -> str:
    """An anatomy entity with the anatomy words that modify it, in text order ("left" + "lung")."""
    if not incoming.get(ent.eid):
        return ent.tokens
    parts = [ent] + [src for rtype, src in incoming[ent.eid] if rtype == "modify" and src.kind == "ANAT"]
    return " ".join(p.tokens for p in sorted(parts, key=lambda e: e.start))


def _stated_side(obs: Entity, anatomy_ents: list[Entity], incoming: dict[str, list[tuple[str, Entity]]],
                 vocab: Vocabulary) -> str | None:
    """The side an observation's report states: of the anatomy words modifying it and of its places with
    their own modifiers. Both sides, or "bilateral" among them, make bilateral ("opacities in the right upper
    lobe and left lower lobe"); None when no side is stated."""
    sides = {vocab.side_of(src.tokens) for rtype, src in incoming[obs.eid] if rtype == "modify" and src.kind == "ANAT"}
    sides |= {vocab.side_of(_anatomy_phrase(anat, incoming)) for anat in anatomy_ents}
    sides.discard(None)
    return "bilateral" if "bilateral" in sides or len(sides) > 1 else next(iter(sides), None)


def _regions_of(obs: Entity, finding: str, anatomy_ents: list[Entity], consumed: set[str],
                incoming: dict[str, list[tuple[str, Entity]]], vocab: Vocabulary,
                unmapped: list[str], targets: list[Entity]) -> tuple[list[str], str | None]:
    """The observation's regions: its located_at targets with their own modifiers (``left`` -> ``base``), a
    side-less one in its part on the stated side (:func:`_on_side`), else the finding's default regions on the
    stated side; and the side stated (left / right / bilateral or None), which a side-less region without such
    parts cannot show ("left PICC" in the SVC). Unknown places are added to ``unmapped``."""
    regions: list[str] = []
    side = _stated_side(obs, targets, incoming, vocab)
    for anat in anatomy_ents:
        text_ = _anatomy_phrase(anat, incoming)
        if anat.eid in consumed:
            # "pleural" went into "pleural effusion"; keep a more specific place its modifiers name
            # ("left mid lung" + "opacity"), else the finding's default regions on that side
            rest = " ".join(w for w in normalise_region_phrase(text_).split() if w not in ("left", "right", "bilateral"))
            if rest == normalise_phrase(anat.tokens):
                continue
        found = vocab.regions_for(text_) or vocab.regions_for(anat.tokens)
        if not found:
            unmapped.append(f"region:{text_.lower()}")
        regions.extend(_on_side(found, side, vocab))
    return regions or list(vocab.default_regions(finding, side if side in ("left", "right") else None)), side


def _on_side(regions: tuple[str, ...], side: str | None, vocab: Vocabulary) -> tuple[str, ...]:
    """A place without a side whose parts come in a left and a right one, on the side the report states for the
    finding ("bilateral airspace disease" in the "lungs": the left and right lung; "nodule" by the "left"
    "heart border": the left cardiac silhouette; the annotation guide's §5); the regions as they are when no
    side is stated or a region has a side or no such parts (the SVC of a "left PICC")."""
    if side not in ("left", "right", "bilateral") or any(vocab.regions[r].side for r in regions):
        return regions
    sides = ("left", "right") if side == "bilateral" else (side,)
    parts = _sided_parts(vocab)
    if not regions or not all(r in parts for r in regions):
        return regions
    return tuple(parts[r][s] for r in regions for s in sides)


def _sided_parts(vocab: Vocabulary) -> dict[str, dict[str, str]]:
    """Region -> {"left": its left part, "right": its right part}, for side-less regions with exactly one part on
    each side (lungs, cardiac silhouette, abdomen) or whose name with a side word names one region (the chest:
    "left chest" is the left lung), computed once per vocabulary."""
    if id(vocab) not in _SIDED_PARTS:
        by_parent: dict[str, dict[str, list[str]]] = {}
        for r in vocab.regions.values():
            if r.parent and r.side in ("left", "right"):
                by_parent.setdefault(r.parent, {}).setdefault(r.side, []).append(r.name)
        parts = {parent: {s: names[0] for s, names in kids.items()} for parent, kids in by_parent.items()
                 if set(kids) == {"left", "right"} and all(len(n) == 1 for n in kids.values())}
        for r in vocab.regions.values():  # else its name with a side word: "left chest" is the left lung
            named = {s: vocab.regions_for(f"{s} {r.name}") for s in ("left", "right")}
            if r.side is None and r.name not in parts and all(len(n) == 1 for n in named.values()):
                parts[r.name] = {s: n[0] for s, n in named.items()}
        _SIDED_PARTS[id(vocab)] = parts
    return _SIDED_PARTS[id(vocab)]


#: id of a vocabulary -> :func:`_sided_parts`
_SIDED_PARTS: dict[int, dict[str, dict[str, str]]] = {}
