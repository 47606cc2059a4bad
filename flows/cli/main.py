"""The ``cxrkg`` entry point: the typer app, with every fault turned into one line and an exit code.

Exit codes (also in the README):

=====  =====================================================================================
0      done
1      the command could not do its work: bad input or environment (a path, a setting, the server);
       the line says what failed and what to do
2      done, but input was rejected (``cxrkg ingest``, ``serve --once``): see the rejected-files report
3      ``cxrkg db status``: the local server is not running
4      ``cxrkg stats``: a consistency check failed
5      a write waited too long for another transaction's locks (the line names the transactions)
130    interrupted (Ctrl-C)
=====  =====================================================================================

``--debug`` (anywhere on the command line) or ``CXRKG_DEBUG=1`` lets the traceback through instead.
"""

from __future__ import annotations

import os
import shutil
import sys

from flows.cli.common import BUSY, err

DEBUG_FLAG = "--debug"
# quick commands (issue 18: 0.3 s each) validate only cxrkg's own settings, which no pydantic plugin observes;
# looking plugins up scans every installed package's entry points, 20 ms of such a command
_NO_PYDANTIC_PLUGINS = {"db", "queries", "query", "stats"}
# typer draws help and usage errors as wide as the terminal and cuts option names and defaults to fit
# ("--doc-mappi…"); every command's widest line fits in 120 columns, so they are drawn at least that wide
# and a narrower terminal folds the lines instead (typer reads TERMINAL_WIDTH when it first draws help)
HELP_MIN_COLUMNS = 120


def explain(exc: BaseException) -> tuple[str, int]:
    """The line a user sees for an exception, and the exit code."""
    name = type(exc).__name__
    if name == "GraphBusy":
        return str(exc), BUSY
    if name in ("ConfigError", "GraphUnavailable", "LoginRefused", "ServerError", "QueryError", "QueryApiError",
                "BulkRefused", "BulkInputError", "WheelUnavailable", "DatasetUnavailable", "MappingError"):
        return str(exc), 1
    if isinstance(exc, OSError) and exc.filename is not None:
        return (f"{exc.strerror or exc}: {exc.filename} (check the path, its permissions and CXRKG_HOME)", 1)
    if type(exc).__module__.split(".")[0] == "neo4j":
        return (f"Neo4j failed: {exc} (is the server running? `cxrkg db status`)", 1)
    return (f"unexpected {name}: {exc}. Run again with --debug (or CXRKG_DEBUG=1) for the traceback, and report "
            "it with the library log (CXRKG_HOME/logs/cxrkg.log)", 1)


def main(argv: list[str] | None = None) -> None:
    """Run ``cxrkg`` with ``argv`` (default ``sys.argv[1:]``); exits with the codes above."""
    from flows.cli import app

    args = list(sys.argv[1:] if argv is None else argv)
    debug = DEBUG_FLAG in args or os.environ.get("CXRKG_DEBUG", "") not in ("", "0")
    args = [a for a in args if a != DEBUG_FLAG]
    if debug:
        os.environ["CXRKG_DEBUG"] = "1"
    if "TERMINAL_WIDTH" not in os.environ:
        os.environ["TERMINAL_WIDTH"] = str(max(shutil.get_terminal_size().columns, HELP_MIN_COLUMNS))
    if args[:1] and args[0] in _NO_PYDANTIC_PLUGINS:
        os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")  # documented by pydantic (plugins)
    try:
        app(args=args, prog_name="cxrkg")
    except KeyboardInterrupt:
        err.print("interrupted")
        sys.exit(130)
    except Exception as exc:  # noqa: BLE001  (every fault ends in one line; --debug shows the traceback)
        if debug:
            raise
        message, code = explain(exc)
        err.print(f"[bold red]error:[/] {message}", highlight=False)
        sys.exit(code)


if __name__ == "__main__":
    main()
