"""The inputs of ``cxrkg eval reports``: the generated reports' CSV, the references, and the baselines'
reports made from the graph; and the files it writes (SCORES.csv, the details of contradicted changes)."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Mapping, Sequence

from graph.records import InputError, Rejection
from graph.report_scoring.facts import StudyFacts
from graph.report_scoring.score import StudyResult, StudyScore
from graph.report_scoring.temporal import CONTRADICTED

#: the columns a generated reports' CSV needs (those of Lunguage's prediction file; ``subject_id`` and any other
#: column may come too and are not read)
REQUIRED_COLUMNS = ("study_id", "report")
BASELINES = ("reference", "copy-prior")
DETAILS_COLUMNS = ("study_id", "finding", "change", "sentence", "verdict", "graph_basis")
#: the details file's verdict of a reference change the generated report leaves out
OMITTED = "omitted"


def read_reports(path: Path) -> tuple[dict[str, str], list[Rejection]]:
    """study_id -> report text of a CSV with columns ``study_id`` and ``report``; a row with an empty id or
    report, or a study id given twice (the first kept), is a Rejection naming the row (``row N``, counted from
    1 after the header, when the id is empty) and the field.

    Raises:
        InputError: the file cannot be read as CSV, or lacks a required column.
    """
    file = str(path)
    rows: dict[str, str] = {}
    rejections: list[Rejection] = []
    try:
        with path.open(newline="", encoding="utf-8-sig") as fh:  # a spreadsheet's byte order mark is no column name
            reader = csv.DictReader(fh)
            if missing := [c for c in REQUIRED_COLUMNS if c not in (reader.fieldnames or ())]:
                raise InputError(file, None, missing[0], f"missing column(s) {', '.join(missing)} (the header has "
                                 f"{', '.join(reader.fieldnames or ()) or 'nothing'})")
            for n, row in enumerate(reader, start=1):
                sid, text = (row.get("study_id") or "").strip(), row.get("report")
                if not sid:
                    rejections.append(Rejection(file, f"row {n}", "study_id", "empty study id"))
                elif text is None or not text.strip():
                    rejections.append(Rejection(file, sid, "report", "empty report" if text is not None
                                                else f"row {n} has no report column (a short row)"))
                elif sid in rows:
                    rejections.append(Rejection(file, sid, "study_id", f"row {n}: the study is given twice"))
                else:
                    rows[sid] = text
    except (UnicodeDecodeError, csv.Error) as exc:
        raise InputError(file, None, None, f"not a readable UTF-8 CSV file: {exc}") from exc
    return rows, rejections


def generated_items(generated: Mapping[str, str], facts: Mapping[str, StudyFacts], file: str,
                    references: Mapping[str, str] | None = None, reference_file: str = "reference"
                    ) -> tuple[list[tuple[str, str, str]], list[Rejection]]:
    """``(study_id, generated, reference)`` for each generated report: the reference from ``references`` when
    given, else the study's report in the graph. A study the graph does not hold, or without a reference, is a
    Rejection."""
    items: list[tuple[str, str, str]] = []
    rejections: list[Rejection] = []
    for sid, text in generated.items():
        f = facts.get(sid)
        ref = references.get(sid) if references is not None else (f.report if f else None)
        if f is None:
            rejections.append(Rejection(file, sid, "study_id", "the graph holds no such study"))
        elif ref is None:
            where = f"{reference_file} has no report for it" if references is not None else \
                "the graph holds no report for it (give --reference)"
            rejections.append(Rejection(file, sid, "study_id", where))
        else:
            items.append((sid, text, ref))
    return items, rejections


def baseline_items(kind: str, facts: Mapping[str, StudyFacts]) -> tuple[list[tuple[str, str, str]], int]:
    """The baseline's ``(study_id, generated, reference)`` for every study with a stored report, in study id
    order, and how many studies it leaves out: ``reference`` generates the reference itself; ``copy-prior``
    the prior study's report (studies without a prior study or prior report are left out).

    Raises:
        ValueError: an unknown baseline.
    """
    if kind not in BASELINES:
        raise ValueError(f"unknown baseline {kind!r}: choose {' or '.join(BASELINES)}")
    with_report = [f for _, f in sorted(facts.items()) if f.report is not None]
    if kind == "reference":
        return [(f.study_id, f.report, f.report) for f in with_report if f.report], 0
    items = [(f.study_id, f.prior_report, f.report) for f in with_report if f.report and f.prior_report]
    return items, len(with_report) - len(items)


def write_scores(path: Path, scores: Sequence[StudyScore]) -> None:
    """SCORES.csv: :meth:`StudyScore.columns`, one row per scored study; booleans as true / false."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(StudyScore.columns())
        for s in scores:
            w.writerow([str(v).lower() if isinstance(v, bool) else v for v in
                        (getattr(s, c) for c in StudyScore.columns())])


def write_details(path: Path, results: Sequence[StudyResult]) -> tuple[int, int]:
    """The evidence of each contradicted change (:data:`DETAILS_COLUMNS`: the generated sentence and the
    graph's basis), then of each omitted one (verdict ``omitted``: the sentence is the reference's, as the
    graph's evidence gives it); returns the (contradicted, omitted) rows written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    contradicted = omitted = 0
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(DETAILS_COLUMNS)
        for r in results:
            for v in r.temporal.verdicts:
                if v.verdict == CONTRADICTED:
                    w.writerow([r.score.study_id, v.change.finding, v.change.change, v.change.sentence, v.verdict,
                                v.basis])
                    contradicted += 1
        for r in results:
            for c in r.temporal.omitted_changes:
                w.writerow([r.score.study_id, c.finding, c.change, c.sentence, OMITTED,
                            "the reference states it; the generated report states no change of the finding"])
                omitted += 1
    return contradicted, omitted
