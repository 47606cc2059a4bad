"""Where cxrkg finds its Neo4j: an external server from NEO4J_* variables, or the local one it starts.

Environment variables (all optional):

``NEO4J_URI``, ``NEO4J_USER``, ``NEO4J_PASSWORD``, ``NEO4J_DATABASE``
    Use this server (Docker, Aura, a cluster through a ``neo4j://`` routing URI) instead of the local one.
    URI, user and password must be set together.
``CXRKG_HOME``
    Folder of the local server: data, logs, generated password, pid file. Default ``~/.cxrkg``.
``CXRKG_BOLT_PORT``
    Bolt port of the local server on 127.0.0.1. Default 7687.
``CXRKG_HTTP_PORT``
    HTTP port (Neo4j Browser) of the local server on 127.0.0.1. Default 7474.
"""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import BaseModel, ConfigDict


class ConfigError(RuntimeError):
    """Raised when the environment names an incomplete or contradictory Neo4j configuration."""


class Neo4jSettings(BaseModel):
    """How to reach one Neo4j database.

    ``external`` is True when the server came from ``NEO4J_*`` variables; the local server commands
    (``cxrkg db start|stop``) then leave it alone.
    """

    model_config = ConfigDict(frozen=True)

    uri: str
    user: str
    password: str
    database: str | None = None
    external: bool = False


class LocalServerSettings(BaseModel):
    """Paths and ports of the Neo4j Community server that cxrkg runs itself."""

    model_config = ConfigDict(frozen=True)

    home: Path
    bolt_port: int = 7687
    http_port: int = 7474

    @property
    def data_dir(self) -> Path:
        return self.home / "data"

    @property
    def log_file(self) -> Path:
        return self.home / "logs" / "neo4j.log"

    @property
    def password_file(self) -> Path:
        return self.home / "password"

    @property
    def pid_file(self) -> Path:
        return self.home / "neo4j.pid"

    @property
    def bolt_uri(self) -> str:
        return f"bolt://127.0.0.1:{self.bolt_port}"


def _port(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        port = int(raw)
    except ValueError as exc:
        raise ConfigError(f"{name}={raw!r} is not a port number") from exc
    if not 0 < port < 65536:
        raise ConfigError(f"{name}={port} is outside 1..65535")
    return port


def local_server_settings() -> LocalServerSettings:
    """Read ``CXRKG_HOME``, ``CXRKG_BOLT_PORT`` and ``CXRKG_HTTP_PORT``.

    Raises:
        ConfigError: a port variable is not an integer in 1..65535.
    """
    home = Path(os.environ.get("CXRKG_HOME") or Path.home() / ".cxrkg").expanduser().resolve()
    return LocalServerSettings(
        home=home,
        bolt_port=_port("CXRKG_BOLT_PORT", 7687),
        http_port=_port("CXRKG_HTTP_PORT", 7474),
    )


def neo4j_settings() -> Neo4jSettings:
    """The database every command talks to: ``NEO4J_*`` when set, else the local server.

    For the local server the password is read from its password file, which ``cxrkg db start``
    writes on first start; it may not exist yet (the password is then empty and connecting fails
    with an authentication error naming the server).

    Raises:
        ConfigError: only some of NEO4J_URI / NEO4J_USER / NEO4J_PASSWORD are set.
    """
    names = ("NEO4J_URI", "NEO4J_USER", "NEO4J_PASSWORD")
    given = {n: os.environ.get(n) for n in names}
    if any(given.values()):
        missing = [n for n, v in given.items() if not v]
        if missing:
            raise ConfigError(f"NEO4J_URI, NEO4J_USER and NEO4J_PASSWORD go together; missing {', '.join(missing)}")
        return Neo4jSettings(
            uri=given["NEO4J_URI"],
            user=given["NEO4J_USER"],
            password=given["NEO4J_PASSWORD"],
            database=os.environ.get("NEO4J_DATABASE") or None,
            external=True,
        )
    local = local_server_settings()
    password = local.password_file.read_text().strip() if local.password_file.exists() else ""
    return Neo4jSettings(uri=local.bolt_uri, user="neo4j", password=password, database=None, external=False)
