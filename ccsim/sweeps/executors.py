"""Where a sweep's tasks run: in this process, a process pool, any
``concurrent.futures.Executor``, or a Dask cluster."""

from __future__ import annotations

import concurrent.futures as cf
import ctypes
import multiprocessing
import os
import signal
import sys
from typing import Any

from ..errors import ScenarioError, ScenarioTypeError


def machine_width() -> int:
    """CPUs this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def is_dask_client(x: Any) -> bool:
    """Whether ``x`` is a ``dask.distributed.Client`` (without importing Dask)."""
    return type(x).__name__ == "Client" and type(x).__module__.startswith("distributed")


def check(workers: int | None, executor: Any) -> None:
    """Fail on a bad ``workers`` or ``executor``, naming it."""
    if executor is not None:
        if workers is not None:
            raise ScenarioError("workers", workers, "None when an executor is given")
        if not (is_dask_client(executor) or isinstance(executor, cf.Executor)):
            raise ScenarioTypeError("executor", executor,
                                    "a concurrent.futures.Executor or a dask.distributed.Client")
    elif workers is not None and (isinstance(workers, bool) or not isinstance(workers, int)
                                  or workers < 1):
        raise ScenarioError("workers", workers, "a whole number ≥ 1, or None for every CPU")


def choose(workers: int | None, executor: Any, tasks: int) -> tuple[cf.Executor | None, bool]:
    """The executor to use and whether the sweep owns it (and shuts it down).

    ``None`` means run in this process: ``workers=1``, or a single task.
    Pools are created with the ``fork`` start method on Linux, so algorithms
    registered in this process (a notebook's classes) exist in the workers,
    and their workers die with the sweep (:func:`die_with_parent`).
    """
    check(workers, executor)
    if executor is not None:
        if is_dask_client(executor):
            return executor.get_executor(pure=False), False
        return executor, False
    width = machine_width() if workers is None else workers
    if width == 1 or tasks <= 1:
        return None, False
    if sys.platform != "linux":
        return cf.ProcessPoolExecutor(min(width, tasks)), True
    fork = multiprocessing.get_context("fork")
    return cf.ProcessPoolExecutor(min(width, tasks), mp_context=fork, initializer=die_with_parent,
                                  initargs=(os.getpid(),)), True


def die_with_parent(parent: int) -> None:
    """Pool-worker initializer (Linux): the kernel kills this worker when the
    sweep's process dies, even by SIGKILL (``PR_SET_PDEATHSIG``), so that a
    killed sweep leaves no orphan running its scenario on."""
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # 1: PR_SET_PDEATHSIG
    if os.getppid() != parent:  # the sweep died before the line above
        os._exit(1)
