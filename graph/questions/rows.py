"""A question file answered: checked row by row, the graph read once, every good row answered.

The file is ``mimic_pair_questions.csv``'s layout, read by :func:`graph.formats.diffvqa.read_question_file`:
columns study_id, subject_id, ref_id, question_type, question (an ``answer`` column, as in the dataset's own
file, is replaced). A rejected row is named by its line in the file (the header is line 1, the first question
line 2), as :mod:`graph.formats.diffvqa` numbers it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from graph.formats.diffvqa import QUESTION_COLUMNS, check_columns, line_record, read_question_file
from graph.questions.answer import answer
from graph.questions.facts import Reader, StudyFacts, read_study_facts
from graph.questions.mapping import mapping
from graph.questions.parse import ParsedQuestion, QuestionParseError, parse_question
from graph.records import Rejection

OUTPUT_COLUMNS = ("answer", "basis", "evidence")
EVIDENCE_SEPARATOR = " | "


@dataclass
class AnsweredFile:
    """What :func:`answer_file` gives: the answered rows (input columns plus ``answer``, ``basis``,
    ``evidence``) and the rejections (file, ``line N``, field, reason)."""

    answers: pd.DataFrame
    rejections: list[Rejection] = field(default_factory=list)


def answer_frame(reader: Reader, frame: pd.DataFrame, source: str, strict: bool = False) -> AnsweredFile:
    """Check and answer every row of ``frame`` with one read of the graph.

    Args:
        reader: the graph (a GraphStore or the Query API reader).
        frame: the question rows, text columns, indexed by their lines in ``source`` (as
            :func:`~graph.formats.diffvqa.read_question_file` gives them; a frame made in memory is named by
            its own index).
        source: the file name the rejections name.
        strict: count uncertain findings as not present (default: present, as the generator does).

    Raises:
        QuestionFileError: a column of :data:`~graph.formats.diffvqa.QUESTION_COLUMNS` is missing.
    """
    check_columns(frame.columns, QUESTION_COLUMNS, source)
    out_columns = [c for c in frame.columns if c not in OUTPUT_COLUMNS] + list(OUTPUT_COLUMNS)
    rows = frame.to_dict("records")
    facts = read_study_facts(reader, {r[c].strip() for r in rows for c in ("study_id", "ref_id") if r[c].strip()})
    done, rejections, m = [], [], mapping()
    for line, row in zip(frame.index, rows, strict=True):
        fault, checked = _check_row(row, facts)
        if fault is not None:
            rejections.append(Rejection(source, line_record(line), *fault))
            continue
        assert checked is not None  # _check_row gives a fault or the checked row
        q, main, ref = checked
        a = answer(q, main, ref, strict, m)
        done.append({**{k: v for k, v in row.items() if k not in OUTPUT_COLUMNS}, "answer": a.text,
                     "basis": a.basis, "evidence": EVIDENCE_SEPARATOR.join(a.evidence)})
    return AnsweredFile(pd.DataFrame(done, columns=out_columns), rejections)


Fault = tuple[str, str]  # (field, reason)


def _check_row(row: dict[str, str], facts: dict[str, StudyFacts]
               ) -> tuple[Fault | None, tuple[ParsedQuestion, StudyFacts, StudyFacts] | None]:
    """(None, (parsed question, main, reference)) for a good row; ((field, reason), None) for the first fault."""
    for c in QUESTION_COLUMNS:
        if not row[c].strip():
            return (c, "empty"), None
    try:
        q = parse_question(row["question"])
    except QuestionParseError as exc:
        return ("question", str(exc)), None
    if row["question_type"].strip() != q.question_type:
        return ("question_type", f"{row['question_type']!r}, but the question is a {q.question_type} question"), None
    study_id, ref_id = row["study_id"].strip(), row["ref_id"].strip()
    fault = check_pair(facts.get(study_id), facts.get(ref_id), study_id, ref_id)
    if fault is None and row["subject_id"].strip() != facts[study_id].patient_id:
        fault = "subject_id", f"study {study_id} belongs to patient {facts[study_id].patient_id}, not {row['subject_id']}"
    return (fault, None) if fault else (None, (q, facts[study_id], facts[ref_id]))


def check_pair(main: StudyFacts | None, ref: StudyFacts | None, study_id: str, ref_id: str) -> Fault | None:
    """None when ``ref`` is an earlier study of ``main``'s patient; else (field, reason) of the fault."""
    if main is None:
        return "study_id", f"study {study_id} is not in the graph"
    if ref is None:
        return "ref_id", f"study {ref_id} is not in the graph"
    if ref.patient_id != main.patient_id:
        return "ref_id", f"study {ref_id} belongs to patient {ref.patient_id}, not to {main.patient_id}"
    if main.order is None or ref.order is None or ref.order >= main.order:
        return "ref_id", f"study {ref_id} is not earlier than study {study_id}"
    return None


def answer_file(reader: Reader, path: Path, out: Path, strict: bool = False) -> AnsweredFile:
    """Answer a question file into ``out`` (CSV); returns the answered rows and the rejections.

    Raises:
        QuestionFileError: ``path`` cannot be read, or is not a question file (file, line and field named).
        OSError: ``out`` cannot be written.
    """
    result = answer_frame(reader, read_question_file(path), str(path), strict)
    out.parent.mkdir(parents=True, exist_ok=True)
    result.answers.to_csv(out, index=False)
    return result
