"""CoDel: Controlled Delay (RFC 8289; Nichols & Jacobson, CACM 55(7), 2012).

Source: K. Nichols, V. Jacobson, A. McGregor, J. Iyengar, "Controlled Delay
Active Queue Management", RFC 8289, 2018: §3 (algorithm), §4.4 (defaults),
§5 (the reference pseudocode, whose rules are restated here).

At each dequeue, with ``now`` the dequeue time and ``sojourn`` the packet's
time in the queue:

* ``ok_to_drop``: ``sojourn ≥ target`` continuously for ``interval`` —
  ``first_above_time`` is set to ``now + interval`` when the sojourn first
  goes above ``target``, cleared whenever it is below, and ``ok_to_drop``
  holds once ``now ≥ first_above_time`` (§5.3, ``dodequeue``);
* entering the dropping state (not dropping, ``ok_to_drop``): drop the
  packet, ``count = 1`` — or ``count − lastcount`` when that exceeds 1 and
  ``now − drop_next < 16·interval`` (the re-entry rule: the drop rate that
  controlled the last episode is a good start) — and schedule
  ``drop_next = now + interval/√count``; ``lastcount = count``;
* in the dropping state: leave it when ``ok_to_drop`` is false; otherwise
  while ``now ≥ drop_next``, drop, dequeue the next packet, and if it too is
  ``ok_to_drop``, ``count += 1`` and ``drop_next += interval/√count`` (the
  control law, §3.3).

With ``ecn``, an ECN-capable packet is marked instead of dropped (§5.1 of
RFC 8289 allows it; Linux's ``codel_dequeue``): it stays in the queue, so
the loop ends with it, ``count += 1`` and ``drop_next`` advances as for a drop.

How this runs at arrival (see :mod:`ccsim.queues.base`): the link knows a
packet's dequeue time at its arrival, ``max(free_at, t)``, so the rules above
are applied to each packet, in arrival (= dequeue) order, at its own dequeue
time. "Dequeue the next packet" inside the loop is the next packet to arrive:
if it dequeues at the same instant it was already queued; if later, the
queue was empty after the drop (``dodequeue`` found nothing: the sojourn is
below target and, in the loop, dropping ends), which is what the state
applies before handling that packet.

Defaults (RFC 8289 §4.4; Linux ``sch_codel`` the same): ``target`` 5 ms,
``interval`` 100 ms; ``limit`` is the physical buffer (tail drop when full;
Linux's default is 1000 packets).

Differences from the source:

* §5.3's second condition, "``bytes() <= maxpacket``" (do not count the
  sojourn as above target when at most one packet is left after the
  dequeue), is not applied: at a packet's arrival the link does not know
  the packets that will join the queue behind it before its dequeue.
* A packet CoDel drops leaves the buffer at its arrival instead of at its
  dequeue, so tail drops of a full buffer see it gone a little earlier.
* ``interval/√count`` is computed exactly (Linux uses a Newton step of
  ``1/√count`` in fixed point).
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from .base import DROP, ENQUEUE, MARK, FluidQueue, LinkView, QueueDiscipline, QueueState, flag, \
    real, register, whole_limit


_IN_LOOP, _ENTERED = 1, 2  # a drop just happened, in the loop or on entering


class CoDelState(QueueState):
    """CoDel's control-law state (RFC 8289 §5 names).

    Attributes:
        first_above_time: when a sojourn above target will allow a drop (s; 0: none).
        drop_next: time of the next drop while dropping (s).
        count, lastcount: drops in this dropping episode, and at its entry.
        dropping: in the dropping state.
    """

    def __init__(self, discipline: "CoDel", link: LinkView, rng: random.Random) -> None:
        super().__init__(discipline, link, rng)
        self.first_above_time = 0.0
        self.drop_next = 0.0
        self.count = 0
        self.lastcount = 0
        self.dropping = False
        self.pending = 0          # the previous packet was dropped: _IN_LOOP or _ENTERED
        self.pending_at = 0.0     # ... at this dequeue time (s)

    def arrive(self, t: float, waiting: int, ect: bool) -> int:
        if self.full(t, waiting):
            return DROP
        link = self.link
        now = link.free_at if link.free_at > t else t  # this packet's dequeue time
        return self.dequeue(now, now - t, ect)

    def ok_to_drop(self, now: float, sojourn: float) -> bool:
        """``dodequeue``'s estimator (§5.3), updating ``first_above_time``."""
        codel = self.discipline
        if sojourn < codel.target:
            self.first_above_time = 0.0
            return False
        if self.first_above_time == 0.0:
            self.first_above_time = now + codel.interval
            return False
        return now >= self.first_above_time

    def dequeue(self, now: float, sojourn: float, ect: bool) -> int:
        """The verdict for the packet dequeued at ``now`` after ``sojourn`` s."""
        interval = self.discipline.interval
        if self.pending:
            kind, self.pending = self.pending, 0
            if now > self.pending_at:  # the queue was empty after that drop
                self.first_above_time = 0.0
                if kind == _IN_LOOP:
                    self.dropping = False
            else:  # this packet is the one dequeued right after the drop
                ok = self.ok_to_drop(now, sojourn)
                if kind == _ENTERED:
                    return ENQUEUE
                if not ok:
                    self.dropping = False
                    return ENQUEUE
                self.count += 1
                self.drop_next += interval / math.sqrt(self.count)
                return self._drop_now(now, ect) if now >= self.drop_next else ENQUEUE
        ok = self.ok_to_drop(now, sojourn)
        if self.dropping:
            if not ok:
                self.dropping = False
                return ENQUEUE
            return self._drop_now(now, ect) if now >= self.drop_next else ENQUEUE
        if not ok:
            return ENQUEUE
        # enter the dropping state (§5.7), with the re-entry rule for count
        delta = self.count - self.lastcount
        self.count = delta if delta > 1 and now - self.drop_next < 16.0 * interval else 1
        self.lastcount = self.count
        self.dropping = True
        self.drop_next = now + interval / math.sqrt(self.count)
        verdict = self.congestion(ect)
        if verdict == DROP:
            self.pending, self.pending_at = _ENTERED, now
        return verdict

    def _drop_now(self, now: float, ect: bool) -> int:
        """A drop in the dropping state's loop; a mark ends the loop at once."""
        verdict = self.congestion(ect)
        if verdict == MARK:
            self.count += 1
            self.drop_next += self.discipline.interval / math.sqrt(self.count)
        else:
            self.pending, self.pending_at = _IN_LOOP, now
        return verdict


class CoDelFluid(FluidQueue):
    """CoDel in the fluid engine: RFC 8289's control law on the fluid queue's
    sojourn time ``q/C``, over arrays of scenarios.

    Each step reads the sojourn once, at its start, and applies §5.3's
    estimator to it (``first_above_time``, ``ok_to_drop``); entering the
    dropping state (with §5.7's re-entry rule for ``count``) is one signal,
    and every ``drop_next`` the step passes is one more, ``count += 1``,
    ``drop_next += interval/√count`` (§3.3). The step's signals, a whole
    number per scenario, are spread over its arrivals: marks for ECN-capable
    flows when ``ecn``, drops otherwise.

    Differences from the packet rule (and Nichols & Jacobson, CACM 2012):
    the sojourn is the fluid queue's mean, not each packet's, and it is read
    once per step, so ``ok_to_drop`` changes at step boundaries; a drop does
    not end the loop early when the next packet's sojourn falls below target
    within the step; §5.3's "at most one packet left" condition is not applied.
    """

    random = False

    def __init__(self, queues, C):
        super().__init__(queues, C)
        n = len(queues)
        self.target, self.interval = self.column("target"), self.column("interval")
        self.ecn = np.array([q.ecn for q in queues], bool)
        self.first_above = np.zeros(n)
        self.drop_next = np.zeros(n)
        self.count = np.zeros(n)
        self.lastcount = np.zeros(n)
        self.dropping = np.zeros(n, bool)

    def signal(self, t, h, q, arrived):
        live = h > 0
        target, interval = self.target, self.interval
        below = (q / self.C) < target
        first = self.first_above
        ok = live & ~below & (first != 0) & (t >= first)
        first[live] = np.where(below, 0.0, np.where(first == 0, t + interval, first))[live]
        self.dropping &= ok | ~live
        enter = ok & ~self.dropping
        delta = self.count - self.lastcount
        again = (delta > 1) & (t - self.drop_next < 16.0 * interval)
        self.count[enter] = np.where(again, delta, 1.0)[enter]
        self.lastcount[enter] = self.count[enter]
        self.drop_next[enter] = (t + interval / np.sqrt(self.count))[enter]
        self.dropping |= enter
        k = enter.astype(float)
        end = t + h
        due = self.dropping & live & (self.drop_next < end)
        while due.any():  # the control law: one signal per drop_next the step passes
            k += due
            self.count += due
            self.drop_next[due] += (interval / np.sqrt(self.count))[due]
            due &= self.drop_next < end
        arrivals = arrived * h
        return np.where(k > 0, k / np.maximum(arrivals, k), 0.0), self.ecn.copy()


@register
@dataclass(frozen=True)
class CoDel(QueueDiscipline):
    """CoDel (RFC 8289): drop when packets have sat above ``target`` for an
    ``interval``, at a rate rising as √count.

    Attributes:
        limit: physical buffer (packets waiting); tail drop when full.
        target: acceptable standing queue delay (s; RFC 8289 §4.4: 5 ms).
        interval: window over which the delay must stay above target, and
            the control law's base spacing (s; §4.4: 100 ms).
        ecn: mark ECN-capable packets instead of dropping them.
    """

    limit: float = 1000
    target: float = 0.005
    interval: float = 0.1
    ecn: bool = False
    kind: ClassVar[str] = "codel"
    unit: ClassVar[str] = "packets"

    def __post_init__(self) -> None:
        whole_limit(self)
        real(self, "target", "a delay > 0 s, such as 0.005", lambda v: v > 0)
        target = self.target
        real(self, "interval", f"a time > target={target} s, such as 0.1", lambda v: v > target)
        flag(self, "ecn")

    def start(self, link: LinkView, rng: random.Random) -> QueueState:
        return CoDelState(self, link, rng)


CoDel.fluid = CoDelFluid
