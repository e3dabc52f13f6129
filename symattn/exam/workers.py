"""An ordered map over forked worker processes, or in this process when processes would not pay."""

from __future__ import annotations

import gc
import multiprocessing
import os
import signal
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from functools import partial
from typing import Any

MAX_JOBS = 8
MIN_ITEMS_PER_JOB = 20  # a fresh worker warms up first (caches, lazy imports): it needs work to pay for it


def default_jobs() -> int:
    """The processors this process may use, at most MAX_JOBS."""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, min(cpus, MAX_JOBS))


@contextmanager
def ordered_map(function: Callable[[Any], Any], jobs: int, size: int) -> Iterator[Callable[[Iterable], Iterator]]:
    """A map(function, items) for about `size` items, results in order, run by up to `jobs` processes.

    The processes are forked (they start with this process's modules and state; items and results are
    pickled); one job, too few items or no fork on this platform run the map in this process instead.
    """
    jobs = min(jobs, size // MIN_ITEMS_PER_JOB)
    with _batch_collection():
        if jobs <= 1 or "fork" not in multiprocessing.get_all_start_methods():
            yield partial(map, function)
            return
        yield from _forked_map(function, jobs, size)


def _forked_map(function: Callable[[Any], Any], jobs: int, size: int) -> Iterator[Callable[[Iterable], Iterator]]:
    """ordered_map's map over `jobs` forked processes, ended when the caller is done with it."""
    chunk = max(1, min(4, size // (4 * jobs)))  # small chunks: even shares, a short wait for the last, a smooth bar
    # Unlike multiprocessing.Pool, which waits forever for the task of a worker that died, the executor then
    # raises BrokenProcessPool.
    pool = ProcessPoolExecutor(jobs, multiprocessing.get_context("fork"), initializer=_ignore_interrupts)
    try:
        yield partial(pool.map, function, chunksize=chunk)
    finally:
        pool.shutdown(cancel_futures=True)  # after an error or Ctrl-C: no more tasks


@contextmanager
def _batch_collection() -> Iterator[None]:
    """A batch without the cyclic collector. A version makes no reference cycles (engine.Projections; a test
    holds to it), so collecting would only scan what outlives it, the per-process caches: ~1 ms a version. What
    exists when the batch starts is frozen (after a fork, shared); at its end, what it left is frozen too when a
    command froze its imports before (cli._settle), else all is unfrozen again (build_exam called from Python)."""
    enabled, frozen = gc.isenabled(), gc.get_freeze_count()
    gc.freeze()
    gc.disable()
    try:
        yield
    finally:
        (gc.freeze if frozen else gc.unfreeze)()
        if enabled:
            gc.enable()


def _ignore_interrupts() -> None:
    """Ctrl-C and SIGTERM are the parent's to handle: it ends the pool, without a traceback from every worker
    (a forked worker would otherwise inherit the command line's SIGTERM handler)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
