"""ccsim.sweep: grids, executors, the SQLite store, failures and resume."""

from __future__ import annotations

import concurrent.futures as cf
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from importlib import import_module
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import ccsim
from ccsim.algorithms import CongestionControl
from ccsim.algorithms import registry as algorithm_registry
from ccsim.sweeps import ScenarioTimeout, SweepWarning, load_traces, per_scenario
from ccsim.sweeps.work import loads, run_task

ENGINES = import_module("ccsim.run")  # the module; ccsim.run is the function
ROOT = Path(__file__).resolve().parents[1]
BASE = ccsim.dumbbell("10Mbps", "20ms", buffer="1BDP", flows=["reno", "cubic"],
                      duration="2s", seed=1)
GRID = {"buffer": ["0.5BDP", "2BDP"], "loss": [0, 0.01]}
SEEDS = [1, 2]


def same(a: pd.DataFrame, b: pd.DataFrame) -> None:
    """Equal bit for bit, but for the one machine measurement, wall_time."""
    pd.testing.assert_frame_equal(a.drop(columns="wall_time"), b.drop(columns="wall_time"),
                                  check_exact=True)


@pytest.fixture(scope="module")
def reference():
    return ccsim.sweep(BASE, GRID, SEEDS, workers=1, progress=False)


# -- the table -------------------------------------------------------------------------
def test_one_row_per_flow_per_scenario_in_grid_order(reference):
    t = reference
    # the grid's parameters, then the scenario's others (SI), seed, mode
    assert list(t.columns[:11]) == ["scenario", "key", "buffer", "loss", "bandwidth", "rtt",
                                    "queue", "duration", "seed", "mode", "flow"]
    assert list(t.columns[11:13]) == ["algorithm", "recovery"]
    assert set(t["bandwidth"]) == {10e6} and set(t["rtt"]) == {0.02}
    assert list(t.columns[-3:]) == ["error", "traceback", "wall_time"]
    assert {"utilisation", "jain", "uf", "drops", "interval_start"} <= set(t.columns)
    assert len(t) == 8 * 2 and list(t["flow"]) == [0, 1] * 8
    # the last key varies fastest, the seeds fastest of all
    points = t.drop_duplicates("scenario")[["buffer", "loss", "seed"]]
    assert [tuple(r) for r in points.itertuples(index=False)] == [
        (b, p, s) for b in GRID["buffer"] for p in GRID["loss"] for s in SEEDS]
    assert (t["error"] == "").all() and (t["mode"] == "packet").all()
    assert list(t["algorithm"][:2]) == ["reno", "cubic"]


def test_each_row_is_an_ordinary_run_of_its_scenario(reference):
    sc = ccsim.dumbbell("10Mbps", "20ms", buffer="2BDP", loss=0.01, flows=["reno", "cubic"],
                        duration="2s", seed=2)
    res = ccsim.run(sc)
    rows = reference[reference["key"] == sc.key]
    assert list(rows["buffer"]) == ["2BDP"] * 2 and list(rows["seed"]) == [2, 2]
    for col in ("goodput_bps", "share", "retransmits", "mean_rtt"):
        assert list(rows[col]) == list(res.summary[col])  # exact: the same run
    assert rows["utilisation"].iloc[0] == res.metrics["utilisation"]
    assert rows["drops"].iloc[0] == res.metrics["drops"]


def test_per_scenario_view(reference):
    view = per_scenario(reference)
    assert len(view) == 8 and list(view["scenario"]) == list(range(8))
    assert "goodput_bps" not in view and "flow" not in view and "utilisation" in view


def test_a_list_of_scenarios_and_flow_fields():
    scenarios = [BASE, BASE.replace(flows=["cubic", "cubic"])]
    t = ccsim.sweep(scenarios, grid={"flows[1].start": ["0.5s", "1s"],
                                     "recovery": ["sack", "newreno"]}, workers=1,
                    progress=False)
    assert len(t) == 2 * 2 * 2 * 2
    assert list(t["base"].drop_duplicates()) == [0, 1]
    second = t[t["flow"] == 1]
    assert list(second["start"]) == [0.5, 0.5, 1.0, 1.0] * 2
    assert list(second["flows[1].start"]) == ["0.5s", "0.5s", "1s", "1s"] * 2
    assert list(t["recovery"][:4]) == ["sack", "sack", "newreno", "newreno"]
    assert list(t["algorithm"][-2:]) == ["cubic", "cubic"]


def test_aggregate_is_the_t_interval_over_seeds():
    t = ccsim.sweep(BASE, {"loss": [0.01, 0.02]}, seeds=[1, 2, 3], workers=1, progress=False)
    agg = ccsim.aggregate(t)
    assert list(agg.columns[:4]) == ["loss", "mode", "flow", "runs"]
    row = agg[(agg["loss"] == 0.02) & (agg["flow"] == 1)].iloc[0]
    x = t[(t["loss"] == 0.02) & (t["flow"] == 1)]["goodput_bps"].to_numpy()
    assert row.runs == 3 and x.std() > 0  # the seeds do differ under random loss
    low, high = stats.t.interval(0.95, 2, loc=x.mean(), scale=stats.sem(x))
    assert row.goodput_bps == pytest.approx(x.mean(), rel=1e-12)
    assert (row.goodput_bps_ci_low, row.goodput_bps_ci_high) == pytest.approx((low, high),
                                                                             rel=1e-12)
    one = ccsim.aggregate(t[t["seed"] == 1])
    assert one["goodput_bps_ci_low"].isna().all()  # one run: no interval


# -- a bad grid fails before anything runs -------------------------------------------------
@pytest.mark.parametrize("grid, kind, words", [
    ({"bufer": [1]}, ccsim.ScenarioTypeError, ["bufer", "did you mean 'buffer'"]),
    ({"buffer": ["1BDP", "-1BDP"]}, ccsim.ScenarioError, ["grid['buffer']", "-1BDP"]),
    ({"flows": [["reno"], ["cubicc"]]}, ccsim.ScenarioError, ["grid['flows']", "cubicc"]),
    ({"flows[2].start": ["1s"]}, ccsim.ScenarioError, ["flows[2].start", "0..1"]),
    ({"loss": 0.01}, ccsim.ScenarioTypeError, ["grid['loss']", "a list of values"]),
    ({"flows[1].start": ["3s"]}, ccsim.ScenarioError, ["grid['flows[1].start']", "3s"]),
])
def test_bad_grid_names_key_and_value_before_running(tmp_path, grid, kind, words):
    store = tmp_path / "never.sqlite"
    with pytest.raises(kind) as info:
        ccsim.sweep(BASE, grid, store=store, progress=False)
    for word in words:
        assert word in str(info.value)
    assert not store.exists()  # nothing ran, nothing was written


def test_bad_arguments(tmp_path):
    with pytest.raises(ccsim.ScenarioError, match="seeds"):
        ccsim.sweep(BASE, {"seed": [1, 2]}, seeds=[3], progress=False)
    with pytest.raises(ccsim.ScenarioError, match="mode='fast'"):
        ccsim.sweep(BASE, mode="fast", progress=False)
    with pytest.raises(ccsim.ScenarioError, match="workers=0"):
        ccsim.sweep(BASE, {"loss": [0, 0.01]}, workers=0, store=tmp_path / "no.sqlite",
                    progress=False)
    assert not (tmp_path / "no.sqlite").exists()
    with pytest.raises(ccsim.ScenarioTypeError, match="executor"):
        ccsim.sweep(BASE, {"loss": [0, 0.01]}, executor="dask", progress=False)
    with pytest.raises(ccsim.ScenarioError, match="traces=True"):
        ccsim.sweep(BASE, traces=True, progress=False)
    with pytest.raises(ccsim.ScenarioError, match="timeout=-1"):
        ccsim.sweep(BASE, timeout=-1, progress=False)
    with pytest.raises(ccsim.ScenarioTypeError, match="base"):
        ccsim.sweep([], progress=False)


# -- the same table on any executor, in any order -------------------------------------------
def test_two_processes_give_the_same_table(reference):
    same(ccsim.sweep(BASE, GRID, SEEDS, workers=2, progress=False), reference)


class LastFirst(cf.Executor):
    """Runs nothing until all tasks are in, then runs them last first."""

    def __init__(self, tasks: int) -> None:
        self.tasks, self.pending = tasks, []

    def submit(self, fn, *args, **kwargs):
        future = cf.Future()
        self.pending.append((future, fn, args, kwargs))
        if len(self.pending) == self.tasks:
            for future_, fn_, args_, kwargs_ in reversed(self.pending):
                future_.set_result(fn_(*args_, **kwargs_))
        return future


def test_completion_order_does_not_matter(reference, tmp_path):
    t = ccsim.sweep(BASE, GRID, SEEDS, executor=LastFirst(8), store=tmp_path / "s.sqlite",
                    progress=False)
    same(t, reference)
    same(ccsim.load(tmp_path / "s.sqlite"), reference)


@pytest.mark.slow
def test_dask_local_cluster_gives_the_same_table(reference):
    distributed = pytest.importorskip("distributed")
    # threads rather than processes: robust on a 2-core CI machine; the
    # scenarios still travel as dicts and come back as JSON records
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        t = ccsim.sweep(BASE, GRID, SEEDS, executor=client, progress=False)
        assert len(client.scheduler_info()["workers"]) == 2
    same(t, reference)


# -- the store -------------------------------------------------------------------------------
def _stored(path) -> dict[str, dict]:
    with sqlite3.connect(path) as db:
        return {k: json.loads(r) for k, r in db.execute("SELECT key, record FROM results")}


def test_store_skips_what_is_done_and_load_reads_it(reference, tmp_path):
    path = tmp_path / "sweep.sqlite"
    half = ccsim.sweep(BASE, {"buffer": ["0.5BDP"], "loss": GRID["loss"]}, SEEDS,
                       workers=1, store=path, progress=False)
    before = _stored(path)
    assert len(before) == 4
    full = ccsim.sweep(BASE, GRID, SEEDS, workers=1, store=path, progress=False)
    same(full, reference)
    after = _stored(path)
    assert len(after) == 8
    for key, record in before.items():  # not run again: the very same record
        assert after[key] == record
    assert list(full["wall_time"][:8]) == list(half["wall_time"])
    loaded = ccsim.load(path)
    pd.testing.assert_frame_equal(loaded, full, check_exact=True)
    assert loaded.attrs["ccsim.params"] == ["buffer", "loss"]


def test_load_needs_a_store(tmp_path):
    with pytest.raises(ccsim.ScenarioError, match="store"):
        ccsim.load(tmp_path / "missing.sqlite")


def test_traces_go_to_the_store(tmp_path):
    path = tmp_path / "traces.sqlite"
    ccsim.sweep(BASE, {"loss": [0, 0.01]}, workers=1, store=path, progress=False)
    with pytest.raises(ccsim.ScenarioError, match="traces"):
        load_traces(path, BASE.key)
    # stored without traces: asking for them runs the scenarios again
    t = ccsim.sweep(BASE, {"loss": [0, 0.01]}, workers=1, store=path, traces=True,
                    progress=False)
    key = t["key"].iloc[2]
    expected = ccsim.run(BASE.replace(loss=0.01)).traces
    pd.testing.assert_frame_equal(load_traces(path, key), expected, check_exact=True)


def test_csv_and_parquet_export(reference, tmp_path):
    reference.to_csv(tmp_path / "t.csv", index=False)
    back = pd.read_csv(tmp_path / "t.csv", keep_default_na=False, na_values=["NaN", ""])
    assert len(back) == len(reference) and list(back.columns) == list(reference.columns)
    assert np.array_equal(back["goodput_bps"], reference["goodput_bps"])
    pytest.importorskip("pyarrow")
    reference.to_parquet(tmp_path / "t.parquet")
    assert len(pd.read_parquet(tmp_path / "t.parquet")) == len(reference)


KILLED = """
import sys, ccsim
base = ccsim.dumbbell("50Mbps", "20ms", buffer="1BDP", flows=["reno", "cubic"], duration="6s")
ccsim.sweep(base, {"loss": [0, 0.001, 0.002, 0.005]}, seeds=[1, 2], workers=2,
            store=sys.argv[1], progress=False)
"""


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")  # a zombie has stopped running


@pytest.mark.slow
def test_killed_sweep_resumes_without_loss_or_duplicates(tmp_path):
    path = tmp_path / "killed.sqlite"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    child = subprocess.Popen([sys.executable, "-c", KILLED, str(path)], env=env)
    try:
        deadline = time.monotonic() + 120  # a guard against a hung child, not a timing
        done = 0
        while done < 3 and time.monotonic() < deadline and child.poll() is None:
            time.sleep(0.02)
            if path.exists():
                try:
                    with sqlite3.connect(path) as db:
                        done = db.execute("SELECT count(*) FROM results").fetchone()[0]
                except sqlite3.OperationalError:  # the tables are being created
                    pass
        assert child.poll() is None, "the sweep finished before it could be killed"
        workers = [int(p) for p in Path(f"/proc/{child.pid}/task/{child.pid}/children")
                   .read_text().split()]
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.kill()
        child.wait()
    before = _stored(path)
    assert 3 <= len(before) < 8
    # its pool workers die with it rather than run on as orphans
    assert len(workers) == 2
    while any(map(_alive, workers)) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not any(map(_alive, workers))
    base = ccsim.dumbbell("50Mbps", "20ms", buffer="1BDP", flows=["reno", "cubic"],
                          duration="6s")
    grid = {"loss": [0, 0.001, 0.002, 0.005]}
    resumed = ccsim.sweep(base, grid, seeds=[1, 2], workers=1, store=path, progress=False)
    after = _stored(path)
    assert len(after) == 8 and all(after[k] == r for k, r in before.items())
    with sqlite3.connect(path) as db:  # one row per scenario: nothing duplicated
        assert db.execute("SELECT count(*) FROM results").fetchone()[0] == 8
    same(resumed, ccsim.sweep(base, grid, seeds=[1, 2], workers=1, progress=False))
    same(ccsim.load(path), resumed)


# -- failures ------------------------------------------------------------------------------------
@pytest.fixture
def broken(scratch_registry):
    @algorithm_registry.register
    class Broken(CongestionControl):
        name = "broken"

        def on_ack(self, ack):
            raise ZeroDivisionError("broken window law")

    @algorithm_registry.register
    class Stuck(CongestionControl):
        name = "stuck"

        def on_ack(self, ack):
            while True:
                pass


def test_a_failing_scenario_is_a_row_with_its_error(broken, tmp_path):
    flows = [["reno", "reno"], ["reno", "broken"], ["cubic", "reno"]]
    with pytest.warns(SweepWarning, match=r"1 of 3 runs .* raised ZeroDivisionError: broken window law in on_ack\(\)"):
        t = ccsim.sweep(BASE, {"flows": flows}, workers=2, store=tmp_path / "f.sqlite",
                        progress=False)
    bad = t[t["scenario"] == 1]
    assert list(bad["algorithm"]) == ["reno", "broken"]  # its flows, without figures
    assert (bad["error"].str.startswith(  # the law, its hook, the flow and when
        "ccsim.errors.AlgorithmError: algorithm 'broken' raised ZeroDivisionError: broken "
        "window law in on_ack() (flow 1, t=")).all()
    assert "in on_ack" in bad["traceback"].iloc[0] and bad["goodput_bps"].isna().all()
    good = t[t["scenario"] != 1]
    assert (good["error"] == "").all() and (good["goodput_bps"] > 0).all()
    with sqlite3.connect(tmp_path / "f.sqlite") as db:
        assert db.execute("SELECT sum(failed) FROM results").fetchone()[0] == 1


@pytest.mark.parametrize("where", ["in this process", "in a thread"])
@pytest.mark.slow
def test_timeout_turns_a_stuck_run_into_an_error(broken, where):
    executor = cf.ThreadPoolExecutor(2) if where == "in a thread" else None
    workers = None if executor else 1
    with executor or cf.ThreadPoolExecutor(1), pytest.warns(SweepWarning, match="1 of 3 runs"):
        t = ccsim.sweep(BASE, {"flows": [["reno"], ["stuck"], ["cubic"]]}, timeout=1.0,
                        workers=workers, executor=executor, progress=False)
    errors = list(per_scenario(t)["error"])
    assert errors[0] == errors[2] == ""
    assert errors[1].startswith("ccsim.sweeps.work.ScenarioTimeout: timed out: ran longer than")
    assert issubclass(ScenarioTimeout, TimeoutError)


def test_a_batch_that_raises_runs_again_one_by_one(broken):
    # The fluid engine's path, exercised with the packet engine through run_many.
    scenarios = [BASE.to_dict(), BASE.replace(flows=["broken"]).to_dict(),
                 BASE.replace(loss=0.01).to_dict()]
    records = [loads(r) for r in run_task(scenarios, "packet")]
    assert [r["error"] != "" for r in records] == [False, True, False]
    alone = ccsim.run(BASE.replace(loss=0.01)).summary
    assert [row["goodput_bps"] for row in records[2]["rows"]] == list(alone["goodput_bps"])
    whole = [loads(r) for r in run_task([scenarios[0], scenarios[2]], "packet")]
    assert whole[1]["rows"] == records[2]["rows"]


@pytest.mark.filterwarnings("ignore::ccsim.sweeps.SweepWarning")  # tested in test_sweep_failures
def test_progress_bar_counts_done_and_failed(broken, capsys):
    ccsim.sweep(BASE, {"flows": [["reno"], ["broken"]]}, workers=1, progress=True)
    err = capsys.readouterr().err
    assert "sweep" in err and "2/2" in err and "failed=1" in err
    ccsim.sweep(BASE, {"flows": [["reno"], ["broken"]]}, workers=1, progress=False)
    assert capsys.readouterr().err == ""


# -- the fluid engine, batched ------------------------------------------------------------------
@pytest.mark.slow
def test_fluid_sweeps_go_in_batches_and_both_sits_beside_packet(monkeypatch):
    calls = []
    run_many = ENGINES.run_many

    def spy(scenarios, mode="packet", **options):  # run_many's own signature
        scenarios = list(scenarios)
        calls.append((mode, len(scenarios)))
        return run_many(scenarios, mode, **options)

    monkeypatch.setattr(ENGINES, "run_many", spy)
    grid = {"loss": [0, 0.01], "buffer": ["0.5BDP", "1BDP", "2BDP"]}
    t = ccsim.sweep(BASE, grid, workers=1, mode="fluid", progress=False)
    assert (t["mode"] == "fluid").all() and (t["error"] == "").all()
    assert calls and max(n for _, n in calls) > 1  # whole batches, not one call each
    assert "batch" not in t  # how it was batched is not a figure of the scenario
    same(ccsim.sweep(BASE, grid, workers=2, mode="fluid", progress=False), t)
    both = ccsim.sweep(BASE, grid, workers=1, mode="both", progress=False)
    assert list(both["mode"][:4]) == ["packet", "packet", "fluid", "fluid"]
    fluid = both[both["mode"] == "fluid"].reset_index(drop=True)[t.columns]
    # an engine's own metrics are NaN on the other's rows, so their dtype widens
    pd.testing.assert_frame_equal(fluid.drop(columns="wall_time"),
                                  t.drop(columns="wall_time"), check_exact=True,
                                  check_dtype=False)


# -- the command line and the guide ---------------------------------------------------------------
SWEEP_TOML = """
bandwidth = "10Mbps"
rtt = "20ms"
flows = ["reno", "cubic"]
duration = "2s"

[grid]
loss = [0, 0.01]

[sweep]
seeds = [1, 2]
"""


def test_sweep_command(tmp_path, capsys):
    from ccsim.cli import main

    spec = tmp_path / "sweep.toml"
    spec.write_text(SWEEP_TOML)
    args = ["sweep", str(spec), "--workers", "2", "--store", str(tmp_path / "s.sqlite"),
            "--csv", str(tmp_path / "out.csv"), "--no-progress"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "4 scenarios, 0 failed" in out and "utilisation" in out
    table = pd.read_csv(tmp_path / "out.csv")
    api = ccsim.sweep(BASE.replace(seed=0), {"loss": [0, 0.01]}, seeds=[1, 2], workers=1,
                      progress=False)
    assert list(table["key"]) == list(api["key"])
    assert np.array_equal(table["goodput_bps"], api["goodput_bps"])
    # the same file written from Scenario.to_toml(), with the grid appended
    spec.write_text(BASE.to_toml() + "\n[grid]\nloss = [0, 0.01]\n")
    assert main(["sweep", str(spec), "--workers", "1", "--no-progress"]) == 0


@pytest.mark.parametrize("text, words", [
    ("bandwidth = ", ["valid TOML"]),
    ('bandwidth = "10Mbps"\nrtt = "20ms"\n[grid]\nbufer = [1]\n', ["bufer", "did you mean"]),
    ('bandwidth = "10Mbps"\nrtt = "20ms"\n[sweep]\nseed = [1]\n', ["sweep.seed"]),
    ('bandwidth = "10Mbps"\nrtt = "20ms"\nflow = ["reno"]\n', ["flow=['reno']", "did you mean 'flows'?"]),
    ("[grid]\nloss = [0]\n", ["a base scenario"]),
])
def test_sweep_command_bad_files(tmp_path, capsys, text, words):
    from ccsim.cli import main

    spec = tmp_path / "bad.toml"
    spec.write_text(text)
    assert main(["sweep", str(spec), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ccsim: error:") and all(w in err for w in words)
    assert main(["sweep", str(tmp_path / "missing.toml")]) == 2


def _guide_section() -> str:
    text = (ROOT / "docs" / "guide.md").read_text()
    return text.split("\n## Sweeps\n", 1)[1].split("\n## ", 1)[0]


@pytest.mark.slow
def test_guide_sweeps_section_runs_as_printed(tmp_path, monkeypatch, capsys):
    import re
    import shlex

    from ccsim.cli import main

    monkeypatch.chdir(tmp_path)
    section = _guide_section()
    blocks = re.findall(r"```(python|toml|bash)\n(.*?)\n```", section, flags=re.S)
    assert [kind for kind, _ in blocks].count("python") >= 5
    scope: dict = {}
    for kind, code in blocks:
        if kind == "python":
            exec(compile(code, "guide.md", "exec"), scope)
        elif kind == "toml":
            Path("sweep.toml").write_text(code + "\n")
        else:
            assert main(shlex.split(code)[1:]) == 0
    assert "grid['buffer']='-1BDP'" in capsys.readouterr().out
    assert len(scope["table"]) == 2 * 3 * 2  # the Dask sweep: 2 RTTs × 3 seeds × 2 flows
    # the store holds the last sweep, the command line's: 2 × 2 × 3 seeds × 2 flows
    assert len(ccsim.load("sweep.sqlite")) == 24 and Path("sweep.csv").exists()
    assert Path("share.png").stat().st_size > 0 and Path("sweep.parquet").exists()
