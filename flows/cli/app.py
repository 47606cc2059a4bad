"""The ``cxrkg`` typer app every command module registers on, and the help all its commands show.

Start-up: ``cxrkg NAME`` imports only the module that registers NAME (:data:`COMMAND_MODULES`): the others
import rich's tables, psutil and more at load, which a quick command (``queries``, ``query``, ``stats``,
``db status``) would pay for without using. Everything else that reads the app (``cxrkg --help``, an unknown
command, ``from flows.cli import app``, typer's test runner) sees every command.

Help: docstrings and option help are written as paragraphs broken at the source's width; rich would keep
those breaks (a command's summary in a group's listing keeps them all), so a sentence stopped mid-line in a
wider terminal and the terminal folded it again in a narrower one. :class:`HelpGroup` joins each paragraph
into one line before typer draws it, and rich wraps it at the terminal's width. Typer's rich tables cut
option names with an ellipsis when the terminal is too narrow for their columns ("--doc-mappi…"); below
:data:`RICH_HELP_MIN_COLUMNS` the help is drawn by click's plain formatter instead, which puts a long option
name on a line of its own and wraps its help beneath it.
"""

from __future__ import annotations

import importlib
import inspect
import os
import re
import shutil
from contextlib import contextmanager
from typing import Any, Iterator

import typer
from typer.core import TyperGroup
from typer.models import CommandInfo, TyperInfo

# Every top-level command and group in the order help lists them (commands before groups, as typer adds them),
# with the module of flows.cli that registers it (tests/unit/cli/test_startup.py checks both against the
# registered app); the old names of the scoring verbs and of `diffvqa ask`, hidden from help, last among the
# commands
COMMAND_MODULES: dict[str, str] = {
    "synth": "data", "ingest": "data", "demo": "demo", "extract": "extract", "forecast": "forecast",
    "train": "gnn", "predict": "gnn", "compare": "gnn", "queries": "query", "query": "query", "stats": "query",
    "serve": "schedule",
    "eval-extract": "evaluation", "eval-episodes": "evaluation", "score-reports": "evaluation",
    "evaluate": "evaluation", "ask": "questions",
    "eval": "evaluation", "datasets": "data", "db": "db", "export": "export", "diffvqa": "questions",
    "cxrtrek": "cxrtrek", "cxreasonbench": "questions", "questions": "temporal",
}
# The narrowest terminal in which typer's rich tables keep every option name of every command whole
# (tests/unit/test_cli_width.py checks it); narrower ones get click's plain help.
RICH_HELP_MIN_COLUMNS = 90


class LazyApp(typer.Typer):
    """A typer app whose commands are registered when first read: reading them imports every command module
    (:data:`COMMAND_MODULES`), except inside :meth:`only`, which imports one."""

    def __init__(self, **kwargs: Any) -> None:
        self._commands: list[CommandInfo] = []
        self._groups: list[TyperInfo] = []
        self._complete = False  # every command module imported
        self._partial = False  # inside only(): the commands imported so far are the app's
        super().__init__(**kwargs)

    @property
    def registered_commands(self) -> list[CommandInfo]:
        self._import_all()
        self._commands.sort(key=lambda c: _help_order(c.name or typer.main.get_command_name(c.callback.__name__)
                                                      if c.callback else ""))
        return self._commands

    @registered_commands.setter
    def registered_commands(self, value: list[CommandInfo]) -> None:
        self._commands = value

    @property
    def registered_groups(self) -> list[TyperInfo]:
        self._import_all()
        self._groups.sort(key=lambda g: _help_order(g.name or ""))
        return self._groups

    @registered_groups.setter
    def registered_groups(self, value: list[TyperInfo]) -> None:
        self._groups = value

    def _import_all(self) -> None:
        if self._complete or self._partial:
            return
        self._complete = True  # first: each module registers through the properties above
        for module in dict.fromkeys(COMMAND_MODULES.values()):
            importlib.import_module(f"flows.cli.{module}")

    @contextmanager
    def only(self, name: str | None) -> Iterator[None]:
        """Within the block the app holds the commands of ``name``'s module (every command when ``name``
        names none: a group's help, an unknown command with typer's suggestions)."""
        module = COMMAND_MODULES.get(name or "")
        if module is None:
            self._import_all()
            yield
            return
        self._partial = True
        try:
            importlib.import_module(f"flows.cli.{module}")
            yield
        finally:
            self._partial = False


def _help_order(name: str) -> int:
    """Where help lists a command: its place in :data:`COMMAND_MODULES` (one imported on its own, before
    the others, would otherwise come first), an unlisted one last."""
    order = list(COMMAND_MODULES)
    return order.index(name) if name in order else len(order)


def help_columns() -> int:
    """The width help is drawn at: ``TERMINAL_WIDTH`` (what typer's rich console reads; ``cxrkg``'s entry
    point sets it from the terminal), else the terminal's (``COLUMNS`` first)."""
    given = os.environ.get("TERMINAL_WIDTH", "")
    return int(given) if given.isdigit() else shutil.get_terminal_size().columns


def paragraphs(text: str) -> str:
    """``text`` with the line breaks inside each paragraph joined (paragraphs stay apart; one that starts
    with click's ``\\b`` keeps its lines), so that help is wrapped at the terminal's width only."""
    text, feed, rest = inspect.cleandoc(text).partition("\f")
    kept = [p if p.startswith("\b") else " ".join(p.split()) for p in re.split(r"\n\s*\n", text)]
    return "\n\n".join(kept) + feed + rest


class HelpGroup(TyperGroup):
    """The root group: typer builds it last, around the whole command tree, whose help it rewrites
    (:func:`paragraphs`); in a terminal narrower than :data:`RICH_HELP_MIN_COLUMNS`, it sets every command
    to click's plain help at the terminal's width."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        columns = help_columns()
        plain = columns < RICH_HELP_MIN_COLUMNS
        if plain:  # click's formatter keeps a 2-column margin, as it does by default
            self.context_settings = {**self.context_settings, "terminal_width": max(columns - 2, 40)}
        pending: list[Any] = [self]
        while pending:
            command = pending.pop()
            pending += getattr(command, "commands", {}).values()
            _rewrite_help(command, plain)

    def invoke(self, ctx: Any) -> Any:  # typer vendors click: its Context type is private
        """Run the command; a fault of input or environment (or a defect) ends in one error line and its
        exit code (:mod:`flows.cli.errors`), under :func:`flows.cli.main.main` and typer's test runner alike.
        Click's own exits, usage errors and Ctrl-C pass through; ``--debug`` lets the traceback through."""
        from flows.cli.errors import debugging, report

        try:
            return super().invoke(ctx)
        except (typer.Exit, typer.Abort, typer.TyperException):  # typer's exits and Click's usage errors
            raise
        except Exception as exc:
            if debugging():
                raise
            raise typer.Exit(report(exc)) from exc


def _rewrite_help(command: Any, plain: bool) -> None:
    """One command's help and its parameters' as :func:`paragraphs`; for click's plain help without rich's
    markup escapes (``\\[``), and with the whole first paragraph as the summary a group lists (click would
    cut it to 45 characters)."""
    texts = [command] + [p for p in command.params if getattr(p, "help", None)]
    for owner in texts:
        if owner.help:
            owner.help = paragraphs(owner.help)
            if plain:
                owner.help = owner.help.replace("\\[", "[")
    if plain:
        command.rich_markup_mode = None
        if command.help and not command.short_help:
            command.short_help = command.help.split("\n\n")[0]


app = LazyApp(add_completion=False, no_args_is_help=True, cls=HelpGroup,
              help="cxrkg: a longitudinal chest X-ray knowledge graph in Neo4j.")


def command_group(name: str, help: str, no_args_is_help: bool = True) -> typer.Typer:
    """The group ``cxrkg NAME ...``, registered on :data:`app`; its commands are added with
    ``@group.command("verb")``. Without arguments it prints its help (``no_args_is_help=False``: a group whose
    callback does the work alone, as ``export --out`` did)."""
    group = typer.Typer(no_args_is_help=no_args_is_help, help=help)
    app.add_typer(group, name=name)
    return group


# commands that start no child process (the local server of `db start` runs in a session of its own)
_NO_CHILDREN = {"ask", "db", "diffvqa", "eval-episodes", "queries", "query", "stats", "synth", None}


@app.callback()
def _route_logs(ctx: typer.Context,
                _debug: bool = typer.Option(False, "--debug", help="show the traceback of a failure (also "
                                                                   "CXRKG_DEBUG=1)")) -> None:
    # before any command imports Prefect: its logs go to CXRKG_HOME/logs/cxrkg.log (flows/logs.py)
    from flows.cli.errors import DEBUG_VARIABLE
    from flows.logs import route_library_logs
    from graph.settings import local_server_settings, settings

    if _debug:  # main() takes --debug off the line; typer's test runner passes it here
        os.environ[DEBUG_VARIABLE] = "1"

    try:
        route_library_logs(local_server_settings().home, settings().log_level)  # ConfigError: one error line
    except OSError:
        pass  # CXRKG_HOME not writable: library logs stay on the terminal; commands that need the folder say so
    if ctx.invoked_subcommand not in _NO_CHILDREN:
        from flows.child_guard import start_guard

        start_guard()  # Prefect's temporary server and parse workers end with this command, even when killed
