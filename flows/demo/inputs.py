"""The demo's inputs, made side by side before any load and kept for the next run.

Three pieces of the demo's work need no database and depend on nothing but their inputs: writing the
synthetic cohort (:func:`graph.synth.write_cohort`), converting NIH ChestX-ray14
(:func:`graph.datasets.nih.convert.convert_nih`) and extracting the IU reports with the rules extractor
(:func:`graph.extract.pipeline.run_extraction`, what ``cxrkg extract iu`` runs in one process).
:class:`DemoInputs` starts them at once in forked worker processes, so they run beside each other and beside
the NIH bulk load, which starts as soon as its conversion is done.

The NIH conversion and the IU extraction are kept in their output folders with the digest of what made them
(:func:`input_digest`: the torchxrayvision wheel's sha256 and the source of the code that reads and converts
it), so a rerun of the demo reuses them while neither changed; the cohort is reused when its ground truth
is there, as before (the same seed writes the same bytes).
"""

from __future__ import annotations

import hashlib
import multiprocessing
import pickle
import resource
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import graph
from graph.runtime.processes import drop_inherited_sockets

#: the file in each cached output folder that records what made it (and the summary)
CACHE_FILE = ".cxrkg-demo-cache.pickle"
#: packages (and files) of ``graph`` whose source decides each output
NIH_CODE = ("datasets", "vocab", "vocabulary.py", "records.py")
IU_CODE = ("datasets", "extract", "formats", "vocab", "vocabulary.py", "records.py")


@dataclass
class Made:
    """One input's outcome: ``value`` (the maker's summary) or ``skipped`` (why it could not be made, e.g.
    the wheel cannot be downloaded), the wall and CPU seconds it took in its worker, and ``reused`` when
    an earlier run's output was kept."""

    value: Any = None
    skipped: str | None = None
    seconds: float = 0.0
    cpu_seconds: float = 0.0
    reused: bool = False


def input_digest(wheel_sha256: str, code: tuple[str, ...]) -> str:
    """The sha256 of the wheel's digest and of every ``.py`` and ``.yaml`` file under ``code`` (names
    relative to the ``graph`` package), in a fixed order.

    Args:
        wheel_sha256: the torchxrayvision wheel's checked sha256.
        code: folders or files of the ``graph`` package.

    Returns:
        64 hex digits.
    """
    root = Path(graph.__file__).parent
    h = hashlib.sha256(wheel_sha256.encode())
    for name in code:
        base = root / name
        files = [base] if base.is_file() else sorted(p for p in base.rglob("*") if p.suffix in (".py", ".yaml"))
        for path in files:
            h.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def cached(folder: Path, key: str, make: Callable[[], Any]) -> tuple[Any, bool]:
    """``make()``'s value, or the value kept in ``folder`` by an earlier call with the same ``key``.

    A kept value is trusted only with its key; one that cannot be read back (another cxrkg version's
    classes) is made again.

    Args:
        folder: the output folder ``make`` writes (its record is ``folder/CACHE_FILE``).
        key: the digest of what decides the output (:func:`input_digest`).
        make: writes the output into ``folder`` and returns its summary (picklable).

    Returns:
        (value, reused).
    """
    record = folder / CACHE_FILE
    try:
        kept = pickle.loads(record.read_bytes())
        if kept["key"] == key:
            return kept["value"], True
    except Exception:  # noqa: BLE001  (no record, or one this version cannot read: make it again)
        pass
    record.unlink(missing_ok=True)
    value = make()
    folder.mkdir(parents=True, exist_ok=True)
    record.write_bytes(pickle.dumps({"key": key, "value": value}))
    return value, False


def _timed(job: Callable[[], tuple[Any, bool]]) -> Made:
    """Run ``job`` in this worker, with its wall and CPU seconds; an unavailable input becomes ``skipped``."""
    from graph.datasets.nih.convert import DatasetUnavailable
    from graph.datasets.wheel import WheelUnavailable

    started, usage = time.perf_counter(), resource.getrusage(resource.RUSAGE_SELF)
    made = Made()
    try:
        made.value, made.reused = job()
    except (DatasetUnavailable, WheelUnavailable, ImportError) as exc:
        made.skipped = str(exc)
    end = resource.getrusage(resource.RUSAGE_SELF)
    made.seconds = time.perf_counter() - started
    made.cpu_seconds = end.ru_utime + end.ru_stime - usage.ru_utime - usage.ru_stime
    return made


def write_cohort_line(folder: Path, patients: int, seed: int) -> Made:
    """Write the synthetic cohort (its summary line as the value)."""
    from graph.synth import write_cohort

    return _timed(lambda: (write_cohort(folder, patients=patients, seed=seed).line(), False))


def convert_nih_cached(out: Path) -> Made:
    """Convert NIH ChestX-ray14 into ``out`` (the NIHSummary as the value), or reuse an earlier conversion."""
    from graph.datasets.nih.convert import convert_nih
    from graph.datasets.wheel import WHEEL_SHA256, fetch_wheel

    def job() -> tuple[Any, bool]:
        fetch_wheel()
        return cached(out, input_digest(WHEEL_SHA256, NIH_CODE), lambda: convert_nih(out))

    return _timed(job)


def extract_iu_cached(out: Path) -> Made:
    """Extract the IU reports into ``out`` with the rules extractor (the ExtractionSummary as the value), or
    reuse an earlier extraction. Needs medspaCy (ImportError: skipped)."""
    from graph.datasets.wheel import WHEEL_SHA256, fetch_wheel
    from graph.extract.inputs import iter_inputs
    from graph.extract.pipeline import run_extraction

    def extract() -> Any:
        import medspacy  # noqa: F401  (imported only to extract: a kept extraction needs no spaCy)

        return run_extraction(iter_inputs("iu"), out, "rules", extractor_name="rules")

    def job() -> tuple[Any, bool]:
        fetch_wheel()
        return cached(out, input_digest(WHEEL_SHA256, IU_CODE), extract)

    return _timed(job)


def start_prefect_api() -> threading.Thread:
    """Start Prefect's temporary API server in a thread, as the first flow run would (it takes about ten
    seconds), so that it starts while the inputs are made; join the thread before the first flow run.
    Nothing is started when ``PREFECT_API_URL`` names a server or the temporary server is disabled; a
    failed start is left to the first flow run, which tries again and reports it."""

    def start() -> None:
        from prefect.settings import PREFECT_API_URL, PREFECT_SERVER_EPHEMERAL_ENABLED

        if PREFECT_API_URL.value() or not PREFECT_SERVER_EPHEMERAL_ENABLED.value():
            return
        from prefect.server.api.server import SubprocessASGIServer

        try:
            SubprocessASGIServer().start()  # one per process: the flow runs' clients find it started
        except Exception:  # noqa: BLE001  (the first flow run starts it again and says what failed)
            pass

    thread = threading.Thread(target=start, name="prefect-api-start", daemon=True)
    thread.start()
    return thread


class DemoInputs:
    """The three inputs made at once in forked processes (:meth:`start`), each waited for when needed
    (:meth:`get`); :meth:`close` ends the processes, also those still working (on Ctrl-C).

    Forked, as :func:`graph.runtime.processes.forked_pool`'s workers, and before this process opens a Bolt
    connection or Prefect's client; each worker still points any socket it inherited at ``/dev/null``.
    """

    def __init__(self) -> None:
        self._pool = multiprocessing.get_context("fork").Pool(3, initializer=drop_inherited_sockets)
        self._pending: dict[str, Any] = {}

    def start(self, name: str, job: Callable[..., Made], *args: Any) -> None:
        """Start ``job(*args)`` under ``name``."""
        self._pending[name] = self._pool.apply_async(job, args)

    def get(self, name: str) -> Made:
        """The outcome of the job started under ``name`` (waits for it).

        Raises:
            KeyError: no job was started under ``name``.
        """
        return self._pending[name].get()

    def close(self) -> None:
        """End the worker processes now (a job still running is abandoned)."""
        self._pool.terminate()
        self._pool.join()
