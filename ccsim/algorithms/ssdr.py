"""SSDR: Reno with smooth-start and dynamic recovery (Wang & Williamson 1998).

Source: H. Wang, C. L. Williamson, "A New Scheme for TCP Congestion Control:
Smooth-Start and Dynamic Recovery", MASCOTS 1998, as Lai & Yao (
§3.3) summarises it: slow start "often causes multiple packet losses, which
result in a retransmission timeout. Smooth-start uses a more graceful ramp of
cwnd"; recovery is dynamic recovery (:mod:`ccsim.recovery.ssdr`).

Update rules (``acked`` segments newly acknowledged):

* below ``ssthresh / 2``: slow start, ``cwnd += acked``;
* smooth-start, from ``ssthresh / 2`` up to ``ssthresh``: ``cwnd += acked /
  2`` — the window grows by half per RTT instead of doubling, so the last
  round of slow start does not overshoot by a whole window;
* congestion avoidance and loss: Reno's (RFC 5681).

Differences from the source: the original paper was not available to us, so
the smooth-start threshold (``ssthresh / 2``) and ramp (half a segment per
segment acknowledged) are a reconstruction of the paper's description. With
no finite ``ssthresh`` (a new connection) there is no threshold to smooth
towards and smooth-start is plain slow start.
"""

from __future__ import annotations

import math

import numpy as np

from .base import Ack
from .fluid import FlowArrays, FluidLaw
from .registry import register
from .reno import Reno

SMOOTH_FROM = 2.0
"""Smooth-start begins at ``ssthresh / SMOOTH_FROM`` (segments)."""
SMOOTH_RATE = 0.5
"""Segments smooth-start adds per segment acknowledged: half slow start's,
×1.5 per RTT."""


@register
class Ssdr(Reno):
    """Reno's law with smooth-start, and dynamic recovery."""

    name = "ssdr"
    recovery = "ssdr"

    def on_ack(self, ack: Ack) -> None:
        acked = ack.acked
        smooth_from = self.ssthresh / SMOOTH_FROM
        if self.cwnd < smooth_from:                       # slow start
            step = min(acked, smooth_from - self.cwnd)
            self.cwnd += step
            acked -= step
        if acked and self.cwnd < self.ssthresh:           # smooth-start: half rate
            step = min(acked, (self.ssthresh - self.cwnd) / SMOOTH_RATE)
            self.cwnd += step * SMOOTH_RATE
            acked -= step
        if acked:                                         # Reno's congestion avoidance
            self.cwnd += acked / self.cwnd


class SsdrFluid(FluidLaw):
    """SSDR's window law in the fluid engine. Per ACK: ``cwnd += acked``
    below ``ssthresh/2`` (doubling per RTT, ``cwnd·2^(h/RTT)``), ``cwnd +=
    acked/2`` from there to ``ssthresh`` (×1.5 per RTT, ``cwnd·1.5^(h/RTT)``),
    then Reno's one segment per RTT. Each phase is integrated exactly and the
    time left when a threshold is reached in a step passes to the next phase.
    With ``ssthresh = inf`` it is plain slow start. Loss: Reno's.
    """

    def grow(self, f: FlowArrays) -> None:
        h, rtt, ss = f.h.copy(), f.rtt, f.ssthresh
        c = f.cwnd.copy()
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            for limit, factor in ((ss / SMOOTH_FROM, 2.0), (ss, 1.0 + SMOOTH_RATE)):
                in_phase = (c < limit) & (h > 0)
                t = np.where(in_phase, rtt * np.log(limit / c) / math.log(factor), 0.0)
                grown = np.where(h <= t, c * factor ** (h / rtt), limit)
                c = np.where(in_phase, grown, c)
                h = np.where(in_phase, np.maximum(h - t, 0.0), h)
        c += h / rtt
        np.copyto(f.cwnd, c)


Ssdr.fluid = SsdrFluid
