"""A wheel of the project installs into a fresh virtual environment and works from outside the checkout:
``cxrkg --help``, ``cxrkg queries`` and the files shipped as package data (no Java, no Neo4j)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _run(args: list, **kw) -> subprocess.CompletedProcess:
    run = subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=300, **kw)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    return run


def test_wheel_installs_and_runs_outside_the_checkout(tmp_path):
    # built from a copy: setuptools writes build/ and *.egg-info next to the sources
    src = tmp_path / "src"
    shutil.copytree(REPO, src, ignore=shutil.ignore_patterns(".git", ".venv", ".cxrkg", "target", "build", "*.egg-info",
                                                              "__pycache__", ".pytest_cache"))
    _run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation", "-w", tmp_path / "dist",
          src])
    wheel = next((tmp_path / "dist").glob("cxrkg-*.whl"))
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", venv])
    _run([venv / "bin" / "python", "-m", "pip", "install", "--quiet", "--no-deps", "--no-index", wheel])
    # the dependencies come from this environment's site-packages (a .pth line: its own .pth files, such as
    # the editable install of the checkout, are not read), so nothing is downloaded
    site = Path(_run([venv / "bin" / "python", "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"])
                .stdout.strip())
    (site / "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    env = {"PATH": f"{venv / 'bin'}:/usr/bin:/bin", "HOME": str(tmp_path), "CXRKG_HOME": str(tmp_path / "home")}
    work = tmp_path / "elsewhere"
    work.mkdir()

    assert "ingest" in _run([venv / "bin" / "cxrkg", "--help"], env=env, cwd=work).stdout
    assert "new_finding_patients" in _run([venv / "bin" / "cxrkg", "queries"], env=env, cwd=work).stdout
    where = _run([venv / "bin" / "python", "-c",
                  "import graph, flows, gnn.features; from graph.runtime.server import SERVER_DIR; "
                  "from graph.extract.eval.evaluate import DEFAULT_CHANGE_LABELS; from graph.vocabulary import vocabulary; "
                  "print(graph.__file__); print((SERVER_DIR / 'pom.xml').is_file(), DEFAULT_CHANGE_LABELS.is_file(), "
                  "(Path(gnn.__file__).parent / 'configs' / 'gnn.yaml').is_file(), len(vocabulary().findings) > 50)"
                  .replace("Path(", "__import__('pathlib').Path(")], env=env, cwd=work).stdout.split()
    assert where[0].startswith(str(site)) and where[1:] == ["True"] * 4
