"""A run's workers (analyzer.workers): a task queued to a worker runs there, a worker with
nothing of its own takes the others' work, and a file's check runs where it was surveyed, so
that its front end is made once (`api_front`)."""

from __future__ import annotations

import os
from collections import deque
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

import pytest

from analyzer import api_front, program
from analyzer.api import Options
from analyzer.workers import IN_FLIGHT, Workers, _next_task, _queues


def pid(tag: int) -> tuple[int, int]:
    return tag, os.getpid()


def test_the_queues_hold_each_task_at_its_home_and_the_rest_in_the_last():
    queues = _queues(6, 2, [0, None, 1, 1, 7, 0])  # 7: no such worker, queued to none
    assert [list(q) for q in queues] == [[0, 5], [2, 3], [1, 4]]
    assert [list(q) for q in _queues(3, 2, None)] == [[], [], [0, 1, 2]]


def test_a_worker_takes_its_own_then_the_unhomed_then_the_last_of_the_longest_other_queue():
    queues = [deque([0, 1]), deque([2, 3, 4]), deque([5])]
    taken = [_next_task(queues, 0) for _ in range(5)]
    assert taken == [0, 1, 5, 4, 3]
    assert [list(q) for q in queues] == [[], [2], []]
    assert _next_task(queues, 1) == 2
    assert _next_task(queues, 0) is None


def test_tasks_queued_to_a_worker_run_in_that_worker():
    homes = [0] * IN_FLIGHT + [1] * IN_FLIGHT  # fed at once: no worker runs out and takes another's
    with Workers(2) as workers:
        ran = {
            i: (worker, future.result()) for i, worker, future in workers.run([(pid, (i,)) for i in range(4)], homes)
        }
    assert sorted(ran) == [0, 1, 2, 3]
    assert all(worker == homes[i] and tag == i for i, (worker, (tag, _)) in ran.items())
    assert ran[0][1][1] == ran[1][1][1] != ran[2][1][1] == ran[3][1][1]


def test_a_worker_with_nothing_queued_takes_the_other_workers_tasks():
    with Workers(2) as workers:
        ran = {
            i: (worker, future.result()[0])
            for i, worker, future in workers.run([(pid, (i,)) for i in range(6)], [0] * 6)
        }
    assert {i: tag for i, (_, tag) in ran.items()} == {i: i for i in range(6)}
    assert {worker for worker, _ in ran.values()} == {0, 1}  # worker 1 took some from its first feed


def test_a_task_no_living_worker_takes_comes_back_broken_for_the_caller():
    workers = Workers(1)
    workers._dead.add(0)
    out = [(i, worker) for i, worker, future in workers.run([(pid, (i,)) for i in range(3)])]
    assert out == [(0, -1), (1, -1), (2, -1)]
    with pytest.raises(BrokenProcessPool):
        next(iter(workers.run([(pid, (0,))])))[2].result()


KERNEL = "__global__ void k{n}(float *x)\n{{\n    x[threadIdx.x * {n}] = 0;\n}}\nint main() {{ float *x; k{n}<<<1, 32>>>(x); }}\n"


def test_each_file_of_a_two_job_run_is_preprocessed_parsed_and_lowered_once(tmp_path: Path, monkeypatch):
    made = tmp_path / "made.txt"
    plain = api_front.parsed_and_lowered

    def logged(pre, parsed, path, elsewhere, limits):  # runs in the workers (forked: they inherit it)
        with open(made, "a") as out:
            out.write(f"{Path(path).name} {os.getpid()}\n")
        return plain(pre, parsed, path, elsewhere, limits)

    monkeypatch.setattr(api_front, "parsed_and_lowered", logged)
    files = []
    for n in (2, 3, 4, 5):  # 4 files: the surveys and then the checks are fed to the 2 workers at once
        files.append(tmp_path / f"k{n}.cu")
        files[-1].write_text(KERNEL.format(n=n))
    reports = program.check_program([str(f) for f in files], Options(), jobs=2)
    lines = made.read_text().split("\n")[:-1]
    assert sorted(line.split()[0] for line in lines) == ["k2.cu", "k3.cu", "k4.cu", "k5.cu"]
    assert len({line.split()[1] for line in lines}) == 2  # surveyed in two workers
    per_request = [r.kernels[0].costs[0].per_request for r in reports]
    assert per_request == [8, 12, 16, 20]
