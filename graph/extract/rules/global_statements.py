"""Global statements of no acute abnormality ("No acute cardiopulmonary process.", "No evidence of active
disease.", "No acute findings in the chest."), written as RadGraph annotates them: the head noun ("process")
an OBS-DA entity ``located_at`` the anatomy word ("cardiopulmonary", ANAT-DP), each qualifier ("acute") an
OBS-DA entity that ``modify`` the head. This is RadGraph's schema (Jain et al., "RadGraph", NeurIPS 2021
Datasets and Benchmarks: a negation word is no entity, the observation it denies is OBS-DA) and the shape the
project's synthetic RadGraph writer gives the phrase (``graph.synth.render``).

The statements name no finding (the annotation guide's §4 and §9a): none of the phrases ingestion looks an
observation up by (modifier + head, anatomy + head, "lung" + head, the head alone) is a vocabulary finding,
so what ingestion and ``cxrkg eval extract`` read is the same with these entities or without them. They are
written so that a RadGraph-level comparison of two reports (F1RadGraph) sees the statement in both.

The word lists are the wordings the guide's §4 lists ("no acute cardiopulmonary abnormality / disease /
process; no active disease; no acute osseous abnormality") and their usual variants in chest X-ray reports.
"""

from __future__ import annotations

from graph.extract.rules.draft import Draft

#: negations that open a global statement, longest first where one begins another
_NEGATIONS: tuple[tuple[str, ...], ...] = (
    ("no", "radiographic", "evidence", "of"), ("no", "evidence", "of"), ("without", "evidence", "of"),
    ("no", "signs", "of"), ("no", "sign", "of"), ("negative", "for"), ("no",), ("without",))
#: words that qualify the denied abnormality (OBS-DA, ``modify`` the head)
QUALIFIERS = frozenset({"acute", "active", "significant", "definite", "new", "evident", "obvious", "gross"})
#: words that place it (ANAT-DP, the head ``located_at`` them)
ANATOMY = frozenset({"cardiopulmonary", "cardiothoracic", "intrathoracic", "thoracic", "cardiac", "pulmonary",
                     "lung", "osseous", "bony", "skeletal", "chest"})
_ENTITY_WORDS = QUALIFIERS | ANATOMY
#: head nouns of the statement (OBS-DA); "change" is left out: "no significant change" compares two studies
HEADS = frozenset({"process", "processes", "abnormality", "abnormalities", "disease", "diseases", "finding",
                   "findings", "pathology", "pathologies", "injury"})
#: words between the negation and the head that are no entity ("no other acute process", "no evidence of any")
_FILLERS = frozenset({"other", "any"})
_COORDINATORS = frozenset({"or", "and", ","})
#: a trailing place: "in the chest", "within the thorax" (the head ``located_at`` the last word)
_PLACE_PREPOSITIONS = frozenset({"in", "within"})
_PLACES = frozenset({"chest", "thorax"})
#: words after the head that make it name what it denies ("no findings of pneumonia", "no findings to suggest")
_NAMING = frozenset({"of", "to", "for", "suggesting", "suggestive", "concerning", "such", "consistent"})
#: words that end a bare statement ("No disease."): without a qualifier or place, the head must end its clause
_CLAUSE_ENDS = frozenset({".", ",", ";", ":"})


def add_global_statements(d: Draft) -> None:
    """Add the entities of every global statement of ``d`` to ``d.entities``; a word that another entity (or
    an observation span) already covers is no part of one, and a statement whose head is covered is none."""
    covered = set(d.obs_tokens).union(*(range(e["_start"], e["_end"]) for e in d.entities))
    for start, end in d.sent_bounds:
        i = start
        while i < end:
            n = _negation_end(d.lower, i, end)
            statement = _statement(d.lower, n, end, covered) if n else None
            if statement is None:
                i += 1
                continue
            _add(d, *statement)
            i = statement[2] + 1


def _negation_end(lower: list[str], i: int, end: int) -> int | None:
    """The token after the negation that starts at token ``i`` (sentence end ``end``), or None."""
    for words in _NEGATIONS:
        if tuple(lower[i:min(i + len(words), end)]) == words:
            return i + len(words)
    return None


def _statement(lower: list[str], k: int, end: int,
               covered: set[int]) -> tuple[list[int], list[int], int] | None:
    """(qualifier tokens, anatomy tokens, head token) of the statement whose words start at token ``k``,
    or None when the words there make none."""
    quals: list[int] = []
    anats: list[int] = []
    while k < end:
        w = lower[k]
        if w in QUALIFIERS:
            quals.append(k)
        elif w in ANATOMY:
            anats.append(k)
        elif not (w in _FILLERS or w in _COORDINATORS and (quals or anats) and k + 1 < end
                  and lower[k + 1] in _ENTITY_WORDS):
            break
        k += 1
    if k >= end or lower[k] not in HEADS or k in covered:
        return None
    head, after = k, lower[k + 1] if k + 1 < end else "."
    if after in _NAMING:
        return None
    place = _trailing_place(lower, head + 1, end)
    if place is not None:
        anats.append(place)
    elif not quals and not anats and after not in _CLAUSE_ENDS:
        return None
    return ([q for q in quals if q not in covered], [a for a in anats if a not in covered], head)


def _trailing_place(lower: list[str], k: int, end: int) -> int | None:
    """The token of "chest" in "in (the) chest" starting at token ``k``, or None."""
    if k >= end or lower[k] not in _PLACE_PREPOSITIONS:
        return None
    k += 1 + (k + 1 < end and lower[k + 1] == "the")
    return k if k < end and lower[k] in _PLACES else None


def _add(d: Draft, quals: list[int], anats: list[int], head: int) -> None:
    """The statement's entities: the head OBS-DA ``located_at`` each anatomy ANAT-DP, each qualifier OBS-DA
    ``modify`` the head."""
    places = [{"_start": a, "_end": a + 1, "label": "ANAT-DP", "rel": []} for a in anats]
    obs = {"_start": head, "_end": head + 1, "label": "OBS-DA", "rel": [("located_at", p) for p in places]}
    d.entities += [obs, *places, *({"_start": q, "_end": q + 1, "label": "OBS-DA", "rel": [("modify", obs)]}
                                   for q in quals)]
