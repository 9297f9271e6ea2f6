"""What runs on a worker: a batch of scenarios in, one JSON record each out.

Workers receive scenarios as plain dicts (:meth:`ccsim.Scenario.to_dict`) and
return each result as JSON text, so the same bytes go to the store and into
the table whichever executor ran them. A record holds ``rows`` (the summary,
one dict per flow), ``metrics`` (without those of :data:`HOW_IT_RAN`), ``error`` and
``traceback`` (empty strings on success), ``wall_time`` (s), ``warnings``
(:attr:`ccsim.Result.warnings`, when there are any) and, when asked for,
``traces`` (the tidy time series as lists). The text is strict JSON: NaN
and infinities are the strings ``"NaN"``, ``"Infinity"`` and ``"-Infinity"``
(:func:`dumps`, :func:`loads`).

With a ``timeout`` (or after a worker died) a task runs in a helper process
forked from the worker (once per sweep), which the worker kills when the
time is up and replaces: no window law can hold off a ``SIGKILL``, and a
helper that dies (``os._exit``, a crash in C code) costs only its own
scenario.
"""

from __future__ import annotations

import ctypes
import json
import math
import os
import pickle
import select
import signal
import sys
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


class WorkerDied(CcsimError):
    """The process running a scenario died (``os._exit``, a signal, a crash in
    C code) before it returned a result."""


class BadRecord(CcsimError, ValueError):
    """Stored record text that is not a record (damaged, or hand-edited)."""


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


NON_FINITE = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}
"""How records spell the floats JSON has no numbers for."""


def _finite(x: Any) -> Any:
    """``x`` with every NaN and infinity replaced by its :data:`NON_FINITE` name."""
    if isinstance(x, np.generic):
        x = x.item()
    elif isinstance(x, np.ndarray):
        x = x.tolist()
    if isinstance(x, float):
        if math.isfinite(x):
            return x
        return "NaN" if math.isnan(x) else ("Infinity" if x > 0 else "-Infinity")
    if isinstance(x, dict):
        return {k: _finite(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_finite(v) for v in x]
    return x


def _restore(x: Any) -> Any:
    if isinstance(x, str):
        return NON_FINITE.get(x, x)
    if isinstance(x, dict):
        return {k: _restore(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_restore(v) for v in x]
    return x


def dumps(record: Any) -> str:
    """Strict JSON text of a record (any JSON-able value): floats exact, NaN
    and infinities as the strings of :data:`NON_FINITE`, so that every record
    passes SQLite's ``json_valid``."""
    options = {"default": _json_default, "allow_nan": False, "separators": (",", ":")}
    try:
        return json.dumps(record, **options)
    except ValueError:  # a NaN or an infinity somewhere: spell them out
        return json.dumps(_finite(record), **options)


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
             traces: bool = False, runner: Callable[[Scenario, str], Any] | None = None,
             isolate: bool = False, token: str | None = None) -> list[str]:
    """Run a batch; one JSON record per scenario, in the batch's order.

    Without ``runner`` a batch of several goes to :func:`ccsim.run_many` in
    one call (the fluid engine integrates it as one array program), under a
    time limit of ``timeout`` per scenario in the batch; if that call raises,
    the scenarios run again one at a time so that only the failing one is
    recorded as an error. ``runner(scenario, mode)``, a module-level function,
    replaces :func:`ccsim.run` for each scenario.

    With a ``timeout``, or ``isolate`` (a batch that was running when a
    worker died), the batch runs in a helper process forked from this one
    (once per sweep ``token`` and thread), killed when its time is up; a
    helper that dies is recorded as :class:`WorkerDied`, naming the
    scenario, and replaced. Without either it runs here.
    """
    if CAN_FORK and (timeout is not None or isolate):
        return _isolated(scenarios, mode, timeout, traces, runner, token)
    return _run_task(scenarios, mode, timeout, traces, runner)


def _run_task(scenarios: list[dict[str, Any]], mode: str, timeout: float | None,
              traces: bool, runner: Callable[[Scenario, str], Any] | None) -> list[str]:
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


def loads(text: str) -> Any:
    """Inverse of :func:`dumps` (bare ``NaN`` tokens, as older stores have
    them, are read too)."""
    value = json.loads(text)
    if '"NaN"' in text or 'Infinity"' in text:
        value = _restore(value)
    return value


_FIELDS = (("rows", list), ("metrics", dict), ("error", str), ("traceback", str))


def record(text: Any) -> dict[str, Any]:
    """The record in ``text``, checked; :class:`BadRecord` says what is wrong
    with one that is not."""
    if not isinstance(text, (str, bytes)):
        raise BadRecord(f"a record is JSON text, not {type(text).__name__}")
    try:
        rec = loads(text)
    except ValueError as exc:
        raise BadRecord(f"not JSON ({exc})") from None
    if not isinstance(rec, dict):
        raise BadRecord(f"a JSON object, not {type(rec).__name__}")
    for name, kind in _FIELDS:
        if not isinstance(rec.get(name), kind):
            raise BadRecord(f"its {name!r} is not a {kind.__name__}")
    if not all(isinstance(row, dict) for row in rec["rows"]):
        raise BadRecord("its 'rows' are not all objects")
    wall = rec.get("wall_time")
    if isinstance(wall, bool) or not isinstance(wall, (int, float)):
        raise BadRecord("its 'wall_time' is not a number")
    if not isinstance(rec.get("warnings", []), list) or not all(
            isinstance(w, str) for w in rec.get("warnings", [])):
        raise BadRecord("its 'warnings' are not a list of strings")
    return rec


# -- a killable child per task ---------------------------------------------------------------
CAN_FORK = sys.platform == "linux"
"""Whether tasks can run in a forked child (Linux). Elsewhere a timeout falls
back to :func:`deadline`, and a worker's death costs its whole batch."""


def _describe(status: int) -> str:
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = str(sig)
        return f"was killed by signal {name}"
    return f"exited with code {os.waitstatus_to_exitcode(status)}"


def _read_exact(fd: int, n: int) -> bytes | None:
    """``n`` bytes from a blocking ``fd``; ``None`` at end-of-file."""
    chunks, got = [], 0
    while got < n:
        chunk = os.read(fd, min(n - got, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(len(data).to_bytes(8, "little") + data)
    while view:
        view = view[os.write(fd, view):]


def _helper_main(requests: int, replies: int, parent: int) -> None:
    """The helper process: run each task it is sent, reply with its
    records, until its pipe closes; exit without the parent's cleanup."""
    code = 0
    try:
        from .executors import die_with_parent

        die_with_parent(parent)
        while True:
            head = _read_exact(requests, 8)
            if head is None:
                break
            payload = _read_exact(requests, int.from_bytes(head, "little"))
            if payload is None:
                break
            scenarios, mode, traces, runner = pickle.loads(payload)
            _write_all(replies, json.dumps(_run_task(scenarios, mode, None, traces,
                                                     runner)).encode())
    except BaseException:  # noqa: BLE001 - a law's SystemExit, a broken pipe: the exit code
        code = 70
    finally:
        os._exit(code)


class _Helper:
    """A process forked from this one that runs tasks sent to it, killed
    (and replaced) when one runs out of time or when it dies: the "worker
    process that can be killed" behind a timeout. Forked once per sweep and
    thread, so that a timeout costs no fork per scenario; ``token`` names
    the sweep, so that a helper never outlives the algorithms registered
    when its sweep began."""

    def __init__(self, token: str | None) -> None:
        self.token, self.owner = token, os.getpid()
        requests_r, self.requests = os.pipe()
        self.replies, replies_w = os.pipe()
        parent = os.getpid()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the helper; coverage cannot follow it
            os.close(self.requests)
            os.close(self.replies)
            _helper_main(requests_r, replies_w, parent)
        os.close(requests_r)
        os.close(replies_w)
        self.pid = pid
        try:
            self.exited: int | None = os.pidfd_open(pid)
        except (AttributeError, OSError):  # an old kernel: the pipe's end tells
            self.exited = None
        os.set_blocking(self.replies, False)
        self.alive = True

    def run(self, task: tuple[Any, ...], seconds: float | None
            ) -> tuple[list[str] | None, str]:
        """The records of ``task`` and ``""``; or ``None`` and why there are
        none: ``"timeout"`` (killed after ``seconds``), or how it died."""
        try:
            _write_all(self.requests, pickle.dumps(task))
        except OSError:  # it died while idle
            return None, self._reap()
        data, end = bytearray(), None if seconds is None else time.monotonic() + seconds
        watched = [self.replies] if self.exited is None else [self.replies, self.exited]
        interrupted = True
        try:
            while True:
                wait = None if end is None else max(0.0, end - time.monotonic())
                ready, _, _ = select.select(watched, [], [], wait)
                if not ready:
                    self.kill()
                    interrupted = False
                    return None, "timeout"
                eof = self._drain(data)
                if len(data) >= 8 and len(data) - 8 >= int.from_bytes(data[:8], "little"):
                    interrupted = False
                    size = int.from_bytes(data[:8], "little")
                    return json.loads(bytes(data[8:8 + size])), ""
                if eof or self.replies not in ready:  # it exited, without a whole reply
                    interrupted = False
                    return None, self._reap()
        finally:
            if interrupted:  # this process is being interrupted (KeyboardInterrupt)
                self.kill()

    def _drain(self, data: bytearray) -> bool:
        while True:
            try:
                chunk = os.read(self.replies, 1 << 16)
            except BlockingIOError:
                return False
            if not chunk:
                return True
            data.extend(chunk)

    def _reap(self) -> str:
        _, status = os.waitpid(self.pid, 0)
        self._close()
        return "exited without a result" if status == 0 else _describe(status)

    def kill(self) -> None:
        if self.alive:
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
            self._close()

    def close(self) -> None:
        """End it: its pipe closes and it exits."""
        if self.alive:
            os.close(self.requests)
            self.requests = -1
            os.waitpid(self.pid, 0)
            self._close()

    def _close(self) -> None:
        self.alive = False
        for fd in (self.requests, self.replies, self.exited):
            if fd is not None and fd >= 0:
                os.close(fd)


_helpers = threading.local()


def _helper(token: str | None) -> _Helper:
    """This thread's live helper for the sweep ``token``, forked if needed."""
    helper = getattr(_helpers, "helper", None)
    if helper is not None and helper.owner != os.getpid():
        helper = None  # inherited through a fork: another process's
    if helper is None or not helper.alive or helper.token != token or token is None:
        if helper is not None:
            helper.kill()
        helper = _helpers.helper = _Helper(token)
        global _reaper
        if _reaper != os.getpid():  # a pool worker reaps its helper when it exits
            import multiprocessing.util

            multiprocessing.util.Finalize(None, close_helper, exitpriority=0)
            _reaper = os.getpid()
    return helper


_reaper = 0


def close_helper() -> None:
    """End this thread's helper, if it has one (at the end of a sweep)."""
    helper = getattr(_helpers, "helper", None)
    _helpers.helper = None
    if helper is not None and helper.owner == os.getpid():
        helper.close()


def _died(scenario: dict[str, Any], why: str, wall: float, timeout: float | None) -> str:
    if why == "timeout":
        return dumps(_failure(ScenarioTimeout(
            f"timed out: ran longer than the sweep's timeout of {timeout:g} s "
            "(wall-clock), and its process was killed"), wall))
    try:
        key = Scenario.from_dict(scenario).key
    except Exception:  # noqa: BLE001 - the message names the scenario as it can
        key = "?"
    return dumps(_failure(WorkerDied(
        f"worker died while running scenario {key}: its process {why}"), wall))


def _isolated(scenarios: list[dict[str, Any]], mode: str, timeout: float | None,
              traces: bool, runner: Callable[[Scenario, str], Any] | None,
              token: str | None) -> list[str]:
    """:func:`run_task` in this thread's killable helper process: the whole
    batch at once (under ``timeout`` per scenario); if it times out or dies,
    each scenario on its own, so that only the one at fault is recorded so."""
    try:
        started = time.perf_counter()
        seconds = None if timeout is None else timeout * len(scenarios)
        texts, why = _helper(token).run((scenarios, mode, traces, runner), seconds)
        if texts is not None:
            return texts
        if len(scenarios) == 1:
            return [_died(scenarios[0], why, time.perf_counter() - started, timeout)]
        out = []
        for data in scenarios:
            started = time.perf_counter()
            texts, why = _helper(token).run(([data], mode, traces, runner), timeout)
            out += texts if texts is not None else [
                _died(data, why, time.perf_counter() - started, timeout)]
        return out
    finally:
        if token is None:  # a call of its own, not a sweep's: no helper stays
            close_helper()


__all__ = ["ScenarioTimeout", "WorkerDied", "run_task", "dumps", "loads", "record",
           "deadline", "close_helper"]
