"""The ``cxrkg`` typer app every command module registers on."""

from __future__ import annotations

import typer

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="cxrkg: a longitudinal chest X-ray knowledge graph in Neo4j.")


@app.callback()
def _route_logs() -> None:
    # before any command imports Prefect: its logs go to CXRKG_HOME/logs/cxrkg.log (flows/logs.py)
    from flows.cli.common import fail
    from flows.logs import route_library_logs
    from graph.settings import ConfigError, local_server_settings, settings

    try:
        route_library_logs(local_server_settings().home, settings().log_level)
    except ConfigError as exc:
        fail(str(exc))
    except OSError:
        pass  # CXRKG_HOME not writable: library logs stay on the terminal; commands that need the folder say so
