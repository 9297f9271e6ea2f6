"""Tests for TCP Vegas (ccsim.algorithms.vegas) against Linux tcp_vegas.c and Brakmo & Peterson,
IEEE JSAC 1995.

Rule tests restate the law here — Linux's by default (diff = ⌊W·(RTT − BaseRTT)/BaseRTT⌋ with
W the whole-segment window and RTTs in µs plus one; +1 below alpha, −1 above beta, hold in
between; slow start on every ACK, ending at diff > gamma with cwnd = min(cwnd, target + 1)),
the paper's with slow_start="paper", diff_rule="paper" (diff = cwnd·(1 − BaseRTT/RTT), slow
start growing every other round) — and check hand-computed steps. Engine tests check the
equilibrium the law is built for (each flow keeps alpha..beta segments queued) and the
Vegas/Reno competition of seeds 003/004 (Mo, La, Anantharam & Walrand, INFOCOM 1999).
RTTs in the rule tests are binary fractions (1/16 s, 1/8 s) so that diff is exact.
"""

import functools
import math

import numpy as np
import pytest

import ccsim
from ccsim import algorithms
from ccsim.algorithms import Ack, Loss, RttSample
from ccsim.testing import AckRound, snapshot

Vegas = algorithms.get("vegas")
MSS = 1460
BASE = 0.0625  # s, 1/16: the path's propagation RTT in the rule tests


def linux_diff(cwnd, base_rtt, rtt):
    """Linux tcp_vegas_cong_avoid's diff, restated: u32 arithmetic on the whole-segment window
    and on RTTs in µs, each plus 1 µs (tcp_vegas_pkts_acked)."""
    base_us, rtt_us = round(base_rtt * 1e6) + 1, round(rtt * 1e6) + 1
    return int(cwnd) * (rtt_us - base_us) // base_us


def vegas_step(cwnd, base_rtt, rtt, alpha=2.0, beta=4.0, rule="linux"):
    """The congestion-avoidance rule, restated: the window after one round."""
    if rule == "linux":
        diff = linux_diff(cwnd, base_rtt, rtt)
    elif rule == "ns3":  # TcpVegas::IncreaseWindow: uint32 segCwnd - (uint32)(segCwnd·base/rtt)
        diff = int(cwnd) - int(int(cwnd) * (base_rtt / rtt))
    else:
        diff = (cwnd / base_rtt - cwnd / rtt) * base_rtt  # (Expected − Actual)·BaseRTT
    if diff > beta:
        return max(cwnd - 1, 2)
    if diff < alpha:
        return cwnd + 1
    return cwnd


class Sender:
    """A window-limited sender as the packet engine drives a law: each ACK of one segment
    reports what is still outstanding (Ack.inflight), then new data fills the window."""

    def __init__(self, cc, iw):
        self.cc = cc
        cc.start(iw, MSS)
        self.now = self.delivered = 0.0
        self.outstanding = math.floor(iw)

    def ack(self, rtt, acked=1):
        self.now += 0.001
        self.delivered += acked
        self.outstanding -= acked
        cc = self.cc
        cc.on_rtt(RttSample(self.now, rtt, min(rtt, BASE), rtt, self.outstanding))
        ack = Ack(self.now, acked, rtt, min(rtt, BASE), rtt, self.outstanding, self.delivered,
                  None)
        cc.on_ack(ack)
        self.outstanding = max(self.outstanding, math.floor(cc.cwnd))
        return ack

    def round(self, rtt, limit=1000):
        """ACKs with RTT ``rtt`` until Vegas makes its next once-per-round decision."""
        before, acks = self.cc.decisions, []
        for _ in range(limit):
            acks.append(self.ack(rtt))
            if self.cc.decisions != before:
                return AckRound(tuple(acks), rtt)
        raise AssertionError("no round ended")


def in_avoidance(cwnd, cls=Vegas, **params):
    """Vegas in congestion avoidance at ``cwnd``, BaseRTT = BASE, a round just begun."""
    s = Sender(cls(**params), cwnd)
    s.cc.ssthresh = 2.0
    s.ack(BASE)  # the first ACK sets BaseRTT and begins a round
    return s


PAPER = {"slow_start": "paper", "diff_rule": "paper"}  # Brakmo & Peterson's rules throughout


def test_defaults():
    cc = Vegas()
    assert cc.params() == {"alpha": 2.0, "beta": 4.0, "gamma": 1.0,  # Linux tcp_vegas.c
                           "slow_start": "linux", "diff_rule": "linux", "loss_rule": "reno"}
    assert (cc.name, cc.recovery) == ("vegas", "vegas")  # Brakmo & Peterson §3.1 recovery (Brakmo & Peterson, the ns-2 studies)


# -- congestion avoidance: once per round -----------------------------------------------------
# BASE = 62,500 µs, so Linux's BaseRTT is 62,501 µs; at RTT = 2·BASE (125,001 µs) its diff is
# ⌊W·62,500/62,501⌋ = W − 1, and at RTT = 1.25·BASE (78,126 µs) ⌊W·15,625/62,501⌋.
@pytest.mark.parametrize("cwnd,rtt,expected", [
    (20, BASE, 21),       # no queue: diff = 0 < alpha → +1
    (3, 2 * BASE, 3),     # diff = 2 = alpha: hold (the paper's 1.5 would grow)
    (5, 2 * BASE, 5),     # diff = 4 = beta: hold
    (6, 2 * BASE, 5),     # diff = 5 > beta → −1 (the paper's 3 would hold)
    (10, 2 * BASE, 9),    # diff = 9 → −1
    (20, 0.078125, 20),   # diff = ⌊4.9999⌋ = 4: hold
    (21, 0.078125, 20),   # diff = 5 → −1
    (40, 0.078125, 39),   # diff = 9 → −1
])
def test_one_round_of_congestion_avoidance(cwnd, rtt, expected):
    s = in_avoidance(cwnd)
    s.round(rtt)
    assert s.cc.cwnd == expected
    assert s.cc.cwnd == vegas_step(cwnd, BASE, rtt)
    assert s.cc.diff == linux_diff(cwnd, BASE, rtt)


@pytest.mark.parametrize("cwnd,rtt,expected", [
    (20, BASE, 21),       # no queue: diff = 0 < alpha → +1
    (3, 2 * BASE, 4),     # RTT doubled: diff = 3·(1 − 1/2) = 1.5 < 2 → +1
    (4, 2 * BASE, 4),     # diff = 2 = alpha: hold (the band is closed)
    (6, 2 * BASE, 6),     # diff = 3: hold
    (8, 2 * BASE, 8),     # diff = 4 = beta: hold
    (10, 2 * BASE, 9),    # diff = 5 > beta → −1
    (40, 0.078125, 39),   # diff = 40·(1 − 0.8) = 8 → −1
])
def test_one_round_of_congestion_avoidance_paper(cwnd, rtt, expected):
    s = in_avoidance(cwnd, **PAPER)
    s.round(rtt)
    assert s.cc.cwnd == expected
    assert s.cc.cwnd == vegas_step(cwnd, BASE, rtt, rule="paper")
    assert s.cc.diff == pytest.approx(cwnd * (1 - BASE / rtt), rel=1e-12)


def test_window_holds_between_decisions():
    # Congestion avoidance moves only at the round's end: the round's other ACKs change nothing.
    s = in_avoidance(20)
    for _ in range(19):
        s.ack(BASE)
        assert s.cc.cwnd == 20
    s.ack(BASE)  # the 20th ACK after the one that began the round ends it
    assert s.cc.cwnd == 21


def test_rtt_is_the_minimum_of_the_round():
    # Linux: the round's smallest sample, which filters out delayed-ACK spikes. A round of
    # 20 ACKs with one at 2·BASE and the rest at 1.25·BASE: diff = 4 → hold; the mean (or the
    # last sample) would give diff > 4 and a decrease.
    s = in_avoidance(20)
    s.ack(2 * BASE)
    s.round(1.25 * BASE)
    assert s.cc.rtt_used == 1.25 * BASE
    assert s.cc.cwnd == 20


def test_base_rtt_is_the_smallest_sample_ever_including_recovery():
    s = in_avoidance(20)
    s.cc.on_rtt(RttSample(1.0, BASE / 2, BASE / 2, BASE, 10))  # e.g. a sample in recovery
    assert s.cc.base_rtt == BASE / 2
    s.round(BASE)  # this round's minimum is that sample too: diff = 0 → 21
    assert s.cc.cwnd == 21
    s.round(BASE)  # diff = ⌊21·31,250/31,251⌋ = 20 > beta → 20
    assert s.cc.cwnd == 20


def test_decrease_keeps_congestion_avoidance():
    # Linux: on a decrease ssthresh = min(ssthresh, cwnd) (tcp_vegas_ssthresh), then the
    # round's tcp_current_ssthresh = max(ssthresh, 9//2 + 9//4 = 6): 9, so Vegas stays in
    # congestion avoidance (cwnd ≥ ssthresh). ccsim had min(ssthresh, cwnd − 1) = 8, an old
    # kernel's rule. The paper variant keeps min(ssthresh, cwnd) too.
    s = in_avoidance(10)
    s.cc.ssthresh = 10.0
    s.round(2 * BASE)
    assert (s.cc.cwnd, s.cc.ssthresh) == (9, 9)
    p = in_avoidance(10, **PAPER)
    p.cc.ssthresh = 10.0
    p.round(2 * BASE)
    assert (p.cc.cwnd, p.cc.ssthresh) == (9, 9)


def test_each_round_ends_with_linux_current_ssthresh():
    # Linux tcp_vegas_cong_avoid ends every Vegas round with ssthresh = tcp_current_ssthresh(),
    # max(ssthresh, (cwnd >> 1) + (cwnd >> 2)). At cwnd 15 and ssthresh 10, with a round whose
    # paper diff is 0.85 (RTT = BASE·15/14.15): Linux's diff is ⌊15·(RTT − BaseRTT)/BaseRTT⌋
    # = ⌊0.90⌋ = 0 < alpha, so cwnd becomes 16, and ssthresh 8 + 4 = 12 (ccsim used to
    # leave it at 10).
    rtt = BASE * 15 / 14.15
    assert 15 * (1 - BASE / rtt) == pytest.approx(0.85) and linux_diff(15, BASE, rtt) == 0
    s = in_avoidance(15)
    s.cc.ssthresh = 10.0
    s.round(rtt)
    assert (s.cc.cwnd, s.cc.ssthresh) == (16, 12)
    # ... with a queue that holds the window (diff = ⌊15·15,625/62,501⌋ = 3): cwnd stays, and
    # ssthresh is max(10, 7 + 3) = 10.
    s = in_avoidance(15)
    s.cc.ssthresh = 10.0
    s.round(0.078125)
    assert (s.cc.cwnd, s.cc.ssthresh) == (15, 10)


def test_linux_slow_start_grows_on_every_ack():
    # Linux grows with tcp_slow_start on every ACK in slow start (the paper: every other
    # round). No queue: from 4, one segment per ACK, round ends included.
    s = Sender(Vegas(), 4)
    seen = {}
    for k in range(1, 53):
        s.ack(BASE)
        seen[k] = s.cc.cwnd
    assert [seen[k] for k in (4, 5, 12, 13, 20, 21, 52)] == [8, 9, 16, 17, 24, 25, 56]
    assert s.cc.ssthresh == math.inf
    assert s.cc.decisions >= 3  # rounds ended (and found diff = 0 ≤ gamma) along the way


def test_linux_slow_start_ends_at_the_rate_matching_window_plus_one():
    # A round whose minimum RTT is twice BaseRTT: diff > gamma ends slow start with
    # cwnd = min(cwnd, ⌊W·BaseRTT/RTT⌋ + 1) in µs (+1 each) and ssthresh = min(ssthresh, cwnd)
    # (tcp_vegas_ssthresh), then max(ssthresh, ⌊cwnd/2⌋ + ⌊cwnd/4⌋) — restated from
    # tcp_vegas.c.
    s = Sender(Vegas(), 16)
    s.ack(BASE)  # begins the round
    before = s.cc.decisions
    while s.cc.decisions == before:
        window = s.cc.cwnd  # the window the decision will judge
        s.ack(2 * BASE)
    target = int(window) * 62501 // 125001
    assert window > 16  # the round grew on every ACK before its end
    assert (s.cc.cwnd, s.cc.ssthresh) == (target + 1, target + 1)
    assert s.cc.cwnd >= s.cc.ssthresh  # congestion avoidance from here


def test_a_timeout_forgets_base_rtt():
    # Linux: after a timeout every segment is marked lost, so the retransmission leaves with
    # nothing in flight; tcp_event_data_sent raises CA_EVENT_TX_START and tcp_vegas_cwnd_event
    # calls tcp_vegas_init, which sets baseRTT to 0x7fffffff. The next samples set it afresh.
    s = in_avoidance(20)
    s.ack(BASE)
    s.cc.on_loss(Loss(s.now, "fast", 20.0, BASE, BASE))
    assert s.cc.base_rtt == BASE  # a fast retransmit keeps it (Linux: no TX_START)
    s.cc.on_loss(Loss(s.now, "timeout", 20.0, BASE, BASE))
    assert s.cc.base_rtt == math.inf
    s.ack(2 * BASE)
    assert s.cc.base_rtt == 2 * BASE


def test_too_few_samples_in_a_round_fall_back_to_reno():
    # Linux: a round of two RTT samples or fewer makes no Vegas decision; Reno's +acked/cwnd
    # for its last ACK instead. cwnd 2: two ACKs per round; the second ends it: 2 + 1/2.
    s = in_avoidance(2)
    s.ack(BASE)
    s.ack(BASE)
    assert s.cc.decisions == 0
    assert s.cc.cwnd == 2.5


# -- slow start ---------------------------------------------------------------------------------
def test_paper_slow_start_grows_every_other_round():
    # No queue (every RTT = BaseRTT). Hand trace from an initial window of 4: the first round
    # (ACKs 1–4 grow, ACK 5 ends it) doubles cwnd to 8; the next round (ACKs 5–12) holds it
    # to compare; ACK 13 ends the hold round (diff = 0 ≤ gamma) and starts a growing round
    # (ACKs 13–20: 9 … 16); ACK 21 ends it, and ACKs 21–36 hold 16; ACKs 37–52 grow it to 32.
    s = Sender(Vegas(**PAPER), 4)
    seen = {}
    for k in range(1, 53):
        s.ack(BASE)
        seen[k] = s.cc.cwnd
    assert [seen[k] for k in (4, 5, 12, 13, 20, 21, 36, 37, 52)] == \
        [8, 8, 8, 9, 16, 16, 16, 17, 32]
    assert s.cc.ssthresh == math.inf


def test_paper_slow_start_ends_when_diff_exceeds_gamma():
    # A holding round at cwnd 16 sees RTT = 2·BaseRTT: diff = 8 > gamma = 1. The window that
    # matches the actual rate is 16·BaseRTT/RTT = 8; Vegas keeps one more: cwnd = ssthresh = 9.
    s = Sender(Vegas(**PAPER), 16)
    s.cc.growing = False
    s.ack(BASE)
    s.round(2 * BASE)
    assert (s.cc.cwnd, s.cc.ssthresh) == (9, 9)


def test_paper_slow_start_continues_when_diff_is_at_most_gamma():
    # diff = 16·(1 − 0.8) = 3.2 > 1 ends it, but with gamma = 4 it goes on: the next round grows.
    s = Sender(Vegas(gamma=4.0, **PAPER), 16)
    s.cc.growing = False
    s.ack(BASE)
    s.round(0.078125)
    assert (s.cc.cwnd, s.cc.ssthresh) == (17, math.inf)  # the round's last ACK already grows


# -- loss -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("cwnd,rtt,expected", [
    (20, BASE, 21),        # no queue: diff = 0 < alpha → +1
    (3, 1.25 * BASE, 4),   # target ⌊2.4⌋ = 2, diff = 1 < alpha → +1
    (3, 2 * BASE, 3),      # target ⌊1.5⌋ = 1, diff = 2 = alpha: hold (the paper's 1.5 grows)
    (6, 2 * BASE, 6),      # diff = 3: hold (Linux's 5 would shrink)
    (9, 2 * BASE, 8),      # target ⌊4.5⌋ = 4, diff = 5 > beta → −1
    (13, 1.25 * BASE, 13),  # target ⌊10.4⌋ = 10, diff = 3: hold
    (21, 1.25 * BASE, 20),  # target ⌊16.8⌋ = 16, diff = 5 → −1
])
def test_one_round_of_congestion_avoidance_ns3(cwnd, rtt, expected):
    # ns-3's TcpVegas: targetCwnd = segCwnd·baseRtt/minRtt truncated, diff = segCwnd − targetCwnd
    s = in_avoidance(cwnd, diff_rule="ns3")
    s.round(rtt)
    assert s.cc.cwnd == expected == vegas_step(cwnd, BASE, rtt, rule="ns3")
    assert s.cc.diff == int(cwnd) - int(int(cwnd) * (BASE / rtt))


@pytest.mark.parametrize("ssthresh,expected", [(100.0, 19.0), (15.0, 15.0), (1.5, 2.0)])
def test_ns3_loss_rule_keeps_ssthresh_below_cwnd(ssthresh, expected):
    # TcpVegas::GetSsThresh: max(min(ssThresh, cWnd − segmentSize), 2·segmentSize),
    # whatever the flight (Reno's would be 20 / 2 = 10)
    s = in_avoidance(20, loss_rule="ns3")
    s.cc.ssthresh = ssthresh
    loss = Loss(s.now, "fast", 20.0, BASE, BASE)
    before = snapshot(s.cc)
    assert s.cc.ssthresh_after(loss) == expected
    s.cc.on_loss(loss)
    assert s.cc.ssthresh == expected
    assert PROPERTIES["loss_rule"](before, loss, snapshot(s.cc)) is None
    # the declared property catches a law that halves under ns-3's rule
    halved = dict(snapshot(s.cc), ssthresh=10.0)
    assert PROPERTIES["loss_rule"](before, loss, halved) is not None


def test_bad_vegas_rules_are_refused_by_name():
    with pytest.raises(ccsim.ScenarioError, match="loss_rule"):
        Vegas(loss_rule="linux")
    with pytest.raises(ccsim.ScenarioError, match="diff_rule"):
        Vegas(diff_rule="ns-3")


def test_loss_is_renos_and_starts_a_fresh_round():
    s = in_avoidance(20)
    for _ in range(10):
        s.ack(BASE)
    loss = Loss(s.now, "fast", 20.0, BASE, BASE)
    assert s.cc.ssthresh_after(loss) == 10  # RFC 5681 eq. 4: FlightSize / 2
    s.cc.on_loss(loss)
    s.cc.cwnd = s.cc.ssthresh  # Reno recovery ends
    assert s.cc.round_end is None
    d = s.cc.decisions
    s.ack(BASE)  # would have ended the old round; begins a new one instead
    assert (s.cc.decisions, s.cc.cwnd) == (d, 10)
    s.cc.on_loss(Loss(s.now, "timeout", 10.0, BASE, BASE))
    assert (s.cc.cwnd, s.cc.ssthresh) == (1, 5)


# -- the properties the kit checks: they catch a law that breaks them ---------------------------
class VegasGrowsInsideTheBand(Vegas):
    """Treats alpha ≤ diff ≤ beta as 'too little queued'."""

    def decide(self):
        before = self.cwnd
        super().decide()
        if self.cwnd == before and self.cwnd >= self.ssthresh and self.diff <= self.beta:
            self.cwnd += 1.0


class VegasHalvesAboveBeta(Vegas):
    """Halves the window when diff > beta, instead of taking one segment off."""

    def decide(self):
        before = self.cwnd
        super().decide()
        if self.cwnd == before - 1.0 and self.cwnd >= self.ssthresh:
            self.cwnd = self.ssthresh = max(before / 2.0, 2.0)


PROPERTIES = {p.__name__.strip("_"): p for p in Vegas.properties}


def broken(cls, cwnd, rtt, **params):
    """The properties a round of congestion avoidance at ``cwnd`` and ``rtt`` breaks."""
    s = in_avoidance(cwnd, cls, **params)
    before = snapshot(s.cc)
    event = s.round(rtt)
    after = snapshot(s.cc)
    return {name for name, p in PROPERTIES.items() if p(before, event, after) is not None}


@pytest.mark.parametrize("cwnd,rtt", [(3, 2 * BASE), (6, 2 * BASE), (10, 2 * BASE), (20, BASE),
                                      (20, 0.078125), (21, 0.078125)])
@pytest.mark.parametrize("params", [{}, PAPER, {"diff_rule": "ns3", "loss_rule": "ns3"}])
def test_vegas_keeps_its_properties(cwnd, rtt, params):
    assert broken(Vegas, cwnd, rtt, **params) == set()


@pytest.mark.parametrize("cls,cwnd,rule", [
    (VegasGrowsInsideTheBand, 4, "holds_inside_alpha_beta"),  # Linux diff = 3
    (VegasHalvesAboveBeta, 10, "one_segment_per_round"),      # Linux diff = 9
])
def test_properties_catch_a_vegas_that_breaks_its_rule(cls, cwnd, rule):
    # The kit (tests/test_testing_kit.py) checks these after every step of its event streams;
    # here they are shown to fire on the step a mutant gets wrong.
    assert rule in broken(cls, cwnd, 2 * BASE)


# -- the packet engine: equilibrium ------------------------------------------------------------------
# Vegas' classroom result, on 10 Mbit/s, 50 ms and a 300-packet drop-tail buffer (nothing forces a
# loss). In Linux's terms each flow holds diff = W·(RTT − BaseRTT)/BaseRTT, truncated, in
# [alpha, beta], i.e. its segments queued times RTT/BaseRTT in [alpha, beta + 1). A flow whose
# BaseRTT is too large by e packets' delay (Low, Peterson & Wang, JACM 2002) holds the same band
# measured from e: x·(D − e) instead of x·D, with x its rate and D the queue.
ALPHA, BETA = 2, 4


@functools.cache
def settled(n, apart=0.0, initial_window=10, min_rto=0.2, alpha=ALPHA, beta=BETA, access="10x"):
    """Run n Vegas flows started ``apart`` seconds apart; the last 20 s: the mean queue
    (packets), each flow's rate (packets/s), the queue each flow found at its start (the mean
    of the second before it), the link (packets/s), BaseRTT (s), and the run's result."""
    starts = [apart * i for i in range(n)]
    duration = max(60.0, starts[-1] + 40.0)
    # the starts exactly as given (start_jitter=0): the tests are about when they start
    sc = ccsim.dumbbell("10Mbps", "50ms", buffer=300, duration=duration, min_rto=min_rto,
                        initial_window=initial_window, start_jitter=0, access=access,
                        flows=[ccsim.Flow("vegas", start=s,
                                          params={"alpha": float(alpha), "beta": float(beta)})
                               for s in starts])
    res = ccsim.run(sc)
    pps = sc.links[0].rate / (8 * sc.packet_size)
    queue = res.series("queue")["queue"]
    goodput = res.series("goodput")
    rates = goodput[goodput.index > duration - 20].mean().to_numpy() / (8 * sc.mss)
    found = np.array([0.0] + [queue[(queue.index < s) & (queue.index >= s - 1)].mean()
                              for s in starts[1:]])
    base = sc.path_rtt + 1 / pps  # propagation, and the one packet's serialisation
    return queue[queue.index > duration - 20].mean(), rates, found, pps, base, res


def lpw_diff(queue, rates, errors, pps, base):
    """Each flow's Linux diff in equilibrium, from the run's rates and queue and the BaseRTT
    error (packets) theory gives it: W·(RTT − BaseRTT_i)/BaseRTT_i with W = x·RTT."""
    rtt = base + queue / pps
    base_i = base + np.asarray(errors) / pps
    return rates * rtt * (rtt - base_i) / base_i


# 5 ms apart with 2-segment initial windows: each flow's first segment crosses an empty queue, so
# every BaseRTT is exact. min_rto 0.3 s: ten slow starts raise the RTT from 51 to 190 ms within
# two rounds, and the RFC 6298 timer with its 200 ms floor (ccsim's) fires spuriously where
# Linux's, srtt + at least 200 ms, would not; Linux's Vegas forgets BaseRTT at a timeout.
TOGETHER = {"apart": 0.005, "initial_window": 2, "min_rto": 0.3}


@pytest.mark.slow
@pytest.mark.parametrize("n", [1, 2, 5, 10])
def test_flows_started_together_hold_the_queue_in_the_band(n):
    queue, _, _, _, _, res = settled(n, **TOGETHER)
    # [n·alpha, n·beta] with one packet per flow of slack: Linux truncates diff (a flow holds
    # up to beta + 1) and counts queued segments times RTT/BaseRTT (a flow at diff = alpha
    # keeps alpha·BaseRTT/RTT queued, at least alpha − 1 while the queue's delay is below
    # BaseRTT). Measured: 2.3, 6.3, 12.3, 21.3 packets.
    assert n * (ALPHA - 1) <= queue <= n * (BETA + 1)
    assert res.metrics["drops"] == 0 and res.summary["timeouts"].sum() == 0
    assert res.metrics["utilisation"] > 0.95  # a standing queue: the link never idles


@pytest.mark.slow
@pytest.mark.parametrize("n", [2, 5, 10])
def test_flows_started_together_share_within_the_band(n):
    # With alpha < beta the equilibrium is a band, not a point: rates are in proportion to
    # each flow's diff, anywhere in [alpha, beta + 1) with Linux's truncation, so up to
    # (beta + 1)/alpha = 2.5 apart even with exact BaseRTTs (Boutremans & Le Boudec, "A note
    # on the fairness of TCP Vegas", 2000). Measured: 2.06, 2.13, 1.80. With alpha = beta
    # the band is [3, 4): at most 4/3 apart; measured 1.13, 1.00, 1.02.
    _, rates, _, _, _, _ = settled(n, **TOGETHER)
    assert rates.max() / rates.min() < (BETA + 1) / ALPHA
    _, rates, _, _, _, res = settled(n, **TOGETHER, alpha=3, beta=3)
    assert rates.max() / rates.min() < 4 / 3
    assert res.summary["timeouts"].sum() == 0


@pytest.mark.parametrize("n", [2, 5])
def test_flows_started_at_one_instant_inherit_each_others_initial_windows(n):
    # Hosts without access links (access=None): initial windows sent at one instant reach the
    # bottleneck together, flow by flow, so flow k's first segment waits behind k·IW others
    # and its BaseRTT is too large by up to k·IW packets. Each flow then holds the band above
    # its own error (Low, Peterson & Wang): summing x_k·(D − e_k) ≤ beta + 1 over the flows,
    # with the shares summing to one, D ≤ n·(beta + 1) + max e_k. The queue sits above the
    # band (13.3 and 42.3 packets, the figures once blamed on Vegas' rules), and the flow
    # with the largest error takes the most.
    queue, rates, _, _, _, res = settled(n, access=None)
    iw = 10
    assert n * (BETA + 1) < queue <= n * (BETA + 1) + (n - 1) * iw
    assert rates.argmax() == n - 1 and rates.argmin() == 0
    assert res.metrics["drops"] == 0


def lpw_queue(errors, backlog):
    """Low, Peterson & Wang's queue (packets) for flows with these BaseRTT errors (packets),
    each keeping ``backlog`` segments queued above its error: the D with
    sum(backlog / (D − e_k)) = 1 (the shares, backlog/(D − e_k), fill the link)."""
    lo, hi = max(errors), max(errors) + backlog * len(errors)
    for _ in range(100):  # bisection: the sum falls as D grows
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if sum(backlog / (mid - e) for e in errors) > 1 else (lo, mid)
    return hi


@pytest.mark.parametrize("n", [2, 5, 10])
@pytest.mark.slow
def test_late_starters_keep_the_error_low_peterson_wang_predict(n):
    # Flows 20 s apart: a lone flow's slow-start overshoot (114 packets at cwnd 157) has drained
    # by 13 s, so each newcomer finds the others' equilibrium queue, takes it for propagation
    # delay (error e_k, read from the trace), and keeps its own band above it. Theory, per flow:
    # its Linux diff, computed from its rate, the queue and e_k, lies in [alpha, beta + 1).
    # Slack 0.5: e_k is the queue's mean over the second before the start, the BaseRTT the
    # smallest sample the newcomer took, which can differ by a packet's delay.
    queue, rates, found, pps, base, res = settled(n, apart=20.0)
    diff = lpw_diff(queue, rates, found, pps, base)
    assert ((diff >= ALPHA - 0.5) & (diff < BETA + 1 + 0.5)).all(), diff
    # ... and the queue is the theory's: between the errors' queue with every flow at
    # alpha·BaseRTT/RTT segments and with every flow at beta + 1. For newcomers that each find
    # the equilibrium of those before them, with 3 segments each, that is 7.9, 27.9 and 70.9
    # packets for n = 2, 5, 10: an extra 1.9 to 6.3 segments per newcomer, rising as the
    # errors add up (measured 8.3, 27.0, 67.3).
    floor = ALPHA * base / (base + queue / pps)
    assert lpw_queue(found, floor) <= queue <= lpw_queue(found, BETA + 1)
    assert res.metrics["drops"] == 0 and res.summary["timeouts"].sum() == 0


def test_lpw_queue_for_newcomers_into_equilibrium():
    # The figures quoted above and in docs/algorithms.md, from the recursion: newcomer k finds
    # the queue of the k flows before it.
    errors, queues = [], []
    for _ in range(10):
        errors.append(queues[-1] if queues else 0.0)
        queues.append(lpw_queue(errors, 3.0))
    assert [round(q, 1) for q in (queues[1], queues[4], queues[9])] == [7.9, 27.9, 70.9]
    assert queues[1] == pytest.approx(3 * (3 + 5 ** 0.5) / 2)  # D² − 3bD + b² = 0 for two flows


# -- the packet engine: against Reno (seeds 003/004; Mo et al. 1999) ---------------------------------
@pytest.mark.slow
def test_reno_takes_more_as_the_buffer_grows():
    # Reno fills any buffer until it drops; Vegas keeps alpha..beta segments queued. With a
    # buffer of one BDP or more Reno's standing queue pushes Vegas's RTT up and Vegas backs
    # off: Reno takes the larger share. With a small buffer Reno's losses cost it more than
    # Vegas's restraint costs Vegas. Both with Reno recovery, so the laws alone differ.
    shares = {}
    for buffer in ("0.25BDP", "1BDP", "4BDP"):
        sc = ccsim.dumbbell("10Mbps", "40ms", buffer=buffer, flows=["vegas", "reno"],
                            duration="30s")
        shares[buffer] = ccsim.run(sc).summary["share"][0]
    assert shares["0.25BDP"] > shares["1BDP"] > shares["4BDP"]
    assert shares["1BDP"] < 0.5 and shares["4BDP"] < 0.5


# -- the fluid law at windows of a few segments -----------------------------------------------
@pytest.mark.parametrize("cwnd, ack_segs, timer, grows", [
    # delayed ACKs, 64 ms RTT, 125 segments/s: W = 4 gives two ACKs a round; W = 5 two
    # pairs, its odd segment ACKed with the next round (the next train comes 32 ms later,
    # before the 40 ms timer): Reno's step of 2/cwnd per round
    (4.0, 2.0, 0.04, 2.0 / 4.0),
    (5.5, 2.0, 0.04, 2.0 / 5.5),
    # a 20 ms timer fires first: the odd segment is a third sample, Vegas decides (+1)
    (5.5, 2.0, 0.02, 1.0),
    (6.0, 2.0, 0.04, 1.0),       # three pairs: Vegas decides
    (3.0, 1.0, 0.0, 1.0),        # an ACK per segment: three samples
    (2.0, 1.0, 0.0, 1.0 / 2.0),  # two: Reno's 1/cwnd
])
def test_fluid_rounds_of_few_samples_take_renos_step(cwnd, ack_segs, timer, grows):
    """Linux's ``cntRTT <= 2`` rule in the fluid law: a round whose ACKs carry two RTT
    samples or fewer makes no Vegas decision, and its last ACK adds Reno's
    ``acked/cwnd``. With no queue (diff < alpha) a decision adds one segment a round;
    the fluid law added one whatever the window, so a Vegas flow at 5 % random loss
    (windows of 3-6 segments behind delayed ACKs) ran 0.58 of the link against the
    packet engine's 0.40."""
    from ccsim.algorithms.fluid import FlowArrays
    cc = algorithms.get("vegas")()
    law = type(cc).fluid(cc)
    f = FlowArrays()
    rtt = 0.064
    for k, v in dict(cwnd=cwnd, ssthresh=2.0, pacing=math.inf, h=rtt, now=0.0, rtt=rtt,
                     base_rtt=rtt, min_rtt=rtt, srtt=rtt, rate=cwnd / rtt, acked=0.0,
                     delivered=0.0, inflight=cwnd, mss=1448.0, capacity=125.0,
                     ack_segs=ack_segs, delack_timeout=timer).items():
        setattr(f, k, np.array([v]))
    law.grow(f)  # one step of one RTT
    assert f.cwnd[0] - cwnd == pytest.approx(grows, rel=1e-9)
