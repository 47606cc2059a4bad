"""A property added to graph/schema.yaml is stored by both loaders with no other change: a copy of the
schema with one more Study property of each declared type (``CXRKG_GRAPH_SCHEMA``), a study record that
carries them, and the transactional load (``GraphStore.write_batch``) and the bulk load (import files,
``neo4j-admin database import``) against the real local Neo4j store the same values."""

from __future__ import annotations

import dataclasses
from datetime import datetime

import pytest
import yaml

from graph.ingest.bulk import BulkSink
from graph.ingest.import_files import ImportFiles, import_arguments
from graph.records import ParsedFile, StudyRecord
from graph.schema import SCHEMA_ENV, SCHEMA_FILE, TYPES, graph_schema
from graph.store import Batch, reset_shared_store, shared_store
from graph.vocabulary import vocabulary

# one value of each declared type, as a parser's record would hold it, and as Neo4j gives it back
VALUES = {
    "string": ('a "quoted", text', 'a "quoted", text'),
    "long": (-7, -7),
    "double": (2.5, 2.5),
    "boolean": (False, False),
    "localdatetime": (datetime(2020, 1, 2, 3, 4, 5), datetime(2020, 1, 2, 3, 4, 5)),
    "string[]": (("x", "y z"), ["x", "y z"]),
    "double[]": ((0.5, 1.0), [0.5, 1.0]),
}


def _name(kind: str) -> str:
    return "extra_" + kind.replace("[]", "_list")


@pytest.fixture()
def extended_schema(tmp_path, monkeypatch):
    """A copy of the packaged schema with a Study property of each declared type, used by every writer."""
    assert set(VALUES) == set(TYPES)  # a type the schema gains is tested here too
    data = yaml.safe_load(SCHEMA_FILE.read_text(encoding="utf-8"))
    for kind in TYPES:
        data["nodes"]["Study"]["properties"][_name(kind)] = {"type": kind, "description": f"a test's {kind}"}
    path = tmp_path / "schema.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    monkeypatch.setenv(SCHEMA_ENV, str(path))
    assert _name("double[]") in graph_schema().loaded_properties("Study")


def _parsed() -> ParsedFile:
    """One study whose record carries the added properties (a parser's record class with the new fields)."""
    extended = dataclasses.make_dataclass("ExtendedStudyRecord", [(_name(k), object, None) for k in TYPES],
                                          bases=(StudyRecord,), frozen=True)
    record = extended("s-extra", "p-extra", datetime(2021, 5, 6, 7, 8), "r1",
                      **{_name(k): given for k, (given, _) in VALUES.items()})
    return ParsedFile("/data/extra.json", studies=[record])


def _stored_study() -> dict:
    props = shared_store().read("MATCH (s:Study {study_id: 's-extra'}) RETURN properties(s) AS p")[0]["p"]
    return {k: v.to_native() if hasattr(v, "to_native") else v for k, v in props.items()}


def test_a_property_of_each_type_added_to_the_schema_is_stored_by_both_loaders(store, extended_schema, tmp_path):
    from graph.runtime.server import LocalNeo4jServer
    from graph.settings import local_server_settings, neo4j_settings

    expected = {_name(k): stored for k, (_, stored) in VALUES.items()}
    store.write_batch(Batch(files=[_parsed()], link=frozenset({"p-extra"})))
    transactional = _stored_study()
    assert {k: transactional.get(k) for k in expected} == expected

    vocab = vocabulary()
    sink = BulkSink(ImportFiles(tmp_path / "import"), vocab, datetime(2026, 1, 1))
    sink.write_batch(Batch(files=[_parsed()], link=frozenset({"p-extra"})))
    sink.link_patients(set())
    files = sink.finish(vocab)
    header = (tmp_path / "import" / "nodes_Study.csv").read_text(encoding="utf-8").splitlines()[0]
    assert "extra_double_list:double[]" in header and "extra_localdatetime:localdatetime" in header
    server = LocalNeo4jServer(local_server_settings())
    reset_shared_store()
    server.stop()
    database = neo4j_settings().database or "neo4j"
    server.import_database(import_arguments(database, files.listing(), tmp_path / "import" / "import.report"),
                           tmp_path / "import", database)
    server.start(fresh=True)
    reset_shared_store()
    shared_store().ensure_schema(vocab)
    assert _stored_study() == transactional
