"""CUBIC's fluid law: Linux's HyStart as the fluid step can see it."""

from __future__ import annotations

import math

import numpy as np

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


def test_hystart_reads_the_rtt_a_round_begins_with_not_the_queue_grown_within_it():
    # tcp_cubic.c hystart_update: curr_rtt is the smallest of a round's first eight
    # samples, compared once with delay_min + clamp(delay_min/8, 4 ms, 16 ms): 45 ms here.
    # A queue that grows after the round's first ACKs ends slow start a round later.
    cls = algorithms.get("cubic")
    law = cls.fluid(cls(hystart_detect=2))  # the delay test alone
    f = slow_starting(law)
    step(law, f, 0.0, 0.041)        # a round begins 1 ms above the minimum
    step(law, f, 0.02, 0.060)       # mid-round the RTT is 20 ms up: not yet seen
    assert math.isinf(f.ssthresh[0])
    step(law, f, 0.045, 0.060)      # the next round begins 20 ms up: leave slow start
    assert f.ssthresh[0] == f.cwnd[0] and f.hystart_over[0] == 1.0


def test_hystart_looks_again_in_a_new_round_after_a_timeout():
    cls = algorithms.get("cubic")
    law = cls.fluid(cls(hystart_detect=2))  # the delay test alone
    f = slow_starting(law)
    step(law, f, 0.0, 0.041)
    law.on_loss(f, np.ones(1, bool), "timeout")
    f.cwnd[:], f.ssthresh[:] = 20.0, math.inf
    step(law, f, 0.01, 0.060)       # the timeout began a round: its RTT is 60 ms
    assert f.ssthresh[0] == f.cwnd[0]


def test_hystart_ack_train_ends_slow_start_half_a_min_rtt_into_a_round():
    # tcp_cubic.c hystart_update: ACKs at most 2 ms apart form a train; once it spans
    # (delay_min + ack_delay)/2 = (40 ms + 1 ms)/2 = 20.5 ms the pipe is full. Served
    # back to back at 2000 segments/s (two per ACK: 1 ms apart), a round of 40 segments
    # spans 20 ms, too short; a round of 60 spans 30 ms and fires 20.5 ms in, its ACKs
    # having added 2000 x 20.5 ms = 41 segments.
    cls = algorithms.get("cubic")
    law = cls.fluid(cls(hystart_detect=1))
    f = slow_starting(law, cwnd=40.0, capacity=2000.0, h=0.005)
    f.ack_segs = np.full(1, 2.0)
    step(law, f, 0.0, 0.040)        # a round of 40 begins: its train is too short
    for k in range(1, 8):
        step(law, f, 0.005 * k, 0.040)
    assert math.isinf(f.ssthresh[0])
    f.cwnd[:] = 60.0
    step(law, f, 0.040, 0.040)      # the next round, of 60, begins at 40 ms
    for k in range(1, 3):           # 20.5 ms in: not before the step that reaches 60.5 ms
        step(law, f, 0.040 + 0.005 * k, 0.040)
        assert math.isinf(f.ssthresh[0])
    step(law, f, 0.056, 0.040)
    assert f.ssthresh[0] == 60.0 + 2000.0 * 0.0205
    assert f.hystart_over[0] == 1.0


def test_hystart_ack_train_needs_acks_within_two_milliseconds():
    # Behind delayed ACKs on a 10 Mbit/s link (833 segments/s) ACKs come 2.4 ms apart:
    # never a train, whatever the round (Linux's hystart_ack_delta_us, 2 ms).
    cls = algorithms.get("cubic")
    law = cls.fluid(cls(hystart_detect=1))
    f = slow_starting(law, cwnd=200.0, capacity=833.0)
    f.ack_segs = np.full(1, 2.0)
    for k in range(40):
        step(law, f, 0.005 * k, 0.040)
    assert math.isinf(f.ssthresh[0])
