"""Process utilities the loaders, the extractor's runner and the report scorer share: how many cores this
process may use, and a pool of forked workers that hold none of its network connections."""

from __future__ import annotations

import gc
import multiprocessing
import os
import stat
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from typing import Iterator


def available_cores() -> int:
    """The CPU cores this process may run on (its affinity mask where the platform has one, which honours
    ``taskset`` and container CPU sets, else ``os.cpu_count()``): the default number of workers
    (:func:`worker_count`); at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # macOS, Windows
        return max(1, os.cpu_count() or 1)


def worker_count(requested: int | None, work: float, parallel_from: float) -> int:
    """How many worker processes a command runs on, as ``--workers`` means it everywhere: ``requested`` when
    given (0: none, the work runs in this process); unset, one per core (:func:`available_cores`) once the
    work (bytes, reports, files: the caller's unit) comes to ``parallel_from``, below it, or on a machine of
    one core, 0: starting workers would cost more than they save.

    Raises:
        ValueError: ``requested`` below 0.
    """
    if requested is not None:
        if requested < 0:
            raise ValueError(f"workers must be 0 or more, got {requested}")
        return requested
    cores = available_cores()
    return cores if cores > 1 and work >= parallel_from else 0


@contextmanager
def forked_pool(workers: int) -> Iterator[ProcessPoolExecutor]:
    """A pool of ``workers`` forked processes that hold none of this process's network connections, as a
    context (the pool is shut down at its end).

    Forked: ``spawn`` would re-run the caller's main module in each worker, which for a script without an
    ``if __name__ == "__main__"`` guard means running the script twice. The workers only parse files and
    write local files (no driver, no Prefect calls, no logging), which is what makes forking a process
    that has threads safe enough here. A fork copies every open socket, the driver's Bolt connection
    included: a worker that outlived a killed parent would keep that connection, and with it the parent's
    open write transaction and its locks, alive. Each worker therefore first points every socket it
    inherited at ``/dev/null`` (:func:`drop_inherited_sockets`); the pool's own pipes are not sockets.

    The objects this process holds are frozen out of the garbage collector while the pool lives
    (``gc.freeze``, which the Python documentation recommends before a fork without exec): a worker's
    collections would otherwise touch every object it inherited and so copy the pages of the plan and
    the rest into each worker. On the 10,000-patient cohort's bulk load the three workers held 234 MB each.
    """
    gc.freeze()
    try:
        with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork"),
                                 initializer=drop_inherited_sockets) as pool:
            yield pool
    finally:
        gc.unfreeze()


def drop_inherited_sockets() -> int:
    """Replace every socket file descriptor of this process by ``/dev/null``; returns how many.

    ``dup2`` rather than ``close``: the socket objects copied from the parent still name their descriptor
    numbers, and closing one of them later must not close a file this process opened since.
    """
    null = os.open(os.devnull, os.O_RDWR)
    dropped = 0
    try:
        for name in os.listdir("/proc/self/fd") if os.path.isdir("/proc/self/fd") else []:
            fd = int(name)
            try:
                if fd != null and stat.S_ISSOCK(os.fstat(fd).st_mode):
                    os.dup2(null, fd)
                    dropped += 1
            except OSError:
                continue  # the listing's own descriptor, closed by now
    finally:
        os.close(null)
    return dropped
