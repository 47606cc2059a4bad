"""The radgraph adapter, on recorded real outputs of the radgraph package (RadGraph-XL; Stanford-AIMI
test fixtures, MIT, shipped in graph/samples/radgraph_xl/). The model itself needs weights from the
Hugging Face hub, which is unreachable here: its loading is checked for a clear error only."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from graph.extract import radgraph_adapter as ra
from graph.formats.radgraph import parse_radgraph, read_doc_mapping
from graph.records import InputError, Rejection
from graph.vocabulary import vocabulary

SAMPLE = Path(__file__).resolve().parents[3] / "graph" / "samples" / "radgraph_xl"
SHARED = Path("/work/shared/data/radgraph-xl-sample/expected_processed_annotations.json")


def _recorded():
    path = SHARED if SHARED.exists() else SAMPLE / "expected_processed_annotations.json"
    return json.loads(path.read_text())


class Recorded:
    """Stands in for the loaded model: answers with the package's own recorded output for each text."""

    def __init__(self, items):
        self.by_text = {i["report_text"]: i["processed_annotations"]["radgraph_annotations"]["0"] for i in items}
        self.calls = []

    def __call__(self, texts):
        self.calls.append(len(texts))
        return {str(n): self.by_text[t] for n, t in enumerate(texts) if t in self.by_text}


def test_convert_recorded_outputs_and_parse(tmp_path):
    items = _recorded()
    model = Recorded(items)
    extractor = ra.RadGraphExtractor(model=model, batch_size=2)
    docs = dict(extractor([(str(i["report_id"]), i["report_text"]) for i in items]))
    assert model.calls == [2, 2, 1] and list(docs) == ["1", "2", "3", "4", "5"]
    for i in items:
        raw, doc = i["processed_annotations"]["radgraph_annotations"]["0"], docs[str(i["report_id"])]
        assert doc["text"] == raw["text"] and set(doc["entities"]) == set(raw["entities"])
        for eid, ent in doc["entities"].items():
            assert ent["label"] in {"ANAT-DP", "OBS-DP", "OBS-DA", "OBS-U"}
            assert ent["tokens"] == " ".join(doc["text"].split(" ")[ent["start_ix"]:ent["end_ix"] + 1])
            assert ent["relations"] == raw["entities"][eid]["relations"]
        assert doc["data_source"] == "radgraph-xl"
    path = tmp_path / "radgraph.json"
    path.write_text(json.dumps(docs))
    parsed = parse_radgraph(path, vocabulary(), read_doc_mapping(SAMPLE / "doc_mapping.csv"))
    assert not parsed.rejections
    got = {(m.record, m.finding, m.polarity) for m in parsed.mentions}
    assert {("1", "pneumonia", "absent"), ("1", "pleural effusion", "absent"), ("1", "pneumothorax", "absent"),
            ("2", "scoliosis", "present")} <= got


def test_missing_and_malformed_outputs_are_rejections():
    doc = _recorded()[1]["processed_annotations"]["radgraph_annotations"]["0"]
    bad = json.loads(json.dumps(doc))
    bad["entities"]["1"]["label"] = "Observation::maybe"
    out = dict(ra.convert_output({"0": doc, "2": bad}, ["a", "b", "c"]))
    assert isinstance(out["a"], dict)
    assert isinstance(out["b"], Rejection) and "no output" in out["b"].reason
    assert isinstance(out["c"], Rejection) and "'Observation::maybe'" in out["c"].reason
    assert (out["c"].record, out["c"].field) == ("c", "entities.1.label")
    shifted = json.loads(json.dumps(doc))
    shifted["entities"]["1"]["start_ix"] += 1
    shifted["entities"]["1"]["end_ix"] += 1
    with pytest.raises(InputError, match="differ from the text") as info:
        ra.convert_document(shifted, "x")
    assert info.value.field == "entities.1.tokens"
    past = json.loads(json.dumps(doc))
    past["entities"]["1"]["end_ix"] = len(doc["text"].split(" "))
    with pytest.raises(InputError, match="past the last token") as info:
        ra.convert_document(past, "x", key="r7")
    assert (info.value.record, info.value.field) == ("r7", "entities.1.end_ix")


def test_loading_without_package_or_weights_says_how(tmp_path):
    with pytest.raises(ValueError, match="unknown radgraph model"):
        ra.load_model("nope")
    with pytest.raises(ra.RadGraphUnavailable) as info:
        ra.load_model("radgraph-xl", tmp_path)
    msg = str(info.value)
    assert "cxrkg[radgraph]" in msg or ("pre-seed" in msg and "RRG_scorers" in msg)
