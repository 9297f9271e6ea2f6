"""YeAH-TCP: Scalable growth while the queue is short, Reno when it is not.

Source: A. Baiocchi, A. P. Castellani, F. Vacirca, "YeAH-TCP: Yet Another
Highspeed TCP", PFLDnet 2007; as implemented in Linux ``net/ipv4/tcp_yeah.c``
(A. P. Castellani; read in the 6.x source), which this file follows.

Once per RTT (a *round*), with ``RTT_min`` the smallest RTT sample of the
round, ``base_rtt`` the smallest of the connection and
``queue_delay = RTT_min − base_rtt``:

* estimated backlog of this flow at the bottleneck (segments):
  ``Q = cwnd · queue_delay / RTT_min``; network congestion level
  ``L = queue_delay / base_rtt``;
* **fast mode** when ``Q ≤ alpha`` (Q_max) and ``L ≤ 1/phy``: the next round
  grows as Scalable TCP, ``cwnd += acked / min(cwnd, ai_cnt)`` (Reno's
  one segment per RTT below ``ai_cnt`` segments, ``cwnd/ai_cnt`` per RTT
  above);
* **slow mode** otherwise: the next round grows as Reno, ``cwnd +=
  acked/cwnd``; and if ``Q > alpha`` (precautionary decongestion) ``cwnd −=
  min(Q/gamma, cwnd/2^epsilon)``, not below ``reno_count``, and ``ssthresh =
  cwnd``;
* ``reno_count`` estimates the window a competing Reno flow would have: on
  entering slow mode from ``≤ 2`` it becomes ``max(cwnd/2, 2)``, and grows by
  one per slow round; after ``zeta`` fast rounds it returns to 2;
* on loss: if slow mode has lasted fewer than ``rho`` rounds (no Reno
  competition inferred), ``cwnd`` gives up ``Q`` of the last round, clamped
  to ``[cwnd/2^delta, max(cwnd/2, 2)]``; otherwise half (Reno):
  ``ssthresh = max(cwnd − reduction, 2)``. ``reno_count`` halves (≥ 2) and
  the fast-round count restarts. After a timeout ``cwnd = 1``.

A round is counted only if it had more than two RTT samples (Linux: fewer are
probably delayed ACKs).

What to expect, as in Linux: after the first precautionary decongestion has
brought ``cwnd`` down to ``reno_count``, both grow by one per slow round
(Reno's segment per RTT, and ``reno_count``'s increment), so ``cwnd >
reno_count`` never holds again and the queue grows past ``alpha`` until a
loss: about 200 packets at 10 Mbit/s behind a 1-BDP buffer, where the design
aims at 80. ``tcp_yeah.c`` has the same guard and the same increment.

Differences from the source:

* Rounds end by delivered count (``Ack.delivered`` reaching the count
  delivered plus in flight when the round began); Linux compares the ACK with
  ``snd_nxt`` at the round's start (Vegas's ``beg_snd_nxt``).
* Floats: Linux shifts (``cwnd >> 1``, ``cwnd >> 3``), divides in integers
  and grows whole segments through ``snd_cwnd_cnt``; ccsim divides by
  ``2**epsilon`` and ``2**delta`` and grows continuously.
* The side effects of Linux's ``tcp_yeah_ssthresh`` (``fast_count = 0``,
  ``reno_count`` halved) happen in ``on_loss``; ``ssthresh_after`` is pure.
* Linux's Vegas base re-initialises ``base_rtt`` when transmission restarts
  after idle (``tcp_vegas_cwnd_event``); ccsim keeps the connection's
  minimum.
* Linux before 3.18 counted differently in each mode: slow start
  (``tcp_slow_start``) and the Reno mode (``tcp_cong_avoid_ai``) stepped
  once per ACK, the fast mode added the segments the ACK acknowledged
  (``snd_cwnd_cnt += pkts_acked``, one segment per ``min(cwnd, 100)`` of
  them). ``reno_per_ack=True`` runs that with the stack's per-segment
  counting (``ack_counting="segments"``): one step per ACK in slow start and
  the Reno mode, ``acked`` segments in the fast mode (packet engine only;
  Esterhuizen & Krzesinski's recipe runs so,
  :data:`ccsim.experiments.pairwise.LINUX_2011_COUNTING_PARAMS`). The
  module's ``>`` (a step after ``min(cwnd, 100) + 1`` segments) is not
  modelled.
* Paper vs Linux: the brief description of the paper names the precautionary
  decongestion ``min(Q, cwnd/δ)``; Linux uses ``TCP_YEAH_EPSILON`` for it
  (at most half the window) and ``TCP_YEAH_DELTA`` only for the loss
  response (at least 1/8 of the window). The paper's exact formulas could not
  be checked here, so Linux's are taken as the reference.

Defaults and their sources — Linux ``tcp_yeah.c`` constants (6.x, and ns-3's
``TcpYeah`` attributes): ``alpha = 80`` (``TCP_YEAH_ALPHA``, segments
queued), ``gamma = 1`` (``TCP_YEAH_GAMMA``), ``delta = 3``
(``TCP_YEAH_DELTA``, log2), ``epsilon = 1`` (``TCP_YEAH_EPSILON``, log2),
``phy = 8`` (``TCP_YEAH_PHY``), ``rho = 16`` (``TCP_YEAH_RHO``, rounds),
``zeta = 50`` (``TCP_YEAH_ZETA``, rounds), ``ai_cnt = 100``
(``TCP_SCALABLE_AI_CNT``, segments); ``reno_per_ack = False`` (mainline's
per-segment counting in every mode).
"""

from __future__ import annotations

import math

import numpy as np

from .base import MIN_SSTHRESH, Ack, CongestionControl, Loss, RttSample
from .fluid import FlowArrays, FluidLaw, any_
from .registry import register
from .reno import ai_step, refuse_extra_ack

RENO_COUNT_MIN = 2.0
"""The estimated window of a competing Reno flow starts at, and never falls
below, 2 segments (Linux ``tcp_yeah``'s ``reno_count``)."""
FEW_SAMPLES = 2
"""A round with this many RTT samples or fewer is not counted (Linux)."""


def _loss_reduction_in_bounds(before: dict, event: object, after: dict) -> str | None:
    """A loss gives up between ``cwnd/2^delta`` and half the window (YeAH's
    loss rule), or exactly half after ``rho`` slow rounds: ``ssthresh ≥
    cwnd/2`` always, and ``ssthresh ≤ cwnd − cwnd/2^delta`` (or 2)."""
    if not isinstance(event, Loss):
        return None
    w, s = before["cwnd"], after["ssthresh"]
    low = max(w - max(w / 2.0, MIN_SSTHRESH), MIN_SSTHRESH)
    high = max(w - w / 2.0 ** before["delta"], MIN_SSTHRESH)
    if not low - 1e-9 <= s <= high + 1e-9:
        return (f"{event.kind} loss at cwnd={w!r}: ssthresh {s!r} outside "
                f"[{low!r}, {high!r}]")
    return None


@register
class YeAH(CongestionControl):
    """YeAH-TCP window law with PRR recovery, as Linux runs it."""

    name = "yeah"
    recovery = "prr"  # Linux: SACK recovery with PRR for every law (tcp_input.c)
    param_space = {"alpha": (1.0, 200.0), "gamma": (0.5, 4.0), "delta": (1, 6),
                   "epsilon": (1, 4), "phy": (1.0, 32.0), "rho": (1, 40),
                   "zeta": (1, 100), "ai_cnt": (10.0, 400.0)}
    properties = (_loss_reduction_in_bounds,)

    def __init__(self, *, alpha: float = 80.0, gamma: float = 1.0, delta: int = 3,
                 epsilon: int = 1, phy: float = 8.0, rho: int = 16, zeta: int = 50,
                 ai_cnt: float = 100.0, reno_per_ack: bool = False,
                 extra_ack: bool = False) -> None:
        self.alpha = alpha      # Q_max: segments this flow may keep queued
        self.gamma = gamma      # fraction 1/gamma of Q removed per decongestion
        self.delta = delta      # log2 of the smallest fraction of cwnd given up at a loss
        self.epsilon = epsilon  # log2 of the largest fraction removed by decongestion
        self.phy = phy          # fast mode needs queue_delay/base_rtt ≤ 1/phy
        self.rho = rho          # slow rounds before a loss is answered as Reno
        self.zeta = zeta        # fast rounds before reno_count resets
        self.ai_cnt = ai_cnt    # Scalable: one segment per ai_cnt segments ACKed
        self.reno_per_ack = reno_per_ack  # Linux < 3.18: one step per ACK but in fast mode
        self.extra_ack = extra_ack  # 2.6.3x-3.x: both counters stepped one ACK (segment) late

    def start(self, initial_window: float, mss: int) -> None:
        super().start(initial_window, mss)
        self.base_rtt = math.inf   # smallest RTT sample (s)
        self.round_min = math.inf  # smallest RTT sample of this round (s)
        self.cnt_rtt = 0           # samples this round
        self.round_end = -1.0      # delivered count that ends the round
        self.last_q = 0.0          # Q of the last counted round (segments)
        self.doing_reno_now = 0    # consecutive slow rounds (0: fast mode)
        self.reno_count = RENO_COUNT_MIN  # estimated window of a competing Reno flow
        self.fast_count = 0        # fast rounds since the last reset

    def max_growth_per_rtt(self, cwnd: float) -> float:
        """Scalable's ``cwnd/ai_cnt`` per RTT above ``ai_cnt``, Reno's 1 below."""
        return max(1.0, cwnd / self.ai_cnt)

    # -- the rule ------------------------------------------------------------------
    def backlog(self, rtt: float, cwnd: float) -> float:
        """Q: segments of this flow queued, ``cwnd·(rtt − base_rtt)/rtt``."""
        return cwnd * (rtt - self.base_rtt) / rtt

    def is_fast(self, rtt: float, cwnd: float) -> bool:
        """Fast mode: ``Q ≤ alpha`` and ``(rtt − base)/base ≤ 1/phy``."""
        return (self.backlog(rtt, cwnd) <= self.alpha
                and rtt - self.base_rtt <= self.base_rtt / self.phy)

    # -- hooks ---------------------------------------------------------------------
    def on_rtt(self, sample: RttSample) -> None:
        self.base_rtt = min(self.base_rtt, sample.rtt)
        self.round_min = min(self.round_min, sample.rtt)
        self.cnt_rtt += 1

    def on_ack(self, ack: Ack) -> None:
        # Linux < 3.18 (reno_per_ack): tcp_slow_start and tcp_cong_avoid_ai step once
        # per ACK, the fast mode adds pkts_acked; the left fraction of a step that
        # reaches ssthresh carries on in congestion avoidance either way
        if self.reno_per_ack:
            left = self.slow_start(1.0)
            segments = left * ack.acked
        else:
            left = segments = self.slow_start(ack.acked)
        if left:
            if self.doing_reno_now:  # Reno, then Scalable (reno.ai_step)
                self.cwnd += ai_step(left, self.cwnd, self.extra_ack)
            else:
                self.cwnd += ai_step(segments, min(self.cwnd, self.ai_cnt), self.extra_ack)
        if ack.delivered >= self.round_end:
            if self.cnt_rtt > FEW_SAMPLES:
                self._end_round()
            self.round_end = ack.delivered + ack.inflight
            self.round_min, self.cnt_rtt = math.inf, 0

    def _end_round(self) -> None:
        rtt = self.round_min
        queue = self.backlog(rtt, self.cwnd)
        if self.is_fast(rtt, self.cwnd):
            self.fast_count += 1
            if self.fast_count > self.zeta:
                self.reno_count, self.fast_count = RENO_COUNT_MIN, 0
            self.doing_reno_now = 0
        else:
            if queue > self.alpha and self.cwnd > self.reno_count:
                # Precautionary decongestion: drain what this flow queued.
                reduction = min(queue / self.gamma, self.cwnd / 2.0 ** self.epsilon)
                self.cwnd = max(self.cwnd - reduction, self.reno_count)
                self.ssthresh = self.cwnd
            if self.reno_count <= RENO_COUNT_MIN:
                self.reno_count = max(self.cwnd / 2.0, RENO_COUNT_MIN)
            else:
                self.reno_count += 1
            self.doing_reno_now += 1
        self.last_q = queue

    def loss_reduction(self) -> float:
        """Segments a loss takes off ``cwnd`` (Linux ``tcp_yeah_ssthresh``)."""
        half = max(self.cwnd / 2.0, MIN_SSTHRESH)
        if self.doing_reno_now < self.rho:
            return max(min(self.last_q, half), self.cwnd / 2.0 ** self.delta)
        return half

    def rate_halving_floor(self) -> float:
        """``tcp_reno_min_cwnd``, this law's ``min_cwnd`` op in Linux
        2.6.x–3.1: ``ssthresh/2`` (segments)."""
        return self.ssthresh / 2.0

    def ssthresh_after(self, loss: Loss) -> float:
        return max(self.cwnd - self.loss_reduction(), MIN_SSTHRESH)

    def on_loss(self, loss: Loss) -> None:
        super().on_loss(loss)
        self.fast_count = 0
        self.reno_count = max(self.reno_count / 2.0, RENO_COUNT_MIN)


class YeAHFluid(FluidLaw):
    """YeAH in the fluid engine.

    Growth over a step: slow start doubles per RTT up to ``ssthresh``; in
    congestion avoidance the class's per-ACK ``acked/cwnd`` (slow mode,
    Reno: one segment per RTT) or ``acked/min(cwnd, ai_cnt)`` (fast mode,
    Scalable: ``max(1, cwnd/ai_cnt)`` segments per RTT) becomes ``cwnd +=
    rate · h_ca/RTT`` with the rate at the start of the step (Euler; a step
    is at most an RTT, ``round_steps``, and ``ai_cnt`` RTTs the Scalable
    time constant).

    Rounds as the class: RTT samples (one per ACK: ``acked`` per step, in
    recovery too) feed ``base_rtt`` and the round's minimum, which takes the
    RTT at the step's start as well as at its end (a step's ACKs span both,
    the queue moving one way within it; with the end alone the minimum read
    high while the queue rose, by up to a round's rise once steps reach a
    round, ``round_steps``); a round ends
    when ``delivered`` passes the count delivered plus in flight at its
    start (in flight before the step's deliveries, ``inflight + acked``, so
    that a round lasts an RTT and not ``1 − h/RTT`` of one), and counts only
    with more than 2 samples. At a round's end
    (:meth:`YeAH._end_round`, mirrored): ``Q = cwnd·(RTT_min − base)/RTT_min``;
    fast mode when ``Q ≤ alpha`` and ``RTT_min − base ≤ base/phy`` (with the
    ``zeta`` fast-round reset of ``reno_count``); otherwise slow mode, with
    precautionary decongestion ``cwnd −= min(Q/gamma, cwnd/2^epsilon)``
    (not below ``reno_count``, ``ssthresh = cwnd``) when ``Q > alpha``, and
    ``reno_count`` set to ``max(cwnd/2, 2)`` or raised by one. The window's
    growth in the step comes first, then the round's end, as per ACK.

    Loss (:meth:`YeAH.loss_reduction`): fewer than ``rho`` slow rounds give
    up ``max(min(Q_last, half), cwnd/2^delta)``, else ``half = max(cwnd/2,
    2)``; ``ssthresh = max(cwnd − reduction, 2)``; ``fast_count = 0`` and
    ``reno_count`` halves (at least 2).
    """

    round_steps = True  # fast or slow mode is decided once per round

    state = {"base_rtt": math.inf, "round_min": math.inf, "cnt_rtt": 0.0, "round_end": -1.0,
             "last_q": 0.0, "doing_reno_now": 0.0, "reno_count": RENO_COUNT_MIN,
             "fast_count": 0.0, "step_rtt": math.nan}

    def __init__(self, cc: YeAH) -> None:
        if np.any(cc.reno_per_ack):  # refused once, as the batch is built
            from ..errors import packet_only
            raise packet_only("params.reno_per_ack", True, "False",
                              "it counts per segment in every mode")
        refuse_extra_ack(cc)
        super().__init__(cc)

    def grow(self, f: FlowArrays) -> None:
        cc = self.cc
        sampled = f.acked > 0
        if any_(sampled):                     # on_rtt
            np.copyto(f.base_rtt, np.where(sampled, np.minimum(f.base_rtt, f.rtt), f.base_rtt))
            # the step's samples span the RTTs at its start and its end (the
            # queue moves one way within a step): the round's minimum takes both
            low = np.fmin(f.rtt, f.step_rtt)
            np.copyto(f.round_min, np.where(sampled, np.minimum(f.round_min, low),
                                            f.round_min))
            f.cnt_rtt += f.acked
        np.copyto(f.step_rtt, f.rtt)
        moving = (f.h > 0) & sampled
        if not any_(moving):
            return
        scalable = np.where(f.doing_reno_now > 0, 1.0, np.maximum(1.0, f.cwnd / cc.ai_cnt))
        # growth runs on ACKs (the class's cong_avoid): none for a flow that
        # had none, whether or not others of the group (of the batch) had some
        f.cwnd += scalable * f.slow_start(h=np.where(moving, f.h, 0.0)) / f.rtt
        ends = moving & (f.delivered >= f.round_end)
        count = ends & (f.cnt_rtt > FEW_SAMPLES)
        if any_(count):
            self._end_round(f, count)
        f.round_end[ends] = (f.delivered + f.inflight + f.acked)[ends]
        f.round_min[ends] = math.inf
        f.cnt_rtt[ends] = 0.0

    def _end_round(self, f: FlowArrays, m: np.ndarray) -> None:
        cc = self.cc
        rtt, base, cwnd = f.round_min, f.base_rtt, f.cwnd
        queue = cwnd * (rtt - base) / rtt
        fast = m & (queue <= cc.alpha) & (rtt - base <= base / cc.phy)
        f.fast_count[fast] += 1.0
        reset = fast & (f.fast_count > cc.zeta)
        f.reno_count[reset] = RENO_COUNT_MIN
        f.fast_count[reset] = 0.0
        f.doing_reno_now[fast] = 0.0
        slow = m & ~fast
        cut = slow & (queue > cc.alpha) & (cwnd > f.reno_count)
        if any_(cut):
            reduction = np.minimum(queue / cc.gamma, cwnd / 2.0 ** cc.epsilon)
            f.cwnd[cut] = np.maximum(cwnd - reduction, f.reno_count)[cut]
            f.ssthresh[cut] = f.cwnd[cut]
        low = slow & (f.reno_count <= RENO_COUNT_MIN)
        f.reno_count[low] = np.maximum(f.cwnd / 2.0, RENO_COUNT_MIN)[low]
        f.reno_count[slow & ~low] += 1.0
        f.doing_reno_now[slow] += 1.0
        f.last_q[m] = queue[m]

    def ssthresh_after(self, f: FlowArrays, m: np.ndarray, kind: str) -> np.ndarray:
        cc, cwnd = self.cc, f.cwnd[m]
        half = np.maximum(cwnd / 2.0, MIN_SSTHRESH)
        reduction = np.where(f.doing_reno_now[m] < cc.rho,
                             np.maximum(np.minimum(f.last_q[m], half), cwnd / 2.0 ** cc.delta),
                             half)
        return np.maximum(cwnd - reduction, MIN_SSTHRESH)

    def on_loss(self, f: FlowArrays, m: np.ndarray, kind: str) -> None:
        super().on_loss(f, m, kind)
        f.fast_count[m] = 0.0
        f.reno_count[m] = np.maximum(f.reno_count[m] / 2.0, RENO_COUNT_MIN)


YeAH.fluid = YeAHFluid
