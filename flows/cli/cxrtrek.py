"""``cxrkg cxrtrek generate|check|answer|score``: CXRTrek-format staged diagnostic questions.

Quick to import (typer only): the graph code loads inside the commands. ``check`` with rejected samples or
questions ends with exit code 6 (each named by index and field, the rest counted); an unreadable file, a stage
cxrkg does not write, or a faulty environment ends with exit code 1, never a traceback; a bad choice
(``--split bogus``) exit code 2.
"""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Optional

import typer

from flows.cli.app import command_group
from flows.cli.common import (
    Format,
    bootstrap_option,
    console,
    existing,
    fail,
    format_option,
    print_rejections,
    print_rows,
    reject,
    rejected_option,
    store_or_fail,
)

cxrtrek_app = command_group("cxrtrek", "CXRTrek-format staged questions: generate gold answers from "
                                       "the graph, check a file's format, answer stage 6 with "
                                       "the forecaster, score answers.")


class Split(str, Enum):
    """``cxrtrek answer --split``: the patients of `cxrkg forecast`'s split."""

    train = "train"
    val = "val"
    test = "test"


@cxrtrek_app.command("generate")
def cxrtrek_generate(out: Path = typer.Option(..., "--out", help="the samples (a JSON array in CXRTrek's format)"),
                     patients: Optional[int] = typer.Option(None, "--patients", min=1,
                                                            help="draw this many patients (default: all)"),
                     seed: int = typer.Option(0, "--seed", help="random seed of the wordings and options: the same "
                                                               "seed and graph give the same file"),
                     stages: str = typer.Option("1,2,3,5,6", "--stages", help="the stages to write, comma-separated "
                                                                              "(4, 7 and 8 need report text)")) -> None:
    """Write one sample per study of the loaded cohort with the gold answers of stages 1, 2, 3, 5 and 6."""
    from graph.cxrtrek.generate import generate, parse_stages

    chosen = parse_stages(stages)  # StageSelectionError: one line, exit 1
    summary = generate(store_or_fail(), out, patients, seed, chosen)
    counts = ", ".join(f"stage {k} {v:,}" for k, v in sorted(summary.questions.items()))
    console.print(f"{summary.samples:,} samples ({sum(summary.questions.values()):,} questions: {counts or 'none'}) "
                  f"for {summary.patients:,} patients -> {out} in {summary.seconds:.1f} s"
                  + (f"; {summary.skipped:,} studies with nothing to ask" if summary.skipped else ""), highlight=False)


@cxrtrek_app.command("check")
def cxrtrek_check(file: Path = typer.Argument(..., help="a CXRTrek-format JSON file"),
                  rejected: Optional[Path] = rejected_option()) -> None:
    """Validate a file against the CXRTrek format (the public demo file's fields and types): a bad sample or
    question is named and left out, what a release adds (a task-type variant, an unknown qtype) kept and
    counted."""
    from graph.formats.cxrtrek import read_samples

    result = read_samples(file)  # CxrtrekFormatError: one line, exit 1
    bad_items = sum(" item " in (r.record or "") for r in result.rejections)
    console.print(f"{len(result.samples):,} samples valid ({result.questions:,} questions), "
                  f"{len(result.rejections) - bad_items:,} samples and {bad_items:,} questions rejected: {file}",
                  highlight=False)
    console.print(result.kept_line(), highlight=False)
    reject(result.rejections, rejected, "cxrtrek-check")


@cxrtrek_app.command("answer")
def cxrtrek_answer(file: Path = typer.Argument(..., callback=existing, help="samples with stage 6 (`generate`'s)"),
                   out: Path = typer.Option(..., "--out", help="the stage 6 answers (a CXRTrek-format file)"),
                   forecaster: Optional[Path] = typer.Option(None, "--forecaster", callback=existing, dir_okay=False,
                                                             help="a next-study forecaster (`cxrkg forecast "
                                                                  "--save-model`)"),
                   carry_forward: bool = typer.Option(False, "--carry-forward", help="the baseline instead: every "
                                                                                     "present finding stays"),
                   split: Optional[Split] = typer.Option(None, "--split", help="only the patients of this split "
                                                                              "(the forecaster's held-out "
                                                                              "patients are test)"),
                   split_seed: int = typer.Option(0, "--split-seed", help="the seed of `cxrkg forecast`'s split"),
                   rejected: Optional[Path] = rejected_option()) -> None:
    """Answer stage 6 (what the next study shows of each present finding) with a saved forecaster, from the
    studies up to the current one, or with the carry-forward baseline."""
    from graph.formats.cxrtrek import dump_samples, read_valid

    if (forecaster is None) == (not carry_forward):
        fail("give exactly one of --forecaster MODEL.pt and --carry-forward")
    samples, rejections = read_valid(file)  # CxrtrekFormatError: one line, exit 1
    if split is not None:
        from gnn.forecast.cxrtrek_answer import in_split

        samples = in_split(samples, split.value, split_seed)
    if forecaster is not None:
        from gnn.forecast.cxrtrek_answer import forecast_answers
        from gnn.forecast.model import load_forecaster

        answered, summary = forecast_answers(store_or_fail(), samples, load_forecaster(forecaster))
    else:
        from gnn.forecast.cxrtrek_answer import carry_forward as baseline

        answered, summary = baseline(samples)
    dump_samples(answered, out)
    console.print(f"{summary.answered:,} stage 6 questions answered, {summary.unanswered:,} not (a finding the "
                  f"forecaster does not forecast) -> {out}", highlight=False)
    reject(rejections, rejected, "cxrtrek-answer")


@cxrtrek_app.command("score")
def cxrtrek_score(gold: Path = typer.Argument(..., callback=existing, help="the gold samples (`generate`'s)"),
                  pred: Path = typer.Argument(..., callback=existing, help="the answers to score (`answer`'s)"),
                  stages: Optional[str] = typer.Option(None, "--stages", help="only these stages, comma-separated "
                                                                             "(default: every stage answered)"),
                  bootstrap: int = bootstrap_option("studies"),
                  fmt: Format = format_option()) -> None:
    """Score answers per stage and question type: exact match (yes/no, choices, captions), mean box IoU
    (detection), with 95 % bootstrap intervals over studies; the gold questions of the studies the answers
    cover."""
    import math

    from graph.cxrtrek.generate import parse_stages
    from graph.cxrtrek.score import SCORE_COLUMNS, score_table
    from graph.formats.cxrtrek import items_of, read_valid

    gold_samples, gold_bad = read_valid(gold)
    pred_samples, pred_bad = read_valid(pred)
    if gold_bad or pred_bad:
        print_rejections(gold_bad + pred_bad, None, "")
    chosen = set(parse_stages(stages)) if stages else {c["stage"] for s in pred_samples for c in items_of(s)}
    table = score_table(gold_samples, pred_samples, chosen, bootstrap)
    rows = [{k: ("" if isinstance(v, float) and math.isnan(v) else round(v, 4) if isinstance(v, float) else v)
             for k, v in r.items()} for r in table.to_dict("records")]
    title = f"CXRTrek scores of {pred.name} against {gold.name}, beside the gold file's most common answer"
    if fmt is Format.table:
        rows = [_with_intervals(r) for r in rows]
        print_rows(rows, fmt.value, list(TABLE_COLUMNS), title=title)
    else:
        print_rows(rows, fmt.value, list(SCORE_COLUMNS), title=title)


TABLE_COLUMNS = ("stage", "qtype", "metric", "questions", "answered", "score [95 % CI]", "majority_answer",
                 "majority_score [95 % CI]", "diff [95 % CI]")
"""``cxrtrek score --format table``'s columns: json and csv print each interval's ends in columns of their own."""


def _with_intervals(row: dict) -> dict:
    """A score row with each value and its interval in one cell, ``0.833 [0.600, 1.000]`` (no interval: the
    value alone), and a long most common answer cut to 32 characters (json and csv print it whole)."""
    answer = row["majority_answer"]
    out = {k: row[k] for k in TABLE_COLUMNS[:5]} | {"majority_answer": answer if len(answer) <= 32 else
                                                    answer[:31] + "…"}
    for value, prefix in (("score", ""), ("majority_score", "majority_"), ("diff", "diff_")):
        low, high = row[f"{prefix}ci_low"], row[f"{prefix}ci_high"]
        out[f"{value} [95 % CI]"] = f"{row[value]:.3f}" + (f" [{low:.3f}, {high:.3f}]" if low != "" else "")
    return out
