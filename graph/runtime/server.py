"""The Neo4j Community server that cxrkg runs itself, as a local Java process.

The Java side lives in ``graph/neo4j_server/`` (a Maven project shipped inside the package):
``org.cxrkg.server.LocalNeo4j`` starts Neo4j
Community 5.26 through its embedded API with Bolt on ``127.0.0.1:<bolt_port>``, the HTTP API and
Neo4j Browser on ``127.0.0.1:<http_port>``, authentication on, data in ``<home>/data`` and its log
in ``<home>/logs/neo4j.log`` (``debug.log`` next to it). Maven builds it once into its ``target/``
folder (about 140 MB of jars), or, when the package is installed read-only, into ``<home>/neo4j-server/``.

Memory: the JVM heap is ``CXRKG_NEO4J_HEAP`` (default ``2g``, half of it young generation; more JVM
options in ``CXRKG_NEO4J_JVM_OPTS``) and Neo4j's page cache
``CXRKG_NEO4J_PAGE_CACHE`` (default ``1g``), unless given to :class:`LocalNeo4jServer`.

Typical use::

    server = LocalNeo4jServer(local_server_settings())
    server.start()      # builds on first use, generates <home>/password, waits for Bolt
    server.status()     # ServerStatus(running=True, pid=..., bolt_uri='bolt://127.0.0.1:7687', ...)
    server.stop()
"""

from __future__ import annotations

import logging
import os
import shutil
import socket
import subprocess
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path

import psutil

from graph.errors import CxrkgError
from graph.runtime import import_staging as staging
from graph.settings import LocalServerSettings
from graph.settings import settings as cxrkg_settings
from graph.store.errors import GraphUnavailable, LoginRefused

logger = logging.getLogger(__name__)

SERVER_DIR = Path(__file__).resolve().parents[1] / "neo4j_server"
JAR_NAME = "cxrkg-neo4j-server.jar"
USER = "neo4j"

# What Neo4j's own launcher passes to the JVM (less what only matters for big production heaps).
_JVM_FLAGS = [
    "-XX:+UseG1GC",
    "-XX:G1HeapRegionSize=16m",
    "-XX:-OmitStackTraceInFastThrow",
    "-XX:+DisableExplicitGC",
    "-Djdk.nio.maxCachedBufferSize=1024",
    "-Dio.netty.tryReflectionSetAccessible=true",
    "-Dlog4j2.disable.jmx=true",
    "-Dfile.encoding=UTF-8",
]


class ServerError(CxrkgError, RuntimeError):
    """The local server could not be built, started or reached; the message says why and where to look."""


@dataclass(frozen=True)
class ServerStatus:
    """What :meth:`LocalNeo4jServer.status` found.

    ``pid`` is set while ``running``; ``version`` (e.g. ``"5.26.30"``) only when a login succeeded.
    """

    running: bool
    pid: int | None
    bolt_uri: str
    home: Path
    version: str | None = None


class LocalNeo4jServer:
    """Builds, starts, stops and inspects the Neo4j server of one ``CXRKG_HOME``.

    Several instances for the same settings see the same server: the state lives in the pid file,
    so a server started by one process can be stopped by another.
    """

    def __init__(
        self,
        settings: LocalServerSettings,
        *,
        heap: str | None = None,
        page_cache: str | None = None,
        server_dir: Path = SERVER_DIR,
    ) -> None:
        """``heap`` and ``page_cache`` take JVM-style sizes (``"512m"``, ``"2g"``)."""
        self.settings = settings
        self.heap = heap or cxrkg_settings().neo4j_heap
        self.page_cache = page_cache or cxrkg_settings().neo4j_page_cache
        self.server_dir = server_dir

    def jvm_options(self) -> list[str]:
        """The JVM's options: heap, Neo4j's own launcher flags, then ``CXRKG_NEO4J_JVM_OPTS`` (split on spaces).

        The young generation is half the heap (``-Xmn``): a load transaction's state lives until it
        commits, and with G1's default sizing it is copied by many short young collections (measured on
        the 500-patient benchmark: 11 s of 23 s in GC pauses; with half the heap young, 4-5 s). G1's
        regions are 16 MB instead of the 1 MB it picks for a 2 GB heap: a transaction's large state
        arrays then stay ordinary young objects instead of "humongous" ones that trigger collections
        (2,000-patient benchmark: 34-35 s -> 28-29 s together with 500-file batches). A GC named in
        ``CXRKG_NEO4J_JVM_OPTS`` replaces G1 and its region size, and an ``-Xmn`` there replaces ours.
        """
        extra = cxrkg_settings().neo4j_jvm_opts.split()
        other_gc = any(x.endswith("GC") for x in extra)
        flags = [f for f in _JVM_FLAGS if not (other_gc and (f == "-XX:+UseG1GC" or f.startswith("-XX:G1")))]
        young = [] if any(x.startswith("-Xmn") for x in extra) else [f"-Xmn{_megabytes(self.heap) // 2}m"]
        return [f"-Xmx{self.heap}", *young, *flags, *extra]

    @property
    def build_dir(self) -> Path:
        """Where Maven builds: the shipped project itself when it is writable (a checkout), else a copy in
        ``<home>/neo4j-server`` (an installed wheel)."""
        if os.access(self.server_dir, os.W_OK):
            return self.server_dir
        return self.settings.home / "neo4j-server"

    @property
    def jar(self) -> Path:
        return self.build_dir / "target" / JAR_NAME

    # --- build -------------------------------------------------------------------------------

    def build(self, force: bool = False) -> Path:
        """Run ``mvn -q -f <build_dir>/pom.xml package`` unless the launcher jar and its libraries exist.

        The first build downloads Neo4j from Maven Central (about 2 minutes).

        Returns:
            the launcher jar.

        Raises:
            ServerError: ``java`` or ``mvn`` is not on PATH, or the Maven build failed (with its output).
        """
        lib = self.jar.parent / "lib"
        if not force and self.jar.is_file() and any(lib.glob("neo4j-*.jar")):
            return self.jar
        _require("java", "a Java 17+ JDK")
        mvn = _require("mvn", "Maven 3.8+")
        if self.build_dir != self.server_dir:
            shutil.copytree(self.server_dir, self.build_dir, dirs_exist_ok=True,
                            ignore=shutil.ignore_patterns("target", "__pycache__"))
        result = subprocess.run(
            [mvn, "-q", "-B", "-f", str(self.build_dir / "pom.xml"), "package"],
            stdin=subprocess.DEVNULL, capture_output=True, text=True,
        )
        if result.returncode != 0 or not self.jar.is_file():
            output = (result.stdout + result.stderr).strip().splitlines()
            raise ServerError(f"building {self.build_dir} with Maven failed (exit {result.returncode}):\n"
                              + "\n".join(output[-40:]))
        return self.jar

    # --- start / stop ------------------------------------------------------------------------

    def start(self, timeout_s: float = 120.0, fresh: bool = False) -> None:
        """Start the server in the background and return once Bolt and HTTP accept the password.

        Does nothing when this home's server already runs. On first start writes a random password
        to ``settings.password_file`` (mode 0600). The server outlives this Python process and ends
        transactions and lock waits longer than ``CXRKG_NEO4J_TX_TIMEOUT`` / ``CXRKG_NEO4J_LOCK_TIMEOUT``.
        ``fresh``: start on an empty database although this home was used before and its data are gone.

        Raises:
            ServerError: Java or Maven missing, the build failed, a port is taken, a used home's data are
                missing (and not ``fresh``), or the server exited or did not answer within ``timeout_s``;
                names the log file and shows its end.
        """
        if self._running_pid() is not None:
            return
        s = self.settings
        self._prepare_home(fresh)
        jar = self.build()
        java = _require("java", "a Java 17+ JDK")
        s.home.mkdir(parents=True, exist_ok=True, mode=0o700)
        s.log_file.parent.mkdir(parents=True, exist_ok=True)
        password = self._ensure_password()
        for name, port in (("Bolt", s.bolt_port), ("HTTP", s.http_port)):
            if not _port_free(port):
                raise ServerError(f"{name} port 127.0.0.1:{port} is already in use; choose another with "
                                  f"CXRKG_{name.upper()}_PORT or stop what uses it")

        cmd = [java, *self.jvm_options(), "-jar", str(jar),
               "--home", str(s.home), "--data", str(s.data_dir), "--log-file", str(s.log_file),
               "--password-file", str(s.password_file), "--bolt-port", str(s.bolt_port),
               "--http-port", str(s.http_port), "--page-cache", self.page_cache,
               "--tx-timeout", cxrkg_settings().neo4j_tx_timeout, "--lock-timeout", cxrkg_settings().neo4j_lock_timeout]
        # JVM-level failures (bad flags, wrong Java) only reach stdout/stderr; the launcher appends
        # Neo4j's user log to the same file, so one file tells the whole story.
        with open(s.log_file, "ab") as log:
            proc = subprocess.Popen(cmd, cwd=s.home, stdin=subprocess.DEVNULL, stdout=log,
                                    stderr=subprocess.STDOUT, start_new_session=True)
        s.pid_file.write_text(f"{proc.pid}\n")

        deadline = time.monotonic() + timeout_s
        last_error: Exception | None = None
        while True:
            if proc.poll() is not None:
                s.pid_file.unlink(missing_ok=True)
                raise ServerError(_start_failure(proc.returncode, s))
            try:
                self._answer_logins(password)
                return
            # LoginRefused too: after the password file was replaced, Bolt opens a moment before the
            # launcher has applied the new password.
            except GraphUnavailable as exc:
                last_error = exc
            if time.monotonic() > deadline:
                self.stop()
                raise ServerError(f"Neo4j did not accept a login at {s.bolt_uri} and on HTTP port {s.http_port} "
                                  f"within {timeout_s:.0f} s "
                                  f"(last error: {last_error}); see {s.log_file}:\n{_tail(s.log_file)}")
            time.sleep(1.0 if isinstance(last_error, LoginRefused) else 0.5)

    def _answer_logins(self, password: str) -> None:
        """Log in over Bolt, then over HTTP (the quick commands' Query API), which opens a moment later.

        Raises:
            GraphUnavailable: either does not answer yet (LoginRefused: not with this password yet).
        """
        from graph.store.graph_store import server_agent
        from graph.store.query_api import QueryApiError, QueryApiReader

        server_agent(self.settings.bolt_uri, USER, password, timeout_s=5)
        try:
            QueryApiReader(self.settings.http_uri, USER, password, timeout_s=5).read("RETURN 1")
        except QueryApiError as exc:  # e.g. the database still starting
            raise GraphUnavailable(str(exc)) from None

    def _prepare_home(self, fresh: bool) -> None:
        """Finish or remove what a killed bulk import left (graph.runtime.import_staging), then, unless
        ``fresh``, refuse a used home whose data are gone."""
        for line in staging.recover(self.settings.home, self.settings.data_dir):
            logger.info("%s", line)
        if not fresh:
            self._refuse_missing_data()

    def _refuse_missing_data(self) -> None:
        """A home used before (it has a password file) whose system database is gone lost its data: Neo4j
        would start on an empty database and report success."""
        s = self.settings
        if s.password_file.exists() and not (s.data_dir / "databases" / "system").is_dir():
            raise ServerError(f"the data of {s.home} are missing ({s.data_dir / 'databases'} is gone) although this "
                              "home was used before; restore the folder, or start with an empty database: "
                              "`cxrkg db start --fresh`")

    def stop(self, timeout_s: float = 60.0) -> None:
        """Stop the server: SIGTERM (Neo4j closes its stores), then SIGKILL after ``timeout_s``.

        Does nothing but remove a stale pid file when the server is not running.
        """
        pid = self._running_pid()
        if pid is not None:
            _stop_process(pid, timeout_s)
        self.settings.pid_file.unlink(missing_ok=True)

    # --- bulk import -------------------------------------------------------------------------

    def import_database(self, arguments: list[str], folder: Path, database: str = "neo4j") -> None:
        """Replace ``database`` of this home through ``neo4j-admin`` with ``arguments``
        (:func:`graph.ingest.import_files.import_arguments`), run from the launcher's own jars;
        its output goes to ``<home>/logs/neo4j-admin-import.log``, its configuration and report to ``folder``. The
        caller has checked that the database
        holds no data. The store is written into ``folder`` and moved into the home's data once whole
        (:mod:`graph.runtime.import_staging`): a failed, interrupted or killed import leaves the database as it
        was (none, or the empty one).

        Raises:
            ServerError: the server is running, Java is missing, or the import failed (with its log's end; out
                of disk: the space it had and the size of its files).
        """
        if self._running_pid() is not None:
            raise ServerError("the local Neo4j is running; stop it before an import (`cxrkg db stop`)")
        s = self.settings
        jar = self.build()
        java = _require("java", "a Java 17+ JDK")
        conf = folder / "conf"
        conf.mkdir(exist_ok=True)
        staged = folder / staging.STAGED
        # the launcher configures Neo4j in code; the admin tool reads a neo4j.conf, which says the same but
        # for the data: the store is written beside the home's and swapped in once whole (graph.runtime.import_staging)
        (conf / "neo4j.conf").write_text(f"server.directories.data={staged}\n"
                                         f"server.directories.logs={s.log_file.parent}\n")
        log = s.log_file.parent / "neo4j-admin-import.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        cmd = [java, f"-Xmx{self.heap}", "-cp", f"{jar.parent / 'lib'}/*", "org.neo4j.cli.AdminTool", *arguments]
        env = {**os.environ, "NEO4J_HOME": str(s.home), "NEO4J_CONF": str(conf)}
        free, files = staging.free_megabytes(folder), staging.megabytes(folder)
        try:
            with open(log, "w") as out:
                code = subprocess.run(cmd, env=env, cwd=folder, stdin=subprocess.DEVNULL, stdout=out,
                                      stderr=subprocess.STDOUT).returncode
        except BaseException:  # Ctrl-C or a kill: subprocess.run has stopped the importer
            shutil.rmtree(staged, ignore_errors=True)
            raise
        if code != 0:
            # a full disk cuts the importer's own log short too: the space left says it
            full = staging.free_megabytes(folder) < 1 or "No space left on device" in log.read_text(errors="replace")
            shutil.rmtree(staged, ignore_errors=True)
            if full:
                raise ServerError(f"the import stage ran out of disk space in {folder.parent}: neo4j-admin needed "
                                  f"more than the {free:,.0f} MB free when it started (the import files take "
                                  f"{files:,.0f} MB, and the store it writes about as much again); the database is "
                                  f"as it was. Free space, then run the same command again; see {log}")
            raise ServerError(f"neo4j-admin database import failed (exit {code}): {_import_cause(log)}; see {log}")
        staging.swap_in(folder, s.data_dir, database)

    # --- status ------------------------------------------------------------------------------

    def status(self) -> ServerStatus:
        """Whether this home's server runs, its pid, and its Neo4j version when it answers a login (asked over
        its HTTP Query API: ``cxrkg db status`` is a quick command and does not import the driver)."""
        s = self.settings
        pid = self._running_pid()
        version = None
        if pid is not None and s.password_file.exists():
            from graph.store.query_api import QueryApiError, QueryApiReader

            reader = QueryApiReader(s.http_uri, USER, s.password_file.read_text().strip(), timeout_s=3)
            try:
                version = reader.read("CALL dbms.components() YIELD versions RETURN versions[0] AS v")[0]["v"]
            except (GraphUnavailable, QueryApiError, OSError):
                pass
        return ServerStatus(running=pid is not None, pid=pid, bolt_uri=s.bolt_uri, home=s.home, version=version)

    # --- internals ---------------------------------------------------------------------------

    def _ensure_password(self) -> str:
        path = self.settings.password_file
        if path.exists():
            path.chmod(0o600)
            return path.read_text().strip()
        import secrets  # hashlib and hmac come with it: only the first start needs them

        password = secrets.token_urlsafe(24)
        # O_EXCL + mode: the file is never readable by others, not even for a moment.
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(password + "\n")
        return password

    def _running_pid(self) -> int | None:
        """The pid from the pid file if that process is alive and is our launcher; clears a stale file."""
        path = self.settings.pid_file
        try:
            pid = int(path.read_text().strip())
        except (OSError, ValueError):
            path.unlink(missing_ok=True)
            return None
        if _is_running_launcher(pid):
            return pid
        path.unlink(missing_ok=True)
        return None


def _megabytes(size: str) -> int:
    """A JVM-style size (``512m``, ``2g``, ``1048576k``) in MiB.

    Raises:
        ServerError: not a size the JVM would accept.
    """
    units = {"k": 1 / 1024, "m": 1, "g": 1024, "t": 1024 * 1024}
    text = size.strip().lower()
    try:
        return int(float(text[:-1]) * units[text[-1]]) if text[-1] in units else int(text) // (1024 * 1024)
    except (ValueError, IndexError) as exc:
        raise ServerError(f"not a JVM memory size: {size!r} (use e.g. 512m or 2g)") from exc


def _require(program: str, what: str) -> str:
    found = shutil.which(program)
    if not found:
        raise ServerError(f"'{program}' not found on PATH; the local Neo4j server needs {what}")
    return found


def _port_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _tail(path: Path, lines: int = 25) -> str:
    try:
        with open(path, errors="replace") as f:
            return "".join(deque(f, maxlen=lines)).rstrip()
    except OSError as exc:
        return f"(cannot read {path}: {exc})"


def _start_failure(status: int, s: LocalServerSettings) -> str:
    """Why the server exited while starting: a full disk in one line (Neo4j's own error for it names another
    fault), else the status and the log's end."""
    tail = _tail(s.log_file)
    if "OutOfDiskSpace" in tail or "preallocateSpace" in tail or "No space left on device" in tail:
        return (f"Neo4j could not start: the disk of {s.data_dir} is full ({staging.free_megabytes(s.home):,.0f} MB "
                "free; each database preallocates 256 MB of transaction log). Free space, then `cxrkg db start` "
                f"again; see {s.log_file}")
    return f"Neo4j exited with status {status} while starting; see {s.log_file}:\n{tail}"


def _import_cause(log: Path) -> str:
    """The innermost cause the importer's verbose log names (its last ``Caused by:`` line), else the log's
    last line."""
    try:
        lines = [line.strip() for line in log.read_text(errors="replace").splitlines() if line.strip()]
    except OSError as exc:
        return f"(cannot read {log}: {exc})"
    causes = [line.removeprefix("Caused by: ") for line in lines if line.startswith("Caused by:")]
    return causes[-1] if causes else (lines[-1] if lines else "no output")


def _is_running_launcher(pid: int) -> bool:
    """Whether ``pid`` is a live (not zombie) process running the launcher jar: a pid file can outlive its
    server and the pid be reused after a crash or reboot."""
    try:
        process = psutil.Process(pid)
        return process.status() != psutil.STATUS_ZOMBIE and any(JAR_NAME in part for part in process.cmdline())
    except psutil.NoSuchProcess:
        return False
    except psutil.AccessDenied:
        return True  # someone else's process with our pid file: leave the decision to the caller's error


def _stop_process(pid: int, timeout_s: float) -> None:
    """SIGTERM (Neo4j closes its stores), SIGKILL after ``timeout_s`` seconds; waits for the exit (and reaps
    the process when this process started it)."""
    try:
        process = psutil.Process(pid)
        process.terminate()
        try:
            process.wait(timeout_s)
        except psutil.TimeoutExpired:
            process.kill()
            process.wait(10.0)
    except (psutil.NoSuchProcess, psutil.TimeoutExpired):
        pass
