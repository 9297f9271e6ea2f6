"""Where sweeps go next: Parquet files, xarray Datasets, plot_sweep, and a
Dask cluster that can be restarted mid-sweep."""

from __future__ import annotations

import json
import sqlite3
import sys
import threading

import matplotlib
import numpy as np
import pandas as pd
import pytest
from scipy import stats

import ccsim
from ccsim.sweeps import load_traces, traces_to_parquet

matplotlib.use("Agg")

BASE = ccsim.dumbbell("10Mbps", "20ms", buffer="1BDP", flows=["reno", "cubic"],
                      duration="2s", seed=1)


def same(a: pd.DataFrame, b: pd.DataFrame) -> None:
    """Equal bit for bit, but for the one machine measurement, wall_time."""
    pd.testing.assert_frame_equal(a.drop(columns="wall_time"), b.drop(columns="wall_time"),
                                  check_exact=True)


@pytest.fixture(scope="module")
def grid_table():
    """A fluid sweep whose grid has every kind of value: numbers, strings,
    a mix of both (buffer), tuples (flows)."""
    return ccsim.sweep(BASE, {"buffer": [10, "1BDP"], "flows": [["reno", "cubic"],
                                                                ["vegas", "reno"]],
                              "loss": [0, 0.01]},
                       seeds=[1, 2, 3], mode="fluid", workers=1, progress=False)


@pytest.fixture(scope="module")
def rtt_table():
    """Numbers only: a numeric x for plot_sweep."""
    return ccsim.sweep(BASE, {"rtt": [0.01, 0.03, 0.1]}, seeds=[1, 2, 3, 4], mode="fluid",
                       workers=1, progress=False)


# -- Parquet ---------------------------------------------------------------------------------
def test_plain_to_parquet_keeps_dtypes_and_attrs(rtt_table, tmp_path):
    pytest.importorskip("pyarrow")
    rtt_table.to_parquet(tmp_path / "t.parquet")
    back = pd.read_parquet(tmp_path / "t.parquet")
    pd.testing.assert_frame_equal(back, rtt_table, check_exact=True)
    assert back.attrs == rtt_table.attrs == {"ccsim.params": ["rtt"]}
    # aggregate finds the grid in the attrs of the file read back
    pd.testing.assert_frame_equal(ccsim.aggregate(back), ccsim.aggregate(rtt_table))


def test_to_parquet_keeps_tuples_mixed_values_and_attrs(grid_table, tmp_path):
    pytest.importorskip("pyarrow")
    path = tmp_path / "grid.parquet"
    ccsim.to_parquet(grid_table, path)
    back = ccsim.read_parquet(path)
    pd.testing.assert_frame_equal(back, grid_table, check_exact=True)
    assert back.attrs == grid_table.attrs
    assert back["flows"].iloc[0] == ("reno", "cubic") and back["buffer"].iloc[0] == 10
    # any Parquet reader sees those columns as JSON text, the others as they are
    plain = pd.read_parquet(path)
    assert json.loads(plain["flows"].iloc[0]) == ["reno", "cubic"]
    assert list(map(json.loads, plain["buffer"].unique())) == [10, "1BDP"]
    assert plain["share"].dtype == np.float64 and plain["retransmits"].dtype == np.int64
    # read_parquet's own arguments pass through
    some = ccsim.read_parquet(path, columns=["flows", "share"])
    assert list(some.columns) == ["flows", "share"] and some["flows"].iloc[-1] == ("vegas",
                                                                                  "reno")


def test_to_parquet_dict_grid_values(tmp_path):
    pytest.importorskip("pyarrow")
    t = ccsim.sweep(BASE, {"flows[1].params": [{}, {"beta": 0.5}]}, mode="fluid", workers=1,
                    progress=False)
    ccsim.to_parquet(t, tmp_path / "p.parquet")
    back = ccsim.read_parquet(tmp_path / "p.parquet")
    # the table holds a dict as its (key, value) pairs, hashable
    pairs = [()] * 2 + [(("beta", 0.5),)] * 2  # two flows per scenario
    assert list(back["flows[1].params"]) == list(t["flows[1].params"]) == pairs
    pd.testing.assert_frame_equal(back, t, check_exact=True)


def test_parquet_errors(tmp_path, monkeypatch):
    with pytest.raises(ccsim.ScenarioTypeError, match="table"):
        ccsim.to_parquet([1, 2], tmp_path / "x.parquet")
    odd = pd.DataFrame({"a": [object()]})
    with pytest.raises(ccsim.ScenarioError, match="object"):
        ccsim.to_parquet(odd, tmp_path / "x.parquet")
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # as if not installed
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    with pytest.raises(ImportError, match=r"ccsim\[parquet\]"):
        ccsim.to_parquet(pd.DataFrame({"a": [1]}), tmp_path / "x.parquet")


@pytest.fixture(scope="module")
def traced(tmp_path_factory):
    path = tmp_path_factory.mktemp("traces") / "traced.sqlite"
    grid = {"loss": [0, 0.01]}
    table = ccsim.sweep(BASE.replace(duration=1.0), grid, workers=1, store=path, traces=True,
                        progress=False)
    return path, table


def test_traces_to_parquet_is_every_stored_trace(traced, tmp_path):
    pytest.importorskip("pyarrow")
    store, table = traced
    out = tmp_path / "traces.parquet"
    assert traces_to_parquet(store, out) == 2
    long = pd.read_parquet(out)
    assert list(long.columns) == ["scenario", "key", "mode", "time", "flow", "variable",
                                  "value"]
    points = table.drop_duplicates("scenario")
    assert list(long["key"].unique()) == list(points["key"])
    assert list(long["scenario"].unique()) == list(points["scenario"])
    for key, loss in zip(points["key"], points["loss"]):
        part = pd.read_parquet(out, filters=[("key", "==", key)])
        part = part.drop(columns=["scenario", "key", "mode"])
        expected = ccsim.run(BASE.replace(duration=1.0, loss=loss)).traces
        pd.testing.assert_frame_equal(part, expected, check_exact=True)
        pd.testing.assert_frame_equal(part, load_traces(store, key), check_exact=True)


def test_traces_to_parquet_errors(traced, tmp_path):
    pytest.importorskip("pyarrow")
    store, _ = traced
    with pytest.raises(ccsim.ScenarioError, match="fluid"):
        traces_to_parquet(store, tmp_path / "t.parquet", mode="fluid")
    bare = tmp_path / "bare.sqlite"
    ccsim.sweep(BASE, {"loss": [0]}, mode="fluid", workers=1, store=bare, progress=False)
    with pytest.raises(ccsim.ScenarioError, match="traces=True"):
        traces_to_parquet(bare, tmp_path / "t.parquet")
    with pytest.raises(ccsim.ScenarioError, match="store"):
        traces_to_parquet(tmp_path / "missing.sqlite", tmp_path / "t.parquet")


# -- xarray ----------------------------------------------------------------------------------
def test_to_xarray_dimensions_and_every_value(grid_table):
    pytest.importorskip("xarray")
    ds = ccsim.to_xarray(grid_table)
    assert list(ds.share.dims) == ["buffer", "flows", "loss", "seed", "flow"]
    assert list(ds.utilisation.dims) == ["buffer", "flows", "loss", "seed"]  # per scenario
    # coordinates in the grid's order; a tuple of names is labelled "reno,cubic"
    assert list(ds["buffer"].values) == [10, "1BDP"]
    assert list(ds["flows"].values) == ["reno,cubic", "vegas,reno"]
    assert list(ds["loss"].values) == [0, 0.01] and list(ds["seed"].values) == [1, 2, 3]
    assert list(ds["flow"].values) == [0, 1] and ds["mode"].item() == "fluid"
    assert ds.attrs["ccsim.params"] == ["buffer", "flows", "loss"]
    for row in grid_table.itertuples(index=False):
        at = {"buffer": row.buffer, "flows": ",".join(row.flows), "loss": row.loss,
              "seed": row.seed}
        point = ds.sel(**at, flow=row.flow)
        assert point["share"].item() == row.share
        assert point["goodput_bps"].item() == row.goodput_bps
        assert point["algorithm"].item() == row.algorithm
        assert ds["utilisation"].sel(**at).item() == row.utilisation
        assert ds["key"].sel(**at).item() == row.key
    assert ds["retransmits"].dtype == np.int64  # every cell filled: dtypes kept


def test_to_xarray_missing_points_are_nan(grid_table):
    pytest.importorskip("xarray")
    part = grid_table[grid_table["scenario"] != 5]  # as an unfinished sweep's
    ds = ccsim.to_xarray(part)
    gone = grid_table[grid_table["scenario"] == 5].iloc[0]
    at = {"buffer": gone.buffer, "flows": ",".join(gone.flows), "loss": gone.loss,
          "seed": gone.seed}
    assert ds["share"].sel(**at).isnull().all() and ds["retransmits"].dtype == np.float64
    assert int(ds["share"].isnull().sum()) == 2  # that scenario's two flows, nothing else


def test_to_xarray_both_engines_and_dims(tmp_path):
    pytest.importorskip("xarray")
    t = ccsim.sweep(BASE.replace(duration=1.0), {"loss": [0, 0.01]}, mode="both",
                    workers=1, progress=False)
    ds = ccsim.to_xarray(t)
    assert list(ds.share.dims) == ["loss", "seed", "mode", "flow"]
    assert list(ds["mode"].values) == ["packet", "fluid"]
    row = t[(t["mode"] == "packet") & (t["loss"] == 0.01)].iloc[1]
    assert ds["share"].sel(loss=0.01, seed=1, mode="packet", flow=1).item() == row.share
    # a table read from CSV has no attrs: name the grid
    t.to_csv(tmp_path / "t.csv", index=False)
    back = pd.read_csv(tmp_path / "t.csv", keep_default_na=False, na_values=["NaN", ""])
    with pytest.raises(ccsim.ScenarioError, match="dims"):
        ccsim.to_xarray(back)
    again = ccsim.to_xarray(back, dims=["loss"])
    assert again["share"].sel(loss=0.01, seed=1, mode="packet", flow=1).item() == row.share


def test_to_xarray_refuses_what_is_not_a_grid(grid_table, monkeypatch):
    pytest.importorskip("xarray")
    twice = pd.concat([grid_table, grid_table], ignore_index=True)
    twice.attrs = dict(grid_table.attrs)
    with pytest.raises(ccsim.ScenarioError, match="sharing coordinates.*a grid"):
        ccsim.to_xarray(twice)
    # a varying parameter left out of dims: rows collide
    with pytest.raises(ccsim.ScenarioError, match="sharing coordinates"):
        ccsim.to_xarray(grid_table, dims=["buffer", "flows"])
    with pytest.raises(ccsim.ScenarioError, match="rtt_ms"):
        ccsim.to_xarray(grid_table, dims=["rtt_ms"])
    with pytest.raises(ccsim.ScenarioTypeError, match="table"):
        ccsim.to_xarray({"share": [1]})
    monkeypatch.setitem(sys.modules, "xarray", None)
    with pytest.raises(ImportError, match=r"ccsim\[xarray\]"):
        ccsim.to_xarray(grid_table)


# -- plot_sweep ------------------------------------------------------------------------------
def _t_interval(values: np.ndarray) -> tuple[float, float, float]:
    """Mean and 95 % Student t interval, computed here from scratch."""
    n = len(values)
    low, high = stats.t.interval(0.95, n - 1, loc=values.mean(),
                                 scale=values.std(ddof=1) / np.sqrt(n))
    return values.mean(), low, high


def test_plot_sweep_numeric_x_draws_means_and_t_bands(rtt_table):
    fig = ccsim.plot_sweep(rtt_table, x="rtt", y="goodput_bps", hue="algorithm")
    ax = fig.axes[0]
    assert type(fig).__name__ == "ResultFigure"  # shown once in Jupyter, as Result.plot
    assert ax.get_xlabel() == "RTT (ms)" and ax.get_ylabel() == "goodput (Mbit/s)"
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["reno", "cubic"]
    lines = [l for l in ax.get_lines() if not l.get_label().startswith("_")]
    bands = ax.collections
    assert len(lines) == len(bands) == 2
    for line, band, algorithm in zip(lines, bands, ["reno", "cubic"]):
        assert np.allclose(line.get_xdata(), [10, 30, 100])  # ms
        vertices = band.get_paths()[0].vertices
        for x_ms, y in zip(line.get_xdata(), line.get_ydata()):
            runs = rtt_table[(rtt_table["algorithm"] == algorithm)
                             & (rtt_table["rtt"] == x_ms / 1e3)]["goodput_bps"].to_numpy()
            assert len(runs) == 4
            mean, low, high = _t_interval(runs / 1e6)
            assert y == pytest.approx(mean, rel=1e-12)
            edge = vertices[np.isclose(vertices[:, 0], x_ms), 1]
            assert edge.min() == pytest.approx(low, rel=1e-9)
            assert edge.max() == pytest.approx(high, rel=1e-9)
        assert high > low  # the seeds differ: a band, not a line


def test_plot_sweep_categorical_x_error_bars(grid_table, tmp_path):
    t = grid_table[(grid_table["loss"] == 0.01) & (grid_table["flow"] == 0)]
    fig = ccsim.plot_sweep(t, x="buffer", y="share", hue="flows")
    ax = fig.axes[0]
    assert [l.get_text() for l in ax.get_xticklabels()] == ["10", "1BDP"]
    assert [l.get_text() for l in ax.get_legend().get_texts()] == ["reno + cubic",
                                                                   "vegas + reno"]
    containers = ax.containers
    assert len(containers) == 2
    for container, flows, offset in zip(containers, [("reno", "cubic"), ("vegas", "reno")],
                                        [-0.15, 0.15]):
        data, _, (bars,) = container.lines
        assert np.allclose(data.get_xdata(), np.array([0, 1]) + offset)  # side by side
        for k, buffer in enumerate([10, "1BDP"]):
            runs = t[(t["buffer"] == buffer) & (t["flows"] == flows)]["share"].to_numpy()
            mean, low, high = _t_interval(runs)
            assert data.get_ydata()[k] == pytest.approx(mean, rel=1e-12)
            (x0, y0), (x1, y1) = bars.get_segments()[k]
            assert (y0, y1) == pytest.approx((low, high), rel=1e-9)
    fig.savefig(tmp_path / "sweep.png")


def test_plot_sweep_one_line_and_own_axes(rtt_table):
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    one = rtt_table[rtt_table["flow"] == 1]
    assert ccsim.plot_sweep(one, x="rtt", y="share", ax=ax) is fig
    (line,) = ax.get_lines()
    means = one.groupby("rtt")["share"].mean()
    assert np.allclose(line.get_ydata(), means.to_numpy(), rtol=1e-12)
    assert ax.get_legend() is None


def test_plot_sweep_errors(grid_table, rtt_table):
    with pytest.raises(ccsim.ScenarioError, match=r"x='bufer'.*buffer"):
        ccsim.plot_sweep(grid_table, x="bufer", y="share")
    with pytest.raises(ccsim.ScenarioError, match=r"y='goodput'"):
        ccsim.plot_sweep(grid_table, x="buffer", y="goodput")
    with pytest.raises(ccsim.ScenarioError, match=r"hue='algo'"):
        ccsim.plot_sweep(grid_table, x="buffer", y="share", hue="algo")
    with pytest.raises(ccsim.ScenarioError, match="numeric"):
        ccsim.plot_sweep(grid_table, x="buffer", y="algorithm")
    with pytest.raises(ccsim.ScenarioError, match="other than x"):
        ccsim.plot_sweep(grid_table, x="buffer", y="share", hue="buffer")
    # loss and flows vary too: averaging over them is not a mean over seeds
    with pytest.raises(ccsim.ScenarioError, match="also vary: flows, loss, flow"):
        ccsim.plot_sweep(grid_table, x="buffer", y="share", hue="algorithm")
    with pytest.raises(ccsim.ScenarioError, match="also vary: flow"):
        ccsim.plot_sweep(rtt_table, x="rtt", y="share")
    with pytest.raises(ccsim.ScenarioError, match="confidence"):
        ccsim.plot_sweep(rtt_table, x="rtt", y="share", hue="flow", confidence=95)


# -- Dask: a cluster, restarted ------------------------------------------------------------------
RAN: list[str] = []
_LOCK = threading.Lock()


def counting_run(scenario, mode):
    """ccsim.run, counting which scenarios really ran (the Dask workers are
    threads of this process)."""
    with _LOCK:
        RAN.append(scenario.key)
    return ccsim.run(scenario, mode=mode)


def _cluster():
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                       dashboard_address=None)
    return cluster, distributed.Client(cluster)


@pytest.mark.slow
def test_dask_sweep_resumes_from_the_store_after_a_cluster_restart(tmp_path):
    path = tmp_path / "cluster.sqlite"
    grid = {"buffer": ["0.5BDP", "2BDP"], "loss": [0, 0.01]}
    fresh = ccsim.sweep(BASE, grid, seeds=[1, 2], workers=1, runner=counting_run,
                        progress=False)
    RAN.clear()
    cluster, client = _cluster()
    with cluster, client:  # the first cluster does half the grid, then goes away
        half = ccsim.sweep(BASE, {"buffer": ["0.5BDP"], "loss": grid["loss"]}, seeds=[1, 2],
                           executor=client, store=path, runner=counting_run, progress=False)
    first = set(RAN)
    assert len(RAN) == len(first) == 4
    RAN.clear()
    cluster, client = _cluster()
    with cluster, client:  # a new cluster, the same store
        table = ccsim.sweep(BASE, grid, seeds=[1, 2], executor=client, store=path,
                            runner=counting_run, progress=False)
    assert len(RAN) == len(set(RAN)) == 4 and not set(RAN) & first  # only the rest ran
    assert set(RAN) | first == set(table["key"])
    same(table, fresh)
    # the finished ones came from the store: the first cluster's very records
    assert list(table["wall_time"][:8]) == list(half["wall_time"])
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT count(*) FROM results").fetchone() == (8,)
    same(ccsim.load(path), fresh)


def test_sweep_command_writes_parquet_with_tuples(tmp_path, capsys):
    pytest.importorskip("pyarrow")
    from ccsim.cli import main

    spec = tmp_path / "sweep.toml"
    spec.write_text('bandwidth = "10Mbps"\nrtt = "20ms"\nduration = "2s"\n'
                    '[grid]\nflows = [["reno", "cubic"], ["vegas", "reno"]]\n'
                    'buffer = [10, "1BDP"]\n[sweep]\nmode = "fluid"\n')
    out = tmp_path / "out.parquet"
    assert main(["sweep", str(spec), "--workers", "1", "--store", str(tmp_path / "s.sqlite"),
                 "--parquet", str(out), "--no-progress"]) == 0
    assert f"table saved to {out}" in capsys.readouterr().out
    back = ccsim.read_parquet(out)
    same(back, ccsim.load(tmp_path / "s.sqlite"))
    assert back["flows"].iloc[-1] == ("vegas", "reno")


def test_guide_slurm_snippet_is_valid_python():
    """The one sweep block the docs cannot run (it needs a SLURM scheduler):
    at least it parses, and hands sweep the cluster's client and a store."""
    import ast
    import re
    from pathlib import Path

    guide = (Path(__file__).resolve().parents[1] / "docs" / "guide.md").read_text()
    (code,) = re.findall(r"^```\{code-block\} python\n:caption: On a SLURM cluster.*?\n(.*?)^```",
                         guide, re.S | re.M)
    tree = ast.parse(code)
    calls = {n.func.attr: n for n in ast.walk(tree) if isinstance(n, ast.Call)
             and isinstance(n.func, ast.Attribute)}
    assert {k.arg for k in calls["sweep"].keywords} >= {"executor", "store", "grid", "seeds"}
    assert "SLURMCluster" in code and "from dask_jobqueue import SLURMCluster" in code


@pytest.mark.slow
def test_guide_seeds_example_prints_what_the_guide_shows(capsys, tmp_path, monkeypatch):
    """The guide's interval over seeds is this version's output, re-measured
    whenever the engines change."""
    import re
    from pathlib import Path

    monkeypatch.chdir(tmp_path)
    guide = (Path(__file__).resolve().parents[1] / "docs" / "guide.md").read_text()
    block = r"(?:(?!```).)*?"  # within one fenced block
    code, shown = re.search(r"```python\n(" + block + r"print\(ccsim\.aggregate" + block
                            + r")```\n\n```text\n(.*?)```", guide, re.S).groups()
    exec(compile(code, "guide.md", "exec"), {"__name__": "__main__"})
    assert capsys.readouterr().out == shown
    widths = [float(hi) - float(lo) for *_, lo, hi in map(str.split, shown.splitlines()[1:])]
    # the seeds matter: an interval, not a point, as wide as the guide says (±0.03 or more)
    assert min(widths) / 2 > 0.03
