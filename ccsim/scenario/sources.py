"""Unresponsive sources: UDP flows that send at their own pace.

:func:`CBR` and :func:`OnOff` are :class:`~ccsim.Flow` objects whose
``source`` describes the sending pattern: no ACKs, no retransmissions, no
reaction to loss. Their summary rows report what arrived (``goodput_bps``)
and ``udp_loss``, the fraction of sent packets that did not.

Rates are of payload (``mss`` bytes a packet, as iperf's ``-b`` counts);
each packet is ``mss + header`` bytes on the wire.
"""

from __future__ import annotations

from typing import Any

from .flows import Flow
from .source_spec import DISTS, KINDS

__all__ = ["CBR", "OnOff", "KINDS", "DISTS"]

PLACEHOLDER = "reno"
"""The ``algorithm`` a source's Flow carries: a registered name, never run
(a source has no window law); the summary names the source's kind instead."""


def CBR(rate: Any, start: Any = 0.0, stop: Any = None, rtt: Any = None) -> Flow:
    """A constant-bit-rate UDP source: one packet every ``mss · 8 / rate``
    seconds from ``start`` to ``stop`` (or the end). ``rate``: payload bit/s
    (``"5Mbps"``)."""
    return Flow(PLACEHOLDER, start=start, stop=stop, rtt=rtt,
                source={"kind": "cbr", "rate": rate})


def OnOff(rate: Any, on: Any, off: Any, dist: str = "exponential", shape: float = 1.5,
          start: Any = 0.0, stop: Any = None, rtt: Any = None) -> Flow:
    """An on/off UDP source: sends at ``rate`` (payload bit/s) during on
    periods and nothing during off periods, the periods drawn independently
    from the scenario's seed: ``dist="exponential"`` with means ``on`` and
    ``off`` (s), or ``"pareto"`` with those means and tail index ``shape``
    (> 1, so that the mean exists; 1 < shape < 2 gives the heavy-tailed,
    self-similar aggregate of Willinger et al., SIGCOMM 1995). It starts
    with an on period."""
    return Flow(PLACEHOLDER, start=start, stop=stop, rtt=rtt,
                source={"kind": "onoff", "rate": rate, "on": on, "off": off, "dist": dist,
                        "shape": shape})
