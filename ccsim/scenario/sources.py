"""Unresponsive sources: UDP flows that send at their own pace.

:func:`CBR` and :func:`OnOff` are :class:`~ccsim.Flow` objects whose
``source`` describes the sending pattern: no ACKs, no retransmissions, no
reaction to loss. Their summary rows report what arrived (``goodput_bps``)
and ``udp_loss``, the fraction of sent packets that did not.

Rates are of payload (``mss`` bytes a packet, as iperf's ``-b`` counts);
each packet is ``mss + header`` bytes on the wire.
"""

from __future__ import annotations

import math
import numbers
from typing import Any, Mapping

from ..errors import ScenarioError, ScenarioTypeError
from ..units import parse_rate
from .checks import seconds
from .flows import Flow

KINDS = ("cbr", "onoff")
DISTS = ("exponential", "pareto")
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


def normalised_source(spec: Any) -> tuple[tuple[str, Any], ...] | None:
    """A source description as sorted ``(key, value)`` pairs in base units,
    checked; ``None`` for a TCP flow."""
    if spec is None:
        return None
    if isinstance(spec, tuple):
        spec = dict(spec)
    if not isinstance(spec, Mapping):
        raise ScenarioTypeError("flow.source", spec, "None, or a dict made by ccsim.CBR or "
                                "ccsim.OnOff")
    spec = dict(spec)
    kind = spec.get("kind")
    if kind not in KINDS:
        raise ScenarioError("flow.source.kind", kind, ", ".join(repr(k) for k in KINDS))
    allowed = {"cbr": {"kind", "rate"},
               "onoff": {"kind", "rate", "on", "off", "dist", "shape"}}[kind]
    extra = sorted(set(spec) - allowed)
    if extra:
        raise ScenarioTypeError(f"flow.source.{extra[0]}", spec[extra[0]],
                                f"keys of a {kind} source: " + ", ".join(sorted(allowed)))
    rate = parse_rate(spec.get("rate"), "source.rate")
    if not (rate > 0 and math.isfinite(rate)):
        raise ScenarioError("source.rate", spec.get("rate"), "a rate > 0, such as '5Mbps'")
    out: dict[str, Any] = {"kind": kind, "rate": rate}
    if kind == "onoff":
        out["on"] = seconds(spec.get("on"), "source.on", positive=True)
        out["off"] = seconds(spec.get("off"), "source.off", positive=True)
        dist = spec.get("dist", "exponential")
        if dist not in DISTS:
            raise ScenarioError("source.dist", dist, ", ".join(repr(d) for d in DISTS))
        out["dist"] = dist
        shape = spec.get("shape", 1.5)
        if (not isinstance(shape, numbers.Real) or isinstance(shape, bool)
                or not (shape > 1 and math.isfinite(shape))):
            raise ScenarioError("source.shape", shape,
                                "a Pareto tail index > 1 (the mean exists only then)")
        out["shape"] = float(shape)
    return tuple(sorted(out.items()))
