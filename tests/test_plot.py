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


@pytest.fixture(scope="module")
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


def test_not_registered_with_pyplot(fig):
    # an OO figure: pyplot would have given it a figure manager
    assert fig.canvas.manager is None


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


def test_one_line_per_flow_with_consistent_colours(fig):
    cwnd, goodput, _ = panels(fig)
    assert len(cwnd.lines) == 2  # cwnd only: no ssthresh
    assert len(goodput.lines) == 2
    for a, b in zip(cwnd.lines, goodput.lines):
        assert to_rgba(a.get_color()) == to_rgba(b.get_color())
    assert to_rgba(cwnd.lines[0].get_color()) != to_rgba(cwnd.lines[1].get_color())


def test_legend_names_flows_and_start(fig):
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert labels == ["0: reno", "1: newreno (from 2 s)"]


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
    # the mean of the smoothed curve over the run is the flow's goodput
    expected = result.summary.loc[0, "goodput_bps"] / 1e6
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
