"""The retry of a write that hit the lock timeout (graph.store.busy), on a fake clock and a fake session:
which attempts are made, how long the pauses are, and that the whole stays within the budget."""

from __future__ import annotations

import neo4j
import pytest

from graph.store.busy import LOCK_TIMEOUT, GraphBusy, LockRetry, _LockWait, lock_retry, run_write


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0
        self.pauses: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.pauses.append(seconds)
        self.now += seconds


class BlockedSession:
    """``execute_write`` waits one lock timeout on the fake clock and fails, ``blocked`` times, then runs
    the work; ``run`` answers the open-transactions query of GraphBusy's message."""

    def __init__(self, clock: FakeClock, lock_timeout_s: float, blocked: int, raw: bool = False) -> None:
        self.clock, self.lock_timeout_s, self.blocked, self.raw = clock, lock_timeout_s, blocked, raw
        self.attempts: list[float] = []

    def execute_write(self, work, *args):
        self.attempts.append(self.clock.now)
        if len(self.attempts) <= self.blocked:
            self.clock.now += self.lock_timeout_s
            if self.raw:  # as the driver raises it after its own retries (a statement not run through _run)
                raise neo4j.exceptions.Neo4jError._hydrate_neo4j(code=LOCK_TIMEOUT, message="lock wait")
            raise _LockWait("lock wait")
        return work(*args)

    def run(self, query, **params):
        return [_Row({"id": "neo4j-transaction-7", "client": "127.0.0.1:5000", "ms": 31000,
                      "status": "Running", "query": ""})]


class _Row:
    def __init__(self, data):
        self._data = data

    def data(self):
        return self._data


def _policy(clock: FakeClock, budget_s: float, lock_timeout_s: float) -> LockRetry:
    return LockRetry(budget_s=budget_s, lock_timeout_s=lock_timeout_s, clock=clock, sleep=clock.sleep)


def test_pauses_double_and_stop_where_one_more_lock_wait_would_overrun_the_budget():
    retry = LockRetry(budget_s=100.0, lock_timeout_s=10.0, first_pause_s=1.0, max_pause_s=4.0)
    assert [retry.pause(n, 0.0) for n in (1, 2, 3, 4, 5)] == [1.0, 2.0, 4.0, 4.0, 4.0]
    assert retry.pause(1, 89.0) == 1.0  # 89 + 1 + 10 = 100: the last attempt still fits
    assert retry.pause(1, 89.5) is None


@pytest.mark.parametrize("raw", [False, True])
def test_a_holder_that_ends_within_the_budget_lets_the_write_through(raw):
    clock = FakeClock()
    session = BlockedSession(clock, lock_timeout_s=5.0, blocked=2, raw=raw)
    assert run_write(session, lambda x: x * 2, 21, retry=_policy(clock, 20.0, 5.0)) == 42
    assert clock.pauses == [0.5, 1.0]
    assert [t - 1000.0 for t in session.attempts] == [0.0, 5.5, 11.5]


def test_a_holder_that_outlasts_the_budget_is_graph_busy_naming_it_within_the_budget():
    clock = FakeClock()
    session = BlockedSession(clock, lock_timeout_s=5.0, blocked=99)
    with pytest.raises(GraphBusy) as caught:
        run_write(session, lambda: None, retry=_policy(clock, 20.0, 5.0))
    assert len(session.attempts) == 3 and clock.pauses == [0.5, 1.0]
    assert clock.now - 1000.0 <= 20.0
    message = str(caught.value)
    assert "3 time(s)" in message and "neo4j-transaction-7" in message and "TERMINATE TRANSACTION" in message


def test_a_budget_shorter_than_two_lock_waits_means_no_retry():
    clock = FakeClock()
    session = BlockedSession(clock, lock_timeout_s=5.0, blocked=99)
    with pytest.raises(GraphBusy):
        run_write(session, lambda: None, retry=_policy(clock, 9.0, 5.0))
    assert len(session.attempts) == 1 and clock.pauses == []


def test_other_errors_are_not_retried():
    clock = FakeClock()

    class Failing(BlockedSession):
        def execute_write(self, work, *args):
            self.attempts.append(clock.now)
            raise neo4j.exceptions.Neo4jError._hydrate_neo4j(
                code="Neo.ClientError.Transaction.TransactionTimedOut", message="too long")

    session = Failing(clock, 5.0, 0)
    with pytest.raises(GraphBusy, match="transaction timeout"):
        run_write(session, lambda: None, retry=_policy(clock, 60.0, 5.0))
    assert len(session.attempts) == 1


def test_the_budget_comes_from_the_settings(monkeypatch):
    monkeypatch.setenv("CXRKG_NEO4J_LOCK_TIMEOUT", "30s")
    monkeypatch.delenv("CXRKG_NEO4J_LOCK_RETRY", raising=False)
    assert (lock_retry().budget_s, lock_retry().lock_timeout_s) == (120.0, 30.0)  # four lock timeouts
    monkeypatch.setenv("CXRKG_NEO4J_LOCK_RETRY", "10m")
    assert lock_retry().budget_s == 600.0
