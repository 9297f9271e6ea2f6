"""CUBIC: a cubic window growth function of the time since the last loss.

Source: L. Xu, S. Ha, I. Rhee, V. Goel, L. Eggert, "CUBIC for Fast and
Long-Distance Networks", RFC 9438, 2023 (after Ha, Rhee, Xu, "CUBIC: A New
TCP-Friendly High-Speed TCP Variant", ACM SIGOPS OSR 42(5), 2008).

Update rules (windows in segments, times in seconds):

* slow start (``cwnd < ssthresh``): Reno's, unchanged (RFC 9438 §4.10).
* congestion epoch: begins at the first ACK in congestion avoidance after a
  loss (§4.2, §4.8); at that moment ``t0 = now``, ``cwnd_epoch = cwnd``,
  ``W_est = cwnd_epoch`` and ``K = cbrt((W_max − cwnd_epoch) / C)`` (§4.2
  eq. 2), which is ``cbrt(W_max·(1 − β)/C)`` when ``cwnd_epoch = β·W_max``;
* window function (§4.2 eq. 1): ``W_cubic(t) = C·(t − K)³ + W_max`` with
  ``t = now − t0``;
* target (§4.2): ``target = W_cubic(t + RTT)`` clamped to
  ``[cwnd, 1.5·cwnd]``, with RTT Linux's ``delay_min`` (``bictcp_update``
  adds ``ca->delay_min`` to ``t``), the flow's minimum RTT ``Ack.min_rtt``;
  ``rtt="srtt"`` takes RFC 9438 §4.1.2's smoothed RTT (``Ack.srtt``) instead;
* Reno-friendly estimate: per ACK ``W_est += α·acked/cwnd``. By default
  Linux's (``tcp_cubic.c``, ``tcp_friendliness = 1``): a fixed
  ``α = 8/beta_scale`` with ``beta_scale = ⌊8(1 + β)/(3(1 − β))⌋`` (15 at
  β = 0.7: α = 0.533). With ``rfc9438_friendly=True``, RFC 9438 §4.3's:
  ``α_cubic = 3(1 − β)/(1 + β)``, raised to 1 once ``W_est ≥ cwnd_prior``
  (the window before the last reduction). ``tcp_friendliness=False`` turns
  the Reno-friendly region off (Linux's module parameter);
  ``friendly_per_ack=True`` adds ``α/cwnd`` per ACK whatever it acknowledges,
  as Linux before 4.1 did (``bictcp_update``: ``ca->ack_cnt++``, while the
  cubic target was scaled per segment by the measured ACK ratio,
  ``delayed_ack``): under delayed ACKs ``W_est`` then grows ``α/2`` per RTT.
  Packet engine only;
* per ACK in congestion avoidance (concave §4.4 / convex §4.5):
  ``cwnd += (target − cwnd)/cwnd · acked``; if ``W_cubic(t) < W_est``
  (Reno-friendly region) ``cwnd = max(that, W_est)``;
* on loss (§4.6, §4.7): ``ssthresh = max(β·cwnd, 2)``; fast convergence:
  ``W_max = cwnd·(1 + β)/2`` if ``cwnd < W_max`` (the previous one), else
  ``W_max = cwnd``; the epoch ends.
* after a timeout (§4.8): Reno's loss window, ssthresh as above, and the
  first epoch after it uses ``K = 0`` and ``W_max = cwnd_epoch``.

Differences from the source:

* ssthresh uses ``cwnd`` (as Linux's ``cubictcp_recalc_ssthresh`` does), not
  ``flight_size``; RFC 9438 §4.6 writes ``flight_size·β`` and notes that
  implementations use ``cwnd`` instead. The two agree unless the flow is
  application-limited.
* RTT in the target is Linux's ``delay_min`` (the RFC's is the smoothed
  RTT: ``rtt="srtt"``). Linux ignores RTT samples for a second after an
  epoch begins; ccsim's minimum keeps them (a minimum only falls, so this
  matters only when the path's delay drops).
* Slow start ends before a loss by Linux's HyStart (``hystart=True``,
  ``hystart_variant="linux"``, ACK-train and delay detection as chosen by
  ``hystart_detect``, Linux's module parameter:
  :class:`~ccsim.algorithms.hystart.HyStartLinux`), on by default as in
  Linux; ``hystart_variant="rfc9406"`` runs HyStart++ (RFC 9406, which RFC
  9438 §4.10 recommends) instead; ``hystart=False`` leaves plain slow start,
  ending only at a loss. As Linux (``cubictcp_state`` on ``TCP_CA_Loss``),
  HyStart looks again in the slow start after a timeout.
* In the Reno-friendly region ``cwnd`` becomes the larger of ``W_est`` and
  the cubic update (which never decreases it); the RFC's "set cwnd to W_est"
  could shrink a window that the cubic target had carried above ``W_est``.
* If ``cwnd_epoch ≥ W_max`` the epoch uses ``K = 0`` and
  ``W_max = cwnd_epoch`` (Linux's ``bictcp_update`` does the same); this is
  also how the post-timeout rule of §4.8 is realised.
* No application-limited handling (§5.8), no per-ACK integer counters: the
  window is a float.
* As Linux, before the first loss and after a timeout (``last_max_cwnd``
  0) the window grows at least 5 % per RTT (``bictcp_update``'s ``cnt`` at
  most 20), which RFC 9438 does not have.

Defaults and their sources:

* ``c = 410/1024 ≈ 0.4004`` — Linux's, constant for constant:
  ``bic_scale = 41`` scaled by 10 into ``cube_rtt_scale`` over ``2^10``
  (``net/ipv4/tcp_cubic.c``, Linux 6.x). RFC 9438 §4.2 / §5 says 0.4:
  pass ``c=0.4``.
* ``beta = 717/1024 ≈ 0.7002`` — Linux's ``beta = 717`` over
  ``BICTCP_BETA_SCALE = 1024``; RFC 9438 §4.6's β_cubic is 0.7: pass
  ``beta=0.7`` (CUBIC v2.0 had 0.8; v2.3 made it 0.7).
* ``fast_convergence = True`` — RFC 9438 §4.7 (SHOULD); Linux
  ``fast_convergence = 1``.
* ``tcp_friendliness = True``, ``rfc9438_friendly = False`` — Linux's
  fixed-α Reno-friendly region, which RFC 9438's would put up to 3.5 % ahead
  of on the convex side.
* ``hystart = True``, ``hystart_variant = "linux"``, ``hystart_detect = 3``
  — Linux's module parameters ``hystart = 1``, ``hystart_detect =
  HYSTART_ACK_TRAIN | HYSTART_DELAY``; its constants in
  :mod:`ccsim.algorithms.hystart` (``HYSTART_MIN_SAMPLES`` 8, delay threshold
  ``clamp(delay_min/8, 4 ms, 16 ms)``, ``hystart_ack_delta_us`` 2 ms,
  ``hystart_low_window`` 16).
* ``rtt = "delay_min"`` — Linux's ``bictcp_update``.
"""

from __future__ import annotations

import math

import numpy as np

from .hystart import (ACK_DELAY_CAP, CSS_GROWTH_DIVISOR, CSS_ROUNDS, GSO_MAX_SIZE,
                      HYSTART_ACK_DELTA, HYSTART_ACK_TRAIN, HYSTART_DELAY, HYSTART_DELAY_MAX,
                      HYSTART_DELAY_MIN, HYSTART_LOW_WINDOW, HYSTART_MIN_SAMPLES,
                      MAX_RTT_THRESH, MIN_RTT_DIVISOR,
                      MIN_RTT_THRESH, HyStartLinux, HyStartPlusPlus)
from .base import MIN_SSTHRESH, Ack, Loss
from .fluid import FlowArrays, FluidLaw, any_
from .registry import register
from .reno import Reno

TARGET_CAP = 1.5
"""The most the target may exceed ``cwnd``, as a factor: RFC 9438 §4.2 clamps
``W_cubic(t + RTT)`` to ``[cwnd, 1.5·cwnd]`` (Linux ``bictcp_update``: at
most one segment per two ACKs)."""


NO_LOSS_MIN_STEP = 1.0 / 20.0
"""Before any loss (and after a timeout), Linux's ``bictcp_update`` caps
``cnt`` at 20 ("increase cwnd 5% per RTT"): the window grows at least
``1/20`` of a segment per segment acknowledged, however flat the cubic curve
(it matters when HyStart ends slow start without a loss: ``W_max`` is then
the window itself and ``K = 0``)."""


def released_w_max(cwnd, beta):
    """Fast convergence's ``W_max`` after a loss at a window below the last
    one: ``cwnd·(1 + β)/2`` (RFC 9438 §4.7), for one window (float) or many (array)."""
    return cwnd * (1.0 + beta) / 2.0


@register
class Cubic(Reno):
    """CUBIC window law (RFC 9438) with PRR recovery, as Linux runs it."""

    name = "cubic"
    param_space = {"c": (0.01, 10.0), "beta": (0.5, 0.95),
                   "hystart_detect": (0, 3)}  # valid keyword ranges
    recovery = "prr"  # Linux: SACK recovery with PRR for every law (tcp_input.c)
    HYSTART_VARIANTS = ("linux", "rfc9406")
    RTTS = ("delay_min", "srtt")

    def __init__(self, *, c: float = 410 / 1024, beta: float = 717 / 1024,
                 fast_convergence: bool = True, hystart: bool = True,
                 hystart_variant: str = "linux", hystart_detect: int = 3,
                 tcp_friendliness: bool = True, rfc9438_friendly: bool = False,
                 rtt: str = "delay_min", friendly_per_ack: bool = False) -> None:
        from ..errors import ScenarioError
        if hystart_variant not in self.HYSTART_VARIANTS:
            raise ScenarioError("hystart_variant", hystart_variant,
                                "'linux' (Linux's HyStart) or 'rfc9406' (HyStart++)")
        if rtt not in self.RTTS:
            raise ScenarioError("rtt", rtt, "'delay_min' (Linux's bictcp_update) or "
                                "'srtt' (RFC 9438 §4.1.2)")
        self.c = c  # cubic scaling constant (segments / s³)
        self.beta = beta  # multiplicative decrease factor β_cubic
        self.fast_convergence = fast_convergence
        self.hystart = hystart  # leave slow start before a loss
        self.hystart_variant = hystart_variant  # "linux" HyStart or "rfc9406" HyStart++
        self.hystart_detect = hystart_detect  # Linux's: 1 ACK train, 2 delay, 3 both
        self.tcp_friendliness = tcp_friendliness  # keep a Reno-friendly region at all
        self.rfc9438_friendly = rfc9438_friendly  # RFC 9438 §4.3's α (1 past cwnd_prior)
        self.rtt = rtt  # the RTT in W_cubic(t + RTT): "delay_min" (Linux) or "srtt" (RFC)
        self.friendly_per_ack = friendly_per_ack  # W_est counts ACKs (Linux < 4.1), not segments

    # -- the rule, as functions of state ---------------------------------------
    @property
    def alpha_cubic(self) -> float:
        """AIMD increase (segments per RTT) giving Reno's average rate with β:
        RFC 9438 §4.3's ``3(1 − β)/(1 + β)``, or by default Linux's integer
        form of it, ``8/⌊8(1 + β)/(3(1 − β))⌋`` (its ``beta_scale``)."""
        if self.rfc9438_friendly:
            return 3.0 * (1.0 - self.beta) / (1.0 + self.beta)
        return 8.0 / math.floor(8.0 * (1.0 + self.beta) / (3.0 * (1.0 - self.beta)))

    def friendly_alpha(self, w_est: float, cwnd_prior: float) -> float:
        """α for ``W_est`` now: RFC 9438 raises it to 1 once ``W_est`` passes
        ``cwnd_prior``; Linux keeps it fixed."""
        if self.rfc9438_friendly and w_est >= cwnd_prior:
            return 1.0
        return self._alpha if self._beta_of_alpha == self.beta else self.alpha_cubic

    def k(self, w_max: float, cwnd_epoch: float) -> float:
        """Seconds for W_cubic to climb from ``cwnd_epoch`` to ``w_max`` (§4.2 eq. 2)."""
        return math.cbrt(max(w_max - cwnd_epoch, 0.0) / self.c)

    def w_cubic(self, t: float) -> float:
        """§4.2 eq. 1 for the current epoch, ``t`` seconds after it began."""
        return self.c * (t - self._k) ** 3 + self.w_max

    # -- hooks -----------------------------------------------------------------
    def start(self, initial_window: float, mss: int) -> None:
        super().start(initial_window, mss)
        self.w_max = 0.0        # window before the last reduction, after fast convergence
        self.cwnd_prior = 0.0   # cwnd when the last loss was detected
        self.last_max = 0.0     # Linux's last_max_cwnd: 0 before a loss, and after a timeout
        self.w_est = 0.0        # Reno-friendly estimate (§4.3)
        self.epoch_start: float | None = None  # time the current epoch began
        self._k = 0.0
        self._new_hystart()
        self._alpha, self._beta_of_alpha = self.alpha_cubic, self.beta  # per ACK: computed once

    def _new_hystart(self) -> None:
        if not self.hystart:
            self._hystart = self._linux = None
        elif self.hystart_variant == "linux":
            self._hystart, self._linux = None, HyStartLinux(self.hystart_detect)
        else:
            self._hystart, self._linux = HyStartPlusPlus(), None

    def _begin_epoch(self, now: float) -> None:
        self.epoch_start = now
        if self.cwnd >= self.w_max:
            # No reduction to recover from (first epoch, or after a timeout):
            # start on the plateau and probe (K = 0).
            self.w_max = self.cwnd
        self._k = self.k(self.w_max, self.cwnd)
        self.w_est = self.cwnd

    def max_growth_per_rtt(self, cwnd: float) -> float:
        """RFC 9438 §4.2 caps the target at ``1.5·cwnd``: at most half a window
        per RTT (the Reno-friendly region grows slower)."""
        return (TARGET_CAP - 1.0) * cwnd

    def on_ack(self, ack: Ack) -> None:
        linux = self._linux
        if (linux is not None and not linux.found and self.cwnd < self.ssthresh
                and self.cwnd >= HYSTART_LOW_WINDOW and linux.update(ack, self.cwnd, self.mss)):
            self.ssthresh = self.cwnd  # hystart_update: tp->snd_ssthresh = tcp_snd_cwnd(tp)
        hystart = self._hystart
        if hystart is not None and self.cwnd < self.ssthresh:
            factor = hystart.growth(ack)
            if hystart.done:                  # CSS over: congestion avoidance
                self.ssthresh = self.cwnd
                self._hystart = None
            elif factor < 1.0:                # Conservative Slow Start
                self.cwnd += ack.acked * factor
                return
        acked = self.slow_start(ack.acked)
        if not acked:
            return
        if self.epoch_start is None:
            self._begin_epoch(ack.now)
        t = ack.now - self.epoch_start
        rtt = ack.min_rtt if self.rtt == "delay_min" else ack.srtt
        if not math.isfinite(rtt):
            rtt = ack.rtt or 0.0
        cwnd = self.cwnd
        # Reno-friendly estimate: α per RTT (Linux: fixed; RFC 9438 §4.3: 1 past cwnd_prior).
        # Linux < 4.1 counted it per ACK (friendly_per_ack), today per segment
        self.w_est = w_est = self.w_est + self.friendly_alpha(self.w_est, self.cwnd_prior) * (
            1.0 if self.friendly_per_ack else acked) / cwnd
        # the target W_cubic(t + RTT), clamped to [cwnd, 1.5 cwnd] (w_cubic, inline)
        c, k, w_max = self.c, self._k, self.w_max
        target = c * (t + rtt - k) ** 3 + w_max
        if cwnd > target:
            target = cwnd
        cap = TARGET_CAP * cwnd
        if cap < target:
            target = cap
        step = (target - cwnd) / cwnd
        if self.last_max == 0.0 and step < NO_LOSS_MIN_STEP:
            step = NO_LOSS_MIN_STEP  # bictcp_update: cnt at most 20 before a loss is known
        cubic = cwnd + step * acked
        if self.tcp_friendliness and c * (t - k) ** 3 + w_max < w_est and w_est > cubic:
            cubic = w_est  # Reno-friendly region
        self.cwnd = cubic

    def rate_halving_floor(self) -> float:
        """``ssthresh`` (segments): Linux 2.6.x–3.1's ``tcp_cubic.c`` had no
        ``min_cwnd`` op, so ``tcp_cwnd_min`` fell back on it."""
        return self.ssthresh

    def ssthresh_after(self, loss: Loss) -> float:
        """RFC 9438 §4.6 with cwnd for flight_size: ``max(β·cwnd, 2)``."""
        return max(self.cwnd * self.beta, MIN_SSTHRESH)

    def w_max_after_loss(self) -> float:
        """§4.7 fast convergence: release bandwidth when the window shrank."""
        if self.fast_convergence and self.cwnd < self.w_max:
            return released_w_max(self.cwnd, self.beta)
        return self.cwnd

    def on_loss(self, loss: Loss) -> None:
        self._hystart = None  # a loss ends HyStart++ (RFC 9406 §4.2)
        self.w_max = self.w_max_after_loss()
        self.last_max = self.w_max
        self.cwnd_prior = self.cwnd
        self.epoch_start = None
        super().on_loss(loss)
        if loss.kind == "timeout":
            # §4.8: the first epoch after a timeout has K = 0, W_max = cwnd_epoch.
            self.w_max = 0.0
            self.last_max = 0.0  # cubictcp_state(TCP_CA_Loss): bictcp_reset
            if self.hystart and self.hystart_variant == "linux":
                self._new_hystart()  # cubictcp_state(TCP_CA_Loss): HyStart looks afresh


def _cube(x: np.ndarray) -> np.ndarray:
    """``x³`` elementwise by multiplication (numpy's ``x ** 3`` calls ``pow``
    per element: about 15× slower, and the fluid law takes three per step)."""
    return x * x * x


class CubicFluid(FluidLaw):
    """CUBIC in the fluid engine, the window law above with ACKs aggregated.

    Over a step of ``h`` seconds a flow receives ``cwnd·h/RTT`` ACKs; each
    moves ``cwnd`` a ``1/cwnd`` of the way to ``target = W_cubic(t + RTT)``
    (clamped to ``[cwnd, 1.5·cwnd]``), so ``cwnd`` relaxes towards the target
    with time constant ``RTT`` — integrated exactly over the step with the
    target taken as a ramp ``T0 → T1`` between its values at the step's ends,
    ``T1 − L − (T0 − L − cwnd)·e^(−h/RTT)`` with ``L = (T1 − T0)·RTT/h``
    (``T1 − (T1 − cwnd)·e^(−h/RTT)`` for a still target), so that a long step
    neither overshoots nor runs an RTT ahead of the curve. ``W_est`` grows ``α`` per RTT (with ``rfc9438_friendly``, 1 once
    past ``cwnd_prior``),
    and in the Reno-friendly region ``cwnd`` is at least ``W_est``. Epochs,
    ``K``, fast convergence and the timeout rule are the window law's.
    """

    long_steps = True  # relaxes exactly towards W_cubic(t + RTT)

    state = {"w_max": 0.0, "cwnd_prior": 0.0, "w_est": 0.0, "epoch": math.nan, "k": 0.0,
             "last_max": 0.0,
             "css_until": math.nan, "hystart_over": 0.0,
             "round_next": math.nan, "round_rtt": math.inf, "last_rtt": math.nan,
             "round_start": math.nan, "round_w": 0.0, "train_w": math.nan,
             "train_rtt": math.nan, "sent_rtt": math.inf, "sent_left": math.inf,
             "sent_w": math.nan, "ack_left": 0.0}

    def __init__(self, cc: Cubic) -> None:
        if np.any(cc.friendly_per_ack):  # refused once, as the batch is built
            from ..errors import packet_only
            raise packet_only("params.friendly_per_ack", True, "False",
                              "it grows W_est per segment")
        super().__init__(cc)

    def grow(self, f: FlowArrays) -> None:
        cc = self.cc
        before = f.cwnd.copy()
        h_ca = f.slow_start()
        if cc.hystart and cc.hystart_variant == "linux":
            self._hystart_linux(f, before)
        elif cc.hystart:
            h_ca = self._hystart(f, before, h_ca)
        ca = h_ca > 0
        if not any_(ca):
            return
        fresh = ca & np.isnan(f.epoch)
        if any_(fresh):  # the first ACK in congestion avoidance begins an epoch
            f.epoch[fresh] = f.now[fresh]
            np.copyto(f.w_max, np.where(fresh & (f.cwnd >= f.w_max), f.cwnd, f.w_max))
            fi = fresh.nonzero()[0]  # (a cube root is dear: of those flows alone)
            c = cc.c[fi] if isinstance(cc.c, np.ndarray) else cc.c
            f.k[fi] = np.cbrt(np.maximum(f.w_max[fi] - f.cwnd[fi], 0.0) / c)
            f.w_est[fresh] = f.cwnd[fresh]
        rtt = f.min_rtt if cc.rtt == "delay_min" else f.srtt
        rtt = np.where(np.isfinite(rtt), rtt, f.rtt)
        t = f.now + f.h - f.epoch
        w_cubic = cc.c * _cube(t - f.k) + f.w_max
        target = np.minimum(np.maximum(cc.c * _cube(t + rtt - f.k) + f.w_max, f.cwnd),
                            TARGET_CAP * f.cwnd)
        rounds = h_ca / f.rtt  # RTTs of ACKs in congestion avoidance this step
        # the target moves during the step: taken as a ramp from its value at
        # the start of the step's congestion avoidance to its value at the end,
        # relaxation towards a ramp integrates exactly (a long step must not
        # lead it by an RTT)
        before_t = np.minimum(np.maximum(cc.c * _cube(t - h_ca + rtt - f.k) + f.w_max, f.cwnd),
                              TARGET_CAP * f.cwnd)
        decay = np.exp(-rounds)
        lag = np.where(rounds > 0, (target - before_t) / np.where(rounds > 0, rounds, 1.0), 0.0)
        cubic = target - lag - (before_t - lag - f.cwnd) * decay
        # before a loss is known: at least 5 % per RTT (Linux's cnt <= 20)
        no_loss = f.last_max == 0.0
        if any_(no_loss):
            cubic = np.where(no_loss,
                             np.maximum(cubic, f.cwnd * np.exp(rounds * NO_LOSS_MIN_STEP)), cubic)
        alpha = (np.where(f.w_est >= f.cwnd_prior, 1.0, cc.alpha_cubic) if cc.rfc9438_friendly
                 else cc.alpha_cubic)
        w_est = f.w_est + alpha * rounds
        friendly = (w_cubic < w_est) & cc.tcp_friendliness
        np.copyto(f.cwnd, np.where(ca, np.where(friendly, np.maximum(cubic, w_est), cubic),
                                   f.cwnd))
        np.copyto(f.w_est, np.where(ca, w_est, f.w_est))

    def _hystart_linux(self, f: FlowArrays, before: np.ndarray) -> None:
        """Linux's HyStart at the step's resolution, with the packets' rounds
        and trains in slow start as the ACK clock sends them.

        * Trains: slow start sends a window per RTT as one train (each ACK
          releases twice what it acknowledges), and a train begins with the
          window ``train_w``, the window slow start began with doubled once
          per RTT. The data sent ``j`` segments into a train meets the queue
          the train began with plus what the train has added, half of what it
          sent: the window's growth since it began. So data sent as the
          window is ``W`` meets the RTT ``train_rtt + (W − train_w)/C`` (``C``
          the bottleneck's rate), or the fluid queue's if larger.
        * Rounds (``bictcp_hystart_reset``): the first begins as the window
          reaches ``HYSTART_LOW_WINDOW`` (``hystart_update`` is not called
          below it); a round ends once the data in flight at its start is
          delivered: slow start adds a segment per segment delivered, so as
          the window reaches ``2·round_w − a``, ``a`` the segments of the ACK
          that ends it (delivered, not yet added to the window); ``a`` is 2
          behind delayed ACKs, 1 while the receiver sends quick ACKs.
        * Delay (``detect & 2``): Linux tests the smallest of the round's
          first ``HYSTART_MIN_SAMPLES`` samples and the next. The round's
          first ACKs acknowledge the data sent as the last round began (its
          end is what was sent by then), so they carry the RTT that data
          met; if its train sent fewer than ``HYSTART_MIN_SAMPLES·a``
          segments after it, the samples reach the next train, whose start
          met the queue that train began with, and the smallest is the
          lower. The first round's samples acknowledge the end of the train
          before and the start of the current one: the RTT the current train
          began with. Above ``min_rtt + clamp(min_rtt/8, 4 ms, 16 ms)`` slow
          start ends at the ninth sample, its window ``round_w +
          HYSTART_MIN_SAMPLES·a``: that is ``ssthresh``.
        * ACK train (``detect & 1``): the round's ACKs come back ``a``
          segments apart at the rate ``r`` the bottleneck serves the flow's
          data — the link's rate while no queue stands, its share of the
          link's rate behind one. If they are at most ``HYSTART_ACK_DELTA``
          apart they form one train, spanning ``round_w/r``; once that
          exceeds ``(min_rtt + ack_delay)/2`` the train fires that long
          after the round began, when its ACKs have added ``r·(min_rtt +
          ack_delay)/2`` to ``round_w``: that window is ``ssthresh``.
          ``ack_delay`` is :meth:`~ccsim.algorithms.hystart.HyStartLinux.ack_delay`.
        """
        detect = self.cc.hystart_detect
        if not detect & (HYSTART_DELAY | HYSTART_ACK_TRAIN):
            return
        in_ss = (f.h > 0) & (before < f.ssthresh) & (f.hystart_over == 0.0)
        if not any_(in_ss):  # (the usual step: nothing in slow start to test)
            return
        grown = f.cwnd
        last = np.where(np.isnan(f.last_rtt), f.rtt, f.last_rtt)  # the RTT as the step began
        rising = grown > before
        span = np.log(np.where(rising, grown / np.where(before > 0, before, 1.0), 2.0))

        def at(w):  # the fraction of the step at which the window reached w (doubling)
            frac = np.log(np.maximum(w, before) / np.where(before > 0, before, 1.0)) / span
            return np.where(rising, np.clip(frac, 0.0, 1.0), 0.0)

        # trains: the one the step began in, and the next if the window reached it
        fresh = in_ss & np.isnan(f.train_w)
        if any_(fresh):
            np.copyto(f.train_w, before, where=fresh)
            np.copyto(f.train_rtt, last, where=fresh)
        old_w, old_rtt = f.train_w.copy(), f.train_rtt.copy()
        crossed = in_ss & (grown >= 2.0 * f.train_w)
        if any_(crossed):
            k = np.floor(np.log2(np.where(crossed, grown / f.train_w, 1.0)))
            new_w = f.train_w * np.exp2(k)
            rtt_then = last + at(new_w) * (f.rtt - last)
            np.copyto(f.train_w, new_w, where=crossed)
            np.copyto(f.train_rtt, rtt_then, where=crossed)
        a = np.where(f.quick_left > 0, 1.0, f.ack_segs)  # segments per ACK (quick ACKs: 1)
        first = in_ss & np.isnan(f.round_next) & (grown >= HYSTART_LOW_WINDOW)
        # (the ACK that ends a round counts its own segments as delivered, not yet
        # in the window: that ACK's a, not the first one's, is what the next round lacks)
        new_round = first | (in_ss & (grown >= f.round_next - a))
        rate = np.where(f.queued, f.rate, f.capacity)   # segments/s at the bottleneck
        if any_(new_round):
            x = np.where(first, np.maximum(before, HYSTART_LOW_WINDOW), f.round_next - a)
            frac = at(x)
            later = x >= f.train_w                       # in the train the step reached
            w_ts = np.where(later, f.train_w, old_w)
            rtt_ts = np.where(later, f.train_rtt, old_rtt)
            rtt_x = last + frac * (f.rtt - last)
            sent = np.maximum(rtt_ts + (x - w_ts) / f.capacity, rtt_x)  # met by data sent at x
            left = 2.0 * (2.0 * w_ts - x)                 # what its train sent after it
            reach = f.sent_left < HYSTART_MIN_SAMPLES * a
            # the round's ACKs come back without a gap while they acknowledge the
            # rest of that train, and on into the next unless an idle link parts
            # them: a train of 2·train_w segments keeps the bottleneck busy for
            # 2·train_w/r of the base RTT, the next train arriving a base RTT
            # after it began; its ACKs then follow within hystart_ack_delta
            # if the idle time and an ACK's spacing do
            prev_w = np.where(first, w_ts / 2.0, f.sent_w)
            idle = np.maximum(f.base_rtt - 2.0 * prev_w / rate, 0.0)
            unbroken = np.where(idle + a / rate <= HYSTART_ACK_DELTA, np.inf,
                                np.where(first, 0.0, f.sent_left))
            np.copyto(f.ack_left, unbroken, where=new_round)
            np.copyto(f.sent_w, w_ts, where=new_round)
            test = np.where(first, rtt_ts,
                            np.minimum(f.sent_rtt, np.where(reach, rtt_ts, np.inf)))
            np.copyto(f.round_rtt, test, where=new_round)
            np.copyto(f.sent_rtt, sent, where=new_round)
            np.copyto(f.sent_left, left, where=new_round)
            np.copyto(f.round_w, x, where=new_round)
            np.copyto(f.round_start, f.now + frac * f.h, where=new_round)
            np.copyto(f.round_next, 2.0 * x, where=new_round)
        np.copyto(f.last_rtt, f.rtt, where=in_ss)
        looking = in_ss & np.isfinite(f.round_next)
        if detect & HYSTART_ACK_TRAIN:
            pacing = 2.0 * f.cwnd * f.mss / np.where(f.srtt > 0, f.srtt, f.rtt)  # bytes/s
            ack_delay = np.minimum(ACK_DELAY_CAP, 4.0 * GSO_MAX_SIZE / pacing)
            thresh = (f.min_rtt + ack_delay) / 2.0
            ok = rate > 0
            train = (looking & ok & (a <= HYSTART_ACK_DELTA * rate)
                     & (f.ack_left > thresh * rate) & (f.now + f.h >= f.round_start + thresh))
            if any_(train):
                stop_at = np.maximum(f.round_w + rate * thresh, HYSTART_LOW_WINDOW)
                f.ssthresh[train] = stop_at[train]
                np.copyto(f.cwnd, np.minimum(f.cwnd, stop_at), where=train)
                f.hystart_over[train] = 1.0
                looking &= ~train
        if detect & HYSTART_DELAY and any_(new_round):
            thresh = np.minimum(np.maximum(f.min_rtt / 8.0, HYSTART_DELAY_MIN),
                                HYSTART_DELAY_MAX)
            stop = looking & new_round & (f.round_rtt > f.min_rtt + thresh)
            if any_(stop):
                stop_at = f.round_w + HYSTART_MIN_SAMPLES * a
                f.ssthresh[stop] = stop_at[stop]
                np.copyto(f.cwnd, np.minimum(f.cwnd, stop_at), where=stop)
                f.hystart_over[stop] = 1.0

    def _hystart(self, f: FlowArrays, before: np.ndarray, h_ca: np.ndarray) -> np.ndarray:
        """HyStart++ (RFC 9406 §4.2) at the step's resolution: a flow in slow
        start whose RTT has risen ``clamp(min_rtt/8, 4 ms, 16 ms)`` above its
        minimum enters Conservative Slow Start — a quarter segment per
        acknowledged one (:meth:`FlowArrays.ss_grown`) for ``CSS_ROUNDS``
        RTTs — and then congestion avoidance. (The RFC's return to slow start on a spurious exit is left
        out.)"""
        in_ss = (f.h > 0) & (before < f.ssthresh) & (f.hystart_over == 0.0)
        thresh = np.minimum(np.maximum(f.min_rtt / MIN_RTT_DIVISOR, MIN_RTT_THRESH), MAX_RTT_THRESH)
        enter = in_ss & np.isnan(f.css_until) & (f.rtt - f.min_rtt >= thresh)
        f.css_until[enter] = (f.now + CSS_ROUNDS * f.rtt)[enter]
        css = in_ss & ~np.isnan(f.css_until)
        if any_(css):
            cwnd = f.cwnd.copy()
            f.cwnd[...] = before
            slow = f.ss_grown(1.0 / CSS_GROWTH_DIVISOR)
            f.cwnd[...] = cwnd
            np.copyto(f.cwnd, np.where(css, np.minimum(slow, f.ssthresh), f.cwnd))
            over = css & (f.now + f.h >= f.css_until)
            f.ssthresh[over] = f.cwnd[over]
            f.hystart_over[over] = 1.0
            h_ca = np.where(css, 0.0, h_ca)
        return h_ca

    def ssthresh_after(self, f: FlowArrays, m: np.ndarray, kind: str) -> np.ndarray:
        return np.maximum(f.cwnd[m] * self.cc.beta, MIN_SSTHRESH)

    def on_loss(self, f: FlowArrays, m: np.ndarray, kind: str) -> None:
        cc = self.cc
        cwnd = f.cwnd[m]
        shrunk = cc.fast_convergence & (cwnd < f.w_max[m])
        f.w_max[m] = np.where(shrunk, released_w_max(cwnd, cc.beta), cwnd)
        f.last_max[m] = f.w_max[m]
        f.cwnd_prior[m] = cwnd
        f.epoch[m] = math.nan
        f.hystart_over[m] = 1.0  # a loss ends HyStart++ (RFC 9406 §4.2)
        super().on_loss(f, m, kind)
        if kind == "timeout":
            f.w_max[m] = 0.0  # §4.8: the next epoch starts at K = 0, W_max = cwnd
            f.last_max[m] = 0.0
            if cc.hystart and cc.hystart_variant == "linux":
                f.hystart_over[m] = 0.0  # Linux's HyStart looks again after a timeout
                f.round_next[m] = math.nan  # in a new round (bictcp_hystart_reset)
                f.train_w[m] = math.nan     # slow start sends its trains afresh
                f.last_rtt[m] = math.nan    # from the RTT it meets then


Cubic.fluid = CubicFluid
