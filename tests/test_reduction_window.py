"""``Scenario.reduction_window``: which reductions of ``ssthresh`` hold for
their window of data. Linux reduces once per window whatever began the
reduction (``tcp_enter_recovery``, ``tcp_enter_loss``), ns-2 only skips a
second halving after ECN, ns-3 reduces at every loss."""

from __future__ import annotations

import pytest

import ccsim
from ccsim.packet.engine import PacketEngine


def _spied(flow, rw, **kw):
    """The engine, its sender and a list of ``(kind, snd_una, ssthresh after)``
    of every call of the law's ``on_loss``."""
    sc = ccsim.dumbbell(flows=[flow], seed=1, reduction_window=rw, **kw)
    engine = PacketEngine(sc)
    sender = engine.senders[0]
    calls, original = [], sender.cc.on_loss

    def spy(loss):
        original(loss)
        calls.append((loss.kind, sender.snd_una, sender.cc.ssthresh))

    sender.cc.on_loss = spy
    return engine, sender, calls


@pytest.mark.parametrize("rw", ["all", "ecn", "none"])
def test_a_timeout_during_a_fast_recovery(rw):
    # Segment 50 of a 60-segment flow is lost twice: the fast retransmit is lost
    # too, and with no data after it nothing can show that (RACK needs a later
    # delivery), so the timer fires during the recovery. Linux (tcp_enter_loss:
    # the state is Recovery and snd_una is below high_seq) keeps the recovery's
    # ssthresh, 30 (half the window of 60); ns-2 and ns-3 halve the window PRR
    # has left then (7 segments) again.
    engine, sender, calls = _spied(ccsim.Flow("reno", size=60 * 1460, drop_segments=(50, 50)),
                                   rw, bandwidth="10Mbps", rtt="20ms", duration="5s")
    engine.run()
    assert [k for _, k, *_ in sender.loss_log] == ["recovery", "timeout"]
    _, _, _, cwnd_at_timeout, ssthresh_at_timeout = sender.loss_log[1]
    assert ssthresh_at_timeout == 30.0 and cwnd_at_timeout < 30.0
    if rw == "all":
        assert [c[0] for c in calls] == ["fast"]
        assert sender.cc.ssthresh == 30.0
    else:
        assert [c[0] for c in calls] == ["fast", "timeout"]
        assert sender.cc.ssthresh == max(cwnd_at_timeout / 2, 2.0)
    assert sender.done_at is not None


@pytest.mark.parametrize("rw", ["all", "ecn", "none"])
def test_a_loss_in_the_window_of_an_ecn_reduction(rw):
    # A step-marking queue echoes CE at 38 ms (snd_una 6, 22 segments out): the
    # default reaction halves the window of 16 to 8. Segment 8, sent before the
    # reaction, was lost: its recovery starts with snd_una 8 < 22, within the
    # reduction's window. Linux (tcp_enter_recovery: already in a cwnd
    # reduction, CWR) and ns-2 (dupack_action after CWND_ACTION_ECN) do not
    # reduce again; ns-3's EnterRecovery does.
    engine, sender, calls = _spied(ccsim.Flow("reno", ecn=True, drop_segments=(8,)), rw,
                                   bandwidth="20Mbps", rtt="20ms", duration="0.2s",
                                   queue=ccsim.StepMark(K=5, limit=200), buffer=None)
    engine.run()
    first_ecn = calls[0]
    assert first_ecn == ("fast", 6, 8.0)  # the ECN reaction (a fast loss's rule)
    assert sender.recoveries >= 1 and sender.loss_log[0][1:3] == ("recovery", 8)
    in_window = [c for c in calls[1:] if c[1] < 22]
    if rw == "none":
        assert in_window == [("fast", 8, pytest.approx(sender.loss_log[0][3] / 2))]
    else:
        assert in_window == []


def test_the_knob_is_checked():
    with pytest.raises(ccsim.ScenarioError, match="reduction_window"):
        ccsim.dumbbell("10Mbps", "20ms", flows=["reno"], reduction_window="linux")


def test_a_timeout_during_renos_recovery_keeps_ssthresh_in_linux():
    # Reno's strategy moves no recovery point (it ends at the first new ACK), so the
    # window a timeout falls in is the one the recovery began with (Linux's high_seq).
    engine, sender, calls = _spied(
        ccsim.Flow("reno", recovery="reno", size=60 * 1460, drop_segments=(50, 50)), "all",
        bandwidth="10Mbps", rtt="20ms", duration="5s")
    engine.run()
    assert [k for _, k, *_ in sender.loss_log] == ["recovery", "timeout"]
    assert [c[0] for c in calls] == ["fast"] and sender.cc.ssthresh == calls[0][2]
