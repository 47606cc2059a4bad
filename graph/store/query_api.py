"""Read-only Cypher over Neo4j's HTTP Query API, for the quick commands against the local server.

Why not the driver here: importing the neo4j driver takes about 0.13 s before it sends a byte (it builds
calendar tables in ``neo4j.time`` and packstream lookup tables at import), and a read through it costs a
Bolt handshake, a login and, for a catalogue query, an ``EXPLAIN`` round trip to prove the query reads only;
issue 18 gives a whole ``cxrkg query`` 0.3 s. The Query API (Neo4j 5.19 and later, on the server's HTTP
port; https://neo4j.com/docs/query-api/current/) answers one POST with the result, and its
``"accessMode": "Read"`` makes the server itself refuse any write (``Neo.ClientError.Statement.AccessMode``).
Python's own ``http.client`` and ``json`` carry it, so nothing heavier is imported (``urllib.request`` would add
another 4 ms of imports to every quick command for nothing it needs here).

Values come back in the Query API's typed JSON (``application/vnd.neo4j.query``: ``{"$type": "Integer",
"_value": "42"}``) and are decoded to the Python values the driver would give for the types the catalogue
returns: null, booleans, integers, floats, strings, lists and maps. Temporal, spatial and graph values keep
the server's text form (the catalogue returns dates through ``toString``).
"""

from __future__ import annotations

import base64
import http.client
import json
from typing import Any
from urllib.parse import urlsplit

from graph.errors import CxrkgError
from graph.store.errors import GraphUnavailable, LoginRefused

_TYPED_JSON = "application/vnd.neo4j.query"
_WRITE_REFUSED = "Neo.ClientError.Statement.AccessMode"


class QueryApiError(CxrkgError, RuntimeError):
    """The server refused a statement: ``code`` is Neo4j's status code (``Neo.ClientError.Statement.
    SyntaxError``, ...), the message says which statement and why."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"Neo4j failed: {code}: {message}")
        self.code = code

    @property
    def write_refused(self) -> bool:
        """True when the statement would have written (refused by the read access mode)."""
        return self.code == _WRITE_REFUSED


class QueryApiReader:
    """Read transactions on one database through the Query API: ``read`` is the same call as
    :meth:`graph.store.graph_store.GraphStore.read`, one dict per row keyed by the returned names.

    ``url`` is the server's HTTP address (``http://127.0.0.1:7474``); nothing is sent until the first read.
    ``timeout_s`` bounds each socket wait (default: none, like the driver's reads).
    """

    def __init__(self, url: str, user: str, password: str, database: str | None = None,
                 timeout_s: float | None = None) -> None:
        self.url = url.rstrip("/")
        self.database = database or "neo4j"
        self.timeout_s = timeout_s
        token = base64.b64encode(f"{user}:{password}".encode()).decode()
        self._headers = {"Authorization": f"Basic {token}", "Content-Type": "application/json",
                         "Accept": _TYPED_JSON}

    def read(self, cypher: str, **params: Any) -> list[dict[str, Any]]:
        """Run ``cypher`` with ``params`` (JSON values) in a read transaction; its rows as dicts.

        Raises:
            GraphUnavailable: nothing answers at ``url`` (the message says to start the local server).
            LoginRefused: the server refused the user and password.
            QueryApiError: the server refused the statement (syntax, a missing parameter, a write).
        """
        data = self._post({"statement": cypher, "parameters": params, "accessMode": "Read"})["data"]
        fields = data["fields"]
        return [dict(zip(fields, (decode(v) for v in values), strict=True)) for values in data["values"]]

    def _post(self, body: dict[str, Any]) -> dict[str, Any]:
        parts = urlsplit(self.url)
        kind = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
        connection = kind(parts.hostname or "127.0.0.1", parts.port, timeout=self.timeout_s)
        try:
            connection.request("POST", f"{parts.path}/db/{self.database}/query/v2", json.dumps(body).encode(),
                               self._headers)
            response = connection.getresponse()
            payload = response.read()
        except (OSError, http.client.HTTPException) as exc:
            raise GraphUnavailable(f"cannot use Neo4j at {self.url}: {exc} (start the local server with "
                                   "`cxrkg db start`)") from None
        finally:
            connection.close()
        if response.status < 300:
            return json.loads(payload)
        errors = _errors(response.status, response.reason, payload)
        if response.status == 401:
            raise LoginRefused(f"{self.url} refused the login: {errors[0]['message']}")
        raise QueryApiError(errors[0]["code"], errors[0]["message"])


def _errors(status: int, reason: str, payload: bytes) -> list[dict[str, str]]:
    """The ``errors`` list of a refused request; a stand-in naming the HTTP status when the body has none."""
    try:
        errors = json.loads(payload or b"{}").get("errors")
    except ValueError:
        errors = None
    return errors or [{"code": f"HTTP {status}", "message": reason}]


def decode(value: dict[str, Any]) -> Any:
    """One typed-JSON value as the Python value the driver gives: ``{"$type": "Integer", "_value": "7"}``
    -> ``7``; lists and maps recursively; ``"NaN"`` / ``"Infinity"`` floats included. Other types (dates,
    points, nodes) -> their ``_value`` as the server wrote it."""
    kind, raw = value["$type"], value["_value"]
    if kind == "List":
        return [decode(v) for v in raw]
    if kind == "Map":
        return {k: decode(v) for k, v in raw.items()}
    if kind == "Integer":
        return int(raw)
    if kind == "Float":
        return float(raw)
    return raw
