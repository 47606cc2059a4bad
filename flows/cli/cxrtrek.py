"""``cxrkg cxrtrek generate|check``: CXRTrek-format staged diagnostic questions.

Quick to import (typer only): the graph code loads inside the commands. ``check`` with rejected samples ends
with exit code 6 (each named by index and field, the rest counted); an unreadable file, a stage cxrkg does not
write, or a faulty environment ends with exit code 1, never a traceback.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from flows.cli.app import app
from flows.cli.common import console, print_rejections, store_or_fail
from graph.errors import ExitCode

cxrtrek_app = typer.Typer(no_args_is_help=True, help="CXRTrek-format staged questions: generate gold answers from "
                                                     "the graph, check a file's format.")
app.add_typer(cxrtrek_app, name="cxrtrek")


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
def cxrtrek_check(file: Path = typer.Argument(..., help="a CXRTrek-format JSON file")) -> None:
    """Validate a file against the CXRTrek format (the public demo file's fields and types)."""
    from graph.cxrtrek.format import read_samples

    result = read_samples(file)  # CxrtrekFormatError: one line, exit 1
    questions = sum(len(s.data_dict.cxrtrek_data.content) for _, s in result.samples)
    console.print(f"{len(result.samples):,} samples valid ({questions:,} questions), {len(result.rejections):,} "
                  f"rejected: {file}", highlight=False)
    if result.rejections:
        print_rejections(result.rejections, None, "")
        raise typer.Exit(ExitCode.REJECTED)
