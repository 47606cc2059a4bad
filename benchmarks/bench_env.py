"""What every benchmark does first: run against its own local Neo4j, never a user's database."""

from __future__ import annotations

import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def use_dedicated_server(home: str, bolt_port: int, http_port: int) -> None:
    """Point cxrkg at ``.cxrkg/<home>`` with these ports (unless the caller set them) and drop ``NEO4J_*``,
    so a benchmark that clears its graph can never clear a user's external database. Also makes the
    checkout importable when the script runs from anywhere."""
    sys.path.insert(0, str(REPO))
    os.environ.setdefault("CXRKG_HOME", str(REPO / ".cxrkg" / home))
    os.environ.setdefault("CXRKG_BOLT_PORT", str(bolt_port))
    os.environ.setdefault("CXRKG_HTTP_PORT", str(http_port))
    for var in ("NEO4J_URI", "NEO4J_USER", "NEO4J_PASSWORD", "NEO4J_DATABASE"):
        os.environ.pop(var, None)
