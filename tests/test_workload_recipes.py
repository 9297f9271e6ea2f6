"""The workload recipes: short flows' FCT behind a bulk flow (DCTCP's web
search sizes) and algorithms on a synthetic cellular trace."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402

import ccsim  # noqa: E402
from ccsim.experiments import RECIPES, cellular_link, short_flow_fct  # noqa: E402


@pytest.fixture(scope="module")
def short_flows():
    return short_flow_fct(duration="60s")  # ~20 web-search flows per setting, ~2 s


@pytest.mark.slow
def test_fq_codel_takes_short_flows_out_of_the_bulk_flows_queue(short_flows):
    t = short_flows.table
    assert list(dict.fromkeys(t.setting)) == ["behind CUBIC", "behind BBR",
                                              "behind CUBIC, fq_codel"]
    # every setting runs the same arrivals: same flows in each size bucket
    counts = t.groupby("setting", sort=False)["flows"].apply(tuple)
    assert counts.nunique() == 1 and sum(counts.iloc[0]) > 2 * 15  # two percentiles a bucket
    small = t[t.high <= 100_000].set_index(["setting", "bucket", "percentile"]).slowdown
    assert len(small) == 3 * 2 * 2
    # the classic result, per bucket and percentile (seeds 1-3 all show it):
    # under fq_codel a short flow is not behind the bulk flow's queue
    for (setting, bucket, p), value in small.items():
        if setting != "behind CUBIC, fq_codel":
            assert small["behind CUBIC, fq_codel", bucket, p] < value, (setting, bucket, p)
    assert (small["behind CUBIC, fq_codel"] < 6).all()
    results = short_flows.data["results"]
    assert results["behind CUBIC, fq_codel"].scenario.links[0].queue.kind == "fq_codel"
    assert (t.bulk_goodput_bps > 3e6).all()  # the bulk flow runs beside them


@pytest.mark.slow
def test_the_short_flow_figure_has_a_bar_group_per_bucket(short_flows):
    fig = short_flows.plot()
    labels = [x.get_text() for x in fig.axes[0].get_xticklabels()]
    assert labels == list(dict.fromkeys(short_flows.table.bucket))


def test_on_a_cellular_trace_copa_keeps_the_least_queue_and_bbr_the_most():
    ex = cellular_link(duration="10s")
    t = ex.table.set_index("algorithm")
    assert list(t.index) == ["vegas", "copa", "bbr"]
    # seeds 1-3 all order the queues so: Copa's target is a small queue, Vegas
    # keeps alpha to beta packets and follows the rate, BBR's probes overshoot it
    assert t.queue["copa"] < t.queue["vegas"] < t.queue["bbr"]
    assert t.p95_rtt["copa"] < t.p95_rtt["bbr"]
    assert t.retransmits["bbr"] > 10 * max(t.retransmits["vegas"], t.retransmits["copa"], 1)
    assert (t.utilisation > 0.6).all()
    trace = ex.data["trace"]
    for res in ex.data["results"].values():  # every law on the same generated trace
        assert res.scenario.links[0].schedule == trace
    fig = ex.plot()
    assert len(fig.axes) == 3
    assert [ax.get_title().split(":")[0] for ax in fig.axes] == ["vegas", "copa", "bbr"]


def test_the_recipes_are_listed():
    assert RECIPES["short-flow-fct"] is short_flow_fct
    assert RECIPES["cellular-link"] is cellular_link
    assert ccsim.experiments.short_flow_fct is short_flow_fct
