"""cxrkg's environment in one validated settings object, read once per environment.

Environment variables (all optional):

``NEO4J_URI``, ``NEO4J_USER``, ``NEO4J_PASSWORD``, ``NEO4J_DATABASE``
    Use this server (Docker, Aura, a cluster through a ``neo4j://`` routing URI) instead of the local one.
    URI, user and password must be set together.
``CXRKG_HOME``
    Folder of the local server (data, logs, generated password, pid file), the model registry, snapshots
    and the library log. Default ``~/.cxrkg``.
``CXRKG_BOLT_PORT`` / ``CXRKG_HTTP_PORT``
    Bolt and HTTP (Neo4j Browser) ports of the local server on 127.0.0.1. Defaults 7687 and 7474.
``CXRKG_NEO4J_HEAP`` / ``CXRKG_NEO4J_PAGE_CACHE`` / ``CXRKG_NEO4J_JVM_OPTS``
    The local server's JVM heap (default ``2g``), page cache (``1g``) and extra JVM options.
``CXRKG_NEO4J_TX_TIMEOUT`` / ``CXRKG_NEO4J_LOCK_TIMEOUT``
    The local server ends a transaction open longer than this (default ``10m``), and a statement that
    waited this long for another transaction's locks (default ``2m``): a client that hangs cannot hold
    its locks for long, and a blocked load fails saying what holds them. Durations: ``90s``, ``5m``, ``1h``.
``CXRKG_NEO4J_LOCK_RETRY``
    How long a write that hit the lock timeout keeps retrying, with growing pauses, before it fails (exit
    code 5); an attempt is only started when one more lock timeout still fits. Default four lock timeouts.
``CXRKG_NEO4J_RECONNECT``
    How long a command keeps trying to reach a server that stopped answering (default ``10s``): the driver's
    connection timeout and the whole of its retries of a transaction that lost its connection. Past it the
    command ends with one error line (exit code 1); the driver's last pause may carry it up to twice as long.
``CXRKG_IU_CACHE``
    Where the torchxrayvision wheel (IU reports, NIH tables) is kept. Default ``~/.cache/cxrkg/iu``.
``CXRKG_RADGRAPH_CACHE``
    The radgraph package's model cache (default: the package's own).
``CXRKG_LOG_LEVEL``
    Level of the library log ``CXRKG_HOME/logs/cxrkg.log``: DEBUG, INFO (default), WARNING or ERROR.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from graph.errors import CxrkgError


class ConfigError(CxrkgError, RuntimeError):
    """Raised when the environment names an incomplete or contradictory Neo4j configuration."""


@dataclass(frozen=True)
class Neo4jSettings:
    """How to reach one Neo4j database, from values :class:`Settings` has validated.

    ``external`` is True when the server came from ``NEO4J_*`` variables; the local server commands
    (``cxrkg db start|stop``) then leave it alone.
    """

    uri: str
    user: str
    password: str
    database: str | None = None
    external: bool = False


@dataclass(frozen=True)
class LocalServerSettings:
    """Paths and ports of the Neo4j Community server that cxrkg runs itself (validated by :class:`Settings`)."""

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

    @property
    def http_uri(self) -> str:
        """Where Neo4j Browser and the HTTP Query API answer (:mod:`graph.store.query_api`)."""
        return f"http://127.0.0.1:{self.http_port}"


_DURATION = re.compile(r"[1-9]\d*(ms|s|m|h)")  # what the launcher's parseDuration reads; 0 (no timeout) is not offered
_MEMORY = re.compile(r"\d+[kKmMgG]?")  # the JVM's -Xmx form and Neo4j's page cache size


def duration_seconds(text: str) -> float:
    """Seconds of a duration as the settings write it (``500ms``, ``90s``, ``5m``, ``1h``)."""
    for unit, seconds in (("ms", 0.001), ("s", 1.0), ("m", 60.0), ("h", 3600.0)):
        if text.endswith(unit) and text[:-len(unit)].isdigit():
            return int(text[:-len(unit)]) * seconds
    raise ValueError(f"not a duration: {text!r} (write e.g. 90s, 5m, 1h)")


def _port(text: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= 65535:
        raise ValueError("not a port (a whole number from 1 to 65535)")
    return int(text)


def _matching(pattern: re.Pattern[str], allowed: str) -> Callable[[str], str]:
    def read(text: str) -> str:
        if not pattern.fullmatch(text):
            raise ValueError(f"not {allowed}")
        return text
    return read


def _one_of(*choices: str) -> Callable[[str], str]:
    def read(text: str) -> str:
        if text not in choices:
            raise ValueError(f"not one of {', '.join(choices)}")
        return text
    return read


@dataclass(frozen=True)
class Settings:
    """Every setting cxrkg reads from the environment (names in the module docstring), validated.

    Built by :func:`settings` from the variables that are set and not empty (empty counts as unset); a field
    whose variable is unset keeps the default written here. Plain code rather than a pydantic model: sixteen
    variables checked by a port range, a pattern or a list of choices need nothing more, and importing pydantic
    cost every quick command about 0.1 s, half of its start-up (issue 43: at most 1.5x ``import typer``).
    """

    home: Path = field(default_factory=lambda: Path.home() / ".cxrkg")
    bolt_port: int = 7687
    http_port: int = 7474
    neo4j_uri: str | None = None
    neo4j_user: str | None = None
    neo4j_password: str | None = None
    neo4j_database: str | None = None
    neo4j_heap: str = "2g"
    neo4j_page_cache: str = "1g"
    neo4j_jvm_opts: str = ""
    neo4j_tx_timeout: str = "10m"
    neo4j_lock_timeout: str = "2m"
    neo4j_lock_retry: str | None = None  # None: four lock timeouts
    neo4j_reconnect: str = "10s"
    iu_cache: Path = field(default_factory=lambda: Path.home() / ".cache" / "cxrkg" / "iu")
    radgraph_cache: Path | None = None
    log_level: str = "INFO"


# environment variable -> (field of Settings, reader that raises ValueError saying what is allowed)
VARIABLES: dict[str, tuple[str, Callable[[str], Any]]] = {
    "CXRKG_HOME": ("home", Path),
    "CXRKG_BOLT_PORT": ("bolt_port", _port),
    "CXRKG_HTTP_PORT": ("http_port", _port),
    "NEO4J_URI": ("neo4j_uri", str),
    "NEO4J_USER": ("neo4j_user", str),
    "NEO4J_PASSWORD": ("neo4j_password", str),
    "NEO4J_DATABASE": ("neo4j_database", str),
    "CXRKG_NEO4J_HEAP": ("neo4j_heap", _matching(_MEMORY, "a memory size (e.g. 512m, 2g)")),
    "CXRKG_NEO4J_PAGE_CACHE": ("neo4j_page_cache", _matching(_MEMORY, "a memory size (e.g. 512m, 2g)")),
    "CXRKG_NEO4J_JVM_OPTS": ("neo4j_jvm_opts", str),
    "CXRKG_NEO4J_TX_TIMEOUT": ("neo4j_tx_timeout", _matching(_DURATION, "a duration (e.g. 90s, 5m, 1h)")),
    "CXRKG_NEO4J_LOCK_TIMEOUT": ("neo4j_lock_timeout", _matching(_DURATION, "a duration (e.g. 90s, 5m, 1h)")),
    "CXRKG_NEO4J_LOCK_RETRY": ("neo4j_lock_retry", _matching(_DURATION, "a duration (e.g. 90s, 5m, 1h)")),
    "CXRKG_NEO4J_RECONNECT": ("neo4j_reconnect", _matching(_DURATION, "a duration (e.g. 10s, 1m)")),
    "CXRKG_IU_CACHE": ("iu_cache", Path),
    "CXRKG_RADGRAPH_CACHE": ("radgraph_cache", Path),
    "CXRKG_LOG_LEVEL": ("log_level", _one_of("DEBUG", "INFO", "WARNING", "ERROR")),
}
_read: dict[tuple, Settings] = {}


def _validated(given: dict[str, str]) -> Settings:
    values, problems = {}, []
    for name, text in given.items():
        field_name, read = VARIABLES[name]
        try:
            values[field_name] = read(text)
        except ValueError as exc:
            problems.append(f"{name}={text!r}: {exc}")
    together = ("NEO4J_URI", "NEO4J_USER", "NEO4J_PASSWORD")
    if 0 < len(missing := [n for n in together if n not in given]) < len(together):
        problems.append(f"{', '.join(together[:-1])} and {together[-1]} go together; missing {', '.join(missing)}")
    if problems:
        raise ConfigError(f"bad cxrkg setting: {'; '.join(problems)}")
    return Settings(**values)


def settings() -> Settings:
    """The settings of the current environment, read and validated once per distinct environment (tests and
    benchmarks change variables between calls).

    Raises:
        ConfigError: a variable has a bad value (the message names it and says what is allowed).
    """
    key = tuple(os.environ.get(n) for n in VARIABLES)
    if key not in _read:
        _read[key] = _validated({n: v for n, v in zip(VARIABLES, key, strict=True) if v})
    return _read[key]


def local_server_settings() -> LocalServerSettings:
    """The local server's folder and ports (``CXRKG_HOME``, ``CXRKG_BOLT_PORT``, ``CXRKG_HTTP_PORT``).

    Raises:
        ConfigError: a bad setting (see :func:`settings`).
    """
    s = settings()
    return LocalServerSettings(home=s.home.expanduser().resolve(), bolt_port=s.bolt_port, http_port=s.http_port)


def neo4j_settings() -> Neo4jSettings:
    """The database every command talks to: ``NEO4J_*`` when set, else the local server.

    For the local server the password is read from its password file, which ``cxrkg db start``
    writes on first start; it may not exist yet (the password is then empty and connecting fails
    with an authentication error naming the server).

    Raises:
        ConfigError: a bad setting, e.g. only some of NEO4J_URI / NEO4J_USER / NEO4J_PASSWORD set.
    """
    s = settings()
    if s.neo4j_uri:
        assert s.neo4j_user is not None and s.neo4j_password is not None  # Settings requires all three together
        return Neo4jSettings(uri=s.neo4j_uri, user=s.neo4j_user, password=s.neo4j_password,
                             database=s.neo4j_database, external=True)
    local = local_server_settings()
    password = local.password_file.read_text().strip() if local.password_file.exists() else ""
    return Neo4jSettings(uri=local.bolt_uri, user="neo4j", password=password, database=None, external=False)
