"""FACK: forward acknowledgement (Mathis & Mahdavi 1996).

Source: M. Mathis, J. Mahdavi, "Forward Acknowledgement: Refining TCP
Congestion Control", SIGCOMM 1996, §3.

* ``snd.fack`` is the forward-most segment the receiver holds: one past the
  highest SACKed segment (or ``snd.una``).
* Data outstanding in the network: ``awnd = snd.nxt − snd.fack +
  retran_data``, where ``retran_data`` counts retransmissions not yet
  acknowledged or SACKed; the sender transmits while ``awnd < cwnd``.
* Recovery starts on three duplicate ACKs or earlier, as soon as the
  reassembly gap ``snd.fack − snd.una`` exceeds three segments.
* Every unSACKed segment below ``snd.fack`` is taken as lost and resent in
  order, then new data follows.
* The window is halved at once on entry (``cwnd = ssthresh``); recovery ends
  when the cumulative ACK reaches the highest segment sent at entry.

Differences from the source: the paper's optional "overdamping" and
"rampdown" refinements (the latter is Rate-Halving,
:mod:`ccsim.recovery.rate_halving`) are not applied; segments count
sequence space; timer and timeout handling are those of
:mod:`ccsim.recovery.sack`.
"""

from __future__ import annotations

from .base import SenderView
from .registry import register
from .sack import SackRecovery


@register
class FackRecovery(SackRecovery):
    """Mathis & Mahdavi's FACK recovery."""

    name = "fack"

    def __init__(self) -> None:
        super().__init__()
        self.resent: set[int] = set()  # retransmissions still in the network

    @staticmethod
    def fack(tcp: SenderView) -> int:
        """``snd.fack``: one past the forward-most SACKed segment."""
        top = tcp.scoreboard.highest
        return tcp.snd_una if top is None else max(top, tcp.snd_una)

    def triggered(self, tcp: SenderView) -> bool:
        if tcp.in_recovery or tcp.snd_una < tcp.recover:
            return False
        return tcp.dupacks >= self.dupthresh or self.fack(tcp) - tcp.snd_una > self.dupthresh

    def enter(self, tcp: SenderView) -> None:
        self.resent = set()
        super().enter(tcp)

    def on_sent(self, tcp: SenderView, seq: int) -> None:
        if seq < self.fack(tcp):  # a hole resent (new data lies at or above fack)
            self.resent.add(seq)

    def pipe(self, tcp: SenderView) -> float:
        """``awnd = snd.nxt − snd.fack + retran_data``."""
        board = tcp.scoreboard
        self.resent = {s for s in self.resent
                       if s >= tcp.snd_una and not board.is_sacked(s)}
        return tcp.snd_nxt - self.fack(tcp) + len(self.resent)

    def next_segment(self, tcp: SenderView) -> int | None:
        """The next hole below ``snd.fack`` not yet resent, else new data."""
        hole = tcp.scoreboard.first_hole(max(self.high_rxt + 1, tcp.snd_una), self.fack(tcp))
        if hole is not None:
            self.high_rxt = hole
            return hole
        return tcp.snd_nxt if self.new_data_allowed(tcp) else None
