"""SACK: Reno's window law with RFC 6675 SACK-based loss recovery.

The name Lai & Yao and Fall & Floyd (CCR 1996) use for "Reno
with the SACK option": the window law is RFC 5681's
(:mod:`ccsim.algorithms.reno`), recovery is :mod:`ccsim.recovery.sack`
(RFC 2018 option, RFC 6675 recovery). Any other law takes the same recovery
with ``Flow("cubic", recovery="sack")``.

Differences from the source: those of :mod:`ccsim.algorithms.reno` and
:mod:`ccsim.recovery.sack`.
"""

from __future__ import annotations

from .registry import register
from .reno import Reno, RenoFluid


@register
class Sack(Reno):
    """Reno's window law with SACK recovery (RFC 6675)."""

    name = "sack"
    fluid = RenoFluid  # the same window law; recovery is the flow's
    recovery = "sack"
