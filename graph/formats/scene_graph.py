"""Chest ImaGenome v1.0.0 scene graphs: one ``<dicom_id>_SceneGraph.json`` per frontal image.

Format (docs/formats.md §1.2-§1.5, from the dataset's own postprocessing code and its readers):
``attributes[]`` holds one entry per region with parallel per-phrase lists; labels are
``category|yes|label`` / ``category|no|label``; ``relationships[]`` holds comparison edges
(``comparison|yes|improved|worsened|no change``) from a region on this image (``subject_id``) to the same
region on the prior image (``object_id``), both ``<dicom_id>_<bbox_name>``.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from graph.records import (
    SOURCE_IMAGENOME,
    ImageRecord,
    InputError,
    MentionRecord,
    ParsedFile,
    StudyRecord,
    stable_id,
)
from graph.vocabulary import FINDING_CATEGORIES, Vocabulary

SCENE_GRAPH_SUFFIX = "_SceneGraph.json"
_POLARITY = {"yes": "present", "no": "absent"}
_DATETIME_FORMATS = ("%Y-%m-%d %H:%M:%S", "%Y-%m-%d %H:%M:%S.%f", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d")


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="allow")


def _id_text(value: int | str) -> str:
    return str(value)


class RegionAttributes(_Lenient):
    bbox_name: str
    attributes: list[list[str]]
    phrases: list[str]
    sections: list[str] | None = None
    severity_cues: list[list[str]] | None = None
    comparison_cues: list[list[str]] | None = None
    temporal_cues: list[list[str]] | None = None
    texture_cues: list[list[str]] | None = None


class ComparisonRelationship(_Lenient):
    relationship_names: list[str]
    attributes: list[str]
    bbox_name: str
    subject_id: str
    object_id: str
    phrase: str | None = None


class SceneGraph(_Lenient):
    """The fields of a scene graph that cxrkg reads; others are kept by ``extra="allow"`` and ignored."""

    image_id: str
    patient_id: int | str
    study_id: int | str
    viewpoint: str | None = None
    StudyDateTime: str | None = None
    StudyOrder: int | None = None
    attributes: list[RegionAttributes] = []
    relationships: list[ComparisonRelationship] = []

    @field_validator("patient_id", "study_id")
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


def parse_scene_graph(path: Path, vocab: Vocabulary, display_path: str | None = None) -> ParsedFile:
    """Read one scene graph file into study, image and mention records.

    A scene graph is one record (its image); any error rejects the whole file.
    Findings whose label the vocabulary does not know are kept in ``unmapped_terms``; attribute
    categories that are not findings (nlp, texture, cue categories) are skipped as the dataset's own
    readers do. Relationships with more than one comparison label are counted as ambiguous and skipped
    (as in the published progression cohorts, docs/formats.md §1.5).

    Raises:
        InputError: invalid or truncated JSON, wrong types, parallel lists of unequal length, a polarity
            other than yes/no, an unknown comparison label, a relationship from another image.
    """
    file = display_path or str(path)
    record = path.name.removesuffix(SCENE_GRAPH_SUFFIX)
    try:
        raw = json.loads(path.read_bytes())
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(file, record, None, f"invalid JSON: {exc}") from exc
    if not isinstance(raw, dict):
        raise InputError(file, record, None, f"top level is {type(raw).__name__}, expected an object")
    try:
        sg = SceneGraph.model_validate(raw)
    except ValidationError as exc:
        raise _validation_error(file, record, exc) from exc

    record = sg.image_id
    study_id, patient_id = _id_text(sg.study_id), _id_text(sg.patient_id)
    when = None
    if sg.StudyDateTime:
        try:
            when = parse_datetime(sg.StudyDateTime)
        except ValueError as exc:
            raise InputError(file, record, "StudyDateTime", str(exc)) from exc

    out = ParsedFile(path=file)
    out.studies.append(StudyRecord(study_id, patient_id, when, record))
    out.images.append(ImageRecord(sg.image_id, study_id, sg.viewpoint))

    for r_ix, region in enumerate(sg.attributes):
        where = f"attributes[{r_ix}]"
        n = len(region.phrases)
        for name in ("attributes", "sections", "severity_cues", "comparison_cues", "temporal_cues", "texture_cues"):
            values = getattr(region, name)
            if values is not None and len(values) != n:
                raise InputError(file, record, f"{where}.{name}", f"{len(values)} entries for {n} phrases")
        anatomy = region.bbox_name
        if anatomy not in vocab.regions:
            out.unmapped_terms.append(f"region:{anatomy}")
            continue
        for i, labels in enumerate(region.attributes):
            severity, score = _severity(region.severity_cues[i] if region.severity_cues else [], vocab)
            section = region.sections[i] if region.sections else None
            for label in labels:
                category, polarity, name = _split_label(label, file, record, f"{where}.attributes[{i}]")
                if category not in FINDING_CATEGORIES:
                    continue
                if polarity not in _POLARITY:
                    raise InputError(file, record, f"{where}.attributes[{i}]", f"polarity {polarity!r} is not yes/no")
                if name not in vocab.findings:
                    out.unmapped_terms.append(name)
                    continue
                out.mentions.append(
                    MentionRecord(
                        mention_id=stable_id(SOURCE_IMAGENOME, sg.image_id, anatomy, name, i),
                        study_id=study_id, anatomy=anatomy, finding=name, polarity=_POLARITY[polarity],
                        severity=severity if polarity == "yes" else None,
                        severity_score=score if polarity == "yes" else None,
                        change=None, change_label=None, prior_image_id=None,
                        evidence=region.phrases[i].strip(), source=SOURCE_IMAGENOME, file=file,
                        record=record, section=section,
                    )
                )

    for k, rel in enumerate(sg.relationships):
        where = f"relationships[{k}]"
        labels = set()
        for name in rel.relationship_names:
            category, polarity, label = _split_label(name, file, record, f"{where}.relationship_names")
            if category != "comparison" or polarity != "yes":
                continue
            if label not in vocab.comparison_labels:
                raise InputError(file, record, f"{where}.relationship_names", f"unknown comparison label {label!r}")
            labels.add(label)
        if len(labels) != 1:
            out.ambiguous_comparisons += 1
            continue
        label = labels.pop()
        current_image = rel.subject_id.split("_", 1)[0]
        if current_image != sg.image_id:
            raise InputError(file, record, f"{where}.subject_id", f"names image {current_image}, not this image")
        prior_image = rel.object_id.split("_", 1)[0]
        if rel.bbox_name not in vocab.regions:
            out.unmapped_terms.append(f"region:{rel.bbox_name}")
            continue
        for attr in rel.attributes:
            category, _, finding = _split_label(attr, file, record, f"{where}.attributes")
            if category not in FINDING_CATEGORIES:
                continue
            if finding not in vocab.findings:
                out.unmapped_terms.append(finding)
                continue
            out.mentions.append(
                MentionRecord(
                    mention_id=stable_id(SOURCE_IMAGENOME, sg.image_id, rel.bbox_name, finding, "comparison", k),
                    study_id=study_id, anatomy=rel.bbox_name, finding=finding, polarity=None,
                    severity=None, severity_score=None, change=vocab.comparison_labels[label],
                    change_label=f"comparison|yes|{label}", prior_image_id=prior_image,
                    evidence=(rel.phrase or "").strip(), source=SOURCE_IMAGENOME, file=file, record=record,
                )
            )
    return out
