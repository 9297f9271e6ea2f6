"""H-TCP: additive increase that grows with the time since the last loss.

Source: D. Leith, R. Shorten, "H-TCP: TCP for high-speed and long-distance
networks", PFLDnet 2004 (and Leith, Shorten, Lee, "H-TCP: A framework for
congestion control in high-speed and long-distance networks", 2005); by
default as Linux's ``net/ipv4/tcp_htcp.c`` runs it (mainline 6.x; the module
of 2.6.3x–3.x has the same rules).

With ``Δ`` the time since the last congestion event (s):

* ``α_raw(Δ) = 1`` for ``Δ ≤ Δ_L``, else
  ``1 + 10(Δ − Δ_L) + ((Δ − Δ_L)/2)²``;
* RTT scaling (Linux ``use_rtt_scaling = 1``):
  ``α_raw ← max(α_raw · clamp(RTT_min/RTT_ref, 0.1, 2), 1)``, so flows with
  different RTTs gain equal rate, not equal window, but never less than
  Reno's one segment per RTT (Linux's ``if (!factor) factor = 1``);
* ``α = 2(1 − β)·α_raw`` segments per RTT;
* adaptive backoff, on loss: ``β = clamp(RTT_min/RTT_max, β_min, β_max)``,
  ``ssthresh = max(β·cwnd, 2)``; ``RTT_max`` is the largest RTT sample taken
  outside loss recovery, rising by at most 20 ms per sample, and after each
  loss it fades to ``RTT_min + 0.95·(RTT_max − RTT_min)`` (``measure_rtt``,
  ``htcp_param_update``);
* bandwidth switch (the paper's adaptive reset; Linux
  ``use_bandwidth_switch = 1``, ``bandwidth_switch``): the throughput is
  measured over each round of a window of ACKs (``Bi = ¾·Bi + ¼·sample``,
  restarted in the first four minimum RTTs after a loss), and its largest
  value since the last loss, ``maxB``; when ``maxB`` moved by more than 20 %
  from the previous loss's, β is ``β_min`` for this loss.

``rule="linux"`` (the default), ``measure_achieved_throughput``,
``htcp_beta_update``, ``htcp_alpha_update``, ``htcp_cong_avoid`` and
``htcp_state``, constant for constant:

* ``modeswitch``: β is ``β_min`` at the first loss, after a loss the switch
  decided, and whenever ``RTT_min ≤ 10 ms``;
* fixed point: β in 128ths (``(RTT_min << 7)/RTT_max``, ``β_max`` = 102/128),
  α in 128ths, the Δ term ``factor`` and the RTT scale (in 8ths) whole
  numbers, rounded down;
* α is recomputed only when the window grows by a segment and at a loss
  (with the Δ of the epoch that ends and the new β), not on every ACK;
* the window grows in whole segments: a counter (``snd_cwnd_cnt``) takes the
  segments each ACK acknowledged, and once ``counter·α ≥ cwnd`` the next ACK
  adds one segment instead (at most one per ACK); slow start stops at
  ``ssthresh``; the ACK that ends a recovery counts one segment (the module
  records ``pkts_acked`` in the Open state only);
* Δ restarts when the recovery ends (``htcp_state``: ``last_cong`` set on
  entering Recovery or Loss and again on returning to Open), not at the loss;
* times are whole ticks of the kernel clock (``jiffy``): RTT samples rounded
  up (``usecs_to_jiffies``), ``Δ``, the 10 ms and 20 ms thresholds, the
  throughput in segments per second.

``rule="paper"``: Leith & Shorten's continuous law: α from the exact ``Δ``
since the loss on every ACK, ``cwnd += min(α·acked/cwnd, acked)``, β the
clamped RTT ratio from the first loss, times exact; the bandwidth switch as
``bandwidth_switch`` says.

Differences from the source:

* Undo of spurious loss events (Linux restores ``last_cong``) is not
  modelled, nor the CWR state's end after an ECN or local reduction: there
  Δ restarts at the reduction. ``RTT_max`` also takes samples in the
  Disorder state (duplicate ACKs before a recovery), which ccsim does not
  tell a law.

Defaults and their sources:

* ``delta_l = 1.0`` s — paper (Δ_L = 1 s); Linux ``hb = HZ``.
* ``beta_min = 0.5``, ``beta_max = 0.8`` — paper; Linux ``BETA_MIN = 1<<6``
  (0.5) and ``BETA_MAX = 102`` (102/128 ≈ 0.797, ``beta_max`` in 128ths
  rounded down).
* ``rtt_scaling = True``, ``rtt_ref = 0.1`` s — Linux ``use_rtt_scaling = 1``
  with the ratio clamped to [0.1, 2] (``scale`` in ``htcp_alpha_update``);
  the 2005 paper's RTT_ref = 100 ms.
* ``bandwidth_switch = True`` — Linux ``use_bandwidth_switch = 1``; the
  paper's 20 % threshold.
* ``jiffy = 0.004`` s — ``1/HZ`` with mainline's default ``CONFIG_HZ = 250``
  (``kernel/Kconfig.hz``), as :mod:`ccsim.algorithms.westwood`; ``0`` reads
  times in whole microseconds.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from .base import MIN_SSTHRESH, Ack, Loss, RecoveryState
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
#: Linux htcp_beta_update: at or below this RTT_min, β stays β_min (s).
MODESWITCH_RTT = 0.010
#: Linux keeps α and β in 128ths (``<< 7``) and the RTT scale in 8ths (``<< 3``).
_ONE, _SCALE_ONE = 128, 8
#: the bandwidth switch: maxB may move by at most 1/5 between losses
#: (``between(5·maxB, 4·old_maxB, 6·old_maxB)``)...
_SWITCH_LOW, _SWITCH_MID, _SWITCH_HIGH = 4, 5, 6
#: ... and the estimate restarts in the first few minimum RTTs after a loss
#: (``htcp_ccount(ca) <= 3``).
_RESTART_RTTS = 3


@register
class Htcp(Reno):
    """H-TCP window law (Leith & Shorten 2004; Linux tcp_htcp.c)."""

    name = "htcp"
    param_space = {"delta_l": (0.1, 5.0), "beta_min": (0.3, 0.7), "beta_max": (0.5, 0.95),
                   "rtt_ref": (0.01, 1.0), "jiffy": (0.0, 0.01)}  # valid keyword ranges
    recovery = "prr"  # Linux: SACK recovery with PRR for every law (tcp_input.c)

    def __init__(self, *, delta_l: float = 1.0, beta_min: float = 0.5,
                 beta_max: float = 0.8, rtt_scaling: bool = True,
                 rtt_ref: float = 0.1, bandwidth_switch: bool = True,
                 jiffy: float = 0.004, rule: str = "linux") -> None:
        if rule not in ("linux", "paper"):
            from ..errors import ScenarioError
            raise ScenarioError("rule", rule, "'linux' (tcp_htcp.c) or 'paper' "
                                "(Leith & Shorten 2004)")
        self.delta_l = delta_l  # low-speed interval Δ_L (s)
        self.beta_min = beta_min  # smallest backoff factor
        self.beta_max = beta_max  # largest backoff factor
        self.rtt_scaling = rtt_scaling  # scale α by RTT_min/RTT_ref
        self.rtt_ref = rtt_ref  # reference RTT of the scaling (s)
        self.bandwidth_switch = bandwidth_switch  # β_min when maxB moved by > 20 %
        self.jiffy = jiffy  # the kernel clock's tick (s); 0: microseconds
        self.rule = rule  # "linux" (tcp_htcp.c) or "paper" (continuous)

    def start(self, initial_window: float, mss: int) -> None:
        super().start(initial_window, mss)
        tick_us = max(round(self.jiffy * 1e6), 1)  # whole µs; 0: the µs clock itself
        self.hz = max(1_000_000 // tick_us, 1)  # ticks per second
        self.linux = self.rule == "linux"
        self.beta = self.beta_min  # current backoff factor
        self.beta_fp = math.floor(self.beta_min * _ONE + 1e-9)  # β in 128ths (linux)
        self.alpha_fp = _ONE  # α in 128ths, as last recomputed (linux)
        self.modeswitch = False  # Linux: β may follow the RTTs (after one loss)
        self.last_cong: int | None = None  # start of Δ (ticks)
        self.last_loss = math.nan  # the last loss (s): Δ's start with rule "paper"
        self.leaving = False  # the next on_ack is the ACK that ended a recovery
        self.count = 0  # Linux snd_cwnd_cnt: segments acknowledged towards a step
        self.min_rtt = math.inf  # RTT_min (s)
        self.max_rtt = 0.0  # RTT_max (s)
        self.min_j = 0  # RTT_min in ticks (0: none yet)
        self.max_j = 0  # RTT_max in ticks
        # the bandwidth switch (ticks, segments, segments per second)
        self.packetcount = 0.0
        self.lasttime = 0
        self.bi = self.max_b = self.min_b = self.old_max_b = 0

    # -- the clock ---------------------------------------------------------------
    def ticks(self, t: float) -> int:
        """The kernel clock (``jiffies``) at time ``t`` (s)."""
        return math.floor(t * self.hz + 1e-9)

    def rtt_ticks(self, rtt: float) -> int:
        """An RTT (s) in whole ticks, rounded up from whole µs
        (``usecs_to_jiffies``), at least one."""
        return max(-(-max(round(rtt * 1e6), 1) * self.hz // 1_000_000), 1)

    # -- the rule --------------------------------------------------------------
    def alpha_raw(self, delta: float) -> float:
        """Increase per RTT before scaling, ``delta`` s after the last loss."""
        if delta <= self.delta_l:
            return 1.0
        d = delta - self.delta_l
        return 1.0 + ALPHA_LINEAR * d + (d / ALPHA_QUADRATIC_HALF) ** 2

    def alpha(self, delta: float) -> float:
        """Increase per RTT (the paper's, continuous): RTT-scaled and
        multiplied by 2(1 − β)."""
        a = self.alpha_raw(delta)
        if self.rtt_scaling and math.isfinite(self.min_rtt) and self.min_rtt > 0:
            ratio = min(max(self.min_rtt / self.rtt_ref, _RTT_RATIO_MIN), _RTT_RATIO_MAX)
            a = max(a * ratio, 1.0)
        return 2.0 * (1.0 - self.beta) * a

    def alpha_fixed(self, diff: int, min_j: int, beta_fp: int) -> int:
        """Linux's ``htcp_alpha_update``: α in 128ths, ``diff`` ticks after
        ``last_cong``, with RTT_min ``min_j`` ticks and β ``beta_fp``/128."""
        hz, factor = self.hz, 1
        low = round(self.delta_l * hz)
        if diff > low:
            d = diff - low
            half = d // int(ALPHA_QUADRATIC_HALF)
            factor = 1 + (int(ALPHA_LINEAR) * d + half * half // hz) // hz
        if self.rtt_scaling and min_j:
            ref = Fraction(self.rtt_ref).limit_denominator(1_000_000)  # 1/10 s: Linux's 10
            scale = _SCALE_ONE * hz * ref.numerator // (ref.denominator * min_j)
            scale = min(max(scale, round(_SCALE_ONE / _RTT_RATIO_MAX)),
                        round(_SCALE_ONE / _RTT_RATIO_MIN))
            factor = factor * _SCALE_ONE // scale or 1
        return 2 * factor * (_ONE - beta_fp) or _ONE

    def beta_for(self, min_rtt: float, max_rtt: float) -> float:
        """Adaptive backoff ``RTT_min/RTT_max`` bounded to [β_min, β_max]."""
        if not (max_rtt > 0 and math.isfinite(min_rtt)):
            return self.beta_min
        return min(max(min_rtt / max_rtt, self.beta_min), self.beta_max)

    def switched(self) -> bool:
        """The bandwidth switch: ``maxB`` moved by more than 20 % since the
        previous loss (``!between(5·maxB, 4·old_maxB, 6·old_maxB)``)."""
        return (self.bandwidth_switch and not _SWITCH_LOW * self.old_max_b
                <= _SWITCH_MID * self.max_b <= _SWITCH_HIGH * self.old_max_b)

    def next_beta(self) -> tuple[float, int, bool]:
        """β for a loss now, Linux's in 128ths, and the ``modeswitch`` after
        it (``htcp_beta_update``; pure)."""
        if self.switched():
            return self.beta_min, math.floor(self.beta_min * _ONE + 1e-9), False
        if not self.linux:
            return self.beta_for(self.min_rtt, self.max_rtt), 0, True
        lo_fp, hi_fp = math.floor(self.beta_min * _ONE + 1e-9), math.floor(self.beta_max * _ONE)
        if self.modeswitch and self.min_j > self.rtt_ticks(MODESWITCH_RTT) and self.max_j:
            b = min(max((self.min_j << 7) // self.max_j, lo_fp), hi_fp)
            return b / _ONE, b, True
        return lo_fp / _ONE, lo_fp, True

    # -- hooks -----------------------------------------------------------------
    def max_growth_per_rtt(self, cwnd: float) -> float:
        """α(Δ) per RTT, which grows without bound with Δ, but at most one
        segment per ACK (Linux): no faster than doubling."""
        return cwnd

    def measure(self, ack: Ack, now_j: int, leaving: bool) -> None:
        """``measure_rtt`` and ``measure_achieved_throughput``."""
        self.min_rtt = min(self.min_rtt, ack.min_rtt)
        if math.isfinite(ack.min_rtt):
            j = self.rtt_ticks(ack.min_rtt)
            if not self.min_j or j < self.min_j:
                self.min_j = j
        if ack.rtt is not None:  # outside recovery only, as Linux (TCP_CA_Open)
            if self.max_rtt < self.min_rtt:
                self.max_rtt = self.min_rtt
            if self.max_rtt < ack.rtt <= self.max_rtt + _MAX_RTT_STEP:
                self.max_rtt = ack.rtt
            j = self.rtt_ticks(ack.rtt)
            if self.max_j < self.min_j:
                self.max_j = self.min_j
            if self.max_j < j <= self.max_j + self.rtt_ticks(_MAX_RTT_STEP):
                self.max_j = j
        if not self.bandwidth_switch:
            return
        if leaving:  # the module saw this ACK in Recovery or Loss: the count restarts
            self.packetcount, self.lasttime = 0, now_j
            return
        self.packetcount += ack.acked
        elapsed = now_j - self.lasttime
        if (self.packetcount >= math.floor(self.cwnd) - max(self.alpha_fp >> 7, 1)
                and elapsed >= self.min_j and self.min_j > 0 and elapsed > 0):
            sample = self.packetcount * self.hz // elapsed
            if (now_j - self.last_cong) // self.min_j <= _RESTART_RTTS:  # just after backoff
                self.min_b = self.max_b = self.bi = sample
            else:
                self.bi = (3 * self.bi + sample) // 4
                self.max_b = max(self.max_b, self.bi)
                self.min_b = min(self.min_b, self.max_b)
            self.packetcount, self.lasttime = 0, now_j

    def on_ack(self, ack: Ack) -> None:
        leaving, self.leaving = self.leaving, False
        now_j = self.ticks(ack.now)
        if self.last_cong is None:  # Linux: the connection's start counts as one
            self.last_cong, self.last_loss, self.lasttime = now_j, ack.now, now_j
        self.measure(ack, now_j, leaving)
        if not self.linux:
            acked = self.slow_start(ack.acked)
            if acked:  # at most one segment per ACK, as Linux's counter releases
                self.cwnd += min(self.alpha(ack.now - self.last_loss) * acked / self.cwnd, acked)
            return
        if self.cwnd < self.ssthresh:  # tcp_slow_start, up to ssthresh and no further
            self.cwnd = min(self.cwnd + ack.acked, self.ssthresh)
            return
        if self.count * self.alpha_fp // _ONE >= math.floor(self.cwnd):
            self.cwnd += 1.0
            self.count = 0
            self.alpha_fp = self.alpha_fixed(now_j - self.last_cong, self.min_j, self.beta_fp)
        else:
            self.count += 1 if leaving else ack.acked

    def rate_halving_floor(self) -> float:
        """``ssthresh`` (segments): Linux 2.6.x–3.1's ``tcp_htcp.c`` had no
        ``min_cwnd`` op, so ``tcp_cwnd_min`` fell back on it."""
        return self.ssthresh

    def ssthresh_after(self, loss: Loss) -> float:
        beta, beta_fp, _ = self.next_beta()
        if self.linux:  # max((snd_cwnd * beta) >> 7, 2U)
            return max(float(math.floor(self.cwnd) * beta_fp >> 7), MIN_SSTHRESH)
        return max(beta * self.cwnd, MIN_SSTHRESH)

    def on_loss(self, loss: Loss) -> None:
        self.min_rtt = min(self.min_rtt, loss.min_rtt)
        super().on_loss(loss)  # ssthresh from next_beta, before the state moves
        self.beta, self.beta_fp, self.modeswitch = self.next_beta()
        self.old_max_b = self.max_b
        now_j = self.ticks(loss.now)
        if self.last_cong is None:
            self.last_cong = now_j
        if self.linux:  # htcp_param_update: α with the ending epoch's Δ and the new β
            self.alpha_fp = self.alpha_fixed(now_j - self.last_cong, self.min_j, self.beta_fp)
            if self.min_j > 0 and self.max_j > self.min_j:
                self.max_j = self.min_j + (self.max_j - self.min_j) * 95 // 100
        if self.max_rtt > self.min_rtt:
            self.max_rtt = self.min_rtt + _MAX_RTT_FADE * (self.max_rtt - self.min_rtt)
        self.count = 0  # tcp_init_cwnd_reduction, tcp_enter_loss
        self.last_cong, self.last_loss = now_j, loss.now  # htcp_reset

    def on_recovery(self, change: RecoveryState) -> None:
        """``htcp_state``: Δ restarts on entering Recovery or Loss and again on
        returning to Open (rule ``"linux"``)."""
        if not (self.linux and change.change):
            return
        self.last_cong = self.ticks(change.now)
        if change.state == "open":
            self.leaving = True  # its on_ack comes next: counted as one segment


class HtcpFluid(FluidLaw):
    """H-TCP in the fluid engine. Per ACK ``cwnd += min(α(Δ)·acked/cwnd,
    acked)`` is ``dcwnd/dt = min(α(Δ), cwnd)/RTT``; over a step α is taken at
    the step's midpoint ``Δ = now + h/2 − last_cong`` (α is quadratic in Δ and
    changes little within an RTT). ``RTT_min`` follows the engine's
    ``min_rtt``; ``RTT_max`` takes the step's RTT when it lies within 20 ms
    above it (once per step, as once per ACK in the window law; the fluid RTT
    moves continuously, so the 20 ms cap rarely binds). A loss sets
    ``β = clamp(RTT_min/RTT_max, β_min, β_max)``, ``ssthresh = max(β·cwnd, 2)``,
    restarts Δ and fades ``RTT_max``. Slow start is Reno's. With the window
    law's ``rule="linux"``, Linux's ``modeswitch`` holds: β is ``β_min`` at a
    flow's first loss and whenever ``RTT_min ≤ 10 ms``.

    Not here (the window law's Linux rules that need per-ACK state): the
    bandwidth switch, the fixed-point rounding and whole-segment steps, α
    recomputed only at a step, Δ restarting at the end of the recovery (the
    fluid engine holds the window through recovery and restarts Δ at the
    loss), the kernel clock.

    α_raw, the RTT scaling and β are the window law's :meth:`Htcp.alpha_raw`,
    :meth:`Htcp.alpha` and :meth:`Htcp.beta_for`, vectorised and mirrored by
    value (constants from ``self.cc`` and this module's ``ALPHA_*``,
    ``_RTT_RATIO_*``, ``_MAX_RTT_STEP``, ``_MAX_RTT_FADE``).
    """

    long_steps = True  # alpha at the step's midpoint: quadratic in time
    scalar_params = ("rule",)  # the modeswitch is Linux's only

    state = {"last_cong": math.nan, "rtt_lo": math.inf, "rtt_hi": 0.0, "beta": math.nan,
             "modeswitch": 0.0}

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

    def beta_for(self, lo: np.ndarray, hi: np.ndarray,
                 modeswitch: np.ndarray | None = None) -> np.ndarray:
        cc = self.cc
        ok = (hi > 0) & np.isfinite(lo)
        if cc.rule == "linux" and modeswitch is not None:  # htcp_beta_update's modeswitch
            ok &= (modeswitch > 0) & (lo > MODESWITCH_RTT)
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
        beta = self.beta_for(np.minimum(f.rtt_lo[m], f.min_rtt[m]), f.rtt_hi[m],
                             f.modeswitch[m])
        return np.maximum(beta * f.cwnd[m], MIN_SSTHRESH)

    def on_loss(self, f: FlowArrays, m: np.ndarray, kind: str) -> None:
        lo = np.minimum(f.rtt_lo[m], f.min_rtt[m])
        f.rtt_lo[m] = lo
        f.beta[m] = self.beta_for(lo, f.rtt_hi[m], f.modeswitch[m])
        f.modeswitch[m] = 1.0
        super().on_loss(f, m, kind)
        f.last_cong[m] = f.now[m]
        hi = f.rtt_hi[m]
        f.rtt_hi[m] = np.where(hi > lo, lo + _MAX_RTT_FADE * (hi - lo), hi)


Htcp.fluid = HtcpFluid
