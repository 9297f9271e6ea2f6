"""The 2.6.3x-3.x kernels' one-ACK-late step (``extra_ack``), against the
counters of the source restated here.

Linux 2.6.3x-3.x ``tcp_cong_avoid_ai(tp, w)`` (net/ipv4/tcp_cong.c), once per ACK:
``if (snd_cwnd_cnt >= w) { snd_cwnd++; snd_cwnd_cnt = 0; } else snd_cwnd_cnt++;``,
so the window steps on the ACK after the counter reached ``w``: ``w + 1`` ACKs a
step. Mainline counts the ACK first and steps once the counter reaches ``w``. The
2011 ``tcp_scalable.c`` (and YeAH's fast mode) counted first and stepped once the
counter *exceeded* ``min(cwnd, AI_CNT)``: one ACK late alike.
"""

import math

import pytest

import ccsim
from ccsim import algorithms
from ccsim.algorithms import Ack


def ack():
    return Ack(now=1.0, acked=1, rtt=0.01, min_rtt=0.01, srtt=0.01, inflight=10.0,
               delivered=100.0, delivery_rate=None)


def counter_2011(w, acks, cap=math.inf):
    """tcp_cong_avoid_ai of 2.6.3x-3.x (cap: Scalable's min(cwnd, AI_CNT))."""
    cnt = 0
    for _ in range(acks):
        if cnt >= min(w, cap):
            w, cnt = w + 1, 0
        else:
            cnt += 1
    return w


def counter_mainline(w, acks, cap=math.inf):
    """Mainline: count the ACK, step once the counter reaches w."""
    cnt = 0
    for _ in range(acks):
        cnt += 1
        if cnt >= min(w, cap):
            w, cnt = w + 1, 0
    return w


def grown(name, w, acks, **params):
    cc = algorithms.get(name)(**params)
    cc.start(10, 1460)
    cc.cwnd, cc.ssthresh = float(w), 2.0
    for _ in range(acks):
        cc.on_ack(ack())
    return cc.cwnd


@pytest.mark.parametrize("name", ["reno", "westwood", "lp"])
def test_reno_growth_steps_as_the_counter_of_its_kernel(name):
    # From 20 segments, 2000 ACKs: the 2011 counter reaches 65 (21 + ... + 65 ACKs fit,
    # 66 more do not), mainline's 66. The float law tracks the counter's staircase from
    # above by less than one step, so its whole part is the counter's window.
    assert (counter_2011(20, 2000), counter_mainline(20, 2000)) == (65, 66)
    assert math.floor(grown(name, 20, 2000, extra_ack=True)) == 65
    assert math.floor(grown(name, 20, 2000)) == 66


def test_scalable_2011_counter_steps_one_ack_late():
    # 2011 Scalable: a segment per min(cwnd, 50) + 1 ACKs; from 100 segments 1010 ACKs
    # give 19 steps (51 ACKs each), mainline's counter 20 (50 each).
    assert (counter_2011(100, 1010, cap=50), counter_mainline(100, 1010, cap=50)) == (119, 120)
    assert math.floor(grown("scalable", 100, 1010, a=1 / 50, extra_ack=True)) == 119
    assert math.floor(grown("scalable", 100, 1010, a=1 / 50)) == 120


def test_the_fluid_engine_refuses_it():
    sc = ccsim.dumbbell("10Mbps", "20ms", duration="1s",
                        flows=[ccsim.Flow("reno", params={"extra_ack": True})])
    with pytest.raises(ccsim.errors.ScenarioError, match="extra_ack"):
        ccsim.run(sc, mode="fluid")


@pytest.mark.parametrize("reno_mode", [True, False])
def test_yeah_counts_one_late_in_both_modes(reno_mode):
    # 2011 tcp_yeah.c: the Reno mode through tcp_cong_avoid_ai (w + 1 ACKs a step), the
    # fast mode adding pkts_acked and stepping once the count exceeds min(cwnd, 100)
    # (here one segment per ACK, so min(cwnd, 100) + 1 ACKs a step). Reno mode from 20
    # segments over 2000 ACKs: 65 (above); fast mode from 150 over 1005 ACKs: 9 steps
    # of 101 ACKs, where mainline's counter makes 10 of 100.
    def run(**params):
        cc = algorithms.get("yeah")(**params)
        cc.start(10, 1460)
        w, n = (20, 2000) if reno_mode else (150, 1005)
        cc.cwnd, cc.ssthresh, cc.doing_reno_now = float(w), 2.0, int(reno_mode)
        for _ in range(n):
            cc.on_ack(ack())
        return math.floor(cc.cwnd)

    if reno_mode:
        assert (run(extra_ack=True), run()) == (65, 66)
    else:
        assert (counter_2011(150, 1005, cap=100), counter_mainline(150, 1005, cap=100)) == (
            159, 160)
        assert (run(extra_ack=True), run()) == (159, 160)
