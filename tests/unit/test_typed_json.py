"""The scene graph's strict twin (graph.formats.typed_json) accepts only what the pydantic model accepts, with
the same values; what it rejects the model still reads or rejects with its own message."""

from __future__ import annotations

import json

import msgspec
import pytest
from pydantic import BaseModel, ValidationError

from graph.formats.scene_graph import SceneGraph
from graph.formats.typed_json import TwinRejected, twin_decoder

BOX = {"bbox_name": "left lung", "x1": 1, "y1": 2, "x2": 30, "y2": 40, "width": 29, "height": 38}
GRAPH = {"image_id": "i1", "patient_id": 10000032, "study_id": "s1", "StudyOrder": 2, "viewpoint": "PA",
         "objects": [BOX], "attributes": [{"bbox_name": "left lung", "attributes": [["anatomicalfinding|yes|lung opacity"]],
                                          "phrases": ["Left opacity."], "left lung": True}],
         "relationships": [{"relationship_names": ["comparison|yes|worsened"], "attributes": [], "bbox_name": "left lung",
                            "subject_id": "i1_left lung", "object_id": "i0_left lung", "relationship_contexts": [1, 0.5]}],
         "extension": {"any": "thing"}}


def _variant(path: tuple, value) -> bytes:
    doc = json.loads(json.dumps(GRAPH))
    target = doc
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return json.dumps(doc).encode()


CASES = [
    ("valid", json.dumps(GRAPH).encode()),
    ("whole float", _variant(("objects", 0, "x1"), 52.0)),
    ("fractional float", _variant(("objects", 0, "x1"), 52.5)),
    ("bool for an int", _variant(("objects", 0, "y1"), True)),
    ("text for an int", _variant(("objects", 0, "x2"), "12")),
    ("int for a text", _variant(("image_id",), 7)),
    ("null list", _variant(("objects",), None)),
    ("null source", _variant(("attributes", 0, "source"), None)),
    ("missing required", json.dumps({k: v for k, v in GRAPH.items() if k != "study_id"}).encode()),
    ("nan", json.dumps(GRAPH).replace('"StudyOrder": 2', '"StudyOrder": NaN').encode()),
    ("top level list", b"[1, 2]"),
    ("truncated", json.dumps(GRAPH).encode()[:50]),
    ("bool for a number", _variant(("relationships", 0, "relationship_contexts"), [True])),
    ("latin-1", '{"image_id": "caf\xe9"}'.encode("latin-1")),  # not UTF-8: msgspec raises UnicodeDecodeError
    ("utf-16", json.dumps(GRAPH).encode("utf-16")),
    ("empty", b""),
]


@pytest.mark.parametrize("name, data", CASES, ids=[c[0] for c in CASES])
def test_the_twin_accepts_only_what_the_model_accepts_with_the_same_values(name, data):
    try:
        twin = twin_decoder(SceneGraph).decode(data)
    except TwinRejected:
        twin = None
    try:
        model = SceneGraph.model_validate(json.loads(data))
    except (ValidationError, ValueError):
        model = None
    if twin is not None:
        assert model is not None, f"{name}: the twin took what the model rejects"
        assert msgspec.to_builtins(twin) == _fields(model)
    assert (twin is not None) == (name == "valid")
    # the whole float and UTF-16 (json.loads detects it) go to the model, which takes them as before
    assert (model is not None) == (name in ("valid", "whole float", "utf-16"))


def _fields(value):
    """A model's declared fields (its extra keys left out), recursively, as plain values."""
    if isinstance(value, BaseModel):
        return {name: _fields(getattr(value, name)) for name in type(value).model_fields}
    if isinstance(value, list):
        return [_fields(v) for v in value]
    return value
