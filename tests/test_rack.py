"""RACK loss detection (ccsim.recovery.rack) and the PRR recovery that uses it.

RFC 8985 §6.2, restated: when a segment is delivered, every segment that was
sent before it and is neither acknowledged nor SACKed is lost (ccsim never
reorders, so the reordering window is 0). "Sent before" is about the latest
transmission of each segment, so a retransmission lost again is found once
something sent after it arrives. Linux counts what is in flight as
``packets_out − sacked_out − lost_out + retrans_out``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import ccsim
from ccsim.recovery.rack import Rack
from ccsim.recovery.scoreboard import Scoreboard

sys.path.insert(0, str(Path(__file__).parent))
from test_sack_family import watch  # noqa: E402


class Wire:
    """A sender's transmission records, kept by hand: ``sent[seq]`` is the
    latest transmission as ``(time, resent, _, _, index)``."""

    def __init__(self) -> None:
        self.rack, self.board = Rack(), Scoreboard()
        self.sent: dict[int, tuple] = {}
        self.index = 0
        self.una = 0

    def send(self, seq: int, t: float = 0.0) -> None:
        self.index += 1
        self.sent[seq] = (t, seq in self.sent, 0, 0, self.index)
        self.rack.on_sent(self.index, seq)

    def sack(self, start: int, end: int, t: float = 1.0, min_rtt: float = 0.1) -> bool:
        """Segments [start, end) are SACKed at time t; RACK judges."""
        new: list[tuple[int, int]] = []
        self.board.update(self.una, ((start, end),), new)
        return self.rack.on_ack(self.sent, self.una, self.una, new, self.board, t, min_rtt)


def test_segments_sent_before_a_delivered_one_are_lost():
    w = Wire()
    for seq in range(10):
        w.send(seq)
    assert w.sack(5, 6) is False  # first transmissions only: no lost retransmission
    assert w.rack.lost == [0, 1, 2, 3, 4]
    assert w.rack.pipe(0, 10, w.board) == 10 - 1 - 5  # 6..9 in flight


def test_a_retransmission_is_lost_only_once_something_sent_after_it_arrives():
    w = Wire()
    for seq in range(10):
        w.send(seq)
    w.sack(3, 4)                      # 0, 1, 2 lost
    w.send(0)                         # resent: no longer waiting
    assert w.rack.lost == [1, 2]
    w.sack(9, 10)                     # sent before the resend of 0: 0 is not judged again
    assert 0 not in w.rack.lost and w.rack.lost == [1, 2, 4, 5, 6, 7, 8]
    w.send(1)                         # sent after the resend of 0
    assert w.sack(1, 2) is True       # ... arrives: the resend of 0 was lost
    assert w.rack.lost == [0, 2, 4, 5, 6, 7, 8]


def test_an_ack_too_early_for_the_retransmission_dates_nothing():
    # RFC 8985 §6.2 step 2: delivered less than min_rtt after it was resent, so it
    # is the original that arrived; the resend's place in the order says nothing.
    w = Wire()
    for seq in range(4):
        w.send(seq, t=0.0)
    w.send(0, t=0.95)                 # a spurious resend: index 5, after 1..3
    w.sack(0, 1, t=1.0, min_rtt=0.1)  # arrives 0.05 s after the resend
    assert w.rack.lost == [] and w.rack.latest == -1


def test_forget_and_mark_at_timeout():
    w = Wire()
    for seq in range(10):
        w.send(seq)
    w.sack(4, 6)
    w.rack.on_timeout(2, 10, w.board)   # a timeout with 0, 1 acknowledged
    assert w.rack.lost == [2, 3, 6, 7, 8, 9] and not w.rack.queue
    assert w.rack.pipe(2, 10, w.board) == 0
    w.una = 3
    w.board.update(3, ())
    w.sack(7, 8, t=0.05)              # some were still in flight after all
    assert w.rack.lost == [3, 6, 8, 9]


@pytest.mark.parametrize("recovery, timeouts", [("sack", 1), ("fack", 1), ("prr", 0)])
def test_a_retransmission_lost_again(recovery, timeouts):
    # Segment 100 and its fast retransmission are both dropped. RFC 6675 and FACK
    # have no way to see the second loss and wait for the timer; RACK sees it when
    # segments sent after the retransmission are SACKed, and PRR resends 100 again
    # within the same recovery (Linux re-arms the timer on resending the head).
    spy = watch(ccsim.dumbbell("10Mbps", "100ms", buffer=200, duration="3s", seed=1,
                               flows=[ccsim.Flow("reno", recovery=recovery,
                                                 drop_segments=[100, 100])]))
    sends = [tx for tx in spy.tx if tx["seq"] == 100]
    assert spy.sender.timeouts == timeouts and spy.sender.recoveries == 1
    assert len(sends) == 3 and sends[1]["in_recovery"]
    assert sends[2]["in_recovery"] is (timeouts == 0)


def test_a_retransmission_lost_after_a_timeout_starts_a_recovery():
    # The last ten segments of a 40-segment transfer are dropped, so no duplicate ACKs
    # come and the timer fires; segment 31's first resend is dropped too. Linux
    # (tcp_fastretrans_alert) leaves the loss phase for a recovery, with a second
    # reduction, once RACK finds that resend lost; RFC 6675 times out again.
    def run(recovery):
        flow = ccsim.Flow("reno", recovery=recovery, size=40 * 1460,
                          drop_segments=list(range(30, 40)) + [31])
        # no tail loss probe: it would go at the RTO's time instead of the timeout (as
        # Linux's does) and its SACK would start the recovery with no timeout at all
        return watch(ccsim.dumbbell("10Mbps", "100ms", buffer=200, duration="5s", seed=1,
                                    flows=[flow], tail_loss_probe=False))
    sack, prr = run("sack"), run("prr")
    assert (sack.sender.timeouts, sack.sender.recoveries) == (2, 0)
    assert (prr.sender.timeouts, prr.sender.recoveries) == (1, 1)
    entry = prr.enters[0]
    assert entry["una"] == 31 and prr.tx[entry["n_tx"]]["seq"] == 31
    # the second reduction: below the ssthresh the timeout set (the loss log
    # holds each loss's state before the law reacts)
    (_, kind, _, _, after_timeout) = prr.sender.loss_log[1]
    assert kind == "recovery" and entry["ssthresh"] < after_timeout
    # the lost resend goes again at the recovery's start, before RFC 6675's second
    # timeout (which of the two transfers ends first then depends on the windows)
    assert entry["t"] < sack.timeouts[1][1]


def test_rack_without_sack_is_refused_at_registration():
    # A strategy's declared needs are checked when it is registered, naming the
    # attribute, not at its first timeout.
    from ccsim.recovery.base import Recovery

    class NoSackRack(Recovery):
        name = "no-sack-rack"
        detector = Rack

    with pytest.raises(ccsim.ScenarioTypeError, match=r"NoSackRack\.detector.*Rack.*uses_sack"):
        ccsim.recovery.register(NoSackRack)
    assert "no-sack-rack" not in ccsim.recovery.names()


def test_the_sender_knows_no_detector_by_name():
    # The sender runs whatever loss detector a strategy declares: RACK is named
    # only by the strategy that uses it.
    # (its docstrings may name RACK as an example: the code must not)
    import ast
    import inspect

    from ccsim.packet import fast_path, tcp
    for module in (tcp, fast_path):
        names = set()
        for node in ast.walk(ast.parse(inspect.getsource(module))):
            if isinstance(node, ast.Name):
                names.add(node.id)
            elif isinstance(node, ast.Attribute):
                names.add(node.attr)
            elif isinstance(node, ast.ImportFrom):
                names.add(node.module or "")
                names.update(alias.name for alias in node.names)
        assert not [n for n in names if "rack" in n.lower()], module.__name__


def test_a_strategy_of_ones_own_runs_its_detector(scratch_recovery_registry):
    # A detector declared by a user's strategy is driven through the declared
    # interface: one that delegates to RACK and counts the calls gives PRR's
    # results exactly, and every hook the sender owes it was called.
    from ccsim.recovery.prr import PrrRecovery

    calls = {"on_sent": 0, "on_ack": 0, "on_timeout": 0}

    class CountingRack(Rack):
        def on_sent(self, index, seq):
            calls["on_sent"] += 1
            super().on_sent(index, seq)

        def on_ack(self, *args):
            calls["on_ack"] += 1
            return super().on_ack(*args)

        def on_timeout(self, una, high, board):
            calls["on_timeout"] += 1
            super().on_timeout(una, high, board)

    @ccsim.recovery.register
    class CountingPrr(PrrRecovery):
        name = "counting-prr"
        detector = CountingRack

    def run(recovery):
        flow = ccsim.Flow("reno", recovery=recovery, size=40 * 1460,
                          drop_segments=list(range(30, 40)) + [31])
        # no tail loss probe, which would repair the tail before any timeout
        return ccsim.run(ccsim.dumbbell("10Mbps", "100ms", buffer=200, duration="5s", seed=1,
                                        flows=[flow], tail_loss_probe=False), events=True)
    mine, prr = run("counting-prr"), run("prr")
    assert mine.events.equals(prr.events)
    sends = (prr.events["event"].isin(["sent", "retransmitted"])).sum()
    acks = (prr.events["event"] == "acked").sum()
    assert calls == {"on_sent": sends, "on_ack": acks, "on_timeout": 1}
