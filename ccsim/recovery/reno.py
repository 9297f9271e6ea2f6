"""Reno recovery: fast retransmit and fast recovery (RFC 5681 §3.2).

Source: M. Allman, V. Paxson, E. Blanton, RFC 5681, 2009, §3.2 steps 1–6;
first in Jacobson's 1990 end2end-interest note (4.3BSD-Reno).

* Third duplicate ACK: ``ssthresh`` from the window law, retransmit the first
  unacknowledged segment, ``cwnd = ssthresh + 3`` (the three segments that
  left the network).
* Each further duplicate ACK: ``cwnd += 1`` (window inflation), which lets a
  new segment out once enough have left.
* The first ACK of new data: ``cwnd = ssthresh`` (deflation) and recovery
  ends — even when that ACK is partial, which is why several losses in one
  window send Reno into a second halving or a timeout (Fall & Floyd 1996).

Differences from the source: none in the rules above. Duplicate ACKs after a
timeout are ignored until the data outstanding at the timeout is acknowledged
(the sender's ``recover`` guard from RFC 6582 §3.2), so go-back-N duplicates
cannot start a spurious recovery.
"""

from __future__ import annotations

from .base import Recovery, SenderView
from .registry import register


@register
class RenoRecovery(Recovery):
    """RFC 5681 fast retransmit / fast recovery."""

    name = "reno"
    fluid_multiple_loss = "halve_each"  # each partial ACK ends recovery (Fall & Floyd 1996)

    def on_dupack(self, tcp: SenderView) -> None:
        """Step 4: inflate by the segment that left the network."""
        tcp.cc.cwnd += 1.0

    def enter(self, tcp: SenderView) -> None:
        """Fast retransmit and inflate: RFC 5681 §3.2 steps 2–3."""
        tcp.signal_loss("fast")
        tcp.retransmit(tcp.snd_una)
        tcp.cc.cwnd = tcp.cc.ssthresh + self.dupthresh

    def on_ack(self, tcp: SenderView, acked: int) -> None:
        tcp.cc.cwnd = tcp.cc.ssthresh
        tcp.exit_recovery()
