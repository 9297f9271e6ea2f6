"""Sweeps: many scenarios, on one machine or a Dask cluster, stored as they
finish and resumable.

* :func:`sweep` — a grid over a base scenario (or a list of scenarios) → a
  table, one row per flow per scenario.
* :func:`load` — the table back from a sweep's SQLite store, without running.
* :func:`per_scenario` — one row per scenario; :func:`aggregate` — means and
  95 % confidence intervals over seeds.
* :func:`load_traces` — one scenario's time series from a store.
* :func:`agreement` — how far a fluid sweep agrees with the packet engine,
  on the scenarios it validated (``sweep(..., validate=0.1)``).
* :func:`plot_sweep` — a metric against a parameter, mean and confidence
  band over seeds.
* :func:`to_parquet`, :func:`read_parquet`, :func:`traces_to_parquet`,
  :func:`to_xarray` — to Parquet files and ``xarray.Dataset``
  (:mod:`~ccsim.sweeps.export`).

Modules: :mod:`~ccsim.sweeps.grid` (expanding the grid),
:mod:`~ccsim.sweeps.work` (what runs on a worker),
:mod:`~ccsim.sweeps.executors`, :mod:`~ccsim.sweeps.store` (SQLite, and
what it guarantees), :mod:`~ccsim.sweeps.fingerprint` (what a stored result
is reused under), :mod:`~ccsim.sweeps.table`.
"""

from .agreement import agreement
from .export import read_parquet, to_parquet, to_xarray, traces_to_parquet
from .plot import plot_sweep
from .store import StoreError, StoreFullError, StoreWarning
from .sweep import SweepFailed, SweepWarning, load, load_traces, sweep
from .table import aggregate, per_scenario
from .work import ScenarioTimeout, WorkerDied

__all__ = ["sweep", "load", "load_traces", "per_scenario", "aggregate", "ScenarioTimeout",
           "WorkerDied", "SweepFailed", "SweepWarning", "StoreError", "StoreFullError",
           "StoreWarning", "agreement", "plot_sweep", "to_parquet", "read_parquet",
           "traces_to_parquet", "to_xarray"]
