"""The ordered process map: results in order from other processes, errors carried back whole."""

from __future__ import annotations

import gc
import multiprocessing
import os
from pathlib import Path

import pytest

from symattn import ExamOptions, SpecError, build_exam
from symattn.exam.workers import MIN_ITEMS_PER_JOB, default_jobs, ordered_map

needs_fork = pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(), reason="no fork here")


def square_and_pid(x: int) -> tuple[int, int]:
    return x * x, os.getpid()


def reject_seven(x: int) -> int:
    if x == 7:
        raise SpecError("--count", "seven is not allowed")
    return x


@needs_fork
def test_results_come_in_order_from_other_processes():
    items = range(4 * MIN_ITEMS_PER_JOB)
    with ordered_map(square_and_pid, 2, len(items)) as run:
        results = list(run(iter(items)))
    assert [square for square, _ in results] == [x * x for x in items]
    assert os.getpid() not in {pid for _, pid in results}


def test_one_job_or_few_items_stay_in_this_process():
    for jobs, size in ((1, 100), (2, MIN_ITEMS_PER_JOB)):
        with ordered_map(square_and_pid, jobs, size) as run:
            assert {pid for _, pid in run(range(size))} == {os.getpid()}


@needs_fork
def test_an_error_in_a_worker_arrives_whole():
    with pytest.raises(SpecError) as error, ordered_map(reject_seven, 2, 100) as run:
        list(run(range(100)))
    assert error.value.field == "--count" and str(error.value) == "--count: seven is not allowed"


def die_at_five(x: int) -> int:
    if x == 5:
        os._exit(1)
    return x


@needs_fork
def test_a_dead_worker_is_an_error_not_a_hang():
    from concurrent.futures.process import BrokenProcessPool

    with pytest.raises(BrokenProcessPool), ordered_map(die_at_five, 2, 100) as run:
        list(run(range(100)))


def test_default_jobs_is_at_least_one():
    assert 1 <= default_jobs() <= 8


def cyclic_garbage(options: ExamOptions, out: Path) -> int:
    """The objects in reference cycles an exam leaves behind (found by one collection after it)."""
    gc.unfreeze()  # as build_exam from Python finds it: a batch after a command's freeze keeps its cycles frozen
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    try:
        build_exam(options, out, ("tex", "json", "moodle"))
        return gc.collect()
    finally:
        if enabled:
            gc.enable()


@pytest.mark.parametrize("kind, difficulty", [("self_attention", "easy"), ("cross_attention", "standard"),
                                              ("multi_head", "easy"), ("mixed", "easy"), ("mixed", "standard")])
def test_a_version_leaves_no_reference_cycles(kind, difficulty, tmp_path):
    # A batch runs without the cyclic collector: what its versions put in cycles would stay until its end. Seven
    # versions more (every kind once more in a mixed exam) leave no more cycles than the exam's own few.
    garbage = [cyclic_garbage(ExamOptions(count, 3, kind, difficulty, "en"), tmp_path / str(count))
               for count in (2, 7, 14)]  # the first warms the caches and lazy imports
    assert garbage[1] == garbage[2]


def test_a_batch_leaves_the_collector_as_it_found_it():
    gc.unfreeze()  # as a build_exam called from Python finds it (a command run by an earlier test froze its imports)
    with ordered_map(square_and_pid, 1, 10) as run:
        assert not gc.isenabled()
        list(run(range(10)))
    assert gc.isenabled() and gc.get_freeze_count() == 0


def test_a_batch_inside_a_command_freezes_what_it_leaves():
    gc.unfreeze()
    gc.freeze()  # as cli._settle does with a command's imports
    try:
        before = gc.get_freeze_count()
        kept = [[x] for x in range(100)]  # objects the batch leaves behind
        with ordered_map(square_and_pid, 1, 10) as run:
            list(run(range(10)))
            kept.append([kept])
        assert gc.isenabled() and gc.get_freeze_count() > before
    finally:
        gc.unfreeze()


def test_a_command_leaves_nothing_frozen(tmp_path):
    from symattn.cli import main

    gc.unfreeze()
    assert main(["exam", "--count", "2", "--seed", "1", "--format", "json", "--out", str(tmp_path)]) == 0
    assert gc.get_freeze_count() == 0 and gc.isenabled()
