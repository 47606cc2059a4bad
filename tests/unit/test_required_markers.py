"""The markers of what a test needs and CXRKG_REQUIRE (tests/fixtures/needs.py), in a pytest run of their own:
a test whose need is missing is skipped with the reason; under CXRKG_REQUIRE that skip fails the run, while a
skip of an unmarked test stays a skip; an unknown marker name is refused."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fixtures.needs import required_markers

REPO = Path(__file__).resolve().parents[2]

SAMPLE = '''
import pytest


@pytest.mark.java
def test_starts_a_server():
    pass


@pytest.mark.network
def test_reads_the_registry():
    pytest.skip("registry unreachable")


@pytest.mark.network
def test_has_what_it_needs():
    pass


def test_skips_for_a_reason_of_its_own():
    pytest.skip("not here")
'''


def _run(tmp_path: Path, require: str) -> tuple[int, dict[str, int], str]:
    """pytest on SAMPLE with the plugin, no java on PATH; returns (exit code, {outcome: count}, output)."""
    (tmp_path / "conftest.py").write_text('pytest_plugins = ["tests.fixtures.needs"]\n')
    (tmp_path / "test_sample.py").write_text(SAMPLE)
    (tmp_path / "pytest.ini").write_text("[pytest]\nmarkers =\n    java: Java\n    network: the registry\n")
    env = {k: v for k, v in os.environ.items() if k not in ("CXRKG_REQUIRE", "NEO4J_URI", "PYTEST_ADDOPTS")}
    env.update(PYTHONPATH=str(REPO), CXRKG_REQUIRE=require, PATH=str(tmp_path / "no-java-here"))
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rfEs", "-p", "no:cacheprovider", "--rootdir",
                           str(tmp_path), "-c", str(tmp_path / "pytest.ini"), str(tmp_path / "test_sample.py")],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    out = done.stdout + done.stderr
    counts = {word: int(n) for n, word in re.findall(r"(\d+) (passed|failed|skipped|errors?)", out)}
    return done.returncode, counts, out


def test_a_missing_need_is_a_skip_with_its_reason(tmp_path):
    code, counts, out = _run(tmp_path, "")
    assert code == 0 and counts == {"passed": 1, "skipped": 3}, out
    assert "needs Java 17+ on PATH" in out and "registry unreachable" in out


def test_required_markers_turn_their_skips_into_failures(tmp_path):
    code, counts, out = _run(tmp_path, "java,network")
    # the java test fails in its setup (an error), the network test in its call; the unmarked skip stays
    assert code == 1 and counts == {"passed": 1, "failed": 1, "error": 1, "skipped": 1}, out
    assert "CXRKG_REQUIRE=java,network requires the network tests to run here: registry unreachable" in out
    assert "requires the java tests to run here: needs Java 17+" in out


def test_an_unknown_marker_name_is_refused():
    assert required_markers(" java, extract ,") == {"java", "extract"} and required_markers(None) == frozenset()
    with pytest.raises(pytest.UsageError, match="unknown marker gpu .known: java, network, extract"):
        required_markers("java,gpu")  # raised from pytest_configure: the run stops before any test (exit 4)
