"""The one settings object: defaults, validation with a clear error, and the CLI's handling (no Neo4j)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from graph.settings import ConfigError, local_server_settings, neo4j_settings, settings

VARS = ("CXRKG_HOME", "CXRKG_BOLT_PORT", "CXRKG_HTTP_PORT", "NEO4J_URI", "NEO4J_USER", "NEO4J_PASSWORD",
        "NEO4J_DATABASE", "CXRKG_NEO4J_HEAP", "CXRKG_LOG_LEVEL", "CXRKG_NEO4J_TX_TIMEOUT", "CXRKG_NEO4J_LOCK_TIMEOUT",
        "CXRKG_NEO4J_LOCK_RETRY", "CXRKG_NEO4J_RECONNECT")


@pytest.fixture()
def env(monkeypatch):
    for name in VARS:
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_defaults_and_empty_values(env, tmp_path):
    env.setenv("CXRKG_BOLT_PORT", "")  # empty counts as unset
    assert settings().bolt_port == 7687 and settings().log_level == "INFO"
    assert (settings().neo4j_tx_timeout, settings().neo4j_lock_timeout) == ("10m", "2m")
    assert settings().neo4j_reconnect == "10s"
    env.setenv("CXRKG_HOME", str(tmp_path))
    env.setenv("CXRKG_HTTP_PORT", "7999")
    local = local_server_settings()
    assert local.home == tmp_path.resolve() and local.http_port == 7999
    assert neo4j_settings().uri == "bolt://127.0.0.1:7687" and not neo4j_settings().external


@pytest.mark.parametrize("name, value, says", [
    ("CXRKG_BOLT_PORT", "abc", "CXRKG_BOLT_PORT='abc'"),
    ("CXRKG_HTTP_PORT", "70000", "CXRKG_HTTP_PORT='70000'"),
    ("CXRKG_NEO4J_HEAP", "lots", "CXRKG_NEO4J_HEAP='lots'"),
    ("CXRKG_LOG_LEVEL", "LOUD", "CXRKG_LOG_LEVEL='LOUD'"),
    ("CXRKG_NEO4J_LOCK_TIMEOUT", "0", "CXRKG_NEO4J_LOCK_TIMEOUT='0'"),  # no timeout is not offered
    ("CXRKG_NEO4J_TX_TIMEOUT", "5 minutes", "CXRKG_NEO4J_TX_TIMEOUT='5 minutes'"),
    ("CXRKG_NEO4J_LOCK_RETRY", "10", "CXRKG_NEO4J_LOCK_RETRY='10'"),  # a duration needs its unit
    ("CXRKG_NEO4J_RECONNECT", "0s", "CXRKG_NEO4J_RECONNECT='0s'"),  # never giving up is not offered
    ("NEO4J_URI", "bolt://elsewhere:7687", "missing NEO4J_USER, NEO4J_PASSWORD"),
])
def test_bad_values_name_the_variable(env, name, value, says):
    env.setenv(name, value)
    with pytest.raises(ConfigError, match="bad cxrkg setting") as info:
        settings()
    assert says in str(info.value)


def test_an_external_server_comes_whole(env):
    for name, value in (("NEO4J_URI", "neo4j://db:7687"), ("NEO4J_USER", "u"), ("NEO4J_PASSWORD", "p")):
        env.setenv(name, value)
    s = neo4j_settings()
    assert (s.uri, s.user, s.password, s.external) == ("neo4j://db:7687", "u", "p", True)


def test_the_cli_reports_a_bad_setting_without_a_traceback(tmp_path):
    run = subprocess.run([sys.executable, "-m", "flows.cli", "queries"], capture_output=True, text=True,
                         env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "CXRKG_BOLT_PORT": "abc"}, timeout=120,
                         cwd=Path(__file__).resolve().parents[2])
    assert run.returncode == 1 and "CXRKG_BOLT_PORT" in run.stderr and "Traceback" not in run.stderr
