"""CUBIC's fluid law: Linux's HyStart as the fluid step can see it, against
the rules of ``tcp_cubic.c`` restated here on the packets' rounds and trains,
and against the packet engine's slow-start exit."""

from __future__ import annotations

import math

import numpy as np
import pytest

import ccsim
from ccsim import algorithms
from ccsim.algorithms.fluid import FlowArrays
from fluid_arrays import flow_arrays


def slow_starting(law, **values) -> FlowArrays:
    return flow_arrays(law, **{**dict(cwnd=20.0, ssthresh=math.inf, pacing=math.inf, h=0.005,
                                      now=0.0, rtt=0.041, base_rtt=0.04, min_rtt=0.04,
                                      srtt=0.041, rate=500.0, acked=2.5, delivered=100.0,
                                      inflight=20.0, mss=1448.0, capacity=500.0),
                                   **values})


def step(law, f, now, rtt):
    f.now[:], f.rtt[:] = now, rtt
    law.grow(f)


def ramp(detect: int, rtt: float = 0.041, capacity: float = 1000.0, until: float = 200.0,
         **values) -> tuple[FlowArrays, list[float]]:
    """A flow from an initial window of 10 growing 2 segments per 1-ms step
    (one delayed ACK), behind a queue served at ``capacity`` segments/s, its
    RTT ``rtt`` throughout (40 ms minimum); returns it and its windows at each
    step until ``ssthresh`` is set or the window reaches ``until``."""
    cls = algorithms.get("cubic")
    law = cls.fluid(cls(hystart_detect=detect))
    f = flow_arrays(law, **{**dict(cwnd=10.0, ssthresh=math.inf, pacing=math.inf, h=0.001,
                                   now=0.0, rtt=rtt, base_rtt=0.04, min_rtt=0.04, srtt=rtt,
                                   rate=capacity, acked=2.0, delivered=0.0, inflight=10.0,
                                   mss=1448.0, capacity=capacity, queued=1.0),
                               **values})
    f.ack_segs = np.full(1, 2.0)
    windows = []
    k = 0
    while math.isinf(f.ssthresh[0]) and f.cwnd[0] < until:
        windows.append(float(f.cwnd[0]))
        step(law, f, 0.001 * k, rtt)
        k += 1
    return f, windows


# Linux's rounds and trains in slow start from an initial window of 10, behind
# delayed ACKs (2 segments each), restated: hystart_update is first called at a
# window of 16 (hystart_low_window), where bictcp_hystart_reset begins a round
# whose end_seq is what is in flight, the window less the ACK's 2 segments; each
# delivered segment adds one, so rounds begin at windows 16, 30, 58, 114.
# Each ACK releases 4 segments for the 2 it acknowledges: the window's trains
# begin at 10, 20, 40, 80 and the data sent j segments into one meets the queue
# it began with plus j/2, the window's growth since it began.


def test_hystart_delay_reads_the_data_sent_as_the_last_round_began():
    # A round's first ACKs acknowledge what was sent as the round before began.
    # Round 30's samples: data sent at window 16 (train 10: 6 queued, 47 ms), but
    # its train sent only 2 x (20 - 16) = 8 segments after it, fewer than the
    # 8 samples x 2 segments, so they reach train 20's first data (41 ms): the
    # smallest, 41 ms, is below 40 ms + 5 ms. Round 58's: data sent at window 30,
    # 10 segments into train 20 (51 ms), and the 20 after it cover the samples:
    # 51 ms > 45 ms. Linux leaves at the ninth sample, 8 ACKs into the round:
    # ssthresh = 58 + 8 x 2 = 74 (the packet engine's too, at 10 Mbit/s in 4 BDP).
    f, windows = ramp(detect=2)
    assert f.ssthresh[0] == 74.0
    assert max(windows) < 58.0 + 2.0  # it left in round 58, not after


def test_hystart_delay_sees_a_standing_queue_in_the_first_round():
    # The first round's samples acknowledge the end of the train before and the
    # start of the current one, which met the queue others keep (50 ms): out at
    # the ninth sample, 16 + 8 x 2 segments.
    f, _ = ramp(detect=2, rtt=0.050)
    assert f.ssthresh[0] == 32.0


def test_hystart_looks_again_in_a_new_round_after_a_timeout():
    cls = algorithms.get("cubic")
    law = cls.fluid(cls(hystart_detect=2))  # the delay test alone
    f = slow_starting(law)
    step(law, f, 0.0, 0.041)
    law.on_loss(f, np.ones(1, bool), "timeout")
    f.cwnd[:], f.ssthresh[:] = 20.0, math.inf
    step(law, f, 0.01, 0.060)       # the timeout began a round: its train meets 60 ms
    assert f.ssthresh[0] == 20.0 + 8 * 1.0  # (one segment per ACK here)


def test_hystart_ack_train_needs_the_rounds_acks_unbroken_for_half_the_minimum_rtt():
    # hystart_update: ACKs at most 2 ms apart extend the train begun at the round's
    # start; once it spans (delay_min + ack_delay)/2 = (40 + 1)/2 ms it fires.
    # Served at 2000 segments/s the ACKs are 1 ms apart, and those of one packet
    # train are unbroken. The round's first ACKs acknowledge the data sent as the
    # last round began; they run on through the rest of that train, 2 x (2 x
    # train - window) segments, and on into the next unless an idle link parts
    # them for more than 2 ms less their 1-ms spacing: a train of 2 x train
    # segments keeps the link busy 2 x train / 2000 s of the 40-ms base RTT, so
    # train 20 leaves it idle 20 ms and train 40 not at all. Round 30: 8 segments
    # (4 ms), round 58: 20 (10 ms), round 114: data sent at 58 in train 40,
    # unbroken: out 20.5 ms in, at 114 + 41 segments.
    f, windows = ramp(detect=1, capacity=2000.0)
    assert f.ssthresh[0] == pytest.approx(114.0 + 2000.0 * 0.0205)
    assert max(windows) >= 114.0  # not in round 58 (58 > 41: a whole round as one train)


def test_hystart_ack_train_needs_acks_within_two_milliseconds():
    # Behind delayed ACKs on a 10 Mbit/s link (833 segments/s) ACKs come 2.4 ms apart:
    # never a train, whatever the round (Linux's hystart_ack_delta_us, 2 ms).
    f, _ = ramp(detect=1, capacity=833.0, until=1000.0)
    assert math.isinf(f.ssthresh[0])


def first_ssthresh(result, flow: int) -> float:
    tr = result.traces
    s = tr[(tr.variable == "ssthresh") & (tr.flow == flow)].value.to_numpy()
    return float(s[np.isfinite(s)][0])


@pytest.mark.parametrize("path, flows", [
    (("10Mbps", "40ms", "4BDP"), ["cubic"]),          # delay test: 74 (was 49)
    (("10Mbps", "40ms", "4BDP"), ["bbr3", "cubic"]),  # delay test beside STARTUP: 74 (was 24)
    (("100Mbps", "10ms", "1BDP"), ["cubic"]),         # ACK train: 160 (was 127)
    (("10Mbps", "10ms", "4BDP"), ["cubic"]),          # ACK train of quick ACKs: 21 (was 25)
])
def test_fluid_cubic_leaves_slow_start_at_the_packet_engines_window(path, flows):
    # In the packet engine CUBIC leaves slow start by one of HyStart's tests at a
    # window set by whole rounds and trains (above); the fluid window must be the
    # same to within the step's interpolation: 10 %, where a round earlier or
    # later is a factor of two (in brackets: the fluid law reading the round's
    # own RTT and the whole round as one ACK train).
    rate, rtt, buffer = path
    sc = ccsim.dumbbell(rate, rtt, buffer=buffer, flows=flows, duration="1s", seed=1)
    i = flows.index("cubic")
    packet = first_ssthresh(ccsim.run(sc), i)
    fluid = first_ssthresh(ccsim.run(sc, mode="fluid"), i)
    assert fluid == pytest.approx(packet, rel=0.10)
