"""Copa: a target rate of 1/(δ·queueing delay), approached with a velocity.

Source: V. Arun, H. Balakrishnan, "Copa: Practical Delay-Based Congestion
Control for the Internet", USENIX NSDI 2018 (the algorithm and its mode
switch between default and competitive modes); Facebook's mvfst (QUIC) runs
it without the mode switch. Copa is not in Linux.

Per ACK, with ``RTTstanding`` the smallest RTT sample of the last
``srtt/2``, ``RTTmin`` the smallest of the last 10 s and
``d_q = RTTstanding − RTTmin``:

* target rate ``λ_t = 1/(δ·d_q)`` (segments/s; ``∞`` with no queue), current
  rate ``λ = cwnd / RTTstanding``;
* ``λ ≤ λ_t``: ``cwnd += v/(δ·cwnd)`` per segment acknowledged, else
  ``cwnd −= v/(δ·cwnd)`` (``v/δ`` segments per RTT either way); not below 2;
* velocity ``v``: once per RTT the direction of the window's move since the
  last RTT is compared; after three RTTs in the same direction ``v`` doubles
  every RTT, and a change of direction resets it to 1;
* slow start: ``cwnd`` doubles per RTT (``+acked`` per ACK) until ``λ``
  exceeds ``λ_t`` for the first time (``ssthresh = cwnd``, and it follows
  ``cwnd`` down after, so that slow start does not resume);
* pacing at ``2·cwnd / RTTstanding``;
* mode switch (``competitive=True``): every RTT Copa asks whether the
  queue was nearly empty in the last five RTTs (``RTTstanding`` below
  ``RTTmin + 0.1·(RTTmax − RTTmin)`` at least once, ``RTTmax`` the largest
  sample of the last four RTTs). If it was, default mode, ``δ = delta``;
  if not, a buffer-filling flow shares the link and Copa competes:
  ``1/δ`` grows by one per RTT and halves on a loss, never below
  ``1/delta``.

Differences from the source:

* Rounds (RTTs) end by delivered count, as ccsim's other laws count them.
* ``v`` is capped so that ``v/δ`` stays within one window: the window at
  most doubles per RTT, as slow start (the paper leaves it uncapped; a
  doubling velocity over many RTTs would otherwise grow faster than
  exponentially).
* A loss: ``ssthresh = max(cwnd/2, 2)`` and the recovery brings ``cwnd``
  there (RFC 5681; the paper leaves loss to the transport), and ends slow
  start; in competitive mode it also halves ``1/δ``.

Defaults and their sources: ``delta = 0.5`` (the paper's default δ, as mvfst);
``competitive = True`` (the paper's mode switch; ``False`` is mvfst's
default); ``min_rtt_window = 10.0`` s (the paper's RTTmin window).
"""

from __future__ import annotations

import math
from collections import deque

import numpy as np

from .base import MIN_SSTHRESH, Ack, CongestionControl, Loss, RttSample
from .fluid import FlowArrays, FluidLaw
from .registry import register

MIN_CWND = 2.0
"""Floor of Copa's decrease (segments)."""
SAME_DIRECTION_RTTS = 3
"""Velocity doubles once the window has moved the same way for three RTTs."""
PACING_GAIN = 2.0
"""Pacing at ``2·cwnd/RTTstanding`` (the paper)."""
EMPTY_FRACTION = 0.1
"""The queue is nearly empty below ``RTTmin + 0.1·(RTTmax − RTTmin)`` (the paper)."""
EMPTY_RTTS = 5
"""... at least once in the last five RTTs (the paper)."""
MAX_RTTS = 4
"""``RTTmax`` is the largest sample of the last four RTTs (the paper)."""


def _windowed_min(window: deque, now: float, span: float, value: float) -> float:
    """Push ``(now, value)`` onto a monotonic deque and return the minimum over
    the last ``span`` seconds."""
    while window and window[-1][1] >= value:
        window.pop()
    window.append((now, value))
    while window[0][0] < now - span:
        window.popleft()
    return window[0][1]


@register
class Copa(CongestionControl):
    """Copa (Arun & Balakrishnan, NSDI 2018), with its mode switch by default."""

    name = "copa"
    recovery = "sack"  # mvfst: QUIC's loss recovery; SACK is TCP's equivalent
    param_space = {"delta": (0.05, 1.0), "min_rtt_window": (1.0, 30.0)}

    def __init__(self, *, delta: float = 0.5, competitive: bool = True,
                 min_rtt_window: float = 10.0) -> None:
        self.delta = delta                    # δ in default mode (1/segments of queue)
        self.competitive = competitive        # the paper's mode switch
        self.min_rtt_window = min_rtt_window  # RTTmin over this long (s)

    def start(self, initial_window: float, mss: int) -> None:
        super().start(initial_window, mss)
        self._standing: deque = deque()   # (time, rtt) for RTTstanding
        self._min: deque = deque()        # (time, rtt) for RTTmin
        self.rtt_standing = math.inf      # s
        self.rtt_min = math.inf           # s
        self.inv_delta = 1.0 / self.delta  # 1/δ in force
        self.velocity = 1.0
        self.direction = 0                # +1 up, −1 down over the last RTT
        self.same = 0                     # RTTs in the same direction
        self.round_end = -1.0             # delivered count that ends the RTT
        self.round_cwnd = self.cwnd       # cwnd when the RTT began
        self.round_max = 0.0              # largest sample this RTT (s)
        self.round_min_dq = math.inf      # smallest d_q this RTT (s)
        self.recent_max: deque = deque(maxlen=MAX_RTTS)
        self.recent_min_dq: deque = deque(maxlen=EMPTY_RTTS)
        self.competing = False            # in competitive mode
        self.lost = False                 # a loss this RTT

    def max_growth_per_rtt(self, cwnd: float) -> float:
        return cwnd  # v/δ capped at the window: at most doubling

    def on_rtt(self, sample: RttSample) -> None:
        rtt, now = sample.rtt, sample.now
        srtt = sample.srtt if math.isfinite(sample.srtt) else rtt
        self.rtt_standing = _windowed_min(self._standing, now, srtt / 2.0, rtt)
        self.rtt_min = _windowed_min(self._min, now, self.min_rtt_window, rtt)
        self.round_max = max(self.round_max, rtt)
        self.round_min_dq = min(self.round_min_dq, self.rtt_standing - self.rtt_min)

    def target_rate(self) -> float:
        """``λ_t = 1/(δ·d_q)`` (segments/s); ``inf`` with no queueing delay."""
        dq = self.rtt_standing - self.rtt_min
        return math.inf if dq <= 0 else self.inv_delta / dq

    def on_ack(self, ack: Ack) -> None:
        if not math.isfinite(self.rtt_standing):
            return
        if ack.delivered >= self.round_end:
            self._end_round(ack)
        below = self.cwnd / self.rtt_standing <= self.target_rate()
        if self.cwnd < self.ssthresh and below:  # slow start until the rate exceeds the target
            self.cwnd += ack.acked
        else:
            self.ssthresh = min(self.ssthresh, self.cwnd)  # (slow start is over)
            step = min(self.velocity * self.inv_delta, self.cwnd) * ack.acked / self.cwnd
            if below:
                self.cwnd += step
            else:  # and slow start stays over: ssthresh follows the window down
                self.cwnd = max(self.cwnd - step, min(self.cwnd, MIN_CWND))
                self.ssthresh = max(min(self.ssthresh, self.cwnd), MIN_SSTHRESH)
        self.pacing_rate = PACING_GAIN * self.cwnd / self.rtt_standing * self.mss * 8.0

    def _end_round(self, ack: Ack) -> None:
        """Once per RTT: the velocity and the mode."""
        if self.round_end >= 0:
            direction = 1 if self.cwnd > self.round_cwnd else -1 if self.cwnd < self.round_cwnd \
                else 0
            if direction != 0 and direction == self.direction:
                self.same += 1
                if self.same >= SAME_DIRECTION_RTTS:
                    self.velocity *= 2.0
            else:
                self.same, self.velocity = 0, 1.0
            self.direction = direction
            if self.round_max > 0:  # an RTT without samples tells nothing of the queue
                self.recent_max.append(self.round_max)
                self.recent_min_dq.append(self.round_min_dq)
            if self.competitive and len(self.recent_min_dq) == EMPTY_RTTS:
                rtt_max = max(self.recent_max)
                empty = min(self.recent_min_dq) < EMPTY_FRACTION * (rtt_max - self.rtt_min)
                if empty:
                    self.competing, self.inv_delta = False, 1.0 / self.delta
                else:
                    if self.competing and not self.lost:
                        self.inv_delta += 1.0
                    self.competing = True
        self.round_end = ack.delivered + ack.inflight
        self.round_cwnd, self.round_max, self.round_min_dq = self.cwnd, 0.0, math.inf
        self.lost = False

    def ssthresh_after(self, loss: Loss) -> float:
        return max(self.cwnd / 2.0, MIN_SSTHRESH)

    def on_loss(self, loss: Loss) -> None:
        super().on_loss(loss)
        self.lost = True
        if self.competing:
            self.inv_delta = max(self.inv_delta / 2.0, 1.0 / self.delta)
        self.velocity, self.same = 1.0, 0


class CopaFluid(FluidLaw):
    """Copa in the fluid engine, with its mode switch.

    ``RTTstanding`` is the step's smallest RTT (``rtt_floor``: without the
    queue its paced trains build below full load), ``RTTmin`` the smallest the flow has
    seen (ccsim's paths keep their propagation delay). The window moves
    ``v/δ`` segments per RTT towards the target window ``λ_t·RTT`` and stops
    there (the window law oscillates about it by a step); slow start doubles
    per RTT until the rate exceeds the target; the velocity is updated once
    per RTT as the window law does; pacing ``2·cwnd/RTT``.

    **Mode switch.** The window law finds the queue nearly empty because the
    Copa flows' windows overshoot their target by a round trip and swing
    their own packets out of the queue and back (Arun & Balakrishnan 2018,
    §2.2: the queue oscillates about the Copa flows' standing queue). The
    fluid window settles instead, so the swing is put back from the rates:
    the Copa flows of the scenario hold ``Σ rate·d_q`` packets, a delay
    ``d_c = Σ rate·d_q / C`` of the queue; the queue's floor is
    ``d_q − d_c`` (what a buffer-filling competitor keeps) and its peak
    ``d_q + d_c``. "Nearly empty" is then the paper's test, floor below
    ``0.1·(peak)``, over this RTT and the last (a queue that held nothing
    over both is empty too: the packet engine's RTT samples always differ
    by a packet or so, the fluid ones can be equal); with it ``1/δ`` follows the
    window law's rules (one more per RTT while competing, halved on a loss,
    never below ``1/delta``). Copa flows of one scenario with different
    parameters are in different groups and do not count each other's queue.
    """

    paces = True
    state = {"velocity": 1.0, "direction": 0.0, "same": 0.0, "round_end": math.nan,
             "round_cwnd": 0.0, "inv_delta": math.nan, "competing": 0.0, "lost": 0.0,
             "low": math.inf, "high": 0.0, "low_prev": math.nan, "high_prev": math.nan}

    def grow(self, f: FlowArrays) -> None:
        live = (f.h > 0) & (f.acked > 0)
        if not live.any():
            return
        fresh = np.isnan(f.inv_delta)
        if fresh.any():
            f.inv_delta[fresh] = self._default_inv_delta(f)[fresh]
        # RTTstanding, the least sample of half an RTT: the step's floor (the
        # first packet of a paced train finds no train's queue)
        standing = f.rtt if f.rtt_floor is None else f.rtt_floor
        dq = standing - np.minimum(f.min_rtt, standing)
        held = np.where(f.h > 0, f.rate * dq, 0.0)  # this flow's packets in the queue
        n = int(f.scenario.max()) + 1
        copa_dq = np.bincount(f.scenario, weights=held, minlength=n)[f.scenario] / f.capacity
        copa_dq = np.minimum(copa_dq, dq)
        np.copyto(f.low, np.where(live, np.minimum(f.low, dq - copa_dq), f.low))
        np.copyto(f.high, np.where(live, np.maximum(f.high, dq + copa_dq), f.high))
        ended = live & ~(f.delivered < f.round_end)  # NaN: the first step
        if ended.any():
            self._end_round(f, ended)
        inv_delta = f.inv_delta
        with np.errstate(divide="ignore"):
            target_w = np.where(dq > 0, inv_delta / np.where(dq > 0, dq, 1.0), np.inf) * standing
        below = f.cwnd <= target_w
        ss = live & (f.cwnd < f.ssthresh)
        leave = ss & ~below
        f.ssthresh[leave] = f.cwnd[leave]
        h = f.h
        f.slow_start(h=np.where(ss & below, h, 0.0))
        ca = live & ~(ss & below)
        move = np.minimum(f.velocity * inv_delta, f.cwnd) * h / f.rtt
        up = np.minimum(f.cwnd + move, np.maximum(target_w, f.cwnd))
        down = np.maximum(np.maximum(f.cwnd - move, target_w), np.minimum(f.cwnd, MIN_CWND))
        np.copyto(f.cwnd, np.where(ca, np.where(below, up, down), f.cwnd))
        fell = ca & ~below  # slow start stays over: ssthresh follows the window down
        f.ssthresh[fell] = np.maximum(np.minimum(f.ssthresh, f.cwnd), MIN_SSTHRESH)[fell]
        np.copyto(f.pacing, np.where(live, PACING_GAIN * f.cwnd / standing, f.pacing))

    def _default_inv_delta(self, f: FlowArrays) -> np.ndarray:
        """``1/delta`` per flow (packets: the target rate is ``(1/δ)/d_q``),
        default mode's and competitive mode's floor."""
        return np.broadcast_to(1.0 / self.cc.delta, f.cwnd.shape)

    def _end_round(self, f: FlowArrays, e: np.ndarray) -> None:
        """Velocity and mode, once per RTT, as :meth:`Copa._end_round`."""
        later = e & ~np.isnan(f.round_end)
        d = np.sign(f.cwnd - f.round_cwnd)
        same = later & (d != 0) & (d == f.direction)
        f.same[same] += 1.0
        f.velocity[same & (f.same >= SAME_DIRECTION_RTTS)] *= 2.0
        reset = later & ~same
        f.same[reset] = 0.0
        f.velocity[reset] = 1.0
        f.direction[later] = d[later]
        # the mode: this RTT's floor and peak with the last RTT's
        decide = later & ~np.isnan(f.low_prev) & np.broadcast_to(
            np.asarray(self.cc.competitive, bool), f.cwnd.shape)
        low = np.minimum(f.low, f.low_prev)
        high = np.maximum(f.high, f.high_prev)
        # an empty queue over both RTTs (no peak) is empty too: the packet
        # engine's samples always differ by a packet or so, the fluid's do not
        empty = (low < EMPTY_FRACTION * high) | (high <= 0.0)
        base = self._default_inv_delta(f)
        calm = decide & empty
        f.competing[calm] = 0.0
        f.inv_delta[calm] = base[calm]
        busy = decide & ~empty
        more = busy & (f.competing > 0) & (f.lost == 0)
        f.inv_delta[more] += 1.0
        f.competing[busy] = 1.0
        f.lost[e] = 0.0
        f.low_prev[later] = f.low[later]
        f.high_prev[later] = f.high[later]
        f.low[e], f.high[e] = math.inf, 0.0
        f.round_end[e] = (f.delivered + f.inflight)[e]
        f.round_cwnd[e] = f.cwnd[e]

    def ssthresh_after(self, f: FlowArrays, m: np.ndarray, kind: str) -> np.ndarray:
        return np.maximum(f.cwnd[m] / 2.0, MIN_SSTHRESH)

    def on_loss(self, f: FlowArrays, m: np.ndarray, kind: str) -> None:
        super().on_loss(f, m, kind)
        f.velocity[m] = 1.0
        f.same[m] = 0.0
        f.lost[m] = 1.0
        base = self._default_inv_delta(f)
        halve = m & (f.competing > 0)
        f.inv_delta[halve] = np.maximum(f.inv_delta[halve] / 2.0, base[halve])


Copa.fluid = CopaFluid
