"""FACK: Reno's window law with forward-acknowledgement recovery.

The name Lai & Yao uses for Mathis & Mahdavi's "Forward
Acknowledgement: Refining TCP Congestion Control" (SIGCOMM 1996): the window
law is RFC 5681's (:mod:`ccsim.algorithms.reno`), recovery is
:mod:`ccsim.recovery.fack`. ``Flow("cubic", recovery="fack")`` pairs it with
another law.

Differences from the source: those of :mod:`ccsim.algorithms.reno` and
:mod:`ccsim.recovery.fack`.
"""

from __future__ import annotations

from .registry import register
from .reno import Reno, RenoFluid


@register
class Fack(Reno):
    """Reno's window law with FACK recovery."""

    name = "fack"
    fluid = RenoFluid  # the same window law; recovery is the flow's
    recovery = "fack"
