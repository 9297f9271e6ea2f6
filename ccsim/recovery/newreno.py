"""NewReno recovery: stay in fast recovery across partial ACKs (RFC 6582).

Source: T. Henderson, S. Floyd, A. Gurtov, Y. Nishida, RFC 6582, 2012, §3.2.

* Entering (step 2): ``recover`` = highest segment sent; ``ssthresh`` from the
  window law; retransmit the first unacknowledged segment;
  ``cwnd = ssthresh + 3``.
* Further duplicate ACKs (step 4): ``cwnd += 1``.
* A partial ACK (step 5) — new data acknowledged but not all up to
  ``recover``: retransmit the next unacknowledged segment, deflate ``cwnd``
  by the amount acknowledged and add one segment back if at least one was
  acknowledged; reset the retransmission timer on the first partial ACK only
  (the "Impatient" variant the RFC specifies).
* A full ACK (step 6): ``cwnd = min(ssthresh, max(FlightSize, 1) + 1)``
  (option 1 of the RFC) and recovery ends.

So ``k`` losses in one window are repaired in about ``k`` RTTs without a
timeout, unless those RTTs outlast the retransmission timer.

Differences from the source: sequence numbers count segments, so "one SMSS"
is one segment; the RFC's optional heuristics of §4.2 for entering recovery
after a timeout are not used (the plain ``recover`` check is).
"""

from __future__ import annotations

from .base import SenderView
from .registry import register
from .reno import RenoRecovery


@register
class NewRenoRecovery(RenoRecovery):
    """RFC 6582 NewReno fast recovery: Reno's, kept open across partial ACKs."""

    name = "newreno"
    fluid_multiple_loss = "rtt_each"  # RFC 6582: one hole per partial ACK, one per RTT

    def __init__(self) -> None:
        self.partial_seen = False

    def enter(self, tcp: SenderView) -> None:
        """RFC 6582 step 2: mark ``recover``, then Reno's entry."""
        tcp.recover = tcp.high_tx
        self.partial_seen = False
        super().enter(tcp)

    def on_ack(self, tcp: SenderView, acked: int) -> None:
        if tcp.snd_una >= tcp.recover:
            self.full_ack(tcp)
        else:
            self.partial_ack(tcp, acked)

    def full_ack(self, tcp: SenderView) -> None:
        """Step 6: ``cwnd = min(ssthresh, max(FlightSize, 1) + 1)``; recovery ends."""
        cc = tcp.cc
        flight = tcp.snd_nxt - tcp.snd_una
        cc.cwnd = min(cc.ssthresh, max(flight, 1) + 1.0)
        tcp.exit_recovery()

    def partial_ack(self, tcp: SenderView, acked: int) -> None:
        """Step 5: resend the next hole, deflate by what was acknowledged."""
        self.repair_next_hole(tcp)
        cc = tcp.cc
        cc.cwnd = max(cc.cwnd - acked, 0.0) + (1.0 if acked >= 1 else 0.0)

    def repair_next_hole(self, tcp: SenderView) -> None:
        """Resend the first unacknowledged segment; restart the timer on the
        first partial ACK only (the "Impatient" variant)."""
        tcp.retransmit(tcp.snd_una)
        if not self.partial_seen:
            tcp.restart_timer()
            self.partial_seen = True
