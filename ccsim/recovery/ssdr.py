"""SSDR's dynamic recovery (Wang & Williamson 1998), for senders without SACK.

Source: H. Wang, C. L. Williamson, "A New Scheme for TCP Congestion Control:
Smooth-Start and Dynamic Recovery", MASCOTS 1998; as summarised by Lai & Yao
(Lai & Yao, §3.3): dynamic recovery "adds a new damping phase that performs
as Rate-Halving does in fast recovery", uses "a variable-length recovery
period, while also sending new packets to probe the new equilibrium", and
needs no change at the receiver.

* Entering on the third duplicate ACK (as NewReno, with ``recover`` = the
  highest segment sent): ``ssthresh`` from the window law, retransmit the
  first unacknowledged segment; ``cwnd`` is not cut at once.
* Damping: each duplicate ACK means a segment left the network; ``cwnd``
  falls by half a segment per duplicate ACK until it reaches ``ssthresh`` and
  new data is sent while the estimated flight ``snd.nxt − snd.una −
  dupacks`` is below ``cwnd`` — one new segment per two duplicate ACKs, then
  one per duplicate ACK.
* A partial ACK retransmits the next hole (NewReno's rule, so recovery
  lasts as many RTTs as there are losses) and resets the timer the first
  time; the full ACK ends recovery with ``cwnd = ssthresh``.

Differences from the source: the original paper was not available to us; the
rules above follow Lai & Yao's description and NewReno (RFC 6582) for hole
repair, and are a reconstruction, not a transcription.
"""

from __future__ import annotations

from .base import SenderView
from .newreno import NewRenoRecovery
from .registry import register


@register
class SsdrRecovery(NewRenoRecovery):
    """SSDR's dynamic recovery: NewReno repair with rate-halving damping."""

    name = "ssdr"
    owns_sending = True

    def on_dupack(self, tcp: SenderView) -> None:
        """Damping: half a segment per duplicate ACK."""
        tcp.cc.cwnd = max(tcp.cc.cwnd - 0.5, tcp.cc.ssthresh)

    def enter(self, tcp: SenderView) -> None:
        """NewReno's entry, without cutting or inflating ``cwnd``."""
        prior = tcp.cc.cwnd
        super().enter(tcp)
        tcp.cc.cwnd = prior

    def full_ack(self, tcp: SenderView) -> None:
        tcp.cc.cwnd = tcp.cc.ssthresh
        tcp.exit_recovery()

    def partial_ack(self, tcp: SenderView, acked: int) -> None:
        self.repair_next_hole(tcp)  # no deflation: damping already shrank cwnd

    def send(self, tcp: SenderView) -> None:
        """New data while ``snd.nxt − snd.una − dupacks < cwnd``."""
        while (tcp.snd_nxt - tcp.snd_una - tcp.dupacks + 1 <= tcp.cc.cwnd
               and tcp.snd_nxt < tcp.end_seq and tcp.snd_nxt - tcp.snd_una < tcp.rwnd):
            tcp.transmit(tcp.snd_nxt)
