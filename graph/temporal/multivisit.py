"""MI-CXR-style five-visit questions written from the graph (``cxrkg questions multivisit``).

For each patient, the studies are cut into runs whose order is beyond doubt
(:func:`graph.temporal.multivisit_facts.runs`), and each run into windows of ``visits`` consecutive studies
from its first study on, without overlap (studies 1-5, 6-10, ...; a run's last studies short of a window
are not asked about). Each window asks the three families of :mod:`graph.temporal.multivisit_questions`
about every finding with a study-level PROGRESSION edge in it. Rows are MI-CXR's fields
(:data:`graph.formats.micxr.FIELDS`: ``images`` the visits' image ids, T1 first; ``choices`` a list of five
texts; ``answer`` a letter A-E) plus :data:`graph.formats.micxr.BASIS_FIELD`: the patient, the five study
ids, the finding, and per interval used its label, basis (stated / derived), sources, PROGRESSION edge ids
and StudyFinding ids.

Deterministic: the same graph and seed give the same bytes (patients in id order, findings by name, choices
shuffled by a seed of the seed and the qid).
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from graph.formats.micxr import write_micxr
from graph.temporal.multivisit_facts import Reader, Study, interval, iter_patients, patient_ids_with, runs
from graph.temporal.multivisit_questions import Window, window_questions

VISITS = 5
"""MI-CXR's timeline length (five visits, T1 to T5)."""


@dataclass
class MultivisitSummary:
    """What a write gave: questions per (family, qtype), windows, patients with a window, links in doubt
    by reason (the timeline cut there), findings left out of TEL and GTS by reason, windows whose visit had no
    image (left out), seconds."""

    questions: Counter = field(default_factory=Counter)
    windows: int = 0
    patients: int = 0
    doubts: Counter = field(default_factory=Counter)
    left_out: dict[str, int] = field(default_factory=dict)
    no_image: int = 0
    seconds: float = 0.0

    @property
    def total(self) -> int:
        """Questions written."""
        return sum(self.questions.values())

    def line(self, out: Path) -> str:
        """One line for people: what was written and what was left out."""
        fams = ", ".join(f"{g} {n:,}" for g, n in sorted(_by_group(self.questions).items()))
        doubts = ", ".join(f"{r} {n:,}" for r, n in sorted(self.doubts.items()) if n) or "none"
        left = ", ".join(f"{r} {n:,}" for r, n in sorted(self.left_out.items())) or "none"
        return (f"{self.total:,} questions ({fams}) from {self.windows:,} windows of {self.patients:,} patients -> "
                f"{out} in {self.seconds:.1f} s; links in doubt: {doubts}; findings left out of TEL/GTS: {left}; "
                f"windows without an image: {self.no_image:,}")


def _by_group(counts: Counter) -> Counter:
    out: Counter = Counter()
    for (group, _), n in counts.items():
        out[group] += n
    return out


def windows(studies: list[Study], visits: int, doubts: Counter) -> list[tuple[Study, ...]]:
    """A patient's windows of ``visits`` studies (module docstring); cuts counted in ``doubts``."""
    out = []
    for run in runs(studies, doubts):
        out += [tuple(run[k:k + visits]) for k in range(0, len(run) - visits + 1, visits)]
    return out


def make_window(patient_id: str, number: int, studies: tuple[Study, ...]) -> Window:
    """The :class:`Window` of consecutive ``studies``: per finding with an edge in it, its intervals."""
    findings = sorted({e.finding for s in studies[1:] for e in s.edges})
    per_study = [{f: [e for e in s.edges if e.finding == f] for f in findings} for s in studies[1:]]
    return Window(patient_id, number, tuple(s.study_id for s in studies), tuple(s.image or "" for s in studies),
                  {f: tuple(interval(edges[f]) for edges in per_study) for f in findings})


def multivisit_rows(reader: Reader, visits: int = VISITS, patients: int | None = None,
                    seed: int = 0) -> tuple[list[dict[str, Any]], MultivisitSummary]:
    """Every question of the graph (or of its first ``patients`` patients, by id, that have a window).

    Returns:
        (rows in file order, the summary without seconds).

    Raises:
        ValueError: ``visits`` below 5 (five choices a question) or ``patients`` below 1.
        graph.store.GraphUnavailable: the graph cannot be read.
    """
    if visits < VISITS:
        raise ValueError(f"visits must be {VISITS} or more, got {visits}")
    if patients is not None and patients < 1:
        raise ValueError(f"patients must be 1 or more, got {patients}")
    summary, rows = MultivisitSummary(), list[dict[str, Any]]()
    for batch in iter_patients(reader, patient_ids_with(reader, visits)):
        for studies in batch:
            if patients is not None and summary.patients >= patients:
                return rows, summary
            found = windows(studies, visits, summary.doubts)
            if found:
                summary.patients += 1
            for number, chosen in enumerate(found, 1):
                if any(s.image is None for s in chosen):
                    summary.no_image += 1
                    continue
                summary.windows += 1
                asked = window_questions(make_window(studies[0].patient_id, number, chosen), seed, summary.left_out)
                summary.questions.update((q["group_type"], q["qtype"]) for q in asked)
                rows += asked
    return rows, summary


def write_multivisit(reader: Reader, out: Path, visits: int = VISITS, patients: int | None = None,
                     seed: int = 0) -> MultivisitSummary:
    """:func:`multivisit_rows` written to ``out`` as MI-CXR JSON lines; the summary with its seconds.

    Raises:
        OSError: ``out`` cannot be written; else as :func:`multivisit_rows`.
    """
    started = time.perf_counter()
    rows, summary = multivisit_rows(reader, visits, patients, seed)
    write_micxr(out, rows)
    summary.seconds = time.perf_counter() - started
    return summary
