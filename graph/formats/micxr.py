"""MI-CXR's question file (JSON lines): its fields, its one reader and its one error.

The layout is ``micxr_test.jsonl`` of MI-CXR (Cho, Han and Do, ACL Findings 2026; repository AIDASLab/MI-CXR,
README "Data Fields"): one JSON object per line with ``qid`` (unique), ``group_type`` (TEL, ICR or GTS),
``qtype`` (the fine-grained type, e.g. "single emergence"), ``images`` (the five visits T1 to T5 in time order,
relative image paths in MIMIC-CXR-JPG's ``files/p14/...`` layout), ``question``, ``choices`` (five options A to
E) and ``answer`` (the correct choice). The README does not show how ``choices`` and ``answer`` are spelled, so
the reader takes each spelling such a file can reasonably have:

- ``choices``: a list of option texts, in A, B, C ... order, each optionally written ``"A. text"`` or
  ``"(A) text"``; or an object keyed by the letters (``{"A": "text", ...}``);
- ``images``: a list of paths in visit order, or an object keyed ``T1`` ... ``T5``;
- ``answer``: a letter (``"B"``, ``"(B)"``, ``"B."``, ``"B. text"``) or the text of one choice.

Other fields are kept as they are (:attr:`MicxrQuestion.extra`): ``cxrkg questions multivisit`` writes each
answer's basis in the graph in :data:`BASIS_FIELD`, which the format ignores.

Numbering: a row is named by its line in the file (the first line is line 1; blank lines count and are
skipped). A bad row is rejected alone, naming its line and field; the rest of the file is read.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from graph.formats.csv_lines import line_record
from graph.records import InputError, Rejection

FIELDS = ("qid", "group_type", "qtype", "images", "question", "choices", "answer")
"""MI-CXR's fields, in its README's order."""
GROUP_TYPES = ("TEL", "ICR", "GTS")
"""MI-CXR's task families: Temporal Event Localization, Interval-wise Change Reasoning, Global Trajectory
Summarization."""
BASIS_FIELD = "cxrkg_basis"
"""The field cxrkg adds to each question it writes: the answer's basis in the graph (ignored by the format)."""
LETTERS = "ABCDEFGHIJ"
_LETTER = re.compile(r"^\(?([A-J])(?:[.):]|\)[.:]?)?(?:\s+.+)?$", re.S)
# a letter alone (A, (A), A., A)) or before a delimiter and text ("B. text", "(B) text"); "A small effusion"
# is text, not a letter: a letter followed by text needs a delimiter
_DELIMITED = re.compile(r"^\(?[A-J](?:[.):]|\)[.:]?)?$|^\(?[A-J](?:[.):]|\)[.:]?)\s+", re.S)
_PREFIXED = re.compile(r"^\(?([A-J])[.)]\s+(.*)$", re.S)


class MicxrFileError(InputError):
    """An MI-CXR file that cannot be used: names the file, the row (``line N``) and the field, or the file
    alone when it cannot be read at all."""


@dataclass(frozen=True)
class MicxrQuestion:
    """One question as read: ``choices`` the option texts in letter order (A first), ``answer`` the letter
    of the correct one (None in a file read without answers), ``line`` its line in the file, ``extra`` the
    fields beyond :data:`FIELDS`."""

    qid: str
    group_type: str
    qtype: str
    images: tuple[str, ...]
    question: str
    choices: tuple[str, ...]
    answer: str | None
    line: int
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def answer_text(self) -> str | None:
        """The text of the correct choice (None without an answer)."""
        return None if self.answer is None else self.choices[LETTERS.index(self.answer)]


@dataclass
class MicxrFile:
    """What a read gave: the questions in file order and the rows rejected (one :class:`Rejection` each)."""

    questions: list[MicxrQuestion]
    rejections: list[Rejection]


def _text(value: Any, source: str, line: int, name: str) -> str:
    if not isinstance(value, (str, int)) or isinstance(value, bool) or str(value).strip() == "":
        raise MicxrFileError(source, line_record(line), name, f"{name} must be a non-empty string, got {value!r}")
    return str(value)


def _choices(value: Any, source: str, line: int) -> tuple[str, ...]:
    if isinstance(value, dict):
        keys = [str(k).strip("() .").upper() for k in value]
        if sorted(keys) != list(LETTERS[:len(keys)]):
            raise MicxrFileError(source, line_record(line), "choices",
                                 f"choice keys must be A, B, C ... in order, got {list(value)}")
        ordered = dict(zip(keys, value.values(), strict=True))
        value = [ordered[k] for k in LETTERS[:len(keys)]]
    if not isinstance(value, list) or not 2 <= len(value) <= len(LETTERS):
        raise MicxrFileError(source, line_record(line), "choices",
                             f"choices must be a list (or A..E object) of 2 to {len(LETTERS)} options, got {value!r}")
    out = []
    for k, choice in enumerate(value):
        text = _text(choice, source, line, "choices")
        match = _PREFIXED.match(text)
        out.append(match.group(2).strip() if match and match.group(1) == LETTERS[k] else text.strip())
    if len(set(out)) != len(out):
        raise MicxrFileError(source, line_record(line), "choices", f"two choices are the same: {out}")
    return tuple(out)


def _images(value: Any, source: str, line: int) -> tuple[str, ...]:
    if isinstance(value, dict):
        try:
            value = [value[k] for k in sorted(value, key=lambda k: int(str(k).lstrip("Tt")))]
        except ValueError:
            raise MicxrFileError(source, line_record(line), "images",
                                 f"image keys must be T1, T2 ..., got {list(value)}") from None
    if not isinstance(value, list) or not value:
        raise MicxrFileError(source, line_record(line), "images", f"images must be a non-empty list, got {value!r}")
    return tuple(_text(v, source, line, "images") for v in value)


def resolve_answer(value: Any, choices: tuple[str, ...], source: str, line: int, name: str = "answer") -> str:
    """The letter ``value`` names among ``choices``: a choice's text (case and outer spaces ignored), else a
    letter (``B``, ``(B)``, ``B.``, ``B. text``, ``(B) text``).

    Raises:
        MicxrFileError: names ``source``, the line and ``name`` when it names no choice.
    """
    text = _text(value, source, line, name).strip()
    folded = [c.casefold() for c in choices]
    if text.casefold() in folded:  # a choice's own text first: a choice may begin with a letter
        return LETTERS[folded.index(text.casefold())]
    match = _LETTER.match(text)
    if match and _DELIMITED.match(text) and LETTERS.index(match.group(1)) < len(choices):
        return match.group(1)
    raise MicxrFileError(source, line_record(line), name,
                         f"{text!r} is neither a letter A-{LETTERS[len(choices) - 1]} nor one of the choices")


def parse_question(row: Any, source: str, line: int, with_answer: bool = True) -> MicxrQuestion:
    """One decoded JSON line as a :class:`MicxrQuestion`.

    Raises:
        MicxrFileError: the first field that is missing or malformed (``answer`` only ``with_answer``).
    """
    if not isinstance(row, dict):
        raise MicxrFileError(source, line_record(line), None, f"a row must be a JSON object, got {type(row).__name__}")
    needed = FIELDS if with_answer else FIELDS[:-1]
    for name in needed:
        if name not in row:
            raise MicxrFileError(source, line_record(line), name, f"field {name} missing; a row has {', '.join(needed)}")
    group = _text(row["group_type"], source, line, "group_type").strip().upper()
    if group not in GROUP_TYPES:
        raise MicxrFileError(source, line_record(line), "group_type",
                             f"group_type {row['group_type']!r}: choose from {', '.join(GROUP_TYPES)}")
    choices = _choices(row["choices"], source, line)
    answer = resolve_answer(row["answer"], choices, source, line) if with_answer else None
    return MicxrQuestion(_text(row["qid"], source, line, "qid"), group, _text(row["qtype"], source, line, "qtype"),
                         _images(row["images"], source, line), _text(row["question"], source, line, "question"),
                         choices, answer, line, {k: v for k, v in row.items() if k not in FIELDS})


def read_micxr(path: str | Path, with_answer: bool = True) -> MicxrFile:
    """Every readable question of an MI-CXR JSON-lines file; each bad row rejected alone (a line that is not
    JSON, a missing or malformed field, a qid seen on an earlier line).

    Raises:
        MicxrFileError: the file cannot be read at all (missing, not UTF-8).
    """
    source = str(path)
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise MicxrFileError(source, None, None, f"cannot read the file: {exc}") from None
    questions: list[MicxrQuestion] = []
    rejections: list[Rejection] = []
    seen: dict[str, int] = {}
    for number, text in enumerate(lines, 1):
        if not text.strip():
            continue
        try:
            try:
                row = json.loads(text)
            except json.JSONDecodeError as exc:
                raise MicxrFileError(source, line_record(number), None, f"not a JSON object: {exc.msg}") from None
            question = parse_question(row, source, number, with_answer)
            if question.qid in seen:
                raise MicxrFileError(source, line_record(number), "qid",
                                     f"qid {question.qid!r} already on line {seen[question.qid]}")
        except MicxrFileError as exc:
            rejections.append(Rejection.from_error(exc))
            continue
        seen[question.qid] = number
        questions.append(question)
    return MicxrFile(questions, rejections)


def write_micxr(path: str | Path, rows: list[dict[str, Any]]) -> None:
    """Write ``rows`` (dicts with :data:`FIELDS`, and any others) one JSON object per line, keys in the
    dict's order, UTF-8, so that the same rows give the same bytes.

    Raises:
        OSError: ``path`` cannot be written.
    """
    with open(path, "w", encoding="utf-8") as out:
        for row in rows:
            out.write(json.dumps(row, ensure_ascii=False, separators=(", ", ": ")) + "\n")
