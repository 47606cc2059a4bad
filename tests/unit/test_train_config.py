"""The GNN training config (pydantic): the shipped file, and clear errors for bad values (no Neo4j)."""

from __future__ import annotations

import pytest

from gnn.errors import GnnError
from gnn.training import DEFAULT_CONFIG, TrainConfig


@pytest.mark.parametrize("text, says", [
    ("model: transformer\n", "model: Input should be 'sage', 'gat' or 'hgt' (got 'transformer')"),
    ("lr_schedule: step\n", "lr_schedule: Input should be 'constant' or 'cosine' (got 'step')"),
    ("ema_decay: 1.0\n", "ema_decay: Input should be less than 1"),
    ("hidden: 8\nlearning_rate: 0.1\n", "learning_rate: Extra inputs are not permitted"),
    ("hidden: 64.5\n", "hidden: Input should be a valid integer"),
    ("model: hgt\nhidden: 65\nheads: 2\n", "hidden 65 must be divisible by heads 2 for hgt"),
    ("- a list\n", "config must be a mapping"),
])
def test_config_errors_name_the_option(tmp_path, text, says):
    bad = tmp_path / "bad.yaml"
    bad.write_text(text)
    with pytest.raises(GnnError) as info:
        TrainConfig.from_file(bad)
    assert says in str(info.value)


def test_the_shipped_config_and_overrides():
    cfg = TrainConfig.from_file(DEFAULT_CONFIG, epochs=3, seed=None)
    assert (cfg.model, cfg.layers, cfg.epochs) == ("sage", 3, 3)
    assert TrainConfig.from_dict({"lr": 1}).lr == 1.0  # YAML's integer 1 is a number for a float option
    assert TrainConfig.from_dict(cfg.model_dump()) == cfg  # what a checkpoint stores reads back the same
