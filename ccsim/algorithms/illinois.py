"""TCP-Illinois: loss decides the direction, queueing delay the pace.

Source: S. Liu, T. Başar, R. Srikant, "TCP-Illinois: A Loss and Delay-Based
Congestion Control Algorithm for High-Speed Networks", VALUETOOLS 2006
(extended in Performance Evaluation 65(6–7), 2008); as implemented in Linux
``net/ipv4/tcp_illinois.c`` (S. Hemminger, 2007; read in the 4.x/5.x source,
whose window law later versions only re-spell with accessors).

Once per RTT (a *round*: until the segments in flight when it began are
delivered) the RTT samples of the round give the average queueing delay
``da = mean(RTT) − base_rtt`` and the largest one seen ``dm = max_rtt −
base_rtt`` (``base_rtt``, ``max_rtt``: smallest and largest sample of the
connection). With ``d1 = η1·dm``, ``d2 = η2·dm``, ``d3 = η3·dm``:

* additive increase (paper eq. for α): ``α = α_max`` if ``da ≤ d1``, else
  ``α = κ1 / (κ2 + da)`` with ``κ1 = (dm − d1)·α_min·α_max / (α_max − α_min)``
  and ``κ2 = (dm − d1)·α_min / (α_max − α_min) − d1`` — so α falls from
  ``α_max`` at ``d1`` to ``α_min`` at ``dm``;
* multiplicative decrease: ``β = β_min`` if ``da ≤ d2``, ``β = β_max`` if
  ``da ≥ d3``, linear in ``da`` between (``β = κ3 + κ4·da``);
* per ACK in congestion avoidance: ``cwnd += α·acked / cwnd`` (α segments
  per RTT); slow start is Reno's;
* on loss: ``ssthresh = max((1 − β)·cwnd, 2)``; after a timeout ``cwnd = 1``.

Taken from Linux (not in the paper):

* ``win_thresh = 15``: while ``cwnd < win_thresh`` at a round's end, α = 1
  and β = 1/2 — Reno at small windows.
* ``theta = 5``: once da has left the low-delay zone (``da > d1``), α returns
  to ``α_max`` only after ``theta`` consecutive rounds with ``da ≤ d1`` (α is
  held meanwhile), so that one quiet RTT does not trigger a burst.
* α starts at ``α_max`` and β at ``β_max``; a retransmission timeout resets
  α = 1, β = 1/2 and the low-delay count (``tcp_illinois_state``,
  ``TCP_CA_Loss``).

Differences from the source:

* Rounds end by delivered count (``Ack.delivered`` reaching the count
  delivered plus in flight when the round began), where Linux compares the
  ACK with ``snd_nxt`` at the round's start; the same edge without SACK.
* Floats throughout: Linux keeps α in 1/128 and β in 1/64 and computes
  delays in whole microseconds; ``da`` is clamped to ``[0, dm]`` so float
  rounding cannot push α outside ``[α_min, α_max]``.
* ``ssthresh`` uses ``cwnd``, as Linux's ``tcp_illinois_ssthresh`` (and the
  paper's W) do, not FlightSize.
* The window grows continuously (Linux adds whole segments via
  ``snd_cwnd_cnt``); slow start's overshoot past ``ssthresh`` carries into
  congestion avoidance (ccsim's Reno), where Linux drops it.
* Linux grows only when cwnd-limited (RFC 2861); ccsim's bulk senders always
  are.

Defaults and their sources:

* ``alpha_min = 0.3``, ``alpha_max = 10`` (segments per RTT) — the paper's
  §IV choice and Linux ``ALPHA_MIN``/``ALPHA_MAX`` (3/10 and 10 of
  ``ALPHA_SCALE``).
* ``beta_min = 1/8``, ``beta_max = 1/2`` — the paper and Linux
  ``BETA_MIN``/``BETA_MAX`` (``BETA_SCALE/8``, ``BETA_SCALE/2``).
* ``eta1 = 0.01``, ``eta2 = 0.1``, ``eta3 = 0.8`` — the paper's η's; Linux
  ``d1 = dm/100``, ``d2 = dm/10``, ``d3 = 8·dm/10``.
* ``win_thresh = 15`` (segments), ``theta = 5`` (rounds) — Linux module
  parameters of ``tcp_illinois.c``.
"""

from __future__ import annotations

import math

import numpy as np

from .base import MIN_SSTHRESH, Ack, CongestionControl, Loss, RttSample
from .fluid import FlowArrays, FluidLaw, any_
from .registry import register

ALPHA_BASE = 1.0  # α at small windows and after a timeout: Reno's (Linux ALPHA_BASE)


def _decrease_keeps_one_minus_beta(before: dict, event: object, after: dict) -> str | None:
    """On a loss ``ssthresh = max((1 − β)·cwnd, 2)`` with the β in force
    before it (paper; Linux ``tcp_illinois_ssthresh``)."""
    if not isinstance(event, Loss):
        return None
    expected = max((1.0 - before["beta"]) * before["cwnd"], MIN_SSTHRESH)
    if not math.isclose(after["ssthresh"], expected, rel_tol=1e-9, abs_tol=1e-9):
        return (f"{event.kind} loss at cwnd={before['cwnd']!r}, beta={before['beta']!r}: "
                f"ssthresh became {after['ssthresh']!r}, (1 − β)·cwnd gives {expected!r}")
    return None


def _alpha_and_beta_in_range(before: dict, event: object, after: dict) -> str | None:
    """α stays in ``[α_min, α_max]`` (or is Reno's 1) and β in ``[β_min, β_max]``."""
    a, b = after["alpha"], after["beta"]
    lo, hi = min(after["alpha_min"], ALPHA_BASE), max(after["alpha_max"], ALPHA_BASE)
    if not lo - 1e-9 <= a <= hi + 1e-9:
        return f"alpha = {a!r} outside [{lo!r}, {hi!r}]"
    if not after["beta_min"] - 1e-9 <= b <= after["beta_max"] + 1e-9:
        return f"beta = {b!r} outside [{after['beta_min']!r}, {after['beta_max']!r}]"
    return None


@register
class Illinois(CongestionControl):
    """TCP-Illinois window law with PRR recovery, as Linux runs it."""

    name = "illinois"
    recovery = "prr"  # Linux: SACK recovery with PRR for every law (tcp_input.c)
    param_space = {"alpha_min": (0.05, 1.0), "alpha_max": (1.0, 20.0),
                   "beta_min": (0.05, 0.25), "beta_max": (0.25, 0.75),
                   "win_thresh": (2.0, 50.0), "theta": (1, 10)}
    properties = (_decrease_keeps_one_minus_beta, _alpha_and_beta_in_range)

    def __init__(self, *, alpha_min: float = 0.3, alpha_max: float = 10.0,
                 beta_min: float = 0.125, beta_max: float = 0.5,
                 eta1: float = 0.01, eta2: float = 0.1, eta3: float = 0.8,
                 win_thresh: float = 15.0, theta: int = 5) -> None:
        self.alpha_min = alpha_min    # segments per RTT at the largest queueing delay
        self.alpha_max = alpha_max    # segments per RTT with no queueing delay
        self.beta_min = beta_min      # fraction given up on a loss at small delay
        self.beta_max = beta_max      # ... and at large delay
        self.eta1 = eta1              # d1 = eta1·dm: below it the delay counts as none
        self.eta2 = eta2              # d2 = eta2·dm: β_min up to here
        self.eta3 = eta3              # d3 = eta3·dm: β_max from here
        self.win_thresh = win_thresh  # segments: Reno's α and β below (Linux)
        self.theta = theta            # rounds of low delay before α returns to α_max (Linux)

    # -- the rule, as functions of the delays ------------------------------------
    def alpha_for(self, da: float, dm: float) -> float:
        """The paper's α(da): ``α_max`` up to ``d1``, then ``κ1/(κ2 + da)``."""
        d1 = self.eta1 * dm
        if da <= d1 or dm <= d1:
            return self.alpha_max
        span = dm - d1
        a_min, a_max = self.alpha_min, self.alpha_max
        if a_max <= a_min:
            return a_min
        k1 = span * a_min * a_max / (a_max - a_min)
        k2 = span * a_min / (a_max - a_min) - d1
        return min(max(k1 / (k2 + da), a_min), a_max)

    def beta_for(self, da: float, dm: float) -> float:
        """The paper's β(da): ``β_min`` up to ``d2``, ``β_max`` from ``d3``, linear between."""
        d2, d3 = self.eta2 * dm, self.eta3 * dm
        if da <= d2:
            return self.beta_min
        if da >= d3 or d3 <= d2:
            return self.beta_max
        return self.beta_min + (self.beta_max - self.beta_min) * (da - d2) / (d3 - d2)

    # -- hooks ---------------------------------------------------------------------
    def start(self, initial_window: float, mss: int) -> None:
        super().start(initial_window, mss)
        self.alpha = self.alpha_max   # Linux tcp_illinois_init
        self.beta = self.beta_max
        self.base_rtt = math.inf      # smallest RTT sample (s)
        self.max_rtt = 0.0            # largest RTT sample (s)
        self.sum_rtt = 0.0            # samples of the current round (s)
        self.cnt_rtt = 0
        self.round_end = -1.0         # delivered count that ends the round
        self.rtt_low = 0              # rounds of low delay since it was last high
        self.rtt_above = False        # delay has left the low zone

    def max_growth_per_rtt(self, cwnd: float) -> float:
        """α segments per RTT, α at most ``α_max`` (or Reno's 1 at small windows)."""
        return max(self.alpha_max, self.alpha_min, ALPHA_BASE)

    def on_rtt(self, sample: RttSample) -> None:
        rtt = sample.rtt
        self.base_rtt = min(self.base_rtt, rtt)
        self.max_rtt = max(self.max_rtt, rtt)
        self.sum_rtt += rtt
        self.cnt_rtt += 1

    def _update_params(self) -> None:
        """End of a round: α and β from this round's delays (Linux update_params)."""
        if self.cwnd < self.win_thresh:
            self.alpha, self.beta = ALPHA_BASE, self.beta_max
        elif self.cnt_rtt > 0:
            dm = max(self.max_rtt - self.base_rtt, 0.0)
            da = min(max(self.sum_rtt / self.cnt_rtt - self.base_rtt, 0.0), dm)
            self.alpha = self._alpha_with_theta(da, dm)
            self.beta = self.beta_for(da, dm)
        self.sum_rtt, self.cnt_rtt = 0.0, 0

    def _alpha_with_theta(self, da: float, dm: float) -> float:
        """Linux's alpha(): after high delay, α_max only after θ low rounds."""
        if da <= self.eta1 * dm:
            if not self.rtt_above:
                return self.alpha_max
            self.rtt_low += 1
            if self.rtt_low < self.theta:
                return self.alpha
            self.rtt_low, self.rtt_above = 0, False
            return self.alpha_max
        self.rtt_above = True
        return self.alpha_for(da, dm)

    def on_ack(self, ack: Ack) -> None:
        if ack.delivered >= self.round_end:
            self._update_params()
            self.round_end = ack.delivered + ack.inflight
        acked = self.slow_start(ack.acked)
        if acked:
            self.cwnd += self.alpha * acked / self.cwnd

    def rate_halving_floor(self) -> float:
        """``tcp_reno_min_cwnd``, this law's ``min_cwnd`` op in Linux
        2.6.x–3.1: ``ssthresh/2`` (segments)."""
        return self.ssthresh / 2.0

    def ssthresh_after(self, loss: Loss) -> float:
        return max((1.0 - self.beta) * self.cwnd, MIN_SSTHRESH)

    def on_loss(self, loss: Loss) -> None:
        super().on_loss(loss)
        if loss.kind == "timeout":  # Linux tcp_illinois_state(TCP_CA_Loss)
            self.alpha, self.beta = ALPHA_BASE, self.beta_max
            self.rtt_low, self.rtt_above = 0, False
            self.sum_rtt, self.cnt_rtt = 0.0, 0
            self.round_end = -1.0


class IllinoisFluid(FluidLaw):
    """TCP-Illinois in the fluid engine. The step's RTT is one sample weighted
    by the segments it acknowledged (``sum_rtt += rtt·acked``, ``cnt_rtt +=
    acked``; the window law takes one sample per ACK); ``base_rtt`` is the
    engine's ``min_rtt``, ``max_rtt`` the largest step RTT. When
    ``delivered`` passes the round's end, α and β are recomputed from the
    round's average and maximum queueing delay (the window law's
    :meth:`Illinois.alpha_for`, :meth:`Illinois.beta_for` and
    ``_alpha_with_theta``, vectorised and mirrored by value; constants from
    ``self.cc``), and the next round ends a window later. Between:
    slow start is Reno's and ``dcwnd/dt = α/RTT`` (per ACK ``α·acked/cwnd``).
    A loss sets ``ssthresh = max((1 − β)·cwnd, 2)``; a timeout resets α, β
    and the round as the window law does.
    """

    scalar_params = ("alpha_min", "alpha_max")  # alpha_for branches on them

    round_steps = True  # alpha and beta are set once per round

    state = {"alpha": math.nan, "beta": math.nan, "rtt_lo": math.inf, "rtt_hi": 0.0,
             "sum_rtt": 0.0, "cnt_rtt": 0.0, "round_end": -1.0, "rtt_low": 0.0,
             "rtt_above": 0.0}

    def start(self, f: FlowArrays, m: np.ndarray) -> None:
        f.alpha[m] = self.cc.alpha_max
        f.beta[m] = self.cc.beta_max

    def alpha_for(self, da: np.ndarray, dm: np.ndarray) -> np.ndarray:
        cc = self.cc
        a_min, a_max = cc.alpha_min, cc.alpha_max
        d1 = cc.eta1 * dm
        if a_max <= a_min:
            a = np.full_like(dm, a_min)
        else:
            span = dm - d1
            k1 = span * a_min * a_max / (a_max - a_min)
            k2 = span * a_min / (a_max - a_min) - d1
            a = np.minimum(np.maximum(k1 / (k2 + da), a_min), a_max)  # (k2 + da may be 0)
        return np.where((da <= d1) | (dm <= d1), a_max, a)

    def beta_for(self, da: np.ndarray, dm: np.ndarray) -> np.ndarray:
        cc = self.cc
        d2, d3 = cc.eta2 * dm, cc.eta3 * dm
        lin = cc.beta_min + (cc.beta_max - cc.beta_min) * (da - d2) / (d3 - d2)
        return np.where(da <= d2, cc.beta_min,
                        np.where((da >= d3) | (d3 <= d2), cc.beta_max, lin))

    def _update_params(self, f: FlowArrays, m: np.ndarray) -> None:
        cc = self.cc
        small = m & (f.cwnd < cc.win_thresh)
        upd = m & ~small & (f.cnt_rtt > 0)
        dm = np.maximum(f.rtt_hi - f.rtt_lo, 0.0)
        avg = f.sum_rtt / f.cnt_rtt  # (0/0 for flows outside m)
        da = np.minimum(np.maximum(avg - f.rtt_lo, 0.0), dm)
        da = np.where(upd, da, 0.0)
        dm = np.where(upd, dm, 0.0)
        # Linux alpha(): after high delay, α_max only after θ rounds of low delay
        low = da <= cc.eta1 * dm
        counting = upd & low & (f.rtt_above > 0)
        rtt_low = np.where(counting, f.rtt_low + 1.0, f.rtt_low)
        back = counting & (rtt_low >= cc.theta)
        alpha = np.where(low, np.where(counting & ~back, f.alpha, cc.alpha_max),
                         self.alpha_for(da, dm))
        np.copyto(f.rtt_low, np.where(back, 0.0, rtt_low))
        np.copyto(f.rtt_above, np.where(upd & ~low, 1.0, np.where(back, 0.0, f.rtt_above)))
        np.copyto(f.alpha, np.where(upd, alpha, np.where(small, ALPHA_BASE, f.alpha)))
        np.copyto(f.beta, np.where(upd, self.beta_for(da, dm),
                                   np.where(small, cc.beta_max, f.beta)))
        f.sum_rtt[m] = 0.0
        f.cnt_rtt[m] = 0.0

    def grow(self, f: FlowArrays) -> None:
        live = f.h > 0
        ended = live & (f.delivered >= f.round_end)
        if any_(ended):
            self._update_params(f, ended)
            np.copyto(f.round_end, np.where(ended, f.delivered + f.inflight, f.round_end))
        np.copyto(f.rtt_lo, np.where(live, np.minimum(f.rtt_lo, np.minimum(f.min_rtt, f.rtt)),
                                     f.rtt_lo))
        np.copyto(f.rtt_hi, np.where(live, np.maximum(f.rtt_hi, f.rtt), f.rtt_hi))
        f.sum_rtt += np.where(live, f.rtt * f.acked, 0.0)
        f.cnt_rtt += np.where(live, f.acked, 0.0)
        h_ca = f.slow_start()
        # flows not started carry no α yet (nan): leave them exactly as they are
        f.cwnd += np.where(h_ca > 0, f.alpha * h_ca / f.rtt, 0.0)

    def ssthresh_after(self, f: FlowArrays, m: np.ndarray, kind: str) -> np.ndarray:
        return np.maximum((1.0 - f.beta[m]) * f.cwnd[m], MIN_SSTHRESH)

    def on_loss(self, f: FlowArrays, m: np.ndarray, kind: str) -> None:
        super().on_loss(f, m, kind)
        if kind == "timeout":  # Linux tcp_illinois_state(TCP_CA_Loss)
            f.alpha[m] = ALPHA_BASE
            f.beta[m] = self.cc.beta_max
            f.rtt_low[m] = 0.0
            f.rtt_above[m] = 0.0
            f.sum_rtt[m] = 0.0
            f.cnt_rtt[m] = 0.0
            f.round_end[m] = -1.0


Illinois.fluid = IllinoisFluid
