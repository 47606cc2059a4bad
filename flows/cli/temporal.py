"""``cxrkg questions multivisit|score``: the field's temporal benchmarks as question files, and their scores.

Quick to import (typer only): the graph code loads inside the commands. A bad row of an input file is named
(file, line, field) and left out, the rest read, and the command ends with exit code 6; an unreadable file
or a faulty environment exit code 1, never a traceback; a bad option value exit code 2.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Optional

import typer

from flows.cli.app import command_group
from flows.cli.common import (
    Format,
    bootstrap_option,
    console,
    err,
    existing,
    fail,
    format_option,
    print_rows,
    reject,
    rejected_option,
    store_or_fail,
)

questions_app = command_group("questions", "Temporal benchmarks from the graph: MI-CXR five-visit "
                                           "questions; score a model's answers to them (or to "
                                           "MS-CXR-T-style pairs).")

SCORE_COLUMNS = ("group", "qtype", "n", "accuracy", "low", "high", "chance", "majority")
"""``questions score``'s columns (json and csv); the table puts the interval beside the accuracy."""


@questions_app.command("multivisit")
def multivisit(out: Path = typer.Option(..., "--out", dir_okay=False, help="the questions (MI-CXR JSON lines)"),
               visits: int = typer.Option(5, "--visits", min=5, help="visits per window (MI-CXR: 5; a longer "
                                                                     "window keeps five choices a question)"),
               patients: Optional[int] = typer.Option(None, "--patients", min=1,
                                                      help="only the first N patients by id that have a window "
                                                           "(default: all)"),
               seed: int = typer.Option(0, "--seed", help="seed of the choices' order and distractors: the same "
                                                         "seed and graph give the same file")) -> None:
    """Write MI-CXR-style questions (TEL, ICR, GTS; five choices each) for every window of five consecutive
    studies of each patient, each answer's basis in the graph in the field cxrkg_basis."""
    from graph.temporal.multivisit import write_multivisit

    if not out.parent.is_dir():
        fail(f"cannot write {out}: folder {out.parent} does not exist")
    summary = write_multivisit(store_or_fail(), out, visits, patients, seed)
    console.print(summary.line(out), highlight=False)


@questions_app.command("score")
def score(gold: Path = typer.Argument(..., callback=existing, dir_okay=False,
                                      help="the gold file: MI-CXR JSON lines (.jsonl), or MS-CXR-T-style pairs (.csv)"),
          pred: Path = typer.Argument(..., callback=existing, dir_okay=False,
                                      help="the answers: JSON lines of qid and answer (a letter or a choice's "
                                           "text); for a .csv gold file, the pairs file of predictions"),
          bootstrap: int = bootstrap_option(),
          seed: int = typer.Option(0, "--seed", help="seed of the bootstrap draws"),
          rejected: Optional[Path] = rejected_option(),
          fmt: Format = format_option()) -> None:
    """Accuracy per family and qtype (MI-CXR) or per finding (pairs), with 95 % cluster-bootstrap intervals
    over patients, beside chance and the gold file's most common answer."""
    draws = bootstrap
    rejections: list = []
    if gold.suffix.lower() == ".csv":
        from graph.temporal.pairs_score import score_pairs  # a file unfit to read: PairFileError, exit 1

        rows = score_pairs(gold, pred, draws, seed, rejections=rejections)
    else:
        from graph.temporal.multivisit_score import score_questions

        scored = score_questions(gold, pred, draws, seed)
        rows, rejections = scored.rows, scored.rejections
        if scored.unanswered:
            err.print(f"{scored.unanswered:,} gold questions without a prediction (counted wrong)",
                      highlight=False)  # stderr: stdout stays the table, JSON or CSV
    _print_scores(rows, fmt, f"scores of {pred.name} against {gold.name}")
    reject(rejections, rejected, "questions-score")


def _print_scores(rows: list[dict], fmt: Format, title: str) -> None:
    clean = [{k: ("" if isinstance(r.get(k), float) and math.isnan(r[k]) else
                  round(r[k], 4) if isinstance(r.get(k), float) else r.get(k)) for k in SCORE_COLUMNS} for r in rows]
    if fmt is not Format.table:
        print_rows(clean, fmt.value, list(SCORE_COLUMNS), title=title)
        return
    table = [{"group": r["group"], "qtype": r["qtype"], "n": r["n"],
              "accuracy [95 % CI]": f"{r['accuracy']:.3f}" + (f" [{r['low']:.3f}, {r['high']:.3f}]"
                                                              if r["low"] != "" else ""),
              "chance": f"{r['chance']:.3f}", "majority": f"{r['majority']:.3f}"} for r in clean]
    print_rows(table, fmt.value, list(table[0]) if table else None, title=title)
