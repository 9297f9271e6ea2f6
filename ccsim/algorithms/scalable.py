"""Scalable TCP: multiplicative increase, multiplicative decrease (Kelly 2003).

Source: T. Kelly, "Scalable TCP: Improving Performance in Highspeed Wide Area
Networks", ACM SIGCOMM Computer Communication Review 33(2), 2003, pp. 83–91.

Update rules, with ``acked`` the segments newly acknowledged by an ACK and
``w`` the window (segments). Default, Linux's (``net/ipv4/tcp_scalable.c``,
``TCP_SCALABLE_AI_CNT = 100``, ``TCP_SCALABLE_MD_SCALE = 3``):

* slow start (``cwnd < ssthresh``): Reno's (:mod:`ccsim.algorithms.reno`);
* congestion avoidance: ``cwnd += acked / min(cwnd, 1/a)`` — one segment per
  ``min(cwnd, 100)`` acknowledged, i.e. Reno's ``acked/cwnd`` below 100
  segments and ``a·acked`` above (the window grows by the factor ``1 + a``
  per RTT);
* on loss: ``ssthresh = max(w − ⌊b·w⌋, 2)`` — Linux's ``cwnd − (cwnd >> 3)``
  for ``b = 1/8``, at every window.

With ``rule="paper"``, Kelly's: Reno's law at or below the legacy window
``low_window`` (``cwnd += acked/cwnd``, ``ssthresh = max(w/2, 2)``), above it
``cwnd += a·acked`` and ``ssthresh = max(w·(1 − b), 2)``.

Because both the increase and the decrease are multiplicative, the time to
regain the window lost at a congestion event is
``log(1/(1 − b)) / log(1 + a)`` ≈ 13.4 RTTs whatever the window, where Reno
needs ``w/2`` RTTs.

Defaults: ``a = 0.01`` and ``b = 0.125`` are the paper's recommended values
(Kelly 2003, §2–3) and Linux's ``1/AI_CNT`` and ``>> 3``; ``rule = "linux"``.
``low_window = 16`` segments is the paper's legacy window ``lwnd`` (used by
``rule="paper"`` only).

Differences from the source:

* The decrease takes ``w`` from ``loss.inflight``, the stack's flight at a
  loss (``Scenario.loss_flight``): the window in the Linux stack, as the
  paper and Linux's ``tcp_scalable_ssthresh`` have it; RFC 5681's
  FlightSize with ``loss_flight="flight"``. The two agree when the sender
  is window-limited.
* ``AI_CNT`` was 50 ACKs until Linux 5.7 ("50 instead of 100 to account
  for delayed ack"; "tcp: fix stretch ACK bugs in Scalable", 2020, made it
  100 segments); ccsim takes current Linux's 100, which counts acknowledged
  segments (``a = 0.01`` per segment, the paper's). ``a = 1/50`` with
  ``ack_counting="acks"`` is the older modules' (Esterhuizen & Krzesinski's
  recipe runs so, :data:`ccsim.experiments.pairwise.LINUX_2011_COUNTING_PARAMS`).
* Linux slow-starts while ``cwnd ≤ ssthresh``; ccsim, as its Reno, while
  ``cwnd < ssthresh``.
* The window is a float growing continuously; Linux adds whole segments.
"""

from __future__ import annotations


import math

import numpy as np

from .base import MIN_SSTHRESH, Ack, Loss
from .fluid import FlowArrays, FluidLaw, law_tables
from .registry import register
from .reno import Reno, ai_step, refuse_extra_ack


@register
class Scalable(Reno):
    """Scalable TCP window law (Kelly 2003) with PRR recovery, as Linux runs it."""

    name = "scalable"
    param_space = {"a": (0.001, 0.1), "b": (0.05, 0.5), "low_window": (1.0, 100.0)}  # valid keyword ranges
    recovery = "prr"  # Linux: SACK recovery with PRR for every law (tcp_input.c)

    def __init__(self, *, a: float = 0.01, b: float = 0.125,
                 low_window: float = 16.0, rule: str = "linux", extra_ack: bool = False) -> None:
        if rule not in ("linux", "paper"):
            from ..errors import ScenarioError
            raise ScenarioError("rule", rule, "'linux' or 'paper'")
        self.a = a                    # increase per acknowledged segment (segments)
        self.b = b                    # fraction of the window given up on a loss
        self.low_window = low_window  # paper's legacy window lwnd (segments): Reno at or below
        self.rule = rule              # "linux" (tcp_scalable.c) or "paper" (Kelly 2003)
        self.extra_ack = extra_ack    # 2.6.3x-3.x: the counter stepped after min(cwnd, 50) + 1

    def max_growth_per_rtt(self, cwnd: float) -> float:
        """``a`` per segment acknowledged: ``a·cwnd`` per RTT, Reno's one
        segment at legacy windows."""
        return max(self.a * cwnd, 1.0)

    def on_ack(self, ack: Ack) -> None:
        if self.rule == "paper" and self.cwnd <= self.low_window:
            # Slow start, and congestion avoidance at legacy windows: Reno's law.
            super().on_ack(ack)
            return
        acked = self.slow_start(ack.acked)
        if acked:
            if self.rule == "linux":  # one segment per min(cwnd, AI_CNT) acknowledged
                self.cwnd += ai_step(acked, min(self.cwnd, 1.0 / self.a), self.extra_ack)
            else:
                self.cwnd += self.a * acked

    def ssthresh_after(self, loss: Loss) -> float:
        w = loss.inflight
        if self.rule == "linux":  # cwnd - (cwnd >> 3), on the whole window
            return max(w - math.floor(self.b * math.floor(w)), MIN_SSTHRESH)
        if w <= self.low_window:
            return super().ssthresh_after(loss)
        return max(w * (1.0 - self.b), MIN_SSTHRESH)


class ScalableFluid(FluidLaw):
    """Scalable TCP in the fluid engine. Per ACK in congestion avoidance
    ``cwnd += g(cwnd)·acked``, with ``g = a`` above the legacy window and
    Reno's ``1/cwnd`` at or below it; with ``cwnd/RTT`` segments acknowledged
    per second that is ``dcwnd/dt = g(cwnd)·cwnd/RTT``, integrated over the
    step as ``cwnd·e^(g·h/RTT)`` — exact for the multiplicative increase
    (so a long step cannot overshoot), and Reno's ``+h/RTT`` to second order
    at legacy windows. Slow start is Reno's. A loss sets ``ssthresh`` to the
    window law's ``ssthresh_after`` at FlightSize ``w``.

    ``g(w)`` and ``ssthresh_after(w)/w`` are not restated here: they are read
    from the window law itself (one ``on_ack`` in congestion avoidance,
    ``ssthresh_after`` with ``inflight = w``) on a log grid of windows 1 to
    10⁷ segments, ratio 1.001 between points, and looked up at the grid point
    at or below ``w``. So a change to the rule (Linux's: no
    legacy window for the decrease, Reno below ``AI_CNT`` segments) reaches
    the fluid law unchanged; only windows within 0.1 % above a threshold take
    the rule below it.
    """

    long_steps = True  # exponential, integrated exactly

    scalar_params = ("*",)  # the rule is tabulated per instance

    _GRID_RATIO = 1.001
    _GRID_MAX = 1e7
    _EPS = 1e-2  # segments acknowledged by the probing ACK, per segment of window

    def __init__(self, cc) -> None:
        refuse_extra_ack(cc)  # refused once, as the batch is built
        super().__init__(cc)
        self._w, self._gain, self._keep = law_tables(cc, self._tables)

    @classmethod
    def _tables(cls, cc) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The grid of windows, and ``g`` and ``ssthresh_after(w)/w`` at its points."""
        n = int(math.log(cls._GRID_MAX) / math.log(cls._GRID_RATIO)) + 1
        grid = cls._GRID_RATIO ** np.arange(n)
        probe = type(cc).__new__(type(cc))
        probe.__dict__.update(cc.__dict__)
        probe.start(1.0, 1500)
        gain, keep = [], []
        for w in grid.tolist():
            probe.cwnd, probe.ssthresh = w, 1.0  # congestion avoidance
            acked = cls._EPS * w  # one ACK: the rule at w, exactly, and well above rounding
            probe.on_ack(Ack(now=0.0, acked=acked, rtt=0.1, min_rtt=0.1, srtt=0.1, inflight=w,
                             delivered=0.0, delivery_rate=0.0))
            gain.append((probe.cwnd - w) / acked)
            probe.cwnd = w
            keep.append(probe.ssthresh_after(Loss(now=0.0, kind="fast", inflight=w, min_rtt=0.1,
                                                  srtt=0.1)) / w)
        return grid, np.array(gain), np.array(keep)

    def _lookup(self, table: np.ndarray, w: np.ndarray) -> np.ndarray:
        i = np.searchsorted(self._w, w, side="right") - 1
        return table[np.minimum(np.maximum(i, 0), table.size - 1)]

    def grow(self, f: FlowArrays) -> None:
        h_ca = f.slow_start()
        f.cwnd *= np.exp(self._lookup(self._gain, f.cwnd) * h_ca / f.rtt)

    def ssthresh_after(self, f: FlowArrays, m: np.ndarray, kind: str) -> np.ndarray:
        w = f.inflight[m]
        return np.maximum(self._lookup(self._keep, w) * w, MIN_SSTHRESH)


Scalable.fluid = ScalableFluid
