"""The sender's parts, alone, and the engine's inline sender against the
readable one it copies.

FastSender writes out the per-ACK path of Sender (the RFC 6298 estimator,
the timer's restart, the steady-state sending path, the events handed to the
window law) for speed. These tests hold the copy to the reference: the same
results bit for bit on scenarios that take every branch, and events that
name their fields.
"""

from __future__ import annotations

import ast
import inspect
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

import ccsim
from ccsim import Flow
from ccsim.algorithms.base import Ack, RttSample
from ccsim.packet import PacketEngine, fast_path
from ccsim.packet.clock import Clock
from ccsim.packet.fast_path import FastSender
from ccsim.packet.rtt import CLOCK_GRANULARITY, RttEstimator
from ccsim.packet.tcp import Sender
from ccsim.packet.timers import Pacer, RetransmissionTimer
from ccsim.recovery import Recovery, SenderView, register
from tests.test_golden import fingerprint, scenarios


def _more_branches() -> dict[str, ccsim.Scenario]:
    """What the golden scenarios leave out: tail loss probes, ECN, ticked
    RTT samples without delayed ACKs, jitter off, a two-way path, the event log,
    BBRv3's reading of the rate sample."""
    d = ccsim.dumbbell
    return {
        "tlp-prr-lossy": d("20Mbps", "20ms", buffer="0.3BDP", loss=0.01, flows=[
            Flow("cubic", size=200_000), Flow("cubic", size=150_000, start=1.0),
            # BBR on RFC 6675 alone (no RACK): its lost retransmissions wait for
            # probes and the timer, the branches this case covers (with RACK, the
            # Linux stack's, it takes no probe here)
            Flow("bbr", size=3_000_000, recovery="sack")], tail_loss_probe=True,
            limited_transmit=True,
            # seed 27: probes from both a CUBIC flow and BBR (since BBR's samples follow
            # tcp_rate.c, seed 24 takes none)
            duration="6s", seed=27),
        "dctcp-step-ecn": d("20Mbps", "10ms", queue=ccsim.StepMark(K=20), flows=[
            Flow("dctcp", ecn=True), Flow("reno", ecn=True)], duration="5s", seed=22),
        "ticked-no-jitter": d("10Mbps", "30ms", flows=["vegas", "illinois", "newreno"],
                              rtt_granularity="10ms", start_jitter=0, ack_jitter=0,
                              duration="6s", seed=23),
        "two-way": d("10Mbps", "20ms", flows=["cubic", Flow("reno", reverse=True)],
                     duration="5s", seed=24),
        # BBRv3 reads the ACK's tx_in_flight and sample_delivered, with losses and SACK
        "bbr3-shallow": d("10Mbps", "40ms", buffer="0.25BDP", flows=["bbr3", "cubic"],
                          duration="5s", seed=25),
    }


CASES = {**scenarios(), **_more_branches()}


@pytest.mark.parametrize("name", sorted(CASES))
def test_fast_sender_gives_the_references_results_bit_for_bit(name):
    sc = CASES[name]
    runs = {}
    for cls in (Sender, FastSender):
        engine = PacketEngine(sc, events=name == "two-way", sender_class=cls)
        res = engine.run()
        runs[cls] = (fingerprint(res), engine.clock.scheduled() - 1,
                     [(s.transmissions, s.timeouts, s.tlp and s.tlp.probes) for s in engine.senders])
    assert runs[FastSender] == runs[Sender]


def test_the_scenarios_take_the_branches_they_are_for():
    # the comparison above is only as good as its coverage: probes, ECN reductions,
    # timeouts and recoveries must all have happened in some scenario
    seen = {"probes": 0, "ecn_reductions": 0, "timeouts": 0, "recoveries": 0}
    for name in ("tlp-prr-lossy", "dctcp-step-ecn", "newreno-random-loss"):
        engine = PacketEngine(CASES[name])
        engine.run()
        for s in engine.senders:
            seen["probes"] += s.tlp.probes if s.tlp is not None else 0
            seen["ecn_reductions"] += s.ecn.reductions
            seen["timeouts"] += s.timeouts
            seen["recoveries"] += s.recoveries
    assert all(v > 0 for v in seen.values()), seen


def test_the_inline_events_name_their_fields():
    # FastSender builds events positionally (tuple.__new__, a third of NamedTuple's
    # cost); each element must be a variable named after the field it fills
    tree = ast.parse(inspect.getsource(fast_path))
    built = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id == "_new_event"):
            kind, values = node.args
            event = {"Ack": Ack, "RttSample": RttSample}[kind.id]
            assert [v.id for v in values.elts] == list(event._fields), event.__name__
            built.append(kind.id)
    assert sorted(built) == ["Ack", "RttSample"]


# -- the RTT estimator (RFC 6298 §2) -----------------------------------------------------
@given(st.lists(st.floats(1e-4, 5.0), min_size=1, max_size=30),
       st.sampled_from([(0.2, 60.0), (1.0, 120.0), (0.001, 0.5)]))
def test_estimator_follows_rfc6298(samples, bounds):
    min_rto, max_rto = bounds
    est = RttEstimator(initial_rto=1.0, min_rto=min_rto, max_rto=max_rto)
    srtt = rttvar = None
    for r in samples:
        est.take(r)
        # §2.2 and §2.3, restated with K = 4, alpha = 1/8, beta = 1/4
        if srtt is None:
            srtt, rttvar = r, r / 2
        else:
            rttvar = (1 - 1 / 4) * rttvar + 1 / 4 * abs(srtt - r)
            srtt = (1 - 1 / 8) * srtt + 1 / 8 * r
        rto = min(max(min_rto, srtt + max(CLOCK_GRANULARITY, 4 * rttvar)), max_rto)
        assert est.srtt == pytest.approx(srtt, rel=1e-12)
        assert est.rttvar == pytest.approx(rttvar, rel=1e-12, abs=1e-15)
        assert est.rto == pytest.approx(rto, rel=1e-12)
    assert est.min_rtt == min(samples) and est.last_rtt == samples[-1]
    assert est.rtt_count == len(samples)


def test_estimator_backs_off_to_the_cap_and_a_sample_clears_it():
    est = RttEstimator(initial_rto=1.0, min_rto=0.2, max_rto=3.0)
    est.back_off()
    est.back_off()
    assert est.rto == 3.0  # 1 -> 2 -> 4, capped (§5.5)
    est.take(0.1)
    assert est.rto == pytest.approx(0.1 + 4 * 0.05)  # §5.7: a valid sample recomputes it


def test_ticked_samples_count_whole_ticks_and_at_least_one():
    est = RttEstimator(initial_rto=1.0, min_rto=0.2, max_rto=60.0, tick=0.1)
    assert est.measure(0.05, 0.26) == pytest.approx(0.2)  # readings 0 and 2
    assert est.measure(0.31, 0.33) == pytest.approx(0.1)  # the same tick: one
    assert RttEstimator(1.0, 0.2, 60.0).measure(0.05, 0.26) == pytest.approx(0.21)


# -- the retransmission timer and the pacer ------------------------------------------------
def test_timer_moved_later_reuses_its_event_and_expires_once():
    clock, fired = Clock(), []
    timer = RetransmissionTimer(clock, lambda: fired.append(clock.now))
    timer.restart(1.0)
    clock.now = 0.5
    timer.restart(1.0)  # later: no new event
    assert len(clock.heap) == 1
    clock.run(10.0)
    assert fired == [1.5]  # expired at the new deadline, once


def test_timer_moved_earlier_schedules_and_a_stopped_timer_never_fires():
    clock, fired = Clock(), []
    timer = RetransmissionTimer(clock, lambda: fired.append(clock.now))
    timer.restart(2.0)
    timer.restart(1.0)  # earlier: a new event; the old one is superseded
    assert len(clock.heap) == 2
    clock.run(1.5)
    assert fired == [1.0]
    timer.restart(1.0)
    timer.stop()
    clock.run(10.0)
    assert fired == [1.0]


def test_pacer_spaces_segments_one_packet_time_apart():
    clock, woken = Clock(), []
    pacer = Pacer(clock, lambda: woken.append(clock.now), packet_bits=12_000.0)
    pacer.sent(0.0, 1e6)  # 12,000 bits at 1 Mbit/s: 12 ms
    assert pacer.blocked(0.011)
    clock.run(1.0)
    assert woken == [pytest.approx(0.012)] and not pacer.blocked(0.012)


# -- a recovery strategy written against SenderView alone ----------------------------------
class HalveOnce(Recovery):
    """A newcomer's strategy: fast retransmit on the second duplicate, halve
    the window once, end the recovery at the first ACK of new data."""

    name = "halve-once-test"
    dupthresh = 2
    entered = exited = 0

    def enter(self, tcp: SenderView) -> None:
        tcp.signal_loss("fast")
        tcp.retransmit(tcp.snd_una)
        tcp.cc.cwnd = tcp.cc.ssthresh
        HalveOnce.entered += 1

    def on_ack(self, tcp: SenderView, acked: int) -> None:
        tcp.exit_recovery()
        HalveOnce.exited += 1


def test_a_strategy_needs_only_the_sender_view(scratch_recovery_registry):
    register(HalveOnce)
    HalveOnce.entered = HalveOnce.exited = 0
    # a receiver window below the path's capacity: the chosen drop is the only loss
    sc = ccsim.dumbbell("10Mbps", "20ms", duration="5s", seed=1, rwnd=20 * 1460, flows=[
        Flow("reno", recovery="halve-once-test", drop_segments=(40,))])
    res = ccsim.run(sc)
    row = res.summary.iloc[0]
    # found by the second duplicate, repaired by one retransmission, no timeout
    assert HalveOnce.entered == HalveOnce.exited == 1
    assert row.recoveries == 1 and row.timeouts == 0 and row.retransmits == 1
    assert math.isfinite(row.goodput_bps) and row.goodput_bps > 5e6


@pytest.mark.parametrize("name", ["bbr3", "reno"])
def test_acks_carry_the_rate_samples_in_flight_and_delivered_counts(name, monkeypatch):
    # Linux's rate sample: rs->tx_in_flight, what was in flight just after the ACKed
    # segment went out (itself included), and rs->delivered, what was delivered since.
    # On a path that loses nothing and keeps order, everything ahead of a segment is
    # delivered by its ACK: the two are equal, on every ACK. BBRv3 paces (Sender's
    # transmit_at); Reno, made to sample rates, takes FastSender's inline send loop.
    cls = ccsim.algorithms.get(name)
    monkeypatch.setattr(cls, "samples_delivery_rate", True)
    seen = {}
    on_ack = cls.on_ack

    def spy(self, ack):
        seen.setdefault(sender_class, []).append(ack)
        on_ack(self, ack)

    monkeypatch.setattr(cls, "on_ack", spy)
    sc = ccsim.dumbbell("10Mbps", "20ms", buffer=2000, flows=[name], duration="1.5s", seed=3)
    for sender_class in (Sender, FastSender):
        engine = PacketEngine(sc, sender_class=sender_class)
        engine.run()
        assert engine.senders[0].retransmits == 0  # nothing lost
    acks = seen[FastSender]
    assert acks == seen[Sender] and len(acks) > 500
    assert all(a.tx_in_flight == a.sample_delivered > 0 for a in acks)
    assert max(a.tx_in_flight for a in acks) > 20  # the window grew past the initial one
