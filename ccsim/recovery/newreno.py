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

``exit_window="ns2"``: ns-2's NewReno agent (tcp-newreno.cc, ns-2.35's
defaults ``partial_window_deflation_ 1``, ``exit_recovery_fix_ 0``). Its
window is ``cwnd_ + dupwnd_``: ``cwnd_`` halved at the fast retransmit,
``dupwnd_`` the inflation (3, then one per further duplicate). A partial
ACK of ``d`` segments takes ``d − 1`` from ``dupwnd_`` if ``dupwnd_ > d``,
else takes ``d − dupwnd_`` from ``cwnd_`` (not below 1) and leaves
``dupwnd_ = 1``: the RFC's ``cwnd − d + 1``, split in two. A full ACK sets
``dupwnd_ = 0``: the window is ``cwnd_``, ``ssthresh`` unless a partial ACK
acknowledged more than the inflation.

So ``k`` losses in one window are repaired in about ``k`` RTTs without a
timeout, unless those RTTs outlast the retransmission timer.

Differences from the source: sequence numbers count segments, so "one SMSS"
is one segment; the RFC's optional heuristics of §4.2 for entering recovery
after a timeout are not used (the plain ``recover`` check is). With
``exit_window="ns2"`` ns-2's ``cwnd_`` starts at ``ssthresh`` as the window
law set it (ns-2 truncates ``ssthresh_`` to whole segments, ccsim does not).
"""

from __future__ import annotations

from ..errors import ScenarioError
from .base import SenderView
from .registry import register
from .reno import RenoRecovery


@register
class NewRenoRecovery(RenoRecovery):
    """RFC 6582 NewReno fast recovery: Reno's, kept open across partial ACKs."""

    name = "newreno"
    fluid_multiple_loss = "rtt_each"  # RFC 6582: one hole per partial ACK, one per RTT

    def __init__(self, exit_window: str = "rfc6582") -> None:
        if exit_window not in ("rfc6582", "ns2"):
            raise ScenarioError("exit_window", exit_window, "'rfc6582' or 'ns2'")
        self.ns2 = exit_window == "ns2"
        self.partial_seen = False
        self.base = 0.0       # ns-2's cwnd_: the window less its inflation (segments)
        self.inflation = 0.0  # ns-2's dupwnd_ (segments)

    def enter(self, tcp: SenderView) -> None:
        """RFC 6582 step 2: mark ``recover``, then Reno's entry."""
        tcp.recover = tcp.high_tx
        self.partial_seen = False
        super().enter(tcp)
        self.base, self.inflation = tcp.cc.ssthresh, float(self.dupthresh)

    def on_dupack(self, tcp: SenderView) -> None:
        """Step 4: inflate by the segment that left the network."""
        super().on_dupack(tcp)
        self.inflation += 1.0

    def on_ack(self, tcp: SenderView, acked: int) -> None:
        if tcp.snd_una >= tcp.recover:
            self.full_ack(tcp)
        else:
            self.partial_ack(tcp, acked)

    def full_ack(self, tcp: SenderView) -> None:
        """Step 6: ``cwnd = min(ssthresh, max(FlightSize, 1) + 1)``; recovery
        ends. ns-2: ``cwnd_``, the window without its inflation."""
        cc = tcp.cc
        if self.ns2:
            cc.cwnd = self.base
        else:
            flight = tcp.snd_nxt - tcp.snd_una
            cc.cwnd = min(cc.ssthresh, max(flight, 1) + 1.0)
        tcp.exit_recovery()

    def partial_ack(self, tcp: SenderView, acked: int) -> None:
        """Step 5: resend the next hole, deflate by what was acknowledged
        (ns-2: from the inflation first, then from ``cwnd_``)."""
        self.repair_next_hole(tcp)
        cc = tcp.cc
        if self.inflation > acked:
            self.inflation -= acked - 1
        else:
            self.base = max(self.base - (acked - self.inflation), 1.0)
            self.inflation = 1.0
        if self.ns2:
            cc.cwnd = self.base + self.inflation
        else:
            cc.cwnd = max(cc.cwnd - acked, 0.0) + (1.0 if acked >= 1 else 0.0)

    def repair_next_hole(self, tcp: SenderView) -> None:
        """Resend the first unacknowledged segment; restart the timer on the
        first partial ACK only (the "Impatient" variant)."""
        tcp.retransmit(tcp.snd_una)
        if not self.partial_seen:
            tcp.restart_timer()
            self.partial_seen = True
