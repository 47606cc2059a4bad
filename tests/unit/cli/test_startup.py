"""Quick commands import only what they use (issue 18: they must start and finish in 0.3 s; pandas, NumPy
and pyarrow alone cost about 0.4 s to import, and the neo4j driver imports them whenever installed; the
driver itself 0.13 s more)."""

from __future__ import annotations

import subprocess
import sys

import pytest

PROBE = """
import sys
from flows.cli.main import main
try:
    main({argv!r})
except SystemExit:
    pass
print("LOADED", sorted(m for m in ("pandas", "numpy", "pyarrow", "prefect", "torch", "neo4j", "yaml")
                       if m in sys.modules))
"""


@pytest.mark.parametrize("argv", [["queries"], ["db", "status"], ["query", "patient_studies", "-p", "patient_id=1"],
                                  ["stats"]])
def test_quick_commands_import_neither_driver_nor_dataframes(argv, tmp_path):
    # on the local server they read through its HTTP Query API (graph/store/query_api.py)
    env = {"PATH": "/usr/bin:/bin", "CXRKG_HOME": str(tmp_path), "CXRKG_BOLT_PORT": "7", "CXRKG_HTTP_PORT": "9"}
    out = subprocess.run([sys.executable, "-c", PROBE.format(argv=argv)], capture_output=True, text=True, env=env,
                         timeout=60).stdout
    assert "LOADED []" in out, out


def test_the_driver_imports_without_them_and_they_import_afterwards():
    code = ("import sys\nfrom graph.store.lean_driver import import_driver_without_dataframes\n"
            "import_driver_without_dataframes()\nassert 'neo4j' in sys.modules and 'pandas' not in sys.modules\n"
            "import pandas\nprint('ok', pandas.__name__)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "ok pandas", done.stderr
