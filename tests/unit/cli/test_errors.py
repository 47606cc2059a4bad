"""Faults of input and environment end in one short error block and a documented exit code, never a
traceback; ``--debug`` and ``CXRKG_DEBUG=1`` let the traceback through."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]


def _cxrkg(*args: str, **env: str) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("CXRKG_", "NEO4J_"))}
    return subprocess.run([sys.executable, "-m", "flows.cli", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=120, env={**base, "PYTHONPATH": str(REPO), "COLUMNS": "200", **env})


@pytest.mark.parametrize("args, env, says", [
    pytest.param(["db", "start"], {"CXRKG_HOME": "/proc/cxrkg-cannot-be-here"}, "No such file or directory: /proc/cxrkg",
                 marks=pytest.mark.java),  # without Java, `db start` stops at the missing java first
    (["stats"], {"CXRKG_BOLT_PORT": "1"}, "cxrkg db start"),  # nothing listens on port 1: a stopped server
    (["queries"], {"CXRKG_BOLT_PORT": "seven"}, "CXRKG_BOLT_PORT='seven'"),
    (["query", "new_finding_patients", "-p", "finding=effusion", "-p", "start_date=2150-13-01", "-p",
      "end_date=2150-12-31"], {"CXRKG_BOLT_PORT": "1"}, "start_date='2150-13-01' is not a date (ISO"),
])
def test_a_fault_is_one_short_block_with_its_exit_code(tmp_path, args, env, says):
    env = {"CXRKG_HOME": str(tmp_path / "home"), **env}
    done = _cxrkg(*args, **env)
    assert done.returncode == 1, done.stderr
    assert says in done.stderr and "Traceback" not in done.stderr + done.stdout
    assert len((done.stderr + done.stdout).strip().splitlines()) <= 3, done.stderr


@pytest.mark.java  # `db start` looks for java before it makes its home
def test_debug_shows_the_traceback(tmp_path):
    env = {"CXRKG_HOME": "/proc/cxrkg-cannot-be-here"}
    assert "FileNotFoundError" in _cxrkg("--debug", "db", "start", **env).stderr
    assert "FileNotFoundError" in _cxrkg("db", "start", CXRKG_DEBUG="1", **env).stderr


def test_every_kind_of_fault_has_its_line():
    from flows.cli.errors import explain
    from graph.store.busy import GraphBusy

    assert explain(GraphBusy("waited")) == ("waited", 5)
    assert explain(PermissionError(13, "Permission denied", "/x"))[0].startswith("Permission denied: /x")
    message, code = explain(KeyError("boom"))
    assert code == 1 and "--debug" in message and "KeyError" in message


# --- one root error, one meaning per exit code (issue 43) ----------------------------------------------------

#: the project's error classes when CxrkgError became their root; the discovery below must find at least these
LISTED = {
    "graph.records.InputError", "graph.extract.eval.gold_eval.GoldError",
    "graph.extract.radgraph_adapter.RadGraphUnavailable", "graph.settings.ConfigError",
    "graph.datasets.wheel.WheelUnavailable", "graph.datasets.nih.tables.DatasetUnavailable",
    "graph.schema.SchemaError",
    "graph.formats.lunguage.LunguageInputError", "graph.ingest.import_files.ImportFileError",
    "graph.ingest.bulk.BulkInputError", "graph.vocabulary.VocabularyError", "graph.store.errors.GraphUnavailable",
    "graph.store.errors.LoginRefused", "graph.store.queries.QueryError", "graph.store.busy.GraphBusy",
    "graph.store.query_api.QueryApiError", "graph.questions.parse.QuestionParseError",
    "graph.formats.diffvqa.QuestionFileError", "graph.questions.score.MetricUnavailable",
    "graph.questions.mapping.MappingError", "graph.runtime.server.ServerError",
    "gnn.errors.GnnError", "flows.bulk_flow.BulkRefused",
}
MESSAGE = "something failed: do this"


def _name(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


@pytest.fixture(scope="module")
def error_classes() -> list[type]:
    """Every public CxrkgError subclass in graph, gnn and flows, after importing every module there (a class
    defined in a module nothing imports yet must be found too)."""
    import importlib
    import pkgutil

    from graph.errors import CxrkgError

    unreadable: list[str] = []
    for package in ("graph", "gnn", "flows"):
        root = importlib.import_module(package)
        for info in pkgutil.walk_packages(root.__path__, f"{package}.", onerror=unreadable.append):
            if info.name.rsplit(".", 1)[-1] != "__main__":  # flows.cli.__main__ runs the command line
                importlib.import_module(info.name)
    assert unreadable == []

    def below(cls: type) -> list[type]:
        return [c for sub in cls.__subclasses__() for c in (sub, *below(sub))]

    return sorted({c for c in below(CxrkgError) if not c.__name__.startswith("_")
                   and c.__module__.split(".")[0] in ("graph", "gnn", "flows")}, key=_name)


def _instance(cls: type) -> BaseException:
    """One instance whose message contains MESSAGE: the message alone, or after placeholders for the other
    arguments a class takes first (InputError's file, record and field, QueryApiError's code)."""
    import inspect

    try:
        return cls(MESSAGE)
    except TypeError:  # an __init__ of its own (Exception's has no signature to read)
        needed = [p for p in inspect.signature(cls).parameters.values()
                  if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        return cls(*(["x"] * (len(needed) - 1)), MESSAGE)


def test_every_project_error_derives_from_the_root_and_keeps_its_builtin_base(error_classes):
    import importlib

    found = {_name(c) for c in error_classes}
    assert found and LISTED <= found, LISTED - found
    for name in LISTED:
        module, _, cls_name = name.rpartition(".")
        cls = getattr(importlib.import_module(module), cls_name)
        assert issubclass(cls, (ValueError, RuntimeError)), name  # `except ValueError` callers still catch it


def _run_main(argv: list[str], capsys) -> tuple[int, str]:
    from flows.cli.main import main

    capsys.readouterr()
    with pytest.raises(SystemExit) as done:
        main(argv)
    captured = capsys.readouterr()
    return done.value.code, captured.err + captured.out


@pytest.fixture
def cli_env(monkeypatch, tmp_path):
    """main() in this process, without a traceback switch and without writing the library-log settings
    (route_library_logs sets environment variables that would outlive the test)."""
    for name in ("CXRKG_DEBUG", "NEO4J_URI"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("CXRKG_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("TERMINAL_WIDTH", "200")
    monkeypatch.setattr("flows.logs.route_library_logs", lambda *args, **kwargs: None)
    return monkeypatch


def _queries_raising(cli_env, exc: BaseException) -> None:
    def raising():
        raise exc

    cli_env.setattr("graph.store.queries.catalogue", raising)  # what `cxrkg queries` reads first


def test_typer_s_test_runner_and_main_end_a_fault_alike(cli_env, capsys):
    """The root group maps errors, so a command run by typer's CliRunner (as tests and notebooks run it)
    ends as under main(): one error line and the class's exit code, no traceback."""
    from typer.testing import CliRunner

    from flows.cli.app import app
    from graph.store.busy import GraphBusy

    _queries_raising(cli_env, GraphBusy(MESSAGE))
    code, said = _run_main(["queries"], capsys)
    run = CliRunner().invoke(app, ["queries"])
    assert code == run.exit_code == 5
    assert said.strip() == run.stderr.strip() == f"error: {MESSAGE}"
    assert run.exception is None or isinstance(run.exception, SystemExit)


def test_debug_lets_the_traceback_through_the_test_runner_too(cli_env):
    from typer.testing import CliRunner

    from flows.cli.app import app
    from graph.store.busy import GraphBusy

    _queries_raising(cli_env, GraphBusy(MESSAGE))
    cli_env.setenv("CXRKG_DEBUG", "1")
    run = CliRunner().invoke(app, ["queries"])
    assert isinstance(run.exception, GraphBusy) and run.exit_code == 1


def test_no_command_maps_an_error_itself():
    """``except SomeError as exc: fail(str(exc))`` redoes the root group's mapping (and once let other
    exceptions read as user errors): a handler in flows/cli that only reprints the exception is refused."""
    import ast

    found = []
    for path in sorted((REPO / "flows" / "cli").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ExceptHandler) and node.name:
                for call in (n for n in ast.walk(node) if isinstance(n, ast.Call)):
                    name = getattr(call.func, "id", getattr(call.func, "attr", ""))
                    first = call.args[0] if call.args else None
                    if name == "fail" and isinstance(first, ast.Call) and getattr(first.func, "id", "") == "str" \
                            and any(isinstance(a, ast.Name) and a.id == node.name for a in first.args):
                        found.append(f"{path.name}:{call.lineno}")
    assert found == []


def test_every_project_error_ends_in_one_line_with_its_own_exit_code(error_classes, cli_env, capsys):
    from flows.cli.errors import explain
    from graph.errors import ExitCode

    for cls in error_classes:
        exc = _instance(cls)
        assert isinstance(cls.exit_code, ExitCode) and cls.exit_code not in (ExitCode.DONE, ExitCode.USAGE)
        assert explain(exc) == (str(exc), cls.exit_code), _name(cls)
        _queries_raising(cli_env, exc)
        code, said = _run_main(["queries"], capsys)
        lines = said.strip().splitlines()
        assert code == cls.exit_code, (_name(cls), code, said)
        assert len(lines) == 1 and lines[0].startswith("error:") and MESSAGE in lines[0], (_name(cls), said)
        assert "unexpected" not in said and "Traceback" not in said, (_name(cls), said)


def test_graph_busy_keeps_its_own_code():
    from graph.errors import ExitCode
    from graph.store.busy import GraphBusy

    assert GraphBusy.exit_code == ExitCode.BUSY == 5


def test_an_unknown_option_is_a_usage_error(cli_env, capsys):
    code, said = _run_main(["queries", "--no-such-option"], capsys)
    assert code == 2 and "No such option" in said


def test_a_question_outside_the_templates_does_nothing_and_exits_1(cli_env, capsys):
    # the question is parsed before the graph is read: no server needed
    code, said = _run_main(["diffvqa", "ask", "why is the sky blue?", "--study", "1"], capsys)
    assert code == 1 and said.startswith("error:") and "the templates:" in said and "Traceback" not in said


def test_diffvqa_score_of_a_missing_file_does_nothing_and_exits_1(cli_env, capsys, tmp_path):
    from tests.fixtures.diffvqa_answers import ROWS, write_answers

    gold = write_answers(tmp_path / "gold.csv", ROWS[:2])
    code, said = _run_main(["diffvqa", "score", str(gold), str(tmp_path / "nowhere.csv")], capsys)
    lines = said.strip().splitlines()
    assert code == 1 and len(lines) == 1 and lines[0].startswith("error:"), said
    assert "nowhere.csv" in said and "cannot be read" in said and "unexpected" not in said


@pytest.mark.parametrize("args", [
    ["ingest", "{tmp}/no-such-folder"],
    ["eval", "episodes", "{tmp}/gold.csv", "{tmp}/pred.csv"],
    ["train", "--config", "{tmp}/gnn.yaml"],
    ["export", "snapshot", "--out", "{tmp}/snap", "--embeddings", "{tmp}/embeddings.parquet"],
    ["serve", "{tmp}/drop", "--timezone", "UTC", "--once"],
])
def test_a_missing_input_path_does_nothing_and_exits_1_not_2(cli_env, capsys, tmp_path, args):
    """A path that is not there is missing input (nothing done, 1), not a usage error (2, Click's)."""
    code, said = _run_main([a.format(tmp=tmp_path) for a in args], capsys)
    lines = said.strip().splitlines()
    assert code == 1 and len(lines) == 1 and lines[0].startswith("error:"), said
    assert f"{tmp_path}/" in said and "does not exist" in said and "Usage" not in said


def test_diffvqa_score_without_java_names_the_missing_tool(cli_env, capsys, tmp_path):
    import importlib.util
    import shutil

    from tests.fixtures.diffvqa_answers import ROWS, write_answers

    which = shutil.which
    cli_env.setattr(shutil, "which", lambda name, *args, **kwargs: None if name == "java" else which(name, *args,
                                                                                                         **kwargs))
    gold, pred = (write_answers(tmp_path / name, ROWS[:2]) for name in ("gold.csv", "pred.csv"))
    code, said = _run_main(["diffvqa", "score", str(gold), str(pred)], capsys)
    lines = said.strip().splitlines()
    missing = "java is not on PATH" if importlib.util.find_spec("pycocoevalcap") else "pycocoevalcap"
    assert code == 1 and len(lines) == 1 and lines[0].startswith("error:") and missing in said, said
    assert "unexpected" not in said and "Traceback" not in said


def test_exit_codes_are_distinct_and_documented():
    import re

    from flows.cli import main as cli_main
    from graph.errors import ExitCode

    values = [c.value for c in ExitCode]
    assert len(set(values)) == len(values)
    readme = (REPO / "README.md").read_text()
    table = readme.split("codes (`flows/cli/main.py`):", 1)[1].split("\n\n", 2)[1]
    assert re.findall(r"^\| (\d+) \|", table, re.M) == [str(v) for v in sorted(values)]
    assert re.findall(r"^(\d+) {2,}\S", cli_main.__doc__ or "", re.M) == [str(v) for v in sorted(values)]


def test_the_cli_names_its_exit_codes():
    # a bare number beside typer.Exit, fail or sys.exit is how 2 once meant "rejected" as well as "usage"
    import ast

    bare = []
    for path in sorted((REPO / "flows" / "cli").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Call):
                continue
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            codes = node.args[1:2] if name == "fail" else node.args[:1] if name in ("Exit", "exit") else []
            bare += [f"{path.name}:{node.lineno}" for a in codes
                     if isinstance(a, ast.Constant) and isinstance(a.value, int) and a.value != 0]
    assert bare == []


def test_the_root_error_module_imports_nothing_of_the_project():
    import ast

    tree = ast.parse((REPO / "graph" / "errors.py").read_text())
    imported = [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    imported += [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    assert not [m for m in imported if m.split(".")[0] in ("graph", "gnn", "flows", "cypher")]
