"""The ``cxrkg`` entry point: the typer app, with every fault turned into one line and an exit code.

Exit codes (:class:`graph.errors.ExitCode`; also in the README):

=====  =====================================================================================
0      done
1      the command could not do its work, nothing done: bad, unreadable or missing input, a faulty
       environment (a path, a setting, the server), a question outside the templates, an unknown study;
       the line says what failed and what to do
2      a usage error (an unknown option, a missing argument), as Click reports it; nothing else exits 2
3      ``cxrkg db status``: the local server is not running
4      ``cxrkg stats``: a consistency check failed
5      a write waited too long for another transaction's locks (the line names the transactions)
6      done, but some input was rejected (``ingest``, ``serve --once``, ``extract``, ``diffvqa answer``,
       ``diffvqa check``, ``eval episodes``, ``eval reports``, ``cxrtrek check``, ``cxrtrek answer``,
       ``questions score``): each
       rejection is named
130    interrupted (Ctrl-C)
=====  =====================================================================================

Every error cxrkg raises for bad input or environment derives from :class:`graph.errors.CxrkgError`, which
carries its message and exit code; any other exception is a defect, reported as "unexpected".

``--debug`` (anywhere on the command line) or ``CXRKG_DEBUG=1`` lets the traceback through instead.
"""

from __future__ import annotations

import os
import shutil
import sys

from flows.cli.common import err
from flows.cli.errors import DEBUG_VARIABLE, debugging, report
from graph.errors import ExitCode

DEBUG_FLAG = "--debug"


def main(argv: list[str] | None = None) -> None:
    """Run ``cxrkg`` with ``argv`` (default ``sys.argv[1:]``); exits with the codes above."""
    from flows.cli.app import app

    args = list(sys.argv[1:] if argv is None else argv)
    if DEBUG_FLAG in args:
        os.environ[DEBUG_VARIABLE] = "1"
    args = [a for a in args if a != DEBUG_FLAG]
    if "TERMINAL_WIDTH" not in os.environ:  # typer's help console reads it: as wide as the terminal, no wider
        os.environ["TERMINAL_WIDTH"] = str(shutil.get_terminal_size().columns)
    try:
        with app.only(args[0] if args else None):  # a quick command imports its own module only
            app(args=args, prog_name="cxrkg")
    except KeyboardInterrupt:
        err.print("interrupted")
        sys.exit(ExitCode.INTERRUPTED)
    except Exception as exc:  # noqa: BLE001  (a fault before any command ran: the root group reports the rest)
        if debugging():
            raise
        sys.exit(report(exc))


if __name__ == "__main__":
    main()
