"""The ``cxrkg`` typer app every command module registers on."""

from __future__ import annotations

import typer

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="cxrkg: a longitudinal chest X-ray knowledge graph in Neo4j.")


# commands that start no child process (the local server of `db start` runs in a session of its own)
_NO_CHILDREN = {"db", "eval-episodes", "queries", "query", "stats", "synth", None}


@app.callback()
def _route_logs(ctx: typer.Context,
                _debug: bool = typer.Option(False, "--debug", help="show the traceback of a failure (also "
                                                                   "CXRKG_DEBUG=1)")) -> None:
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
    if ctx.invoked_subcommand not in _NO_CHILDREN:
        from flows.child_guard import start_guard

        start_guard()  # Prefect's temporary server and parse workers end with this command, even when killed
