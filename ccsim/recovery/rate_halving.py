"""Rate-Halving: reduce the window smoothly during recovery (Mathis et al. 1999).

Source: M. Mathis, J. Semke, J. Mahdavi, K. Lahey, "The Rate-Halving
Algorithm for TCP Congestion Control", draft-mathis-tcp-ratehalving-00,
1999; as summarised in Lai & Yao (§3.2) and RFC 6937 §1.

Instead of halving ``cwnd`` at once and then waiting for half a window of
duplicate ACKs (Reno), the sender keeps sending through the whole recovery at
one segment for every two segments delivered: ``cwnd`` falls by half a
segment per segment delivered (``cwnd −= DeliveredData / 2``, from the
flight size at entry) and the sender
transmits while ``cwnd − pipe ≥ 1``, so after one RTT of ACKs the window has
halved without a pause or a burst and self-clocking never stops. Which
segment goes out is RFC 6675's NextSeg over the SACK scoreboard
(:mod:`ccsim.recovery.sack`). When recovery ends, ``ssthresh`` takes the
window reached, so a recovery that saw more losses (and so fewer deliveries)
leaves a smaller window.

Differences from the source: the reduction starts from ``min(cwnd,
FlightSize)``, so a window the receiver window kept unused is not carried
into recovery; the draft's "bounding parameters" that limit
how far ``cwnd`` may fall are not modelled (the window only stops at one
segment); ``pipe`` is RFC 6675's rather than the draft's own estimate.
"""

from __future__ import annotations

from .base import SenderView
from .registry import register
from .sack import SackRecovery


@register
class RateHalvingRecovery(SackRecovery):
    """Rate-Halving over SACK recovery."""

    name = "rate-halving"

    def enter(self, tcp: SenderView) -> None:
        flight = min(tcp.cc.cwnd, tcp.snd_nxt - tcp.snd_una)
        super().enter(tcp)    # ssthresh from the law, the fast retransmit
        tcp.cc.cwnd = flight  # ... but the window comes down gradually

    def on_recovery_ack(self, tcp: SenderView) -> None:
        tcp.cc.cwnd = max(tcp.cc.cwnd - tcp.ack_delivered / 2.0, 1.0)

    def on_ack(self, tcp: SenderView, acked: int) -> None:
        if tcp.snd_una < self.point:
            super().on_ack(tcp, acked)
            return
        self.on_recovery_ack(tcp)  # the last ACK of recovery delivers too
        self.leave(tcp)

    def leave(self, tcp: SenderView) -> None:
        tcp.set_ssthresh(max(tcp.cc.cwnd, 2.0))
        tcp.exit_recovery()
