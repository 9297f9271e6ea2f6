"""Hypothesis strategies for window laws: paths, parameters and event streams.

* :func:`paths` — a bottleneck path (base RTT 1–500 ms, 1–200 segments of
  BDP, a buffer of 1–200 segments, MSS 536/1460/8960 bytes).
* :func:`params` — an algorithm's constructor keywords drawn from its
  ``param_space`` (keywords it leaves out keep their defaults).
* :func:`initial_windows` — 1 to 10 segments (RFC 3390 … RFC 6928).
* :func:`event_streams` — a list of ``Ack`` / ``Loss`` / ``RttSample`` events
  as the packet engine would produce them for a window-limited flow on a
  path: ``now`` non-decreasing, RTT samples never below the path's base RTT
  (which may step up or down), ``min_rtt`` the minimum of the samples,
  ``srtt`` per RFC 6298, cumulative ACKs of 1–3 segments (delayed or
  stretch ACKs), Karn-hidden samples only after a retransmission, fast and
  timeout losses, idle periods, and delivery-rate samples consistent with the
  RTTs. For stateless ``@given`` tests of a hook; the stateful machine
  (:mod:`ccsim.testing.machine`) draws the same kinds of events step by step,
  from the algorithm's actual window.
"""

from __future__ import annotations

import inspect
import math

from hypothesis import strategies as st

from ..algorithms.base import CongestionControl
from .model import Path, Sender

__all__ = ["paths", "params", "initial_windows", "event_streams", "MSS_CHOICES"]

MSS_CHOICES = (1460, 536, 8960)  # Ethernet, the IPv4 minimum (RFC 879), jumbo frames


@st.composite
def paths(draw, max_capacity: float = 400.0) -> Path:
    """A bottleneck :class:`~ccsim.testing.model.Path` holding at most
    ``max_capacity`` segments (BDP + buffer)."""
    mss = draw(st.sampled_from(MSS_CHOICES))
    base_rtt = draw(st.floats(0.001, 0.5))
    bdp = draw(st.floats(1.0, max_capacity / 2))
    buffer = draw(st.floats(1.0, max_capacity - bdp))
    return Path(base_rtt=base_rtt, bandwidth=bdp * 8.0 * mss / base_rtt, mss=mss, buffer=buffer)


def params(cls: type[CongestionControl]) -> st.SearchStrategy[dict]:
    """Constructor keywords of ``cls`` drawn from ``cls.param_space``; a
    keyword whose default is an ``int`` is drawn as an int."""
    sig = inspect.signature(cls.__init__)
    fields = {}
    for name, (low, high) in cls.param_space.items():
        if name not in sig.parameters:
            raise TypeError(f"{cls.__name__}.param_space names {name!r}, "
                            f"which is not a keyword of {cls.__name__}()")
        default = sig.parameters[name].default
        if isinstance(default, int) and not isinstance(default, bool):
            fields[name] = st.integers(math.ceil(low), math.floor(high))
        else:
            fields[name] = st.floats(low, high)
    return st.fixed_dictionaries(fields)


def initial_windows() -> st.SearchStrategy[int]:
    """Initial windows, segments: 1 (RFC 5681's minimum) to 10 (RFC 6928)."""
    return st.integers(1, 10)


@st.composite
def event_streams(draw, path: Path | None = None, min_size: int = 1,
                  max_size: int = 50) -> list:
    """A realistic stream of hook events (see the module docstring).

    The flow's window follows a nominal Reno-like rule (slow start to the
    path's capacity, halving on a fast loss, one segment after a timeout) so
    that ``inflight`` values are plausible whatever the algorithm under test.
    """
    path = path if path is not None else draw(paths())
    sender = Sender(path)
    window = float(draw(initial_windows()))
    events: list = []
    n = draw(st.integers(min_size, max_size))
    kinds = st.sampled_from(("ack", "ack", "ack", "ack", "fast", "timeout", "idle",
                             "rtt_step", "rtt"))
    while len(events) < n:
        kind = draw(kinds)
        if kind == "ack":
            acked = draw(st.integers(1, 3))
            inflight = max(math.floor(window), acked)
            rtt = path.rtt(inflight) * draw(st.floats(1.0, 1.5))
            if sender.retransmitted and draw(st.booleans()):
                rtt = None  # Karn: the ACK covers a retransmission
            sample, ack = sender.ack(acked, inflight, rtt, path.rtt(inflight) / max(window, 1.0))
            if sample is not None:
                events.append(sample)
            events.append(ack)
            window = min(window + acked, path.capacity + 1)
        elif kind == "fast" and window >= 4:
            inflight = draw(st.integers(4, math.floor(window)))
            events.append(sender.loss("fast", inflight, path.rtt(inflight) / window))
            window = max(window / 2, 2.0)
        elif kind == "timeout":
            inflight = draw(st.integers(1, max(1, math.floor(window))))
            rto = max(0.2, 2 * sender.srtt) if math.isfinite(sender.srtt) else 1.0
            events.append(sender.loss("timeout", inflight, rto))
            window = 1.0
        elif kind == "idle":
            sender.now += draw(st.floats(0.1, 60.0))
        elif kind == "rtt_step":
            path.base_rtt = min(max(path.base_rtt * draw(st.floats(0.25, 4.0)), 1e-4), 2.0)
        elif kind == "rtt":
            rtt = path.rtt(window) * draw(st.floats(1.0, 1.5))
            events.append(sender.rtt_sample(rtt, math.floor(window), rtt / max(window, 1.0)))
    return events
