"""Running a catalog's tasks on the `processes` scheduler's pool without dask in the client.

The graph of a catalog run is simple: batches that depend on nothing, and for each split
archive a sha256 and a check task, member ranges that need the sha256, and a last task that
needs them all (run._graph builds it, the same dict of tasks the other schedulers get from
dask). Running it takes a queue, not dask's scheduler: importing dask was about 0.5 G
instructions on the client's critical path, between the walk's end and the first unit sent
(both workers idle), and dask's bookkeeping another 0.5 M a unit.
"""

from __future__ import annotations

import pickle
import queue
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from typing import Any

# A graph as run._graph makes it: key -> (call, function, Args, *keys whose results follow).
Graph = dict[str, tuple[Any, ...]]


def run_on_pool(
    pool: Any,
    graphs: Iterable[tuple[Graph, list[str]]],
    in_flight: int,
    done: Callable[[str, Any], None],
) -> None:
    """Run every task of `graphs` (each a graph and its final keys, taken as they are needed)
    on `pool` (a concurrent.futures executor), at most `in_flight` at once, in the order planned:
    a task whose inputs have just been made goes first (a split archive's last task), then the
    rest in the order of their graphs and keys. `done(key, result)` is called, in this thread, as
    each final task ends. A task that raises ends the run with its exception (the tasks already
    sent are left to the pool, as dask's schedulers do)."""
    finished: queue.SimpleQueue[Any] = queue.SimpleQueue()
    ready: deque[str] = deque()
    tasks: Graph = {}
    finals: set[str] = set()
    waiting: dict[str, int] = {}  # key -> inputs not made yet
    needed_by: dict[str, list[str]] = {}
    results: dict[str, Any] = {}
    uses: dict[str, int] = {}  # key -> tasks that still need its result
    running: dict[Any, str] = {}
    pending: Iterator[tuple[Graph, list[str]]] = iter(graphs)

    def plan_more() -> bool:
        """Take the next graph in; False when there is none."""
        for graph, keys in pending:
            finals.update(keys)
            for key, task in graph.items():
                tasks[key] = task
                inputs = task[3:]
                if inputs:
                    waiting[key] = len(inputs)
                    for name in inputs:
                        needed_by.setdefault(name, []).append(key)
                        uses[name] = uses.get(name, 0) + 1
                else:
                    ready.append(key)
            return True
        return False

    def send(key: str) -> None:
        call, function, args, *inputs = tasks.pop(key)
        values = [results[name] for name in inputs]
        for name in inputs:
            uses[name] -= 1
            if not uses[name]:
                del uses[name], results[name]
        future = pool.submit(call, function, args, *values)
        running[future] = key
        future.add_done_callback(finished.put)

    more = True
    while True:
        while len(running) < in_flight:
            if ready:
                send(ready.popleft())
            elif more:
                more = plan_more()
            else:
                break
        if not running:
            break
        future = finished.get()
        key = running.pop(future)
        result = future.result()
        if key in finals:
            finals.discard(key)
            done(key, result)
        dependents = needed_by.pop(key, None)
        if dependents:
            results[key] = result
            made = []
            for dependent in dependents:
                waiting[dependent] -= 1
                if not waiting[dependent]:
                    del waiting[dependent]
                    made.append(dependent)
            ready.extendleft(reversed(made))


def dumps(value: Any) -> bytes:
    """pickle, in C, where it can (every task of a run: module functions, named by reference),
    cloudpickle only where it cannot (a function made at run time: a test's)."""
    try:
        return pickle.dumps(value, pickle.HIGHEST_PROTOCOL)
    except (pickle.PicklingError, AttributeError, TypeError):
        import cloudpickle

        return bytes(cloudpickle.dumps(value, pickle.HIGHEST_PROTOCOL))


def run_pickled(data: bytes) -> Any:
    """In a worker: the call `PickledPool.submit` pickled."""
    function, args = pickle.loads(data)
    return function(*args)


class PickledPool:
    """A process pool whose tasks are pickled by `dumps` first: the pool's own pickle names
    functions by reference only, so a function made at run time would not cross to a worker
    (dask's schedulers pickled with cloudpickle, which was half of the client's work per unit)."""

    def __init__(self, pool: Any) -> None:
        self.pool = pool

    def submit(self, function: Any, *args: Any) -> Any:
        return self.pool.submit(run_pickled, dumps((function, args)))
