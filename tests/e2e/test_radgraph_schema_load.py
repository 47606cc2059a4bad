"""The IU load in RadGraph's schema: the rules extractor's output for IU reports, and the same output rewritten
into the form written before the schema change (a side as an ANAT-DP ``modify`` of its finding), loaded into the
real Neo4j one after the other, give the same observations (finding, region, polarity, stated changes); the ingest
summary names the old form's out-of-schema relations and finds none in the new. The IU reports are read from the
torchxrayvision wheel; nothing derived from them is stored."""

from __future__ import annotations

import json
from itertools import islice

import pytest
from typer.testing import CliRunner

from flows.cli import app
from tests.fixtures.radgraph_schema import legacy_form

pytestmark = [pytest.mark.extract, pytest.mark.network]  # the rules extractor over IU reports from the wheel

REPORTS = 300


@pytest.fixture(scope="module")
def iu_extraction(tmp_path_factory):
    from graph.datasets import wheel
    from graph.extract.inputs import iter_iu
    from graph.extract.pipeline import run_extraction

    out = tmp_path_factory.mktemp("iu")
    try:
        summary = run_extraction(islice(iter_iu(), REPORTS), out / "new", "rules")
    except wheel.WheelUnavailable as exc:
        pytest.skip(f"IU reports unavailable: {exc}")
    assert summary.documents > 0 and not summary.out_of_schema
    (out / "old" / "radgraph").mkdir(parents=True)
    for shard in summary.shards:
        docs = json.loads(open(shard, encoding="utf-8").read())
        name = shard.rsplit("/", 1)[-1]
        (out / "old" / "radgraph" / name).write_text(json.dumps({k: legacy_form(d) for k, d in docs.items()}))
    return out / "new"


def _load(store, folder, mapping, tmp_path) -> tuple[set, str]:
    store.clear()
    res = CliRunner().invoke(app, ["ingest", str(folder), "--doc-mapping", str(mapping), "--no-progress",
                                   "--rejected", str(tmp_path / "rejected.json")])
    assert res.exit_code == 0, res.output
    rows = store.read("""MATCH (s:Study)-[:HAS_OBSERVATION]->(o:Observation)-[:OF_FINDING]->(f:Finding)
                         RETURN s.study_id AS study, f.name AS finding, o.anatomy AS anatomy, o.polarity AS polarity,
                                o.stated_changes AS changes""")
    return {(r["study"], r["finding"], r["anatomy"], r["polarity"], tuple(r["changes"] or ())) for r in rows}, res.output


def test_the_new_and_the_earlier_form_load_to_the_same_graph(iu_extraction, store, prefect_harness, tmp_path):
    mapping = iu_extraction / "doc_mapping.csv"
    new, new_output = _load(store, iu_extraction / "radgraph", mapping, tmp_path)
    old, old_output = _load(store, iu_extraction.parent / "old" / "radgraph", mapping, tmp_path)
    assert new and new == old
    assert "outside RadGraph's schema" not in new_output
    assert "outside RadGraph's schema (read)" in old_output and "ANAT modify OBS" in old_output
