"""``cxrkg score-reports``: generated reports scored against their references and the patient's graph."""

from __future__ import annotations

import csv
import json
import sys
from enum import Enum
from pathlib import Path
from typing import Any, Optional

import typer

from flows.cli.app import app
from flows.cli.common import Format, console, fail, format_option, print_rejections, store_or_fail
from graph.errors import ExitCode


class ScoreExtractor(str, Enum):
    """The extractor that annotates both texts: rules (offline) or the radgraph package's model."""

    rules = "rules"
    radgraph = "radgraph"


class Baseline(str, Enum):
    """Reports made from the graph instead of a generated file."""

    reference = "reference"
    copy_prior = "copy-prior"


@app.command("score-reports")
def score_reports(generated: Optional[Path] = typer.Argument(None, help="CSV of generated reports: study_id, "
                                                             "report (other columns are kept out of the scoring)"),
                  out: Path = typer.Option(..., help="SCORES.csv to write, one row per scored study"),
                  reference: Optional[Path] = typer.Option(None, help="CSV of reference reports (study_id, report; "
                                                           "default: each study's report in the graph)"),
                  extractor: ScoreExtractor = typer.Option(ScoreExtractor.rules, help="annotates both texts: rules "
                                                           "(offline) or radgraph (pip install 'cxrkg\\[radgraph]')"),
                  details: Optional[Path] = typer.Option(None, help="CSV of each contradicted change (the generated "
                                                         "sentence and the graph's basis) and omitted one"),
                  baseline: Optional[Baseline] = typer.Option(None, help="score the references themselves "
                                                              "(reference) or each study's prior report "
                                                              "(copy-prior) instead of GENERATED"),
                  plot: Optional[Path] = typer.Option(None, help="PNG of each finding's stated changes by verdict "
                                                      "and reference changes covered (matplotlib)"),
                  workers: Optional[int] = typer.Option(None, min=0, help="annotate and score on N worker "
                                                        "processes (default: one per core from 1,000 reports on; "
                                                        "0: in this process)"),
                  fmt: Format = format_option("csv: the corpus means and their intervals")) -> None:
    """Score generated reports: F1RadGraph (simple, partial, complete) and finding F1 against the reference,
    and the temporal claims against the patient's graph (a prior study referred to, each stated change
    supported, contradicted or unverifiable, the reference's changes omitted). Prints the corpus means with
    95 % bootstrap intervals; exit code 6 when any row was rejected (each named), the rest scored."""
    from graph.report_scoring.inputs import baseline_items, generated_items, read_reports

    if (generated is None) == (baseline is None):
        fail("give either GENERATED.csv or --baseline reference|copy-prior")
    rejections: list = []
    notes: list[str] = []
    # InputError, an unreadable file: one error line
    rows, rejections = read_reports(generated) if generated else ({}, [])
    refs, ref_rejections = read_reports(reference) if reference else (None, [])
    rejections += ref_rejections
    facts = _facts(list(rows) if generated else None)
    if baseline is not None:
        items, left_out = baseline_items(baseline.value, facts)
        notes.append(f"baseline {baseline.value}: {len(items)} studies" +
                     (f"; {left_out} without a prior report left out" if left_out else ""))
    else:
        items, missing = generated_items(rows, facts, str(generated), refs, str(reference))
        rejections += missing
    results, scored_rejections = _score(items, facts, extractor.value, str(generated or "baseline"), workers)
    rejections += scored_rejections
    if baseline is Baseline.reference and (unread := sum(r.score.changes_omitted for r in results)):
        notes.append(f"{unread} changes the graph holds are omitted by the references themselves: the extractor "
                     "reads no change of their finding in the report's words (--details lists them)")
    _write_and_print(results, rejections, notes, (out, details, plot), extractor.value, fmt.value)
    if rejections:
        raise typer.Exit(ExitCode.REJECTED)


def _facts(study_ids: Optional[list[str]]) -> dict:
    from graph.report_scoring.facts import cohort_facts

    return cohort_facts(store_or_fail(), study_ids)


def _score(items: list, facts: dict, extractor: str, file: str, workers: Optional[int]) -> tuple[list, list]:
    from flows.score_flow import PARALLEL_FROM_ITEMS, score_items
    from graph.records import Rejection
    from graph.runtime.processes import available_cores

    if workers is None:
        workers = available_cores() if len(items) >= PARALLEL_FROM_ITEMS and available_cores() > 1 else 0
    out = score_items(items, facts, extractor, workers, file)  # the extractor's extra missing: one error line
    return [r for r in out if not isinstance(r, Rejection)], [r for r in out if isinstance(r, Rejection)]


def _write_and_print(results: list, rejections: list, notes: list[str],
                     paths: tuple[Path, Optional[Path], Optional[Path]], extractor: str, fmt: str) -> None:
    from graph.records import write_rejections
    from graph.report_scoring.inputs import write_details, write_scores
    from graph.report_scoring.summary import summarise

    out, details, plot = paths
    write_scores(out, [r.score for r in results])
    rejected = out.with_suffix(".rejected.json")
    if rejections:
        write_rejections(rejected, rejections)
        notes.append(f"{len(rejections)} rejected: {rejected}")
    if details is not None:
        contradicted, omitted = write_details(details, results)
        notes.append(f"{contradicted} contradicted and {omitted} omitted changes in {details}")
    summary = summarise(results, extractor)
    summary.notes += notes
    if plot is not None:
        from graph.report_scoring.plot import plot_per_finding

        try:
            summary.notes.append(f"per finding: {plot_per_finding(summary, plot)}")
        except ImportError as exc:
            fail(f"--plot needs matplotlib (make install has it): {exc}")
    if fmt == "json":
        data = summary.as_dict()
        data["rejections"] = [r.__dict__ for r in rejections]
        sys.stdout.write(json.dumps(data, indent=2) + "\n")
        return
    if fmt == "csv":
        _print_csv(summary)
    else:
        _print_table(summary)
    if rejections:
        print_rejections(rejections, str(rejected), "every rejection")


def _print_csv(summary: Any) -> None:
    w = csv.writer(sys.stdout)
    w.writerow(["figure", "mean", "low", "high"])
    for name, (m, lo, hi) in summary.means.items():
        w.writerow([name, m, lo, hi])
    for name, (_, _, value, lo, hi) in (("temporal_precision", summary.temporal_precision),
                                        ("temporal_recall", summary.temporal_recall)):
        w.writerow([name, value, lo, hi])


def _print_table(summary: Any) -> None:
    from rich.table import Table

    from graph.report_scoring.summary import change_recall_note

    console.print(f"{summary.studies} studies scored; the graph is the truth of each patient's history (temporal "
                  f"figures are judged against it); extractor {summary.extractor}: "
                  f"{change_recall_note(summary.extractor)}",
                  markup=False, highlight=False)
    table = Table("figure", "mean", "95 % interval")
    for name, (m, lo, hi) in summary.means.items():
        table.add_row(name, f"{m:.3f}", f"{lo:.3f} .. {hi:.3f}")
    console.print(table)
    for name, (num, den, value, lo, hi) in (("temporal precision (supported / stated)", summary.temporal_precision),
                                            ("temporal recall (reference changes covered)", summary.temporal_recall)):
        figure = "-" if value is None else f"{value:.3f} ({lo:.3f} .. {hi:.3f})"
        console.print(f"{name}: {figure}, {num} / {den}", markup=False, highlight=False)
    c = summary.chexpert
    console.print(f"CheXpert 14: micro F1 {c['micro_f1_14']:.3f}, macro F1 {c['macro_f1_14']:.3f}; top 5: micro F1 "
                  f"{c['micro_f1_5']:.3f}, macro F1 {c['macro_f1_5']:.3f} (table {c['table_version']})",
                  markup=False, highlight=False)
    if summary.unread_change_words:
        words = ", ".join(f"{w} {n}" for w, n in summary.unread_change_words[:15])
        console.print(f"change-like words no change entity covers: {words}", markup=False, highlight=False)
    for note in summary.notes:
        console.print(note, markup=False, highlight=False)
