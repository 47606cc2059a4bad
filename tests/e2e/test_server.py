"""The local Neo4j server: start, log in, persist data across a restart, stop.

Starts its own server in a temporary CXRKG_HOME on free ports, independent of the session server in
conftest.py. Needs Java 17+ (and Maven when graph/neo4j_server/target is not built yet): the ``java`` marker.
"""

from __future__ import annotations

import socket
import stat
import urllib.request

import neo4j
import pytest
from neo4j.exceptions import AuthError

from graph.runtime.server import LocalNeo4jServer
from graph.settings import local_server_settings


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow  # 25-30 s idle, ~50 s on a busy machine: two cold starts and two stops
@pytest.mark.java
def test_local_server_lifecycle(tmp_path, monkeypatch):
    monkeypatch.setenv("CXRKG_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CXRKG_BOLT_PORT", str(_free_port()))
    monkeypatch.setenv("CXRKG_HTTP_PORT", str(_free_port()))
    settings = local_server_settings()
    server = LocalNeo4jServer(settings, heap="1g", page_cache="256m")
    assert not server.status().running

    server.start()
    try:
        assert stat.S_IMODE(settings.password_file.stat().st_mode) == 0o600
        password = settings.password_file.read_text().strip()
        status = server.status()
        assert status.running and status.pid and status.version.startswith("5.26.")
        assert settings.pid_file.read_text().strip() == str(status.pid)
        server.start()  # already running: a no-op
        assert server.status().pid == status.pid

        with neo4j.GraphDatabase.driver(settings.bolt_uri, auth=("neo4j", password)) as driver:
            assert driver.execute_query("RETURN 1 AS one").records[0]["one"] == 1
            driver.execute_query("CREATE (:Probe {name: $name})", name="survives restarts")
        for wrong in ("neo4j", password + "x"):
            with neo4j.GraphDatabase.driver(settings.bolt_uri, auth=("neo4j", wrong)) as driver:
                with pytest.raises(AuthError):
                    driver.verify_connectivity()

        with urllib.request.urlopen(f"http://127.0.0.1:{settings.http_port}/", timeout=10) as response:
            assert b'"neo4j_edition":"community"' in response.read()
    finally:
        server.stop()
    assert not server.status().running
    assert not settings.pid_file.exists()
    assert "LocalNeo4j: stopped" in settings.log_file.read_text()

    server.start()
    try:
        assert settings.password_file.read_text().strip() == password
        with neo4j.GraphDatabase.driver(settings.bolt_uri, auth=("neo4j", password)) as driver:
            records = driver.execute_query("MATCH (p:Probe) RETURN p.name AS name").records
        assert [r["name"] for r in records] == ["survives restarts"]
    finally:
        server.stop()
    assert not server.status().running


