"""Reno: the standard TCP window law (Jacobson 1988; RFC 5681).

Source: M. Allman, V. Paxson, E. Blanton, "TCP Congestion Control",
RFC 5681, 2009, §3.1 (window law) and §3.2 (fast retransmit / fast
recovery, which ccsim keeps in :mod:`ccsim.recovery.reno`).

Update rules, with ``acked`` the segments newly acknowledged by an ACK:

* slow start (``cwnd < ssthresh``): ``cwnd += acked``, and whatever would
  carry ``cwnd`` past ``ssthresh`` is applied in congestion avoidance instead;
* congestion avoidance: ``cwnd += acked / cwnd`` — about one segment per RTT
  (RFC 5681 eq. 3);
* on loss: ``ssthresh = max(FlightSize / 2, 2)`` (RFC 5681 eq. 4); after a
  timeout ``cwnd = 1`` (the loss window).

Differences from the source:

* Slow start counts every acknowledged segment (RFC 3465 byte counting with no
  limit L, as Linux's ``tcp_slow_start`` does in ``net/ipv4/tcp_cong.c``,
  v6.x); RFC 5681 allows at most one segment per ACK. The two agree when
  every segment is ACKed (the default; ``delayed_ack=False``).
* The window is a float and grows continuously in congestion avoidance;
  Linux's ``tcp_cong_avoid_ai`` adds whole segments after ``cwnd`` ACKed
  segments. Both add one segment per window of ACKs.
"""

from __future__ import annotations

from .base import Ack, CongestionControl
from .registry import register


@register
class Reno(CongestionControl):
    """Reno window law with Reno fast recovery (RFC 5681)."""

    name = "reno"
    recovery = "reno"

    def on_ack(self, ack: Ack) -> None:
        acked = ack.acked
        if self.cwnd < self.ssthresh:
            room = self.ssthresh - self.cwnd
            if acked <= room:
                self.cwnd += acked
                return
            self.cwnd = self.ssthresh
            acked -= room
        self.cwnd += acked / self.cwnd
