"""Errors, rejections, summary lines, the query catalogue and help never cut or hard-wrap a command, a name or
a path, at any terminal width: rich and typer take their width from ``COLUMNS`` when they first draw, so each
width runs in a process of its own (no Java, no Neo4j: the refusal below comes before the server is built)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from flows.cli.app import RICH_HELP_MIN_COLUMNS

REPO = Path(__file__).resolve().parents[2]
WIDTHS = (60, 100, 250)


def _run(args: list[str], columns: int, **env: str) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("CXRKG_", "NEO4J_"))}
    return subprocess.run([sys.executable, *args], cwd=REPO, capture_output=True, text=True, timeout=120,
                          env={**base, "PYTHONPATH": str(REPO), "COLUMNS": str(columns), **env})


@pytest.mark.parametrize("columns", WIDTHS)
def test_the_missing_data_error_keeps_its_command_and_path_on_one_line(tmp_path, columns):
    """The refusal to start on a used home without its data names the command and the path on one line."""
    home = tmp_path / ("a-home-whose-name-is-long-enough-to-reach-past-sixty-columns" + "-x" * 10)
    home.mkdir()
    (home / "password").write_text("secret\n")  # a used home: its first start wrote the password
    done = _run(["-m", "flows.cli", "db", "start"], columns, CXRKG_HOME=str(home))
    assert done.returncode == 1, done.stderr
    lines = done.stderr.splitlines()
    assert any("cxrkg db start --fresh" in line for line in lines), done.stderr
    assert any(str(home / "data" / "databases") in line for line in lines), done.stderr
    assert len(lines) == 1 and "Traceback" not in done.stderr


_PRINTS = """
import sys
from types import SimpleNamespace as NS
import typer
from flows.cli import common
path = sys.argv[1]
rejection = NS(file=path, record="p10/p10000032/s50414267.txt", field="entities.1.label", reason="unknown label")
common.print_rejections([rejection], path + ".rejected.json", "rejected-files report")
common.console.print(f"library log (Prefect, warnings): {path}/logs/cxrkg.log", highlight=False)
try:
    common.fail(f"cannot write {path}: run `cxrkg db start --fresh` or set CXRKG_HOME")
except typer.Exit:
    pass
"""


@pytest.mark.parametrize("columns", WIDTHS)
def test_rejections_summary_lines_and_failures_keep_paths_whole(tmp_path, columns):
    """Rejections, the library-log line and an error line keep a long path unbroken."""
    path = str(tmp_path / "drop" / "scene_graphs" / "p10" / "p10000032" / ("0" * 40 + "_SceneGraph.json"))
    done = _run(["-c", _PRINTS, path], columns)
    assert done.returncode == 0, done.stderr
    err, out = done.stderr.splitlines(), done.stdout.splitlines()
    assert any(line.startswith(f"rejected {path} record p10/p10000032/s50414267.txt field entities.1.label")
               for line in err), done.stderr
    assert f"rejected-files report: {path}.rejected.json" in err
    assert f"library log (Prefect, warnings): {path}/logs/cxrkg.log" in out
    assert any(f"cannot write {path}: run `cxrkg db start --fresh`" in line for line in err), done.stderr


@pytest.mark.parametrize("columns", WIDTHS)
def test_the_query_catalogue_keeps_every_name_and_parameter_whole(columns):
    """`cxrkg queries` shows every query name and parameter uncut."""
    from graph.store.queries import catalogue

    done = _run(["-m", "flows.cli", "queries"], columns)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    for q in catalogue().values():
        assert any(f" {q.name} " in line for line in lines), (q.name, done.stdout)
        for p in q.params:
            assert any(f" {p.name}:" in line for line in lines), (q.name, p.name, done.stdout)


@pytest.mark.parametrize("command, option", [("ingest", "--doc-mapping"), ("extract", "--radgraph-cache")])
def test_help_keeps_every_option_whole_in_a_narrow_terminal(command, option):
    """At 60 columns the widest option names are shown whole."""
    done = _run(["-m", "flows.cli", command, "--help"], 60)
    assert done.returncode == 0, done.stderr
    assert "…" not in done.stdout and option in done.stdout, done.stdout


# ---- help: paragraphs wrapped at the terminal's width, at every width ------------------------------------
#
# Each command's and group's --help is drawn here as `cxrkg` draws it (typer's rich panels from
# RICH_HELP_MIN_COLUMNS on, click's plain help below), in this process for speed: typer's console takes its
# width from typer.rich_utils.MAX_WIDTH (read from TERMINAL_WIDTH when typer first drew help) and the root
# group reads TERMINAL_WIDTH when typer builds it; test_help_is_as_wide_as_the_terminal checks the same
# widths through the entry point in a process of its own.

HELP_WIDTHS = (60, 100, 250)


def _help_pages(columns: int) -> list[tuple[tuple[str, ...], object, str]]:
    """(path, click command, its --help at ``columns``) for the root, every group and every command."""
    import contextlib
    import io

    import typer.main
    import typer.rich_utils
    from typer.core import TyperGroup
    from typer.exceptions import Exit

    from flows.cli import app

    pages: list[tuple[tuple[str, ...], object, str]] = []

    def visit(command, path: tuple[str, ...], parent) -> None:
        name = path[-1] if path else "cxrkg"
        sink = io.StringIO()
        with contextlib.redirect_stdout(sink), pytest.raises(Exit):
            command.make_context(name, ["--help"], parent=parent)
        pages.append((path, command, sink.getvalue()))
        if isinstance(command, TyperGroup):
            ctx = command.make_context(name, [], parent=parent, resilient_parsing=True)
            for sub_name, sub in command.commands.items():
                visit(sub, path + (sub_name,), ctx)

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TERMINAL_WIDTH", str(columns))
        mp.setattr(typer.rich_utils, "MAX_WIDTH", columns)
        visit(typer.main.get_command(app), (), None)
    return pages


def _names(command) -> set[str]:
    """What starts a row of the command's help: its options' spellings, its arguments' names, its
    subcommands' names, and typer's mark of a required one."""
    names = {"*", "--help"} | set(getattr(command, "commands", {}))
    for p in command.params:
        if getattr(p, "hidden", False):
            continue
        names.update(p.opts)
        names.update(p.secondary_opts)
        names.add(p.metavar or p.name or "")
    return names


def _first_word(line: str) -> str:
    return line.split()[0]


def _description_breaks(lines: list[str], right: int) -> list[str]:
    """Lines of the description (after the usage, up to the first blank line) that end although the next
    line's first word would have fit before ``right``."""
    at = next(i for i, line in enumerate(lines) if "Usage:" in line) + 1
    while at < len(lines) and lines[at].strip():  # a usage line that wrapped
        at += 1
    while at < len(lines) and not lines[at].strip():
        at += 1
    block = []
    while at < len(lines) and lines[at].strip() and lines[at][:1] not in "╭│":
        block.append(lines[at].rstrip())
        at += 1
    return [f"{a.strip()!r} / {b.strip()!r}" for a, b in zip(block, block[1:], strict=False)
            if len(a) + 1 + len(_first_word(b)) <= right]


def _panel_breaks(body: list[str], names: set[str]) -> list[str]:
    """Early line ends in a rich panel's help cells. ``body`` holds the lines inside the panel's borders
    and padding. Typer's tables have no rules between columns: the help column (the last one) starts after
    the last gap of two or more blank characters that runs through every line; a row starts at a line
    that names an option, argument or command left of it; within a row, a line that is not typer's
    ``[default: ...]`` / ``[required]`` continues the cell."""
    width = max(len(line) for line in body)
    body = [line.ljust(width) for line in body]
    blank = [all(line[x] == " " for line in body) for x in range(width)]
    help_x, x = 0, 0
    while x < width:
        start = x
        while x < width and blank[x]:
            x += 1
        if x - start >= 2 and start > 0 and x < width:
            help_x = x
        x += 1 if x == start else 0
    rows: list[list[str]] = []
    for line in body:
        if not rows or set(line[:help_x].split()) & names:
            rows.append([])
        rows[-1].append(line[help_x:].rstrip())
    found = []
    for cell in rows:
        for a, b in zip(cell, cell[1:], strict=False):
            if a and b and not b.startswith("[") and help_x + len(a) + 1 + len(_first_word(b)) <= width:
                found.append(f"{a.strip()!r} / {b.strip()!r}")
    return found


def _rich_breaks(page: str, columns: int, names: set[str]) -> list[str]:
    lines = page.splitlines()
    found = _description_breaks(lines, columns - 1)  # one blank column of padding on each side
    starts = [i for i, line in enumerate(lines) if line.startswith("╭")]
    for start in starts:
        end = next(i for i in range(start, len(lines)) if lines[i].startswith("╰"))
        found += _panel_breaks([line[2:-2] for line in lines[start + 1:end]], names)
    return found


def _plain_breaks(page: str, columns: int) -> list[str]:
    """Early line ends in click's plain help: its formatter fills lines up to ``columns - 2``, the
    description's and each option's or command's help (continuation lines indented under the help); click
    sets ``[default: ...]`` and ``[required]`` two blanks after the help, so a line may end before them."""
    import re

    right = columns - 2
    lines = page.splitlines()
    found = _description_breaks(lines, right)
    entry: list[str] = []
    entries = []
    for line in lines:
        if re.match(r"^  \S", line):  # an option, argument or command: its help after two or more blanks
            entries.append(entry)
            entry = [line] if re.match(r"^  \S.*?\S? {2,}\S", line) else []
        elif line.startswith("   ") and line.strip():
            entry.append(line)
        else:
            entries.append(entry)
            entry = []
    entries.append(entry)
    for cell in entries:
        for a, b in zip(cell, cell[1:], strict=False):
            if not b.strip().startswith("[") and len(a.rstrip()) + 1 + len(_first_word(b)) <= right:
                found.append(f"{a.strip()!r} / {b.strip()!r}")
    return found


@pytest.mark.parametrize("columns", HELP_WIDTHS + (RICH_HELP_MIN_COLUMNS,))
def test_every_help_wraps_its_paragraphs_at_the_width_and_keeps_names_whole(columns):
    """Every command's and group's help, at each width and at the narrowest that gets rich's panels: no
    ellipsis, no line wider than the terminal, every option whole, no line of a paragraph that ends while
    the next word would still have fit."""
    import re

    faults = []
    for path, command, page in _help_pages(columns):
        where = " ".join(("cxrkg",) + path)
        rich = columns >= RICH_HELP_MIN_COLUMNS
        assert ("╭" in page) == rich, (where, page)
        if "…" in page:
            faults.append(f"{where}: cut with an ellipsis")
        if max(len(line) for line in page.splitlines()) > columns:
            faults.append(f"{where}: a line wider than {columns}")
        for name in _names(command) - {"*", ""}:
            if name.startswith("-") and not re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", page):
                faults.append(f"{where}: option {name} not shown whole")
        breaks = _rich_breaks(page, columns, _names(command)) if rich else _plain_breaks(page, columns)
        faults += [f"{where}: line ends early: {b}" for b in breaks]
    assert not faults, "\n".join(faults)


@pytest.mark.parametrize("columns", HELP_WIDTHS)
def test_help_is_as_wide_as_the_terminal(columns):
    """Through the entry point, COLUMNS alone sets the width help is drawn at (no wider: a terminal would fold
    the lines again)."""
    done = _run(["-m", "flows.cli", "extract", "--help"], columns)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    if columns >= RICH_HELP_MIN_COLUMNS:  # rich's panels span the terminal
        assert [len(line) for line in lines if line.startswith("╭")] == [columns, columns], done.stdout
    else:  # click's plain help keeps its two columns of margin
        assert "Options:" in lines and max(len(line) for line in lines) <= columns - 2, done.stdout


def test_help_paragraphs_are_joined_for_the_whole_tree():
    """No help text of any command or parameter keeps a line break inside a paragraph (rich would print it)."""
    import typer.main

    from flows.cli import app

    pending = [typer.main.get_command(app)]
    while pending:
        command = pending.pop()
        pending += getattr(command, "commands", {}).values()
        for text in [command.help] + [getattr(p, "help", None) for p in command.params]:
            for paragraph in (text or "").split("\n\n"):
                assert "\n" not in paragraph, (command.name, text)
