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

from .base import Recovery, SenderView
from .registry import register


@register
class NewRenoRecovery(Recovery):
    """RFC 6582 NewReno fast recovery."""

    name = "newreno"

    def __init__(self) -> None:
        self.partial_seen = False

    def on_dupack(self, tcp: SenderView) -> None:
        if tcp.in_recovery:
            tcp.cc.cwnd += 1.0
        elif self.triggered(tcp):
            tcp.recover = tcp.high_tx
            tcp.signal_loss("fast")
            tcp.retransmit(tcp.snd_una)
            tcp.cc.cwnd = tcp.cc.ssthresh + self.dupthresh
            tcp.in_recovery = True
            self.partial_seen = False

    def on_ack(self, tcp: SenderView, acked: int) -> None:
        cc = tcp.cc
        if tcp.snd_una >= tcp.recover:  # full acknowledgment
            flight = tcp.snd_nxt - tcp.snd_una
            cc.cwnd = min(cc.ssthresh, max(flight, 1) + 1.0)
            tcp.in_recovery = False
            return
        tcp.retransmit(tcp.snd_una)
        cc.cwnd = max(cc.cwnd - acked, 0.0) + (1.0 if acked >= 1 else 0.0)
        if not self.partial_seen:
            tcp.restart_timer()
            self.partial_seen = True
