"""The ``cxrkg`` command line: one small module per group of commands, sharing :mod:`flows.cli.common`.

Quick commands (``db``, ``queries``, ``query``, ``stats``, ``synth``) never import Prefect: importing it
costs about a second and its temporary API server about ten. Only the flow commands do, inside the command.
The command modules register on :data:`app` when its commands are first read (:class:`flows.cli.app.LazyApp`):
``cxrkg NAME`` imports NAME's module only.
"""

from flows.cli.app import app

__all__ = ["app"]
