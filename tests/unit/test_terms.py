"""graph.terms: the graph's words, each a str enum that is the very string the graph holds."""

from __future__ import annotations

import json
import pickle

import pytest

from graph.terms import POSITIVE_STATES, PROGRESSION_CLASSES, Change, Source, State


def test_a_member_is_its_word_in_rows_messages_and_files():
    assert State.NOT_MENTIONED == "not_mentioned" and f"{Change.NO_CHANGE}" == "no change"
    assert repr(Source.RADGRAPH) == "'radgraph'" and {State.PRESENT: 1}["present"] == 1
    assert json.dumps([State.ABSENT, Change.NEW]) == '["absent", "new"]'
    assert pickle.loads(pickle.dumps(Source.LUNGUAGE)) is Source.LUNGUAGE
    assert State("uncertain") is State.UNCERTAIN
    with pytest.raises(ValueError):
        State("maybe")


def test_uncertain_counts_as_positive_and_the_classes_are_the_five_predicted_changes():
    assert POSITIVE_STATES == {"present", "uncertain"}
    assert PROGRESSION_CLASSES == ("improved", "worsened", "no change", "new", "resolved")
    assert Change.REPOSITIONED not in PROGRESSION_CLASSES


def test_the_progression_model_s_classes_are_plain_strings_a_checkpoint_reads_back():
    from gnn.dataset import CLASSES

    # torch.load(weights_only=True) refuses an enum class inside a checkpoint's metadata
    assert CLASSES == PROGRESSION_CLASSES and all(type(c) is str for c in CLASSES)
