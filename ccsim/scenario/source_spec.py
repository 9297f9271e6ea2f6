"""The ``source`` field of a :class:`~ccsim.Flow`, checked: what
:func:`~ccsim.CBR` and :func:`~ccsim.OnOff` (in :mod:`.sources`) describe."""

from __future__ import annotations

import math
import numbers
from typing import Any, Mapping

from ..errors import ScenarioError, ScenarioTypeError
from ..units import parse_rate
from .checks import seconds

KINDS = ("cbr", "onoff")
"""Kinds of UDP source."""
DISTS = ("exponential", "pareto")
"""Distributions of an on/off source's periods."""


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
