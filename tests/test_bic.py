"""Rule tests for BIC (Xu, Harfoush, Rhee, INFOCOM 2004; Linux net/ipv4/tcp_bic.c).

Expected values come from ``bic_increment`` below, a restatement of the per-RTT increase
written here independently of ccsim.algorithms.bic, or from arithmetic done by hand.
"""

import math

import pytest

from ccsim import algorithms
from ccsim.algorithms import Ack, Loss

MSS = 1460
S_MAX, LOW_WINDOW, BETA = 16, 14, 819 / 1024


def bic_increment(cwnd, w_max, b=4, s_max=S_MAX, s_min=0.2):
    """Segments per RTT: move 1/b of the way to W_max, at most s_max, at least s_min;
    above W_max probe by the mirror image; Reno at or below the low window."""
    if cwnd <= LOW_WINDOW:
        return 1.0
    if cwnd < w_max:
        step = (w_max - cwnd) / b
        return s_max if step > s_max else (s_min if step <= 1 else step)
    over = cwnd - w_max
    if over < b:
        return s_min
    return min(over / (b - 1), s_max)


def make(cwnd, w_max, **params):
    cc = algorithms.get("bic")(**params)
    cc.start(10, MSS)
    cc.cwnd, cc.ssthresh, cc.w_max = float(cwnd), 1.0, float(w_max)
    return cc


def ack(acked=1.0):
    return Ack(now=1.0, acked=acked, rtt=0.1, min_rtt=0.1, srtt=0.1, inflight=1.0,
               delivered=0.0, delivery_rate=None)


def loss(kind="fast"):
    return Loss(now=1.0, kind=kind, inflight=1.0, min_rtt=0.1, srtt=0.1)


def test_defaults_match_linux_tcp_bic():
    assert algorithms.get("bic")().params() == {
        "beta": 819 / 1024, "s_max": 16.0, "low_window": 14.0, "b": 4.0,
        "smooth_part": 20.0, "fast_convergence": True}


# Hand arithmetic with W_max = 1000, b = 4:
@pytest.mark.parametrize("cwnd, expected", [
    (900.0, 16.0),    # (1000 − 900)/4 = 25 > S_max: additive increase capped at 16
    (960.0, 10.0),    # (1000 − 960)/4 = 10: binary search step
    (990.0, 2.5),     # 10/4
    (998.0, 0.2),     # 0.5 ≤ 1: smallest step b/smooth_part = 4/20
    (1002.0, 0.2),    # within b of W_max: probe gently
    (1030.0, 10.0),   # 30/(4 − 1): max probing
    (1100.0, 16.0),   # far above W_max: S_max
    (14.0, 1.0),      # at the low window: Reno
])
def test_increment_per_rtt(cwnd, expected):
    cc = make(cwnd, 1000.0)
    assert cc.increment(cwnd) == pytest.approx(expected, rel=1e-12)
    assert cc.increment(cwnd) == pytest.approx(bic_increment(cwnd, 1000.0), rel=1e-12)


@pytest.mark.parametrize("cwnd", [900.0, 980.0, 995.0])
def test_paper_midpoint_with_b_2(cwnd):
    # The paper's binary search: go to (W_max + W_min)/2, i.e. (W_max − cwnd)/2, ≤ S_max.
    cc = make(cwnd, 1000.0, b=2.0)
    assert cc.increment(cwnd) == pytest.approx(min((1000 - cwnd) / 2, S_MAX), rel=1e-12)


def test_per_ack_growth_adds_increment_over_one_window():
    cc = make(960.0, 1000.0)
    cc.on_ack(ack(acked=1.0))
    assert cc.cwnd == pytest.approx(960 + 10 / 960, rel=1e-12)  # inc·acked/cwnd


def test_binary_search_converges_to_w_max():
    cc = make(800.0, 1000.0)
    rounds = []
    for _ in range(40):  # one RTT = int(cwnd) ACKs of one segment
        for _ in range(int(cc.cwnd)):
            cc.on_ack(ack())
        rounds.append(cc.cwnd)
    steps = [b - a for a, b in zip([800.0] + rounds, rounds)]
    assert steps[0] == pytest.approx(16, rel=0.01)  # capped: 1 % for per-ACK compounding
    assert max(steps) <= 16 * 1.01
    assert 995 < rounds[-1] < 1010  # plateau around W_max after ~30 RTTs of search


def test_before_first_loss_grows_at_least_cwnd_over_20():
    cc = make(400.0, 0.0)
    assert cc.increment(400.0) == pytest.approx(20.0)  # 400/20 beats S_max = 16


def test_loss_and_fast_convergence():
    cc = make(1000.0, 0.0)
    assert cc.ssthresh_after(loss()) == pytest.approx(1000 * BETA)
    assert cc.w_max == 0.0  # ssthresh_after is pure
    cc.on_loss(loss())
    assert (cc.w_max, cc.ssthresh) == (1000.0, pytest.approx(1000 * BETA))
    cc.cwnd = 900.0
    cc.on_loss(loss())
    assert cc.w_max == pytest.approx(900 * (1 + BETA) / 2)
    cc.cwnd = 10.0  # at or below the low window: halve like Reno
    assert cc.ssthresh_after(loss()) == 5.0
    cc.cwnd = 3.0
    assert cc.ssthresh_after(loss()) == 2.0


def test_timeout_sets_loss_window():
    cc = make(100.0, 0.0)
    cc.on_loss(loss("timeout"))
    assert cc.cwnd == 1.0 and cc.ssthresh == pytest.approx(100 * BETA)
    assert not math.isinf(cc.ssthresh)
