"""The one line of a server lost mid-command: it names the server, the cause, the bound and what to do."""

from __future__ import annotations

from graph.store.errors import lost_message


def test_a_refused_local_server_says_to_start_it_and_run_again(monkeypatch):
    monkeypatch.setenv("CXRKG_NEO4J_RECONNECT", "7s")
    driver_text = ("Couldn't connect to 127.0.0.1:7730 (resolved to ('127.0.0.1:7730',)):\nFailed to establish "
                   "connection to ResolvedIPv4Address(('127.0.0.1', 7730)) (reason [Errno 111] Connection refused)")
    line = lost_message("bolt://127.0.0.1:7730", OSError(driver_text), external=False)
    assert "\n" not in line and line.startswith("lost Neo4j at bolt://127.0.0.1:7730 mid-command (connection refused")
    assert "CXRKG_NEO4J_RECONNECT, 7s" in line and "`cxrkg db start`" in line and "run the same command again" in line


def test_an_external_server_is_not_started_by_cxrkg():
    line = lost_message("neo4j+s://db.example.org", OSError("defunct connection"), external=True)
    assert "the connection was lost" in line and "Check the server" in line and "cxrkg db start" not in line
