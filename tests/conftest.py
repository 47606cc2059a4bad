"""Session fixtures: one real Neo4j for the whole run, and Prefect's test harness.

The suite uses the server named by NEO4J_URI/NEO4J_USER/NEO4J_PASSWORD when set; otherwise it starts
cxrkg's own local Neo4j in a private folder (CXRKG_TEST_HOME, default .cxrkg/test in the repository) on
port CXRKG_TEST_BOLT_PORT (default 7697), so the user's demo database is never touched. Every test
that uses ``store`` starts from an empty graph.

The markers of what a test needs (``java``, ``network``, ``extract``) and CXRKG_REQUIRE live in the plugin
tests/fixtures/needs.py.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

pytest_plugins = ["tests.fixtures.needs"]  # the java / network / extract markers and CXRKG_REQUIRE

REPO = Path(__file__).resolve().parents[1]


def _free(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) != 0


@pytest.fixture(scope="session")
def neo4j_server():
    """Yields the Neo4jSettings the tests use, starting (and finally stopping) a local server if needed."""
    from graph.runtime.server import LocalNeo4jServer
    from graph.settings import local_server_settings, neo4j_settings

    if os.environ.get("NEO4J_URI"):
        yield neo4j_settings()
        return
    os.environ["CXRKG_HOME"] = os.environ.get("CXRKG_TEST_HOME", str(REPO / ".cxrkg" / "test"))
    os.environ["CXRKG_BOLT_PORT"] = os.environ.get("CXRKG_TEST_BOLT_PORT", "7697")
    os.environ["CXRKG_HTTP_PORT"] = os.environ.get("CXRKG_TEST_HTTP_PORT", "7484")
    os.environ.setdefault("CXRKG_NEO4J_LOCK_TIMEOUT", "5s")  # a blocked write fails in seconds (tests/e2e/test_faults.py)
    server = LocalNeo4jServer(local_server_settings())
    started_here = not server.status().running
    server.start()
    try:
        yield neo4j_settings()
    finally:
        if started_here or _restarted_by_a_test(server.status().pid):
            server.stop()


def _restarted_by_a_test(pid: int | None) -> bool:
    """Whether the server's process is a child of this one: a server that was running before the suite
    and that a test stopped and started again (a bulk load does) would otherwise outlive the suite."""
    import psutil

    return pid is not None and pid in {p.pid for p in psutil.Process().children(recursive=True)}


@pytest.fixture(scope="session")
def prefect_harness():
    """Prefect's own test harness (a temporary database and API), once per session."""
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(server_startup_timeout=120):
        yield


@pytest.fixture()
def store(neo4j_server):
    """An empty graph with schema and vocabulary, through the process-wide store the flows use.

    A transaction an earlier test left open (a thread or session of a failed test) is terminated first:
    it would hold locks, or write into the graph while it is cleared."""
    from graph.store import reset_shared_store, shared_store
    from graph.vocabulary import vocabulary

    reset_shared_store()
    s = shared_store()
    s.end_other_transactions()
    s.clear()
    s.ensure_schema(vocabulary())
    yield s
    reset_shared_store()


# helpers that end by themselves right after this process: the watcher of in-process `cxrkg` commands
# (flows/child_guard.py) and multiprocessing's resource tracker
OWN_HELPERS = ("flows.child_guard", "multiprocessing.resource_tracker")


def _ours(p) -> bool:
    """Whether a process is one of :data:`OWN_HELPERS` (or already gone)."""
    import psutil

    try:
        return p.status() == psutil.STATUS_ZOMBIE or any(h in " ".join(p.cmdline()) for h in OWN_HELPERS)
    except psutil.Error:
        return True


def _same_session(pid: int) -> bool:
    try:
        return os.getsid(pid) == os.getsid(0)
    except OSError:  # gone meanwhile
        return False


def _started_by_test(before: set[int], tmp_path: Path | None) -> list:
    """Processes running now that the test started: children of this process (at any depth) that were not
    there before it, and processes whose command line names its temporary folder (servers and workers
    that detach from their parent), save :data:`OWN_HELPERS`. A child in a session of its own that does
    not name the folder is left alone: the suite's own Neo4j, which a test restarts after killing it."""
    import psutil

    me = psutil.Process()
    found = {p.pid: p for p in me.children(recursive=True) if p.pid not in before and _same_session(p.pid)}
    if tmp_path is not None:
        inside = str(tmp_path) + os.sep
        for p in psutil.process_iter(["cmdline"]):
            if p.pid != me.pid and any(inside in part + os.sep for part in p.info["cmdline"] or ()):
                found.setdefault(p.pid, p)
    return [p for p in found.values() if not _ours(p)]


@pytest.fixture(autouse=True)
def _end_what_the_test_started(request):
    """Every process a test started has ended before the next test begins, above all one a failed test left
    writing to the shared graph (it would race the next test's clear). Those still running at teardown are
    terminated, killed if they ignore that, and waited for: an event, not a fixed pause."""
    import psutil

    before = {p.pid for p in psutil.Process().children(recursive=True)}
    # asked for now, so that it is torn down after this fixture's teardown
    tmp_path = request.getfixturevalue("tmp_path") if "tmp_path" in request.fixturenames else None
    yield
    from flows.child_guard import end_processes

    end_processes(_started_by_test(before, tmp_path), grace_s=15)


def pytest_sessionfinish(session, exitstatus):
    """No process the suite started outlives it: after every fixture is torn down, neither a child of
    this process nor any process whose command line names the run's temporary folder (servers, workers
    and Prefect API servers that tests started in their own homes and that detach from their parent) may
    still run, save the helpers that end with this process. Any that do are listed, stopped, and fail
    the run."""
    import psutil

    base = getattr(getattr(session.config, "_tmp_path_factory", None), "getbasetemp", lambda: None)()
    me = psutil.Process()
    left = {p.pid: p for p in me.children(recursive=True)}
    if base is not None:
        inside = str(base) + os.sep  # not a sibling run's folder whose number starts with ours
        for p in psutil.process_iter(["cmdline"]):
            if p.pid != me.pid and any(inside in part + os.sep for part in p.info["cmdline"] or ()):
                left[p.pid] = p
    own_helpers = (f"flows.child_guard {me.pid}", "multiprocessing.resource_tracker")  # see OWN_HELPERS
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    for p in left.values():
        try:
            if p.status() == psutil.STATUS_ZOMBIE or any(h in " ".join(p.cmdline()) for h in own_helpers):
                continue
            line = f"process left running after the suite: pid {p.pid}: {' '.join(p.cmdline())[:200]}"
            p.kill()
        except psutil.Error:  # ended meanwhile
            continue
        reporter.ensure_newline()
        reporter.write_line(line, red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
