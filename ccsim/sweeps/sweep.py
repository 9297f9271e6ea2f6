"""``ccsim.sweep``: from a grid to a table, on any executor, stored as it goes."""

from __future__ import annotations

import concurrent.futures as cf
import hashlib
import json
import math
import os
import re
import traceback
import uuid
import warnings
from collections import deque
from typing import Any, Callable, Iterable, Iterator, Mapping

import pandas as pd

from ..errors import CcsimError, ScenarioError, ScenarioTypeError
from ..run import MODES as ENGINES
from ..scenario import Scenario
from . import executors
from .fingerprint import Fingerprints
from .grid import MAX_POINTS, check_max_points, expand
from .store import Store, StoreError, StoreFullError, StoreWarning
from .table import assemble, dump_params
from .work import BadRecord, WorkerDied, close_helper, dumps, loads, record, run_task


class SweepFailed(CcsimError, RuntimeError):
    """Every scenario of a sweep failed. The message holds the first
    failure's error (in the sweep's order) and the count; ``.table`` the
    sweep's table, errors and tracebacks included."""

    def __init__(self, message: str, table: pd.DataFrame | None = None) -> None:
        super().__init__(message)
        self.table = table


_WHERE_AND_WHEN = re.compile(r" \((?:scenario \d+, )?flow \d+, t=[^)]*\)$")
"""The flow and time that end an :class:`~ccsim.errors.AlgorithmError`'s text."""


class SweepWarning(UserWarning):
    """Some scenarios of a sweep failed: how many, and their distinct errors."""

MODES = (*ENGINES, "both")
"""A sweep runs each scenario in one engine (:data:`ccsim.run.MODES`) or in both."""
FLUID_BATCH = 256
"""Most scenarios handed to the fluid engine in one ``run_many`` call."""


def _version() -> str:
    from .._version import __version__

    return __version__


def _engine_label(mode: str, runner: Callable[..., Any] | None) -> str:
    if runner is None:
        return mode
    return f"{mode}:{runner.__module__}.{runner.__qualname__}"


def _batches(keys: list[str], mode: str, runner: Any, workers: int) -> list[list[str]]:
    """The packet engine (and any runner) takes one scenario per task; the
    fluid engine a batch, about four per worker so that they finish together."""
    if mode != "fluid" or runner is not None:
        return [[k] for k in keys]
    size = max(1, min(FLUID_BATCH, math.ceil(len(keys) / (4 * max(1, workers)))))
    return [keys[i:i + size] for i in range(0, len(keys), size)]


def sweep(base: Scenario | Iterable[Scenario], grid: Mapping[str, Iterable[Any]] | None = None,
          seeds: Iterable[int] | None = None, mode: str = "packet", *,
          workers: int | None = None, executor: Any = None, store: Any = None,
          progress: bool = True, timeout: float | None = None, traces: bool = False,
          runner: Callable[[Scenario, str], Any] | None = None,
          validate: float | None = None,
          max_points: int | None = MAX_POINTS) -> pd.DataFrame:
    """Run every combination of ``grid`` over ``base``, for every seed.

    Args:
        base: a :class:`~ccsim.Scenario`, or a list of them (the grid then
            applies to each; a ``base`` column gives its index).
        grid: keyword → list of values; the keys are :func:`ccsim.dumbbell`'s
            keywords (``bandwidth``, ``rtt``, ``buffer``, ``queue``, ``loss``,
            ``flows``, ``duration``, ``seed``, stack knobs), flow fields
            (``"flows[1].start"``, or ``"recovery"`` for every flow), or any
            field of :meth:`ccsim.Scenario.replace`. A buffer not in the grid
            keeps its size in packets (see :meth:`~ccsim.Scenario.replace`).
            An unknown key or a value the builder rejects fails here, before
            anything runs, naming the key and the value.
        seeds: random seeds; every grid point runs once per seed (default:
            the scenario's own seed).
        mode: ``"packet"``, ``"fluid"`` (scenarios go to the fluid engine in
            batches, one array program each) or ``"both"`` (each scenario in
            both engines; rows for either are told apart by ``mode``).
        workers: processes to run on; default one per CPU; ``1`` runs in this
            process. A pool worker that dies (a law calling ``os._exit``, a
            crash in C code) costs only the scenario it was running: the
            pool is rebuilt, the scenarios that were running run again, each
            in a process of its own, and the one at fault is recorded as
            :class:`~ccsim.sweeps.WorkerDied` ("worker died", naming it).
        executor: instead of ``workers``, any ``concurrent.futures.Executor``
            or a ``dask.distributed.Client``. Scenarios travel to it as dicts.
        store: path of a SQLite file (created if missing): each finished
            scenario is written to it at once, and scenarios already in it
            (same scenario, engine and model: ccsim's source code and the
            source of the users' classes it runs) are not run again;
            scenarios that failed are, and, with ``traces=True``, those
            stored without traces. A file that is not a ccsim store is
            refused untouched (:class:`~ccsim.sweeps.StoreError`); a full
            disk stops the sweep with a :class:`~ccsim.sweeps.StoreFullError`
            whose ``.table`` holds what finished. The guarantees are in
            :mod:`ccsim.sweeps.store`.
        progress: show a progress bar (``tqdm.auto``): scenarios done, failed,
            time left.
        timeout: wall-clock limit per scenario (s); a scenario that runs longer
            is recorded as a :class:`~ccsim.sweeps.ScenarioTimeout` error
            ("timed out"). Each task then runs in a helper process forked
            from its worker (from this process with ``workers=1``) once per
            sweep, killed with ``SIGKILL`` when the time is up and replaced,
            so that no window law can hold it off (on Linux; elsewhere an
            exception raised between two bytecodes). Without a timeout
            nothing is forked.
        traces: also keep each run's time series, in ``store`` (required);
            read them with :func:`ccsim.sweeps.load_traces`.
        runner: a module-level function ``runner(scenario, mode) → Result``
            used instead of :func:`ccsim.run` (sent to workers by reference);
            any extra entries of its ``metrics`` become columns.
        validate: with ``mode="fluid"``, a fraction in (0, 1]: that share of
            the scenarios (at least one; chosen at random, seeded by the
            sweep's scenarios, so the same sweep validates the same ones) also
            runs in the packet engine, as rows with ``mode == "packet"``;
            :func:`ccsim.agreement` turns the pairs into the sweep's own
            measure of the fluid engine's accuracy.
        max_points: the most scenarios (bases × grid points × seeds) the sweep
            may have, checked from the lists' lengths before any is built;
            default a million (:data:`ccsim.sweeps.grid.MAX_POINTS`). ``None``:
            no limit.

    Returns:
        A DataFrame with one row per flow per scenario (per engine): columns
        ``scenario`` (position in the sweep's order), ``key``
        (:attr:`~ccsim.Scenario.key`), the grid's parameters (as given:
        ``"2BDP"`` stays ``"2BDP"``), the scenario's other parameters among
        ``bandwidth``, ``rtt``, ``buffer``, ``queue``, ``loss``,
        ``duration`` (SI units, as in :meth:`ccsim.Result.to_pandas`),
        ``seed``, ``mode``, ``flow`` and the summary's columns, the metrics
        (``utilisation``, ``jain``, ``uf``, ``interval_start``,
        ``interval_end``, ``drops``, ``losses``, ``data_packets``), ``error``
        and ``traceback`` (empty strings unless the scenario raised),
        ``fluid_warning`` (the fluid result's :attr:`~ccsim.Result.warnings`
        joined by ``"; "``: a regime docs/fluid.md documents as weak; else
        empty), and
        last ``wall_time`` (s). Every column but ``wall_time`` is the same,
        bit for bit, on one worker, many processes or Dask, in any order of
        completion; ``wall_time`` is the one measurement of the machine.
        :func:`ccsim.sweeps.per_scenario` gives one row per scenario,
        :func:`ccsim.aggregate` means and confidence intervals over seeds.

    Raises:
        SweepFailed: every scenario failed (the first error's text, the
            count, and the table as ``.table``). When only some failed, a
            :class:`SweepWarning` gives their count and distinct errors.
    """
    if mode not in MODES:
        raise ScenarioError("mode", mode, "one of: " + ", ".join(repr(m) for m in MODES))
    modes = list(ENGINES) if mode == "both" else [mode]
    if timeout is not None:
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) \
                or not 0 < timeout < math.inf:
            raise ScenarioError("timeout", timeout, "a time in seconds > 0, or None")
        timeout = float(timeout)
    executors.check(workers, executor)
    if traces and store is None:
        raise ScenarioError("traces", traces, "False unless a store is given (they go there)")
    if runner is not None and not callable(runner):
        raise ScenarioTypeError("runner", runner, "a module-level function (scenario, mode)")
    if validate is not None:
        _check_validate(validate, mode)
        modes = ["fluid", "packet"]
    check_max_points(max_points)
    points, names = expand(base, grid, seeds, max_points)
    engines = [(m, _engine_label(m, runner)) for m in modes]
    models = Fingerprints(runner)
    layout = [(p.position, p.scenario.key, {e: models.of(p.scenario, m) for m, e in engines},
               p.scenario.to_dict(), dump_params(p.params)) for p in points]
    version = _version()
    model = {(key, e): fp for _, key, fps, _, _ in layout for e, fp in fps.items()}
    db = None if store is None else Store(store)
    records: dict[tuple[str, str], Any] = {}
    try:
        if db is not None:
            db.begin([(pos, key, json.dumps(sc), params) for pos, key, _, sc, params in layout],
                     [(key, e, fp) for (key, e), fp in model.items()],
                     {"params": names, "engines": engines, "version": version})
            stored = db.records(failed=False, traces=traces)
            labels = {e for _, e in engines}
            bad = _decode({k: t for k, t in stored.items() if k[1] in labels}, records)
            if bad:
                warnings.warn(f"store={db.path!r}: {len(bad)} stored result(s) could not be "
                              f"read and run again ({_examples(bad)})", StoreWarning,
                              stacklevel=2)
        scenarios = {key: sc for _, key, _, sc, _ in layout}
        todo = {m: [k for k in scenarios if (k, e) not in records] for m, e in engines}
        if validate is not None:  # the packet engine runs the chosen ones only
            chosen = validated(list(scenarios), validate)
            todo["packet"] = [k for k in todo["packet"] if k in chosen]
            label = dict(engines)["packet"]
            records = {k: v for k, v in records.items() if k[1] != label or k[0] in chosen}
        _run(todo, scenarios, engines, records, db, version, model, workers, executor,
             progress, timeout, traces, runner)
    except StoreFullError as exc:  # mid-sweep: what finished goes with the error
        table = _table(layout, names, engines, records)
        done = len(table.drop_duplicates(["scenario", "mode"]))
        full = StoreFullError(exc.value, exc.allowed,
                              f"{exc.hint}; the sweep stopped: {db.written if db else 0} "
                              f"result(s) were stored before it, and the {done} run(s) that "
                              "finished are in this error's .table; with room on the disk, run "
                              "the sweep again and it resumes from what was stored")
        full.table = table
        raise full from None
    finally:
        if db is not None:
            db.close()
    table = _table(layout, names, engines, records)
    _report(table, layout, engines, records)
    return table


def _table(layout: list[tuple[int, str, dict[str, str], dict[str, Any], str]],
           names: list[str],
           engines: list[tuple[str, str]], records: dict[tuple[str, str], Any]
           ) -> pd.DataFrame:
    return assemble([(pos, key, sc, json.loads(params)) for pos, key, _, sc, params in layout],
                    names, engines, records)


def _decode(texts: dict[tuple[str, str], str], into: dict[tuple[str, str], Any]
            ) -> dict[tuple[str, str], str]:
    """Put each readable record of ``texts`` in ``into``, decoded; the
    unreadable ones, with what is wrong with each, are returned."""
    bad = {}
    for k, text in texts.items():
        try:
            into[k] = record(text)
        except BadRecord as exc:
            bad[k] = str(exc)
    return bad


def _examples(bad: dict[tuple[str, str], str]) -> str:
    shown = [f"scenario {key} ({engine}): {why}" for (key, engine), why in list(bad.items())[:3]]
    return "; ".join(shown) + ("; ..." if len(bad) > 3 else "")


def _report(table: pd.DataFrame,
            layout: list[tuple[int, str, dict[str, str], dict[str, Any], str]],
            engines: list[tuple[str, str]], records: dict[tuple[str, str], Any]) -> None:
    """Raise if every run failed; warn with the count and the distinct errors
    if some did."""
    runs = [(pos, key, e) for pos, key, *_ in layout for _, e in engines
            if (key, e) in records]
    failed = [(pos, key, e, records[key, e]["error"]) for pos, key, e in runs
              if records[key, e]["error"]]
    if not failed:
        return
    if len(failed) == len(runs):
        pos, key, engine, error = failed[0]
        raise SweepFailed(f"every scenario of the sweep failed ({len(failed)} of {len(runs)} "
                          f"runs); the first, scenario {pos} (key {key}, {engine}): {error}",
                          table)
    distinct: dict[str, int] = {}
    for *_, error in failed:  # one law's bug is one error, whichever flow and time
        error = _WHERE_AND_WHEN.sub("", error)
        distinct[error] = distinct.get(error, 0) + 1
    listed = "; ".join(f"{error!r} ({n}×)" for error, n in list(distinct.items())[:5])
    more = f"; and {len(distinct) - 5} other errors" if len(distinct) > 5 else ""
    warnings.warn(f"{len(failed)} of {len(runs)} runs of the sweep failed, with "
                  f"{len(distinct)} distinct error(s): {listed}{more}; the table's 'error' "
                  "and 'traceback' columns have each", SweepWarning, stacklevel=3)


def _failed(exc: BaseException) -> str:
    return dumps({"rows": [], "metrics": {}, "wall_time": math.nan,
                  "error": "".join(traceback.format_exception_only(exc)).strip(),
                  "traceback": "".join(traceback.format_exception(exc))})


def _check_validate(validate: Any, mode: str) -> None:
    if isinstance(validate, bool) or not isinstance(validate, (int, float)) \
            or not 0 < validate <= 1:
        raise ScenarioError("validate", validate, "a fraction of the scenarios in (0, 1], "
                            "such as 0.1, or None")
    if mode != "fluid":
        raise ScenarioError("validate", validate, "None unless mode='fluid'",
                            f"mode={mode!r} runs no fluid scenarios to check"
                            + ("; mode='both' already runs every scenario in both engines"
                               if mode == "both" else ""))


def validated(keys: list[str], fraction: float) -> set[str]:
    """The scenarios (keys) a sweep validates: ``ceil(fraction · n)`` of the
    ``n`` distinct ones, those first in an order seeded by the whole set of
    keys (SHA-256 of the set, then of it with each key): random, but the same
    for the same sweep whatever the order of its grid, workers or store."""
    unique = sorted(set(keys))
    seed = hashlib.sha256("\n".join(unique).encode()).hexdigest()
    count = max(1, math.ceil(fraction * len(unique) - 1e-9))
    ranked = sorted(unique, key=lambda k: hashlib.sha256(f"{seed}:{k}".encode()).digest())
    return set(ranked[:count])


def _run(todo: dict[str, list[str]], scenarios: dict[str, dict[str, Any]],
         engines: list[tuple[str, str]], records: dict[tuple[str, str], Any],
         db: Store | None, version: str, model: dict[tuple[str, str], str],
         workers: int | None,
         executor: Any, progress: bool, timeout: float | None, traces: bool,
         runner: Any) -> None:
    """Run what is to do and put each record in ``records`` (and the store)."""
    label = dict(engines)
    width = executors.machine_width() if workers is None else workers
    tasks = [(m, batch) for m, keys in todo.items()
             for batch in _batches(keys, m, runner, width)]
    total = sum(len(b) for _, b in tasks)
    pool, owned = executors.choose(workers, executor, len(tasks))
    from .._progress import tqdm

    bar = tqdm(total=total, desc="sweep", unit="scenario", disable=not progress or total == 0)
    failed = 0
    token = uuid.uuid4().hex  # this sweep's helpers (timeouts) are its own

    def finish(m: str, batch: list[str], texts: list[str]) -> None:
        nonlocal failed
        for key, text in zip(batch, texts):
            rec = loads(text)
            trace_text = None
            if "traces" in rec:
                trace_text = dumps(rec.pop("traces"))
                text = dumps(rec)
            records[key, label[m]] = rec
            failed += rec["error"] != ""
            if db is not None:
                db.put(key, label[m], model[key, label[m]], version, rec["error"] != "", text,
                       trace_text)
        bar.update(len(batch))
        bar.set_postfix(failed=failed, refresh=False)

    try:
        if pool is None:
            for m, batch in tasks:
                finish(m, batch, run_task([scenarios[k] for k in batch], m, timeout, traces,
                                          runner, False, token))
            return
        # A pool of our own gets a few tasks per worker at a time, so that if a
        # worker dies only those few are suspects; any other executor gets all.
        queue = deque((m, batch, False) for m, batch in tasks)
        window = 2 * width if owned else None
        inflight: dict[cf.Future[list[str]], tuple[str, list[str], bool]] = {}
        while queue or inflight:
            while queue and (window is None or len(inflight) < window):
                m, batch, isolate = queue.popleft()
                future = pool.submit(run_task, [scenarios[k] for k in batch], m, timeout,
                                     traces, runner, isolate, token)
                inflight[future] = (m, batch, isolate)
            done, _ = cf.wait(inflight, return_when=cf.FIRST_COMPLETED)
            suspects: list[tuple[str, list[str]]] = []
            while done:
                for future in done:
                    m, batch, isolate = inflight.pop(future)
                    try:
                        texts = future.result()
                    except cf.BrokenExecutor as exc:  # a worker died: the pool is lost
                        if not isolate:
                            suspects.append((m, batch))
                            continue
                        texts = [dumps({"rows": [], "metrics": {}, "wall_time": math.nan,
                                        "error": f"{WorkerDied.__module__}.WorkerDied: worker "
                                                 f"died while running scenario {key}: {exc}",
                                        "traceback": ""}) for key in batch]
                    except Exception as exc:  # the task could not run (unpicklable, ...)
                        texts = [_failed(exc)] * len(batch)
                    finish(m, batch, texts)
                # once broken, every task still in the pool fails the same way
                done = set(cf.wait(inflight)[0]) if suspects and inflight else set()
            if suspects:
                # which of them killed its worker cannot be told: run each again
                # on a new pool, in a process of its own, so that only it dies
                if owned:
                    pool.shutdown(wait=False, cancel_futures=True)
                size = width if owned else getattr(executor, "_max_workers", width)
                pool, owned = executors.choose(max(2, size), None, 2)
                window = 2 * width
                queue.extendleft((m, batch, True) for m, batch in reversed(suspects))
    except BaseException:
        if owned:
            pool.shutdown(wait=False, cancel_futures=True)
            owned = False
        raise
    finally:
        if owned:
            pool.shutdown()
        close_helper()  # this process's, with workers=1
        bar.close()


def load(store: str | os.PathLike[str]) -> pd.DataFrame:
    """The table of the last sweep run with ``store``, without running
    anything; scenarios that had not finished are left out.

    The file is opened read-only (SQLite's ``mode=ro``): it works on
    read-only media and never changes the file. A stored record that cannot
    be read is shown as a failed run whose ``error`` says so, with a
    :class:`~ccsim.sweeps.StoreWarning`; running the sweep again re-runs it.
    """
    with Store(store, readonly=True) as db:
        meta = db.meta()
        if not meta or "params" not in meta or "engines" not in meta:
            raise StoreError(db.path, "a store a sweep has written to",
                             "it holds no sweep yet")
        texts = db.records()
        points = [(pos, key, json.loads(sc), json.loads(params))
                  for pos, key, sc, params in db.points()]
    records: dict[tuple[str, str], Any] = {}
    bad = _decode(texts, records)
    for k, why in bad.items():
        records[k] = {"rows": [], "metrics": {}, "wall_time": math.nan, "traceback": "",
                      "error": f"{BadRecord.__module__}.BadRecord: the stored result could "
                               f"not be read ({why}); run the sweep again to re-run it"}
    if bad:
        warnings.warn(f"store={os.fspath(store)!r}: {len(bad)} stored result(s) could not be "
                      f"read and are shown as failed ({_examples(bad)}); run the sweep again "
                      "to re-run them", StoreWarning, stacklevel=2)
    return assemble(points, meta["params"], [tuple(e) for e in meta["engines"]], records)


def load_traces(store: str | os.PathLike[str], key: str, mode: str = "packet") -> pd.DataFrame:
    """The time series of scenario ``key`` (the table's ``key`` column), as
    :attr:`ccsim.Result.traces` has them, from a sweep run with
    ``traces=True``. The file is opened read-only."""
    with Store(store, readonly=True) as db:
        meta = db.meta()
        label = dict((m, e) for m, e in meta.get("engines", [])).get(mode, mode)
        text = db.traces(key, label)
    if text is None:
        raise ScenarioError("key", key, f"a scenario whose {mode} traces are in {store}")
    return _traces_frame(text, store, key)


def _traces_frame(text: str, store: str | os.PathLike[str], key: str) -> pd.DataFrame:
    """A stored traces record as :attr:`ccsim.Result.traces` has it."""
    try:
        data = loads(text)
        out = pd.DataFrame({"time": data["time"],
                            "flow": pd.array(data["flow"], dtype="Int64"),
                            "variable": data["variable"], "value": data["value"]})
    except (ValueError, KeyError, TypeError) as exc:
        raise StoreError(os.fspath(store), "a store whose traces can be read",
                         f"the traces of scenario {key} are damaged ({exc}); "
                         "run the sweep again with traces=True") from None
    from ..results import TRACE_VARIABLES

    # the engines' own variables (inflight, reverse_queue) after the usual ones
    extra = sorted(set(out["variable"]) - set(TRACE_VARIABLES))
    out["variable"] = pd.Categorical(out["variable"], categories=list(TRACE_VARIABLES) + extra)
    return out


def stored_traces(store: str | os.PathLike[str], mode: str | None = None
                  ) -> Iterator[tuple[int, str, str, pd.DataFrame]]:
    """``(position, key, mode, traces)`` for every scenario of the store's
    last sweep whose traces it holds (of engine ``mode``, or every engine),
    in the sweep's order, one at a time. The file is opened read-only."""
    with Store(store, readonly=True) as db:
        meta = db.meta()
        if not meta or "engines" not in meta:
            raise StoreError(db.path, "a store a sweep has written to",
                             "it holds no sweep yet")
        engines = [tuple(e) for e in meta["engines"]]
        if mode is not None:
            if mode not in dict(engines):
                raise ScenarioError("mode", mode, "an engine of this sweep: "
                                    + ", ".join(m for m, _ in engines))
            engines = [(m, e) for m, e in engines if m == mode]
        for position, key, *_ in db.points():
            for m, engine in engines:
                text = db.traces(key, engine)
                if text is not None:
                    yield position, key, m, _traces_frame(text, store, key)
