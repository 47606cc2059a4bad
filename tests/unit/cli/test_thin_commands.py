"""Commands are thin (issue 53): a command function of flows/cli parses, calls a library or flow function and
prints. Counted by ``ast``: every statement in a command's body (nested ones too; its docstring and imports
not), for each function registered with ``@....command(...)`` or ``@....callback(...)``. The work itself
lives in graph/, gnn/ or flows/ with its own tests."""

from __future__ import annotations

import ast
from pathlib import Path

CLI = Path(__file__).resolve().parents[3] / "flows" / "cli"
#: the most statements a command function may hold
MAX_STATEMENTS = 15


def _registers(decorator: ast.expr) -> bool:
    return (isinstance(decorator, ast.Call) and isinstance(decorator.func, ast.Attribute)
            and decorator.func.attr in ("command", "callback"))


def statements(function: ast.FunctionDef) -> int:
    """The statements of a function's body, nested ones included; its docstring and imports left out."""
    body = function.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    return sum(isinstance(node, ast.stmt) and not isinstance(node, (ast.Import, ast.ImportFrom))
               for top in body for node in ast.walk(top))


def command_functions(source: str) -> dict[str, ast.FunctionDef]:
    """The functions a module's source registers as commands or group callbacks, by name."""
    return {node.name: node for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.FunctionDef) and any(_registers(d) for d in node.decorator_list)}


def test_the_scan_sees_every_command_module():
    found = {p.name: command_functions(p.read_text(encoding="utf-8")) for p in sorted(CLI.glob("*.py"))}
    assert sum(len(f) for f in found.values()) >= 30
    assert {"query", "stats"} <= set(found["query.py"]) and "eval_reports" in found["evaluation.py"]


def test_no_command_holds_more_than_a_few_statements():
    fat = {f"{p.name}:{name}": n for p in sorted(CLI.glob("*.py"))
           for name, f in command_functions(p.read_text(encoding="utf-8")).items()
           if (n := statements(f)) > MAX_STATEMENTS}
    assert not fat, f"move the work of these commands into a library or flow function: {fat}"


def test_a_fat_command_is_caught():
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_STATEMENTS + 1))
    source = f'@app.command()\ndef fat() -> None:\n    """doc"""\n    import os\n{body}\n'
    assert statements(command_functions(source)["fat"]) == MAX_STATEMENTS + 1
    nested = '@sub_app.command("x")\ndef thin():\n    if a:\n        b()\n    else:\n        c()\n'
    assert statements(command_functions(nested)["thin"]) == 3
    assert command_functions("def helper():\n    pass\n") == {}
