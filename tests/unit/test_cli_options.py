"""Choice options of the command line are enums: a wrong value is a usage error before anything runs
(no Neo4j needed)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from flows.cli import app


@pytest.mark.parametrize("args", [["query", "patient_studies", "--format", "xml"], ["stats", "--format", "yaml"],
                                  ["eval-extract", "--format", "yaml"], ["eval-extract", "--gold", "test"],
                                  ["extract", "iu", "--out", "x", "--extractor", "regex"]])
def test_a_value_outside_the_choices_is_a_usage_error(args):
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2
    assert "Invalid value" in result.output and args[-1] in result.output


def test_cli_lists_queries():
    result = CliRunner().invoke(app, ["queries"])
    assert result.exit_code == 0
    for name in ("worsening_findings", "finding_timeline", "new_finding_patients", "changes_between_studies",
                 "source_disagreements"):
        assert name in result.output
