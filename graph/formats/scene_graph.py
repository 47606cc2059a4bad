"""Chest ImaGenome v1.0.0 scene graphs: one ``<dicom_id>_SceneGraph.json`` per frontal image.

Format (docs/formats.md §1.2-§1.5, from the dataset's own postprocessing code and its readers):
``objects[]`` holds the image's anatomical boxes; ``attributes[]`` holds one entry per region with
parallel per-phrase lists; labels are ``category|yes|label`` / ``category|no|label``;
``relationships[]`` holds comparison edges (``comparison|yes|improved|worsened|no change``) from a region
on this image (``subject_id``) to the same region on the prior image (``object_id``), both
``<dicom_id>_<bbox_name>``.

Validation (any failure rejects the whole file with an :class:`~graph.records.InputError` naming the
file, the record and the field, e.g. ``objects[3].x2``):

* Types: every field of §1.2-§1.5 has its type (see the models below). Text fields must be JSON
  strings, ids (``patient_id``, ``study_id``) an int or a non-empty string, label and cue lists lists
  of strings. Pixel coordinates and sizes are whole numbers: JSON integers, or floats with no
  fractional part (``52.0``, as writers that pass through float columns produce); fractional floats,
  strings and booleans are wrong types. ``relationship_contexts`` are numbers.
* Presence: ``image_id``, ``patient_id``, ``study_id``; per object ``bbox_name``, ``x1``, ``y1``, ``x2``,
  ``y2``; per attributes entry ``bbox_name``, ``attributes``, ``phrases``; per relationship
  ``relationship_names``, ``attributes``, ``bbox_name``, ``subject_id``, ``object_id``. Every other field
  may be absent (the release's readers use ``.get()``); absent and null mean the same, except that
  ``objects``, ``attributes`` and ``relationships`` must be lists when present.
* Unknown keys are allowed: the release's dynamic ``"<bbox_name>": true`` key of attributes entries and
  cxrkg's own extension keys (``attributes[].source``, ``objects[].finding_label``).
* Boxes: no negative coordinate or size (224 frame and original frame) and no reversed box
  (``x2 < x1`` or ``y2 < y1``, in either frame). A zero-area box (``x1 == x2``) is accepted.
  docs/formats.md §1.3 notes that the release holds negative coordinates: such files are rejected.
* Regions: the ``bbox_name`` of every object, attributes entry and relationship must be a vocabulary
  region (``graph.vocabulary.Vocabulary.regions``).
* Per-phrase lists of an attributes entry have one item per phrase; polarities are yes/no;
  comparison labels are known; a relationship's ``subject_id`` names this image.
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from operator import attrgetter
from pathlib import Path
from typing import Annotated, TypeVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, StrictInt, StrictStr, ValidationError, field_validator

from graph.formats.typed_json import TwinRejected, twin_decoder
from graph.records import (
    SOURCE_IMAGENOME,
    BoundingBoxRecord,
    ImageRecord,
    InputError,
    MentionRecord,
    ParsedFile,
    Rejection,
    StudyRecord,
    record_maker,
    stable_id,
)
from graph.vocabulary import FINDING_CATEGORIES, Vocabulary

SCENE_GRAPH_SUFFIX = "_SceneGraph.json"
_POLARITY = {"yes": "present", "no": "absent"}
_PLAIN_DATETIME = re.compile(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}", re.ASCII)  # _DATETIME_FORMATS[0], zero-padded
_DATETIME_FORMATS = ("%Y-%m-%d %H:%M:%S", "%Y-%m-%d %H:%M:%S.%f", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d")
_PER_PHRASE = ("attributes", "attributes_ids", "phrase_IDs", "sections", "severity_cues", "comparison_cues",
               "temporal_cues", "texture_cues")
_BOX_FIELDS = ("x1", "y1", "x2", "y2", "width", "height", "original_x1", "original_y1", "original_x2",
               "original_y2", "original_width", "original_height")
_box_fields = attrgetter("bbox_name", *_BOX_FIELDS, "finding_label")  # BoundingBoxRecord's order after its ids
_box_numbers = attrgetter(*_BOX_FIELDS)
_box_record = record_maker(BoundingBoxRecord)  # BoundingBoxRecord(*values), made faster: a file has dozens
_mention = record_maker(MentionRecord)  # MentionRecord(*values)
_BOX_ORDER = (("x1", "x2"), ("y1", "y2"), ("original_x1", "original_x2"), ("original_y1", "original_y2"))


def _whole_number(value: object) -> object:
    """A JSON integer, or a float without fractional part (as an int); anything else is a wrong type."""
    if isinstance(value, bool):  # a bool is not a number here
        raise ValueError("must be a whole number")
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if not value.is_integer():
            raise ValueError(f"{value} is not a whole number")
        return int(value)
    raise ValueError("must be a whole number")


def _number(value: object) -> object:
    """A JSON number (int or float, not a boolean or string)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError("must be a number")
    return value


WholeNumber = Annotated[int, BeforeValidator(_whole_number)]
Number = Annotated[float, BeforeValidator(_number)]
Labels = list[StrictStr]
PerPhraseLabels = list[list[StrictStr]]


class _Entry(BaseModel):
    model_config = ConfigDict(extra="allow")


class SceneObject(_Entry):
    """One ``objects[]`` entry: an anatomical box (docs/formats.md §1.3).

    ``x1 .. height`` are pixels in the 224 x 224 frame, ``original_*`` pixels in the original image;
    ``finding_label`` is a cxrkg extension key. Signs and order are checked after validation.
    """

    object_id: StrictStr | None = None
    bbox_name: StrictStr
    x1: WholeNumber
    y1: WholeNumber
    x2: WholeNumber
    y2: WholeNumber
    width: WholeNumber | None = None
    height: WholeNumber | None = None
    synsets: Labels | None = None
    name: StrictStr | None = None
    original_x1: WholeNumber | None = None
    original_y1: WholeNumber | None = None
    original_x2: WholeNumber | None = None
    original_y2: WholeNumber | None = None
    original_width: WholeNumber | None = None
    original_height: WholeNumber | None = None
    finding_label: StrictStr | None = None


class RegionAttributes(_Entry):
    """One ``attributes[]`` entry: a region's per-phrase lists (docs/formats.md §1.4).

    Every list typed ``PerPhraseLabels`` or ``Labels`` here except ``synsets`` has one item per phrase.
    """

    bbox_name: StrictStr
    synsets: Labels | None = None
    name: StrictStr | None = None
    attributes: PerPhraseLabels
    attributes_ids: PerPhraseLabels | None = None
    phrases: Labels
    phrase_IDs: Labels | None = None
    sections: Labels | None = None
    severity_cues: PerPhraseLabels | None = None
    comparison_cues: PerPhraseLabels | None = None
    temporal_cues: PerPhraseLabels | None = None
    texture_cues: PerPhraseLabels | None = None
    object_id: StrictStr | None = None
    # cxrkg extension (not in the Chest ImaGenome release): the dataset or labeler that stated this
    # entry's attributes, so one image can carry two sources (graph.datasets.nih.convert writes the NIH
    # text-mined and the Google adjudicated labels this way). Absent: chest_imagenome.
    source: StrictStr = SOURCE_IMAGENOME


class ComparisonRelationship(_Entry):
    """One ``relationships[]`` entry: a comparison edge to the prior image (docs/formats.md §1.5)."""

    relationship_id: StrictStr | None = None
    predicate: StrictStr | None = None
    synsets: Labels | None = None
    relationship_names: Labels
    relationship_contexts: list[Number] | None = None
    phrase: StrictStr | None = None
    attributes: Labels
    bbox_name: StrictStr
    subject_id: StrictStr
    object_id: StrictStr


class SceneGraph(_Entry):
    """A whole scene graph (docs/formats.md §1.2): ``image_id`` a non-empty str, ``patient_id`` and
    ``study_id`` an int or a non-empty str, ``StudyOrder`` a whole number (the 1-based rank; its value is
    not checked), ``StudyDateTime`` a str (its layout is checked by :func:`parse_datetime`)."""

    image_id: StrictStr
    viewpoint: StrictStr | None = None
    patient_id: StrictInt | StrictStr
    study_id: StrictInt | StrictStr
    gender: StrictStr | None = None
    age_decile: StrictStr | None = None
    reason_for_exam: StrictStr | None = None
    StudyOrder: WholeNumber | None = None
    StudyDateTime: StrictStr | None = None
    objects: list[SceneObject] = []
    attributes: list[RegionAttributes] = []
    relationships: list[ComparisonRelationship] = []

    @field_validator("image_id", "patient_id", "study_id")
    @classmethod
    def _not_blank(cls, v: int | str) -> int | str:
        if str(v).strip() == "":
            raise ValueError("must not be empty")
        return v


def parse_datetime(text: str) -> datetime:
    """Parse a Chest ImaGenome ``StudyDateTime`` (``"2150-03-04 10:22:31"``, optional fraction or ``T``).

    Raises:
        ValueError: none of the known layouts match.
    """
    if _PLAIN_DATETIME.fullmatch(text.strip()):  # the release's layout: read at once, same value as strptime's
        try:
            return datetime.fromisoformat(text.strip())
        except ValueError:  # no such day or time: strptime's loop below says so
            pass
    for fmt in _DATETIME_FORMATS:
        try:
            return datetime.strptime(text.strip(), fmt)
        except ValueError:
            continue
    raise ValueError(f"unrecognised datetime {text!r}")


def _split_label(label: str, file: str, record: str, where: str) -> tuple[str, str, str]:
    parts = label.split("|", 2)
    if len(parts) != 3:
        raise InputError(file, record, where, f"label {label!r} is not 'category|polarity|label'")
    return parts[0], parts[1], parts[2]


def _severity(cues: list[str], vocab: Vocabulary) -> tuple[str | None, int | None]:
    best: tuple[str | None, int | None] = (None, None)
    for cue in cues:
        word = cue.split("|", 2)[-1]
        score = vocab.severity_of(word)
        if score is not None and (best[1] is None or score > best[1]):
            best = (word, score)
    return best


def _validation_error(path: str, record: str, err: ValidationError) -> InputError:
    first = err.errors()[0]
    where = ""
    for part in first["loc"]:
        if isinstance(part, int):
            where += f"[{part}]"
        elif part not in ("int", "str"):  # union member tags, not fields
            where += f".{part}" if where else str(part)
    return InputError(path, record, where, f"{first['msg']} (got {type(first.get('input')).__name__})")


def _read(path: Path, file: str, record: str) -> SceneGraph:
    """The file's JSON, validated against :class:`SceneGraph` (types and presence only): decoded in one pass
    into its strict twin (:mod:`graph.formats.typed_json`, a third of the time of ``json.loads`` and
    pydantic), and only where that fails through ``json.loads`` and the model, whose errors name the field.
    The twin has the model's attributes, so the rest of parsing reads either."""
    data = path.read_bytes()
    try:
        sg = twin_decoder(SceneGraph).decode(data)
        if all(str(v).strip() for v in (sg.image_id, sg.patient_id, sg.study_id)):  # SceneGraph._not_blank
            return sg
    except TwinRejected:
        pass
    try:
        raw = json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(file, record, None, f"invalid JSON: {exc}") from exc
    if not isinstance(raw, dict):
        raise InputError(file, record, None, f"top level is {type(raw).__name__}, expected an object")
    try:
        return SceneGraph.model_validate(raw)
    except ValidationError as exc:
        raise _validation_error(file, record, exc) from exc


def _check_region(name: str, vocab: Vocabulary, file: str, record: str, where: str) -> None:
    if name not in vocab.regions:
        raise InputError(file, record, f"{where}.bbox_name", f"unknown region {name!r}")


def _check_box(obj: SceneObject, file: str, record: str, where: str) -> None:
    """Rejects a negative coordinate or size, and a reversed box (in the 224 or the original frame)."""
    x1, y1, x2, y2, *rest = values = _box_numbers(obj)
    ox1, oy1, ox2, oy2 = rest[2:6]
    if (min([v for v in values if v is not None]) >= 0 and x1 <= x2 and y1 <= y2  # the common case, at once
            and (ox1 is None or ox2 is None or ox1 <= ox2) and (oy1 is None or oy2 is None or oy1 <= oy2)):
        return
    for name in _BOX_FIELDS:
        value = getattr(obj, name)
        if value is not None and value < 0:
            raise InputError(file, record, f"{where}.{name}", f"negative {name} {value}")
    for low, high in _BOX_ORDER:
        a, b = getattr(obj, low), getattr(obj, high)
        if a is not None and b is not None and b < a:
            raise InputError(file, record, f"{where}.{high}", f"reversed box: {high} {b} < {low} {a}")


def _check_lengths(region: RegionAttributes, file: str, record: str, where: str) -> None:
    n = len(region.phrases)
    for name in _PER_PHRASE:
        values = getattr(region, name)
        if values is not None and len(values) != n:
            raise InputError(file, record, f"{where}.{name}", f"{len(values)} entries for {n} phrases")


def check_boxes(sg: SceneGraph, vocab: Vocabulary, file: str) -> list[InputError]:
    """The ``objects[]`` boxes that cannot be stored: an unknown region, a negative or a reversed box.

    Real Chest ImaGenome boxes include negative coordinates (docs/formats.md §1.3), so a bad box is
    rejected on its own (a record-level rejection naming ``objects[k].<field>``) and the rest of the
    scene graph loads.
    """
    return _boxes(sg, vocab, file)[1]


def _boxes(sg: SceneGraph, vocab: Vocabulary, file: str) -> tuple[tuple[BoundingBoxRecord, ...], list[InputError]]:
    """(the records of the boxes that can be stored, the faults of those that cannot: :func:`check_boxes`), in
    one pass: a box of a known region with every number present, none negative and no reversed side is
    taken at once; any other is checked by :func:`_check_region` and :func:`_check_box`, which name the fault."""
    regions, image = vocab.regions, sg.image_id
    boxes: list[BoundingBoxRecord] = []
    bad: list[InputError] = []
    for k, obj in enumerate(sg.objects):
        values = _box_fields(obj)  # bbox_name, x1, y1, x2, y2, width, height, original_x1 .. , finding_label
        nums = values[1:13]
        if not (values[0] in regions and None not in nums and min(nums) >= 0 and values[1] <= values[3]
                and values[2] <= values[4] and values[7] <= values[9] and values[8] <= values[10]):
            try:
                _check_region(obj.bbox_name, vocab, file, image, f"objects[{k}]")
                _check_box(obj, file, image, f"objects[{k}]")
            except InputError as exc:
                bad.append(exc)
                continue
        boxes.append(_box_record(f"{image}|{k}", image, *values))
    return tuple(boxes), bad


def check_scene_graph(sg: SceneGraph, vocab: Vocabulary, file: str) -> None:
    """What the types do not say, for the parts that reject the whole file: regions known to ``vocab``,
    per-phrase lists as long as ``phrases`` (docs/formats.md §1.4-§1.5). Boxes: :func:`check_boxes`.

    Raises:
        InputError: the first violation, with ``field`` like ``attributes[1].bbox_name``.
    """
    record = sg.image_id
    for k, region in enumerate(sg.attributes):
        _check_lengths(region, file, record, f"attributes[{k}]")
        _check_region(region.bbox_name, vocab, file, record, f"attributes[{k}]")
    for k, rel in enumerate(sg.relationships):
        _check_region(rel.bbox_name, vocab, file, record, f"relationships[{k}]")


def _study(sg: SceneGraph, file: str) -> StudyRecord:
    when = None
    if sg.StudyDateTime:
        try:
            when = parse_datetime(sg.StudyDateTime)
        except ValueError as exc:
            raise InputError(file, sg.image_id, "StudyDateTime", str(exc)) from exc
    return StudyRecord(str(sg.study_id), str(sg.patient_id), when, sg.image_id, gender=sg.gender,
                       age_decile=sg.age_decile, reason_for_exam=sg.reason_for_exam)


def _image(sg: SceneGraph, boxes: tuple[BoundingBoxRecord, ...]) -> ImageRecord:
    return ImageRecord(sg.image_id, str(sg.study_id), sg.viewpoint, study_order=sg.StudyOrder, objects=boxes)


_V = TypeVar("_V")
_D = TypeVar("_D")


def _per_phrase(values: list[_V] | None, i: int, default: _D) -> _V | _D:
    return values[i] if values is not None else default


def _phrase_mentions(sg: SceneGraph, region: RegionAttributes, where: str, vocab: Vocabulary,
                     out: ParsedFile) -> None:
    """Mentions of one attributes entry's finding labels, one per (phrase, finding)."""
    file, record, anatomy, source = out.path, sg.image_id, region.bbox_name, region.source
    study_id, findings = str(sg.study_id), vocab.findings
    for i, labels in enumerate(region.attributes):
        cues: _PhraseCues | None = None  # the phrase's own fields, read once it states a finding
        for label in labels:
            parts = label.split("|", 2)
            if len(parts) != 3:
                _split_label(label, file, record, f"{where}.attributes[{i}]")  # raises, naming the label
            category, polarity, name = parts
            if category not in FINDING_CATEGORIES:
                continue
            if polarity not in _POLARITY:
                raise InputError(file, record, f"{where}.attributes[{i}]", f"polarity {polarity!r} is not yes/no")
            if name not in findings:
                out.unmapped_terms.append(name)
                continue
            cues = cues or _phrase_cues(region, i, vocab)
            stated = polarity == "yes"
            out.mentions.append(_mention(  # every MentionRecord field, in its order
                stable_id(source, record, anatomy, name, i), study_id, anatomy, name, _POLARITY[polarity],
                cues[0] if stated else None, cues[1] if stated else None,  # severity, severity_score
                None, None, None,  # change, change_label, prior_image_id
                cues[2], source, file, record, cues[3], cues[4],  # evidence .. section, sentence_id
                cues[5], cues[6], cues[7],  # temporal, texture and comparison cues
                None, None, None, None,  # side, term, entity_group, temporal_group
            ))


#: a phrase's severity word and score, evidence, section, sentence id and temporal, texture and comparison cues
_PhraseCues = tuple[str | None, int | None, str, str | None, str | None, tuple[str, ...], tuple[str, ...],
                    tuple[str, ...]]


def _phrase_cues(region: RegionAttributes, i: int, vocab: Vocabulary) -> _PhraseCues:
    """The fields of phrase ``i`` of an attributes entry that each of its mentions carries."""
    severity, score = _severity(_per_phrase(region.severity_cues, i, []), vocab)
    return (severity, score, region.phrases[i].strip(), _per_phrase(region.sections, i, None),
            _per_phrase(region.phrase_IDs, i, None), _cues(region.temporal_cues, i), _cues(region.texture_cues, i),
            _cues(region.comparison_cues, i))


def _cues(values: list[list[str]] | None, i: int) -> tuple[str, ...]:
    return tuple(values[i]) if values is not None else ()


def _comparison_label(rel: ComparisonRelationship, where: str, vocab: Vocabulary, file: str,
                      record: str) -> str | None:
    """The relationship's one comparison label, or None when it states several (ambiguous)."""
    labels = set()
    for name in rel.relationship_names:
        category, polarity, label = _split_label(name, file, record, f"{where}.relationship_names")
        if category != "comparison" or polarity != "yes":
            continue
        if label not in vocab.comparison_labels:
            raise InputError(file, record, f"{where}.relationship_names", f"unknown comparison label {label!r}")
        labels.add(label)
    return labels.pop() if len(labels) == 1 else None


def _comparison_mentions(sg: SceneGraph, k: int, rel: ComparisonRelationship, vocab: Vocabulary,
                         out: ParsedFile) -> None:
    """Mentions stating one relationship's change, one per finding it applies to."""
    file, record, where = out.path, sg.image_id, f"relationships[{k}]"
    label = _comparison_label(rel, where, vocab, file, record)
    if label is None:
        out.ambiguous_comparisons += 1
        return
    current_image = rel.subject_id.split("_", 1)[0]
    if current_image != sg.image_id:
        raise InputError(file, record, f"{where}.subject_id", f"names image {current_image}, not this image")
    prior_image = rel.object_id.split("_", 1)[0]
    for attr in rel.attributes:
        category, _, finding = _split_label(attr, file, record, f"{where}.attributes")
        if category not in FINDING_CATEGORIES:
            continue
        if finding not in vocab.findings:
            out.unmapped_terms.append(finding)
            continue
        out.mentions.append(MentionRecord(
            mention_id=stable_id(SOURCE_IMAGENOME, sg.image_id, rel.bbox_name, finding, "comparison", k),
            study_id=str(sg.study_id), anatomy=rel.bbox_name, finding=finding, polarity=None,
            severity=None, severity_score=None, change=vocab.comparison_labels[label],
            change_label=f"comparison|yes|{label}", prior_image_id=prior_image,
            evidence=(rel.phrase or "").strip(), source=SOURCE_IMAGENOME, file=file, record=record,
        ))


def parse_scene_graph(path: Path, vocab: Vocabulary, display_path: str | None = None) -> ParsedFile:
    """Read one scene graph file into study, image (with its boxes) and mention records.

    A scene graph is one record (its image); any error rejects the whole file (see the module
    docstring for the rules), except a bad box (:func:`check_boxes`), which is rejected on its own. Findings whose label the vocabulary does not know are kept in
    ``unmapped_terms``; attribute categories that are not findings (nlp, texture, cue categories) are
    skipped as the dataset's own readers do. Relationships with more than one comparison label are
    counted as ambiguous and skipped (as in the published progression cohorts, docs/formats.md §1.5).

    Returns:
        a ParsedFile with one StudyRecord (gender, age decile, reason for exam), one ImageRecord (view,
        StudyOrder, one BoundingBoxRecord per ``objects[]`` entry) and the mentions (with sentence id
        and temporal / texture / comparison cues of their phrase).

    Raises:
        InputError: invalid or truncated JSON, a wrong type, a missing required field, an unknown
            region of an attributes entry or relationship, parallel lists of unequal length, a polarity other than
            yes/no, an unknown comparison label, a relationship from another image, a bad StudyDateTime.
    """
    file = display_path or str(path)
    sg = _read(path, file, path.name.removesuffix(SCENE_GRAPH_SUFFIX))
    check_scene_graph(sg, vocab, file)
    boxes, bad_boxes = _boxes(sg, vocab, file)
    out = ParsedFile(path=file, rejections=[Rejection.from_error(e) for e in bad_boxes])
    out.studies.append(_study(sg, file))
    out.images.append(_image(sg, boxes))
    for k, region in enumerate(sg.attributes):
        _phrase_mentions(sg, region, f"attributes[{k}]", vocab, out)
    for k, rel in enumerate(sg.relationships):
        _comparison_mentions(sg, k, rel, vocab, out)
    return out
