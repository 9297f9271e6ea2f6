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
    ``dcwnd/dt = inc(cwnd)/RTT``, with ``inc`` the window law's
    :meth:`Bic.increment` (vectorised and mirrored by value in
    :meth:`increment`, constants from ``self.cc``). Between its breakpoints
    ``inc`` is affine in ``cwnd`` (a constant, the binary search's ``(W_max −
    cwnd)/b``, max probing's ``(cwnd − W_max)/(b − 1)``, or before any loss
    ``cwnd/20``), so a step integrates it exactly, piece by piece
    (:meth:`advance`), at the step's RTT: a step of several RTTs cannot
    overshoot ``W_max``, and the engine may take long steps. Slow start is
    Reno's. A loss sets ``ssthresh = max(β·cwnd, 2)`` (``cwnd/2`` at or below
    ``low_window``) and ``W_max`` with fast convergence, as the window law.
    """

    long_steps = True  # the piecewise-affine growth integrated exactly (advance)

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

    def pieces(self, cwnd: np.ndarray, w_max: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`increment` near each ``cwnd`` as ``c0 + c1·cwnd`` segments
        per RTT, and where that form ends (the next breakpoint above
        ``cwnd``, segments; ``inf`` if none). The pieces are half-open,
        ``[lo, hi)``: a breakpoint belongs to the piece above it."""
        cc = self.cc
        b, s_max = cc.b, cc.s_max
        s_min = b / cc.smooth_part
        zero = np.zeros_like(cwnd)
        inf = np.full_like(cwnd, np.inf)

        def piece(cond, c0, c1, hi, out):
            for o, v in zip(out, (c0, c1, hi)):
                np.copyto(o, np.broadcast_to(v, cwnd.shape), where=cond)

        c0, c1, hi = zero + s_max, zero.copy(), inf.copy()  # beyond max probing
        out = (c0, c1, hi)
        top = w_max + s_max * (b - 1)
        piece(cwnd < top, -w_max / (b - 1), 1.0 / (b - 1), top, out)  # max probing
        piece(cwnd < w_max + b, s_min, 0.0, w_max + b, out)  # around W_max
        piece(cwnd < w_max - b, w_max / b, -1.0 / b, w_max - b, out)  # binary search
        piece(cwnd < w_max - b * s_max, s_max, 0.0, w_max - b * s_max, out)  # additive
        if (w_max == 0.0).any():  # before any loss: cwnd/20 where it is the larger
            slope = 1.0 / _START_DIVISOR
            with np.errstate(divide="ignore", invalid="ignore"):
                cross = np.where(c1 != slope, c0 / (slope - c1), np.inf)  # the two meet
            nxt = np.where(cross > cwnd, cross, np.inf)  # ... above cwnd: the other leads
            piece(w_max == 0.0, c0, c1, np.minimum(hi, nxt), out)
            region, start = c0 + c1 * cwnd, slope * cwnd  # (at a tie: the one that leads above)
            leads = (start > region) | ((start == region) & (slope > c1))
            piece((w_max == 0.0) & leads, 0.0, slope, hi, out)
        piece(cwnd < cc.low_window, 1.0, 0.0, cc.low_window, out)  # Reno below it
        return c0, c1, hi

    def advance(self, cwnd: np.ndarray, w_max: np.ndarray, rounds: np.ndarray
                ) -> np.ndarray:
        """``cwnd`` after ``rounds`` RTTs of ``dcwnd/dn = increment(cwnd)``
        (``n`` in RTTs), piece by piece (:meth:`pieces`): on ``c0 + c1·w``
        the window moves to ``(w + c0/c1)·e^(c1·n) − c0/c1`` (``w + c0·n`` if
        ``c1 = 0``). The growth only rises, so the pieces come in order:
        at most one pass per piece."""
        w, left = cwnd.astype(float), np.asarray(rounds, dtype=float).copy()
        for _ in range(8):
            go = left > 0
            if not go.any():
                break
            c0, c1, hi = self.pieces(w, w_max)
            flat = c1 == 0.0
            k = np.where(flat, 0.0, c0 / np.where(flat, 1.0, c1))  # the fixed point, -k
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                # RTTs to the piece's end
                to_end = np.where(flat, (hi - w) / c0, np.log((hi + k) / (w + k)) / c1)
                to_end = np.where(np.isfinite(hi), to_end, np.inf)
                n = np.where(go, np.minimum(left, np.maximum(to_end, 0.0)), 0.0)
                moved = np.where(flat, w + c0 * n, (w + k) * np.exp(c1 * n) - k)
            ends = go & (to_end <= left)
            w = np.where(ends, hi, np.where(go, moved, w))  # a piece's end: exactly there
            left = np.where(go, left - n, 0.0)
        return w

    def grow(self, f: FlowArrays) -> None:
        h_ca = f.slow_start()
        np.copyto(f.cwnd, self.advance(f.cwnd, f.w_max, h_ca / f.rtt))

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
