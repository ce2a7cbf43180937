"""A run's worker processes, each fed on its own, so that a file's check runs where it was surveyed.

Why: with `-j N`, a run surveys every file (preprocess, parse, lower: `analyzer.program`) and
then checks it, and the worker that surveyed a file keeps its front end for the file's check
(`api_front`). One pool of N workers hands each check to whichever worker is free, so most
checks met the other worker's memo and made their front end again: measured 2026-11-28 over
the five public corpora with `-j 2` (664 files), 314 of the 554 checks did, 16.6 s of CPU, as
much as a sixth of the run. Here each worker is a pool of one process with a queue of its own:
a check is queued to the worker that surveyed its file, and a worker whose queue is empty takes
work queued to no worker, then the last of the longest other queue (it makes that file's front
end again, as before, rather than wait).

Each worker has at most `IN_FLIGHT` tasks submitted at a time, so it never waits for the next
while the run's process is busy, and the queues decide the rest. A worker that dies is not fed
again; a task it held or that no living worker can take comes back as a future holding
`BrokenProcessPool`, and the caller does it in its own process (as `api.run_files` did).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any

__all__ = ["IN_FLIGHT", "Task", "Workers"]

IN_FLIGHT = 2  # tasks submitted to one worker at a time: the one it runs and the next
#: A function to run in a worker and its arguments (both picklable).
Task = tuple[Callable[..., Any], tuple[Any, ...]]


class Workers:
    """`jobs` worker processes, each started when first fed (a run whose every file the results
    cache answers starts none), each running `initializer` first."""

    def __init__(self, jobs: int, initializer: Callable[[], None] | None = None) -> None:
        self.jobs = jobs
        self._initializer = initializer
        self._started: dict[int, ProcessPoolExecutor] = {}
        self._dead: set[int] = set()

    def __enter__(self) -> Workers:
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()

    def shutdown(self, cancel: bool = False) -> None:
        """End every worker (`cancel`: without waiting for what is queued)."""
        for executor in self._started.values():
            executor.shutdown(wait=not cancel, cancel_futures=cancel)

    def run(
        self, tasks: Sequence[Task], homes: Sequence[int | None] | None = None
    ) -> Iterator[tuple[int, int, Future]]:
        """(index of the task, the worker that ran it (-1: none), its future) for each task as it
        finishes. `homes[i]`: the worker task i is queued to (None: to none, taken by the first
        that is free)."""
        queues = _queues(len(tasks), self.jobs, homes)
        running: dict[Future, tuple[int, int]] = {}
        try:
            self._feed(tasks, queues, running)
            while running:
                done, _ = wait(running, return_when=FIRST_COMPLETED)
                for future in done:
                    i, worker = running.pop(future)
                    yield i, worker, future
                self._feed(tasks, queues, running)
        except BaseException:  # Ctrl-C, or the caller stopped: do not wait for the queued tasks
            self.shutdown(cancel=True)
            raise
        for queue in queues:  # no worker is left to take these
            for i in queue:
                yield i, -1, _broken()

    def _feed(self, tasks: Sequence[Task], queues: list[deque[int]], running: dict[Future, tuple[int, int]]) -> None:
        """Submit to each living worker what it takes next, up to `IN_FLIGHT` tasks."""
        for worker in range(self.jobs):
            held = sum(1 for _, w in running.values() if w == worker)
            while held < IN_FLIGHT and worker not in self._dead:
                i = _next_task(queues, worker)
                if i is None:
                    break
                function, arguments = tasks[i]
                try:
                    future = self._executor(worker).submit(function, *arguments)
                except (BrokenProcessPool, RuntimeError):  # the worker died in earlier work
                    self._dead.add(worker)
                    queues[-1].appendleft(i)  # for another worker, or for the caller
                    break
                running[future] = (i, worker)
                held += 1

    def _executor(self, worker: int) -> ProcessPoolExecutor:
        executor = self._started.get(worker)
        if executor is None:
            executor = self._started[worker] = ProcessPoolExecutor(max_workers=1, initializer=self._initializer)
        return executor


def _queues(count: int, jobs: int, homes: Sequence[int | None] | None) -> list[deque[int]]:
    """One queue of task indices per worker, then the queue of the tasks homed to no worker."""
    queues: list[deque[int]] = [deque() for _ in range(jobs + 1)]
    for i in range(count):
        home = None if homes is None else homes[i]
        queues[home if home is not None and 0 <= home < jobs else jobs].append(i)
    return queues


def _next_task(queues: list[deque[int]], worker: int) -> int | None:
    """What `worker` takes next: the first of its own queue, else the first homed to no worker,
    else the last of the longest other queue; None when every queue is empty."""
    if queues[worker]:
        return queues[worker].popleft()
    if queues[-1]:
        return queues[-1].popleft()
    longest = max(queues[:-1], key=len)
    return longest.pop() if longest else None


def _broken() -> Future:
    """A finished future holding `BrokenProcessPool`: its task is to be done by the caller."""
    future: Future = Future()
    future.set_exception(BrokenProcessPool("no worker process left"))
    return future
