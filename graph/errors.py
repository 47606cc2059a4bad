"""The root of cxrkg's errors and the meaning of each exit code.

Every fault of input or environment that cxrkg raises derives from :class:`CxrkgError`, so the command
line turns each into one line and its exit code by class, not by name. This module imports nothing of
the project: any layer may raise these errors.
"""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    """What a ``cxrkg`` exit code means (the README's table lists the same codes)."""

    #: the command did its work
    DONE = 0
    #: nothing done: bad, unreadable or missing input, a faulty environment, a question outside the
    #: templates, an unknown study; the error line says what failed and what to do
    FAILED = 1
    #: Click's own usage errors (an unknown option, a missing argument); Click's convention, used for
    #: nothing else
    USAGE = 2
    #: ``cxrkg db status``: the local server is not running
    SERVER_STOPPED = 3
    #: ``cxrkg stats``: a consistency check failed
    INCONSISTENT = 4
    #: a write kept waiting for another transaction's locks: retried within CXRKG_NEO4J_LOCK_RETRY, each wait
    #: CXRKG_NEO4J_LOCK_TIMEOUT long
    BUSY = 5
    #: done, but some input was rejected (each rejection is named)
    REJECTED = 6
    #: interrupted (Ctrl-C)
    INTERRUPTED = 130


class CxrkgError(Exception):
    """A fault of input or environment: ``str()`` is one line saying what failed and what to do, and
    ``exit_code`` is what ``cxrkg`` exits with (a subclass may set another :class:`ExitCode`)."""

    exit_code: ExitCode = ExitCode.FAILED
