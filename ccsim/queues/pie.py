"""PIE: Proportional Integral controller Enhanced (RFC 8033; Pan et al., HPSR 2013).

Source: R. Pan, P. Natarajan, F. Baker, G. White, "Proportional Integral
Controller Enhanced (PIE): A Lightweight Control Scheme to Address the
Bufferbloat Problem", RFC 8033, 2017: §4 (the algorithm), §5 (the
pseudocode restated here), with its defaults.

Every ``tupdate`` the drop probability ``p`` follows the queue delay
``qdelay`` (§4.2):

    Δp = α·(qdelay − target) + β·(qdelay − qdelay_old)      (α, β in 1/s)

auto-tuned by the current ``p``: Δp is divided by 2048, 512, 128, 32, 8 or 2
while ``p`` is below 10⁻⁶, 10⁻⁵, 10⁻⁴, 10⁻³, 10⁻² or 10⁻¹ (§4.2, so the
controller is gentle at light congestion), and capped at 0.02 once
``p ≥ 0.1``; then ``p += Δp``, decayed by ``p ← 0.98·p`` when both the
current and the previous delay are 0, clamped to [0, 1], and
``qdelay_old = qdelay``. The burst allowance (§4.4) starts at
``max_burst``, falls by ``tupdate`` at each update, and is refilled when
``p = 0`` and both delays are below ``target/2``.

On each arrival (§4.1, §5.1): tail drop if the buffer is full; enqueue while
the burst allowance lasts, or when ``qdelay_old < target/2`` and ``p < 0.2``,
or when at most two packets wait; otherwise drop with probability ``p`` —
with ``ecn``, an ECN-capable packet is marked instead while ``p ≤
mark_ecnth`` (§5.1: 10 %).

The queue delay is taken from timestamps (RFC 8033 §4.3's alternative to
the departure-rate estimate; Linux's default, ``dq_rate_estimator``
off): at an update, the sojourn of the packet last dequeued, or 0 when the
link is idle. The timer runs at ``k·tupdate`` from time 0; updates due
between two arrivals are applied, in order, when the later one arrives.

Defaults (RFC 8033 §5 and Linux ``sch_pie``): ``target`` 15 ms, ``tupdate``
15 ms, ``alpha`` 0.125, ``beta`` 1.25, ``max_burst`` 150 ms,
``mark_ecnth`` 0.1; ``limit`` the physical buffer (Linux: 1000 packets).

Differences from the source:

* No derandomisation (RFC 8033 §5.1's optional ``accu_prob``; Linux has it):
  each drop is an independent draw with probability ``p``.
* PIE is always active (the optional activation/deactivation of §5.2, on
  a third of the buffer, is not modelled).
* Linux adds 2 % to ``p`` when the delay exceeds 250 ms; not here.
"""

from __future__ import annotations

import random
from collections import deque
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from .base import DROP, ENQUEUE, MARK, FluidQueue, LinkView, QueueDiscipline, QueueState, flag, \
    real, register, whole_limit


SCALE = ((1e-6, 2048.0), (1e-5, 512.0), (1e-4, 128.0), (1e-3, 32.0), (1e-2, 8.0), (1e-1, 2.0))
"""RFC 8033 §4.2's auto-tuning: while p < bound, Δp is divided by the factor."""


def update_probability(p: float, qdelay: float, qdelay_old: float, target: float,
                       alpha: float, beta: float) -> float:
    """One update of RFC 8033 §4.2 (probability after it; pure)."""
    delta = alpha * (qdelay - target) + beta * (qdelay - qdelay_old)
    for bound, factor in SCALE:
        if p < bound:
            delta /= factor
            break
    if p >= 0.1 and delta > 0.02:
        delta = 0.02
    p += delta
    if qdelay == 0.0 and qdelay_old == 0.0:
        p *= 0.98
    return min(max(p, 0.0), 1.0)


def update_probabilities(p: np.ndarray, qdelay: np.ndarray, qdelay_old: np.ndarray,
                         target: np.ndarray, alpha: np.ndarray, beta: np.ndarray) -> np.ndarray:
    """:func:`update_probability` over arrays (the same rules, elementwise)."""
    delta = alpha * (qdelay - target) + beta * (qdelay - qdelay_old)
    factor = np.ones_like(p)
    todo = np.ones(p.shape, bool)
    for bound, f in SCALE:
        m = todo & (p < bound)
        factor[m] = f
        todo &= ~m
    delta = delta / factor
    delta = np.where((p >= 0.1) & (delta > 0.02), 0.02, delta)
    p = p + delta
    p = np.where((qdelay == 0.0) & (qdelay_old == 0.0), p * 0.98, p)
    return np.clip(p, 0.0, 1.0)


class PIEFluid(FluidQueue):
    """PIE in the fluid engine: RFC 8033's controller (§4.2, §4.4) over
    arrays of scenarios, with the fluid queue's delay ``q/C``.

    The updates due within a step (every ``tupdate`` from time 0) are applied
    at its start, in order, all with the queue delay of that moment; the
    step's arrivals are then selected with probability ``p`` unless the burst
    allowance lasts, or the delay is below ``target/2`` with ``p < 0.2``, or
    at most two packets wait (§4.1); selected ECN-capable packets are marked
    while ``p ≤ mark_ecnth`` when ``ecn``, dropped otherwise.

    Differences from the packet rule (and Pan et al., HPSR 2013): the delay
    is the fluid queue's, read once per step rather than at each update
    (steps are a quarter of an RTT; the default ``tupdate`` is 15 ms), and
    drops are independent draws (no derandomisation, as the packet rule).
    """

    def __init__(self, queues, C):
        super().__init__(queues, C)
        n = len(queues)
        for name in ("target", "tupdate", "alpha", "beta", "max_burst", "mark_ecnth"):
            setattr(self, name, self.column(name))
        self.ecn = np.array([q.ecn for q in queues], bool)
        self.p = np.zeros(n)
        self.qdelay_old = np.zeros(n)
        self.burst = self.max_burst.copy()
        self.next_update = self.tupdate.copy()

    def signal(self, t, h, q, arrived):
        qdelay = q / self.C
        end = t + h
        half = self.target / 2.0
        due = (h > 0) & (self.next_update <= end)
        while due.any():  # the updates the step passes, in order
            p = update_probabilities(self.p, qdelay, self.qdelay_old, self.target, self.alpha,
                                     self.beta)
            burst = np.maximum(self.burst - self.tupdate, 0.0)
            burst = np.where((p == 0.0) & (qdelay < half) & (self.qdelay_old < half),
                             self.max_burst, burst)
            self.p = np.where(due, p, self.p)
            self.burst = np.where(due, burst, self.burst)
            self.qdelay_old = np.where(due, qdelay, self.qdelay_old)
            self.next_update = np.where(due, self.next_update + self.tupdate, self.next_update)
            due &= self.next_update <= end
        spared = (self.burst > 0.0) | ((self.qdelay_old < half) & (self.p < 0.2)) | (q <= 2.0)
        return np.where(spared, 0.0, self.p), self.ecn & (self.p <= self.mark_ecnth)


class PIEState(QueueState):
    """PIE's controller state.

    Attributes:
        p: drop probability. qdelay_old: the delay at the previous update (s).
        burst: burst allowance left (s). next_update: time of the next update (s).
    """

    def __init__(self, discipline: "PIE", link: LinkView, rng: random.Random) -> None:
        super().__init__(discipline, link, rng)
        self.p = 0.0
        self.qdelay_old = 0.0
        self.burst = discipline.max_burst
        self.next_update = discipline.tupdate
        self.accepted: deque[tuple[float, float]] = deque()  # (dequeue time, sojourn) (s)
        self.last = (0.0, 0.0)  # the packet last dequeued: (dequeue time, sojourn) (s)

    def arrive(self, t: float, waiting: int, ect: bool) -> int:
        pie, link = self.discipline, self.link
        while self.next_update <= t:
            self._update(self.next_update)
            self.next_update += pie.tupdate
        if self.full(t, waiting):
            return DROP
        verdict = ENQUEUE
        if not (self.burst > 0.0 or (self.qdelay_old < pie.target / 2.0 and self.p < 0.2)
                or waiting <= 2) and self.rng.random() < self.p:
            verdict = MARK if ect and pie.ecn and self.p <= pie.mark_ecnth else DROP
        if verdict != DROP:
            start = link.free_at if link.free_at > t else t
            self.accepted.append((start, start - t))
        return verdict

    def qdelay(self, now: float) -> float:
        """The sojourn of the packet last dequeued at or before ``now``; 0 if
        the link is idle at ``now`` (s)."""
        accepted = self.accepted
        while accepted and accepted[0][0] <= now:
            self.last = accepted.popleft()
        if accepted or self.last[0] + self.link.tx > now:
            return self.last[1]
        return 0.0

    def _update(self, now: float) -> None:
        pie = self.discipline
        qdelay = self.qdelay(now)
        self.p = update_probability(self.p, qdelay, self.qdelay_old, pie.target,
                                    pie.alpha, pie.beta)
        self.burst = max(self.burst - pie.tupdate, 0.0)
        if self.p == 0.0 and qdelay < pie.target / 2.0 and self.qdelay_old < pie.target / 2.0:
            self.burst = pie.max_burst
        self.qdelay_old = qdelay


@register
@dataclass(frozen=True)
class PIE(QueueDiscipline):
    """PIE (RFC 8033): a drop probability steered by the queue delay.

    Attributes:
        limit: physical buffer (packets waiting); tail drop when full.
        target: queue delay reference ``QDELAY_REF`` (s; 15 ms).
        tupdate: period of the probability update ``T_UPDATE`` (s; 15 ms).
        alpha, beta: gains on the delay error and its trend (1/s; 0.125, 1.25).
        max_burst: burst allowance ``MAX_BURST`` (s; 150 ms).
        mark_ecnth: with ``ecn``, mark instead of dropping while p ≤ this (0.1).
        ecn: mark ECN-capable packets instead of dropping them.
    """

    limit: float = 1000
    target: float = 0.015
    tupdate: float = 0.015
    alpha: float = 0.125
    beta: float = 1.25
    max_burst: float = 0.15
    mark_ecnth: float = 0.1
    ecn: bool = False
    kind: ClassVar[str] = "pie"
    unit: ClassVar[str] = "packets"

    def __post_init__(self) -> None:
        whole_limit(self)
        real(self, "target", "a delay > 0 s, such as 0.015", lambda v: v > 0)
        real(self, "tupdate", "a period > 0 s, such as 0.015", lambda v: v > 0)
        real(self, "alpha", "a gain ≥ 0 (1/s), such as 0.125", lambda v: v >= 0)
        real(self, "beta", "a gain ≥ 0 (1/s), such as 1.25", lambda v: v >= 0)
        real(self, "max_burst", "a time ≥ 0 s, such as 0.15", lambda v: v >= 0)
        real(self, "mark_ecnth", "a probability in [0, 1]", lambda v: 0 <= v <= 1)
        flag(self, "ecn")

    def start(self, link: LinkView, rng: random.Random) -> QueueState:
        return PIEState(self, link, rng)


PIE.fluid = PIEFluid
