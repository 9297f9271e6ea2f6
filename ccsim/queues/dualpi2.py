"""DualPI2: the coupled dual-queue AQM of L4S (RFC 9332), as Linux's
``sch_dualpi2`` (mainline since 2025).

Source: K. De Schepper, B. Briscoe, G. White, "Dual-Queue Coupled Active
Queue Management (AQM) for Low Latency, Low Loss, and Scalable Throughput
(L4S)", RFC 9332, 2023 (§2.4 the coupling, §2.5 and Appendix A the DualPI2
pseudocode); De Schepper et al., "PI²: A linearized AQM for both classic and
scalable TCP", ACM CoNEXT 2016; Linux's ``net/sched/sch_dualpi2.c`` for the
defaults and the rules the RFC leaves open.

* **Classification**: a packet with ECT(1) or CE (the L4S identifier, RFC
  9331) joins the L queue; every other packet the C (classic) queue. A flow
  sends ECT(1) when it is ECN-capable and its window law is scalable
  (``l4s``, :class:`~ccsim.algorithms.CongestionControl`).
* **Enqueue**: tail drop when ``limit`` packets are held (both queues
  together); otherwise the packet is stamped with its arrival time.
* **The base probability p'** (PI2, RFC 9332 Appendix A.2): every
  ``tupdate``, with ``qdelay`` the larger of the two queues' head sojourns
  (0 for an empty queue), ``p' += alpha·(qdelay − target) + beta·(qdelay −
  qdelay_prev)``, kept within [0, 1].
* **Scheduling** (Linux's C-queue protection, RFC 9332 §4.2.2): weighted
  round robin by bytes with a credit: the L queue sends when it has packets
  and the C queue is empty or the credit is ≤ 0; sending from L while C
  waits adds ``wc·bytes`` to the credit, from C while L waits subtracts
  ``(100 − wc)·bytes``; both empty resets it to ``mtu·(wc − (100 − wc))``.
* **Dequeue-time AQM** (Linux's default; nothing when less than two MTUs
  remain queued): a C packet is dropped, or marked CE when ECN-capable, with
  probability ``p_C = p'²`` (two independent draws against p'); an L packet
  is marked with ``p_CL = k·p'`` (the coupling), and then, if its sojourn
  exceeds ``step_thresh`` (and it found at least ``min_qlen_step`` packets
  in the L queue on arrival), marked by the L queue's native step AQM. When
  ``k·p' > 1`` (overload) ECN no longer protects: C packets selected by
  ``p'²`` are dropped whatever their ECN, and L packets are dropped with
  ``p'²`` and marked otherwise (``drop_overload``).

Defaults (Linux ``dualpi2_reset_default``): ``limit`` 10000 packets,
``target`` 15 ms, ``tupdate`` 16 ms, ``alpha`` 41/256 Hz (≈ 0.16),
``beta`` 819/256 Hz (≈ 3.2), ``coupling`` k = 2, ``step_thresh`` 1 ms of
sojourn applied whatever the L queue's length (``min_qlen_step`` 0),
``c_protection`` wc = 10 %, drop at dequeue, drop on overload,
classic ECT packets marked (``ecn``).

Differences from Linux:

* ``memory_limit`` (``limit`` × 2 MTU) is not modelled: with packets of one
  size the packet limit binds first.
* Probabilities are floats (Linux: 32-bit fixed point, ``alpha``/``beta`` in
  64 ns steps); draws are the link's seeded generator's.
* The PI update runs at multiples of ``tupdate`` from the start of the run,
  applied at the next enqueue or dequeue (exact: the heads, hence
  ``qdelay``, do not change between them).
* ``drop_early`` and classification by tc filters or priority are not
  offered; no GSO.
"""

from __future__ import annotations

import random
from collections import deque
from dataclasses import dataclass
from typing import ClassVar

from .base import flag, real, register, whole_limit
from .scheduler import ECT1, Packet, Scheduler, SchedulerLink, SchedulerState, whole


class DualPI2State(SchedulerState):
    """DualPI2's run-time state.

    Attributes:
        l, c: the L and C queues (FIFO).
        prob: the base probability p' (RFC 9332's ``p'``; ``p_C = p'²``, ``p_CL = k·p'``).
        last_qdelay: ``qdelay`` at the last update (s).
        next_update: time of the next PI update (s).
        credit: the C-protection WRR credit (bytes × percent).
        backlog: bytes held.
    """

    def __init__(self, discipline: "DualPI2", link: SchedulerLink, rng: random.Random) -> None:
        super().__init__(discipline, link, rng)
        self.l: deque[Packet] = deque()
        self.c: deque[Packet] = deque()
        self.prob = 0.0
        self.last_qdelay = 0.0
        self.next_update = discipline.tupdate
        self.wc = discipline.c_protection
        self.wl = 100 - self.wc
        self.credit = self.credit_init = link.mtu * (self.wc - self.wl)
        self.backlog = 0

    def update(self, t: float) -> None:
        """Apply the PI updates due by ``t`` (s), each at its own time."""
        d = self.discipline
        while self.next_update <= t:
            u = self.next_update
            qc = u - self.c[0].t if self.c else 0.0
            ql = u - self.l[0].t if self.l else 0.0
            qdelay = qc if qc > ql else ql
            p = (self.prob + d.alpha * (qdelay - d.target)
                 + d.beta * (qdelay - self.last_qdelay))
            self.last_qdelay = qdelay
            p = 0.0 if p < 0.0 else 1.0 if p > 1.0 else p
            if not d.drop_overload:
                p = min(p, 1.0 / d.coupling)
            self.prob = p
            self.next_update = u + d.tupdate

    def enqueue(self, t: float, packet: Packet) -> None:
        if self.next_update <= t:
            self.update(t)
        if self.qlen >= self.discipline.limit:
            self.drop(packet, "overflow")
            return
        packet.t = t
        if packet.ect == ECT1 or packet.ce:
            packet.tag = len(self.l) >= self.discipline.min_qlen_step  # apply the step
            self.l.append(packet)
        else:
            self.c.append(packet)
        self.qlen += 1
        self.backlog += packet.size

    def dequeue(self, t: float) -> Packet | None:
        if self.next_update <= t:
            self.update(t)
        l, c = self.l, self.c
        while True:
            if l and (not c or self.credit <= 0):
                packet, in_l = l.popleft(), True
                change = self.wc if c else 0
            elif c:
                packet, in_l = c.popleft(), False
                change = -self.wl if l else 0
            else:
                self.credit = self.credit_init
                return None
            self.qlen -= 1
            self.backlog -= packet.size
            if self.must_drop(packet, in_l):
                self.drop(packet, "dualpi2")
                continue
            if (in_l and packet.tag and (t - packet.t > self.discipline.step_thresh
                                         if (step := self.discipline.step_packets) is None
                                         else len(l) > step)
                    and not self.mark(packet)):
                self.drop(packet, "dualpi2")  # the step, on a packet that cannot be marked
                continue
            self.credit += change * packet.size
            return packet

    def must_drop(self, packet: Packet, in_l: bool) -> bool:
        """The coupled PI2 verdict on a dequeued packet: ``True`` to drop it;
        marks it when it is to be marked."""
        if self.backlog < 2 * self.link.mtu:
            return False
        d, roll = self.discipline, self.rng.random
        prob = self.prob
        prob_l = prob * d.coupling
        overload = prob_l > 1.0
        if not in_l:  # p_C = p'^2
            if roll() < prob and roll() < prob:
                if overload or not (d.ecn and self.mark(packet)):
                    return True
            return False
        if overload:
            if d.drop_overload and roll() < prob and roll() < prob:
                return True
            self.mark(packet)
            return False
        if roll() < prob_l:
            return not self.mark(packet)
        return False


@register
@dataclass(frozen=True)
class DualPI2(Scheduler):
    """DualPI2 (RFC 9332, Linux ``sch_dualpi2``): an L queue for L4S traffic
    (ECT(1)) with a shallow step, a C queue under PI2, coupled by ``k``.

    Attributes:
        limit: packets held in both queues together (Linux: 10000).
        target: the PI controller's queue-delay target (s; 15 ms).
        tupdate: time between probability updates (s; 16 ms).
        alpha: integral gain (Hz; 41/256).
        beta: proportional gain (Hz; 819/256).
        coupling: k, with ``p_CL = k·p'`` and ``p_C = p'²`` (2).
        step_thresh: the L queue's step threshold, a sojourn (s; 1 ms).
        step_packets: the step threshold in packets instead (``tc ... dualpi2
            step_thresh 2p``, Linux's ``step_in_packets``): an L packet is
            marked when more than this many packets remain in the L queue as
            it leaves; ``None`` (the default): ``step_thresh`` in time.
        min_qlen_step: the step applies to a packet that finds at least this
            many packets in the L queue (Linux: 0, always; RFC 9332's
            pseudocode leaves a lone packet unmarked, about 1 here).
        c_protection: the C queue's weight in the scheduler (percent; 10).
        drop_overload: drop instead of marking when ``k·p' > 1`` (on).
        ecn: mark ECT(0) packets of the C queue instead of dropping them (on).
    """

    limit: float = 10000
    target: float = 0.015
    tupdate: float = 0.016
    alpha: float = 41 / 256
    beta: float = 819 / 256
    coupling: float = 2.0
    step_thresh: float = 0.001
    step_packets: int | None = None
    min_qlen_step: int = 0
    c_protection: int = 10
    drop_overload: bool = True
    ecn: bool = True
    kind: ClassVar[str] = "dualpi2"
    unit: ClassVar[str] = "packets"

    def __post_init__(self) -> None:
        whole_limit(self)
        real(self, "target", "a delay > 0 s, such as 0.015", lambda v: v > 0)
        real(self, "tupdate", "a period > 0 s, such as 0.016", lambda v: v > 0)
        real(self, "alpha", "a gain > 0 Hz, such as 0.16", lambda v: v > 0)
        real(self, "beta", "a gain > 0 Hz, such as 3.2", lambda v: v > 0)
        real(self, "coupling", "a coupling factor k ≥ 1, such as 2", lambda v: v >= 1)
        real(self, "step_thresh", "a sojourn ≥ 0 s, such as 0.001", lambda v: v >= 0)
        whole(self, "min_qlen_step", "a whole number of packets ≥ 0, such as 0", 0)
        if self.step_packets is not None:
            whole(self, "step_packets", "a whole number of packets ≥ 0, such as 2, or None "
                  "(the step in time, step_thresh)", 0)
        whole(self, "c_protection", "a whole percentage from 0 to 100, such as 10", 0, 100)
        flag(self, "drop_overload")
        flag(self, "ecn")

    def start(self, link: SchedulerLink, rng: random.Random) -> DualPI2State:
        return DualPI2State(self, link, rng)
