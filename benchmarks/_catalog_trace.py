"""`gamepak catalog` with a timeline: run as `python _catalog_trace.py TRACE catalog ARGS...`.

It wraps the catalog's phases (the walk, the scheduler's start, each unit of work, the parts
written at the end) so that each appends one line to the file TRACE: the event, the process,
the system-wide clock (CLOCK_MONOTONIC, the same in every process) and that process's own CPU
seconds. The workers of a dask.distributed cluster import this module to run the wrapped tasks
(cloudpickle names module functions by reference), so the cluster must have been started with
this folder on its path (the timeline of bench_catalog.py starts it so) and TRACE in
GAMEPAK_CATALOG_TRACE. Nothing here changes what the catalog does: only when it says so.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any

_clock = time.CLOCK_MONOTONIC


def event(name: str, detail: str = "") -> None:
    """One line of the timeline: `name pid clock cpu detail`."""
    path = os.environ.get("GAMEPAK_CATALOG_TRACE")
    if not path:
        return
    line = f"{name} {os.getpid()} {time.clock_gettime(_clock):.6f} {time.process_time():.6f} {detail}\n"
    descriptor = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(descriptor, line.encode())
    finally:
        os.close(descriptor)


def _task(name: str, function: Any, files: int, args: tuple[Any, ...]) -> Any:
    event("task-start", f"{name} {files}")
    try:
        return function(*args)
    finally:
        event("task-end", f"{name} {files}")


def traced_batch(*args: Any) -> Any:
    from gamepak.catalog.tasks import run_batch

    return _task("batch", run_batch, len(args[2].refs), args)


def traced_finish_output(out: str, problems: Any) -> None:
    from gamepak.catalog.run import finish_output

    event("finish-start")
    finish_output(out, problems=problems)
    event("finish-end")


def traced_fill_empty_tables(out: str) -> None:
    from gamepak.catalog.output import fill_empty_tables

    event("finish-start")
    fill_empty_tables(out)
    event("finish-end")


def install() -> None:
    """Wrap the catalog's phases (in this process; forked workers inherit the wrappers)."""
    import functools

    from gamepak.catalog import run

    # (The wrappers replace module attributes on purpose, whatever their declared types.)
    walk = run.iter_files

    def traced_walk(*args: Any, **kwargs: Any) -> Any:
        event("walk-start")
        yield from walk(*args, **kwargs)
        event("walk-end")

    run.iter_files = traced_walk  # type: ignore[assignment]
    run.run_batch = traced_batch  # type: ignore[assignment]
    execute: Any = run._execute

    def traced_execute(*args: Any) -> Any:
        event("execute-start")
        *first, finish = args[:7]
        if isinstance(finish, functools.partial):  # finish_output with the walk's problems
            finish = functools.partial(traced_finish_output, **finish.keywords)
        else:
            finish = traced_fill_empty_tables
        return execute(*first, finish, *args[7:])

    run._execute = traced_execute  # type: ignore[assignment]
    graph = run._graph

    def traced_graph(units: Any, *args: Any) -> Any:
        event("submit", str(len(units)))
        return graph(units, *args)

    run._graph = traced_graph  # type: ignore[assignment]
    for name in ("_fork_pool", "_spawn_pool"):
        made = getattr(run, name)

        def traced_pool(workers: int, made: Any = made, name: str = name) -> Any:
            pool = made(workers)
            event("pool", f"{name} {pool is not None}")
            return pool

        setattr(run, name, traced_pool)


def main() -> None:
    trace_path, *arguments = sys.argv[1:]
    os.environ["GAMEPAK_CATALOG_TRACE"] = trace_path
    event("client-start")
    install()
    event("imports-catalog")
    from gamepak.cli import run

    sys.argv = ["gamepak", *arguments]
    try:
        run()
    finally:
        event("client-end")


if __name__ == "__main__":
    main()
