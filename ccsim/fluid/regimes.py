"""Where the fluid model is weak: the regimes docs/fluid.md lists, checked per
scenario, so that a fluid result says so itself (``Result.warnings``, and the
``fluid_warning`` column of a sweep table)."""

from __future__ import annotations

from ..scenario import Scenario

__all__ = ["weak_regimes", "SMALL_BUFFER", "SMALL_SHARE", "HEAVY_LOSS"]

SMALL_BUFFER = 4
"""A bottleneck buffer below this many packets is weak ground: the fluid
model drops the bursts that overflow it by their size (an ACK's segments and
the window's growth), which brings its utilisation near the packet engine's,
but not by their timing, on which the flows' shares there hang."""

SMALL_SHARE = 4
"""Pipe plus buffer per flow below this many packets is weak ground: such flows
live near the duplicate-ACK threshold (three segments), on timeouts (Morris,
"TCP behavior with many flows", ICNP 1997)."""

HEAVY_LOSS = 0.05
"""Random loss at or above this probability is weak ground: windows of a few
segments, where the fluid model times out less often than the packet engine."""


def weak_regimes(sc: Scenario) -> list[str]:
    """One sentence per weak regime the scenario is in (empty if none)."""
    out = []
    link = sc.links[sc.bottleneck]
    buffer = link.queue.packets(sc.packet_size)
    C = link.rate / (8.0 * sc.packet_size)  # packets/s
    pipe = C * min(sc.flow_rtt(j) for j in range(len(sc.flows)))
    if buffer < SMALL_BUFFER:
        out.append(f"buffer of {buffer} packets: the fluid model is weak below "
                   f"{SMALL_BUFFER} for shares (its bursts are modelled by their size, "
                   "not their timing; docs/fluid.md)")
    share = (pipe + buffer) / len(sc.flows)
    if share < SMALL_SHARE:
        out.append(f"{share:.3g} packets of pipe and buffer per flow: the fluid model is "
                   f"weak below {SMALL_SHARE} (such flows live on timeouts; docs/fluid.md)")
    loss = 1.0 - _survive(sc)
    if loss >= HEAVY_LOSS:
        out.append(f"random loss of {loss:.3g}: the fluid model is weak at "
                   f"{HEAVY_LOSS:g} and above (windows of a few segments; docs/fluid.md)")
    return out


def _survive(sc: Scenario) -> float:
    p = 1.0
    for link in sc.links:
        p *= 1.0 - link.loss
    return p
