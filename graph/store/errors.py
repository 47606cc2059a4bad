"""The store's connection errors, in a module without the driver: the Query API reader of the quick
commands (:mod:`graph.store.query_api`) raises them too, and must not import the driver to do so."""

from __future__ import annotations

import re

from graph.errors import CxrkgError
from graph.settings import settings


class GraphUnavailable(CxrkgError, RuntimeError):
    """Raised when the configured Neo4j cannot be reached or refuses the credentials."""


class ServerLost(GraphUnavailable):
    """The server stopped answering while a command used it (refused or reset connections past
    ``CXRKG_NEO4J_RECONNECT``); what was committed before stays, the rest was rolled back."""


class LoginRefused(GraphUnavailable):
    """The server answered but refused the credentials."""


def lost_message(uri: str, exc: Exception, external: bool) -> str:
    """The one line of a server that stopped answering mid-command: which, why, and what to do."""
    reason = re.search(r"\[Errno \d+\] ([^)]+)", str(exc))
    why = reason.group(1).lower() if reason else "the connection was lost"
    todo = "Check the server" if external else "Start it (`cxrkg db start`)"
    return (f"lost Neo4j at {uri} mid-command ({why}, for longer than CXRKG_NEO4J_RECONNECT, "
            f"{settings().neo4j_reconnect}); what was committed stays, the rest was rolled back. {todo} "
            "and run the same command again: loads are idempotent")
