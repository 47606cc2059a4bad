"""The store's connection errors, in a module without the driver: the Query API reader of the quick
commands (:mod:`graph.store.query_api`) raises them too, and must not import the driver to do so."""

from __future__ import annotations

from graph.errors import CxrkgError


class GraphUnavailable(CxrkgError, RuntimeError):
    """Raised when the configured Neo4j cannot be reached or refuses the credentials."""


class ServerLost(GraphUnavailable):
    """The server stopped answering while a command used it (refused or reset connections past
    ``CXRKG_NEO4J_RECONNECT``); what was committed before stays, the rest was rolled back."""


class LoginRefused(GraphUnavailable):
    """The server answered but refused the credentials."""
