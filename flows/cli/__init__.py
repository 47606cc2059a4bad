"""The ``cxrkg`` command line: one small module per group of commands, sharing :mod:`flows.cli.common`.

Quick commands (``db``, ``queries``, ``query``, ``stats``, ``synth``) never import Prefect: importing it
costs about a second and its temporary API server about ten. Only the flow commands do, inside the command.
"""

from flows.cli import data, db, demo, episodes, export, extract, forecast, gnn, query, questions, schedule  # noqa: F401  (they register their commands)
from flows.cli.app import app

__all__ = ["app"]
