"""``cxrkg db start|stop|status``: the local Neo4j."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from flows.cli.app import command_group
from flows.cli.common import console, local_server
from graph.errors import ExitCode

db_app = command_group("db", "The local Neo4j server cxrkg runs itself.")


@db_app.command("start")
def db_start(fresh: bool = typer.Option(False, help="start with an empty database when this home's data "
                                                         "folder is gone (refused otherwise)")) -> None:
    """Start the local Neo4j (building it with Maven on first use)."""
    server = local_server()
    server.start(fresh=fresh)  # ServerError: one error line
    _warm_plans()
    s = server.status()
    console.print(f"Neo4j running (pid {s.pid}) at {s.bolt_uri}; data in {server.settings.data_dir}; "
                  f"password in {server.settings.password_file}")


def _warm_plans() -> None:
    """Plan the catalogue's queries now, while the user waits for the server anyway (issue 18)."""
    from graph.store import shared_store
    from graph.store.queries import warm_plans

    warm_plans(shared_store())


@db_app.command("stop")
def db_stop() -> None:
    """Stop the local Neo4j."""
    local_server().stop()
    console.print("Neo4j stopped")


@db_app.command("status")
def db_status() -> None:
    """Say whether the local Neo4j runs, where, and its version."""
    s = local_server().status()
    console.print_json(json.dumps({k: str(v) if isinstance(v, Path) else v for k, v in vars(s).items()}))
    if not s.running:
        raise typer.Exit(ExitCode.SERVER_STOPPED)
