"""Failures are isolated and loud: a dead worker costs one scenario, a
timeout no law can defeat, a sweep that failed throughout raises, partial
failures warn, and a grid too big is refused before it is built."""

from __future__ import annotations

import concurrent.futures as cf
import json
import multiprocessing
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pandas as pd
import pytest

import ccsim
from ccsim.algorithms import CongestionControl
from ccsim.algorithms import registry as algorithm_registry
from ccsim.sweeps import SweepFailed, SweepWarning, per_scenario
from ccsim.sweeps import grid as grid_module
from ccsim.sweeps import work

ROOT = Path(__file__).resolve().parents[1]
BASE = ccsim.dumbbell("10Mbps", "20ms", buffer="1BDP", flows=["reno"], duration="1s",
                      seed=1)


def same(a: pd.DataFrame, b: pd.DataFrame) -> None:
    """Equal values (a table with a failed run has float columns where one
    without has integers: its NaN), but for wall_time."""
    pd.testing.assert_frame_equal(a.drop(columns="wall_time").reset_index(drop=True),
                                  b.drop(columns="wall_time").reset_index(drop=True),
                                  check_exact=True, check_dtype=False)


@pytest.fixture
def laws(scratch_registry):
    @algorithm_registry.register
    class Dies(CongestionControl):
        name = "dies"

        def on_ack(self, ack):
            os._exit(1)  # the whole process, as a crash in C code would

    @algorithm_registry.register
    class Broken(CongestionControl):
        name = "broken"

        def on_ack(self, ack):
            raise ZeroDivisionError("broken window law")

    @algorithm_registry.register
    class Negative(CongestionControl):
        name = "negative"

        def on_ack(self, ack):
            raise ValueError("negative window")


# -- a dead worker -----------------------------------------------------------------------------
FLOWS = [["reno"], ["cubic"], ["dies"], ["reno", "cubic"], ["vegas"], ["cubic", "reno"],
         ["bic"], ["htcp"]]


@pytest.mark.slow
@pytest.mark.parametrize("pool", ["workers=2", "a ProcessPoolExecutor"])
def test_a_dead_worker_costs_only_its_scenario(laws, pool):
    good = [f for f in FLOWS if f != ["dies"]]
    reference = ccsim.sweep(BASE, {"flows": good}, workers=1, progress=False)
    executor = (cf.ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("fork"))
                if pool != "workers=2" else None)
    with pytest.warns(SweepWarning, match="1 of 8 runs") as caught:
        t = ccsim.sweep(BASE, {"flows": FLOWS}, workers=None if executor else 2,
                        executor=executor, progress=False)
    if executor:
        executor.shutdown()
    dead = t[t["scenario"] == 2]
    key = dead["key"].iloc[0]
    assert list(dead["error"]) == [f"ccsim.sweeps.work.WorkerDied: worker died while running "
                                   f"scenario {key}: its process exited with code 1"]
    assert "worker died" in str(caught[0].message)
    # the others ran to the end, each exactly as on its own
    rest = t[t["scenario"] != 2]
    assert (rest["error"] == "").all()
    same(rest.drop(columns=["scenario", "flows"]),
         reference.drop(columns=["scenario", "flows"]))


def test_a_worker_that_dies_in_this_process_with_a_timeout_is_isolated(laws):
    # workers=1 with a timeout: each scenario in a killable child of this process
    with pytest.warns(SweepWarning, match="1 of 2 runs"):
        t = ccsim.sweep(BASE, {"flows": [["dies"], ["reno"]]}, workers=1, timeout=60,
                        progress=False)
    errors = list(per_scenario(t)["error"])
    assert errors[0].startswith("ccsim.sweeps.work.WorkerDied: worker died while running")
    assert errors[1] == ""


# -- timeouts no law can defeat -------------------------------------------------------------
HOSTILE = """
import json, sys, time, ccsim
from ccsim.algorithms import CongestionControl, register

@register
class Hostile(CongestionControl):
    name = "hostile"

    def on_ack(self, ack):
        while True:  # swallows every exception a timer could raise in it
            try:
                time.sleep(0.001)
            except BaseException:
                pass

base = ccsim.dumbbell("10Mbps", "20ms", flows=["reno"], duration="1s")
flows = [["reno"], ["hostile"], ["cubic"], ["hostile", "reno"]]
t = ccsim.sweep(base, {"flows": flows}, workers=int(sys.argv[1]), timeout=2.0,
                progress=False)
print(json.dumps(list(ccsim.per_scenario(t)["error"])))
"""


@pytest.mark.slow
@pytest.mark.parametrize("workers", [1, 2])
def test_a_timeout_no_law_can_defeat(workers):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    try:  # a guard against a hung sweep, not a timing: the limit is 2 s a scenario
        out = subprocess.run([sys.executable, "-c", HOSTILE, str(workers)], env=env,
                             capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        pytest.fail("the sweep hung: the law defeated the timeout")
    assert out.returncode == 0, out.stderr
    errors = json.loads(out.stdout)
    assert errors[0] == errors[2] == ""
    for error in (errors[1], errors[3]):
        assert error.startswith("ccsim.sweeps.work.ScenarioTimeout: timed out: ran longer "
                                "than the sweep's timeout of 2 s")
    assert "2 of 4 runs of the sweep failed" in out.stderr  # the warning


def test_without_a_timeout_nothing_is_forked(monkeypatch):
    def no_fork():
        raise AssertionError("forked without a timeout")

    monkeypatch.setattr(work.os, "fork", no_fork)
    records = [work.loads(r) for r in work.run_task([BASE.to_dict()], "packet")]
    assert records[0]["error"] == ""
    with pytest.raises(AssertionError, match="forked"):
        work.run_task([BASE.to_dict()], "packet", timeout=10.0)


def _children() -> list[int]:
    pid = os.getpid()
    return [int(c) for t in os.listdir(f"/proc/{pid}/task")
            for c in Path(f"/proc/{pid}/task/{t}/children").read_text().split()]


def test_one_helper_per_sweep_replaced_only_when_killed(laws, monkeypatch):
    forks = []
    real = os.fork

    def counted():
        pid = real()
        if pid:
            forks.append(pid)
        return pid

    monkeypatch.setattr(work.os, "fork", counted)
    flows = [["reno"], ["cubic"], ["dies"], ["vegas"], ["bic"]]
    with pytest.warns(SweepWarning, match="1 of 5 runs"):
        t = ccsim.sweep(BASE, {"flows": flows}, workers=1, timeout=60, progress=False)
    # one helper ran the first two; the third killed it; a second ran the rest
    assert len(forks) == 2
    assert list(per_scenario(t)["error"] == "") == [True, True, False, True, True]
    # and none is left behind (other tests' children, e.g. a Dask cluster's, are not ours)
    assert set(forks) & set(_children()) == set()


class Halves(CongestionControl):
    name = "changes"

    def on_loss(self, loss):
        self.ssthresh = self.cwnd = max(self.cwnd / 2, 2.0)


class Tenth(CongestionControl):
    name = "changes"

    def on_loss(self, loss):
        self.ssthresh = self.cwnd = max(self.cwnd * 0.9, 2.0)


def test_a_helper_never_outlives_its_sweep(scratch_registry):
    # a law re-registered between two sweeps with timeouts: the second sweep's
    # helper is forked afresh and runs the new law
    base = BASE.replace(flows=["reno"])
    grid = {"flows": [["changes"]], "loss": [0.02]}
    tables = []
    for law in (Halves, Tenth, Halves):
        algorithm_registry.register(law)
        tables.append(ccsim.sweep(base, grid, workers=1, timeout=60, progress=False))
        alone = ccsim.run(base.replace(flows=["changes"], loss=0.02))
        assert list(tables[-1]["goodput_bps"]) == list(alone.summary["goodput_bps"])
    assert tables[0]["goodput_bps"].iloc[0] != tables[1]["goodput_bps"].iloc[0]


# -- loud failures ---------------------------------------------------------------------------
def test_a_sweep_where_every_scenario_failed_raises(laws, tmp_path):
    with pytest.raises(SweepFailed) as err:
        ccsim.sweep(BASE, {"flows": [["broken"], ["reno", "broken"], ["negative"]]},
                    workers=1, store=tmp_path / "f.sqlite", progress=False)
    message = str(err.value)
    assert "every scenario of the sweep failed (3 of 3 runs)" in message
    assert (f"the first, scenario 0 (key {BASE.replace(flows=['broken']).key}, packet): "
            "ccsim.errors.AlgorithmError: algorithm 'broken' raised ZeroDivisionError: broken "
            "window law in on_ack() (flow 0, t=") in message
    table = err.value.table  # the table, errors and tracebacks, comes with it
    assert len(table) == 4 and (table["error"] != "").all()
    assert "in on_ack" in table["traceback"].iloc[0]
    assert isinstance(err.value, ccsim.CcsimError)


def test_partial_failures_warn_with_count_and_distinct_errors(laws):
    flows = [["broken"], ["reno"], ["negative"], ["broken", "reno"], ["cubic"]]
    with pytest.warns(SweepWarning) as caught:
        t = ccsim.sweep(BASE, {"flows": flows}, workers=1, progress=False)
    assert len(caught) == 1
    message = str(caught[0].message)
    assert message.startswith("3 of 5 runs of the sweep failed, with 2 distinct error(s): ")
    # one law's bug is one distinct error, whichever flow raised it and when
    assert "raised ZeroDivisionError: broken window law in on_ack()\" (2×)" in message
    assert "raised ValueError: negative window in on_ack()\" (1×)" in message
    assert list(per_scenario(t)["error"] == "") == [False, True, False, False, True]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing failed: nothing to say
        ccsim.sweep(BASE, {"flows": [["reno"]]}, workers=1, progress=False)


# -- the grid's size, before it is built --------------------------------------------------------
def test_a_grid_too_big_is_refused_before_it_is_built(monkeypatch):
    def never(*args, **kwargs):
        raise AssertionError("a scenario was built")

    monkeypatch.setattr(grid_module, "apply", never)
    monkeypatch.setattr(ccsim.Scenario, "replace", never)
    grid = {"loss": range(10_000), "rtt": range(1, 10_001)}  # 10**8 points
    with pytest.raises(ccsim.ScenarioError) as err:
        ccsim.sweep(BASE, grid, progress=False)
    assert str(err.value) == (
        "grid=\"grid['loss']: 10,000 × grid['rtt']: 10,000 = 100,000,000 scenarios\": "
        "at most max_points=1,000,000 scenarios (pass max_points=100000000 to sweep() to "
        "run them all on purpose, or sweep fewer values)")
    # seeds and bases count: 2 bases × 1,000 × 1,000 seeds
    with pytest.raises(ccsim.ScenarioError, match="2,000,000 scenarios"):
        ccsim.sweep([BASE, BASE], {"loss": range(1000)}, seeds=range(1000), progress=False)
    # a generator is counted by listing it, still before anything is built
    with pytest.raises(ccsim.ScenarioError, match="1,000,000 × seeds: 2 = 2,000,000"):
        ccsim.sweep(BASE, {"loss": (x for x in range(10**6))}, seeds=[1, 2],
                    progress=False)


def test_max_points_allows_and_limits():
    grid = {"loss": [0, 0.01]}
    with pytest.raises(ccsim.ScenarioError, match=r"= 4 scenarios.*at most max_points=3"):
        ccsim.sweep(BASE, grid, seeds=[1, 2], max_points=3, progress=False)
    t = ccsim.sweep(BASE, grid, seeds=[1, 2], max_points=4, workers=1, progress=False)
    assert len(t) == 4
    assert len(ccsim.sweep(BASE, grid, max_points=None, workers=1, progress=False)) == 2
    for bad in (0, 2.5, True, "many"):
        with pytest.raises(ccsim.ScenarioError) as err:
            ccsim.sweep(BASE, grid, max_points=bad, progress=False)
        assert str(err.value) == (f"max_points={bad!r}: a whole number ≥ 1 of scenarios, "
                                  "or None for no limit")


def test_the_sweep_command_shows_a_sweep_that_failed_throughout(laws, tmp_path, capsys):
    from ccsim.cli import main

    spec = tmp_path / "sweep.toml"
    spec.write_text('bandwidth = "10Mbps"\nrtt = "20ms"\nflows = ["broken"]\n'
                    'duration = "1s"\n[grid]\nloss = [0, 0.01]\n')
    assert main(["sweep", str(spec), "--workers", "1", "--no-progress"]) == 1
    captured = capsys.readouterr()
    assert "2 scenarios, 2 failed" in captured.out
    assert captured.err.count("ZeroDivisionError: broken window law") == 2
