"""Quick commands import only what they use (issue 18: they must start and finish in 0.3 s; pandas, NumPy
and pyarrow alone cost about 0.4 s to import, and the neo4j driver imports them whenever installed; the
driver itself 0.13 s more). Issue 43: ``cxrkg NAME`` imports only the command module that registers NAME
(flows/cli/app.py), so neither the demo's psutil nor rich's Markdown (typer's help) comes along. Checked by
what a dispatch leaves in ``sys.modules``, not by timing (benchmarks/cli_benchmark.py times it)."""

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
print("LOADED", sorted(m for m in HEAVY if m in sys.modules))
print("COMMAND MODULES", sorted(m for m in sys.modules if m.startswith("flows.cli.") and m not in SHARED))
"""
HEAVY = ("pandas", "numpy", "pyarrow", "prefect", "torch", "neo4j", "yaml", "psutil", "rich.markdown", "markdown_it",
         "typer.rich_utils",
         # a few ms each, for nothing the quick commands use: urllib.request over http.client, the catalogue's
         # folder through importlib.resources, rich's emoji table
         "urllib.request", "importlib.resources", "rich._emoji_codes")
SHARED = ("flows.cli.app", "flows.cli.common", "flows.cli.errors", "flows.cli.main")


@pytest.mark.parametrize("argv, module, uses", [
    (["queries"], "query", ()),
    (["db", "status"], "db", ("psutil",)),  # the pid check of the server
    (["query", "patient_studies", "-p", "patient_id=1"], "query", ()),
    (["stats"], "query", ()),
])
def test_quick_commands_import_neither_driver_nor_dataframes(argv, module, uses, tmp_path):
    """A quick command imports its own command module and nothing heavy it does not use."""
    # on the local server they read through its HTTP Query API (graph/store/query_api.py)
    env = {"PATH": "/usr/bin:/bin", "CXRKG_HOME": str(tmp_path), "CXRKG_BOLT_PORT": "7", "CXRKG_HTTP_PORT": "9"}
    heavy = tuple(m for m in HEAVY if m not in uses)
    code = f"HEAVY, SHARED = {heavy!r}, {SHARED!r}\n" + PROBE.format(argv=argv)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60).stdout
    assert "LOADED []" in out, out
    assert f"COMMAND MODULES ['flows.cli.{module}']" in out, out


def _module_of(typer_app) -> str:
    """The module that registers a typer app's commands (a group's first command, or its first subgroup's)."""
    if typer_app.registered_commands:
        return typer_app.registered_commands[0].callback.__module__
    return _module_of(typer_app.registered_groups[0].typer_instance)


def test_the_command_map_names_each_command_and_the_module_that_registers_it():
    """COMMAND_MODULES is complete and right, and in the order help lists the commands."""
    import typer.main

    from flows.cli import app
    from flows.cli.app import COMMAND_MODULES

    registered = {(c.name or typer.main.get_command_name(c.callback.__name__)): c.callback.__module__
                  for c in app.registered_commands}
    registered |= {g.name: _module_of(g.typer_instance) for g in app.registered_groups}
    assert {name: f"flows.cli.{module}" for name, module in COMMAND_MODULES.items()} == registered
    assert list(typer.main.get_command(app).commands) == list(COMMAND_MODULES)  # help lists them in this order


def test_help_lists_every_command_whatever_was_imported_first():
    """Importing one command module first changes neither the commands nor their order."""
    # a command module imported on its own (as `cxrkg demo` does) registers before the others
    code = ("import flows.cli.demo, typer.main\nfrom flows.cli import app\n"
            "print(list(typer.main.get_command(app).commands))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    from flows.cli.app import COMMAND_MODULES

    assert done.stdout.strip() == str(list(COMMAND_MODULES)), done.stderr


def test_the_driver_imports_without_them_and_they_import_afterwards():
    """The driver loads without pandas, and pandas still imports after it."""
    code = ("import sys\nfrom graph.store.lean_driver import import_driver_without_dataframes\n"
            "import_driver_without_dataframes()\nassert 'neo4j' in sys.modules and 'pandas' not in sys.modules\n"
            "import pandas\nprint('ok', pandas.__name__)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "ok pandas", done.stderr
