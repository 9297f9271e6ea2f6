"""BIC: binary-search increase towards the window of the last loss.

Source: L. Xu, K. Harfoush, I. Rhee, "Binary Increase Congestion Control
(BIC) for Fast Long-Distance Networks", IEEE INFOCOM 2004; constants as in
Linux's ``net/ipv4/tcp_bic.c`` (unchanged from 2.6.x to 6.x).

Per RTT in congestion avoidance the window grows by ``inc`` segments
(applied per ACK as ``cwnd += inc·acked/cwnd``), with ``W_max`` the window
before the last reduction:

* ``cwnd ≤ low_window``: Reno, ``inc = 1``;
* below ``W_max`` (binary search increase): ``d = (W_max − cwnd)/b``;
  ``inc = s_max`` if ``d > s_max`` (additive increase), ``b/smooth_part`` if
  ``d ≤ 1`` (the paper's S_min), else ``d``;
* at or above ``W_max`` (max probing, the mirror image):
  ``inc = b/smooth_part`` while ``cwnd < W_max + b``,
  ``(cwnd − W_max)/(b − 1)`` while ``cwnd < W_max + s_max·(b − 1)``,
  else ``s_max``;
* before any loss (``W_max = 0``) at least ``cwnd/20`` per RTT;
* on loss: ``ssthresh = max(β·cwnd, 2)`` (``max(cwnd/2, 2)`` when
  ``cwnd ≤ low_window``); fast convergence: ``W_max = cwnd·(1 + β)/2`` if
  ``cwnd < W_max``, else ``W_max = cwnd``.

Slow start below ``ssthresh`` is Reno's.

Differences from the source:

* The paper's binary search moves to the midpoint ``(W_max + W_min)/2``
  each RTT (``b = 2``) and uses ``S_min = 0.01``; Linux (and this default)
  moves ``1/b = 1/4`` of the distance and has a minimum step of
  ``b/smooth_part = 0.2`` segments per RTT. Pass ``b=2`` for the paper's
  midpoint.
* The window is a float; Linux counts ACKs in integers (``ca->cnt``), so
  its thresholds (``dist ≤ 1``) fall on integer divisions.
* Linux divides the ACK count by a delayed-ACK ratio estimate; ccsim's
  ``acked`` already counts segments, so no such correction is made.
* No ``initial_ssthresh`` (Linux default 0: none either).

Defaults and their sources (Linux ``net/ipv4/tcp_bic.c``, 6.x):

* ``beta = 819/1024 ≈ 0.8`` (``beta = 819``; the paper's β = 0.8);
* ``s_max = 16`` segments (``max_increment``; the paper's S_max);
* ``low_window = 14`` segments (``low_window``);
* ``b = 4`` (``BICTCP_B``: "go to point (max+min)/N");
* ``smooth_part = 20`` (``smooth_part``: RTTs from W_max−B to W_max);
* ``fast_convergence = True`` (``fast_convergence = 1``).
"""

from __future__ import annotations


import numpy as np

from .base import MIN_SSTHRESH, Ack, Loss
from .fluid import FlowArrays, FluidLaw
from .registry import register
from .reno import Reno

#: Linux bictcp_update: before the first loss grow at least cwnd/20 per RTT.
_START_DIVISOR = 20.0


def released_w_max(cwnd, beta):
    """Fast convergence's ``W_max`` after a loss at a window below the last
    one: ``cwnd·(1 + β)/2`` (Xu, Harfoush, Rhee 2004 §3; Linux ``bictcp_recalc_ssthresh``), for one window (float) or many (array)."""
    return cwnd * (1.0 + beta) / 2.0


@register
class Bic(Reno):
    """BIC-TCP window law (Xu, Harfoush, Rhee 2004; Linux tcp_bic.c)."""

    name = "bic"
    param_space = {"beta": (0.5, 0.95), "s_max": (4.0, 64.0), "low_window": (2.0, 100.0),
                   "b": (2.0, 8.0), "smooth_part": (5.0, 50.0)}  # valid keyword ranges
    recovery = "prr"  # Linux: SACK recovery with PRR for every law (tcp_input.c)

    def __init__(self, *, beta: float = 819 / 1024, s_max: float = 16.0,
                 low_window: float = 14.0, b: float = 4.0, smooth_part: float = 20.0,
                 fast_convergence: bool = True) -> None:
        self.beta = beta  # multiplicative decrease factor
        self.s_max = s_max  # largest increase per RTT (segments)
        self.low_window = low_window  # at or below it, behave as Reno (segments)
        self.b = b  # binary-search divisor: move 1/b of the way to W_max per RTT
        self.smooth_part = smooth_part  # smallest step is b/smooth_part per RTT
        self.fast_convergence = fast_convergence

    def start(self, initial_window: float, mss: int) -> None:
        super().start(initial_window, mss)
        self.w_max = 0.0  # window before the last reduction (segments)

    def increment(self, cwnd: float) -> float:
        """Segments added per RTT at window ``cwnd`` (pure)."""
        if cwnd <= self.low_window:
            return 1.0  # Reno
        s_min = self.b / self.smooth_part
        if cwnd < self.w_max:
            dist = (self.w_max - cwnd) / self.b  # binary search: 1/b of the gap
            if dist > self.s_max:
                inc = self.s_max
            elif dist <= 1.0:
                inc = s_min
            else:
                inc = dist
        elif cwnd < self.w_max + self.b:
            inc = s_min  # just above W_max: probe gently
        elif cwnd < self.w_max + self.s_max * (self.b - 1):
            inc = (cwnd - self.w_max) / (self.b - 1)  # max probing: mirror of the search
        else:
            inc = self.s_max
        if self.w_max == 0.0:
            inc = max(inc, cwnd / _START_DIVISOR)  # no loss yet: start off faster
        return inc

    def max_growth_per_rtt(self, cwnd: float) -> float:
        """At most ``s_max`` segments per RTT (the paper's S_max), Reno's one
        segment below the low window."""
        return max(self.s_max, 1.0)

    def on_ack(self, ack: Ack) -> None:
        acked = self.slow_start(ack.acked)
        if acked:
            self.cwnd += self.increment(self.cwnd) * acked / self.cwnd

    def rate_halving_floor(self) -> float:
        """``ssthresh`` (segments): Linux 2.6.x–3.1's ``tcp_bic.c`` had no
        ``min_cwnd`` op, so ``tcp_cwnd_min`` fell back on it."""
        return self.ssthresh

    def ssthresh_after(self, loss: Loss) -> float:
        if self.cwnd <= self.low_window:
            return max(self.cwnd / 2.0, MIN_SSTHRESH)
        return max(self.cwnd * self.beta, MIN_SSTHRESH)

    def on_loss(self, loss: Loss) -> None:
        if self.fast_convergence and self.cwnd < self.w_max:
            self.w_max = released_w_max(self.cwnd, self.beta)
        else:
            self.w_max = self.cwnd
        super().on_loss(loss)


class BicFluid(FluidLaw):
    """BIC in the fluid engine: per ACK ``cwnd += inc(cwnd)·acked/cwnd`` is
    ``dcwnd/dt = inc(cwnd)/RTT``, with ``inc`` (the window law's
    :meth:`Bic.increment`, vectorised and mirrored by value, constants from
    ``self.cc``) taken at the step's start; a step is at most an RTT
    (``round_steps``), so the binary search (``1/b`` of the gap per RTT)
    cannot overshoot ``W_max``. Slow start is Reno's. A loss sets
    ``ssthresh = max(β·cwnd, 2)`` (``cwnd/2`` at or below ``low_window``) and
    ``W_max`` with fast convergence, as the window law.
    """

    round_steps = True  # the binary search moves 1/b of the gap per RTT

    state = {"w_max": 0.0}

    def increment(self, cwnd: np.ndarray, w_max: np.ndarray) -> np.ndarray:
        cc = self.cc
        s_min = cc.b / cc.smooth_part
        dist = (w_max - cwnd) / cc.b
        below = np.where(dist > cc.s_max, cc.s_max, np.where(dist <= 1.0, s_min, dist))
        probe = (cwnd - w_max) / (cc.b - 1)
        above = np.where(cwnd < w_max + cc.b, s_min,
                         np.where(cwnd < w_max + cc.s_max * (cc.b - 1), probe, cc.s_max))
        inc = np.where(cwnd < w_max, below, above)
        inc = np.where(w_max == 0.0, np.maximum(inc, cwnd / _START_DIVISOR), inc)
        return np.where(cwnd <= cc.low_window, 1.0, inc)

    def grow(self, f: FlowArrays) -> None:
        h_ca = f.slow_start()
        f.cwnd += self.increment(f.cwnd, f.w_max) * h_ca / f.rtt

    def ssthresh_after(self, f: FlowArrays, m: np.ndarray, kind: str) -> np.ndarray:
        cwnd = f.cwnd[m]
        return np.maximum(np.where(cwnd <= self.cc.low_window, cwnd / 2.0,
                                   cwnd * self.cc.beta), MIN_SSTHRESH)

    def on_loss(self, f: FlowArrays, m: np.ndarray, kind: str) -> None:
        cc = self.cc
        cwnd = f.cwnd[m]
        shrunk = bool(cc.fast_convergence) & (cwnd < f.w_max[m])
        f.w_max[m] = np.where(shrunk, released_w_max(cwnd, cc.beta), cwnd)
        super().on_loss(f, m, kind)


Bic.fluid = BicFluid
