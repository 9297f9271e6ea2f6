"""ccsim: TCP congestion control, simulated.

The five lines every doc starts with::

    import ccsim

    sc = ccsim.dumbbell(bandwidth="10Mbps", rtt="20ms", buffer="1BDP",
                        flows=["reno", ccsim.Flow("vegas", start="10s")],
                        duration="60s", seed=1)
    res = ccsim.run(sc)                  # packet engine
    res.summary                          # pandas DataFrame, one row per flow
    res.plot()                           # cwnd, goodput and queue over time

Units: time in seconds, rates in bit/s, sizes in bytes, windows in segments;
every public function also takes strings such as ``"100Mbps"``, ``"20ms"``,
``"64KB"`` and buffers as ``"1BDP"``.
"""

from . import algorithms, experiments, queues, recovery
from ._version import __version__ as __version__  # the one source: ccsim/_version.py
from .errors import (CcsimError, IdenticalSeedsWarning, ScenarioError, ScenarioTypeError,
                     UnitError, UnknownAlgorithmError)
from .queues import FQ, PIE, CoDel, DualPI2, FqCodel, QueueDiscipline, StepMark
from .results import Result
from .run import run, run_many
from .scenario import (RED, DropTail, Flow, Link, RateSchedule, Scenario, cellular_trace, dumbbell,
                       parking_lot, path, read_mahimahi, write_mahimahi)
from .sweeps import (aggregate, agreement, load, per_scenario, plot_sweep, read_parquet, sweep,
                     to_parquet, to_xarray)

__all__ = [
    # describe
    "dumbbell", "parking_lot", "path", "Scenario", "Flow", "Link", "DropTail", "RED",
    # links that change
    "RateSchedule", "read_mahimahi", "write_mahimahi", "cellular_trace",
    # queue disciplines (ccsim.queues: the contract, and register for your own)
    "QueueDiscipline", "CoDel", "PIE", "StepMark", "FqCodel", "FQ", "DualPI2",
    # simulate
    "run", "run_many", "Result",
    # many scenarios
    "sweep", "load", "per_scenario", "aggregate", "plot_sweep", "agreement",
    # where sweeps go next: Parquet files, xarray
    "to_parquet", "read_parquet", "to_xarray",
    # extend and reproduce
    "algorithms", "recovery", "queues", "experiments",
    # errors
    "CcsimError", "ScenarioError", "ScenarioTypeError", "UnitError",
    "UnknownAlgorithmError", "IdenticalSeedsWarning",
]
