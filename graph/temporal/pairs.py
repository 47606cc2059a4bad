"""Progression pairs in MS-CXR-T's columns, written from the graph (``cxrkg export pairs``).

MS-CXR-T (Bannur et al., CVPR 2023; PhysioNet ``ms-cxr-t`` 1.0.0,
``MS_CXR_T_temporal_image_classification_v1.0.0.csv``) has one row per image pair: ``dicom_id`` (the current
image), ``previous_dicom_id``, ``study_id``, ``previous_study_id``, ``subject_id``, and per finding a
``<finding>_progression`` (improving, stable, worsening; empty when not labelled) and a
``<finding>_label_quality``. The export writes the same id columns and, per finding, ``<finding>_progression``
with two columns of its own in the quality column's place: ``<finding>_label_source`` (the source that states
the change, ``presence`` for a derived one) and ``<finding>_label_basis`` (``stated`` or ``derived``: the marker
of a derived label). A reader of MS-CXR-T that reads the progression columns reads the export unchanged.

Rules (the plan of issue 55; labels from :mod:`graph.temporal.labels`):

- one row per consecutive study pair of a patient: each study and the study its ``PRIOR`` link names (the
  graph's order: ``study_datetime``, then study id);
- the image of a study: its first frontal image (view PA or AP) by image id, else its first image by image id;
- a finding's label from the study-level PROGRESSION edges between the two studies' StudyFinding nodes: the
  stated edges first (their sources, ``|``-joined, in the source column); when they give two different labels
  the cell is left empty and counted (``stated labels disagree``); a derived edge (source ``presence``) only
  when no source states a change (``stated_only`` leaves derived edges out altogether); the progression
  model's edges (``gnn``) never. A change word without a label (:data:`graph.temporal.labels.UNLABELLED`) is
  left empty and counted by the word;
- a pair whose order or patient is in doubt is not written, and counted by reason (:data:`LEFT_OUT`).
"""

from __future__ import annotations

import csv
import difflib
import re
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Mapping

from graph.records import InputError
from graph.temporal.labels import Classes, label

if TYPE_CHECKING:
    from graph.store import GraphStore

MSCXRT_FINDINGS: dict[str, str] = {
    "consolidation": "consolidation",
    "edema": "pulmonary edema/hazy opacity",
    "pleural_effusion": "pleural effusion",
    "pneumonia": "pneumonia",
    "pneumothorax": "pneumothorax",
}
"""MS-CXR-T's five findings: its column prefix -> the vocabulary's Finding name (graph/vocab)."""
MSCXRT_FINDINGS_BY_NAME = {v: k for k, v in MSCXRT_FINDINGS.items()}
ID_COLUMNS = ("dicom_id", "previous_dicom_id", "study_id", "previous_study_id", "subject_id")
"""MS-CXR-T's id columns, in the export's order."""
FRONTAL_VIEWS = frozenset({"PA", "AP"})
STATED, DERIVED = "stated", "derived"
DISAGREE = "stated labels disagree"

UNDATED, SAME_DATE, REVERSED = "a study without a date", "two studies of one date", "prior dated after the study"
OTHER_PATIENT, SEVERAL_PRIORS, SEVERAL_NEXT = "prior of another patient", "several prior links", "prior of several studies"
NO_IMAGE = "a study without an image"
LEFT_OUT = (UNDATED, SAME_DATE, REVERSED, OTHER_PATIENT, SEVERAL_PRIORS, SEVERAL_NEXT, NO_IMAGE)
"""Why a pair is not written, in the order the reasons are tested."""


class UnknownFinding(InputError):
    """A ``--findings`` name that is neither an MS-CXR-T finding nor a vocabulary Finding name."""


def column_prefix(finding: str) -> str:
    """The column prefix of a vocabulary finding beyond MS-CXR-T's: lower case, runs of other characters ``_``
    (``"mass/nodule (not otherwise specified)"`` -> ``"mass_nodule_not_otherwise_specified"``)."""
    return re.sub(r"[^a-z0-9]+", "_", finding.lower()).strip("_")


def resolve_findings(names: Iterable[str] | None, vocabulary_findings: Iterable[str]) -> dict[str, str]:
    """Column prefix -> vocabulary Finding name of each requested finding, in the order given (default
    :data:`MSCXRT_FINDINGS`). A name is an MS-CXR-T prefix (``pleural_effusion``) or a Finding name.

    Raises:
        UnknownFinding: a name that is neither (the message lists the closest known names), or no name at all.
    """
    if names is None:
        return dict(MSCXRT_FINDINGS)
    names = [n for n in names if n.strip()]
    if not names:
        raise UnknownFinding("--findings", None, None, "no finding named; give MS-CXR-T's or vocabulary Finding names")
    known = set(vocabulary_findings)
    out: dict[str, str] = {}
    for raw in names:
        name = raw.strip()
        if name in MSCXRT_FINDINGS:
            out[name] = MSCXRT_FINDINGS[name]
        elif name in known:
            out[MSCXRT_FINDINGS_BY_NAME.get(name, column_prefix(name))] = name
        else:
            close = difflib.get_close_matches(name, sorted(known | set(MSCXRT_FINDINGS)), n=5, cutoff=0.5)
            hint = f"; close: {', '.join(close)}" if close else "; `cxrkg vocab` lists the Finding names"
            raise UnknownFinding("--findings", None, None, f"no finding {name!r}{hint}")
    return out


def header(prefixes: Iterable[str]) -> list[str]:
    """The export's columns: :data:`ID_COLUMNS`, then per finding prefix ``_progression``, ``_label_source``,
    ``_label_basis``."""
    cols = list(ID_COLUMNS)
    for p in prefixes:
        cols += [f"{p}_progression", f"{p}_label_source", f"{p}_label_basis"]
    return cols


def pick_image(images: list[list[Any]]) -> str | None:
    """The first frontal image (PA or AP, by image id) of ``[[image_id, view], ...]``, else the first; None when
    there is none."""
    ordered = sorted(images, key=lambda iv: str(iv[0]))
    frontal = [i for i, v in ordered if str(v or "").upper() in FRONTAL_VIEWS]
    return frontal[0] if frontal else (ordered[0][0] if ordered else None)


@dataclass
class PairsSummary:
    """What an export wrote: ``rows``; ``labels`` per class; ``left_out`` pairs per reason (:data:`LEFT_OUT`);
    ``unlabelled`` finding cells with an edge but no label, per change word or :data:`DISAGREE`; ``seconds``
    the whole export took (read, build, write)."""

    rows: int = 0
    labels: Counter = field(default_factory=Counter)
    left_out: Counter = field(default_factory=Counter)
    unlabelled: Counter = field(default_factory=Counter)
    seconds: float = 0.0

    def line(self) -> str:
        """The one line ``cxrkg export pairs`` prints."""
        def said(c: Counter) -> str:
            return ", ".join(f"{k} {v:,}" for k, v in c.items()) or "none"
        return (f"{self.rows:,} pairs; labels: {said(self.labels)}; pairs left out: {said(self.left_out)}; "
                f"edges without a label: {said(self.unlabelled)}; in {self.seconds:.1f} s")


def _doubt(fact: Mapping[str, Any], priors: Counter, nexts: Counter) -> str | None:
    """Why the pair of ``fact`` is in doubt (a :data:`LEFT_OUT` reason), or None."""
    when, before = fact["study_datetime"], fact["prior_datetime"]
    if when is None or before is None:
        return UNDATED
    if when == before:
        return SAME_DATE
    if before > when:
        return REVERSED
    if fact["patient_id"] is None or fact["patient_id"] != fact["prior_patient_id"]:
        return OTHER_PATIENT
    if priors[fact["study_id"]] > 1:
        return SEVERAL_PRIORS
    if nexts[fact["prior_id"]] > 1:
        return SEVERAL_NEXT
    if not fact["images"] or not fact["prior_images"]:
        return NO_IMAGE
    return None


def finding_label(changes: list[list[Any]], classes: Classes, stated_only: bool,
                  unlabelled: Counter) -> tuple[str, str, str]:
    """(label, source, basis) of one finding from its ``[finding, change, basis, source]`` edges; three empty
    strings when none; the unlabelled edges counted into ``unlabelled`` (module docstring)."""
    stated = [c for c in changes if c[2] == STATED]
    use = stated if stated or stated_only else [c for c in changes if c[2] == DERIVED]
    if not use:
        return "", "", ""
    said: dict[str, set[str]] = {}
    for _, change, _, source in use:
        word = label(change, classes)
        if word is None:
            unlabelled[str(change)] += 1
        else:
            said.setdefault(word, set()).add(str(source))
    if len(said) > 1:
        unlabelled[DISAGREE] += 1
        return "", "", ""
    if not said:
        return "", "", ""
    (word, sources), = said.items()
    return word, "|".join(sorted(sources)), use[0][2]


def build_rows(facts: list[dict[str, Any]], findings: Mapping[str, str], classes: Classes,
               stated_only: bool, summary: PairsSummary) -> list[list[str]]:
    """The export's rows (:func:`header`'s columns) from :data:`graph.store.pairs_statements.PAIR_FACTS` rows,
    sorted by (subject, study date, study id); ``summary`` gets the counts."""
    priors = Counter(f["study_id"] for f in facts)
    nexts = Counter(f["prior_id"] for f in facts)
    kept = []
    for fact in facts:
        reason = _doubt(fact, priors, nexts)
        if reason is not None:
            summary.left_out[reason] += 1
        else:
            kept.append(fact)
    kept.sort(key=lambda f: (f["patient_id"], f["study_datetime"], f["study_id"]))
    rows = []
    for f in kept:
        row = [pick_image(f["images"]), pick_image(f["prior_images"]), f["study_id"], f["prior_id"], f["patient_id"]]
        by_finding: dict[str, list[list[Any]]] = {}
        for c in f["changes"]:
            by_finding.setdefault(c[0], []).append(c)
        for name in findings.values():
            cell = finding_label(by_finding.get(name, []), classes, stated_only, summary.unlabelled)
            if cell[0]:
                summary.labels[cell[0]] += 1
            row += cell
        rows.append([str(v) for v in row])
    summary.rows = len(rows)
    return rows


def export_pairs(store: GraphStore, out: Path, findings: Mapping[str, str] | None = None,
                 classes: Classes | int = Classes.THREE, stated_only: bool = False) -> PairsSummary:
    """Write every consecutive study pair of the graph to ``out`` (CSV, :func:`header`'s columns).

    Args:
        store: the graph.
        out: the CSV to write (replaced when it exists).
        findings: column prefix -> vocabulary Finding (:func:`resolve_findings`); default MS-CXR-T's five.
        classes: 3 (MS-CXR-T's improving / stable / worsening, the default) or 5 (CheXTemporal's).
        stated_only: leave derived labels out (only labels a source states).

    Returns:
        The counts (:class:`PairsSummary`), ``labels`` in the order of the label set.

    Raises:
        OSError: ``out`` cannot be written.
        graph.store.GraphUnavailable: the graph cannot be read.
    """
    from graph.store.pairs_statements import PAIR_FACTS

    started = time.perf_counter()
    chosen = dict(MSCXRT_FINDINGS) if findings is None else dict(findings)
    size = Classes(int(classes))
    facts = store.read(PAIR_FACTS, findings=list(chosen.values()))
    summary = PairsSummary(labels=Counter(dict.fromkeys(size.names, 0)))
    rows = build_rows(facts, chosen, size, stated_only, summary)
    with out.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(header(chosen))
        writer.writerows(rows)
    summary.seconds = time.perf_counter() - started
    return summary
