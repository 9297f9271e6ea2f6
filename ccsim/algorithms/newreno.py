"""NewReno: Reno's window law with NewReno fast recovery (RFC 6582).

Source: T. Henderson, S. Floyd, A. Gurtov, Y. Nishida, "The NewReno
Modification to TCP's Fast Recovery Algorithm", RFC 6582, 2012, §3; first
described by J. Hoe, "Improving the Start-up Behavior of a Congestion Control
Scheme for TCP", SIGCOMM 1996, and by Fall & Floyd, "Simulation-based
Comparisons of Tahoe, Reno, and SACK TCP", CCR 1996.

The window law is Reno's (RFC 5681 §3.1, :mod:`ccsim.algorithms.reno`); the
difference is recovery (:mod:`ccsim.recovery.newreno`): a partial ACK
retransmits the next hole and keeps the sender in fast recovery, so several
losses from one window are repaired at one per RTT without a timeout.

Differences from the source: those of :mod:`ccsim.algorithms.reno`.
"""

from __future__ import annotations

from .registry import register
from .reno import Reno, RenoFluid


@register
class NewReno(Reno):
    """Reno's window law with NewReno recovery (RFC 6582)."""

    name = "newreno"
    fluid = RenoFluid  # the same window law; recovery is the flow's
    recovery = "newreno"
