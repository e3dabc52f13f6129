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
# A batch makes many short-lived objects and few cycles. With the default thresholds the collector scanned every
# object, the imported modules' too, about once in 100 versions: 2.4-4.1 ms of a version's ~25 ms. What exists when
# the batch starts is frozen (never scanned; after a fork, shared), young objects are collected less often, and a
# full collection waits for the batch's end: 0.7 ms a version.
GC_THRESHOLDS = (10_000, 50, 1_000)


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
    """The garbage collector tuned for a batch (GC_THRESHOLDS, with what exists now frozen), then as it was. What a
    command froze before (cli._settle: its imports) stays frozen: gc.unfreeze would release that too."""
    thresholds, frozen = gc.get_threshold(), gc.get_freeze_count()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)
        if not frozen:
            gc.unfreeze()


def _ignore_interrupts() -> None:
    """Ctrl-C and SIGTERM are the parent's to handle: it ends the pool, without a traceback from every worker
    (a forked worker would otherwise inherit the command line's SIGTERM handler)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
