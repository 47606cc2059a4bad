"""A write that cannot get its locks says what holds them.

The local server ends a statement that waited ``CXRKG_NEO4J_LOCK_TIMEOUT`` for another transaction's locks
(Neo4j's ``db.lock.acquisition.timeout``, error ``Neo.TransientError.Transaction.LockAcquisitionTimeout``)
and a transaction open longer than ``CXRKG_NEO4J_TX_TIMEOUT`` (``db.transaction.timeout``). The driver
would retry the first as transient for its own 30 s, without regard to the lock timeout; :func:`run_write`
retries it itself under :class:`LockRetry` (growing pauses, within ``CXRKG_NEO4J_LOCK_RETRY``, default four
lock timeouts): a holder that is merely slow, as another load on a busy machine, finishes meanwhile. Only a
holder that outlasts the budget makes it :class:`GraphBusy`, with the open transactions (``SHOW
TRANSACTIONS``) in its message. A transaction timeout is :class:`GraphBusy` at once: a retry would run as long.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable

import neo4j

from graph.errors import CxrkgError, ExitCode
from graph.settings import duration_seconds, settings
from graph.store import read_statements as rs

LOCK_TIMEOUT = "Neo.TransientError.Transaction.LockAcquisitionTimeout"
TX_TIMEOUTS = ("Neo.ClientError.Transaction.TransactionTimedOut",
               "Neo.ClientError.Transaction.TransactionTimedOutClientConfiguration")


class GraphBusy(CxrkgError, RuntimeError):
    """A write waited too long for locks held by another transaction, or ran past the transaction timeout,
    and was rolled back: nothing of it is stored, and a rerun writes it. The message names the open
    transactions and what to do."""

    exit_code = ExitCode.BUSY


class _LockWait(Exception):
    """Raised inside a transaction function instead of the lock timeout: not a driver error, so no retry."""


def check_lock_wait(exc: neo4j.exceptions.Neo4jError) -> None:
    """Raise :class:`_LockWait` for a lock acquisition timeout (call from inside a transaction function)."""
    if exc.code == LOCK_TIMEOUT:
        raise _LockWait(exc.message) from exc


@dataclass(frozen=True)
class LockRetry:
    """When a write that hit the lock timeout is tried again.

    After the ``n``-th timed-out attempt the write pauses ``first_pause_s * 2 ** (n - 1)`` seconds (at most
    ``max_pause_s``), but only if that pause and one more full lock wait still end within ``budget_s`` of
    the first attempt's start; otherwise it gives up. So the whole write, retries included, takes at most
    about ``budget_s``. ``clock`` and ``sleep`` are the time source (tests pass fake ones).
    """

    budget_s: float
    lock_timeout_s: float
    first_pause_s: float = 0.5
    max_pause_s: float = 30.0
    clock: Callable[[], float] = field(default=time.monotonic, compare=False)
    sleep: Callable[[float], None] = field(default=time.sleep, compare=False)

    def pause(self, failed: int, elapsed_s: float) -> float | None:
        """Seconds to pause before the next attempt after ``failed`` attempts timed out and ``elapsed_s``
        seconds passed since the first began, or None when another attempt would overrun the budget."""
        pause = min(self.first_pause_s * 2 ** (failed - 1), self.max_pause_s)
        return pause if elapsed_s + pause + self.lock_timeout_s <= self.budget_s else None


LOCK_RETRY_TIMEOUTS = 4  # the default budget in lock timeouts: three attempts with their pauses


def lock_retry() -> LockRetry:
    """The retry policy of the current settings: ``CXRKG_NEO4J_LOCK_RETRY``, else four times
    ``CXRKG_NEO4J_LOCK_TIMEOUT`` (an external server's own lock timeout is not known; the setting stands
    in for it there)."""
    s = settings()
    timeout = duration_seconds(s.neo4j_lock_timeout)
    budget = duration_seconds(s.neo4j_lock_retry) if s.neo4j_lock_retry else LOCK_RETRY_TIMEOUTS * timeout
    return LockRetry(budget_s=budget, lock_timeout_s=timeout)


def run_write(session: neo4j.Session, work: Callable[..., Any], *args: Any, retry: LockRetry | None = None) -> Any:
    """``session.execute_write(work, *args)``, retrying a lock wait that timed out under ``retry``
    (default :func:`lock_retry`); ``work`` runs again from the start on a fresh transaction, as for the
    driver's own retries.

    Raises:
        GraphBusy: the lock waits outlasted the retry budget, or the transaction timed out (not retried);
            the message lists the server's open transactions (id, client, seconds open, status, query) and
            how to end a stuck one. Nothing of the write is stored.
    """
    policy = retry or lock_retry()
    started = policy.clock()
    failed = 0
    while True:
        try:
            return session.execute_write(work, *args)
        except (_LockWait, neo4j.exceptions.Neo4jError) as exc:
            code = LOCK_TIMEOUT if isinstance(exc, _LockWait) else exc.code
            if code in TX_TIMEOUTS:
                raise GraphBusy("a write ran past the server's transaction timeout (CXRKG_NEO4J_TX_TIMEOUT) and "
                                "was rolled back; nothing of it is stored. Raise the timeout or load fewer files "
                                "per batch (--batch-files)") from exc
            if code != LOCK_TIMEOUT:
                raise
            failed += 1
            pause = policy.pause(failed, policy.clock() - started)
            if pause is None:
                raise GraphBusy(
                    f"a write waited the lock timeout (CXRKG_NEO4J_LOCK_TIMEOUT) {failed} time(s), "
                    f"{policy.clock() - started:.0f} s in all (retries end within CXRKG_NEO4J_LOCK_RETRY), for "
                    f"locks another transaction holds and was rolled back; {_holders(session)}") from exc
            policy.sleep(pause)


def _holders(session: neo4j.Session) -> str:
    """The open transactions, for the error message."""
    try:
        rows = [r.data() for r in session.run(rs.OPEN_TRANSACTIONS)]
    except neo4j.exceptions.Neo4jError as exc:
        return f"the open transactions could not be listed ({exc.code}). Is another cxrkg command writing?"
    if not rows:
        return "no transaction is open any more: run the command again"
    listed = "; ".join(f"{r['id']} from {r['client']} open {r['ms'] / 1000:.0f} s ({r['status']}"
                       + (f", {r['query']!r}" if r["query"] else "") + ")" for r in rows[:5])
    return (f"open transactions: {listed}. Another cxrkg command may be writing to the same patients: let it "
            f"finish, or end a stuck one with TERMINATE TRANSACTION '{rows[0]['id']}' (Neo4j Browser or "
            "cypher-shell), then run the command again")
