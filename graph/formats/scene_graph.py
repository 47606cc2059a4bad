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
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, StrictInt, StrictStr, ValidationError, field_validator

from graph.formats.boxes import box_records, check_region
from graph.formats.files import read_bytes
from graph.formats.typed_json import TwinRejected, twin_decoder
from graph.records import (
    BoundingBoxRecord,
    ImageRecord,
    InputError,
    MentionRecord,
    ParsedFile,
    Rejection,
    StudyRecord,
    joined_id,
    record_maker,
)
from graph.terms import STATED_SOURCES, Source, State
from graph.vocabulary import FINDING_CATEGORIES, Vocabulary

SCENE_GRAPH_SUFFIX = "_SceneGraph.json"
_POLARITY = {"yes": State.PRESENT, "no": State.ABSENT}
_PLAIN_DATETIME = re.compile(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}", re.ASCII)  # _DATETIME_FORMATS[0], zero-padded
_DATETIME_FORMATS = ("%Y-%m-%d %H:%M:%S", "%Y-%m-%d %H:%M:%S.%f", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d")
_PER_PHRASE = ("attributes", "attributes_ids", "phrase_IDs", "sections", "severity_cues", "comparison_cues",
               "temporal_cues", "texture_cues")
_per_phrase_lists = attrgetter(*_PER_PHRASE)
_mention = record_maker(MentionRecord)  # MentionRecord(*values), made faster: a file has a dozen
_study_record, _image_record = record_maker(StudyRecord), record_maker(ImageRecord)  # one each per file


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
    source: StrictStr = Source.CHEST_IMAGENOME


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


def _read(path: Path, file: str, record: str, data: bytes | None) -> SceneGraph:
    """The file's JSON, validated against :class:`SceneGraph` (types and presence only): ``data`` where given,
    else read in one system call (:func:`~graph.formats.files.read_bytes`), decoded in one pass into its
    strict twin (:mod:`graph.formats.typed_json`, a third of the time of ``json.loads`` and pydantic), and
    only where that fails through ``json.loads`` and the model, whose errors name the field. The twin has
    the model's attributes, so the rest of parsing reads either."""
    if data is None:
        data = read_bytes(path)
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


def _check_lengths(region: RegionAttributes, file: str, record: str, where: str) -> None:
    n = len(region.phrases)
    for values in _per_phrase_lists(region):
        if values is not None and len(values) != n:  # the first such list is named below
            for name, values in zip(_PER_PHRASE, _per_phrase_lists(region), strict=True):
                if values is not None and len(values) != n:
                    raise InputError(file, record, f"{where}.{name}", f"{len(values)} entries for {n} phrases")


def check_boxes(sg: SceneGraph, vocab: Vocabulary, file: str) -> list[InputError]:
    """The ``objects[]`` boxes that cannot be stored: an unknown region, a negative or a reversed box
    (:func:`graph.formats.boxes.box_records`).

    Real Chest ImaGenome boxes include negative coordinates (docs/formats.md §1.3), so a bad box is
    rejected on its own (a record-level rejection naming ``objects[k].<field>``) and the rest of the
    scene graph loads.
    """
    return box_records(sg.objects, sg.image_id, vocab.regions, file)[1]


def check_scene_graph(sg: SceneGraph, vocab: Vocabulary, file: str) -> None:
    """What the types do not say, for the parts that reject the whole file: regions known to ``vocab``,
    per-phrase lists as long as ``phrases`` (docs/formats.md §1.4-§1.5). Boxes: :func:`check_boxes`.

    Raises:
        InputError: the first violation, with ``field`` like ``attributes[1].bbox_name``.
    """
    record, regions = sg.image_id, vocab.regions
    for k, region in enumerate(sg.attributes):
        _check_lengths(region, file, record, f"attributes[{k}]")
        check_region(region.bbox_name, regions, file, record, f"attributes[{k}]")
    for k, rel in enumerate(sg.relationships):
        check_region(rel.bbox_name, regions, file, record, f"relationships[{k}]")


def _study(sg: SceneGraph, file: str) -> StudyRecord:
    when = None
    if sg.StudyDateTime:
        try:
            when = parse_datetime(sg.StudyDateTime)
        except ValueError as exc:
            raise InputError(file, sg.image_id, "StudyDateTime", str(exc)) from exc
    return _study_record(str(sg.study_id), str(sg.patient_id), when, sg.image_id, sg.gender, sg.age_decile,
                         sg.reason_for_exam)


def _image(sg: SceneGraph, boxes: tuple[BoundingBoxRecord, ...]) -> ImageRecord:
    return _image_record(sg.image_id, str(sg.study_id), sg.viewpoint, sg.StudyOrder, boxes, None, None)


def _phrase_mentions(sg: SceneGraph, region: RegionAttributes, where: str, vocab: Vocabulary,
                     out: ParsedFile) -> None:
    """Mentions of one attributes entry's finding labels, one per (phrase, finding)."""
    file, record, anatomy, source = out.path, sg.image_id, region.bbox_name, region.source
    if source not in STATED_SOURCES:  # the graph schema lists the sources a mention may name
        raise InputError(file, record, f"{where}.source",
                         f"source {source!r} is not one of {', '.join(STATED_SOURCES)} (graph/terms.py)")
    study_id, known = str(sg.study_id), vocab.memo("scene graph label")  # label -> what _label_use says
    id_prefix = f"{source}|{record}|{anatomy}|"  # a mention's id: stable_id(source, record, anatomy, name, i)
    for i, labels in enumerate(region.attributes):
        cues: _PhraseCues | None = None  # the phrase's own fields, read once it states a finding
        for label in labels:
            use = known.get(label) or _label_use(label, vocab, file, record, f"{where}.attributes[{i}]")
            if use[0] is None:  # not a finding category
                continue
            polarity, name = use
            if name is False:
                out.unmapped_terms.append(label.split("|", 2)[2])
                continue
            cues = cues or _phrase_cues(region, i, vocab)
            stated = polarity == State.PRESENT
            out.mentions.append(_mention(  # every MentionRecord field, in its order
                joined_id(f"{id_prefix}{name}|{i}"), study_id, anatomy, name, polarity,
                cues[0] if stated else None, cues[1] if stated else None,  # severity, severity_score
                None, None, None,  # change, change_label, prior_image_id
                cues[2], source, file, record, cues[3], cues[4],  # evidence .. section, sentence_id
                cues[5], cues[6], cues[7],  # temporal, texture and comparison cues
                None, None, None, None,  # side, term, entity_group, temporal_group
            ))


def _label_use(label: str, vocab: Vocabulary, file: str, record: str, where: str) -> tuple[Any, Any]:
    """What an ``attributes`` label of a phrase gives: (None, None) for a category that is no finding (nlp,
    texture, cues), (polarity, False) for a finding the vocabulary does not know, else (polarity, finding);
    remembered per label in ``vocab``'s memo "scene graph label" (a release repeats a few hundred labels).

    Raises:
        InputError: not ``category|polarity|label``, or a finding category's polarity other than yes/no (not
            remembered: each occurrence raises).
    """
    category, polarity, name = _split_label(label, file, record, where)
    if category not in FINDING_CATEGORIES:
        use: tuple[Any, Any] = (None, None)
    elif polarity not in _POLARITY:
        raise InputError(file, record, where, f"polarity {polarity!r} is not yes/no")
    else:
        use = (_POLARITY[polarity], name if name in vocab.findings else False)
    vocab.memo("scene graph label")[label] = use
    return use


#: a phrase's severity word and score, evidence, section, sentence id and temporal, texture and comparison cues
_PhraseCues = tuple[str | None, int | None, str, str | None, str | None, tuple[str, ...], tuple[str, ...],
                    tuple[str, ...]]


def _phrase_cues(region: RegionAttributes, i: int, vocab: Vocabulary) -> _PhraseCues:
    """The fields of phrase ``i`` of an attributes entry that each of its mentions carries."""
    severity_cues, sections, ids = region.severity_cues, region.sections, region.phrase_IDs
    temporal, texture, comparison = region.temporal_cues, region.texture_cues, region.comparison_cues
    severity, score = _severity(severity_cues[i], vocab) if severity_cues is not None and severity_cues[i] else \
        (None, None)
    return (severity, score, region.phrases[i].strip(), None if sections is None else sections[i],
            None if ids is None else ids[i], () if temporal is None else tuple(temporal[i]),
            () if texture is None else tuple(texture[i]), () if comparison is None else tuple(comparison[i]))


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
    study_id, change, change_label = str(sg.study_id), vocab.comparison_labels[label], f"comparison|yes|{label}"
    evidence = (rel.phrase or "").strip()
    for attr in rel.attributes:
        category, _, finding = _split_label(attr, file, record, f"{where}.attributes")
        if category not in FINDING_CATEGORIES:
            continue
        if finding not in vocab.findings:
            out.unmapped_terms.append(finding)
            continue
        out.mentions.append(_mention(  # every MentionRecord field, in its order
            joined_id(f"{Source.CHEST_IMAGENOME}|{record}|{rel.bbox_name}|{finding}|comparison|{k}"), study_id,
            rel.bbox_name, finding, None, None, None,  # .. polarity, severity, severity_score
            change, change_label, prior_image, evidence, Source.CHEST_IMAGENOME, file, record,  # .. record
            None, None, (), (), (), None, None, None, None,  # section .. temporal_group: none
        ))


def parse_scene_graph(path: Path, vocab: Vocabulary, display_path: str | None = None,
                      data: bytes | None = None) -> ParsedFile:
    """Read one scene graph file into study, image (with its boxes) and mention records.

    A scene graph is one record (its image); any error rejects the whole file (see the module
    docstring for the rules), except a bad box (:func:`check_boxes`), which is rejected on its own. Findings whose label the vocabulary does not know are kept in
    ``unmapped_terms``; attribute categories that are not findings (nlp, texture, cue categories) are
    skipped as the dataset's own readers do. Relationships with more than one comparison label are
    counted as ambiguous and skipped (as in the published progression cohorts, docs/formats.md §1.5).

    ``data`` is the file's bytes when the caller has read them already (the file is not read again).

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
    sg = _read(path, file, path.name.removesuffix(SCENE_GRAPH_SUFFIX), data)
    check_scene_graph(sg, vocab, file)
    boxes, bad_boxes = box_records(sg.objects, sg.image_id, vocab.regions, file)
    out = ParsedFile(path=file, rejections=[Rejection.from_error(e) for e in bad_boxes])
    out.studies.append(_study(sg, file))
    out.images.append(_image(sg, boxes))
    for k, region in enumerate(sg.attributes):
        _phrase_mentions(sg, region, f"attributes[{k}]", vocab, out)
    for k, rel in enumerate(sg.relationships):
        _comparison_mentions(sg, k, rel, vocab, out)
    return out
