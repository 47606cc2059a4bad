"""The documented journeys, run as written: every shell block marked ``journey=NAME`` in README.md, docs/*.md
or gnn/README.md (tests/fixtures/doc_blocks.py) runs in bash, unchanged, as a new user would type it:

- a fresh ``CXRKG_HOME`` and free ports for its own local Neo4j (settings, not edits of the commands);
- a scratch folder laid out like a clone's root (the repository's folders linked in), so relative paths
  such as ``gnn/configs/gnn-smoke.yaml`` resolve as they do for the user;
- ``set -e``: the first step that fails ends the journey, named with its output.

Then the output a user would look at is checked, journey by journey (:data:`CHECKS`). Every server and
process a journey started is stopped before the next test begins, even when it failed.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fixtures.doc_blocks import REPO, SHELL_BLOCKS_OF_JOURNEYS

pytestmark = [pytest.mark.slow, pytest.mark.java]
VENV_BIN = Path(sys.executable).parent
JOURNEY_SECONDS = 1200
# what each journey needs beyond Java (tests/fixtures/needs.py): the NIH and IU journeys read the wheel
NEEDS = {"forecaster": ["network"], "diffvqa": ["network"], "episodes": ["network"], "bulk": ["network"],
         "extraction": ["network", "extract"]}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _numbers(pattern: str, text: str) -> list[int]:
    return [int(m.replace(",", "")) for m in re.findall(pattern, text)]


def _check_progression(out: str, work: Path) -> None:
    assert re.search(r"model \S+ -> .*model\.pt", out), "train registered no model"
    assert "pair_gbt" in out and "gnn" in out, "evaluate printed no comparison with the baselines"
    assert (work / "gnn-evaluation" / "evaluation.json").is_file()
    assert _numbers(r"; ([\d,]+) gnn edges written", out)[0] > 0, "predict --write-back wrote no edge"
    assert re.search(r"patient \S+: study \S+ vs \S+", out), "compare printed no table"
    assert re.search(r"^\d+ row\(s\)$", out, re.M), "query printed no row count"


def _check_forecaster(out: str, work: Path) -> None:
    assert (work / "forecaster.pt").is_file(), "--save-model wrote no file"
    assert re.search(r"forecast \S+", out) and "p(present)" in out, "compare --forecaster printed no forecast"
    assert _numbers(r"; ([\d,]+) gnn edges written", out)[0] > 0, "predict --forecaster wrote no edge"
    assert int(re.findall(r"^(\d+) row\(s\)$", out, re.M)[-1]) > 0, "stated_vs_predicted found no row"


def _check_diffvqa(out: str, work: Path) -> None:
    asked = _numbers(r"([\d,]+) questions for [\d,]+ pairs", out)[0]
    assert asked > 0 and _numbers(r"([\d,]+) questions answered, 0 rejected", out)[0] == asked
    assert "Medical-Diff-VQA scores" in out and "bleu" in out.lower()
    assert "basis:" in out, "ask printed no answer"


def _check_lunguage(out: str, work: Path) -> None:
    assert _numbers(r"([\d,]+) Lunguage rows written", out)[0] > 0
    assert re.search(r"episode pairs\s+│?\s*1\.0\s", out), "the graph's episodes do not agree with the file's"


def _check_extraction(out: str, work: Path) -> None:
    assert _numbers(r"extract \(rules\): ([\d,]+) reports seen", out)[0] > 3900
    assert (work / "runs" / "iu" / "doc_mapping.csv").is_file()
    assert "micro" in out.lower(), "eval extract printed no micro-F1"


def _check_drop_folder(out: str, work: Path) -> None:
    assert _numbers(r"([\d,]+) files loaded, 0 unchanged, 0 rejected", out)[0] > 0
    left = list((work / "drop").rglob("*.json"))  # the rejection report is in CXRKG_HOME/rejected
    assert list((work / "archive").rglob("*_SceneGraph.json")) and not left, "committed files were not archived"
    assert re.search(r"Study\s+│?\s*[1-9]", out), "stats shows no study"


def _check_bulk(out: str, work: Path) -> None:
    assert "input 2" in out and "input 3" in out, "the --also inputs are not in the summary"
    assert "inconsistent" not in out


def _check_another_neo4j(out: str, work: Path) -> None:
    assert _numbers(r"files loaded\s+│\s+(\d+)", out)[0] > 0
    assert re.search(r"Patient\s+│?\s*5\b", out), "stats through NEO4J_URI shows no patients"


def _check_episodes(out: str, work: Path) -> None:
    assert "finding_episodes" in out and "recurrent_findings" in out and "episode_durations" in out
    assert all(n > 0 for n in _numbers(r"^(\d+) row\(s\)$", out)[:2]), "patient 13 has no effusion episode"


def _check_unmapped(out: str, work: Path) -> None:
    assert "unmapped" in out and "kind,name,note" in out


def _check_report_scoring(out: str, work: Path) -> None:
    precision = [float(x) for x in re.findall(r"temporal precision \(supported / stated\): ([\d.]+)", out)]
    assert len(precision) == 2 and precision[0] >= 0.95, f"the references are not at the maximum: {precision}"
    assert precision[1] < precision[0] - 0.2, f"copy-prior's changes are not worse than the references': {precision}"
    assert (work / "reference-scores.csv").is_file() and (work / "per-finding.png").is_file()
    assert len((work / "contradicted.csv").read_text().splitlines()) > 1, "copy-prior contradicted nothing"


CHECKS = {"progression": _check_progression, "forecaster": _check_forecaster, "diffvqa": _check_diffvqa,
          "lunguage": _check_lunguage, "extraction": _check_extraction, "drop-folder": _check_drop_folder,
          "bulk": _check_bulk, "another-neo4j": _check_another_neo4j, "episodes": _check_episodes,
          "diffvqa-unmapped": _check_unmapped, "report-scoring": _check_report_scoring}


def test_every_journey_has_its_checks():
    assert set(SHELL_BLOCKS_OF_JOURNEYS) == set(CHECKS)


def _marks(name: str) -> list:
    return [getattr(pytest.mark, need) for need in NEEDS.get(name, [])]


def _clone_root(work: Path) -> None:
    """``work`` as a clone's root: the repository's top-level entries linked in (they are read, never
    written, by the journeys)."""
    work.mkdir()
    for entry in REPO.iterdir():
        if not entry.name.startswith(".") and entry.name not in ("tests",):
            (work / entry.name).symlink_to(entry)


def _environment(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CXRKG_", "NEO4J_", "PREFECT_"))}
    env.update(CXRKG_HOME=str(home), CXRKG_BOLT_PORT=str(_free_port()), CXRKG_HTTP_PORT=str(_free_port()),
               PATH=f"{VENV_BIN}{os.pathsep}{env.get('PATH', '')}", COLUMNS="160", NO_COLOR="1")
    for kept in ("CXRKG_IU_CACHE", "CXRKG_RADGRAPH_CACHE"):  # caches of downloads, not state
        if kept in os.environ:
            env[kept] = os.environ[kept]
    return env


def _stop_servers(tmp_path: Path, env: dict[str, str]) -> None:
    """Stop the local server of every home the journey made (its own, and any it named); any other process
    naming the journey's folder is ended by tests/conftest.py after the test."""
    for password in tmp_path.rglob("password"):
        subprocess.run([str(VENV_BIN / "cxrkg"), "db", "stop"], env={**env, "CXRKG_HOME": str(password.parent)},
                       capture_output=True, timeout=180)


@pytest.mark.parametrize("name", [pytest.param(n, marks=_marks(n)) for n in sorted(CHECKS)])
def test_journey_runs_as_written(name, tmp_path):
    block = SHELL_BLOCKS_OF_JOURNEYS[name][0]
    if "network" in NEEDS.get(name, []):
        from graph.datasets.wheel import WheelUnavailable, fetch_wheel

        try:
            fetch_wheel()
        except WheelUnavailable as exc:
            pytest.skip(f"needs the torchxrayvision wheel: {exc}")
    work, home = tmp_path / "work", tmp_path / "home"
    _clone_root(work)
    env = _environment(home)
    # a session of its own: a journey that overruns is ended with every process it started
    shell = subprocess.Popen(["bash", "-c", "set -euo pipefail -x\n" + block.text], cwd=work, env=env, text=True,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        stdout, stderr = shell.communicate(timeout=JOURNEY_SECONDS)
    except subprocess.TimeoutExpired:
        os.killpg(shell.pid, signal.SIGKILL)
        stdout, stderr = shell.communicate()
    finally:
        _stop_servers(tmp_path, env)
    out = stdout + stderr
    assert shell.returncode == 0, f"journey {name} ({block.where}) stopped with exit code {shell.returncode}:\n{out[-6000:]}"
    assert "Traceback" not in out and "error:" not in out, out[-6000:]
    try:
        CHECKS[name](out, work)
    except AssertionError as exc:
        raise AssertionError(f"journey {name} ({block.where}): {exc}\n{out[-6000:]}") from None
