"""``ccsim.sweep``: from a grid to a table, on any executor, stored as it goes."""

from __future__ import annotations

import concurrent.futures as cf
import hashlib
import json
import math
import os
import traceback
from typing import Any, Callable, Iterable, Iterator, Mapping

import pandas as pd

from ..errors import ScenarioError, ScenarioTypeError
from ..run import _check_mode
from ..scenario import Scenario
from . import executors
from .grid import expand
from .store import Store
from .table import assemble, dump_params
from .work import dumps, loads, run_task

MODES = ("packet", "fluid", "both")
FLUID_BATCH = 256
"""Most scenarios handed to the fluid engine in one ``run_many`` call."""


def _version() -> str:
    from .. import __version__

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
          validate: float | None = None) -> pd.DataFrame:
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
            process.
        executor: instead of ``workers``, any ``concurrent.futures.Executor``
            or a ``dask.distributed.Client``. Scenarios travel to it as dicts.
        store: path of a SQLite file (created if missing): each finished
            scenario is written to it at once, and scenarios already in it
            (same scenario, engine and ccsim version) are not run again;
            scenarios that failed are, and, with ``traces=True``, those
            stored without traces. See :mod:`ccsim.sweeps.store`.
        progress: show a progress bar (``tqdm.auto``): scenarios done, failed,
            time left.
        timeout: wall-clock limit per scenario (s); a scenario that runs longer
            is recorded as a :class:`~ccsim.sweeps.ScenarioTimeout` error. In a
            process (pool worker or this process's main thread) a ``SIGALRM``
            timer enforces it; in a thread (a Dask worker) an exception is
            raised in the running thread; either way between two bytecodes.
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
    """
    if mode not in MODES:
        raise ScenarioError("mode", mode, "one of: 'packet', 'fluid', 'both'")
    modes = ["packet", "fluid"] if mode == "both" else [mode]
    for m in modes:
        _check_mode(m)
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
    points, names = expand(base, grid, seeds)
    engines = [(m, _engine_label(m, runner)) for m in modes]
    layout = [(p.position, p.scenario.key, p.scenario.to_dict(), dump_params(p.params))
              for p in points]
    version = _version()
    db = None if store is None else Store(store)
    try:
        records: dict[tuple[str, str], str] = {}
        if db is not None:
            db.begin([(pos, key, json.dumps(sc), params) for pos, key, sc, params in layout],
                     {"params": names, "engines": engines, "version": version})
            records = db.records(version, failed=False, traces=traces)
        scenarios = {key: sc for _, key, sc, _ in layout}
        todo = {m: [k for k in scenarios if (k, e) not in records] for m, e in engines}
        if validate is not None:  # the packet engine runs the chosen ones only
            chosen = validated(list(scenarios), validate)
            todo["packet"] = [k for k in todo["packet"] if k in chosen]
            label = dict(engines)["packet"]
            records = {k: v for k, v in records.items() if k[1] != label or k[0] in chosen}
        _run(todo, scenarios, engines, records, db, version, workers, executor, progress,
             timeout, traces, runner)
    finally:
        if db is not None:
            db.close()
    return assemble([(pos, key, sc, json.loads(params)) for pos, key, sc, params in layout],
                    names, engines, records)


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
         engines: list[tuple[str, str]], records: dict[tuple[str, str], str],
         db: Store | None, version: str, workers: int | None, executor: Any, progress: bool,
         timeout: float | None, traces: bool, runner: Any) -> None:
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

    def finish(m: str, batch: list[str], texts: list[str]) -> None:
        nonlocal failed
        for key, text in zip(batch, texts):
            record = loads(text)
            trace_text = None
            if "traces" in record:
                trace_text = json.dumps(record.pop("traces"), allow_nan=True)
                text = dumps(record)
            records[key, label[m]] = text
            failed += record["error"] != ""
            if db is not None:
                db.put(key, label[m], version, record["error"] != "", text, trace_text)
        bar.update(len(batch))
        bar.set_postfix(failed=failed, refresh=False)

    try:
        if pool is None:
            for m, batch in tasks:
                finish(m, batch, run_task([scenarios[k] for k in batch], m, timeout, traces,
                                          runner))
            return
        futures = {pool.submit(run_task, [scenarios[k] for k in batch], m, timeout, traces,
                               runner): (m, batch) for m, batch in tasks}
        for future in cf.as_completed(futures):
            m, batch = futures[future]
            try:
                texts = future.result()
            except Exception as exc:  # the worker itself failed (died, unpicklable, ...)
                text = dumps({"rows": [], "metrics": {}, "wall_time": math.nan,
                              "error": "".join(traceback.format_exception_only(exc)).strip(),
                              "traceback": "".join(traceback.format_exception(exc))})
                texts = [text] * len(batch)
            finish(m, batch, texts)
    except BaseException:
        if owned:
            pool.shutdown(wait=False, cancel_futures=True)
            owned = False
        raise
    finally:
        if owned:
            pool.shutdown()
        bar.close()


def load(store: str | os.PathLike[str]) -> pd.DataFrame:
    """The table of the last sweep run with ``store``, without running
    anything; scenarios that had not finished are left out."""
    with Store(store, create=False) as db:
        meta = db.meta()
        if not meta:
            raise ScenarioError("store", os.fspath(store), "a store a sweep has written to")
        records = db.records(meta["version"])
        points = [(pos, key, json.loads(sc), json.loads(params))
                  for pos, key, sc, params in db.points()]
    return assemble(points, meta["params"], [tuple(e) for e in meta["engines"]], records)


def load_traces(store: str | os.PathLike[str], key: str, mode: str = "packet") -> pd.DataFrame:
    """The time series of scenario ``key`` (the table's ``key`` column), as
    :attr:`ccsim.Result.traces` has them, from a sweep run with
    ``traces=True``."""
    with Store(store, create=False) as db:
        meta = db.meta()
        label = dict((m, e) for m, e in meta.get("engines", [])).get(mode, mode)
        text = db.traces(key, label, meta.get("version", _version()))
    if text is None:
        raise ScenarioError("key", key, f"a scenario whose {mode} traces are in {store}")
    return _traces_frame(text)


def _traces_frame(text: str) -> pd.DataFrame:
    """A stored traces record as :attr:`ccsim.Result.traces` has it."""
    from ..results import TRACE_VARIABLES

    data = json.loads(text)
    out = pd.DataFrame({"time": data["time"], "flow": pd.array(data["flow"], dtype="Int64"),
                        "variable": data["variable"], "value": data["value"]})
    # the engines' own variables (inflight, reverse_queue) after the usual ones
    extra = sorted(set(out["variable"]) - set(TRACE_VARIABLES))
    out["variable"] = pd.Categorical(out["variable"], categories=list(TRACE_VARIABLES) + extra)
    return out


def stored_traces(store: str | os.PathLike[str], mode: str | None = None
                  ) -> Iterator[tuple[int, str, str, pd.DataFrame]]:
    """``(position, key, mode, traces)`` for every scenario of the store's
    last sweep whose traces it holds (of engine ``mode``, or every engine),
    in the sweep's order, one at a time."""
    with Store(store, create=False) as db:
        meta = db.meta()
        if not meta:
            raise ScenarioError("store", os.fspath(store), "a store a sweep has written to")
        engines = [tuple(e) for e in meta["engines"]]
        if mode is not None:
            if mode not in dict(engines):
                raise ScenarioError("mode", mode, "an engine of this sweep: "
                                    + ", ".join(m for m, _ in engines))
            engines = [(m, e) for m, e in engines if m == mode]
        for position, key, _, _ in db.points():
            for m, engine in engines:
                text = db.traces(key, engine, meta["version"])
                if text is not None:
                    yield position, key, m, _traces_frame(text)
