"""cxrkg's environment in one validated settings object (pydantic), read once per environment.

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
``CXRKG_IU_CACHE``
    Where the torchxrayvision wheel (IU reports, NIH tables) is kept. Default ``~/.cache/cxrkg/iu``.
``CXRKG_RADGRAPH_CACHE``
    The radgraph package's model cache (default: the package's own).
``CXRKG_LOG_LEVEL``
    Level of the library log ``CXRKG_HOME/logs/cxrkg.log``: DEBUG, INFO (default), WARNING or ERROR.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, ValidationError, model_validator

from graph.errors import CxrkgError


class ConfigError(CxrkgError, RuntimeError):
    """Raised when the environment names an incomplete or contradictory Neo4j configuration."""


@dataclass(frozen=True)
class Neo4jSettings:
    """How to reach one Neo4j database, from values :class:`Settings` has validated (a plain dataclass:
    validating them twice cost every command a pydantic model build).

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


_DURATION = r"^[1-9]\d*(ms|s|m|h)$"  # what the launcher's parseDuration reads; 0 (no timeout) is not offered


def duration_seconds(text: str) -> float:
    """Seconds of a duration as the settings write it (``500ms``, ``90s``, ``5m``, ``1h``)."""
    for unit, seconds in (("ms", 0.001), ("s", 1.0), ("m", 60.0), ("h", 3600.0)):
        if text.endswith(unit) and text[:-len(unit)].isdigit():
            return int(text[:-len(unit)]) * seconds
    raise ValueError(f"not a duration: {text!r} (write e.g. 90s, 5m, 1h)")


def _env(name: str, default=None, **kw):
    return Field(default, validation_alias=AliasChoices(name), **kw)


class Settings(BaseModel):
    """Every setting cxrkg reads from the environment (names in the module docstring), validated.

    Built by :func:`settings` from the variables that are set and not empty (empty counts as unset). Raises
    ``pydantic.ValidationError`` on bad values; :func:`settings` turns that into a :class:`ConfigError` naming
    the variable. A plain model rather than pydantic-settings' ``BaseSettings``: reading fifteen variables by
    name is all cxrkg needs of it, and importing pydantic-settings (which imports asyncio and pydantic's
    dataclasses) took about 0.1 s of every command, a third of issue 18's 0.3 s for a quick command.
    """

    model_config = ConfigDict(frozen=True, extra="ignore")

    home: Path = Field(default_factory=lambda: Path.home() / ".cxrkg", validation_alias=AliasChoices("CXRKG_HOME"))
    bolt_port: int = _env("CXRKG_BOLT_PORT", 7687, ge=1, le=65535)
    http_port: int = _env("CXRKG_HTTP_PORT", 7474, ge=1, le=65535)
    neo4j_uri: str | None = _env("NEO4J_URI")
    neo4j_user: str | None = _env("NEO4J_USER")
    neo4j_password: str | None = _env("NEO4J_PASSWORD")
    neo4j_database: str | None = _env("NEO4J_DATABASE")
    neo4j_heap: str = _env("CXRKG_NEO4J_HEAP", "2g", pattern=r"^\d+[kKmMgG]?$")
    neo4j_page_cache: str = _env("CXRKG_NEO4J_PAGE_CACHE", "1g", pattern=r"^\d+[kKmMgG]?$")
    neo4j_jvm_opts: str = _env("CXRKG_NEO4J_JVM_OPTS", "")
    neo4j_tx_timeout: str = _env("CXRKG_NEO4J_TX_TIMEOUT", "10m", pattern=_DURATION)
    neo4j_lock_timeout: str = _env("CXRKG_NEO4J_LOCK_TIMEOUT", "2m", pattern=_DURATION)
    neo4j_lock_retry: str | None = _env("CXRKG_NEO4J_LOCK_RETRY", pattern=_DURATION)  # None: 4 lock timeouts
    iu_cache: Path = Field(default_factory=lambda: Path.home() / ".cache" / "cxrkg" / "iu",
                           validation_alias=AliasChoices("CXRKG_IU_CACHE"))
    radgraph_cache: Path | None = _env("CXRKG_RADGRAPH_CACHE")
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = _env("CXRKG_LOG_LEVEL", "INFO")

    @model_validator(mode="after")
    def _neo4j_together(self) -> "Settings":
        given = {"NEO4J_URI": self.neo4j_uri, "NEO4J_USER": self.neo4j_user, "NEO4J_PASSWORD": self.neo4j_password}
        missing = [n for n, v in given.items() if not v]
        if len(missing) not in (0, 3):
            raise ValueError(f"NEO4J_URI, NEO4J_USER and NEO4J_PASSWORD go together; missing {', '.join(missing)}")
        return self


_ENV_NAMES = ("CXRKG_HOME", "CXRKG_BOLT_PORT", "CXRKG_HTTP_PORT", "NEO4J_URI", "NEO4J_USER", "NEO4J_PASSWORD",
              "NEO4J_DATABASE", "CXRKG_NEO4J_HEAP", "CXRKG_NEO4J_PAGE_CACHE", "CXRKG_NEO4J_JVM_OPTS",
              "CXRKG_NEO4J_TX_TIMEOUT", "CXRKG_NEO4J_LOCK_TIMEOUT", "CXRKG_NEO4J_LOCK_RETRY",
              "CXRKG_IU_CACHE", "CXRKG_RADGRAPH_CACHE", "CXRKG_LOG_LEVEL")
_read: dict[tuple, Settings] = {}


def settings() -> Settings:
    """The settings of the current environment, read and validated once per distinct environment (tests and
    benchmarks change variables between calls).

    Raises:
        ConfigError: a variable has a bad value (the message names it and says what is allowed).
    """
    key = tuple(os.environ.get(n) for n in _ENV_NAMES)
    if key not in _read:
        try:
            _read[key] = Settings.model_validate({n: v for n, v in zip(_ENV_NAMES, key, strict=True) if v})
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'NEO4J_*'}={e.get('input')!r}: {e['msg']}"
                                 for e in exc.errors())
            raise ConfigError(f"bad cxrkg setting: {problems}") from None
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
