"""The parse's second round of fast paths (issue 36) give what the plain code gives: one-syscall file reads,
sentence ends and section headers read off the text, the per-observation and per-label memos. Synthetic values
only."""

from __future__ import annotations

import json
import random

import pytest

from graph.formats.files import read_bytes
from graph.formats.radgraph import parse_radgraph, token_sections
from graph.formats.radgraph.records import (
    _COLON_END,
    _sections,
    _sentence_ends,
    _sentence_ends_of,
    _token_indices,
)
from graph.formats.scene_graph import parse_scene_graph
from graph.vocabulary import load_vocabulary, vocabulary
from tests.fixtures.inputs import radgraph_doc, write_radgraph
from tests.fixtures.radgraph_cohort import ATELECTASIS, CLEAR, WORSE
from tests.fixtures.scene_graph_cases import full_graph

V = vocabulary()


@pytest.mark.parametrize("hint", [None, 0, 5, 17, 18, 19, 1000])
def test_read_bytes_reads_the_whole_file_whatever_the_size_hint(tmp_path, hint):
    path = tmp_path / "f.json"
    path.write_bytes(b'{"a": "0123456789"}'[:18])
    assert read_bytes(path, hint) == path.read_bytes()
    with pytest.raises(FileNotFoundError, match="nothing.json"):
        read_bytes(tmp_path / "nothing.json")


def test_sentence_ends_and_headers_read_off_the_text_are_those_of_the_tokens():
    rng = random.Random(7)
    words = ["a", "FINDINGS", "findings:", ":", ".", "?", "!", "x.", ".x", "", "IMPRESSION:", "b:", "::", ":.", "c?d"]
    for _ in range(3000):
        text = " ".join(rng.choice(words) for _ in range(rng.randint(0, 14)))
        tokens = text.split(" ")
        assert _sentence_ends_of(text, len(tokens)) == _sentence_ends(tokens), text
        assert _sections(tokens, _token_indices(text, _COLON_END)) == token_sections(tokens), text


def _docs() -> dict:
    same_target_twice = radgraph_doc("Left effusion .", [("Left", "ANAT-DP", 0, []),
                                                         ("effusion", "OBS-DP", 1, [("located_at", 1),
                                                                                    ("located_at", 1)])])
    return {f"p10/p10000001/s5000000{k}.txt": d for k, d in enumerate(
        [radgraph_doc(*WORSE), radgraph_doc(*ATELECTASIS), radgraph_doc(*CLEAR), radgraph_doc(*WORSE),
         same_target_twice])}


def test_remembered_observations_read_as_a_fresh_vocabulary_reads_them(tmp_path):
    path = write_radgraph(tmp_path / "r.json", _docs())
    warm = parse_radgraph(path, V)  # the packaged vocabulary's memos hold these wordings now
    again = parse_radgraph(path, V)
    fresh = parse_radgraph(path, load_vocabulary())  # empty memos: every observation read afresh
    assert warm == again == fresh and len(fresh.mentions) > 5 and not fresh.rejections


def test_scene_graph_labels_remembered_per_vocabulary_read_as_before(tmp_path):
    graph = full_graph()
    graph["attributes"][0]["attributes"][0].append("anatomicalfinding|yes|no such finding")
    path = tmp_path / "g_SceneGraph.json"
    path.write_text(json.dumps(graph))
    first, again = parse_scene_graph(path, V), parse_scene_graph(path, V)
    fresh = parse_scene_graph(path, load_vocabulary(), data=path.read_bytes())
    assert first == again == fresh and "no such finding" in fresh.unmapped_terms and len(fresh.mentions) == 4
    graph["attributes"][1]["attributes"][0].append("anatomicalfinding|maybe|pleural effusion")
    path.write_text(json.dumps(graph))
    with pytest.raises(ValueError, match="polarity 'maybe' is not yes/no"):
        parse_scene_graph(path, V)
