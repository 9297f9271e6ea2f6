"""``ccsim.metrics.congestion_events``: window reductions grouped into the
congestion events that caused them."""

import pandas as pd
import pytest

import ccsim
from ccsim.errors import ScenarioError
from ccsim.metrics import congestion_events


def _events(rows):
    return pd.DataFrame(rows, columns=["time", "flow", "event"])


def test_reductions_within_a_window_of_the_first_are_one_event():
    ev = _events([(0.5, 0, "recovery"),   # before `since`: left out
                  (1.00, 0, "recovery"), (1.01, 1, "timeout"), (1.02, 0, "recovery"),
                  (1.03, 2, "start"),     # not a reduction
                  (1.04, 0, "timeout"),   # 40 ms after the first: a new event,
                  (1.06, 1, "recovery"),  # though 20 ms after its predecessor
                  (2.00, 2, "recovery")])
    out = congestion_events(ev, window=0.03, since=0.9)
    assert out["time"].to_list() == [1.00, 1.04, 2.00]
    assert out["reductions"].to_list() == [3, 2, 1]
    assert out["flows"].to_list() == [(0, 1), (0, 1), (2,)]
    assert out["n_flows"].to_list() == [2, 2, 1]


def test_no_reductions_give_an_empty_table_with_the_columns():
    out = congestion_events(_events([(1.0, 0, "start")]), window=0.1)
    assert out.empty and list(out.columns) == ["time", "reductions", "flows", "n_flows"]


@pytest.mark.parametrize("window", [0, -0.1, float("nan")])
def test_a_window_that_is_not_a_positive_duration_is_refused(window):
    with pytest.raises(ScenarioError, match="window"):
        congestion_events(_events([]), window=window)


def test_every_reduction_of_a_packet_run_falls_in_one_event():
    # the events' reductions add up to the summary's recoveries and timeouts
    sc = ccsim.dumbbell("10Mbps", "20ms", buffer=8, duration="10s", seed=1,
                        flows=[ccsim.Flow("newreno", start=0.5 * i) for i in range(3)])
    res = ccsim.run(sc)
    out = congestion_events(res.events, window=0.03)
    s = res.summary
    assert out["reductions"].sum() == s["recoveries"].sum() + s["timeouts"].sum() > 0
    assert (out["time"].diff().dropna() >= 0.03).all()
