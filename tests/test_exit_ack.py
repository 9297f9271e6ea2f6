"""``Scenario.exit_ack``: the ACK that ends a fast recovery reaches the
window law (Linux's ``tcp_ack``: ``tcp_fastretrans_alert`` leaves the
recovery, then ``tcp_cong_control`` calls the module's ``cong_avoid`` with
that ACK's ``acked_sacked``), or it does not (ns-3's ``ProcessAck``), in
both senders alike."""

from __future__ import annotations

import pytest

import ccsim
from ccsim import Flow
from ccsim.packet.engine import PacketEngine
from ccsim.packet.fast_path import FastSender
from ccsim.packet.tcp import Sender


def _exits_and_acks(sc, sender_class):
    """Flow 0's fast-recovery exits, each ``(time, segments that ACK delivered,
    ssthresh)``, and the law's ``on_ack`` calls ``(time, acked, cwnd before)``."""
    engine = PacketEngine(sc, sender_class=sender_class)
    sender = engine.senders[0]
    exits, acks = [], []
    exit_recovery, on_ack = sender.exit_recovery, sender.cc.on_ack

    def exit_spy():
        exits.append((sender.clock.now, sender.ack_delivered, sender.cc.ssthresh))
        exit_recovery()

    def ack_spy(ack):
        acks.append((ack.now, ack.acked, sender.cc.cwnd))
        on_ack(ack)

    sender.exit_recovery, sender.cc.on_ack = exit_spy, ack_spy
    engine.run()
    return exits, acks


def _path(**kw):
    # two Reno flows through 30 packets: a few recoveries each, with SACK blocks
    return ccsim.dumbbell("10Mbps", "20ms", buffer=30, duration="4s", seed=2,
                          flows=[Flow("reno"), Flow("reno", start=0.5)], **kw)


@pytest.mark.parametrize("sender_class", [Sender, FastSender])
def test_linux_hands_the_exit_ack_to_the_law(sender_class):
    sc = _path()
    assert sc.flow_stack(0).exit_ack is True  # the Linux profile's
    exits, acks = _exits_and_acks(sc, sender_class)
    assert len(exits) >= 2
    for t, delivered, ssthresh in exits:
        # the very ACK that ended the recovery is the law's next on_ack, with
        # what it delivered (acked_sacked: segments SACKed before not again),
        # from cwnd = ssthresh (tcp_end_cwnd_reduction)
        after = [a for a in acks if a[0] >= t]
        assert after and after[0] == (t, delivered, ssthresh)


@pytest.mark.parametrize("sender_class", [Sender, FastSender])
def test_without_it_the_law_hears_only_the_next_ack(sender_class):
    # ns-3's ProcessAck: ExitRecovery, no IncreaseWindow, on the exit ACK
    exits, acks = _exits_and_acks(_path(exit_ack=False), sender_class)
    assert len(exits) >= 2
    times = {a[0] for a in acks}
    assert not any(t in times for t, _, _ in exits)
    assert ccsim.dumbbell("10Mbps", "20ms", flows=["reno"],
                          stack="ns3").flow_stack(0).exit_ack is False


def test_the_exit_ack_moves_the_result_and_the_knob_is_checked():
    on, off = (ccsim.run(_path(exit_ack=x), mode="packet").summary for x in (True, False))
    assert not on.goodput_bps.equals(off.goodput_bps)
    with pytest.raises(ccsim.ScenarioTypeError, match="exit_ack"):
        _path(exit_ack="yes")


@pytest.mark.parametrize("sender_class", [Sender, FastSender])
def test_without_sack_the_duplicates_count_as_delivered(sender_class):
    # Linux's Reno mode (no SACK): each duplicate ACK counts one segment delivered
    # (tcp_add_reno_sack) and a cumulative ACK of k segments delivers
    # max(k − sacked_out, 1), sacked_out shrinking by k − 1 (tcp_remove_reno_sacks):
    # the exit ACK hands cong_avoid that, not the k segments it acknowledges.
    sc = ccsim.dumbbell("10Mbps", "20ms", buffer=30, duration="4s", seed=2, sack=False,
                        flows=[Flow("reno", recovery="newreno"),
                               Flow("reno", recovery="newreno", start=0.5)])
    engine = PacketEngine(sc, sender_class=sender_class)
    sender = engine.senders[0]
    on_ack, law_on_ack = sender.on_ack, sender.cc.on_ack
    expected, seen = [], []
    sacked = [0]

    def ack_spy(ack):
        una, was = sender.snd_una, sender.in_recovery
        on_ack(ack)
        k = sender.snd_una - una
        if not was and sender.in_recovery:  # entered on this duplicate
            sacked[0] = sender.dupacks
        elif was and k == 0:
            sacked[0] += 1
        elif was and k > 0:
            delivered = max(k - sacked[0], 1)
            sacked[0] = max(sacked[0] - (k - 1), 0)
            if not sender.in_recovery:
                expected.append((sender.clock.now, delivered))

    def law_spy(ack):
        seen.append((ack.now, ack.acked))
        law_on_ack(ack)

    sender.on_ack, sender.cc.on_ack = ack_spy, law_spy
    for r in engine.receivers[:1]:
        r.deliver_ack = ack_spy
    engine.run()
    assert len(expected) >= 2
    assert any(d < 5 for _, d in expected)  # far fewer than the window acknowledged
    for t, delivered in expected:
        assert (t, delivered) in seen
