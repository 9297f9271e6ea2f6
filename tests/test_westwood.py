"""Tests for TCP Westwood+ (ccsim.algorithms.westwood) against Mascolo et al., MobiCom 2001,
Grieco & Mascolo, CCR 2004, and Linux tcp_westwood.c.

The estimator is restated here (bytes acknowledged over at least an RTT, divided by the
interval; two cascaded EWMAs with gain 1/8, the first sample filling both) and fed ACK
streams whose rates are known; times are binary fractions so that intervals are exact.
"""

import math

import pytest

import ccsim
from ccsim import algorithms
from ccsim.algorithms import Ack, Loss, RttSample
from ccsim.packet import PacketEngine
from ccsim.testing import snapshot

Westwood = algorithms.get("westwood")
MSS = 1000       # bytes: round numbers in the hand computations
RTT = 0.125      # s
TICK = 1 / 64    # s between ACKs: one 1000-byte segment per tick is 512 000 bit/s


def filtered(samples, gain=0.125):
    """Linux's westwood_filter restated: two EWMAs in cascade, the first sample fills both."""
    ns = est = None
    for b in samples:
        if ns is None:
            ns = est = b
        else:
            ns = (1 - gain) * ns + gain * b
            est = (1 - gain) * est + gain * ns
    return est


class Stream:
    """ACKs every TICK seconds, each with an RTT sample, delivering ``per_ack`` segments."""

    def __init__(self, cc, iw=10):
        self.cc = cc
        cc.start(iw, MSS)
        self.now = self.delivered = 0.0

    def acks(self, n, per_ack=1):
        for _ in range(n):
            self.now += TICK
            self.delivered += per_ack
            self.cc.on_rtt(RttSample(self.now, RTT, RTT, RTT, 10))
            self.cc.on_ack(Ack(self.now, per_ack, RTT, RTT, RTT, 10, self.delivered, None))


def test_defaults():
    cc = Westwood()
    # Linux tcp_westwood.c; jiffies of CONFIG_HZ = 250, mainline's default
    assert cc.params() == {"gain": 0.125, "min_interval": 0.05, "jiffy": 0.004,
                           "extra_ack": False}
    assert (cc.name, cc.recovery) == ("westwood", "prr")


def test_one_sample_per_rtt():
    # The first ACK opens the interval; a sample is taken at the first ACK more than one RTT
    # (8 ticks) later: the 10th ACK, 9 ticks and 9 segments on. 9000 B · 8 / (9/64 s) = 512 kbit/s.
    s = Stream(Westwood())
    s.acks(9)
    assert s.cc.bw_est == 0.0
    s.acks(1)
    assert s.cc.bw_est == pytest.approx(512_000, rel=1e-12)


def test_min_interval_when_the_rtt_is_short():
    # Linux's TCP_WESTWOOD_RTT_MIN: with RTT < 50 ms, an interval still lasts over 50 ms.
    cc = Westwood(min_interval=0.25)  # 16 ticks: the sample comes at the 18th ACK (17 ticks)
    s = Stream(cc)
    s.acks(17)
    assert cc.bw_est == 0.0
    s.acks(1)
    assert cc.bw_est == pytest.approx(512_000, rel=1e-12)


def test_filter_by_hand():
    # Rate 512 kbit/s for the first sample, then 1024 kbit/s (two segments per ACK): the
    # second sample is 1 024 000; bw_ns = 7/8·512 000 + 1/8·1 024 000 = 576 000 and
    # bw_est = 7/8·512 000 + 1/8·576 000 = 520 000 bit/s.
    s = Stream(Westwood())
    s.acks(10)
    s.acks(9, per_ack=2)
    assert s.cc.bw_ns_est == pytest.approx(576_000, rel=1e-12)
    assert s.cc.bw_est == pytest.approx(520_000, rel=1e-12)
    s.acks(9 * 20, per_ack=2)  # 20 more samples of 1 024 000
    assert s.cc.bw_est == pytest.approx(filtered([512_000] + [1_024_000] * 21), rel=1e-12)


def test_data_acknowledged_during_recovery_counts_in_its_interval():
    # The law sees no ACK in recovery; the segments delivered meanwhile show up in
    # Ack.delivered at the next ACK and belong to the interval that ACK closes.
    s = Stream(Westwood())
    s.acks(10)  # first sample: 512 000
    s.now += 8 * TICK  # eight ticks of recovery: 8 segments delivered unseen
    s.delivered += 8
    s.acks(1)  # closes the interval: 9 segments over 9 ticks, 512 000 again
    assert s.cc.bw_est == pytest.approx(512_000, rel=1e-12)


@pytest.mark.parametrize("kind,cwnd,expected", [
    ("fast", 150, 100),     # 8 Mbit/s · 0.1 s / (8 · 1000 B) = 100 segments
    ("fast", 80, 80),       # never above cwnd after three duplicate ACKs
    ("timeout", 40, 100),   # after a timeout: the estimate (cwnd goes to 1)
])
def test_ssthresh_is_bandwidth_times_min_rtt(kind, cwnd, expected):
    cc = Westwood()
    cc.start(10, MSS)
    cc.cwnd, cc.bw_est = float(cwnd), 8e6
    cc.on_rtt(RttSample(0.5, 0.1, 0.1, 0.1, 10.0))  # RTT_min: 0.1 s, 25 jiffies exactly
    loss = Loss(1.0, kind, float(cwnd), 0.1, 0.12)
    assert cc.ssthresh_after(loss) == pytest.approx(expected, rel=1e-12)
    cc.on_loss(loss)
    assert cc.ssthresh == pytest.approx(expected, rel=1e-12)
    assert cc.cwnd == (1 if kind == "timeout" else cwnd)


def test_ssthresh_floor_and_no_estimate():
    cc = Westwood()
    cc.start(10, MSS)
    cc.cwnd = 40.0
    loss = Loss(1.0, "fast", 40.0, 0.1, 0.12)
    # no estimate yet: Linux's westwood_bw_rttmin, max(0 * rtt_min / mss, 2) (was Reno's 20)
    assert cc.ssthresh_after(loss) == 2
    cc.bw_est = 8e4  # one segment per 0.1 s: 1 segment, raised to the floor of 2
    assert cc.ssthresh_after(loss) == 2


def test_growth_is_renos():
    cc = Westwood()
    cc.start(10, MSS)
    cc.ssthresh = 5.0
    cc.on_ack(Ack(1.0, 2, RTT, RTT, RTT, 10, 2, None))
    assert cc.cwnd == pytest.approx(10 + 2 / 10, rel=1e-12)


def test_ssthresh_property_catches_a_halving_law():
    # The kit checks this rule after every loss; a Westwood that halves like Reno breaks it.
    class Halving(Westwood):
        def ssthresh_after(self, loss):
            return max(self.cwnd / 2, 2.0)

    rule = next(p for p in Westwood.properties if p.__name__ == "_window_from_estimate")
    for cls, broken in ((Westwood, False), (Halving, True)):
        cc = cls()
        cc.start(10, MSS)
        cc.cwnd, cc.bw_est = 150.0, 8e6
        cc.on_rtt(RttSample(0.5, 0.1, 0.1, 0.1, 10.0))
        before, loss = snapshot(cc), Loss(1.0, "fast", 150.0, 0.1, 0.12)
        cc.on_loss(loss)
        assert (rule(before, loss, snapshot(cc)) is not None) is broken


def test_estimate_tracks_the_bottleneck_rate():
    # One Westwood+ flow alone on 10 Mbit/s, 40 ms, a 1-BDP buffer: the link is busy nearly
    # all the time, so ACKs return at the bottleneck rate. The estimate counts payload:
    # 1460 of every 1500 bytes on the wire, 9.73 Mbit/s. Tolerance 15% of the link rate:
    # that 2.7% plus the filter's lag behind the dips of the loss recoveries.
    engine = PacketEngine(ccsim.dumbbell("10Mbps", "40ms", flows=["westwood"], duration="10s"))
    res = engine.run()
    cc = engine.senders[0].cc
    assert cc.bw_est == pytest.approx(10e6, rel=0.15)
    assert res.metrics["drops"] > 0  # losses did happen: the estimate set ssthresh
    # After a loss, ssthresh = bw_est · min RTT: one BDP (34 segments of 1460 B at 41.2 ms).
    bdp = 10e6 * 0.0412 / (8 * 1460)
    assert cc.ssthresh == pytest.approx(bdp, rel=0.15)
    assert math.isfinite(cc.bw_est)


@pytest.mark.parametrize("jiffy,rtt,expected", [
    (0.004, 0.0011, 0.004),   # HZ = 250: a 1.1 ms LAN sample reads as one 4 ms jiffy
    (0.001, 0.0011, 0.002),   # HZ = 1000: rounded up to two jiffies
    (0.004, 0.1, 0.1),        # whole jiffies stay as they are
    (0.0, 0.0011, 0.0011),    # jiffy=0: exact
    (1e-9, 0.0011, 0.0011),   # under a microsecond: whole µs (no division by a 0 tick)
])
def test_rtts_in_whole_jiffies_rounded_up(jiffy, rtt, expected):
    # Linux: w->rtt = usecs_to_jiffies(rtt_us), which rounds up; RTT_min is in jiffies
    cc = Westwood(jiffy=jiffy)
    cc.start(10, MSS)
    cc.on_rtt(RttSample(0.5, rtt, rtt, rtt, 10.0))
    assert cc.rtt_min == pytest.approx(expected, rel=1e-12)
    cc.cwnd, cc.bw_est = 1000.0, 8e6  # 1000 segments per second
    assert cc.ssthresh_after(Loss(1.0, "fast", 1000.0, rtt, rtt)) == pytest.approx(
        max(1000 * expected, 2.0), rel=1e-12)


def test_a_timeout_takes_the_next_sample_as_rtt_min():
    # Linux tcp_westwood_event, CA_EVENT_LOSS: reset_rtt_min, so the first RTT after a
    # timeout (one with the queue in it) is the new minimum until a lower one comes.
    cc = Westwood()
    cc.start(10, MSS)
    cc.bw_est = 8e6
    cc.on_rtt(RttSample(0.5, 0.02, 0.02, 0.02, 10.0))
    cc.on_rtt(RttSample(0.6, 0.12, 0.02, 0.04, 10.0))
    assert cc.rtt_min == 0.02
    cc.on_loss(Loss(1.0, "timeout", 50.0, 0.02, 0.04))
    cc.on_rtt(RttSample(2.0, 0.12, 0.02, 0.05, 10.0))
    assert cc.rtt_min == 0.12
    cc.cwnd = 500.0
    assert cc.ssthresh_after(Loss(3.0, "fast", 500.0, 0.02, 0.05)) == pytest.approx(120.0)
    cc.on_rtt(RttSample(3.5, 0.08, 0.02, 0.05, 10.0))
    assert cc.rtt_min == 0.08
