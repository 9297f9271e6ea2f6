"""How a Result reads: a short repr, an HTML table in the units people use."""

import math

import pytest

import ccsim
from ccsim.results import display_summary


@pytest.fixture(scope="module")
def res():
    sc = ccsim.dumbbell(bandwidth="10Mbps", rtt="20ms", buffer="1BDP",
                        flows=["reno", ccsim.Flow("vegas", start="1s")], duration="3s", seed=1)
    return ccsim.run(sc, mode="fluid")


def test_repr_is_one_short_line(res):
    text = repr(res)
    assert "\n" not in text and len(text) < 200
    assert text.startswith("<ccsim.Result fluid: dumbbell · 10 Mbit/s · RTT 20 ms")
    reno = res.summary.loc[0, "goodput_bps"] / 1e6
    assert f"reno {reno:.3g} Mbit/s" in text


def test_html_has_units_and_a_description(res):
    html = res._repr_html_()
    assert "dumbbell · 10 Mbit/s · RTT 20 ms · droptail buffer 17 pkts · seed 1" in html
    for heading in ("goodput (Mbit/s)", "share (%)", "mean RTT (ms)", "start (s)"):
        assert heading in html
    assert f"utilisation {res.metrics['utilisation'] * 100:.1f}%" in html
    assert "goodput_bps" not in html  # the SI name is the summary's, not the display's


def test_display_converts_but_summary_stays_si(res):
    shown = display_summary(res)
    s = res.summary
    assert shown.loc[0, "goodput (Mbit/s)"] == pytest.approx(s.loc[0, "goodput_bps"] / 1e6,
                                                               abs=5e-4)
    assert shown.loc[1, "share (%)"] == pytest.approx(s.loc[1, "share"] * 100, abs=0.05)
    assert shown.loc[0, "mean RTT (ms)"] == pytest.approx(s.loc[0, "mean_rtt"] * 1e3, abs=0.05)
    assert 1e6 < s.loc[0, "goodput_bps"] and s.loc[0, "mean_rtt"] < 1  # SI untouched
    assert "completion (s)" not in shown.columns  # bulk flows: no completion time
    # the Linux stack runs Reno's and Vegas' laws inside PRR: the column says so
    assert list(shown["recovery"]) == ["prr", "prr"]
    assert not math.isnan(shown.loc[1, "goodput (Mbit/s)"])


def test_build_takes_per_flow_event_lists():
    """The seam the packet engine fills: build(events=[per flow [(time, name)]])."""
    import numpy as np

    from ccsim.results import EVENT_COLUMNS, build

    sc = ccsim.dumbbell(bandwidth="10Mbps", rtt="20ms", flows=["reno", "reno"], duration="1s")
    n, dt = 100, sc.sample_interval
    times = np.arange(n) * dt
    ones = np.ones((n, 2))
    raw = [{"end": 1.0, "retransmits": 0, "timeouts": 1, "recoveries": 1, "rtt_sum": 0.02,
            "rtt_count": 1, "done_at": None}] * 2
    kw = dict(times=times, cwnd=ones * 10, ssthresh=ones * 20, rtt=ones * 0.02,
              queue=np.zeros(n), delivered=ones, departures=np.full(n, 2.0), flows=raw,
              extra={})
    res = build(sc, "packet", events=[[(0.7, "timeout"), (0.3, "recovery")],
                                      [(0.5, "recovery")]], **kw)
    ev = res.events
    assert list(ev.columns) == list(EVENT_COLUMNS)
    assert ev.values.tolist() == [[0.3, 0, "recovery"], [0.5, 1, "recovery"],
                                  [0.7, 0, "timeout"]]
    assert ev["flow"].dtype == "int64" and ev["time"].dtype == "float64"
    empty = build(sc, "packet", **kw).events  # an engine that records none
    assert list(empty.columns) == list(EVENT_COLUMNS) and len(empty) == 0
    assert ccsim.Result(sc, "packet", res.summary, res.metrics, res.traces).events.empty
