"""BBR v3 (draft-ietf-ccwg-bbr, Linux google/bbr v3 tcp_bbr.c): its gains and
bounds, restated from the sources, and its behaviour at 10 Mbit/s, 40 ms."""

from __future__ import annotations

import math

import pytest

import ccsim
from ccsim import algorithms
from ccsim.algorithms import Ack, RttSample
from ccsim.errors import ScenarioError

MSS = 1000
RTT = 0.1


def make(**params):
    cc = algorithms.get("bbr3")(**params)
    cc.start(10, MSS)
    return cc


def feed(cc, now, rate, delivered, inflight=10.0, acked=1.0):
    cc.on_rtt(RttSample(now, RTT, RTT, RTT, inflight))
    cc.on_ack(Ack(now, acked, RTT, RTT, RTT, inflight, delivered, rate * MSS * 8.0))


def rounds(cc, n, rate, t=0.0, d=0.0, inflight=10.0):
    for _ in range(n):
        for _ in range(10):
            d += inflight / 10
            t += RTT / 10
            feed(cc, t, rate, d, inflight)
    return t, d


def test_startup_paces_at_2_77_with_a_window_gain_of_2():
    # Linux v3: bbr_startup_pacing_gain = 277/100, bbr_startup_cwnd_gain = 2 (v1: 2.885 for both)
    cc = make()
    feed(cc, 0.01, 100.0, 1.0)
    assert cc.mode == "startup"
    assert cc.pacing_rate == pytest.approx(2.77 * 100.0 * MSS * 8 * 0.99)
    assert cc.gain == 2.0


@pytest.mark.parametrize("variant, drain, down", [("linux", 88 / 256, 0.91), ("draft", 0.5, 0.90)])
def test_drain_and_probe_bw_down_gains_follow_the_chosen_source(variant, drain, down):
    cc = make(variant=variant)
    t, d = rounds(cc, 4, 100.0, inflight=20.0)   # BtlBw flat for 3 rounds: pipe full (BDP 10)
    assert cc.mode == "drain" and cc.pacing_gain == drain
    feed(cc, t + 0.01, 100.0, d + 1, inflight=5.0)  # inflight <= BDP (10): Drain ends, DOWN
    assert cc.mode == "probe_bw" and cc.phase == "down" and cc.pacing_gain == down


def test_loss_in_a_round_cuts_the_short_term_bounds_by_beta():
    # bbr_loss_lower_bounds: bw_lo = max(bw_latest, beta * bw_lo), beta 0.7, once per
    # round with loss, outside probing; bw_lo starts at max_bw
    cc = make()
    t, d = rounds(cc, 4, 100.0)
    feed(cc, t + 0.01, 100.0, d + 1, inflight=5.0)   # into DOWN
    t, d = rounds(cc, 1, 40.0, t + 0.01, d + 1)       # a round of slow samples
    cc._loss_signal(1.0, 10.0)
    rounds(cc, 1, 40.0, t, d)                         # the round with the loss ends
    assert cc.phase in ("down", "cruise")
    assert cc.bw_shortterm == pytest.approx(max(40.0, 0.7 * 100.0))
    assert cc.btl_bw == pytest.approx(70.0)


def test_cruise_leaves_headroom_below_the_long_term_bound():
    # bbr_inflight_with_headroom: inflight_hi - max(inflight_hi * 15 %, 1), at least 4
    cc = make()
    t, d = rounds(cc, 4, 100.0)
    feed(cc, t + 0.01, 100.0, d + 1, inflight=5.0)
    cc.inflight_longterm = 12.0
    feed(cc, t + 0.02, 100.0, d + 2, inflight=5.0)
    assert cc.phase == "cruise"
    assert cc.cwnd <= 12.0 - 0.15 * 12.0 + 1e-9


def test_probe_rtt_comes_after_5_s_and_holds_half_the_bdp():
    cc = make()
    t, d = rounds(cc, 4, 100.0)
    feed(cc, t + 0.01, 100.0, d + 1, inflight=5.0)
    cc.on_rtt(RttSample(t + 5.2, 2 * RTT, RTT, RTT, 10.0))   # no new low for 5 s
    cc.on_ack(Ack(t + 5.2, 1.0, 2 * RTT, RTT, RTT, 10.0, d + 2, 100.0 * MSS * 8))
    assert cc.mode == "probe_rtt"
    assert cc.cwnd == pytest.approx(max(0.5 * cc.bdp, 4.0))
    assert math.isfinite(cc.rt_prop)


def test_an_unknown_variant_is_refused():
    with pytest.raises(ScenarioError, match="variant"):
        algorithms.get("bbr3")(variant="v2")


# -- behaviour (10 Mbit/s, 40 ms) ---------------------------------------------------------
def test_alone_in_a_shallow_buffer_it_loses_little_where_v1_loses_more():
    """A 0.25-BDP buffer: BBRv3's loss bounds keep its loss rate at most 3 %
    with the link at least 90 % busy (measured 0.4 % at 0.905); v1 keeps its
    window and loses more (measured 3.6 %, with Linux's packet conservation)."""
    def run(name):
        sc = ccsim.dumbbell("10Mbps", "40ms", buffer="0.25BDP", flows=[name], duration="30s", seed=1)
        m = ccsim.run(sc).metrics
        return m["drops"] / m["data_packets"], m["utilisation"]
    v3, util = run("bbr3")
    v1, _ = run("bbr")
    assert v3 <= 0.03 and util >= 0.90
    assert v3 < v1


def test_against_cubic_in_a_one_bdp_buffer_it_takes_at_most_three_quarters():
    sc = ccsim.dumbbell("10Mbps", "40ms", buffer="1BDP", flows=["bbr3", "cubic"],
                        duration="30s", seed=1)
    assert ccsim.run(sc).summary["share"][0] <= 0.75
