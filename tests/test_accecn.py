"""Accurate ECN (RFC 9768) rule by rule: the receiver's ACE counter and when
it ACKs, the sender's decoding with wrap and the safety rule for stretch
ACKs, and who responds to the marks."""

from __future__ import annotations

import math

import pytest
import ccsim
from ccsim.algorithms.dctcp import DCTCP
from ccsim.errors import ScenarioError, ScenarioTypeError
from ccsim.packet.accecn import (CEP_INIT, AccEcnReceiver, AccEcnResponse, ace_delta,
                                 safer_delta)
from ccsim.packet.clock import Clock
from ccsim.packet.tcp import Sender
from ccsim.recovery.reno import RenoRecovery


# -- the sender's decoding (RFC 9768 Appendix A.2.1) -----------------------------------
@pytest.mark.parametrize("ace, s_cep, delta", [
    (5, 5, 0),      # nothing new: ACE repeats the counter
    (7, 5, 2),
    (1, 5, 4),      # 5 -> 9: the 3-bit field wrapped through 0
    (4, 13, 7),     # s.cep 13 is 5 mod 8: seven more marks wrap to 4
    (5, 6, 7),      # never negative: one short of a full cycle
])
def test_ace_delta_is_the_least_non_negative_difference_mod_8(ace, s_cep, delta):
    # fails on a plain difference (negative across a wrap) and on a modulus
    # other than the 3-bit field's
    assert ace_delta(ace, s_cep) == delta


@pytest.mark.parametrize("d_cep, newly, safe", [
    (2, 9, 2),     # the RFC's example: 9 - ((9 - 2) % 8) = 2
    (2, 10, 10),   # ... and 10 - ((10 - 2) % 8) = 10: a whole wrap may hide
    (0, 8, 8),     # eight segments, ACE unchanged: all eight may have been marked
    (3, 7, 3),     # fewer than 8 segments cannot hide a wrap
    (5, 2, 5),     # d.cep above the segments acknowledged (the appendix's check)
])
def test_the_safety_rule_assumes_the_wraps_a_stretch_ack_may_hide(d_cep, newly, safe):
    assert safer_delta(d_cep, newly) == safe


# -- the receiver (RFC 9768 §3.2.2.2, §3.2.2.5.1) -------------------------------------
def _receiver():
    clock, acks = Clock(), []
    r = AccEcnReceiver(sack=False, delayed_ack=True, ack_delay=0.04, back=0.0, clock=clock,
                       deliver_ack=acks.append, n_bins=1, bin_width=1.0)
    r.deliver_ce = acks.append
    return clock, r, acks


def test_every_ack_carries_the_counter_from_5_never_reset():
    clock, r, acks = _receiver()
    r.receive(0, 0.0)
    r.receive(1, 0.001)      # unmarked: the ACK still carries r.cep = 5
    r.receive_ce(2, 0.002)   # a change to CE: ACKed at once, r.cep 6
    r.receive_ce(3, 0.003)
    r.receive(4, 0.004)      # 3 and 4 in one ACK: r.cep 7
    clock.run(until=0.01)
    # a classic receiver would echo counts per ACK (1, 1) and send unmarked ACKs bare
    assert acks == [(2, (), CEP_INIT), (3, (), 6), (5, (), 7)]
    assert r.ce == 7


def test_a_change_to_ce_is_acked_at_once_despite_delayed_acks():
    clock, r, acks = _receiver()
    r.receive(0, 0.0)
    r.receive(1, 0.001)           # every second segment: ACK
    r.receive_ce(2, 0.002)        # first CE after a segment that was not: at once
    clock.run(until=0.0025)
    assert acks == [(2, (), 5), (3, (), 6)]
    r.receive_ce(3, 0.003)        # CE after CE: held as usual
    clock.run(until=0.0035)
    assert len(acks) == 2
    clock.run(until=0.1)          # the delayed-ACK timer sends it
    assert acks[-1] == (4, (), 7) and len(acks) == 3


# -- the sender: decoding, superseded ACKs, stretch ACKs --------------------------------
class Recorder(DCTCP):
    """DCTCP recording what the sender tells it."""

    name = "test-accecn-recorder"

    def start(self, initial_window, mss):
        super().start(initial_window, mss)
        self.echoes, self.reactions = [], 0

    def on_ce_echo(self, echo):
        self.echoes.append(echo.marked)
        super().on_ce_echo(echo)

    def on_ecn(self, echo):
        self.reactions += 1
        super().on_ecn(echo)


class OwnResponse(Recorder):
    name = "test-accecn-own"
    own_ecn_response = True


def _sender(law, window=40):
    clock, sent = Clock(), []
    s = Sender(law, RenoRecovery(), clock=clock, transmit=lambda seq, now: sent.append(seq),
               initial_window=window, mss=1460, rwnd=math.inf, min_rto=0.2, initial_rto=1.0,
               max_rto=60.0, end_seq=math.inf)
    s.ecn = AccEcnResponse()
    s.start()
    return s


def test_sender_turns_ace_into_newly_marked_counts_across_wraps():
    s = _sender(Recorder())
    s.on_ack_ce((1, (), 5))       # unchanged: nothing reported
    s.on_ack_ce((2, (), 7))       # two marks
    s.on_ack_ce((3, (), 12))      # five more: the field went 7 -> 4, wrapping
    assert s.cc.echoes == [2, 5] and s.ecn.s_cep == 12 and s.ecn.marked == 7


def test_a_superseded_ack_is_ignored():
    s = _sender(Recorder())
    s.on_ack_ce((3, (), 6))
    s.on_ack_ce((2, (), 9))       # behind the cumulative ACK: would claim 3 marks
    assert s.cc.echoes == [1] and s.ecn.s_cep == 6


def test_a_stretch_ack_assumes_the_wraps_it_may_hide():
    # ACKs thinned (or lost): one ACK covers 10 segments and ACE moved by 2;
    # up to 10 marks may hide behind it (RFC 9768 Appendix A.2.1)
    s = _sender(Recorder())
    s.on_ack_ce((10, (), 7))
    assert s.cc.echoes == [10] and s.ecn.wraps_assumed == 8
    s.on_ack_ce((15, (), 7))      # five segments, ACE unchanged: no mark, no wrap
    assert s.cc.echoes == [10] and s.ecn.s_cep == 15


def test_the_law_with_its_own_response_is_never_asked_for_on_ecn():
    classic, own = _sender(Recorder()), _sender(OwnResponse())
    for s in (classic, own):
        for ackno in range(1, 30):
            s.on_ack_ce((ackno, (), CEP_INIT + ackno))  # every segment marked
    assert classic.cc.reactions >= 1      # RFC 3168's once per window
    assert own.cc.reactions == 0 and own.ecn.reductions == 0
    assert len(own.cc.echoes) == 29       # ... yet every ACK's marks reach it


# -- scenarios ---------------------------------------------------------------------------
def test_flow_ecn_accepts_accecn_and_prague_needs_it():
    assert ccsim.Flow("dctcp", ecn="accecn").ecn == "accecn"
    assert ccsim.Flow("prague").ecn == "accecn"
    for bad in (True, False):
        with pytest.raises(ScenarioError, match="flow.ecn"):
            ccsim.Flow("prague", ecn=bad)
    with pytest.raises(ScenarioTypeError, match="flow.ecn.*accecn"):
        ccsim.Flow("reno", ecn="accurate")


def test_accecn_flows_run_and_see_every_mark_the_queue_made():
    # no ACK is lost one way: once the transfer is complete (no ACK left in
    # flight), the sender's decoded counter is the receiver's, and the law
    # heard of every mark (a decoder that drops wraps or the receiver's
    # resets would leave them apart)
    from ccsim.packet.engine import PacketEngine
    sc = ccsim.dumbbell("20Mbps", "20ms", queue=ccsim.StepMark(K=5, limit=200), buffer=None,
                        duration="10s", seed=1,
                        flows=[ccsim.Flow("dctcp", ecn="accecn", size="10MB")])
    engine = PacketEngine(sc)
    res = engine.run()
    sender, receiver = engine.senders[0], engine.receivers[0]
    assert isinstance(sender.ecn, AccEcnResponse) and isinstance(receiver, AccEcnReceiver)
    assert res.metrics["marks"] > 100 and res.summary["fct"].notna().all()
    assert sender.ecn.s_cep - CEP_INIT == sender.ecn.marked == receiver.ce - CEP_INIT
    assert sender.ecn.reductions > 0  # DCTCP keeps RFC 3168's once-per-window response


def test_the_fluid_engine_refuses_an_own_response_law_without_a_fluid_law(scratch_registry):
    # through the hooks the fluid engine would also call on_ecn; Prague has a
    # fluid law of its own (PragueFluid), a user's law may not
    @ccsim.algorithms.register
    class Own(OwnResponse):
        name = "test-accecn-own-fluid"
        fluid = None

    sc = ccsim.dumbbell("10Mbps", "40ms", flows=[ccsim.Flow("test-accecn-own-fluid",
                                                            ecn="accecn")], duration="2s")
    with pytest.raises(ScenarioError, match=r"flows\[0\]\.algorithm.*packet"):
        ccsim.run(sc, mode="fluid")
    ok = ccsim.dumbbell("10Mbps", "40ms", flows=["prague"], duration="2s")
    assert ccsim.run(ok, mode="fluid").metrics["utilisation"] > 0.5


def test_accecn_runs_are_deterministic_logged_or_not_and_with_the_reference_sender():
    # the event log wraps the ACK path, the reference Sender is FastSender's
    # readable twin: neither may change an Accurate ECN flow's run
    from ccsim.packet.engine import PacketEngine
    sc = ccsim.dumbbell("10Mbps", "40ms", queue=ccsim.DualPI2(min_qlen_step=2), buffer=None,
                        flows=["prague", "cubic"], duration="10s", seed=3)
    cols = ["goodput_bps", "mean_rtt", "retransmits"]
    plain = ccsim.run(sc).summary[cols]
    assert ccsim.run(sc, events=True).summary[cols].equals(plain)
    assert PacketEngine(sc, sender_class=Sender).run().summary[cols].equals(plain)
