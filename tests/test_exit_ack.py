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


# -- ns-2's agents, each against its own recv (ns-2.35) --------------------------------

def _ns2_trace(recovery, sender_class, algorithm="reno", buffer=30):
    """Flow 0's ACKs, exits and law calls in order, in ns-2's stack: ``("ack",
    una before, una after, in recovery before, recover, in recovery after,
    cwnd after, ssthresh after)``, ``("exit", cwnd, ssthresh)`` (at the exit,
    after the strategy set the window) and ``("law", acked, cwnd before,
    ssthresh before, cwnd after)``."""
    sc = ccsim.dumbbell("10Mbps", "20ms", buffer=buffer, duration="4s", seed=2, stack="ns2",
                        flows=[Flow(algorithm, recovery=recovery),
                               Flow(algorithm, recovery=recovery, start=0.5)])
    engine = PacketEngine(sc, sender_class=sender_class)
    sender = engine.senders[0]
    cc = sender.cc
    trace = []
    on_ack, exit_recovery, law_on_ack = sender.on_ack, sender.exit_recovery, cc.on_ack

    def ack_spy(ack):
        una, was, recover = sender.snd_una, sender.in_recovery, sender.recover
        on_ack(ack)
        trace.append(("ack", una, sender.snd_una, was, recover, sender.in_recovery, cc.cwnd,
                      cc.ssthresh))

    def exit_spy():
        trace.append(("exit", cc.cwnd, cc.ssthresh))
        exit_recovery()

    def law_spy(ack):
        w, s = cc.cwnd, cc.ssthresh
        law_on_ack(ack)
        trace.append(("law", ack.acked, w, s, cc.cwnd))

    sender.on_ack, sender.exit_recovery, cc.on_ack = ack_spy, exit_spy, law_spy
    for r in engine.receivers[:1]:
        r.deliver_ack = ack_spy
    engine.run()
    return sc.flow_stack(0), trace


def _per_ack(trace):
    """The trace cut into one list per ACK: what it did, then the ACK's record."""
    acks, now = [], []
    for event in trace:
        now.append(event)
        if event[0] == "ack":
            acks.append(now)
            now = []
    return acks


def _opencwnd(cwnd, ssthresh):
    """ns-2's ``TcpAgent::opencwnd`` for one new ACK (tcp.cc; ``windowOption_ 1``,
    ``increase_num_ 1.0``, no ``max_ssthresh_``, tcl/lib/ns-default.tcl): one
    segment below ``ssthresh``, else ``1/cwnd``."""
    return cwnd + 1.0 if cwnd < ssthresh else cwnd + 1.0 / cwnd


@pytest.mark.parametrize("sender_class", [Sender, FastSender])
def test_ns2_reno_opens_after_deflating_on_any_new_ack(sender_class):
    # RenoTcpAgent::recv (tcp-reno.cc): on an ACK of new data, partial or not,
    # dupwnd_ = 0 (the window, cwnd_ + dupwnd_, back to the halved cwnd_), then
    # recv_newack_helper -> opencwnd (tcp.cc). cwnd_ itself is not touched in
    # fast recovery: it is ssthresh_ as slowdown left it.
    stack, trace = _ns2_trace("reno", sender_class)
    assert stack.exit_ack is True and stack.ack_counting == "acks"
    exits = 0
    for events in _per_ack(trace):
        _, una, after, was, *_ = events[-1]
        if not (was and after > una):
            continue
        exits += 1
        kinds = [e[0] for e in events]
        assert kinds == ["exit", "law", "ack"]  # any new ACK ends it, then the law
        _, cwnd, ssthresh = events[0]
        _, acked, before, s, grown = events[1]
        assert cwnd == ssthresh and before == cwnd and s == ssthresh and acked == 1
        assert grown == pytest.approx(_opencwnd(before, s), rel=1e-12)
    assert exits >= 2


@pytest.mark.parametrize("sender_class", [Sender, FastSender])
def test_ns2_newreno_leaves_with_cwnd_and_opens_only_on_the_full_ack(sender_class):
    # NewRenoTcpAgent::recv (tcp-newreno.cc, ns-2.35's defaults): the window is
    # cwnd_ + dupwnd_, cwnd_ = ssthresh_ from the fast retransmit and dupwnd_ = 3,
    # then +1 per duplicate. A partial ACK of d segments (partialnewack,
    # partial_window_deflation_ 1): dupwnd_ -= d - 1 if dupwnd_ > d, else
    # cwnd_ -= d - dupwnd_ (at least 1) and dupwnd_ = 1; no opencwnd. An ACK at
    # or past recover_ (the highest segment sent at the fast retransmit):
    # dupwnd_ = 0 (exit_recovery_fix_ 0 leaves cwnd_), then recv_newack_helper ->
    # opencwnd.
    stack, trace = _ns2_trace("newreno", sender_class)
    assert stack.exit_ack is True and dict(stack.recovery_params) == {"exit_window": "ns2"}
    full = partial = opened = 0
    base = inflation = None
    for events in _per_ack(trace):
        _, una, after, was, recover, now, cwnd_after, ssthresh_after = events[-1]
        kinds = [e[0] for e in events]
        if not was:
            if now:  # the fast retransmit
                base, inflation = ssthresh_after, 3.0
                assert cwnd_after == base + inflation
            continue
        if after == una:  # a duplicate in recovery
            inflation += 1.0
            assert cwnd_after == base + inflation
        elif after < recover:
            partial += 1
            d = after - una
            if inflation > d:
                inflation -= d - 1
            else:
                base, inflation = max(base - (d - inflation), 1.0), 1.0
            assert kinds == ["ack"] and now  # stays in recovery, the law hears nothing
            assert cwnd_after == pytest.approx(base + inflation, rel=1e-12)
        else:
            full += 1
            assert kinds == ["exit", "law", "ack"] and not now
            _, cwnd, ssthresh = events[0]
            _, acked, before, s, grown = events[1]
            assert cwnd == pytest.approx(base, rel=1e-12) and before == cwnd and acked == 1
            if before + 1.0 <= s or before >= s:
                # ns-2's ssthresh_ is a whole number (docs/stack.md): no window sits
                # less than a segment below it, where ccsim's slow start stops at it
                assert grown == pytest.approx(_opencwnd(before, s), rel=1e-12)
                opened += 1
    assert full >= 2 and partial >= 1 and opened >= 1


def test_newreno_exit_window_is_checked():
    from ccsim.recovery.newreno import NewRenoRecovery

    with pytest.raises(ccsim.ScenarioError, match="exit_window"):
        NewRenoRecovery(exit_window="linux")
    assert ccsim.dumbbell("10Mbps", "20ms", flows=[Flow("reno", recovery="newreno")]
                          ).flow_stack(0).recovery_params == ()  # Linux's stack: RFC 6582


@pytest.mark.parametrize("sender_class", [Sender, FastSender])
def test_ns2_sack_does_not_open_on_the_exit_ack(sender_class):
    # Sack1TcpAgent::recv (tcp-sack1.cc): in fast recovery an ACK at or past
    # recover_ ends it with newack alone; opencwnd waits for the next ACK.
    stack, trace = _ns2_trace("sack", sender_class)
    assert stack.exit_ack is False
    exits = 0
    for events in _per_ack(trace):
        if events[0][0] == "exit":
            exits += 1
            assert [e[0] for e in events] == ["exit", "ack"]
    assert exits >= 2


@pytest.mark.parametrize("sender_class", [Sender, FastSender])
def test_ns2_vegas_runs_its_law_on_the_exit_ack_after_deflating(sender_class):
    # VegasTcpAgent::recv (tcp-vegas.cc): on an ACK of new data the inflated
    # cwnd_ comes back to v_newcwnd_ first, then the agent's per-RTT and per-ACK
    # window rules run on that same ACK (its recv_newack_helper has no opencwnd).
    stack, trace = _ns2_trace("vegas", sender_class, algorithm="vegas", buffer=8)
    assert stack.exit_ack is True
    exits = 0
    for events in _per_ack(trace):
        if events[0][0] != "exit":
            continue
        exits += 1
        assert [e[0] for e in events] == ["exit", "law", "ack"]
        assert events[1][2] == events[0][1] and events[1][1] == 1  # from the deflated window
    assert exits >= 1
