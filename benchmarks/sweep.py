"""Sweep-layer overheads and speed-up.

Three figures:

1. Speed-up of :func:`ccsim.experiments.pairwise_matrix` with 2 worker
   processes over 1: a 4 × 4 subset of the matrix (reno, cubic, bic, htcp;
   16 runs), on the recipe's dumbbell (100 Mbit/s, 1 ms, 1000 packets) with
   the second flow at 2 s and 10 s simulated instead of 60 s. The summed
   run times of the scenarios are printed too: on a machine to itself they
   are the same on 1 and 2 workers; when they grow, other work was sharing
   the CPUs and the speed-up is not the sweep's.
2. The store's cost per scenario: writing (and committing) one realistic
   result to the SQLite file, timed directly over 500 writes; and end to end,
   a sweep of 200 tiny scenarios with a store against one without.
3. Dask: the same 16 runs on a ``LocalCluster`` of 2 worker processes (one
   thread each) against a process pool of 2, per scenario; the cluster's
   start-up is reported apart.
4. A timeout's cost: a sweep of 200 tiny scenarios on one worker with
   ``timeout=60`` (each task through the sweep's killable helper process)
   against the same sweep without, interleaved in one process.

Run from the repository root (best of ``--repeat`` for each timing):

    python benchmarks/sweep.py [--repeat 2]
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import os
import platform
import tempfile
import time

import ccsim
from ccsim.experiments import pairwise_matrix
from ccsim.sweeps.executors import machine_width
from ccsim.sweeps.store import Store
from ccsim.sweeps.work import run_task

ALGORITHMS = ["reno", "cubic", "bic", "htcp"]
MATRIX = dict(bandwidth="100Mbps", rtt="1ms", buffer=1000, delay="2s", duration="10s")


def best(repeat: int, fn) -> float:
    """Shortest wall time of ``repeat`` calls (s)."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def matrix_scenarios() -> list[ccsim.Scenario]:
    return [ccsim.dumbbell(MATRIX["bandwidth"], MATRIX["rtt"], buffer=MATRIX["buffer"],
                           duration=MATRIX["duration"], seed=1,
                           flows=[ccsim.Flow(a), ccsim.Flow(b, start=MATRIX["delay"])])
            for a in ALGORITHMS for b in ALGORITHMS]


def speed_up(repeat: int) -> None:
    """Wall time of the recipe on 1 and 2 workers; and the summed run times of
    its scenarios (from a store), which grow when other work shares the CPUs."""
    walls, busy = {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        for workers in (1, 2):
            def once(workers: int = workers) -> None:
                path = os.path.join(tmp, f"m{time.perf_counter_ns()}.sqlite")
                pairwise_matrix(ALGORITHMS, workers=workers, store=path, **MATRIX)
                busy.setdefault(workers, []).append(
                    ccsim.per_scenario(ccsim.load(path))["wall_time"].sum())
            walls[workers] = best(repeat, once)
    one, two = walls[1], walls[2]
    print(f"pairwise_matrix 4x4, 10 s each: 1 worker {one:.2f} s, 2 workers {two:.2f} s, "
          f"speed-up {one / two:.2f}x (target >= 1.8x); summed run times of the 16 "
          f"scenarios {min(busy[1]):.2f} s on 1 worker, {min(busy[2]):.2f} s on 2")


def store_cost(repeat: int) -> None:
    sc = ccsim.dumbbell("10Mbps", "20ms", flows=["reno", "cubic"], duration="1s")
    record = run_task([sc.to_dict()], "packet")[0]
    n = 500
    with tempfile.TemporaryDirectory() as tmp:
        def writes() -> None:
            path = os.path.join(tmp, f"w{time.perf_counter_ns()}.sqlite")
            with Store(path) as db:
                for i in range(n):
                    db.put(f"{i:016x}", "packet", "model", ccsim.__version__, False, record)
        per_write = best(repeat, writes) / n
        tiny = ccsim.dumbbell("10Mbps", "20ms", flows=["reno"], duration="0.05s")
        grid = {"seed": list(range(200))}
        bare = best(repeat, lambda: ccsim.sweep(tiny, grid, workers=1, progress=False))
        stored = best(repeat, lambda: ccsim.sweep(
            tiny, grid, workers=1, progress=False,
            store=os.path.join(tmp, f"s{time.perf_counter_ns()}.sqlite")))
    print(f"store: {per_write * 1e3:.2f} ms per result written and committed "
          f"({len(record)} bytes of JSON); end to end {(stored - bare) / 200 * 1e3:.2f} ms "
          f"per scenario (200 scenarios: {bare:.2f} s without, {stored:.2f} s with) "
          f"(target < 5 ms)")


def dask_cost(repeat: int) -> None:
    from dask.distributed import Client, LocalCluster

    scenarios = matrix_scenarios()
    with cf.ProcessPoolExecutor(2) as pool:
        pool_time = best(repeat, lambda: ccsim.sweep(scenarios, executor=pool,
                                                     progress=False))
    start = time.perf_counter()
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        startup = time.perf_counter() - start
        dask_time = best(repeat, lambda: ccsim.sweep(scenarios, executor=client,
                                                     progress=False))
    n = len(scenarios)
    print(f"dask LocalCluster(2 processes): {dask_time:.2f} s vs process pool(2) "
          f"{pool_time:.2f} s for {n} runs: {(dask_time - pool_time) / n * 1e3:+.0f} ms "
          f"per scenario ({dask_time / pool_time - 1:+.1%}); cluster start-up {startup:.1f} s")


def timeout_cost(repeat: int) -> None:
    tiny = ccsim.dumbbell("10Mbps", "20ms", flows=["reno"], duration="0.05s")
    grid = {"seed": list(range(200))}
    times: dict[str, list[float]] = {"without": [], "timeout=60": []}
    for _ in range(max(repeat, 2)):  # interleaved, so that both see the same load
        for name in times:
            extra = {"timeout": 60.0} if name != "without" else {}
            start = time.perf_counter()
            ccsim.sweep(tiny, grid, workers=1, progress=False, **extra)
            times[name].append(time.perf_counter() - start)
    bare, timed = min(times["without"]), min(times["timeout=60"])
    print(f"timeout: 200 scenarios of 0.05 s on 1 worker, {bare:.2f} s without, "
          f"{timed:.2f} s with timeout=60: ratio {timed / bare:.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=2, help="runs per timing; best kept")
    parser.add_argument("--only", nargs="+", choices=["speed-up", "store", "dask", "timeout"],
                        help="run only these parts")
    args = parser.parse_args()
    print(f"ccsim {ccsim.__version__}, python {platform.python_version()} on "
          f"{platform.machine()}, {machine_width()} CPUs, load average "
          f"{os.getloadavg()[0]:.2f}")
    parts = {"speed-up": speed_up, "store": store_cost, "dask": dask_cost,
             "timeout": timeout_cost}
    for name in args.only or parts:
        parts[name](args.repeat)


if __name__ == "__main__":
    main()
