"""A write that cannot get its locks says what holds them.

The local server ends a statement that waited ``CXRKG_NEO4J_LOCK_TIMEOUT`` for another transaction's locks
(Neo4j's ``db.lock.acquisition.timeout``, error ``Neo.TransientError.Transaction.LockAcquisitionTimeout``)
and a transaction open longer than ``CXRKG_NEO4J_TX_TIMEOUT`` (``db.transaction.timeout``). The driver
would retry the first as transient, waiting the timeout again for every retry; :func:`run_write` turns it
into :class:`GraphBusy` at once, with the open transactions (``SHOW TRANSACTIONS``) in its message.
"""

from __future__ import annotations

from typing import Any, Callable

import neo4j

from graph.store import read_statements as rs

LOCK_TIMEOUT = "Neo.TransientError.Transaction.LockAcquisitionTimeout"
TX_TIMEOUTS = ("Neo.ClientError.Transaction.TransactionTimedOut",
               "Neo.ClientError.Transaction.TransactionTimedOutClientConfiguration")


class GraphBusy(RuntimeError):
    """A write waited too long for locks held by another transaction, or ran past the transaction timeout,
    and was rolled back: nothing of it is stored, and a rerun writes it. The message names the open
    transactions and what to do."""


class _LockWait(Exception):
    """Raised inside a transaction function instead of the lock timeout: not a driver error, so no retry."""


def check_lock_wait(exc: neo4j.exceptions.Neo4jError) -> None:
    """Raise :class:`_LockWait` for a lock acquisition timeout (call from inside a transaction function)."""
    if exc.code == LOCK_TIMEOUT:
        raise _LockWait(exc.message) from exc


def run_write(session: neo4j.Session, work: Callable[..., Any], *args: Any) -> Any:
    """``session.execute_write(work, *args)``, raising :class:`GraphBusy` for a lock wait or transaction
    that timed out.

    Raises:
        GraphBusy: as above; the message lists the server's open transactions (id, client, seconds open,
            status, query) and how to end a stuck one.
    """
    try:
        return session.execute_write(work, *args)
    except (_LockWait, neo4j.exceptions.Neo4jError) as exc:
        code = LOCK_TIMEOUT if isinstance(exc, _LockWait) else exc.code
        if code == LOCK_TIMEOUT:
            raise GraphBusy("a write waited the lock timeout (CXRKG_NEO4J_LOCK_TIMEOUT) for locks another "
                            f"transaction holds and was rolled back; {_holders(session)}") from exc
        if code in TX_TIMEOUTS:
            raise GraphBusy("a write ran past the server's transaction timeout (CXRKG_NEO4J_TX_TIMEOUT) and was "
                            "rolled back; nothing of it is stored. Raise the timeout or load fewer files per "
                            "batch (--batch-files)") from exc
        raise


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
