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
    from graph.settings import local_server_settings, neo4j_settings
    from graph.server import LocalNeo4jServer

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
        if started_here:
            server.stop()


@pytest.fixture(scope="session")
def prefect_harness():
    """Prefect's own test harness (a temporary database and API), once per session."""
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(server_startup_timeout=120):
        yield


@pytest.fixture()
def store(neo4j_server):
    """An empty graph with schema and vocabulary, through the process-wide store the flows use."""
    from graph.store import reset_shared_store, shared_store
    from graph.vocabulary import vocabulary

    reset_shared_store()
    s = shared_store()
    s.clear()
    s.ensure_schema(vocabulary())
    yield s
    reset_shared_store()


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
    # helpers that end by themselves right after this process: the watcher of in-process `cxrkg` commands
    # (flows/child_guard.py) and multiprocessing's resource tracker
    own_helpers = (f"flows.child_guard {me.pid}", "multiprocessing.resource_tracker")
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
