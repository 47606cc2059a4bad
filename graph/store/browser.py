"""A statement with its parameters as a script that Neo4j Browser runs as pasted: one ``:param name => value``
line per parameter (Browser's parameter command, which evaluates the value as a Cypher expression), then the
statement ending in a semicolon. ``cxrkg diffvqa ask --show-cypher`` prints it."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def cypher_literal(value: Any) -> str:
    """``value`` written as a Cypher literal: strings single-quoted with backslash escapes, lists, maps
    (keys back-quoted where they are not plain names), numbers, booleans and null.

    Raises:
        TypeError: a value Cypher has no literal for (a date, a set, an object), or a NaN or infinite float.
    """
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise TypeError(f"no Cypher literal for {value!r}")
        return repr(value)
    if isinstance(value, str):
        return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(cypher_literal(v) for v in value) + "]"
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{_key(k)}: {cypher_literal(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"no Cypher literal for a {type(value).__name__}")


def _key(name: Any) -> str:
    text = str(name)
    return text if _PLAIN_KEY.fullmatch(text) else "`" + text.replace("`", "``") + "`"


def browser_script(statement: str, params: Mapping[str, Any]) -> str:
    """The ``:param`` lines for ``params`` (in order), then ``statement`` stripped and ending in ``;``."""
    lines = [f":param {_key(name)} => {cypher_literal(value)}" for name, value in params.items()]
    return "\n".join(lines + [statement.strip().rstrip(";") + ";"])
