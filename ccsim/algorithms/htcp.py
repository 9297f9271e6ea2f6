"""H-TCP: additive increase that grows with the time since the last loss.

Source: D. Leith, R. Shorten, "H-TCP: TCP for high-speed and long-distance
networks", PFLDnet 2004 (and Leith, Shorten, Lee, "H-TCP: A framework for
congestion control in high-speed and long-distance networks", 2005);
constants as in Linux's ``net/ipv4/tcp_htcp.c`` (6.x).

With ``Δ`` the time since the last congestion event (s):

* ``α_raw(Δ) = 1`` for ``Δ ≤ Δ_L``, else
  ``1 + 10(Δ − Δ_L) + ((Δ − Δ_L)/2)²``;
* RTT scaling (Linux ``use_rtt_scaling = 1``):
  ``α_raw ← max(α_raw · clamp(RTT_min/RTT_ref, 0.1, 2), 1)``, so flows with
  different RTTs gain equal rate, not equal window, but never less than
  Reno's one segment per RTT (Linux's ``if (!factor) factor = 1`` in
  ``htcp_alpha_update``; without that floor a LAN flow would grow ten times
  slower than Reno);
* ``α = 2(1 − β)·α_raw``: ``α = α_raw`` at β = 0.5 (Reno's increase for
  ``Δ ≤ Δ_L``), and a gentler backoff is paid for with a smaller increase;
* per ACK in congestion avoidance: ``cwnd += α·acked/cwnd``;
* adaptive backoff, on loss: ``β = clamp(RTT_min/RTT_max, β_min, β_max)``,
  ``ssthresh = max(β·cwnd, 2)``; ``Δ`` restarts at the loss.

``RTT_min`` is the flow's minimum RTT (``Ack.min_rtt``); ``RTT_max`` is the
largest RTT sample taken outside loss recovery (from ``Ack.rtt``), which may
rise by at most 20 ms per sample and after each loss fades to
``RTT_min + 0.95·(RTT_max − RTT_min)`` (both as in Linux's
``measure_rtt`` / ``htcp_param_update``). Slow start is Reno's.

Differences from the source:

* No bandwidth switch (Linux ``use_bandwidth_switch = 1``: β falls back to
  ``β_min`` when the throughput between losses changes by more than 20 %)
  and no ``modeswitch`` (Linux uses ``β_min`` for the first loss and when
  ``RTT_min ≤ 10 ms``): β is always the clamped RTT ratio.
* Undo of spurious loss events (Linux restores ``last_cong``) is not
  modelled.
* Windows and α are floats; Linux uses fixed point with 7 fractional bits
  and rounds the scaled α_raw down to a whole number of segments.

Defaults and their sources:

* ``delta_l = 1.0`` s — paper (Δ_L = 1 s); Linux ``hb = HZ``.
* ``beta_min = 0.5``, ``beta_max = 0.8`` — paper; Linux ``BETA_MIN = 1<<6``
  (0.5) and ``BETA_MAX = 102`` (102/128 ≈ 0.797).
* ``rtt_scaling = True``, ``rtt_ref = 0.1`` s — Linux ``use_rtt_scaling = 1``
  with the ratio clamped to [0.1, 2] (``scale`` in ``htcp_alpha_update``);
  the 2005 paper's RTT_ref = 100 ms.
"""

from __future__ import annotations

import math

import numpy as np

from .base import MIN_SSTHRESH, Ack, Loss
from .fluid import FlowArrays, FluidLaw
from .registry import register
from .reno import Reno

#: α_raw(Δ) = 1 + ALPHA_LINEAR·d + (d / ALPHA_QUADRATIC_HALF)² with d = Δ − Δ_L
#: (s): the paper's and Linux's ``htcp_alpha_update``
#: (``1 + 10·diff + (diff/2)²``), in segments per RTT.
ALPHA_LINEAR = 10.0          # segments per RTT per s
ALPHA_QUADRATIC_HALF = 2.0   # d is halved before it is squared
#: Linux htcp_alpha_update clamps RTT_min/RTT_ref to this interval.
_RTT_RATIO_MIN, _RTT_RATIO_MAX = 0.1, 2.0
#: Linux measure_rtt: RTT_max may grow by at most this much per sample (s).
_MAX_RTT_STEP = 0.020
#: Linux htcp_param_update: fading memory of RTT_max after each loss.
_MAX_RTT_FADE = 0.95


@register
class Htcp(Reno):
    """H-TCP window law (Leith & Shorten 2004; Linux tcp_htcp.c)."""

    name = "htcp"
    param_space = {"delta_l": (0.1, 5.0), "beta_min": (0.3, 0.7), "beta_max": (0.5, 0.95),
                   "rtt_ref": (0.01, 1.0)}  # valid keyword ranges
    recovery = "prr"  # Linux: SACK recovery with PRR for every law (tcp_input.c)

    def __init__(self, *, delta_l: float = 1.0, beta_min: float = 0.5,
                 beta_max: float = 0.8, rtt_scaling: bool = True,
                 rtt_ref: float = 0.1) -> None:
        self.delta_l = delta_l  # low-speed interval Δ_L (s)
        self.beta_min = beta_min  # smallest backoff factor
        self.beta_max = beta_max  # largest backoff factor
        self.rtt_scaling = rtt_scaling  # scale α by RTT_min/RTT_ref
        self.rtt_ref = rtt_ref  # reference RTT of the scaling (s)

    def start(self, initial_window: float, mss: int) -> None:
        super().start(initial_window, mss)
        self.beta = self.beta_min  # current backoff factor
        self.last_cong: float | None = None  # time of the last congestion event (s)
        self.min_rtt = math.inf  # RTT_min (s)
        self.max_rtt = 0.0  # RTT_max (s)

    # -- the rule --------------------------------------------------------------
    def alpha_raw(self, delta: float) -> float:
        """Increase per RTT before scaling, ``delta`` s after the last loss."""
        if delta <= self.delta_l:
            return 1.0
        d = delta - self.delta_l
        return 1.0 + ALPHA_LINEAR * d + (d / ALPHA_QUADRATIC_HALF) ** 2

    def alpha(self, delta: float) -> float:
        """Increase per RTT: RTT-scaled and multiplied by 2(1 − β)."""
        a = self.alpha_raw(delta)
        if self.rtt_scaling and math.isfinite(self.min_rtt) and self.min_rtt > 0:
            ratio = min(max(self.min_rtt / self.rtt_ref, _RTT_RATIO_MIN), _RTT_RATIO_MAX)
            a = max(a * ratio, 1.0)
        return 2.0 * (1.0 - self.beta) * a

    def beta_for(self, min_rtt: float, max_rtt: float) -> float:
        """Adaptive backoff ``RTT_min/RTT_max`` bounded to [β_min, β_max]."""
        if not (max_rtt > 0 and math.isfinite(min_rtt)):
            return self.beta_min
        return min(max(min_rtt / max_rtt, self.beta_min), self.beta_max)

    # -- hooks -----------------------------------------------------------------
    def max_growth_per_rtt(self, cwnd: float) -> float:
        """α(Δ) per RTT, which grows without bound with Δ, but at most one
        segment per ACK (Linux): no faster than doubling."""
        return cwnd

    def on_ack(self, ack: Ack) -> None:
        self.min_rtt = min(self.min_rtt, ack.min_rtt)
        if ack.rtt is not None:  # outside recovery only, as Linux (TCP_CA_Open)
            if self.max_rtt < self.min_rtt:
                self.max_rtt = self.min_rtt
            if self.max_rtt < ack.rtt <= self.max_rtt + _MAX_RTT_STEP:
                self.max_rtt = ack.rtt
        if self.last_cong is None:
            self.last_cong = ack.now  # Linux: the connection's start counts as one
        acked = self.slow_start(ack.acked)
        if not acked:
            return
        # Linux's htcp_cong_avoid adds at most one segment per ACK (its counter
        # releases one increment per call), which bounds growth when α > cwnd.
        self.cwnd += min(self.alpha(ack.now - self.last_cong) * acked / self.cwnd, acked)

    def ssthresh_after(self, loss: Loss) -> float:
        beta = self.beta_for(min(self.min_rtt, loss.min_rtt), self.max_rtt)
        return max(beta * self.cwnd, MIN_SSTHRESH)

    def on_loss(self, loss: Loss) -> None:
        self.min_rtt = min(self.min_rtt, loss.min_rtt)
        self.beta = self.beta_for(self.min_rtt, self.max_rtt)
        super().on_loss(loss)
        self.last_cong = loss.now
        if self.max_rtt > self.min_rtt:
            self.max_rtt = self.min_rtt + _MAX_RTT_FADE * (self.max_rtt - self.min_rtt)


class HtcpFluid(FluidLaw):
    """H-TCP in the fluid engine. Per ACK ``cwnd += min(α(Δ)·acked/cwnd,
    acked)`` is ``dcwnd/dt = min(α(Δ), cwnd)/RTT``; over a step α is taken at
    the step's midpoint ``Δ = now + h/2 − last_cong`` (α is quadratic in Δ and
    changes little within an RTT). ``RTT_min`` follows the engine's
    ``min_rtt``; ``RTT_max`` takes the step's RTT when it lies within 20 ms
    above it (once per step, as once per ACK in the window law; the fluid RTT
    moves continuously, so the 20 ms cap rarely binds). A loss sets
    ``β = clamp(RTT_min/RTT_max, β_min, β_max)``, ``ssthresh = max(β·cwnd, 2)``,
    restarts Δ and fades ``RTT_max``. Slow start is Reno's.

    α_raw, the RTT scaling and β are the window law's :meth:`Htcp.alpha_raw`,
    :meth:`Htcp.alpha` and :meth:`Htcp.beta_for`, vectorised and mirrored by
    value (constants from ``self.cc`` and this module's ``ALPHA_*``,
    ``_RTT_RATIO_*``, ``_MAX_RTT_STEP``, ``_MAX_RTT_FADE``).
    """

    long_steps = True  # alpha at the step's midpoint: quadratic in time

    state = {"last_cong": math.nan, "rtt_lo": math.inf, "rtt_hi": 0.0, "beta": math.nan}

    def start(self, f: FlowArrays, m: np.ndarray) -> None:
        f.beta[m] = self.cc.beta_min

    def alpha(self, f: FlowArrays, delta: np.ndarray) -> np.ndarray:
        cc = self.cc
        d = np.maximum(delta - cc.delta_l, 0.0)
        a = np.where(delta <= cc.delta_l, 1.0,
                     1.0 + ALPHA_LINEAR * d + (d / ALPHA_QUADRATIC_HALF) ** 2)
        if cc.rtt_scaling:
            ok = np.isfinite(f.rtt_lo) & (f.rtt_lo > 0)
            ratio = np.minimum(np.maximum(np.where(ok, f.rtt_lo, cc.rtt_ref) / cc.rtt_ref,
                                          _RTT_RATIO_MIN), _RTT_RATIO_MAX)
            a = np.where(ok, np.maximum(a * ratio, 1.0), a)
        return 2.0 * (1.0 - f.beta) * a

    def beta_for(self, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        cc = self.cc
        ok = (hi > 0) & np.isfinite(lo)
        with np.errstate(divide="ignore", invalid="ignore"):
            b = np.clip(lo / hi, cc.beta_min, cc.beta_max)
        return np.where(ok, b, cc.beta_min)

    def grow(self, f: FlowArrays) -> None:
        live = f.h > 0
        np.copyto(f.rtt_lo, np.where(live, np.minimum(f.rtt_lo, f.min_rtt), f.rtt_lo))
        hi = np.where(f.rtt_hi < f.rtt_lo, f.rtt_lo, f.rtt_hi)
        hi = np.where((hi < f.rtt) & (f.rtt <= hi + _MAX_RTT_STEP), f.rtt, hi)
        np.copyto(f.rtt_hi, np.where(live, hi, f.rtt_hi))
        np.copyto(f.last_cong, np.where(live & np.isnan(f.last_cong), f.now, f.last_cong))
        h_ca = f.slow_start()
        delta = f.now + f.h / 2.0 - f.last_cong
        alpha = self.alpha(f, np.where(live, delta, 0.0))
        # flows not started carry no β yet (nan): leave them exactly as they are
        f.cwnd += np.where(h_ca > 0, np.minimum(alpha, f.cwnd) * h_ca / f.rtt, 0.0)

    def ssthresh_after(self, f: FlowArrays, m: np.ndarray, kind: str) -> np.ndarray:
        beta = self.beta_for(np.minimum(f.rtt_lo[m], f.min_rtt[m]), f.rtt_hi[m])
        return np.maximum(beta * f.cwnd[m], MIN_SSTHRESH)

    def on_loss(self, f: FlowArrays, m: np.ndarray, kind: str) -> None:
        lo = np.minimum(f.rtt_lo[m], f.min_rtt[m])
        f.rtt_lo[m] = lo
        f.beta[m] = self.beta_for(lo, f.rtt_hi[m])
        super().on_loss(f, m, kind)
        f.last_cong[m] = f.now[m]
        hi = f.rtt_hi[m]
        f.rtt_hi[m] = np.where(hi > lo, lo + _MAX_RTT_FADE * (hi - lo), hi)


Htcp.fluid = HtcpFluid
