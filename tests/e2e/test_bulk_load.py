"""``cxrkg ingest --bulk`` against the real local Neo4j: the imported graph equals the transactional one
node for node and property for property (derived states and events included), later transactional loads
continue on top of it, and it refuses a database that holds data."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from graph.store import reset_shared_store, shared_store
from graph.store.content import graph_content
from graph.synth import write_cohort
from graph.vocabulary import vocabulary


@pytest.fixture(scope="module")
def cohorts(tmp_path_factory) -> tuple[Path, Path, Path]:
    """A sparse synthetic cohort (``all``) and its files split in two folders, each with the metadata CSV:
    ``first`` (the first load) and ``later`` (an increment: more studies of the same patients)."""
    root = tmp_path_factory.mktemp("bulk")
    write_cohort(root / "all", patients=12, seed=21, sparse=True)
    first, later = root / "first", root / "later"
    data = sorted(p for p in (root / "all").rglob("*.json"))
    for n, path in enumerate(data):
        target = (first if n % 3 else later) / path.relative_to(root / "all")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(path, target)
    for folder in (first, later):
        shutil.copy(root / "all" / "mimic-cxr-2.0.0-metadata.csv", folder)
    return root / "all", first, later


def _transactional(paths: list[str]) -> list[str]:
    from flows.ingest_flow import ingest_flow

    store = shared_store()
    store.clear()
    store.ensure_schema(vocabulary())
    ingest_flow(paths, rejected_report=None)
    return graph_content(shared_store())


def _bulk_then(paths: list[str], keep: Path | None = None) -> list[str]:
    from flows.bulk_flow import bulk_ingest_flow
    from flows.ingest_flow import ingest_flow
    from graph.ingest.import_files import read_listing

    shared_store().clear()
    reset_shared_store()
    summary = bulk_ingest_flow([paths[0]], rejected_report=None, keep_import_files=str(keep) if keep else None)
    assert summary.ok and summary.files_loaded > 0 and summary.elements_created > 0
    if keep:  # the files the importer read, kept with their listing (the load benchmark's Kuzu peer)
        kept = read_listing(keep)
        assert sum(f.rows for f in kept) == summary.elements_created and all(f.path.is_file() for f in kept)
    for path in paths[1:]:
        ingest_flow([path], rejected_report=None)
    return graph_content(shared_store())


def test_bulk_load_then_increment_equals_the_transactional_graph(store, prefect_harness, cohorts, tmp_path):
    from graph.store.consistency import run_checks

    everything, first, later = cohorts
    sample = str(Path(__file__).resolve().parents[2] / "graph" / "samples" / "radgraph_xl")
    expected = _transactional([str(first), str(later)])
    got = _bulk_then([str(first), str(later)], keep=tmp_path / "kept")
    assert got == expected
    assert any('"StudyFinding"' in line and '"onset_datetime"' in line for line in got)
    assert all(check.ok for check in run_checks(shared_store()))

    # the same first load with a file of many patients (the RadGraph-XL sample, no patient hints): every
    # patient is parked and derived at the end
    from flows.bulk_flow import bulk_ingest_flow

    shared_store().clear()
    reset_shared_store()
    mapping = str(Path(sample) / "doc_mapping.csv")
    bulk_ingest_flow([str(everything), sample], doc_mapping=mapping, rejected_report=None)
    bulk = graph_content(shared_store())
    from flows.ingest_flow import ingest_flow

    shared_store().clear()
    shared_store().ensure_schema(vocabulary())
    ingest_flow([str(everything), sample], doc_mapping=mapping, rejected_report=None)
    assert bulk == graph_content(shared_store())


def test_bulk_load_refuses_a_database_with_data(store, prefect_harness, cohorts):
    from flows.bulk_flow import BulkRefused, bulk_ingest_flow
    from flows.ingest_flow import ingest_flow

    _, first, later = cohorts
    ingest_flow([str(first)], rejected_report=None)
    before = graph_content(shared_store())
    with pytest.raises(BulkRefused, match="already holds data"):
        bulk_ingest_flow([str(later)], rejected_report=None)
    assert graph_content(shared_store()) == before

    from typer.testing import CliRunner

    from flows.cli import app

    result = CliRunner().invoke(app, ["ingest", "--bulk", "--no-progress", str(later)])
    assert result.exit_code == 1 and "already holds data" in result.output and "Traceback" not in result.output
    assert graph_content(shared_store()) == before


def test_bulk_load_refuses_another_server(monkeypatch, neo4j_server, prefect_harness, cohorts):
    from flows.bulk_flow import BulkRefused, bulk_ingest_flow

    monkeypatch.setenv("NEO4J_URI", "bolt://127.0.0.1:1")
    monkeypatch.setenv("NEO4J_USER", "neo4j")
    monkeypatch.setenv("NEO4J_PASSWORD", "unused")
    with pytest.raises(BulkRefused, match="NEO4J_URI names bolt://127.0.0.1:1"):
        bulk_ingest_flow([str(cohorts[1])], rejected_report=None)


@pytest.mark.java  # neo4j-admin runs on Java
def test_a_failed_import_says_why_and_leaves_no_database(tmp_path):
    from graph.ingest.import_files import ImportFiles, import_arguments
    from graph.runtime.server import LocalNeo4jServer, ServerError
    from graph.settings import LocalServerSettings

    files = ImportFiles(tmp_path / "files")
    for _ in range(2):  # the same study twice: the importer stops on duplicate ids
        files.node_file("Study").write({"study_id": "s1", "patient_id": "p1"})
    files.close()
    server = LocalNeo4jServer(LocalServerSettings(home=tmp_path / "home", bolt_port=1, http_port=1))
    with pytest.raises(ServerError, match="neo4j-admin database import failed .*s1.*neo4j-admin-import.log"):
        server.import_database(import_arguments("neo4j", files.listing(), tmp_path / "files" / "import.report"),
                               tmp_path / "files")
    assert not (tmp_path / "home" / "data" / "databases" / "neo4j").exists()


def _mapped_copy(sample: Path, to: Path, patients: str, first_id: int) -> tuple[str, str]:
    """The RadGraph-XL sample's reports again under ``to``, as other reports (ids from ``first_id`` on) of
    other patients and studies (the mapping's ``XL-DEMO`` prefix replaced by ``patients``): (folder, mapping
    CSV)."""
    import json

    import pandas as pd

    to.mkdir(parents=True)
    docs = json.loads((sample / "expected_processed_annotations.json").read_text(encoding="utf-8"))
    ids = {doc["report_id"]: first_id + n for n, doc in enumerate(docs)}
    (to / "expected_processed_annotations.json").write_text(
        json.dumps([{**doc, "report_id": ids[doc["report_id"]]} for doc in docs]), encoding="utf-8")
    mapping = pd.read_csv(sample / "doc_mapping.csv", dtype=str)
    mapping["doc_key"] = mapping["doc_key"].map(lambda key: str(ids[int(key)]))
    for column in ("patient_id", "study_id"):
        mapping[column] = mapping[column].str.replace("XL-DEMO", patients)
    mapping.to_csv(to.parent / f"{to.name}-mapping.csv", index=False)
    return str(to), str(to.parent / f"{to.name}-mapping.csv")


def test_several_inputs_in_one_import_make_the_graph_of_one_load_after_the_other(store, prefect_harness, cohorts,
                                                                                   tmp_path):
    """A cohort whose patients are known before parsing (written by workers) and two RadGraph inputs of
    their own doc mappings (written in turn beside them), in one import: the graph of a bulk load of the
    cohort and transactional loads of the others on top, each input's summary that of its own load."""
    from flows.bulk_flow import bulk_ingest_flow
    from flows.ingest_flow import ingest_flow
    from graph.ingest.bulk import BulkInputError

    everything = str(cohorts[0])
    sample = Path(__file__).resolve().parents[2] / "graph" / "samples" / "radgraph_xl"
    mapped = [(str(sample), str(sample / "doc_mapping.csv")),
              _mapped_copy(sample, tmp_path / "other", "XL-OTHER", 101)]
    shared_store().clear()
    reset_shared_store()
    first = bulk_ingest_flow([everything], rejected_report=None)
    later = [ingest_flow([folder], doc_mapping=mapping, rejected_report=None) for folder, mapping in mapped]
    expected = graph_content(shared_store())

    shared_store().clear()
    reset_shared_store()
    got = bulk_ingest_flow([everything], rejected_report=None, also=[([f], m) for f, m in mapped])
    assert graph_content(shared_store()) == expected and len(expected) > 1000
    assert [s.files_loaded for s in got.inputs] == [first.files_loaded] + [s.files_loaded for s in later]
    assert [s.elements_created for s in got.inputs] == [first.elements_created] + [s.elements_created for s in later]
    assert got.elements_created == sum(s.elements_created for s in got.inputs)
    assert [s.engine for s in got.inputs] == [first.engine] + ["in turn: files of many patients"] * 2
    assert got.ok and got.files_loaded == sum(s.files_loaded for s in got.inputs)

    # two inputs of the same patients: refused before the import, naming the patient and both inputs
    shared_store().clear()
    reset_shared_store()
    again = _mapped_copy(sample, tmp_path / "again", "XL-DEMO", 201)
    with pytest.raises(BulkInputError, match="patient XL-DEMO-1 is in input 2 and input 3"):
        bulk_ingest_flow([everything], rejected_report=None, also=[([f], m) for f, m in (mapped[0], again)])
    from typer.testing import CliRunner

    from flows.cli import app

    result = CliRunner().invoke(app, ["ingest", "--bulk", "--no-progress", everything, "--also",
                                      f"{mapped[0][0]}={mapped[0][1]}", "--also", "=".join(again)])
    assert result.exit_code == 1 and "patient XL-DEMO-1 is in input 2 and input 3" in result.output
    assert "Traceback" not in result.output
    from graph.runtime.server import LocalNeo4jServer
    from graph.settings import local_server_settings

    LocalNeo4jServer(local_server_settings()).start()  # stopped for the import that did not come
    reset_shared_store()
    assert not shared_store().holds_data()
