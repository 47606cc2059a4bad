"""graph.extract.pipeline.EXTRACTORS: one table of the extractors by name, whose names are the command line's
choices."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from flows.cli import app
from flows.cli.extract import Extractor
from flows.cli.evaluation import ScoreExtractor
from graph.extract.pipeline import EXTRACTORS, run_extraction, shared_extractor


def test_the_command_line_offers_the_registered_extractors_and_refuses_others():
    assert [e.value for e in Extractor] == list(EXTRACTORS) == [e.value for e in ScoreExtractor]
    for args in (["extract", "iu", "--out", "x", "--extractor", "spacy"], ["eval", "reports", "--extractor", "spacy"]):
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 2 and "'spacy' is not one of 'rules', 'radgraph'" in result.output


def test_an_extractor_is_built_once_per_process_and_options_and_an_unknown_name_is_refused(tmp_path):
    rules = shared_extractor("rules")
    assert shared_extractor("rules") is rules
    assert [key for key, _ in rules([("r1", "Small left pleural effusion.")])] == ["r1"]
    with pytest.raises(ValueError, match=r"unknown extractor 'spacy': choose rules or radgraph"):
        shared_extractor("spacy")
    with pytest.raises(ValueError, match=r"unknown extractor 'spacy'"):
        run_extraction([], tmp_path / "out", "spacy")
