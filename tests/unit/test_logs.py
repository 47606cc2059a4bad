"""Library logs go to CXRKG_HOME/logs/cxrkg.log, not the terminal (no Neo4j needed)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SCRIPT = """
import logging, sys
from pathlib import Path
from flows.logs import route_library_logs
log_file = route_library_logs(Path(sys.argv[1]))
from prefect import flow  # noqa: F401  (what every flow module imports; it configures logging)
from prefect.logging import get_logger
get_logger("prefect.task_runs").info("a task said something")
logging.getLogger("some.library").warning("a library warned")
print(log_file)
"""


def test_prefect_and_library_logs_land_in_the_file(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_LOGGING")}
    run = subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path)], capture_output=True, text=True, env=env,
                         timeout=120)
    assert run.returncode == 0, run.stderr
    assert "a task said something" not in run.stderr + run.stdout and "a library warned" not in run.stderr
    log = Path(run.stdout.strip().splitlines()[-1]).read_text()
    assert "a task said something" in log and "a library warned" in log
