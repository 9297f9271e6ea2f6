"""Rate-Halving: Reno's window law with Rate-Halving recovery.

The name Lai & Yao uses for Mathis, Semke, Mahdavi & Lahey's
Rate-Halving algorithm (draft-mathis-tcp-ratehalving-00, 1999): the window
law is RFC 5681's (:mod:`ccsim.algorithms.reno`), recovery is
:mod:`ccsim.recovery.rate_halving` over SACK.

Differences from the source: those of :mod:`ccsim.algorithms.reno` and
:mod:`ccsim.recovery.rate_halving`.
"""

from __future__ import annotations

from .registry import register
from .reno import Reno, RenoFluid


@register
class RateHalving(Reno):
    """Reno's window law with Rate-Halving recovery."""

    name = "rate-halving"
    fluid = RenoFluid  # the same window law; recovery is the flow's
    recovery = "rate-halving"
