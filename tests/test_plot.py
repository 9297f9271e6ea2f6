"""Tests for ccsim.plot: the three-panel figure of a result."""

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.colors import to_rgba  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

import ccsim  # noqa: E402
from ccsim.plot import default_smooth, plot_result  # noqa: E402

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def result():
    sc = ccsim.dumbbell(bandwidth="10Mbps", rtt="20ms", buffer="1BDP",
                        flows=["reno", ccsim.Flow("newreno", start="2s")],
                        duration="5s", seed=1)
    return ccsim.run(sc)


@pytest.fixture
def fig(result):
    return result.plot()


def panels(fig):
    cwnd, goodput, queue = fig.axes
    return cwnd, goodput, queue


def test_returns_a_figure_with_three_panels_sharing_time(fig):
    assert isinstance(fig, Figure)
    assert len(fig.axes) == 3
    cwnd, goodput, queue = panels(fig)
    assert cwnd.get_shared_x_axes().joined(cwnd, queue)
    assert goodput.get_shared_x_axes().joined(goodput, queue)
    assert tuple(fig.get_size_inches()) == pytest.approx((9, 7.5))


def test_pyplot_manages_the_figure(result):
    # plt.show() in a script shows what pyplot knows: the figure must be one of them
    import matplotlib.pyplot as plt

    before = set(plt.get_fignums())
    fig = result.plot()
    assert set(plt.get_fignums()) == before | {fig.number}
    assert fig.canvas.manager is not None
    assert plt.gcf() is fig
    fig.show()  # Agg warns that it cannot show; it must not raise


def test_axis_labels_carry_units(result, fig):
    cwnd, goodput, queue = panels(fig)
    assert cwnd.get_ylabel() == "cwnd (segments)"
    # default window for a 5 s run: max(10 ms, min(1 s, 5 s / 50)) = 100 ms
    assert default_smooth(result) == pytest.approx(0.1)
    assert goodput.get_ylabel() == "goodput (Mbit/s, 100 ms mean)"
    assert queue.get_ylabel() == "queue (packets)"
    assert queue.get_xlabel() == "time (s)"
    assert cwnd.get_xlabel() == "" and goodput.get_xlabel() == ""
    assert cwnd.get_xlim() == pytest.approx((0, 5))


def flow_lines(ax):
    return [line for line in ax.lines if not line.get_label().startswith("_")]


def test_one_line_per_flow_with_consistent_colours(fig):
    cwnd, goodput, _ = panels(fig)
    assert len(flow_lines(cwnd)) == 2  # cwnd only: no ssthresh
    assert len(flow_lines(goodput)) == 2
    for a, b in zip(cwnd.lines, goodput.lines):
        assert to_rgba(a.get_color()) == to_rgba(b.get_color())
    assert to_rgba(cwnd.lines[0].get_color()) != to_rgba(cwnd.lines[1].get_color())


def test_legend_names_flows_and_start(result, fig):
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert labels[:2] == ["0: reno", "1: newreno (from 2 s)"]
    # then the marks the packet engine's Result.events gives, for what this run had
    marks = {"loss recovery": result.summary["recoveries"].sum() > 0,
             "timeout": result.summary["timeouts"].sum() > 0}
    assert labels[2:] == [name for name, seen in marks.items() if seen]


def test_cwnd_is_drawn_as_steps_with_gaps_before_start(result, fig):
    line = fig.axes[0].lines[1]
    assert line.get_drawstyle() == "steps-post"
    t, y = line.get_xdata(), line.get_ydata()
    assert np.isnan(y[t < 1.99]).all()
    series = result.series("cwnd")[1].to_numpy(dtype=float)
    np.testing.assert_array_equal(y, series)


def test_goodput_in_mbit_per_s_and_gap_before_start(result, fig):
    goodput = fig.axes[1]
    t, y = goodput.lines[1].get_xdata(), goodput.lines[1].get_ydata()
    assert np.isnan(y[t < 1.99]).all()  # not zero: the flow did not exist
    y0 = goodput.lines[0].get_ydata()
    # Mbit/s, not bit/s (in-order delivery may briefly exceed the 10 Mbit/s link
    # when a retransmission fills a hole and releases buffered segments)
    assert 5 < np.nanmax(y0) < 30
    # the mean of the smoothed curve over the run is the flow's own average
    expected = result.summary.loc[0, "lifetime_goodput_bps"] / 1e6
    assert np.nanmean(y0) == pytest.approx(expected, rel=0.05)


def test_smoothing_window(result):
    raw = plot_result(result, smooth=result.scenario.sample_interval)
    smooth = plot_result(result, smooth="500ms")
    assert raw.axes[1].get_ylabel() == "goodput (Mbit/s, 10 ms mean)"
    assert smooth.axes[1].get_ylabel() == "goodput (Mbit/s, 500 ms mean)"
    assert plot_result(result, smooth=0.5).axes[1].get_ylabel() == smooth.axes[1].get_ylabel()
    # a wider window gives a smoother curve
    jitter = [np.nanstd(np.diff(f.axes[1].lines[0].get_ydata())) for f in (raw, smooth)]
    assert jitter[1] < jitter[0] / 3


@pytest.mark.parametrize("smooth", [0.001, "1us", -1, "fast"])
def test_bad_smoothing_window_names_the_field(result, smooth):
    with pytest.raises(ccsim.CcsimError) as info:
        plot_result(result, smooth=smooth)
    assert info.value.field == "smooth"


def test_buffer_limit_line(result, fig):
    queue = fig.axes[2]
    limit = result.scenario.links[0].queue.packets(result.scenario.packet_size)
    assert limit == 17
    buffer = [line for line in queue.lines if line.get_label().startswith("buffer")]
    assert len(buffer) == 1
    assert buffer[0].get_label() == "buffer (17 pkts)"
    assert buffer[0].get_linestyle() == "--"
    assert set(buffer[0].get_ydata()) == {17}
    legend = [t.get_text() for t in queue.get_legend().get_texts()]
    assert "buffer (17 pkts)" in legend
    # the queue itself never exceeds the limit and is drawn below its top
    qline = [line for line in queue.lines if line.get_label() == "queue"][0]
    assert np.nanmax(qline.get_ydata()) <= 17
    assert queue.get_ylim()[1] > 17


def test_title_describes_scenario(fig):
    title = fig._suptitle.get_text()
    assert title == "dumbbell · 10 Mbit/s · RTT 20 ms · droptail buffer 17 pkts · seed 1"


def test_title_red_loss_and_rtt_range():
    sc = ccsim.dumbbell(bandwidth="5Mbps", rtt="20ms", buffer=30, queue="red", loss=0.01,
                        flows=["reno", ccsim.Flow("reno", rtt="60ms")], duration="2s", seed=3)
    fig = ccsim.run(sc).plot()
    title = fig._suptitle.get_text()
    assert "5 Mbit/s" in title and "RTT 20 ms–60 ms" in title
    assert "RED buffer 30 pkts" in title and "loss 1%" in title and "seed 3" in title
    buffer = [line for line in fig.axes[2].lines if line.get_label() == "buffer (30 pkts)"]
    assert set(buffer[0].get_ydata()) == {30}


def test_many_flows_get_distinct_colours():
    sc = ccsim.dumbbell(bandwidth="10Mbps", rtt="20ms", flows=["reno"] * 12, duration="1s")
    fig = ccsim.run(sc).plot()
    colours = {to_rgba(line.get_color()) for line in fig.axes[0].lines}
    assert len(colours) == 12


def test_figsize_and_saving_headless(result, tmp_path):
    fig = plot_result(result, figsize=(6, 5))
    assert tuple(fig.get_size_inches()) == pytest.approx((6, 5))
    out = tmp_path / "r.png"
    fig.savefig(out, dpi=60)
    assert out.read_bytes().startswith(PNG_MAGIC)


def test_displays_itself_in_jupyter(fig):
    # without pyplot's inline backend IPython falls back to _repr_png_
    assert fig._repr_png_().startswith(PNG_MAGIC)


# -- options: panels, flows, time window, ax= / fig= --------------------------------


def test_panels_in_the_order_asked(result):
    fig = result.plot(panels=["rtt", "cwnd", "ssthresh"])
    assert [a.get_ylabel() for a in fig.axes] == ["RTT (ms)", "cwnd (segments)",
                                                  "ssthresh (segments)"]
    rtt = flow_lines(fig.axes[0])[0].get_ydata()
    # milliseconds: the base RTT is 20 ms, queueing adds to it
    assert 19 < np.nanmin(rtt) and np.nanmax(rtt) < 200
    ss = flow_lines(fig.axes[2])[0].get_ydata()
    assert np.isfinite(ss).any() and not np.isinf(ss).any()  # inf before the first loss: not drawn


@pytest.mark.parametrize("kwargs, field", [
    ({"panels": ["cwnd", "jitter"]}, "panels"),
    ({"panels": []}, "panels"),
    ({"panels": ["inflight"]}, "panels"),  # not traced by this result
    ({"flows": [2]}, "flows"),
    ({"flows": ["reno"]}, "flows"),
    ({"start": "6s"}, "start"),
    ({"start": "3s", "end": "2s"}, "end"),
])
def test_bad_options_name_the_field(result, kwargs, field):
    with pytest.raises(ccsim.CcsimError) as info:
        result.plot(**kwargs)
    assert info.value.field == field


def test_flow_subset_keeps_each_flows_colour(result, fig):
    only = result.plot(flows=[1])
    lines = flow_lines(only.axes[0])
    assert len(lines) == 1
    assert to_rgba(lines[0].get_color()) == to_rgba(flow_lines(fig.axes[0])[1].get_color())
    assert [t.get_text() for t in only.axes[0].get_legend().get_texts()][0] == \
        "1: newreno (from 2 s)"


def test_time_window_limits_axes_and_data(result):
    fig = result.plot(start="1s", end="3s")
    for ax in fig.axes:
        assert ax.get_xlim() == pytest.approx((1, 3))
    t = flow_lines(fig.axes[0])[0].get_xdata()
    assert t.min() >= 1 - 0.02 and t.max() <= 3 + 0.02


def test_draws_into_given_axes_and_figure(result):
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2)
    out = result.plot(panels=["cwnd", "queue"], ax=axes)
    assert out is fig and len(fig.axes) == 2
    assert axes[0].get_ylabel() == "cwnd (segments)" and axes[1].get_ylabel() == "queue (packets)"
    _, one = plt.subplots()
    result.plot(panels="goodput", ax=one)
    assert len(flow_lines(one)) == 2
    with pytest.raises(ccsim.CcsimError) as info:
        result.plot(ax=one)  # three panels, one axes
    assert info.value.field == "ax"
    empty = plt.figure()
    assert result.plot(fig=empty) is empty and len(empty.axes) == 3


# -- loss marks ------------------------------------------------------------------------


def marks(ax, marker):
    from matplotlib.collections import PathCollection

    out = []
    for c in ax.collections:
        if isinstance(c, PathCollection) and c.get_label().startswith(f"_{marker}"):
            out.append(c)
    return out


def test_marks_events_filled_by_hand(result):
    import pandas as pd

    hand = ccsim.Result(result.scenario, result.mode, result.summary, result.metrics,
                        result.traces,
                        events=pd.DataFrame({"time": [1.0, 3.0, 4.0], "flow": [0, 1, 1],
                                             "event": ["recovery", "recovery", "timeout"]}))
    fig = hand.plot()
    cwnd = fig.axes[0]
    rec = marks(cwnd, "recovery")
    assert sorted(c.get_label() for c in rec) == ["_recovery 0", "_recovery 1"]
    offsets = {c.get_label(): c.get_offsets() for c in rec}
    assert offsets["_recovery 1"][0][0] == pytest.approx(3.0)
    # the mark sits on the flow's cwnd at that moment
    series = result.series("cwnd")[1]
    assert offsets["_recovery 1"][0][1] == pytest.approx(series[series.index <= 3.0].iloc[-1])
    (timeout,) = marks(cwnd, "timeout")
    assert timeout.get_offsets()[0][0] == pytest.approx(4.0)
    # in the flow's colour, named in the legend
    assert to_rgba(timeout.get_facecolor()[0]) == to_rgba(flow_lines(cwnd)[1].get_color())
    legend = [t.get_text() for t in cwnd.get_legend().get_texts()]
    assert "loss recovery" in legend and "timeout" in legend
    assert not marks(hand.plot(marks=False).axes[0], "recovery")
    assert not marks(hand.plot(start="3.5s").axes[0], "recovery")  # outside the window


def test_marks_the_fluid_engines_events():
    sc = ccsim.dumbbell(bandwidth="10Mbps", rtt="20ms", buffer="1BDP",
                        flows=["reno", "reno"], duration="10s", seed=1)
    res = ccsim.run(sc, mode="fluid")
    ev = res.events
    assert list(ev.columns[:3]) == ["time", "flow", "event"]
    for flow in (0, 1):
        n = int((ev[ev.flow == flow].event == "recovery").sum())
        assert n >= 1
        assert (ev[ev.flow == flow].event == "timeout").sum() == res.summary.loc[flow, "timeouts"]
    fig = res.plot()
    drawn = sum(len(c.get_offsets()) for c in marks(fig.axes[0], "recovery"))
    assert drawn == int((ev.event == "recovery").sum())


# -- many flows, one colour per flow everywhere -----------------------------------------


def test_flow_colours_are_stable_and_distinct():
    from ccsim.plot import flow_colours

    assert flow_colours(3) == flow_colours(12)[:3]  # flow i's colour does not depend on n
    assert to_rgba(flow_colours(2)[1]) == to_rgba("C1")
    assert len({to_rgba(c) for c in flow_colours(30)}) == 30


def test_ten_flows_stack_their_goodput():
    sc = ccsim.dumbbell(bandwidth="10Mbps", rtt="20ms",
                        flows=[ccsim.Flow("reno", start=f"{i * 0.1}s") for i in range(10)],
                        duration="3s", seed=2)
    res = ccsim.run(sc, mode="fluid")
    fig = res.plot()
    goodput = fig.axes[1]
    assert len(goodput.collections) == 10  # one area per flow
    assert "stacked" in goodput.get_ylabel()
    colours = [to_rgba(c.get_facecolor()[0]) for c in goodput.collections]
    assert colours == [to_rgba(line.get_color()) for line in flow_lines(fig.axes[0])]


def test_goodput_panel_shows_link_rate(fig):
    rate = [line for line in fig.axes[1].lines if line.get_label() == "_link rate"]
    assert set(rate[0].get_ydata()) == {10}


@pytest.mark.slow
def test_shown_once_in_jupyter(monkeypatch):
    """Under the inline backend a figure that is also the cell's value would be
    sent twice (once as the value, once by the end-of-cell flush)."""
    import nbformat
    from nbclient import NotebookClient
    import os
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    monkeypatch.setenv("PYTHONPATH", str(root) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    monkeypatch.delenv("MPLBACKEND", raising=False)
    cells = ["import ccsim\nimport matplotlib.pyplot as plt\n"
             "res = ccsim.run(ccsim.dumbbell(bandwidth='10Mbps', rtt='20ms', flows=['reno'],"
             " duration='2s'), mode='fluid')",
             "res.plot()", "res.plot();", "fig = res.plot()", "fig",
             "fig = res.plot()\nplt.show()",
             "res.plot()\n1"]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    NotebookClient(nb, timeout=120, kernel_name="python3").execute()
    images = [sum("image/png" in o.get("data", {}) for o in c.outputs) for c in nb.cells]
    assert images == [0, 1, 1, 1, 1, 1, 1]


def test_inflight_panel_when_an_engine_traces_it(result):
    import pandas as pd

    cwnd = result.traces[result.traces["variable"] == "cwnd"].copy()
    inflight = cwnd.assign(variable="inflight", value=cwnd["value"] - 1)
    traces = pd.concat([result.traces.astype({"variable": str}),
                        inflight.astype({"variable": str})], ignore_index=True)
    traced = ccsim.Result(result.scenario, result.mode, result.summary, result.metrics, traces)
    fig = traced.plot(panels=["cwnd", "inflight"])
    ax = fig.axes[1]
    assert ax.get_ylabel() == "in flight (segments)"
    y = flow_lines(ax)[0].get_ydata()
    np.testing.assert_allclose(y, flow_lines(fig.axes[0])[0].get_ydata() - 1)


def test_the_queue_panel_alone_has_no_flow_legend(result):
    # The queue is the link's: a figure of it alone names no flow (asking the
    # figure legend for none used to raise).
    fig = result.plot(panels=["queue"])
    (ax,) = fig.axes
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels[0] == "queue" and not any("reno" in label for label in labels)
