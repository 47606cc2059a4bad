"""Every command a page of the documentation names exists in the CLI as written, and the command tree has one
command per name: README.md, docs/*.md and gnn/README.md are read with a Markdown parser
(tests/fixtures/doc_blocks.py), each command line is parsed by click itself with ``--help`` appended
(tests/fixtures/cli_tree.py). Running the journeys is tests/journeys' work."""

from __future__ import annotations

import re

import pytest

from tests.fixtures.cli_tree import Group, named_parts_exist, parse_with_help, walk
from tests.fixtures.doc_blocks import (
    NOT_RUN_REASONS,
    REPO,
    all_blocks,
    cxrkg_calls,
    doc_paths,
    inline_code,
    journeys,
    table_rows,
)

SHELL_BLOCKS = [b for b in all_blocks() if b.is_shell]
# journeys the issue that made them tests names (issue 43): each must stay in the docs
JOURNEYS = {"progression", "forecaster", "diffvqa", "lunguage", "extraction", "drop-folder", "bulk", "another-neo4j"}


def _synopsis_words(line: str) -> str:
    """A synopsis line as a command line: ``[--x N]`` keeps its words, ``a|b|c`` keeps the first choice."""
    line = line.replace("[", " ").replace("]", " ")
    return re.sub(r"(\S+?)\|\S+", r"\1", line)


def _lines():
    for block in SHELL_BLOCKS:
        synopsis = block.marks.get("not-run") == "synopsis"
        for line in block.command_lines():
            for words in cxrkg_calls(_synopsis_words(line) if synopsis else line):
                yield pytest.param(words, id=f"{block.where} cxrkg {' '.join(words)}"[:120])


def test_the_pages_have_command_blocks():
    assert len(SHELL_BLOCKS) >= 25 and len(list(_lines())) >= 53


@pytest.mark.parametrize("block", SHELL_BLOCKS, ids=lambda b: b.where)
def test_every_shell_block_is_run_or_says_why_not(block):
    journey, reason = block.marks.get("journey"), block.marks.get("not-run")
    assert (journey is None) != (reason is None), (
        f"{block.where}: mark the block with `<!-- journey=NAME -->` (run by tests/journeys) or "
        "`<!-- not-run=REASON -->` on the line before it")
    assert reason is None or reason in NOT_RUN_REASONS, f"{block.where}: not-run={reason}: one of {sorted(NOT_RUN_REASONS)}"


def test_no_command_hides_in_an_unlabelled_block():
    for block in all_blocks():
        if not block.language:
            commands = [ln for ln in block.text.splitlines() if ln.startswith(("cxrkg ", "$ cxrkg "))]
            assert not commands, f"{block.where}: label the block bash (or text for output): {commands[0]}"


def test_the_journeys_are_documented_once_each():
    runs = journeys()
    assert JOURNEYS <= set(runs), f"journeys missing from the docs: {sorted(JOURNEYS - set(runs))}"
    for name, copies in runs.items():  # the README quotes a page's journey: the same text, not a variant
        assert len({b.text for b in copies}) == 1, f"journey {name} differs between {[b.where for b in copies]}"


@pytest.mark.parametrize("words", list(_lines()))
def test_every_documented_command_line_parses_with_help(words):
    parsed = parse_with_help(words)
    assert parsed.fault is None, f"cxrkg {' '.join(words)} --help: {parsed.fault}"


def _inline_commands():
    for path in doc_paths():
        for span in inline_code(path):
            if span.startswith("cxrkg ") and not span.startswith("cxrkg-"):
                for words in cxrkg_calls(_synopsis_words(span)):
                    yield pytest.param(words, id=f"{path.relative_to(REPO)}: {span}"[:120])


@pytest.mark.parametrize("words", list(_inline_commands()))
def test_every_command_named_in_prose_exists(words):
    parsed = named_parts_exist(words)
    assert parsed.fault is None, f"`cxrkg {' '.join(words)}`: {parsed.fault}"


def test_a_missing_command_or_option_is_caught():
    assert parse_with_help(["export", "--nope"]).fault
    assert parse_with_help(["exports"]).fault
    assert named_parts_exist(["ingest", "--worker"]).fault
    assert named_parts_exist(["export", "snapshots"]).fault


def _registered(app) -> list[tuple[str, object]]:
    names = [(c.name or c.callback.__name__.replace("_", "-"), c) for c in app.registered_commands]
    return names + [(g.name, g.typer_instance) for g in app.registered_groups]


def test_no_two_commands_share_a_name_at_one_level():
    """typer registers groups after commands: a group named like a command silently replaces it (the
    `export lunguage` group once hid `export --out`)."""
    from flows.cli import app

    pending = [("cxrkg", app)]
    while pending:
        where, level = pending.pop()
        names = [n for n, _ in _registered(level)]
        assert len(names) == len(set(names)), f"{where}: {sorted(n for n in names if names.count(n) > 1)}"
        pending += [(f"{where} {n}", sub) for n, sub in _registered(level) if hasattr(sub, "registered_commands")]


@pytest.mark.parametrize("path", [p for p, _ in walk()], ids=lambda p: " ".join(("cxrkg",) + p))
def test_help_of_every_command_exits_0(path):
    assert parse_with_help(list(path)).fault is None


def _table() -> dict[tuple[str, ...], str]:
    """The README's command table: each command path it names, with the text of its row."""
    rows: dict[tuple[str, ...], str] = {}
    for cells in table_rows(REPO / "README.md", "command"):
        group: tuple[str, ...] = ()
        for span in re.findall(r"`([^`]+)`", cells[0]):
            words = [w for w in _synopsis_words(span).split() if w != "cxrkg"]
            parsed = named_parts_exist(words)
            if parsed.path and len(parsed.path) == 1 and group and parsed.fault:  # `generate` after `diffvqa answer`
                parsed = named_parts_exist(list(group) + words)
            if not parsed.path and group:
                parsed = named_parts_exist(list(group) + words)
            assert parsed.fault is None, f"README command table: `{span}`: {parsed.fault}"
            rows[parsed.path] = rows.get(parsed.path, "") + " " + " ".join(cells)
            group = parsed.path[:1] if len(parsed.path) > 1 else group
    return rows


def test_the_readme_table_lists_every_command_with_its_options():
    rows, missing = _table(), []
    for path, command in walk():
        if not path or isinstance(command, Group) and command.commands or command.hidden:
            continue  # an old name kept for a release (tests/unit/cli/test_old_names.py) is not listed
        if path not in rows:
            missing.append(f"`cxrkg {' '.join(path)}`")
            continue
        for p in command.params:
            spellings = [o for o in [*getattr(p, "opts", []), *getattr(p, "secondary_opts", [])] if o.startswith("--")]
            if getattr(p, "hidden", False) or not spellings or "--help" in spellings:
                continue
            if not any(re.search(re.escape(o) + r"(?![\w-])", rows[path]) for o in spellings):
                missing.append(f"`cxrkg {' '.join(path)}` {spellings[0]}")
    assert not missing, f"README command table lacks: {', '.join(missing)}"
