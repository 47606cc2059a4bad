"""``cxrkg diffvqa answer|generate|check|unmapped|score|ask``: Medical-Diff-VQA questions (``cxrkg ask``, the name
of ``diffvqa ask`` before it joined the group, still works for one release, after a one-line notice);
``cxrkg cxreasonbench generate``: CXReasonBench-style staged items from the stored measurements.

Quick to import (typer only): pandas and the graph code load inside the commands. ``answer`` with rejected
rows ends with exit code 6 (the good rows are still answered, each rejected row is named by its line in the
file); input that cannot be used at all (an unreadable question file or one without a required column, in
``diffvqa ask`` a question outside the templates, an unknown study or reference) or a faulty environment ends
with exit code 1, never a traceback. Question files are read by :func:`graph.formats.diffvqa.read_question_file`.
"""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import TYPE_CHECKING, Optional

import typer

from flows.cli.app import app, command_group
from flows.cli.common import (
    Format,
    console,
    err,
    format_option,
    old_name,
    print_json,
    print_rows,
    reader_or_fail,
    reject,
    rejected_option,
    store_or_fail,
)

if TYPE_CHECKING:
    from graph.questions.order import OrderCheck

diffvqa_app = command_group("diffvqa", "Medical-Diff-VQA questions: answer a file or one "
                                       "question (ask), generate, score, and the vocabulary "
                                       "entries without a Diff-VQA name.")

_STRICT = typer.Option(False, "--strict", help="count uncertain findings as not present (default: present, "
                                               "as the dataset's generator reads hedged findings)")


@diffvqa_app.command("answer")
def diffvqa_answer(questions: Path = typer.Argument(..., help="CSV with study_id, subject_id, ref_id, "
                                                              "question_type, question (mimic_pair_questions.csv)"),
                   out: Path = typer.Option(..., "--out", help="answers CSV: the input columns plus answer, "
                                                               "basis, evidence"),
                   strict: bool = _STRICT, rejected: Optional[Path] = rejected_option()) -> None:
    """Answer every question of a file from the graph (one read); rejected rows are named, the rest answered
    (exit code 6 then)."""
    from graph.questions.rows import answer_file

    start = time.perf_counter()
    result = answer_file(store_or_fail(), questions, out, strict)  # a file unfit to read: QuestionFileError, exit 1
    console.print(f"{len(result.answers):,} questions answered, {len(result.rejections):,} rejected -> {out} "
                  f"in {time.perf_counter() - start:.1f} s", highlight=False)
    reject(result.rejections, rejected, "diffvqa-answer")


@diffvqa_app.command("generate")
def diffvqa_generate(out: Path = typer.Option(..., "--out", help="questions CSV (mimic_pair_questions.csv's "
                                                                 "columns, answers included)"),
                     patients: Optional[int] = typer.Option(None, "--patients", min=1,
                                                            help="draw this many patients (default: all)"),
                     seed: int = typer.Option(0, "--seed", help="random seed: the same seed and graph give the "
                                                               "same file"),
                     strict: bool = _STRICT) -> None:
    """Generate a question set for the loaded cohort by the dataset's rules."""
    from graph.questions.generate import generate

    start = time.perf_counter()
    frame = generate(store_or_fail(), patients, seed, strict)
    out.parent.mkdir(parents=True, exist_ok=True)
    frame.to_csv(out, index=False)
    pairs = frame[["study_id", "ref_id"]].drop_duplicates().shape[0]
    counts = ", ".join(f"{k} {v:,}" for k, v in frame["question_type"].value_counts(sort=False).items())
    console.print(f"{len(frame):,} questions for {pairs:,} pairs of {frame['subject_id'].nunique():,} patients "
                  f"-> {out} in {time.perf_counter() - start:.1f} s" + (f" ({counts})" if counts else ""),
                  highlight=False)


@diffvqa_app.command("check")
def diffvqa_check(questions: Path = typer.Argument(..., help="CSV in mimic_pair_questions.csv's layout (study_id, "
                                                             "subject_id, ref_id, question_type, question)"),
                  out: Optional[Path] = typer.Option(None, "--out", dir_okay=False,
                                                     help="write the file again: reversed difference pairs "
                                                          "re-oriented and answered from the graph, the pairs no "
                                                          "swap mends left out"),
                  show: int = typer.Option(5, "--show", min=0, help="rows listed per fault in the table"),
                  strict: bool = _STRICT, rejected: Optional[Path] = rejected_option(),
                  fmt: Format = format_option(csv="every difference row with its order")) -> None:
    """The graph's order of every difference question's main and reference study: pairs reversed, of two
    patients, with a study the graph does not hold, and asked both ways round, counted and listed by row
    (the file's line)."""
    from graph.questions.order import check_file, fixed_frame, write_fixed

    frame, check = check_file(reader_or_fail(), questions)  # QuestionFileError: one line, exit 1
    _print_order(check, fmt, show, f"{len(check.rows):,} difference questions of {questions} "
                                   f"({check.other_questions:,} others not checked)")
    if out is not None:
        fixed = fixed_frame(reader_or_fail(), frame, check, str(questions), strict)
        write_fixed(fixed, out)
        left = ", ".join(f"{reason} {n:,}" for reason, n in fixed.left_out.items()) or "none"
        err.print(f"{len(fixed.frame):,} rows -> {out}: {fixed.reoriented:,} re-oriented and answered again; "
                  f"left out: {left}", highlight=False, markup=False)
        reject(fixed.rejections, rejected, "diffvqa-check")


def _print_order(check: OrderCheck, fmt: Format, show: int, title: str) -> None:
    """The counts and the first ``show`` rows of each fault (table), every difference row (csv), or the counts
    and every faulty row (json)."""
    from graph.questions.order import PairOrder

    faulty = check.rows[(check.rows["status"] != PairOrder.IN_ORDER.value) | check.rows["both_orders"]]
    if fmt is Format.csv:
        print_rows(check.rows.to_dict("records"), fmt.value)
    elif fmt is Format.json:
        print_json({"counts": check.counts(), "other_questions": check.other_questions,
                    "rows": faulty.to_dict("records")})
    else:
        print_rows(check.counts(), fmt.value, ["status", "pairs", "rows"], title=title)
        listed = faulty.groupby("status", sort=False).head(show)
        if len(listed):
            print_rows(listed.to_dict("records"), fmt.value, ["line", "status", "study_id", "ref_id", "detail"],
                       title="rows", wrap=False)


@diffvqa_app.command("unmapped")
def diffvqa_unmapped(fmt: Format = format_option()) -> None:
    """Vocabulary findings, severity words and regions without a Diff-VQA name, and Diff-VQA diseases
    that no vocabulary finding maps to (graph/vocab/diffvqa.yaml)."""
    from graph.questions.mapping import mapping, unmapped

    m = mapping()
    print_rows(unmapped(m), fmt.value, ["kind", "name", "note"],
               title=f"unmapped (mapping {m.version}, vocabulary {m.vocabulary_version})")


@diffvqa_app.command("score")
def diffvqa_score(gold: Path = typer.Argument(..., help="the reference answers CSV"),
                  pred: Path = typer.Argument(..., help="the answers to score (e.g. `cxrkg diffvqa answer`'s)"),
                  fmt: Format = format_option()) -> None:
    """Score answers against a reference per question type: BLEU-1..4, METEOR, ROUGE-L, CIDEr and, for
    closed (yes/no) questions, exact-match accuracy; rows joined on (study_id, ref_id, question)."""
    from graph.questions.score import score_files

    table = score_files(gold, pred)  # QuestionFileError, MetricUnavailable: one line and exit code 1 (main's explain)
    rows = [{k: ("" if math.isnan(v) else round(v, 4)) if isinstance(v, float) else v for k, v in r.items()}
            for r in table.to_dict("records")]
    print_rows(rows, fmt.value, list(table.columns), title="Medical-Diff-VQA scores")


@diffvqa_app.command("ask")
def diffvqa_ask(question: str = typer.Argument(..., help="one question in the templates' wording"),
                study: str = typer.Option(..., "--study", help="the main study"),
                ref: Optional[str] = typer.Option(None, "--ref", help="the reference study (difference "
                                                  "questions; default: the latest earlier PA/AP study)"),
                show_cypher: bool = typer.Option(False, "--show-cypher", help="print the query that read the "
                                                 "graph, its parameters as Neo4j Browser's :param lines"),
                strict: bool = _STRICT) -> None:
    """Answer one Medical-Diff-VQA question about a study from the graph."""
    from graph.questions.ask import ask

    # QuestionParseError (the templates listed), UnanswerableQuestion: one error line
    asked = ask(reader_or_fail(), question, study, ref, strict)
    if show_cypher:  # as Neo4j Browser runs it pasted: every parameter, then the statement
        console.print(asked.cypher(), highlight=False, markup=False)
    a = asked.answer
    console.print(a.text, highlight=False, markup=False)
    console.print(f"basis: {a.basis}" + (f"; evidence: {' | '.join(a.evidence)}" if a.evidence else ""),
                  highlight=False, markup=False, style="dim")


old_name(app, "ask", "diffvqa ask", diffvqa_ask)

cxreasonbench_app = command_group("cxreasonbench", "CXReasonBench-style staged items (criterion, body "
                                                   "parts, measurement, decision) from the graph's "
                                                   "measurements.")


@cxreasonbench_app.command("generate")
def cxreasonbench_generate(out: Path = typer.Option(..., "--out", help="the items, one JSON object per line"),
                           seed: int = typer.Option(0, "--seed", help="random seed of the option order: the same "
                                                                     "seed and graph give the same file"),
                           tasks: Optional[str] = typer.Option(
                               None, "--tasks", help="the tasks to write, comma-separated, of cardiomegaly, "
                               "mediastinal_widening, trachea_deviation, aortic_knob_enlargement, rotation, "
                               "inclusion (default: all six)")) -> None:
    """Write one item per measured frontal image and task, each answer with its basis (the Measurement's id,
    value, threshold and regions); images a task cannot ask are counted by reason."""
    from graph.cxreasonbench.generate import generate, parse_tasks

    chosen = parse_tasks(tasks)  # None: every task; TaskSelectionError: one line, exit 1
    s = generate(store_or_fail(), out, seed, chosen)
    counts = ", ".join(f"{k} {v:,}" for k, v in s.items.items()) or "none"
    left = "; ".join(f"{task} {reason} {n:,}" for (task, reason), n in sorted(s.left_out.items()))
    console.print(f"{sum(s.items.values()):,} items ({counts}) for {s.images:,} measured images -> {out} in "
                  f"{s.seconds:.1f} s" + (f"; left out: {left}" if left else ""), highlight=False, markup=False)
