"""Sender and receiver rules in isolation: RFC 6298 timers, RFC 5681 delayed
ACKs, RFC 2018 SACK blocks."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ccsim
from ccsim.algorithms.reno import Reno
from ccsim.packet.clock import Clock
from ccsim.packet.receiver import Receiver
from ccsim.packet.rtt import CLOCK_GRANULARITY
from ccsim.packet.tcp import Sender
from ccsim.recovery.reno import RenoRecovery


def _black_hole_sender(clock, sent, **kw):
    """A sender whose every segment is lost."""
    args = dict(initial_window=1, mss=1460, rwnd=math.inf, min_rto=0.2, initial_rto=1.0,
                max_rto=60.0, end_seq=math.inf)
    args.update(kw)
    return Sender(Reno(), RenoRecovery(), clock=clock,
                  transmit=lambda seq, now: sent.append((now, seq)),
                  **args)


def test_rto_backs_off_exponentially_from_the_initial_rto():
    # RFC 6298 §2.1: RTO = 1 s before any sample; §5.5: double it at each expiry.
    clock = Clock()
    sent = []
    sender = _black_hole_sender(clock, sent)
    clock.schedule(0.0, lambda s: s.start(), sender)
    clock.run(until=40.0)
    assert [seq for _, seq in sent] == [0] * 6
    assert [t for t, _ in sent] == pytest.approx([0, 1, 3, 7, 15, 31])
    assert sender.timeouts == 5
    # RFC 5681 §3.1: ssthresh is set once for the segment, then held.
    assert sender.cc.ssthresh == 2.0 and sender.cc.cwnd == 1.0


def test_rto_is_capped_at_max_rto():
    clock = Clock()
    sent = []
    sender = _black_hole_sender(clock, sent, max_rto=4.0)
    clock.schedule(0.0, lambda s: s.start(), sender)
    clock.run(until=30.0)
    gaps = [b[0] - a[0] for a, b in zip(sent, sent[1:])]
    assert gaps == pytest.approx([1, 2] + [4] * (len(gaps) - 2))
    assert len(gaps) >= 5


def test_rtt_estimator_follows_rfc6298():
    # each segment's ACK handed to the sender r seconds after it was sent
    clock, sent = Clock(), []
    sender = _black_hole_sender(clock, sent)
    sender.start()
    samples = [0.1, 0.3, 0.12, 0.5]
    srtt = rttvar = None
    for seq, r in enumerate(samples):
        clock.now = min(t for t, s in sent if s == seq) + r
        sender.on_ack((seq + 1, ()))
        assert sender.rtt.last_rtt == pytest.approx(r, rel=1e-12)
        # RFC 6298 §2.2 (first sample) and §2.3 (later ones), restated.
        if srtt is None:
            srtt, rttvar = r, r / 2
        else:
            rttvar = (1 - 1 / 4) * rttvar + 1 / 4 * abs(srtt - r)
            srtt = (1 - 1 / 8) * srtt + 1 / 8 * r
        rto = max(0.2, srtt + max(CLOCK_GRANULARITY, 4 * rttvar))
        assert sender.srtt == pytest.approx(srtt, rel=1e-12)
        assert sender.rttvar == pytest.approx(rttvar, rel=1e-12)
        assert sender.rtt.rto == pytest.approx(rto, rel=1e-12)
    assert sender.rtt.min_rtt == 0.1


def test_karn_no_rtt_sample_from_retransmitted_data(scratch_registry):
    # One drop in the first window: the ACK that covers the retransmission
    # gives no sample, so the flow's samples never include the recovery time.
    # The samples are those a window law hears through its on_rtt hook.
    samples = []

    @ccsim.algorithms.register
    class Listening(Reno):
        name = "listening-reno"

        def on_rtt(self, sample):
            samples.append(sample.rtt)

    sc = ccsim.dumbbell("10Mbps", "100ms", buffer=100, duration="3s",
                        flows=[ccsim.Flow("listening-reno", recovery="newreno",
                                          drop_segments=[5])])
    row = ccsim.run(sc).summary.iloc[0]
    assert row["recoveries"] == 1 and row["timeouts"] == 0 and len(samples) > 100
    # Largest possible honest sample: propagation + a full buffer of queueing.
    assert max(samples) < 0.1 + 100 * 1500 * 8 / 10e6
    # A timer shorter than the path's RTT fires before the first ACK can come, and
    # the first window goes again: the ACKs of the first copies then arrive soon
    # after the second. Timing them from the resend would give samples below the
    # propagation delay, which no honest sample can be.
    samples.clear()
    row = ccsim.run(sc.replace(initial_rto=0.05, min_rto=0.01, flows=[
        ccsim.Flow("listening-reno", recovery="newreno")])).summary.iloc[0]
    assert row["timeouts"] >= 1 and len(samples) > 100
    assert min(samples) >= 0.1


class _Wire:
    """A clock that is never run: the test reads what a receiver scheduled on
    it, in the order scheduled. ``acks``: (arrival time, ack number, SACK
    blocks); ``timers``: (time, callback, payload) of delayed-ACK timers."""

    def __init__(self):
        self.clock = Clock()

    def _events(self):
        return sorted(self.clock.heap, key=lambda e: e[1])

    @property
    def acks(self):
        return [(at, *payload) for at, _, fn, payload in self._events()
                if getattr(fn, "__name__", "") != "on_delayed_ack_timer"]

    @property
    def timers(self):
        return [(at, fn, payload) for at, _, fn, payload in self._events()
                if getattr(fn, "__name__", "") == "on_delayed_ack_timer"]


def _receiver(wire, *, sack=False, delayed=False):
    return Receiver(sack=sack, delayed_ack=delayed, ack_delay=0.04, back=0.01,
                    clock=wire.clock, deliver_ack=lambda a: None, n_bins=10,
                    bin_width=1.0)


def test_receiver_acks_cumulatively_and_duplicates_out_of_order():
    wire = _Wire()
    rx = _receiver(wire)
    for t, seq in enumerate([0, 1, 3, 4, 2, 5]):
        rx.receive(seq, float(t))
    assert [a[1] for a in wire.acks] == [1, 2, 2, 2, 5, 6]
    assert [a[0] for a in wire.acks] == pytest.approx([0.01, 1.01, 2.01, 3.01, 4.01, 5.01])


def test_sack_blocks_report_the_latest_segment_first():
    # RFC 2018 §4: the first block holds the segment that triggered the ACK;
    # the others repeat the most recently reported blocks.
    wire = _Wire()
    rx = _receiver(wire, sack=True)
    for t, seq in enumerate([0, 2, 3, 6, 8, 9]):
        rx.receive(seq, float(t))
    blocks = [a[2] for a in wire.acks]
    assert blocks[0] == ()
    assert blocks[1] == ((2, 3),)
    assert blocks[2] == ((2, 4),)
    assert blocks[3] == ((6, 7), (2, 4))
    assert blocks[5] == ((8, 10), (6, 7), (2, 4))
    rx.receive(1, 6.0)  # fills the first hole: blocks below rcv_nxt go
    assert wire.acks[-1][1:] == (4, ((8, 10), (6, 7)))


def test_sack_blocks_are_limited_to_three():
    wire = _Wire()
    rx = _receiver(wire, sack=True)
    for t, seq in enumerate([1, 3, 5, 7, 9]):
        rx.receive(seq, float(t))
    assert wire.acks[-1][2] == ((9, 10), (7, 8), (5, 6))


def test_delayed_ack_every_second_segment_or_on_the_timer():
    # RFC 5681 §4.2: an ACK for at least every second full-sized segment, and
    # none held longer than the delay (here 40 ms).
    wire = _Wire()
    rx = _receiver(wire, delayed=True)
    rx.receive(0, 0.000)
    rx.receive(1, 0.001)    # second segment: ACK now
    rx.receive(2, 0.002)    # held...
    assert [a[1] for a in wire.acks] == [2]
    # one timer event per receiver, not one per held ACK: the first hold's,
    # which finds a later deadline when it fires and re-arms there
    (at, timer, payload), = wire.timers
    assert at == pytest.approx(0.040)
    timer(payload)
    assert [a[1] for a in wire.acks] == [2]
    at, timer, payload = wire.timers[-1]
    assert at == pytest.approx(0.042)  # held no longer than the delay
    timer(payload)           # ...until the timer fires
    assert wire.acks[-1][:2] == (pytest.approx(0.052), 3)
    rx.receive(4, 0.1)       # out of order: ACK at once
    assert wire.acks[-1][1] == 3
    rx.receive(3, 0.11)      # fills the gap: ACK at once
    assert wire.acks[-1][1] == 5


def test_delayed_ack_timer_expired_before_the_next_segment():
    # A segment arriving after the held ACK's deadline finds it already sent,
    # timed at the deadline.
    wire = _Wire()
    rx = _receiver(wire, delayed=True)
    rx.receive(0, 0.0)
    rx.receive(1, 0.5)
    assert [(round(a[0], 6), a[1]) for a in wire.acks] == [(0.05, 1)]


def test_delayed_acks_halve_the_ack_count_in_bulk_transfer():
    # The receiver window (12 segments, below the 17-packet BDP) keeps the
    # queue empty: no loss, so no duplicate ACKs.
    sc = ccsim.dumbbell("10Mbps", "20ms", buffer=100, flows=["reno"], duration="2s",
                        delayed_ack=True, rwnd=12 * 1460)
    res = ccsim.run(sc, events=True)
    acks = (res.events["event"] == "acked").sum()
    acknowledged = res.events.loc[res.events["event"] == "acked", "seq"].max()
    ratio = acks / acknowledged  # ACKs per acknowledged segment
    assert res.summary.loc[0, "retransmits"] == 0
    assert 0.5 <= ratio < 0.52  # plus a timer-driven ACK for an odd segment now and then


# -- the receiver's SACK blocks against a restatement of RFC 2018 §4 -----------------------------
def _reference_blocks(arrivals):
    """RFC 2018 §4 restated as a list, most recent first: the block holding the latest
    segment leads, the rest keep their order; blocks at or below rcv_nxt are dropped."""
    nxt, held, blocks, reported = 0, set(), [], []
    for seq in arrivals:
        if seq == nxt:
            nxt += 1
            while nxt in held:
                held.remove(nxt)
                nxt += 1
            blocks = [b for b in blocks if b[1] > nxt]
        elif seq > nxt:
            held.add(seq)
            start, end = seq, seq + 1
            others = []
            for b in blocks:
                if b[1] < start or b[0] > end:
                    others.append(b)
                else:
                    start, end = min(start, b[0]), max(end, b[1])
            blocks = [(start, end)] + others
        reported.append((nxt, tuple(blocks[:3])))
    return reported


@settings(max_examples=200)
@given(st.lists(st.integers(0, 60), min_size=1, max_size=80))
def test_receiver_sack_blocks_follow_rfc2018(arrivals):
    from ccsim.packet.receiver import Receiver
    wire = _Wire()
    rx = Receiver(sack=True, delayed_ack=False, ack_delay=0.04, back=0.0,
                  clock=wire.clock, deliver_ack=None, n_bins=1, bin_width=1.0)
    for seq in arrivals:
        rx.receive(seq, 0.0)
    assert [a[1:] for a in wire.acks] == _reference_blocks(arrivals)


def test_delivery_rate_is_sampled_only_for_laws_that_ask(scratch_registry):
    # A law that reads Ack.delivery_rate without asking gets a clear TypeError
    # (not a None passing for "unavailable"); one that asks gets samples, in
    # bit/s, never above what the 10 Mbit/s bottleneck can deliver in the
    # long run (each sample spans a segment's flight, at least one RTT, so
    # its bits are at most one RTT of the bottleneck's plus a window).
    rates = []

    class Reads(Reno):
        def on_ack(self, ack):
            rates.append(ack.delivery_rate)
            if ack.delivery_rate > 0:
                Reno.on_ack(self, ack)

    ccsim.algorithms.register(type("ReadsUnasked", (Reads,), {"name": "reads-unasked"}))
    ccsim.algorithms.register(type("ReadsAsked", (Reads,), {"name": "reads-asked",
                                                            "samples_delivery_rate": True}))
    for mode in ("packet", "fluid"):
        sc = ccsim.dumbbell("10Mbps", "40ms", flows=["reads-unasked"], duration="2s")
        with pytest.raises(ccsim.errors.AlgorithmError, match="samples_delivery_rate = True") \
                as err:
            ccsim.run(sc, mode=mode)
        assert isinstance(err.value.__cause__, TypeError)
        rates.clear()
        ccsim.run(sc.replace(flows=["reads-asked"]), mode=mode)
        assert len(rates) > 10 and all(r is not None and 0 < r for r in rates)
        late = rates[len(rates) // 2:]  # past slow start: the bottleneck sets the pace
        assert max(late) < 1.5 * 10e6 and sum(late) / len(late) > 0.5 * 10e6


def test_not_sampled_is_one_object_through_pickling_and_copies():
    # ccsim.testing snapshots events with copy; sweeps pickle across workers:
    # `rate is NOT_SAMPLED` must keep its meaning through both
    import copy
    import pickle

    from ccsim.algorithms import NOT_SAMPLED
    assert pickle.loads(pickle.dumps(NOT_SAMPLED)) is NOT_SAMPLED
    assert copy.deepcopy(NOT_SAMPLED) is NOT_SAMPLED
    with pytest.raises(TypeError, match="samples_delivery_rate"):
        bool(NOT_SAMPLED)
