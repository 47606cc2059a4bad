"""The CXRTrek file format, read and validated: one sample per study, its questions in diagnostic stages.

Source of the format: the public demo file of CXRTrek (Guan et al. 2025, "Interpreting Chest X-rays Like a
Radiologist: A Benchmark with Clinical Reasoning"; repository guanjinquan/CXRTrekReasoner,
``dataset/train_swift_demo.json``, 100 samples). Its structure, restated:

- the file is a JSON array of samples; a sample has ``messages`` (a system turn, then one user and one
  assistant turn per question: the training code reads the answer of ``content[i]`` at ``messages[2 + 2i]``),
  ``image`` (the current study's images first, then the reference's) and ``data_dict.cxrtrek_data``;
- ``cxrtrek_data``: ``source``, ``pat_id``, ``study_id``, ``ref_study_id`` (the prior study, ``""`` for a
  first study), ``pos_study_id`` (the next study, ``""`` for a last one), ``image`` and ``content[]``;
- a ``content[]`` item: ``stage`` (1 to 8), ``task_type`` (one of the stage's, :data:`STAGE_TASK_TYPES`),
  ``qtype`` (:data:`QTYPE`), ``image_input_count``, ``question``, ``answer``; choice items carry
  ``option_list`` and ``answer_list`` (the right options, each one of ``option_list``); ``target`` names what
  is asked about (``abnormality_[opacification]``, ``yes_no_foreign_body``, an anatomy for detection);
  detection items carry ``bbox_list``, boxes ``[x1, y1, x2, y2]`` in percent of the image (0 to 100).

Fields the demo adds for its own bookkeeping (``reason``, ``polish_flag``, ``image_id`` ...) and cxrkg's
``graph_basis`` are kept and not checked. Types are checked strictly: a stage written ``"2"`` is an error.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator, model_validator
from pydantic_core import ErrorDetails

from graph.errors import CxrkgError
from graph.records import Rejection

#: The task types of each stage, as the demo file names them (stage 8's carry the report section in
#: brackets, ``Report_Generation[Impression]``, so a stage 8 type is checked by its prefix).
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


class CxrtrekFormatError(CxrkgError, ValueError):
    """A CXRTrek file that cannot be read at all: not JSON, or not a list of samples. Names the file."""


class ContentItem(BaseModel):
    """One question of a sample (a ``cxrtrek_data.content[]`` item); other fields are kept unchecked.

    Raises (on construction): ``pydantic.ValidationError`` naming the field: a wrong type, a stage outside
    1-8, a task type not of its stage, an unknown qtype, a choice item without options or with an answer
    that is not one of them, a detection item without boxes or with a box outside 0-100 % or inverted.
    """

    model_config = ConfigDict(strict=True, extra="allow")

    stage: int
    task_type: str
    qtype: str
    image_input_count: int
    question: str
    answer: str
    option_list: list[str] | None = None
    answer_list: list[str] | None = None
    target: str | None = None
    bbox_list: list[list[float]] | None = None

    @field_validator("stage")
    @classmethod
    def _stage(cls, v: int) -> int:
        if not 1 <= v <= 8:
            raise ValueError(f"stage {v} is not one of 1 to 8")
        return v

    @field_validator("qtype")
    @classmethod
    def _qtype(cls, v: str) -> str:
        if not QTYPE.fullmatch(v):
            raise ValueError(f"qtype {v!r} is not one of captioning, yes_no, single-choice, multi-choice, detection")
        return v

    @field_validator("image_input_count")
    @classmethod
    def _count(cls, v: int) -> int:
        if v < 0:
            raise ValueError(f"image_input_count {v} is negative")
        return v

    @field_validator("bbox_list")
    @classmethod
    def _boxes(cls, v: list[list[float]] | None) -> list[list[float]] | None:
        for box in v or []:
            if len(box) != 4:
                raise ValueError(f"box {box} is not [x1, y1, x2, y2]")
            x1, y1, x2, y2 = box
            if not (0 <= x1 <= x2 <= 100 and 0 <= y1 <= y2 <= 100):
                raise ValueError(f"box {box} is not [x1, y1, x2, y2] within 0-100 % of the image")
        return v

    @model_validator(mode="after")
    def _consistent(self) -> "ContentItem":
        types = STAGE_TASK_TYPES[self.stage]
        if not any(self.task_type == t or (self.stage == 8 and self.task_type.startswith(t)) for t in types):
            raise ValueError(f"task_type {self.task_type!r} is not one of stage {self.stage}'s: {', '.join(types)}")
        if CHOICE_QTYPES.fullmatch(self.qtype):
            if not self.option_list or not self.answer_list:
                raise ValueError(f"a {self.qtype} item needs option_list and answer_list")
            wrong = [a for a in self.answer_list if a not in self.option_list]
            if wrong:
                raise ValueError(f"answer_list {wrong} not in option_list")
        if self.qtype == "detection" and not self.bbox_list:
            raise ValueError("a detection item needs bbox_list")
        return self


class CxrtrekData(BaseModel):
    """``data_dict.cxrtrek_data``: the study, its prior (``ref_study_id``) and next (``pos_study_id``) studies
    (``""`` when there is none), its images and questions."""

    model_config = ConfigDict(strict=True, extra="allow")

    source: str
    pat_id: str
    study_id: str
    ref_study_id: str
    pos_study_id: str
    image: list[str]
    content: list[ContentItem]


class DataDict(BaseModel):
    """A sample's ``data_dict``."""

    model_config = ConfigDict(strict=True, extra="allow")

    cxrtrek_data: CxrtrekData


class Message(BaseModel):
    """One chat turn."""

    model_config = ConfigDict(strict=True, extra="allow")

    role: Literal["system", "user", "assistant"]
    content: str


class Sample(BaseModel):
    """One study's sample: the chat (a system turn, then a user and an assistant turn per question, in the
    order of ``content``), its image paths and its ``data_dict``.

    Raises (on construction): ``pydantic.ValidationError``: besides the fields' own faults, a chat whose turns
    are not system, then user / assistant pairs, one pair per content item.
    """

    model_config = ConfigDict(strict=True, extra="allow")

    messages: list[Message]
    image: list[str]
    data_dict: DataDict

    @model_validator(mode="after")
    def _turns(self) -> "Sample":
        content = self.data_dict.cxrtrek_data.content
        roles = [m.role for m in self.messages]
        expected = ["system"] + ["user", "assistant"] * len(content)
        if roles != expected:
            raise ValueError(f"messages: {len(roles)} turns ({', '.join(roles[:5])}...) where a system turn and a "
                             f"user / assistant pair per content item ({len(content)}) were expected")
        return self


@dataclass
class ReadResult:
    """What :func:`read_samples` read: the valid samples (with their index in the file) and one
    :class:`~graph.records.Rejection` per invalid sample (``record`` = ``sample <index>``, ``field`` = the
    dotted path of the first faulty field, e.g. ``data_dict.cxrtrek_data.content.3.stage``)."""

    samples: list[tuple[int, Sample]] = field(default_factory=list)
    rejections: list[Rejection] = field(default_factory=list)


def _field(error: ErrorDetails) -> str:
    return ".".join(str(part) for part in error["loc"]) or "(sample)"


def validate_samples(rows: list[Any], file: str = "<memory>") -> ReadResult:
    """Validate parsed samples: the good ones kept, each bad one rejected by index and field.

    Args:
        rows: the file's JSON array.
        file: the name the rejections carry.

    Returns:
        A :class:`ReadResult`.
    """
    out = ReadResult()
    for index, row in enumerate(rows):
        try:
            out.samples.append((index, Sample.model_validate(row)))
        except ValidationError as exc:
            first = exc.errors()[0]
            reason = first["msg"].removeprefix("Value error, ")
            more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
            out.rejections.append(Rejection(file, f"sample {index}", _field(first), reason + more))
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
    """The file's valid samples as written (plain JSON, in file order) and the rejections of the others.

    Raises:
        CxrtrekFormatError: the file cannot be read, is not JSON, or is not a JSON array.
    """
    rows = _load(path)
    result = validate_samples(rows, str(path))
    return [rows[i] for i, _ in result.samples], result.rejections


def dump_samples(samples: list[dict[str, Any]], path: Path) -> None:
    """Write samples as the demo file is written (a JSON array, indented 4, non-ASCII escaped)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(samples, indent=4) + "\n", encoding="utf-8")
