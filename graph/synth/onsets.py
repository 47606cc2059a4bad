"""Derived onsets of a synthetic cohort against its ground truth, with and without implied presence.

A synthetic cohort (:func:`graph.synth.write_cohort`) states only some findings in each report, so the
derived onset rule (present now, not present in the prior study) also fires where the prior report merely
left the finding out. :func:`score_onsets` reads the cohort's files the way an ingest does (discover,
parse, the metadata dates), derives every patient with :func:`graph.longitudinal.events.derive_patient` (the same
derivation every loader stores) and compares the anatomy-level derived ``new`` events, as (study, anatomy,
finding), with the ground truth's ``new`` rows (``ground_truth.parquet``: prior severity 0, current > 0).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import pandas as pd

from graph.ingest import METADATA, check_studies, discover, metadata_dates, parse_files
from graph.longitudinal.derived_rows import batch_rows, finding_parents, mention_fact
from graph.longitudinal.events import DERIVED, IMPLYING_CHANGES, NEW, STATED, MentionFact, StudyFact, derive_patient
from graph.synth.tables import GROUND_TRUTH
from graph.vocabulary import vocabulary

Place = tuple[str, str, str]  # (study_id, anatomy, finding)


@dataclass(frozen=True)
class OnsetScore:
    """Derived onsets against the ground truth's.

    Attributes:
        derived / true / hits: counts of derived onsets, true onsets and derived onsets that are true.
        contradicted_false: false derived onsets against whose prior study a source stated an
            implying change (no change, improved, resolved, repositioned) at the same place.
        lost_to_statements: true onsets not derived where a source stated an implying change against the
            prior study at that place (the label noise of the cohort: a true "new" written as, e.g.,
            "no change"), counted whether or not the strict reading found them.
    """

    derived: int
    true: int
    hits: int
    contradicted_false: int
    lost_to_statements: int

    @property
    def precision(self) -> float:
        return self.hits / self.derived if self.derived else 0.0

    @property
    def recall(self) -> float:
        return self.hits / self.true if self.true else 0.0


def cohort_facts(cohort: Path) -> tuple[dict[str, list[StudyFact]], dict[str, list[MentionFact]]]:
    """A cohort folder's studies and mentions per patient, parsed in memory as an ingest would (records
    that the checks reject are left out)."""
    files = discover([Path(cohort)])
    dates, _ = metadata_dates([f.path for f in files if f.format == METADATA])
    parsed = check_studies(parse_files([f for f in files if f.format != METADATA], vocabulary(), None), {}, dates)
    studies, images, _, _, _ = batch_rows(parsed)
    image_ids: dict[str, list[str]] = defaultdict(list)
    for i in images:
        image_ids[i["study_id"]].append(i["image_id"])
    facts: dict[str, list[StudyFact]] = defaultdict(list)
    for s in studies.values():
        when = datetime.fromisoformat(s["study_datetime"]) if s["study_datetime"] else None
        facts[s["patient_id"]].append(StudyFact(s["study_id"], when, tuple(image_ids[s["study_id"]])))
    mentions: dict[str, list[MentionFact]] = defaultdict(list)
    for pf in parsed:
        for m in pf.mentions:
            mentions[studies[m.study_id]["patient_id"]].append(mention_fact(m))
    return dict(facts), dict(mentions)


def true_onsets(cohort: Path) -> set[Place]:
    """(study, anatomy, finding) of the ground truth's ``new`` rows."""
    gt = pd.read_parquet(Path(cohort) / GROUND_TRUTH)
    return set(gt.loc[gt["change"] == NEW, ["study_id", "anatomy", "finding"]].itertuples(index=False, name=None))


def score_onsets(facts: dict[str, list[StudyFact]], mentions: dict[str, list[MentionFact]], truth: set[Place],
                 implied_presence: bool) -> OnsetScore:
    """Anatomy-level derived onsets of every patient against ``truth`` (see :class:`OnsetScore`)."""
    parents = finding_parents()
    derived: set[Place] = set()
    contradicting: set[Place] = set()  # current places with a stated implying change against the immediate prior
    for pid, studies in facts.items():
        d = derive_patient(studies, mentions.get(pid, []), parents, implied_presence=implied_presence)
        for e in d.events:
            if e.anatomy is None:
                continue
            place = (e.study_id, e.anatomy, e.finding)
            if e.basis == DERIVED and e.change == NEW:
                derived.add(place)
            elif (e.basis == STATED and e.change in IMPLYING_CHANGES
                  and d.prior.get(e.study_id, (None,))[0] == e.prior_study_id):
                contradicting.add(place)
    return OnsetScore(len(derived), len(truth), len(derived & truth), len((derived - truth) & contradicting),
                      len((truth - derived) & contradicting))
