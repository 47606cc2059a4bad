"""Which Medical-Diff-VQA difference questions have their studies in the wrong order, by the graph's timeline.

A difference question ("what has changed compared to the reference image?") compares a main study with a
reference study that must be an earlier study of the same patient. In the released dataset that does not always
hold: a user counted 79,767 of 164,324 study pairs with the main and reference studies in reversed
chronological order, and found both orders of one pair in version 1.0.1 (repository Holipori/MIMIC-Diff-VQA,
issue 4, "Study Order in Difference Questions"); the maintainer answered that in the other question types the
reference id is not meant as the prior. So only ``question_type == "difference"`` rows are checked; the others
are counted and left as they are.

Each difference row gets one :class:`PairOrder`, the first that applies: a study the graph does not hold, a
reference of another patient, the main study itself, a ``subject_id`` that is not the main study's patient, two
studies taken at the same time (their order is in doubt), a reversed pair (the reference later than the main
study), or in order. ``both_orders`` marks the rows whose pair is also asked the other way round.

:func:`fixed_frame` writes the file again with each reversed row re-oriented (main and reference swapped) and
its answer written again from the graph by :func:`graph.questions.rows.answer_frame` (the dataset's
templates, as ``cxrkg diffvqa answer`` writes them); rows that no swap can mend (another patient, a study not
held, the same study, a wrong subject) are left out, and so is a re-oriented row that would repeat one already
in the file.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

import pandas as pd

from graph.formats.diffvqa import LINE, QUESTION_COLUMNS, read_question_file
from graph.questions.facts import Reader
from graph.questions.rows import answer_frame
from graph.records import Rejection
from graph.store import read_statements as rs

DIFFERENCE = "difference"
"""The question type whose reference study must be the earlier one (the dataset's ``question_type``)."""


class PairOrder(StrEnum):
    """How a difference row's pair stands in the graph's timeline."""

    IN_ORDER = "in order"
    REVERSED = "reversed"
    TWO_PATIENTS = "two patients"
    NOT_IN_GRAPH = "study not in the graph"
    SAME_STUDY = "same study"
    WRONG_SUBJECT = "subject_id not the main study's patient"
    SAME_TIME = "order in doubt"


UNMENDABLE = frozenset({PairOrder.TWO_PATIENTS, PairOrder.NOT_IN_GRAPH, PairOrder.SAME_STUDY, PairOrder.WRONG_SUBJECT})
"""The faults no swap mends: :func:`fixed_frame` leaves their rows out."""
ROW_COLUMNS = (LINE, "study_id", "ref_id", "subject_id", "status", "both_orders", "detail")


@dataclass(frozen=True)
class _Place:
    patient_id: str
    order: int | None
    when: str | None


@dataclass
class OrderCheck:
    """What :func:`check_order` finds.

    Attributes:
        rows: one row per difference question, columns :data:`ROW_COLUMNS` (``line``: the row's line in the
            file, ``status``: a :class:`PairOrder` value, ``both_orders``: the pair is also asked reversed,
            ``detail``: why, in words), in file order.
        other_questions: the rows of the other question types (not checked).
    """

    rows: pd.DataFrame
    other_questions: int

    def counts(self) -> list[dict[str, object]]:
        """One row per status found (and ``both orders``): ``status``, ``pairs`` (distinct (study_id, ref_id)),
        ``rows``; the statuses in :class:`PairOrder`'s order."""
        out: list[dict[str, object]] = []
        for status in PairOrder:
            chosen = self.rows[self.rows["status"] == status.value]
            if len(chosen):
                out.append({"status": status.value, "pairs": _pairs(chosen), "rows": len(chosen)})
        both = self.rows[self.rows["both_orders"]]
        if len(both):
            out.append({"status": "both orders asked", "pairs": _pairs(both) // 2, "rows": len(both)})
        return out


def _pairs(rows: pd.DataFrame) -> int:
    return int(rows[["study_id", "ref_id"]].drop_duplicates().shape[0])


def _places(reader: Reader, study_ids: set[str]) -> dict[str, _Place]:
    rows = reader.read(rs.STUDY_PLACES, study_ids=sorted(study_ids))
    return {str(r["study_id"]): _Place(str(r["patient_id"]), r["study_order"], r["study_datetime"]) for r in rows}


def _status(main_id: str, ref_id: str, subject: str, places: dict[str, _Place]) -> tuple[PairOrder, str]:
    main, ref = places.get(main_id), places.get(ref_id)
    if main is None or ref is None:
        return PairOrder.NOT_IN_GRAPH, f"study {main_id if main is None else ref_id} is not in the graph"
    if ref.patient_id != main.patient_id:
        return PairOrder.TWO_PATIENTS, f"study {ref_id} belongs to patient {ref.patient_id}, {main_id} to {main.patient_id}"
    if main_id == ref_id:
        return PairOrder.SAME_STUDY, "the reference is the main study"
    if subject != main.patient_id:
        return PairOrder.WRONG_SUBJECT, f"study {main_id} belongs to patient {main.patient_id}, not {subject}"
    if main.when is None or ref.when is None or main.when == ref.when or main.order is None or ref.order is None:
        return PairOrder.SAME_TIME, f"studies {ref_id} and {main_id} have the same or no date"
    if ref.order > main.order:
        return PairOrder.REVERSED, f"the reference {ref_id} ({ref.when}) is later than {main_id} ({main.when})"
    return PairOrder.IN_ORDER, ""


def check_order(reader: Reader, frame: pd.DataFrame) -> OrderCheck:
    """Each difference row's pair placed in the graph's timeline (one read of the studies' patients, ranks
    and dates).

    Args:
        reader: the graph (a GraphStore or the Query API reader).
        frame: the question rows, as :func:`graph.formats.diffvqa.read_question_file` gives them (text
            columns :data:`~graph.formats.diffvqa.QUESTION_COLUMNS`, indexed by line).
    """
    diff = frame[frame["question_type"].str.strip() == DIFFERENCE]
    main, ref = diff["study_id"].str.strip(), diff["ref_id"].str.strip()
    places = _places(reader, set(main) | set(ref))
    asked = set(zip(main, ref, strict=True))
    rows = []
    for line, m, r, subject in zip(diff.index, main, ref, diff["subject_id"].str.strip(), strict=True):
        status, detail = _status(m, r, subject, places)
        rows.append((int(line), m, r, subject, status.value, m != r and (r, m) in asked, detail))
    return OrderCheck(pd.DataFrame(rows, columns=list(ROW_COLUMNS)), len(frame) - len(diff))


def check_file(reader: Reader, path: Path) -> tuple[pd.DataFrame, OrderCheck]:
    """The question file read (:func:`~graph.formats.diffvqa.read_question_file`) and checked.

    Raises:
        QuestionFileError: the file cannot be read or lacks a column (file, line and field named).
    """
    frame = read_question_file(path, QUESTION_COLUMNS)
    return frame, check_order(reader, frame)


@dataclass
class FixedFile:
    """What :func:`fixed_frame` gives: the rows to write, how many were re-oriented, the rows left out by
    reason, and the re-oriented rows the answering code rejected (file, ``line N``, field, reason)."""

    frame: pd.DataFrame
    reoriented: int
    left_out: Counter[str] = field(default_factory=Counter)
    rejections: list[Rejection] = field(default_factory=list)


def fixed_frame(reader: Reader, frame: pd.DataFrame, check: OrderCheck, source: str,
                strict: bool = False) -> FixedFile:
    """The file with each reversed difference row re-oriented and answered again from the graph.

    Args:
        reader: the graph.
        frame: the rows :func:`check_file` read (indexed by line; every column kept, in order; an ``answer``
            column is added when the file has none).
        check: :func:`check_order`'s result for ``frame``.
        source: the file name rejections name.
        strict: count uncertain findings as not present, as ``diffvqa answer --strict``.

    Returns:
        The rows in file order: unchecked and in-order rows as written, order-in-doubt rows as written,
        re-oriented rows with ``study_id``/``ref_id`` swapped and a new ``answer``; left out: the
        :data:`UNMENDABLE` rows, a re-oriented row whose (study_id, ref_id, question) is already in the file,
        and a re-oriented row the answering code rejects.
    """
    status = check.rows.set_index(LINE)["status"]
    unmendable = status.index[status.isin([s.value for s in UNMENDABLE])]
    left_out: Counter[str] = Counter(status[unmendable].to_list())
    fixed = frame.drop(index=unmendable)
    if "answer" not in fixed.columns:
        fixed = fixed.assign(answer="")
    fixed, repeats = _turned(fixed, status.index[status == PairOrder.REVERSED.value])
    left_out["re-oriented repeat of a row already there"] = repeats
    turned = fixed.loc[fixed["_turned"], list(QUESTION_COLUMNS)].assign(_line=lambda f: f.index)
    answered = answer_frame(reader, turned, source, strict)
    got = answered.answers.set_index("_line")["answer"] if len(answered.answers) else pd.Series(dtype=str)
    fixed.loc[got.index, "answer"] = got
    failed = turned.index.difference(got.index)
    left_out["re-oriented, then rejected"] = len(failed)
    return FixedFile(fixed.drop(index=failed).drop(columns="_turned"), len(got), +left_out, answered.rejections)


def _turned(frame: pd.DataFrame, lines: pd.Index) -> tuple[pd.DataFrame, int]:
    """``frame`` with the rows at ``lines`` re-oriented and marked (column ``_turned``), less those that
    repeat a question already asked of the pair in order or by an earlier re-oriented row; and how many."""
    out = frame.assign(_turned=frame.index.isin(lines))
    out.loc[lines, ["study_id", "ref_id"]] = out.loc[lines, ["ref_id", "study_id"]].to_numpy()
    key = out["study_id"].str.strip() + "\x1f" + out["ref_id"].str.strip() + "\x1f" + out["question"].str.strip()
    repeat = out["_turned"] & (key.isin(set(key[~out["_turned"]])) | key.duplicated(keep="first"))
    return out[~repeat], int(repeat.sum())


def write_fixed(fixed: FixedFile, out: Path) -> None:
    """Write :func:`fixed_frame`'s rows to ``out`` as CSV (no index).

    Raises:
        OSError: ``out`` cannot be written.
    """
    out.parent.mkdir(parents=True, exist_ok=True)
    fixed.frame.to_csv(out, index=False)
