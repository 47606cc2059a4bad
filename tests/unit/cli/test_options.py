"""Choice options of the command line are enums: a wrong value is a usage error before anything runs
(no Neo4j needed)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from flows.cli import app


@pytest.mark.parametrize("args", [["query", "patient_studies", "--format", "xml"], ["stats", "--format", "yaml"],
                                  ["eval", "extract", "--format", "yaml"], ["eval", "extract", "--gold", "test"],
                                  ["extract", "iu", "--out", "x", "--extractor", "regex"],
                                  ["extract", "iu", "--out", "x", "--radgraph-model", "gpt"]])
def test_a_value_outside_the_choices_is_a_usage_error(args):
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2
    assert "Invalid value" in result.output and args[-1] in result.output


def _format_commands() -> list[tuple[str, ...]]:
    from tests.fixtures.cli_tree import walk

    return [path for path, command in walk() if any("--format" in getattr(p, "opts", []) for p in command.params)]


def test_every_format_option_offers_table_json_and_csv():
    from tests.fixtures.cli_tree import walk

    formats = {path: next(p for p in command.params if "--format" in getattr(p, "opts", []))
               for path, command in walk() if path in _format_commands()}
    assert len(formats) >= 10
    for path, option in formats.items():
        assert list(option.type.choices) == ["table", "json", "csv"], path
        assert option.default == "table", path


@pytest.mark.parametrize("path", _format_commands(), ids=" ".join)
def test_a_format_outside_the_choices_is_a_usage_error(path):
    from typer._click.exceptions import BadParameter

    from tests.fixtures.cli_tree import walk

    command = dict(walk())[path]
    option = next(p for p in command.params if "--format" in getattr(p, "opts", []))
    with pytest.raises(BadParameter) as bad:
        option.type.convert("yaml", option, None)
    assert bad.value.exit_code == 2


def test_the_radgraph_models_are_the_adapter_s():
    from flows.cli.extract import RadGraphModel
    from graph.extract.radgraph_adapter import MODEL_TYPES

    assert tuple(m.value for m in RadGraphModel) == MODEL_TYPES


def test_cli_lists_queries():
    result = CliRunner().invoke(app, ["queries"])
    assert result.exit_code == 0
    for name in ("worsening_findings", "finding_timeline", "new_finding_patients", "changes_between_studies",
                 "source_disagreements"):
        assert name in result.output


def test_extract_help_keeps_the_radgraph_extra_in_brackets():
    result = CliRunner().invoke(app, ["extract", "--help"], env={"COLUMNS": "160"})
    assert result.exit_code == 0 and "cxrkg[radgraph]" in result.output


def test_a_folder_filled_by_datasets_iu_is_the_iu_source(tmp_path):
    from flows.cli.extract import _iu_folder_as_iu
    from graph.datasets.wheel import WHEEL_NAME

    (tmp_path / WHEEL_NAME).write_bytes(b"wheel")
    assert _iu_folder_as_iu(str(tmp_path), None) == ("iu", tmp_path)
    (tmp_path / "report.txt").write_text("FINDINGS: clear lungs.")
    assert _iu_folder_as_iu(str(tmp_path), None) == (str(tmp_path), None)  # reports of its own: a folder source
    assert _iu_folder_as_iu("iu", None) == ("iu", None)


def test_also_names_further_bulk_inputs_with_their_own_doc_mappings(tmp_path):
    from flows.cli.data import also_inputs

    for name in ("a", "b", "m.csv"):
        (tmp_path / name).mkdir() if name != "m.csv" else (tmp_path / name).write_text("doc_key\n")
    a, b, m = (str(tmp_path / n) for n in ("a", "b", "m.csv"))
    assert also_inputs([a, f"{a},{b}={m}"]) == [([a], None), ([a, b], m)]
    result = CliRunner().invoke(app, ["ingest", a, "--also", b])  # --also needs --bulk
    assert result.exit_code == 1 and "add --bulk" in result.output
    result = CliRunner().invoke(app, ["ingest", "--bulk", a, "--also", f"{b}={tmp_path / 'gone.csv'}"])
    assert result.exit_code == 1 and "gone.csv does not exist" in result.output and "Traceback" not in result.output


def test_workers_mean_the_same_in_every_command():
    """ingest --bulk, extract and eval reports: one --workers, 0 allowed (this process), one help text."""
    from flows.cli.common import WORKERS_HELP
    from tests.fixtures.cli_tree import walk

    options = {path: p for path, command in walk() for p in command.params if "--workers" in getattr(p, "opts", [])
               and not command.hidden}
    assert set(options) == {("ingest",), ("extract",), ("eval", "reports")}
    for path, option in options.items():
        assert option.help == WORKERS_HELP and option.type.min == 0 and option.default is None, path


def test_bootstrap_means_the_same_in_every_command():
    """Every command that prints intervals takes --bootstrap with the library's default number of draws."""
    from graph.bootstrap import DRAWS
    from tests.fixtures.cli_tree import walk

    options = {path: p for path, command in walk() for p in command.params if "--bootstrap" in getattr(p, "opts", [])
               and not command.hidden}
    assert set(options) == {("forecast",), ("eval", "geometry"), ("cxrtrek", "score"), ("questions", "score")}
    for path, option in options.items():
        assert option.default == DRAWS == 2000 and option.type.min == 0, path
        assert option.help.startswith("draws of the bootstrap over "), path


def test_eval_geometry_takes_its_old_draws_option_with_a_notice(tmp_path, monkeypatch):
    monkeypatch.setenv("CXRKG_HOME", str(tmp_path / "home"))
    result = CliRunner().invoke(app, ["eval", "geometry", str(tmp_path), "--draws", "5"])
    assert "`--draws` is now `--bootstrap`" in result.output
    assert result.exit_code == 1 and "has no geometry_truth.parquet" in result.output  # then runs as before


def test_every_command_that_rejects_takes_rejected():
    """The commands of exit code 6 (README, flows/cli/main.py) each take --rejected PATH."""
    from tests.fixtures.cli_tree import walk

    taking = {path for path, command in walk() if not command.hidden
              and any("--rejected" in getattr(p, "opts", []) for p in command.params)}
    assert taking == {("ingest",), ("serve",), ("extract",), ("diffvqa", "answer"), ("diffvqa", "check"), ("eval", "episodes"),
                      ("eval", "reports"), ("cxrtrek", "check"), ("cxrtrek", "answer"), ("questions", "score")}
