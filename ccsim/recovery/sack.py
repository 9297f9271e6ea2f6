"""SACK recovery: RFC 6675's conservative loss recovery.

Sources: M. Mathis, J. Mahdavi, S. Floyd, A. Romanow, "TCP Selective
Acknowledgment Options", RFC 2018, 1996 (the option); E. Blanton et al., "A
Conservative Loss Recovery Algorithm Based on Selective Acknowledgment (SACK)
for TCP", RFC 6675, 2012, §5 (the algorithm) and §4 (NextSeg).

* Entering (§5, step 4): on the DupThresh-th duplicate ACK, or as soon as
  IsLost(HighACK) holds — ``RecoveryPoint = HighData``; ``ssthresh`` from the
  window law and ``cwnd = ssthresh`` (no inflation); retransmit the first
  unacknowledged segment.
* On every ACK in recovery (step C): recompute ``pipe`` (SetPipe) and, while
  ``cwnd − pipe ≥ 1``, send the segment NextSeg picks:
  (1) the lowest unSACKed segment above HighRxt, below the highest SACKed one,
  that IsLost; (2) else new data; (3) else the lowest unSACKed segment above
  HighRxt below the highest SACKed one; (4) else a rescue retransmission of
  the highest unSACKed outstanding segment, if there has been none yet or the
  cumulative ACK has passed the last one (at most one per recovery).
* Leaving: the first cumulative ACK at or above RecoveryPoint.

A duplicate ACK, with SACK, is one that SACKs new data (§2), so the sender
counts no others; a new recovery may start as soon as the cumulative ACK
reaches the previous RecoveryPoint (§5.1; NewReno's stricter guard is for
senders without SACK).

Differences from the source: sequence numbers count segments; DupThresh is
fixed at 3; the retransmission timer is restarted by every ACK that advances
the cumulative ACK (RFC 6298 §5.3), as RFC 6675 leaves it. After a timeout
the scoreboard is kept, as Linux keeps its SACK marks (ccsim's receivers never
renege, so RFC 2018 §8's reason to clear it does not arise), and the sender
goes back to the first unacknowledged segment resending only what is not
SACKed (RFC 6675 §5.1). A retransmission lost again is found only by the
retransmission timer (no RACK).
"""

from __future__ import annotations

from .base import Recovery, SenderView
from .registry import register


@register
class SackRecovery(Recovery):
    """RFC 6675 loss recovery; the base of the SACK-based strategies.

    Subclasses change :meth:`enter`, :meth:`leave`, :meth:`triggered`,
    :meth:`pipe`, :meth:`next_segment`, :meth:`on_recovery_ack` or
    :meth:`on_sent` and keep the rest.

    Attributes:
        point: RecoveryPoint, one past the highest segment sent at entry.
        high_rxt: HighRxt, the highest segment retransmitted by rules 1 and 3.
        rescue: RescueRxt, or -1 before any rescue retransmission.
    """

    name = "sack"
    uses_sack = True
    owns_sending = True

    def __init__(self) -> None:
        self.point = 0
        self.high_rxt = -1
        self.rescue = -1

    def triggered(self, tcp: SenderView) -> bool:
        """RFC 6675 §5: DupThresh duplicate ACKs, or IsLost(HighACK); not in
        recovery, and not before HighACK reaches the last RecoveryPoint (§5.1)."""
        if tcp.in_recovery or tcp.snd_una < tcp.recover:
            return False
        board = tcp.scoreboard
        return tcp.dupacks >= self.dupthresh or (
            not board.is_sacked(tcp.snd_una) and board.is_lost(tcp.snd_una))

    def on_dupack(self, tcp: SenderView) -> None:
        self.on_recovery_ack(tcp)

    def on_ack(self, tcp: SenderView, acked: int) -> None:
        if tcp.snd_una >= self.point:
            self.leave(tcp)
            return
        tcp.restart_timer()
        self.on_recovery_ack(tcp)

    def enter(self, tcp: SenderView) -> None:
        """RFC 6675 §5 step 4: halve, set RecoveryPoint, retransmit."""
        self.begin(tcp)
        if not tcp.cc.controls_recovery_window:
            tcp.cc.cwnd = tcp.cc.ssthresh
        seq = self.first_retransmission(tcp)
        if seq is not None:
            tcp.retransmit(seq)
            self.on_sent(tcp, seq)

    def begin(self, tcp: SenderView) -> None:
        """The start of a recovery, before any window is set or segment
        resent: the law's reduction, RecoveryPoint (``recover``), and no
        retransmission or rescue yet."""
        tcp.signal_loss("fast")
        self.point = tcp.recover = tcp.high_tx
        self.high_rxt = tcp.snd_una
        self.rescue = -1

    def first_retransmission(self, tcp: SenderView) -> int | None:
        """The segment resent on entry: the first unacknowledged one."""
        return tcp.snd_una

    def leave(self, tcp: SenderView) -> None:
        """The cumulative ACK reached RecoveryPoint."""
        tcp.exit_recovery()

    def on_recovery_ack(self, tcp: SenderView) -> None:
        """Any ACK in recovery that does not end it (window adjustments)."""

    def pipe(self, tcp: SenderView) -> float:
        """RFC 6675 SetPipe: segments estimated in flight."""
        return tcp.scoreboard.pipe(tcp.snd_una, tcp.high_tx, self.high_rxt)

    def new_data_allowed(self, tcp: SenderView) -> bool:
        """NextSeg rule 2's condition: data is left and the receiver has room."""
        return tcp.snd_nxt < tcp.end_seq and tcp.snd_nxt - tcp.snd_una < tcp.rwnd

    def next_segment(self, tcp: SenderView) -> int | None:
        """RFC 6675 NextSeg; records HighRxt and RescueRxt as it decides."""
        board = tcp.scoreboard
        top = board.highest
        if top is not None:
            hole = board.first_hole(max(self.high_rxt + 1, tcp.snd_una), top)
            if hole is not None and board.is_lost(hole):            # rule 1
                self.high_rxt = hole
                return hole
        if self.new_data_allowed(tcp):                               # rule 2
            return tcp.snd_nxt
        if top is not None and hole is not None:                     # rule 3
            self.high_rxt = hole
            return hole
        if tcp.snd_una > self.rescue:                                # rule 4
            last = board.last_hole(tcp.snd_una, tcp.high_tx)
            if last is not None:
                self.rescue = self.point
                return last
        return None

    def send(self, tcp: SenderView) -> None:
        """Step (C): transmit while ``cwnd − pipe ≥ 1`` segment."""
        pipe = self.pipe(tcp)
        while tcp.cc.cwnd - pipe >= 1:
            seq = self.next_segment(tcp)
            if seq is None:
                return
            tcp.transmit(seq)
            self.on_sent(tcp, seq)
            pipe += 1

    def on_sent(self, tcp: SenderView, seq: int) -> None:
        """Segment ``seq`` was just sent in recovery (a hook for subclasses)."""

    def on_timeout(self, tcp: SenderView) -> None:
        self.high_rxt = -1
        self.rescue = -1
