"""What runs on a worker: a batch of scenarios in, one JSON record each out.

Workers receive scenarios as plain dicts (:meth:`ccsim.Scenario.to_dict`) and
return each result as JSON text, so the same bytes go to the store and into
the table whichever executor ran them. A record holds ``rows`` (the summary,
one dict per flow), ``metrics`` (without those of :data:`HOW_IT_RAN`), ``error`` and
``traceback`` (empty strings on success), ``wall_time`` (s), ``warnings``
(:attr:`ccsim.Result.warnings`, when there are any) and, when asked for,
``traces`` (the tidy time series as lists).
"""

from __future__ import annotations

import ctypes
import json
import signal
import threading
import time
import traceback
from contextlib import contextmanager
from typing import Any, Callable, Iterator

import numpy as np
import pandas as pd

from ..errors import CcsimError
from ..scenario import Scenario


class ScenarioTimeout(CcsimError, TimeoutError):
    """A scenario ran longer than the sweep's per-scenario ``timeout``."""


def _json_default(x: Any) -> Any:
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, np.ndarray):
        return x.tolist()
    if x is pd.NA or x is None:
        return None
    if isinstance(x, (set, frozenset)):
        return sorted(x)
    return str(x)


def dumps(record: dict[str, Any]) -> str:
    """JSON text of a record: NaN kept (as ``NaN``), floats exact."""
    return json.dumps(record, default=_json_default, allow_nan=True, separators=(",", ":"))


@contextmanager
def deadline(seconds: float | None) -> Iterator[None]:
    """Raise :class:`ScenarioTimeout` in this thread after ``seconds`` of
    wall-clock time.

    In a process's main thread (a process-pool worker, or an in-process
    sweep) a ``SIGALRM`` timer interrupts the run. In any other thread (a
    Dask worker's) a timer thread raises the exception asynchronously in the
    running thread (``PyThreadState_SetAsyncExc``). Both take effect between
    two Python bytecodes, which the packet engine's event loop reaches
    constantly; a single long call into C (one huge numpy operation) is
    interrupted only when it returns.
    """
    if seconds is None:
        yield
        return
    message = f"ran longer than the sweep's timeout of {seconds:g} s (wall-clock)"
    if threading.current_thread() is threading.main_thread() and hasattr(signal, "setitimer"):
        def alarm(signum: int, frame: Any) -> None:
            raise ScenarioTimeout(message)

        previous = signal.signal(signal.SIGALRM, alarm)
        signal.setitimer(signal.ITIMER_REAL, seconds)
        try:
            yield
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
        return
    target = ctypes.c_ulong(threading.get_ident())
    lock, state = threading.Lock(), {"done": False}

    def fire() -> None:
        with lock:
            if not state["done"]:
                ctypes.pythonapi.PyThreadState_SetAsyncExc(target, ctypes.py_object(_Expired))
    timer = threading.Timer(seconds, fire)
    timer.daemon = True
    timer.start()
    try:
        try:
            yield
        finally:
            with lock:
                state["done"] = True
            timer.cancel()
    except _Expired:
        raise ScenarioTimeout(message) from None


class _Expired(Exception):
    """Raised asynchronously by :func:`deadline`'s timer thread; turned into
    :class:`ScenarioTimeout` (an exception raised this way cannot carry a
    message)."""


HOW_IT_RAN = ("wall_time", "batch")
"""Metrics that describe the machine or the batching, not the scenario: kept
out of the record's ``metrics`` (``wall_time`` becomes the record's own), so
that the table is the same on any executor and any batch size."""


def _record(result: Any, wall: float, traces: bool) -> dict[str, Any]:
    metrics = {k: v for k, v in result.metrics.items() if k not in HOW_IT_RAN}
    wall = result.metrics.get("wall_time", wall)
    out = {"rows": result.summary.reset_index().to_dict(orient="records"), "metrics": metrics,
           "error": "", "traceback": "", "wall_time": wall}
    warnings = list(getattr(result, "warnings", None) or ())
    if warnings:  # only when there are some: records without keep their bytes
        out["warnings"] = warnings
    if traces:
        t = result.traces
        out["traces"] = {"time": t["time"].tolist(),
                         "flow": [None if v is pd.NA else int(v) for v in t["flow"]],
                         "variable": t["variable"].astype(str).tolist(),
                         "value": t["value"].tolist()}
    return out


def _failure(exc: BaseException, wall: float) -> dict[str, Any]:
    return {"rows": [], "metrics": {}, "wall_time": wall,
            "error": "".join(traceback.format_exception_only(exc)).strip(),
            "traceback": "".join(traceback.format_exception(exc))}


def _run_one(run: Callable[[Scenario, str], Any], data: dict[str, Any], mode: str,
             timeout: float | None, traces: bool) -> str:
    started = time.perf_counter()
    try:
        with deadline(timeout):
            sc = Scenario.from_dict(data)
            result = run(sc, mode)
        return dumps(_record(result, time.perf_counter() - started, traces))
    except Exception as exc:  # one scenario's failure is its own record
        return dumps(_failure(exc, time.perf_counter() - started))


def _engine(scenario: Scenario, mode: str) -> Any:
    from ..run import run

    return run(scenario, mode)


def run_task(scenarios: list[dict[str, Any]], mode: str, timeout: float | None = None,
             traces: bool = False, runner: Callable[[Scenario, str], Any] | None = None
             ) -> list[str]:
    """Run a batch; one JSON record per scenario, in the batch's order.

    Without ``runner`` a batch of several goes to :func:`ccsim.run_many` in
    one call (the fluid engine integrates it as one array program), under a
    time limit of ``timeout`` per scenario in the batch; if that call raises,
    the scenarios run again one at a time so that only the failing one is
    recorded as an error. ``runner(scenario, mode)``, a module-level function,
    replaces :func:`ccsim.run` for each scenario.
    """
    if runner is None and len(scenarios) > 1:
        from ..run import run_many

        started = time.perf_counter()
        try:
            with deadline(None if timeout is None else timeout * len(scenarios)):
                built = [Scenario.from_dict(d) for d in scenarios]
                results = run_many(built, mode)
        except Exception:
            pass  # below, one at a time
        else:
            share = (time.perf_counter() - started) / len(scenarios)
            return [dumps(_record(r, share, traces)) for r in results]
    return [_run_one(runner or _engine, d, mode, timeout, traces) for d in scenarios]


def loads(text: str) -> dict[str, Any]:
    """Inverse of :func:`dumps`."""
    return json.loads(text)


__all__ = ["ScenarioTimeout", "run_task", "dumps", "loads", "deadline"]
