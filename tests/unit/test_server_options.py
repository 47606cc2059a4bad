"""The local server's JVM options (no Java started): young generation, G1 regions, overrides, bad sizes."""

from __future__ import annotations

import pytest


def test_jvm_options_size_the_young_generation_and_take_overrides(monkeypatch, tmp_path):
    from graph.runtime.server import LocalNeo4jServer, ServerError
    from graph.settings import local_server_settings

    monkeypatch.setenv("CXRKG_HOME", str(tmp_path))
    monkeypatch.delenv("CXRKG_NEO4J_JVM_OPTS", raising=False)
    opts = LocalNeo4jServer(local_server_settings(), heap="2g").jvm_options()
    assert opts[:2] == ["-Xmx2g", "-Xmn1024m"] and {"-XX:+UseG1GC", "-XX:G1HeapRegionSize=16m"} <= set(opts)
    monkeypatch.setenv("CXRKG_NEO4J_JVM_OPTS", "-XX:+UseParallelGC -Xmn300m")
    opts = LocalNeo4jServer(local_server_settings(), heap="1536m").jvm_options()
    assert not any(o.startswith(("-XX:+UseG1GC", "-XX:G1")) for o in opts) and opts.count("-Xmn300m") == 1 and not any(o == "-Xmn768m" for o in opts)
    monkeypatch.delenv("CXRKG_NEO4J_JVM_OPTS")
    with pytest.raises(ServerError, match="memory size"):
        LocalNeo4jServer(local_server_settings(), heap="lots").jvm_options()
