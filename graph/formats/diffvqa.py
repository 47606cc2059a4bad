"""Medical-Diff-VQA's question file: its columns, its one reader and its one error.

The layout is the dataset's ``mimic_pair_questions.csv`` (Hu et al., KDD 2023; repository
Holipori/MIMIC-Diff-VQA, README and ``code/question_gen.py``'s ``question_gen``): columns study_id, subject_id,
ref_id, question_type, question and, in a file with answers, answer; other columns (the dataset's unnamed index,
``split``) are kept as they are. Every command that reads such a file reads it here: ``cxrkg diffvqa answer``
and ``score``, the NIH check (:mod:`graph.checks.nih.diffvqa`) and the benchmarks.

Numbering: a row is named by its line in the file, as an editor shows it: the header is line 1, the first
question line 2. Blank lines count (they are lines, skipped as rows), and a row whose quoted cell spans lines
is named by the line it starts on.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from graph.formats.csv_lines import check_unique_columns, line_record, read_lines
from graph.records import InputError

if TYPE_CHECKING:
    import pandas as pd

QUESTION_COLUMNS = ("study_id", "subject_id", "ref_id", "question_type", "question")
"""The columns a question file must have (``mimic_pair_questions.csv`` without ``answer``)."""
ANSWER_COLUMNS = (*QUESTION_COLUMNS, "answer")
"""The columns a file of answers must have (``mimic_pair_questions.csv``'s own)."""
LINE = "line"
"""The name of the index :func:`read_question_file` gives: each row's line in the file."""


class QuestionFileError(InputError):
    """A question file that cannot be used: names the file, the row (``line N``, the header being line 1) and
    the field (a column), or the file alone when it cannot be read at all."""


def check_columns(columns: Iterable[str], required: tuple[str, ...], source: str) -> None:
    """Raise unless every ``required`` column is among ``columns``.

    Raises:
        QuestionFileError: names ``source``, line 1 (the header) and the first missing column.
    """
    have = set(columns)
    missing = [c for c in required if c not in have]
    if missing:
        raise QuestionFileError(source, line_record(1), missing[0],
                                f"column(s) {', '.join(missing)} missing; a question file has {', '.join(required)}")


def read_question_file(path: str | Path, required: tuple[str, ...] = QUESTION_COLUMNS) -> pd.DataFrame:
    """Every row of a question file, every cell a string as written (ids keep their leading zeros, an empty
    cell is ``""``), indexed by the row's line in the file (index name :data:`LINE`).

    Args:
        path: the CSV (UTF-8, a byte-order mark allowed).
        required: the columns it must have (:data:`QUESTION_COLUMNS` or :data:`ANSWER_COLUMNS`); others are kept.

    Returns:
        The file's columns in its order, one row per non-blank row, in file order.

    Raises:
        QuestionFileError: the file cannot be opened or decoded, is empty, is not CSV, names a column twice,
            lacks a required column, or has a row with more or fewer fields than the header (file, line and,
            where there is one, field named).
    """
    import pandas as pd  # not at module level: the CLI's quick paths import this module's names only

    source = str(path)
    header, lines, records = read_lines(Path(path), source, QuestionFileError, same_width=True)
    check_unique_columns(header, source, QuestionFileError)
    check_columns(header, required, source)
    return pd.DataFrame(records, columns=header, index=pd.Index(lines, name=LINE, dtype="int64"), dtype=str)


# The difference caption of an answer to "what has changed compared to the reference image?": its sentences are
# the dataset's format (``get_caption`` and ``diff_ques`` of question_gen.py), written here once for the
# generator (graph.questions.grammar) and the independent check (graph.checks.nih.diffvqa), which each decide
# themselves what was added and what is missing.

def caption_list(names: Sequence[str]) -> str:
    """``get_caption``'s list of names: one name as is; several as ``"a, b, and c"`` (``"a, and b"`` for two).
    Raises IndexError for no names."""
    if len(names) == 1:
        return names[0]
    return ", ".join(names[:-1]) + ", and " + names[-1]


def difference_caption(added: Sequence[str], missing: Sequence[str]) -> str:
    """The added and missing sentences of a difference answer, in that order and each ending in ``". "``:
    ``"the main image has an additional finding of X than the reference image. "`` (``additional findings of
    A, B, and C`` for several), then ``"the main image is missing the finding(s) of ... than the reference
    image. "``; ``""`` when both are empty. Names are written in the order given."""
    out = ""
    if added:
        noun = "an additional finding" if len(added) == 1 else "additional findings"
        out += f"the main image has {noun} of {caption_list(added)} than the reference image. "
    if missing:
        noun = "the finding" if len(missing) == 1 else "the findings"
        out += f"the main image is missing {noun} of {caption_list(missing)} than the reference image. "
    return out
