"""The one declared graph schema (graph/schema.yaml) and what is produced from it: the store's constraints
and indexes, the bulk import headers, the loaders' row checks, the parsed records' fields and the README's
model table. A property removed from the schema changes each of them, and rows that still carry it fail."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import yaml

import graph.longitudinal.derived_rows as derived_rows_module
from graph.ingest.import_files import ImportFileError, ImportFiles, node_columns, relationship_columns
from graph.longitudinal.derived_rows import batch_rows, mention_props
from graph.records import BoundingBoxRecord, ImageRecord, MentionRecord, ParsedFile, ReportRecord, StudyRecord, file_key
from graph.schema import SCHEMA_FILE, SchemaError, graph_schema, load_schema, markdown
from graph.store.statements import NODE_KEYS, schema_statements

ROOT = Path(__file__).resolve().parents[2]
BEGIN, END = "<!-- graph-schema:begin -->\n", "<!-- graph-schema:end -->"


def _edited(tmp_path: Path, edit) -> Path:
    """A copy of the packaged schema file with ``edit`` applied to its data."""
    data = yaml.safe_load(SCHEMA_FILE.read_text(encoding="utf-8"))
    edit(data)
    path = tmp_path / "schema.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def _mention(**changes) -> MentionRecord:
    fields = dict(mention_id="m1", study_id="s1", anatomy="left lung", finding="pleural effusion",
                  polarity="present", severity=None, severity_score=None, change=None, change_label=None,
                  prior_image_id=None, evidence="left effusion", source="radgraph", file="a.json", record="r1",
                  side="left")
    return MentionRecord(**{**fields, **changes})


def test_the_store_creates_a_constraint_for_every_label_key_and_every_declared_index():
    schema = graph_schema()
    statements = schema_statements()
    for label, node in schema.nodes.items():
        assert (f"CREATE CONSTRAINT {node.constraint} IF NOT EXISTS FOR (n:{label}) REQUIRE n.{node.key} IS UNIQUE"
                in statements)
    assert "CREATE INDEX observation_onset IF NOT EXISTS FOR (n:Observation) ON (n.finding, n.onset_datetime)" \
        in statements
    assert "CREATE INDEX progression_change IF NOT EXISTS FOR ()-[r:PROGRESSION]-() ON (r.change)" in statements
    assert len(statements) == len(schema.nodes) + len(schema.node_indexes()) + len(schema.relationship_indexes())
    assert NODE_KEYS == {label: node.key for label, node in schema.nodes.items()}


def test_import_headers_follow_the_declared_properties_in_order():
    assert [h for h, _, _ in node_columns("Study")] == [
        "study_id:ID(Study)", "patient_id:string", "study_datetime:localdatetime", "age_decile:string",
        "reason_for_exam:string", "study_order:long"]
    assert [h for h, _, _ in relationship_columns("PRIOR", "Study", "Study")] == [
        ":START_ID(Study)", ":END_ID(Study)", "days:long"]
    # properties another step writes after a load are not columns
    assert [h for h, _, _ in node_columns("Anatomy")] == ["name:ID(Anatomy)"]
    assert "probability:double" not in [h for h, _, _ in relationship_columns("PROGRESSION", "Observation",
                                                                              "Observation")]


def test_parsed_records_carry_every_property_the_schema_declares_for_them():
    """Each record class holds the stored properties of its label (besides what the loader adds: the file,
    the mention's file key); a property added to or removed from one side only fails here."""
    def fields(cls) -> set[str]:
        return {f.name for f in dataclasses.fields(cls)}

    def stored(label: str) -> set[str]:
        return set(graph_schema().row_keys(label))

    assert fields(BoundingBoxRecord) == stored("BoundingBox")
    assert fields(ImageRecord) - {"objects"} | {"file"} == stored("Image")
    assert fields(ReportRecord) | {"file"} == stored("Report")
    assert fields(MentionRecord) - {"study_id", "anatomy", "finding"} | {"file_key"} == stored("Mention")
    # the study's order is cxrkg's rank by date; the gender is the patient's
    assert fields(StudyRecord) - {"record", "gender"} | {"study_order"} == stored("Study")
    assert stored("Patient") == {"patient_id", "gender"}


def test_rows_are_checked_against_the_schema():
    schema = graph_schema()
    schema.check_row("Mention", mention_props(_mention()))
    with pytest.raises(SchemaError, match=r"Mention mention_id 'm1': property 'colour' is not in the graph schema"):
        schema.check_row("Mention", {**mention_props(_mention()), "colour": "red"})
    with pytest.raises(SchemaError, match=r"property 'severity_score' must be long, got '2'"):
        schema.check_row("Mention", {**mention_props(_mention()), "severity_score": "2"})
    with pytest.raises(SchemaError, match=r"no value for its key 'mention_id'"):
        schema.check_row("Mention", {"polarity": "present"})
    with pytest.raises(SchemaError, match=r"'Colour' is neither a label nor a relationship type"):
        schema.check_row("Colour", {})


def test_removing_a_property_changes_headers_and_row_checks_and_fails_rows_that_still_hold_it(tmp_path,
                                                                                             monkeypatch):
    reduced = load_schema(_edited(tmp_path, lambda d: d["nodes"]["Mention"]["properties"].pop("side")))
    assert "side:string" in [h for h, _, _ in node_columns("Mention")]
    assert "side:string" not in [h for h, _, _ in node_columns("Mention", reduced)]
    assert "side" not in reduced.row_keys("Mention")
    # the bulk writer's columns and both loaders' rows now refuse a mention that states a side
    files = ImportFiles(tmp_path / "files", schema=reduced)
    with pytest.raises(ImportFileError, match=r"no column for \['side'\]"):
        files.node_file("Mention").write(mention_props(_mention()))
    files.close()
    monkeypatch.setattr(derived_rows_module, "graph_schema", lambda: reduced)
    parsed = ParsedFile("a.json", studies=[StudyRecord("s1", "p1", None, "r1")], mentions=[_mention()])
    with pytest.raises(SchemaError, match=r"Mention mention_id 'm1': property 'side' is not in the graph schema"):
        batch_rows([parsed])
    assert batch_rows([ParsedFile("a.json", mentions=[_mention(side=None)])])[4]["s1|left lung|pleural effusion"]


def test_removing_an_indexed_property_or_a_key_is_refused_and_removing_an_index_drops_its_statement(tmp_path):
    def drop_file_key(d):
        d["nodes"]["Mention"]["properties"].pop("file_key")

    with pytest.raises(SchemaError, match=r"nodes\.Mention.*index 'mention_file_key' is on undeclared properties"):
        load_schema(_edited(tmp_path, drop_file_key))

    def drop_index(d):
        drop_file_key(d)
        d["nodes"]["Mention"].pop("indexes")

    reduced = load_schema(_edited(tmp_path, drop_index))
    assert not any("mention_file_key" in s for s in schema_statements(reduced))
    assert any("mention_file_key" in s for s in schema_statements())
    with pytest.raises(SchemaError, match=r"nodes\.SourceFile\.key: Field required"):
        load_schema(_edited(tmp_path, lambda d: d["nodes"]["SourceFile"].pop("key")))
    with pytest.raises(SchemaError, match=r"HAS_MENTION joins undeclared labels \['Mention'\]"):
        load_schema(_edited(tmp_path, lambda d: d["nodes"].pop("Mention")))
    with pytest.raises(SchemaError, match=r"type 'text' is not one of"):
        load_schema(_edited(tmp_path, lambda d: d["nodes"]["Patient"]["properties"].update(gender={"type": "text", "description": "sex"})))


def test_a_mention_file_key_is_what_the_schema_types_it():
    row = mention_props(_mention())
    assert row["file_key"] == file_key("a.json")
    graph_schema().check_row("Mention", row)


def test_the_schema_page_s_model_table_is_the_rendered_schema():
    page = (ROOT / "docs" / "schema.md").read_text(encoding="utf-8")
    assert page.count(BEGIN) == 1 and page.count(END) == 1, "docs/schema.md lacks the graph-schema markers"
    block = page[page.index(BEGIN) + len(BEGIN):page.index(END)]
    assert block == markdown(), ("docs/schema.md's graph model is not the rendered graph/schema.yaml: replace the "
                                 "block between the markers with graph.schema.markdown()")


def test_the_rendered_table_follows_the_schema(tmp_path):
    reduced = load_schema(_edited(tmp_path, lambda d: d["nodes"]["Mention"]["properties"].pop("side")))
    def mention_row(text: str) -> str:
        return next(line for line in text.splitlines() if line.startswith("| **Mention** |"))

    assert "`side` string" in mention_row(markdown()) and "`side` string" not in mention_row(markdown(reduced))
    assert ("| **PROGRESSION** | Observation -> Observation, StudyFinding -> StudyFinding, "
            "GeometryObservation -> GeometryObservation |") in markdown()
    assert "  Observation -->|HAS_MENTION| Mention" in markdown()


def test_every_property_a_statement_writes_is_declared_bookkeeping_included():
    """The transactional statements name no property outside graph/schema.yaml: each ``x.prop = ...`` and
    ``REMOVE x.prop`` of every statement the store writes with is a declared property of some label or
    type (the model's, written later, or bookkeeping such as ``_created`` and ``_lock``)."""
    import re

    from graph.store import gnn_statements, statements

    texts = [v for v in vars(statements).values() if isinstance(v, str)]
    texts += [v for v in vars(gnn_statements).values() if isinstance(v, str)]
    texts += [statements.merge_studies_statement(), statements.merge_source_files_statement(),
              statements.write_observation_states_statement(), statements.create_observations_statement(),
              statements.write_study_findings_statement(), statements.write_episodes_statement(),
              statements.write_study_order_statement(), statements.merge_vocabulary_statement("Anatomy"),
              statements.merge_vocabulary_statement("Finding"),
              statements.progressions_statement("Observation", "observation_id")]
    texts += [f(merge) for f in (statements.images_statement, statements.bboxes_statement,
                                 statements.reports_statement, statements.observations_statement)
              for merge in (False, True)]
    written = {m for text in texts for m in re.findall(r"\b[a-z]+\.(_?[a-z][a-z0-9_]*)\s*=[^=~]", text)}
    written |= {m for text in texts for m in re.findall(r"REMOVE [a-z]+\.(_?[a-z][a-z0-9_]*)", text)}
    schema = graph_schema()
    declared = set().union(*(schema.declared(n) for n in [*schema.nodes, *schema.relationships]))
    assert {"_created", "_lock", "link_pending", "study_order"} <= written
    assert written <= declared, sorted(written - declared)


def test_the_enumerated_properties_list_the_words_the_code_writes():
    from graph.ingest.plan import LUNGUAGE, RADGRAPH, SCENE_GRAPH
    from graph.longitudinal.events import NO_LONGER_MENTIONED, PERSISTENT, RULES
    from graph.measurements import measure_image, trends
    from graph.measurements.boxes import (DUPLICATE, MISSING, NO_ORIGINAL, PAST_IMAGE, REVERSED, SIZE_UNKNOWN,
                                          UNDEFINED, ZERO_AREA)
    from graph.measurements.measure import (COMPLETE, CUT_OFF, EXCLUDED, INCLUDED, MIXED, NO, TASKS, YES)
    from graph.records import ImageRecord
    from graph.terms import POLARITIES, PROGRESSION_CLASSES, STATED_SOURCES, Change, Source, State
    from graph.vocabulary import FINDING_CATEGORIES

    schema = graph_schema()
    mention, observation, edge = schema.enumerated("Mention"), schema.enumerated("Observation"), \
        schema.enumerated("PROGRESSION")
    assert mention["polarity"] == observation["polarity"] == set(POLARITIES)
    assert observation["state"] == schema.enumerated("StudyFinding")["state"] == edge["prior_state"] == set(State)
    assert mention["source"] == observation["sources"] == schema.enumerated("Episode")["sources"] \
        == set(STATED_SOURCES)
    assert edge["source"] == set(Source) and observation["onset_sources"] == {*STATED_SOURCES, Source.PRESENCE}
    assert mention["change"] == observation["stated_changes"] == set(Change)
    assert edge["change"] == {*Change, PERSISTENT, NO_LONGER_MENTIONED} and edge["rule"] == {*RULES, trends.RULE}
    assert edge["classes"] == set(PROGRESSION_CLASSES)
    assert schema.enumerated("SourceFile")["format"] == {SCENE_GRAPH, RADGRAPH, LUNGUAGE}
    assert schema.enumerated("Finding")["category"] == FINDING_CATEGORIES
    assert schema.enumerated("Report")["source"] == {Source.RADGRAPH, Source.LUNGUAGE}
    measured = schema.enumerated("Measurement")
    image = measure_image(ImageRecord("i", "s", "PA"))
    assert measured["name"] == {m.name for m in image} and measured["task"] == set(TASKS.values())
    assert measured["reason"] == {MISSING, DUPLICATE, NO_ORIGINAL, REVERSED, ZERO_AREA, PAST_IMAGE, SIZE_UNKNOWN,
                                  UNDEFINED}
    assert measured["decision"] == {YES, NO, INCLUDED, MIXED, EXCLUDED, COMPLETE, CUT_OFF}
    assert schema.enumerated("GeometryObservation")["finding"] == set(trends.FINDINGS.values())


def test_a_row_value_outside_a_property_s_values_is_refused_by_both_loaders_checks():
    schema = graph_schema()
    with pytest.raises(SchemaError, match=r"Mention mention_id 'm1': property 'source' holds 'rules', which is not "
                                          r"one of its values in graph/schema\.yaml \(chest_imagenome, radgraph"):
        schema.check_row("Mention", mention_props(_mention(source="rules")))
    with pytest.raises(SchemaError, match=r"Observation row: property 'sources' holds 'rules', "):
        schema.check_row("Observation", {"observation_id": "o1", "sources": ["radgraph", "rules"]}, where="row")
    schema.check_row("Observation", {"observation_id": "o1", "sources": ["radgraph", "lunguage"]})
    # the batch check of both loaders: one set of values per property, the row named when one is outside
    with pytest.raises(SchemaError, match=r"Mention mention_id 'm1': property 'polarity' holds 'maybe'"):
        batch_rows([ParsedFile("a.json", studies=[StudyRecord("s1", "p1", None, "r1")],
                               mentions=[_mention(polarity="maybe")])])
    assert batch_rows([ParsedFile("a.json", mentions=[_mention(polarity="uncertain", change="no change")])])


def test_values_belong_to_string_properties_and_are_listed_once(tmp_path):
    def on_long(d):
        d["nodes"]["Study"]["properties"]["study_order"]["values"] = ["1", "2"]

    with pytest.raises(SchemaError, match=r"study_order.*values are for string and string\[\] properties, not long"):
        load_schema(_edited(tmp_path, on_long))

    def twice(d):
        d["nodes"]["Mention"]["properties"]["polarity"]["values"] = ["present", "present"]

    with pytest.raises(SchemaError, match=r"polarity.*values must list each allowed value once"):
        load_schema(_edited(tmp_path, twice))
    assert "`polarity` string: present, uncertain or absent, as stated (one of `present`, `uncertain`, `absent`)" \
        in markdown()
