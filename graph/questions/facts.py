"""What the graph states about studies, read once per batch and named in Diff-VQA's words.

One read (:data:`graph.store.read_statements.QUESTION_FACTS_BY_STUDY` or ``..._BY_PATIENT``) gives every
study's patient, order, views, stated observations and stated changes; :class:`StudyFacts` then names each
observation's finding by the mapping (:mod:`graph.questions.mapping`): a finding is named by what was stated,
never by the IS_A parents it implies. Polarity follows the generator (``question_gen.py``'s ``find_general``
negates only explicit negation cues, so a hedged finding is a finding): ``present`` and ``uncertain`` count as
present, ``absent`` as explicitly negated; ``strict=True`` counts uncertain findings as neither.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from graph.questions.mapping import DiffVqaMapping, mapping
from graph.questions.templates import DISEASE_ORDER, TYPES, VIEWS
from graph.store import read_statements as rs
from graph.store.reads import Reader
from graph.terms import POSITIVE_STATES, State

BATCH_PATIENTS = 2000
"""Patients per read when a whole cohort is read (:func:`read_patient_facts`)."""
_STRICTLY_PRESENT, _ABSENT = frozenset({State.PRESENT}), frozenset({State.ABSENT})


@dataclass(frozen=True)
class Observation:
    """One stated observation: vocabulary anatomy and finding, polarity, severity word, evidence, textures."""

    anatomy: str
    finding: str
    polarity: str
    severity: str | None
    evidence: tuple[str, ...]
    textures: tuple[str, ...]


@dataclass
class StudyFacts:
    """One study as the questions see it.

    Attributes:
        order: the study's place in its patient's time line (1 = first; None when not linked yet).
        view: ``PA`` / ``AP`` (the first frontal image's), another view as stored, or None.
        observations: the stated observations of findings with a Diff-VQA name (not-mentioned placeholders
            and unnamed findings left out).
        stated: (earlier study id, vocabulary anatomy, vocabulary finding, change) of every stated change from
            this study (the anatomy names the finding where the mapping names it by anatomy).
    """

    study_id: str
    patient_id: str
    order: int | None
    view: str | None
    observations: list[Observation] = field(default_factory=list)
    stated: list[tuple[str, str, str, str]] = field(default_factory=list)
    _named_cache: dict[tuple, dict[str, list[Observation]]] = field(default_factory=dict, repr=False, compare=False)

    def present(self, m: DiffVqaMapping | None = None, strict: bool = False) -> dict[str, list[Observation]]:
        """Official disease name -> its observations that count as present, in the library's order."""
        return self._named(m, _STRICTLY_PRESENT if strict else POSITIVE_STATES)

    def negated(self, m: DiffVqaMapping | None = None, strict: bool = False) -> dict[str, list[Observation]]:
        """Official disease name -> its explicitly negated observations, for names not also present."""
        present = self.present(m, strict)
        return {k: v for k, v in self._named(m, _ABSENT).items() if k not in present}

    def _named(self, m: DiffVqaMapping | None, polarities: frozenset[str]) -> dict[str, list[Observation]]:
        m = m or mapping()
        key = (id(m), polarities)
        if key not in self._named_cache:
            self._named_cache[key] = self._name(m, polarities)
        return self._named_cache[key]

    def _name(self, m: DiffVqaMapping, polarities: frozenset[str]) -> dict[str, list[Observation]]:
        out: dict[str, list[Observation]] = defaultdict(list)
        for o in self.observations:
            name = m.disease(o.finding, o.anatomy)
            if name is not None and o.polarity in polarities:
                out[name].append(o)
        return {k: out[k] for k in sorted(out, key=DISEASE_ORDER.__getitem__)}

    @property
    def frontal(self) -> bool:
        """Whether the study's view is one the generator asks about (PA or AP)."""
        return self.view in VIEWS


def _study(row: dict[str, Any]) -> StudyFacts:
    views = [v for v in row["views"] if v]
    view = next((v for v in views if v in VIEWS), views[0] if views else None)
    obs = [Observation(a, f, p, s, tuple(e or ()), tuple(t or ())) for a, f, p, s, e, t in row["observations"]]
    obs.sort(key=lambda o: (o.finding, o.anatomy))
    return StudyFacts(str(row["study_id"]), str(row["patient_id"]), row["study_order"], view, obs,
                      sorted(tuple(x) for x in row["stated"]))


def _named() -> list[str]:
    """The vocabulary findings that have a Diff-VQA name: the only ones a question can be about."""
    return sorted(mapping().findings)


def study_facts_statement(study_ids: Iterable[str]) -> tuple[str, dict[str, Any]]:
    """The statement that reads the given studies' facts and its parameters (``study_ids``: the ids sorted,
    ``findings``: the vocabulary findings with a Diff-VQA name): what :func:`read_study_facts` runs and
    ``cxrkg diffvqa ask --show-cypher`` prints."""
    return rs.QUESTION_FACTS_BY_STUDY, {"study_ids": sorted(set(map(str, study_ids))), "findings": _named()}


def facts_from_rows(rows: Iterable[dict[str, Any]]) -> dict[str, StudyFacts]:
    """Study facts by study id from the rows of :func:`study_facts_statement`'s statement."""
    return {r["study_id"]: _study(r) for r in rows}


def read_study_facts(reader: Reader, study_ids: Iterable[str]) -> dict[str, StudyFacts]:
    """The given studies' facts in one read; studies not in the graph are left out."""
    statement, params = study_facts_statement(study_ids)
    return facts_from_rows(reader.read(statement, **params))


def read_patient_facts(reader: Reader, patient_ids: Iterable[str]) -> dict[str, StudyFacts]:
    """Every study of the given patients, one read per :data:`BATCH_PATIENTS` patients."""
    ids = sorted(set(map(str, patient_ids)))
    out: dict[str, StudyFacts] = {}
    for start in range(0, len(ids), BATCH_PATIENTS):
        for r in reader.read(rs.QUESTION_FACTS_BY_PATIENT, patient_ids=ids[start:start + BATCH_PATIENTS],
                             findings=_named()):
            out[r["study_id"]] = _study(r)
    return out


def patient_ids(reader: Reader) -> list[str]:
    """Every patient id in the graph, sorted."""
    return [str(r["patient_id"]) for r in reader.read(rs.PATIENT_IDS)]


def type_words(observations: Iterable[Observation], m: DiffVqaMapping | None = None) -> list[str]:
    """The type-library words stated for these observations: mapped texture cues (``texture|yes|calcified``)
    and type words written in their evidence phrases, in the library's order."""
    m = m or mapping()
    found: set[str] = set()
    for o in observations:
        for cue in o.textures:
            parts = cue.split("|")
            if len(parts) == 3 and parts[1] == "yes" and parts[2] in m.types:
                found.add(m.types[parts[2]])
        for phrase in o.evidence:
            found.update(w for w in phrase.lower().replace(",", " ").replace(".", " ").split() if w in TYPES)
    return [t for t in TYPES if t in found]
