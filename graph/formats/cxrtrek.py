"""The CXRTrek file format, read and validated: one sample per study, its questions in diagnostic stages.

Source of the format: the public demo file of CXRTrek (Guan et al. 2025, "Interpreting Chest X-rays Like a
Radiologist: A Benchmark with Clinical Reasoning"; repository guanjinquan/CXRTrekReasoner,
``dataset/train_swift_demo.json``, 100 samples, 2,606 questions). Its structure, restated:

- the file is a JSON array of samples; a sample has ``messages`` (a system turn, then one user and one
  assistant turn per question: the training code reads the answer of ``content[i]`` at ``messages[2 + 2i]``),
  ``image`` (the current study's images first, then the reference's) and ``data_dict.cxrtrek_data``;
- ``cxrtrek_data``: ``source``, ``pat_id``, ``study_id``, ``ref_study_id`` (the prior study, ``""`` for a
  first study), ``pos_study_id`` (the next study, ``""`` for a last one), ``image`` and ``content[]``;
- a ``content[]`` item: ``stage`` (1 to 8), ``task_type`` (:data:`STAGE_TASK_TYPES`, some with a bracketed
  variant: ``Differences_Comparison[Choice]``, ``Report_Generation[Impression]``), ``qtype`` (:data:`QTYPE`),
  ``image_input_count``, ``question``, ``answer``; choice items carry ``option_list`` and ``answer_list``
  (the right options, each one of ``option_list``); ``target`` names what is asked about
  (``abnormality_[opacification]``, ``yes_no_foreign_body``, an anatomy for detection); detection items carry
  ``bbox_list``, boxes ``[x1, y1, x2, y2]`` in percent of the image (0 to 100).

What is required is what scoring and the readers of a sample need (docs/formats.md §9): a sample's
``pat_id``, ``study_id``, ``ref_study_id``, ``pos_study_id`` and ``content`` (a fault rejects the sample), an
item's ``stage``, ``task_type``, ``qtype``, ``question``, ``answer``, a choice's ``option_list`` and
``answer_list``, a detection's ``bbox_list``, a ``target`` when given (a fault rejects the ITEM; its sample
stays with its other items, and the item's two chat turns leave with it). Types are checked strictly: a
stage written ``"2"`` is an error. What a release adds is kept and counted (:data:`KEPT_KINDS`): a bracketed
variant (any stage; the base name is ``task_type``, the bracket ``task_variant``), a task type in another
stage than :data:`STAGE_TASK_TYPES` lists or in none, a stage outside 1-8, an unknown qtype (scored as a
caption), a chat that does not pair with ``content`` (the chat is not scored). Other fields (``reason``,
``polish_flag``, ``image_id``, ``image_input_count`` ..., cxrkg's ``graph_basis``) are kept unchecked.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator, model_validator
from pydantic_core import ErrorDetails

from graph.errors import CxrkgError
from graph.records import Rejection

#: The task types of each stage, as the demo file names them without their bracketed variants. The demo also
#: asks ``Findings_Identification`` in stage 3 (5 of its 2,606 questions): kept, counted as outside its stage.
STAGE_TASK_TYPES: dict[int, tuple[str, ...]] = {
    1: ("Quality_Assessment", "View_Information"),
    2: ("Findings_Identification",),
    3: ("Attributes_Description", "Findings_Detection", "Phrase_Grounding"),
    4: ("Relationships_Analysis",),
    5: ("Differences_Comparison",),
    6: ("Future_Trend_Analysis",),
    7: ("Diagnosis_Advice",),
    8: ("Report_Generation",),
}
#: The question types of the demo file: ``multi-choice`` also appears numbered (``multi-choice-2``).
QTYPE = re.compile(r"captioning|yes_no|single-choice|multi-choice(-\d+)?|detection")
CHOICE_QTYPES = re.compile(r"single-choice|multi-choice(-\d+)?")
_VARIANT = re.compile(r"(?P<base>[^\[\]]+)\[(?P<variant>[^\[\]]*)\]")
#: What the reader keeps and counts (:attr:`ReadResult.kept`), in the order ``cxrtrek check`` prints them.
KEPT_KINDS = ("task-type variants", "task types outside their stage", "unknown task types", "stages outside 1-8",
              "unknown qtypes", "chats not paired with their questions")


class CxrtrekFormatError(CxrkgError, ValueError):
    """A CXRTrek file that cannot be read at all: not JSON, or not a list of samples. Names the file."""


def split_task_type(text: str) -> tuple[str, str | None]:
    """``"Differences_Comparison[Choice]"`` -> ``("Differences_Comparison", "Choice")``; no bracket -> ``(text,
    None)``."""
    m = _VARIANT.fullmatch(text)
    return (m.group("base"), m.group("variant")) if m else (text, None)


def data_of(sample: dict[str, Any]) -> dict[str, Any]:
    """A sample's ``data_dict.cxrtrek_data`` (study ids, images, ``content``), as written.

    Raises:
        KeyError, TypeError: not a sample of the format (read files with :func:`read_valid` first).
    """
    data: dict[str, Any] = sample["data_dict"]["cxrtrek_data"]
    return data


def items_of(sample: dict[str, Any]) -> list[dict[str, Any]]:
    """A sample's questions (``data_dict.cxrtrek_data.content``), as written."""
    items: list[dict[str, Any]] = data_of(sample)["content"]
    return items


def new_sample(messages: list[dict[str, Any]], images: list[str], data: dict[str, Any]) -> dict[str, Any]:
    """A sample of the format from its chat, its images and its ``cxrtrek_data`` (what :func:`data_of` reads)."""
    return {"messages": messages, "image": images, "data_dict": {"cxrtrek_data": data}}


class ContentItem(BaseModel):
    """One question of a sample (a ``cxrtrek_data.content[]`` item); other fields are kept unchecked.
    ``task_type`` is the base name, ``task_variant`` the bracket (``None`` without one).

    Raises (on construction): ``pydantic.ValidationError`` naming the field: a missing or mistyped required
    field, a choice item without options or with an answer that is not one of them, a detection item without
    boxes or with a box outside 0-100 % or inverted.
    """

    model_config = ConfigDict(strict=True, extra="allow")

    stage: int
    task_type: str
    task_variant: str | None = None
    qtype: str
    question: str
    answer: str
    option_list: list[str] | None = Field(default=None, validate_default=True)
    answer_list: list[str] | None = Field(default=None, validate_default=True)
    target: str | None = None
    bbox_list: list[list[float]] | None = Field(default=None, validate_default=True)

    @model_validator(mode="before")
    @classmethod
    def _variant(cls, data: Any) -> Any:
        if isinstance(data, dict) and isinstance(data.get("task_type"), str):
            base, variant = split_task_type(data["task_type"])
            data = {**data, "task_type": base, "task_variant": variant}
        return data

    @field_validator("option_list", "answer_list")
    @classmethod
    def _choices(cls, v: list[str] | None, info: ValidationInfo) -> list[str] | None:
        qtype = info.data.get("qtype")
        if isinstance(qtype, str) and CHOICE_QTYPES.fullmatch(qtype):
            if not v:
                raise ValueError(f"a {qtype} item needs {info.field_name}")
            wrong = [a for a in v if a not in (info.data.get("option_list") or [])]
            if info.field_name == "answer_list" and wrong:
                raise ValueError(f"answer_list {wrong} not in option_list")
        return v

    @field_validator("bbox_list")
    @classmethod
    def _boxes(cls, v: list[list[float]] | None, info: ValidationInfo) -> list[list[float]] | None:
        if info.data.get("qtype") == "detection" and not v:
            raise ValueError("a detection item needs bbox_list")
        for box in v or []:
            if len(box) != 4:
                raise ValueError(f"box {box} is not [x1, y1, x2, y2]")
            x1, y1, x2, y2 = box
            if not (0 <= x1 <= x2 <= 100 and 0 <= y1 <= y2 <= 100):
                raise ValueError(f"box {box} is not [x1, y1, x2, y2] within 0-100 % of the image")
        return v

    def unusual(self) -> list[str]:
        """What of :data:`KEPT_KINDS` this item shows (a task type's stage is checked only for stages 1-8)."""
        out = ["task-type variants"] if self.task_variant is not None else []
        if self.stage not in STAGE_TASK_TYPES:
            out.append("stages outside 1-8")
        elif self.task_type not in STAGE_TASK_TYPES[self.stage]:
            known = any(self.task_type in types for types in STAGE_TASK_TYPES.values())
            out.append("task types outside their stage" if known else "unknown task types")
        if not QTYPE.fullmatch(self.qtype):
            out.append("unknown qtypes")
        return out


class CxrtrekData(BaseModel):
    """``data_dict.cxrtrek_data``: the study, its prior (``ref_study_id``) and next (``pos_study_id``) studies
    (``""`` when there is none) and its questions (each validated on its own: :class:`ContentItem`);
    ``source`` and ``image`` are kept unchecked."""

    model_config = ConfigDict(strict=True, extra="allow")

    pat_id: str
    study_id: str
    ref_study_id: str
    pos_study_id: str
    content: list[Any]


class DataDict(BaseModel):
    """A sample's ``data_dict``."""

    model_config = ConfigDict(strict=True, extra="allow")

    cxrtrek_data: CxrtrekData


class Sample(BaseModel):
    """What a sample must hold to be read: its ``data_dict``; ``messages`` and ``image`` are checked apart
    (:func:`chat_pairs`) or kept unchecked."""

    model_config = ConfigDict(strict=True, extra="allow")

    data_dict: DataDict


class Message(BaseModel):
    """One chat turn."""

    model_config = ConfigDict(strict=True, extra="allow")

    role: Literal["system", "user", "assistant"]
    content: str


def chat_pairs(messages: Any, questions: int) -> bool:
    """Whether ``messages`` is a system turn, then a user / assistant pair per question (each turn a role and a
    text)."""
    if not isinstance(messages, list) or len(messages) != 1 + 2 * questions:
        return False
    try:
        roles = [Message.model_validate(m).role for m in messages]
    except ValidationError:
        return False
    return roles == ["system"] + ["user", "assistant"] * questions


@dataclass
class KeptSample:
    """A sample read: its index in the file, the sample as written less its rejected items (and, where the chat
    pairs with the questions, their turns), its ``cxrtrek_data`` and its valid items (in ``row``'s order)."""

    index: int
    row: dict[str, Any]
    data: CxrtrekData
    items: list[ContentItem]


@dataclass
class ReadResult:
    """What :func:`read_samples` read: the samples kept, one :class:`~graph.records.Rejection` per rejected
    sample (``record`` = ``sample <index>``, ``field`` = the dotted path of the first faulty field, e.g.
    ``data_dict.cxrtrek_data.study_id``) or item (``record`` = ``sample <index> item <index>``, ``field`` the
    item's field, e.g. ``answer``), and what was kept unusual (:data:`KEPT_KINDS` -> count)."""

    samples: list[KeptSample] = field(default_factory=list)
    rejections: list[Rejection] = field(default_factory=list)
    kept: Counter = field(default_factory=Counter)

    @property
    def questions(self) -> int:
        """The items kept."""
        return sum(len(s.items) for s in self.samples)

    def kept_line(self) -> str:
        """``"kept: 118 task-type variants, 5 task types outside their stage, 0 unknown qtypes"``: the three
        kinds always, the others where there are any."""
        shown = [k for k in KEPT_KINDS if self.kept[k] or k in KEPT_KINDS[:2] or k == "unknown qtypes"]
        return "kept: " + ", ".join(f"{self.kept[k]:,} {k}" for k in shown)


def _field(error: ErrorDetails) -> str:
    return ".".join(str(part) for part in error["loc"]) or "(sample)"


def _reason(exc: ValidationError) -> str:
    first = exc.errors()[0]
    more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
    return first["msg"].removeprefix("Value error, ") + more


def _read_one(index: int, row: Any, file: str, out: ReadResult) -> None:
    try:
        data = Sample.model_validate(row).data_dict.cxrtrek_data
    except ValidationError as exc:
        out.rejections.append(Rejection(file, f"sample {index}", _field(exc.errors()[0]), _reason(exc)))
        return
    items, bad = [], set()
    for k, raw in enumerate(data.content):
        try:
            item = ContentItem.model_validate(raw)
        except ValidationError as exc:
            bad.add(k)
            out.rejections.append(Rejection(file, f"sample {index} item {k}", _field(exc.errors()[0]), _reason(exc)))
            continue
        items.append(item)
        out.kept.update(item.unusual())
    kept = dict(row)
    if not chat_pairs(row.get("messages"), len(data.content)):
        out.kept["chats not paired with their questions"] += 1
    elif bad:
        messages = row["messages"]
        kept["messages"] = messages[:1] + [m for k in range(len(data.content)) if k not in bad
                                           for m in messages[1 + 2 * k:3 + 2 * k]]
    if bad:
        content = [c for k, c in enumerate(data.content) if k not in bad]
        kept["data_dict"] = {**row["data_dict"], "cxrtrek_data": {**row["data_dict"]["cxrtrek_data"],
                                                                  "content": content}}
        data = data.model_copy(update={"content": content})
    out.samples.append(KeptSample(index, kept, data, items))


def validate_samples(rows: list[Any], file: str = "<memory>") -> ReadResult:
    """Validate parsed samples: the good ones kept (less their bad items), each bad sample or item rejected by
    index and field, the unusual counted.

    Args:
        rows: the file's JSON array.
        file: the name the rejections carry.

    Returns:
        A :class:`ReadResult`.
    """
    out = ReadResult()
    for index, row in enumerate(rows):
        _read_one(index, row, file, out)
    return out


def read_samples(path: Path) -> ReadResult:
    """Read and validate a CXRTrek-format JSON file.

    Raises:
        CxrtrekFormatError: the file cannot be read, is not JSON, or is not a JSON array.
    """
    return validate_samples(_load(path), str(path))


def _load(path: Path) -> list[Any]:
    try:
        rows = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CxrtrekFormatError(f"{path}: not a readable CXRTrek JSON file ({exc})") from exc
    if not isinstance(rows, list):
        raise CxrtrekFormatError(f"{path}: a CXRTrek file is a JSON array of samples, not a {type(rows).__name__}")
    return rows


def read_valid(path: Path) -> tuple[list[dict[str, Any]], list[Rejection]]:
    """The file's kept samples as written (plain JSON, in file order, less their rejected items) and the
    rejections.

    Raises:
        CxrtrekFormatError: the file cannot be read, is not JSON, or is not a JSON array.
    """
    result = read_samples(path)
    return [s.row for s in result.samples], result.rejections


def dump_samples(samples: list[dict[str, Any]], path: Path) -> None:
    """Write samples as the demo file is written (a JSON array, indented 4, non-ASCII escaped)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(samples, indent=4) + "\n", encoding="utf-8")
