"""Rule tests for H-TCP (Leith & Shorten, PFLDnet 2004; Linux net/ipv4/tcp_htcp.c).

Expected values come from ``htcp_alpha_raw`` and ``htcp_beta`` below, restatements of the
paper's rules written here independently of ccsim.algorithms.htcp, or from hand arithmetic.
"""

import pytest

from ccsim import algorithms
from ccsim.algorithms import Ack, Loss

MSS = 1460


def htcp_alpha_raw(delta, delta_l=1.0):
    """α(Δ) = 1 for Δ ≤ Δ_L, else 1 + 10(Δ − Δ_L) + ((Δ − Δ_L)/2)²."""
    if delta <= delta_l:
        return 1.0
    return 1 + 10 * (delta - delta_l) + ((delta - delta_l) / 2) ** 2


def htcp_alpha(delta, rtt_min, beta):
    """2(1 − β)·max(α_raw·clamp(RTT_min/100 ms, 0.1, 2), 1): Linux's RTT scaling never takes
    the increase below one segment per RTT (``if (!factor) factor = 1``)."""
    scale = min(max(rtt_min / 0.1, 0.1), 2.0)
    return 2 * (1 - beta) * max(scale * htcp_alpha_raw(delta), 1.0)


def htcp_beta(rtt_min, rtt_max):
    """β = RTT_min/RTT_max bounded to [0.5, 0.8]."""
    return min(max(rtt_min / rtt_max, 0.5), 0.8)


def make(**params):
    cc = algorithms.get("htcp")(**params)
    cc.start(10, MSS)
    return cc


def ack(now, rtt=0.1, min_rtt=0.1, acked=1.0):
    return Ack(now=now, acked=acked, rtt=rtt, min_rtt=min_rtt, srtt=rtt, inflight=1.0,
               delivered=0.0, delivery_rate=None)


def loss(now, min_rtt=0.1):
    return Loss(now=now, kind="fast", inflight=1.0, min_rtt=min_rtt, srtt=0.1)


def test_defaults():
    assert algorithms.get("htcp")().params() == {
        "delta_l": 1.0, "beta_min": 0.5, "beta_max": 0.8, "rtt_scaling": True,
        "rtt_ref": 0.1, "bandwidth_switch": True, "jiffy": 0.004, "rule": "linux"}


# Hand arithmetic: Δ = 2 → 1 + 10 + 0.25; Δ = 5 → 1 + 40 + 4.
@pytest.mark.parametrize("delta, expected", [(0.5, 1.0), (1.0, 1.0), (2.0, 11.25), (5.0, 45.0)])
def test_alpha_raw(delta, expected):
    cc = make()
    assert cc.alpha_raw(delta) == pytest.approx(expected, rel=1e-12)
    assert cc.alpha_raw(delta) == pytest.approx(htcp_alpha_raw(delta), rel=1e-12)


@pytest.mark.parametrize("min_rtt", [0.1, 0.05, 0.005, 0.001, 0.4])
def test_alpha_scaled(min_rtt):
    # 0.1: RTT_ref itself; 0.05: half; 0.005 and 0.001: clamped up to 0.1 (Linux's lower
    # bound); 0.4: clamped down to 2 (Linux's upper bound).
    cc = make()
    cc.min_rtt, cc.beta = min_rtt, 0.7
    for delta in (0.5, 2.0, 5.0):
        assert cc.alpha(delta) == pytest.approx(htcp_alpha(delta, min_rtt, 0.7), rel=1e-12)


@pytest.mark.parametrize("min_rtt, delta, expected", [
    (0.001, 0.5, 1.0),    # LAN, low-speed mode: 0.1 × 1 floored to 1 → Reno's increase
    (0.05, 0.5, 1.0),     # 0.5 × 1 floored to 1
    (0.05, 2.0, 5.625),   # 0.5 × 11.25
    (0.005, 5.0, 4.5),    # 0.1 × 45
])
def test_scaled_alpha_is_at_least_one_segment_per_rtt(min_rtt, delta, expected):
    cc = make()
    cc.min_rtt, cc.beta = min_rtt, 0.5  # 2(1 − β) = 1
    assert cc.alpha(delta) == pytest.approx(expected, rel=1e-12)


def test_alpha_without_rtt_scaling():
    cc = make(rtt_scaling=False)
    cc.min_rtt, cc.beta = 0.01, 0.5
    assert cc.alpha(5.0) == pytest.approx(htcp_alpha_raw(5.0))  # 2(1 − 0.5) = 1


@pytest.mark.parametrize("rtt_min, rtt_max", [
    (0.1, 0.15),   # 0.667: inside the bounds
    (0.1, 0.11),   # 0.909 → clamped to 0.8
    (0.1, 0.4),    # 0.25 → clamped to 0.5
    (0.1, 0.1),    # no queueing: 1 → 0.8
])
def test_beta(rtt_min, rtt_max):
    cc = make()
    assert cc.beta_for(rtt_min, rtt_max) == pytest.approx(htcp_beta(rtt_min, rtt_max))


def test_loss_uses_measured_rtts():
    # the paper's rule: β from the RTTs at the first loss (Linux waits one loss)
    cc = make(rule="paper", bandwidth_switch=False)
    cc.cwnd, cc.ssthresh = 100.0, 1.0
    rtt = 0.1
    for i in range(60):  # RTT samples climbing 100 → 160 ms by 1 ms steps
        cc.on_ack(ack(now=0.01 * i, rtt=rtt, min_rtt=0.1))
        rtt += 0.001
    assert cc.max_rtt == pytest.approx(0.159)
    cwnd = cc.cwnd
    expected_beta = 0.1 / 0.159
    assert cc.ssthresh_after(loss(1.0)) == pytest.approx(expected_beta * cwnd)
    cc.on_loss(loss(1.0))
    assert cc.beta == pytest.approx(expected_beta)
    assert cc.ssthresh == pytest.approx(expected_beta * cwnd)
    assert cc.last_loss == 1.0
    # RTT_max fades towards RTT_min by 5 % per loss (Linux htcp_param_update)
    assert cc.max_rtt == pytest.approx(0.1 + 0.95 * 0.059)


def test_max_rtt_ignores_jumps_over_20ms():
    cc = make(rule="paper")
    cc.cwnd, cc.ssthresh = 100.0, 1.0
    cc.on_ack(ack(now=0.0, rtt=0.1))
    cc.on_ack(ack(now=0.1, rtt=0.5))  # a 400 ms jump: an outlier, not queueing
    assert cc.max_rtt == pytest.approx(0.1)


def test_per_ack_increase_follows_alpha_of_delta():
    cc = make(rule="paper", bandwidth_switch=False)
    cc.cwnd, cc.ssthresh = 100.0, 50.0
    cc.on_loss(loss(now=10.0))  # Δ restarts here; no RTT_max measured yet: β = β_min
    assert cc.beta == 0.5
    cc.cwnd = 100.0
    before = cc.cwnd
    cc.on_ack(ack(now=13.0))  # Δ = 3 s: α_raw = 1 + 20 + 1 = 22; RTT 100 ms: scale 1
    assert cc.cwnd - before == pytest.approx(2 * (1 - cc.beta) * 22 / 100, rel=1e-12)
