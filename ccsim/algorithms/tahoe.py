"""Tahoe: Reno's window law without fast recovery (Jacobson 1988).

Source: V. Jacobson, "Congestion Avoidance and Control", SIGCOMM 1988
(slow start, congestion avoidance, fast retransmit as added in 4.3BSD-Tahoe);
the window law is RFC 5681 §3.1, as in :mod:`ccsim.algorithms.reno`.

On the third duplicate ACK Tahoe retransmits, sets ``ssthresh =
max(FlightSize / 2, 2)``, drops ``cwnd`` to one segment and slow-starts from
the first unacknowledged segment (go-back-N), which is the
:mod:`ccsim.recovery.tahoe` strategy.

Differences from the source: those of :mod:`ccsim.algorithms.reno`. Jacobson's
1988 code set ``ssthresh`` from ``min(cwnd, rwnd) / 2``; RFC 5681's FlightSize
is used here, as in ns-2's Tahoe.
"""

from __future__ import annotations

from .registry import register
from .reno import Reno, RenoFluid


@register
class Tahoe(Reno):
    """Reno's window law with Tahoe's recovery (slow start after every loss)."""

    name = "tahoe"
    fluid = RenoFluid  # the same window law; recovery is the flow's
    recovery = "tahoe"
