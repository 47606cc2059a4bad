"""One error path for every ``cxrkg`` command: an exception becomes one ``error:`` line and an exit code.

:class:`flows.cli.app.HelpGroup`, the root of the command tree, calls :func:`report` around every command, so a
command run by :func:`flows.cli.main.main` and one run by typer's test runner end alike; commands raise
:class:`graph.errors.CxrkgError` subclasses and never map them themselves.
"""

from __future__ import annotations

import os

from graph.errors import CxrkgError, ExitCode

DEBUG_VARIABLE = "CXRKG_DEBUG"


def debugging() -> bool:
    """Whether tracebacks are shown (``--debug`` anywhere on the line sets ``CXRKG_DEBUG=1``)."""
    return os.environ.get(DEBUG_VARIABLE, "") not in ("", "0")


def explain(exc: BaseException) -> tuple[str, int]:
    """The line a user sees for an exception, and the exit code: a :class:`CxrkgError` by its class, an
    ``OSError`` on a named path, a Neo4j driver error; anything else is a defect, reported as unexpected."""
    if isinstance(exc, CxrkgError):
        return str(exc), exc.exit_code
    if isinstance(exc, OSError) and exc.filename is not None:
        return (f"{exc.strerror or exc}: {exc.filename} (check the path, its permissions and CXRKG_HOME)",
                ExitCode.FAILED)
    if type(exc).__module__.split(".")[0] == "neo4j":
        # the driver's texts span lines; a user reads one
        return (f"Neo4j failed: {' '.join(str(exc).split())} (is the server running? `cxrkg db status`)",
                ExitCode.FAILED)
    return (f"unexpected {type(exc).__name__}: {exc}. Run again with --debug (or CXRKG_DEBUG=1) for the "
            "traceback, and report it with the library log (CXRKG_HOME/logs/cxrkg.log)", ExitCode.FAILED)


def report(exc: Exception) -> int:
    """Print ``exc``'s one line on stderr and return its exit code."""
    from flows.cli.common import error_line

    message, code = explain(exc)
    error_line(message)
    return code
