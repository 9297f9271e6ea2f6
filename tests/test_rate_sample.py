"""The packet engine's delivery-rate sample against Linux's ``net/ipv4/tcp_rate.c``.

Each test drives a sender by hand (a window of 10 segments of 1000 bytes, the
clock set per event) and checks ``Ack.delivery_rate`` against the rule
restated from the source:

* ``tcp_rate_skb_sent``: a segment sent with nothing outstanding sets
  ``first_tx_mstamp = delivered_mstamp = its send time``; every segment keeps
  both, and the count delivered, as they were when it left;
* ``tcp_rate_skb_delivered``: the send phase runs from the segment's
  ``first_tx_mstamp`` to its send time, which becomes ``first_tx_mstamp``;
* ``tcp_rate_gen``: the ACK phase runs from the segment's ``delivered_mstamp``
  to now; the interval is the longer phase; one shorter than the minimum RTT
  is no sample; else the rate is ``rs->delivered / interval``;
  ``delivered_mstamp`` moves to now when the ACK delivered something.
"""

from __future__ import annotations

import math

import pytest

import ccsim
from ccsim.algorithms.reno import Reno
from ccsim.packet.clock import Clock
from ccsim.packet.fast_path import FastSender
from ccsim.packet.tcp import Sender
from ccsim.recovery.reno import RenoRecovery

MSS = 1000
SENDERS = pytest.mark.parametrize("sender_class", [Sender, FastSender],
                                  ids=["reference", "fast"])


class _FixedWindow(Reno):
    """A window of 10 segments that never moves; keeps every ACK it is handed."""

    samples_delivery_rate = True

    def __init__(self):
        super().__init__()
        self.acks = []

    def on_ack(self, ack):
        self.acks.append(ack)


def _sender(sender_class):
    clock = Clock()
    sent = []
    law = _FixedWindow()
    s = sender_class(law, RenoRecovery(), clock=clock,
                     transmit=lambda seq, now: sent.append((now, seq)),
                     initial_window=10, mss=MSS, rwnd=math.inf, min_rto=10.0,
                     initial_rto=10.0, max_rto=60.0, end_seq=math.inf)
    return clock, s, sent, law.acks


def _at(clock, t, fn, *args):
    clock.now = t
    fn(*args)


def _bps(segments, seconds):
    return segments * MSS * 8.0 / seconds


@SENDERS
def test_a_segment_sent_with_nothing_outstanding_starts_the_samples_clock(sender_class):
    # A flow that opens at 5 s: its first window leaves with nothing outstanding, so
    # the first ACK's sample spans that window's flight, 0.1 s, not the 5.1 s since
    # the sender was made (which would give 1/51 of the rate).
    clock, s, sent, acks = _sender(sender_class)
    _at(clock, 5.0, s.start)
    assert [seq for _, seq in sent] == list(range(10))
    _at(clock, 5.1, s.on_ack, (1, ()))
    assert acks[-1].sample_delivered == 1
    assert acks[-1].delivery_rate == pytest.approx(_bps(1, 0.1))
    # One ACK for the rest (segments 1-10, 10 sent at 5.1) leaves nothing outstanding;
    # the next window (11-20, sent at once from that ACK: the fast sender's inline
    # path) starts both phases afresh. Its first ACK comes 0.05 s later (the path got
    # faster): one segment over 0.05 s. Without the restart the send phase would reach
    # back to segment 10's send time (5.1) and halve the rate.
    _at(clock, 5.2, s.on_ack, (11, ()))
    assert sent[-10:] == [(5.2, seq) for seq in range(11, 21)]
    _at(clock, 5.25, s.on_ack, (12, ()))
    assert acks[-1].delivery_rate == pytest.approx(_bps(1, 0.05))


@SENDERS
def test_the_interval_is_the_longer_of_the_send_and_ack_phases(sender_class):
    # ACK compression: the first window leaves at 0; the ACK of its first segment is
    # held 0.1 s beyond the 0.15-s path (arrives at 0.25), segment 10 leaves then, and
    # one ACK for segments 1-10 comes 0.15 s later. Its ACK phase (0.25 -> 0.40) is
    # 0.15 s; its send phase runs from the send time of the segment last sampled
    # (segment 0, at 0) to segment 10's (0.25): 10 segments over 0.25 s. The ACK
    # phase alone would report 10 over 0.15 s, two thirds more.
    clock, s, sent, acks = _sender(sender_class)
    _at(clock, 0.0, s.start)
    _at(clock, 0.25, s.on_ack, (1, ()))
    assert acks[-1].delivery_rate == pytest.approx(_bps(1, 0.25))
    assert sent[-1] == (0.25, 10)
    _at(clock, 0.40, s.on_ack, (11, ()))
    ack = acks[-1]
    assert ack.rtt == pytest.approx(0.15) and ack.min_rtt == pytest.approx(0.15)
    assert ack.sample_delivered == 10
    assert ack.delivery_rate == pytest.approx(_bps(10, 0.25))


@SENDERS
def test_a_sample_shorter_than_the_minimum_rtt_is_no_sample(sender_class):
    # Spurious retransmissions: the window leaves at 0, the first ACK comes at 0.1
    # (the minimum RTT); segment 1 is sent again at once and its first copy's ACK
    # comes 1 ms later (a sample over its send phase, 0 -> 0.1: valid). Segment 2 is
    # then sent again, and its first copy's ACK also comes 1 ms later: both phases
    # are 1 ms, below the 0.1-s minimum RTT, so Linux takes no sample; timed from
    # the resend it would report a segment per ms, ten times the path's rate.
    clock, s, sent, acks = _sender(sender_class)
    _at(clock, 0.0, s.start)
    _at(clock, 0.1, s.on_ack, (1, ()))
    _at(clock, 0.1, s.retransmit, 1)
    _at(clock, 0.101, s.on_ack, (2, ()))
    assert acks[-1].rtt is None  # Karn: the ACK covers a retransmission
    assert acks[-1].delivery_rate == pytest.approx(_bps(1, 0.1))
    _at(clock, 0.101, s.retransmit, 2)
    _at(clock, 0.102, s.on_ack, (3, ()))
    assert acks[-1].sample_delivered == 1
    assert acks[-1].delivery_rate is None
    # the next, over a full flight again, is a sample: segment 11 left at 0.101
    # (after the ACK of 2), when the last sampled segment had left at 0.1
    _at(clock, 0.201, s.on_ack, (12, ()))
    assert acks[-1].delivery_rate == pytest.approx(_bps(12 - 2, 0.201 - 0.101))


@SENDERS
def test_no_sample_before_the_first_rtt_sample(sender_class):
    # tcp_min_rtt is unknown (~0U) until an RTT is measured: the first ACK covers a
    # retransmission (Karn), so it gives neither an RTT nor a rate
    clock, s, sent, acks = _sender(sender_class)
    _at(clock, 0.0, s.start)
    _at(clock, 0.05, s.retransmit, 0)
    _at(clock, 0.1, s.on_ack, (1, ()))
    assert acks[-1].rtt is None and acks[-1].delivery_rate is None


def test_sacked_segments_move_the_ack_phases_start():
    # tcp_rate_gen: delivered_mstamp moves whenever the count delivered grows, SACKed
    # segments included: a segment sent after a duplicate ACK that SACKed new data
    # starts its ACK phase there, not at the last cumulative ACK
    from ccsim.recovery.sack import SackRecovery
    clock, sent = Clock(), []
    law = _FixedWindow()
    s = Sender(law, SackRecovery(), clock=clock, transmit=lambda seq, now: sent.append(seq),
               initial_window=10, mss=MSS, rwnd=math.inf, min_rto=10.0, initial_rto=10.0,
               max_rto=60.0, end_seq=math.inf)
    _at(clock, 0.0, s.start)
    _at(clock, 0.1, s.on_ack, (1, ()))     # segment 10 leaves at 0.1
    _at(clock, 0.2, s.on_ack, (1, ((2, 3),)))  # 1 missing, 2 SACKed at 0.2
    assert s.delivered_time == 0.2


def test_a_late_flow_starts_with_samples_of_the_path(scratch_registry):
    # In the engine: a rate-sampling flow that opens at 5 s gets a first sample over
    # its own first flight, never over the 5 s before it opened. 10 Mbit/s, 40 ms:
    # the first ACK delivers at least one 1460-byte segment, and the first segment's
    # flight is the 40-ms path and a few packet times (under 50 ms), so the sample
    # is at least 1460·8 bits / 50 ms; over 5.04 s it would be a hundredth of that.
    rates = []

    class Listening(Reno):
        name = "rate-listening"
        samples_delivery_rate = True

        def on_ack(self, ack):
            rates.append(ack.delivery_rate)
            Reno.on_ack(self, ack)

    ccsim.algorithms.register(Listening)
    sc = ccsim.dumbbell("10Mbps", "40ms", flows=[ccsim.Flow("rate-listening", start="5s")],
                        duration="6s", seed=1)
    ccsim.run(sc)
    assert rates[0] is not None and rates[0] > 1460 * 8 / 0.05
