"""H-TCP's Linux rules (``net/ipv4/tcp_htcp.c``), the law's default: fixed
point, ``modeswitch``, the bandwidth switch, α recomputed at each
whole-segment step, and Δ restarting when the recovery ends.

Expected values come from the restatements below, written from the module's
rules independently of ccsim.algorithms.htcp, or from hand arithmetic."""

from __future__ import annotations

import pytest

import ccsim
from ccsim import Flow, algorithms
from ccsim.algorithms import Ack, Loss
from ccsim.algorithms.contract import RecoveryState
from ccsim.packet.engine import PacketEngine

HZ = 250  # the law's default clock: jiffy 4 ms


def linux_factor(diff, hz=HZ):
    """htcp_alpha_update's factor, ``diff`` jiffies after last_cong."""
    if diff <= hz:
        return 1
    d = diff - hz
    return 1 + (10 * d + (d // 2) * (d // 2) // hz) // hz


def linux_alpha(diff, min_rtt_j, beta, hz=HZ):
    """α in 128ths: the factor scaled by clamp(8·HZ/(10·minRTT), 4, 80) eighths."""
    scale = min(max(8 * hz // (10 * min_rtt_j), 4), 80)
    factor = max(linux_factor(diff, hz) * 8 // scale, 1)
    return 2 * factor * (128 - beta)


def make(**params):
    cc = algorithms.get("htcp")(**params)
    cc.start(10, 1448)
    return cc


def ack(now, acked=1, rtt=0.1, min_rtt=0.1):
    return Ack(now=now, acked=acked, rtt=rtt, min_rtt=min_rtt, srtt=rtt, inflight=1.0,
               delivered=0.0, delivery_rate=None)


def loss(now):
    return Loss(now=now, kind="fast", inflight=1.0, min_rtt=0.1, srtt=0.1)


def state(now, name):
    return RecoveryState(now=now, state=name, pipe=0.0, inflight=0.0, delivered=0.0,
                         acked=1.0, lost=0.0, change=True)


@pytest.mark.parametrize("diff", [0, 250, 251, 500, 750, 1000, 2500])
@pytest.mark.parametrize("min_rtt_j", [1, 3, 25, 50, 100])
@pytest.mark.parametrize("beta", [64, 80, 102])
def test_alpha_is_linux_fixed_point(diff, min_rtt_j, beta):
    assert make().alpha_fixed(diff, min_rtt_j, beta) == linux_alpha(diff, min_rtt_j, beta)


def test_alpha_by_hand():
    # 3 s after a loss on a LAN (RTT_min one jiffy): factor 1 + (10·500 + 250²/250)/250
    # = 22, scaled by 8/80 and rounded down to 2 segments per RTT, where the
    # continuous rule gives 2.2; 1.5 s: factor 1 + (1250 + 62·62/250)/250 = 6,
    # scaled to 0, floored to Reno's 1
    cc = make()
    assert cc.alpha_fixed(750, 1, 64) == 2 * 128
    assert cc.alpha_fixed(375, 1, 64) == 128
    # 100 ms RTT (25 jiffies): scale 8 (ratio 1); β 0.75: 2·22·32 = 1408/128 = 11 segments
    assert cc.alpha_fixed(750, 25, 96) == 1408


def test_beta_waits_a_loss_and_stays_half_below_10ms():
    cc = make(bandwidth_switch=False)
    cc.cwnd, cc.ssthresh = 100.0, 50.0
    for i in range(30):  # RTTs 100 → 129 ms: RTT_min 25 jiffies, RTT_max 33
        cc.on_ack(ack(0.01 * i, rtt=0.1 + 0.001 * i))
    cc.on_loss(loss(1.0))  # the first loss: β_min whatever the RTTs (modeswitch 0)
    assert cc.beta == 0.5 and cc.ssthresh == 50.0
    cc.cwnd = 100.0
    # now from RTT_max faded at the first loss to 25 + 8·95/100 = 32 jiffies:
    # (25 << 7)/32 = 100 in 128ths; 100·100 >> 7 = 78
    cc.on_loss(loss(2.0))
    assert cc.max_j == 25 + (8 * 95 // 100) * 95 // 100  # faded again at this loss
    assert cc.beta_fp == (25 << 7) // 32 == 100 and cc.ssthresh == 78.0
    lan = make(bandwidth_switch=False)
    lan.cwnd, lan.ssthresh = 100.0, 50.0
    for i in range(30):  # RTT_min 8 ms (2 jiffies), not above msecs_to_jiffies(10) = 3
        lan.on_ack(ack(0.01 * i, rtt=0.008 + 0.001 * i, min_rtt=0.008))
    for t in (1.0, 2.0, 3.0):
        lan.cwnd = 101.0
        lan.on_loss(loss(t))
        assert lan.beta == 0.5 and lan.ssthresh == (101 * 64 >> 7) == 50.0


def test_beta_max_is_102_in_128ths():
    cc = make(bandwidth_switch=False)
    cc.cwnd, cc.ssthresh = 100.0, 50.0
    cc.on_ack(ack(0.0, rtt=0.1))
    cc.on_loss(loss(1.0))
    cc.cwnd = 100.0
    cc.on_loss(loss(2.0))  # RTT_min = RTT_max: 128 clamped to BETA_MAX 102
    assert cc.beta_fp == 102 and cc.ssthresh == (100 * 102 >> 7) == 79.0


def _steady(cc, t0, t1, rate, rtt=0.1):
    """One-segment ACKs at ``rate`` segments/s from t0 to t1 (s)."""
    n = round((t1 - t0) * rate)
    for i in range(n):
        cc.on_ack(ack(t0 + i / rate, rtt=rtt))


@pytest.mark.parametrize("after, switched", [(1000, False), (1150, False), (1300, True),
                                             (700, True)])
def test_bandwidth_switch(after, switched):
    # maxB, the largest smoothed throughput since the loss, 1000 segments/s in the
    # first epoch; at the next loss β falls to β_min when it moved by more than a
    # fifth (between(5·maxB, 4·old_maxB, 6·old_maxB))
    cc = make()
    cc.cwnd, cc.ssthresh = 100.0, 50.0
    _steady(cc, 0.0, 3.0, 1000)
    cc.on_loss(loss(3.0))
    cc.on_recovery(state(3.0, "recovery"))
    cc.on_recovery(state(3.1, "open"))
    first = cc.old_max_b
    assert 950 <= first <= 1050  # whole segments over whole jiffies: a few per cent
    cc.cwnd = 100.0
    _steady(cc, 3.1, 6.1, after)
    assert cc.max_b == pytest.approx(first * after / 1000, rel=0.06)
    cc.cwnd = 100.0
    cc.on_loss(loss(6.1))
    ratio = cc.old_max_b / first
    assert (not 0.8 <= ratio <= 1.2) == switched
    # the first loss switched too (old_maxB 0) and cleared modeswitch, so this one
    # takes β_min either way; it sets modeswitch unless the switch fired again
    assert cc.beta == 0.5 and cc.modeswitch == (not switched)
    if not switched:  # a third epoch alike: β follows the RTTs (all 100 ms: β_max)
        cc.cwnd = 100.0
        _steady(cc, 6.2, 9.2, after)
        cc.on_loss(loss(9.2))
        assert cc.beta == 102 / 128
    off = make(bandwidth_switch=False)
    off.cwnd, off.ssthresh = 100.0, 50.0
    _steady(off, 0.0, 3.0, 1000)
    off.on_loss(loss(3.0))
    _steady(off, 3.1, 6.1, after)
    off.on_loss(loss(6.1))
    assert off.beta == 102 / 128


def test_delta_restarts_when_the_recovery_ends():
    # htcp_state: last_cong at the entry to Recovery, and again on returning to Open
    cc = make(bandwidth_switch=False)
    cc.cwnd, cc.ssthresh = 50.0, 50.0
    cc.on_ack(ack(0.0))
    cc.on_loss(loss(10.0))
    cc.on_recovery(state(10.0, "recovery"))
    cc.on_recovery(state(10.5, "open"))
    cc.cwnd, cc.count = 50.0, 50  # the next ACK steps and recomputes α
    cc.on_ack(ack(13.0))
    assert cc.cwnd == 51.0
    # Δ = 2.5 s (625 jiffies), not 3 s from the loss; RTT_min 100 ms: 25 jiffies
    assert cc.alpha_fp == linux_alpha(625, 25, 64) != linux_alpha(750, 25, 64)


def test_alpha_at_a_loss_takes_the_ending_epoch():
    # htcp_param_update computes α with the old last_cong and the new β; it stands
    # until the first step after the recovery
    cc = make(bandwidth_switch=False)
    cc.cwnd, cc.ssthresh = 100.0, 50.0
    cc.on_ack(ack(0.0))
    cc.on_loss(loss(5.0))
    assert cc.alpha_fp == linux_alpha(1250, 25, 64)


@pytest.mark.parametrize("acked, acks", [(1, 21), (2, 11)])
def test_the_window_grows_by_whole_segments(acked, acks):
    # α = 1: the counter takes the segments of each ACK; once counter·α/128 ≥ cwnd
    # the next ACK adds one segment and counts nothing
    cc = make(bandwidth_switch=False)
    cc.cwnd, cc.ssthresh = 20.0, 10.0
    for i in range(acks - 1):
        cc.on_ack(ack(0.01 * i, acked=acked))
        assert cc.cwnd == 20.0
    cc.on_ack(ack(0.5, acked=acked))
    assert cc.cwnd == 21.0 and cc.count == 0


def test_slow_start_stops_at_ssthresh():
    cc = make()
    cc.cwnd, cc.ssthresh = 9.0, 10.0
    cc.on_ack(ack(0.0, acked=2))
    assert cc.cwnd == 10.0 and cc.count == 0  # tcp_slow_start's leftover is dropped


def test_the_ack_that_ends_a_recovery_counts_one_segment():
    cc = make(bandwidth_switch=False)
    cc.cwnd, cc.ssthresh = 20.0, 10.0
    cc.on_ack(ack(0.0, acked=2))
    cc.on_loss(loss(1.0))
    cc.cwnd = cc.ssthresh
    cc.on_recovery(state(1.1, "open"))
    cc.on_ack(ack(1.1, acked=5))  # pkts_acked was recorded in Recovery: it stays 1
    assert cc.count == 1
    cc.on_ack(ack(1.2, acked=5))
    assert cc.count == 6


def test_a_lan_flow_backs_off_by_half_in_the_packet_engine():
    # On a 1 ms LAN RTT_min is one jiffy: every reduction is (cwnd·64) >> 7
    sc = ccsim.dumbbell("100Mbps", "1ms", buffer=100, duration="6s", seed=1,
                        flows=[Flow("htcp"), Flow("reno", start="1s")])
    engine = PacketEngine(sc)
    cc = engine.senders[0].cc
    seen, original = [], cc.on_loss

    def spy(event):
        w = cc.cwnd
        original(event)
        seen.append((w, cc.ssthresh))

    cc.on_loss = spy
    engine.run()
    assert len(seen) >= 3
    for w, ssthresh in seen:
        assert w == int(w) and ssthresh == max(int(w) * 64 >> 7, 2)


def test_rule_is_checked():
    with pytest.raises(ccsim.ScenarioError, match="rule"):
        algorithms.get("htcp")(rule="ns3")
