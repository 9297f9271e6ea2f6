"""FQ-CoDel: flow queueing with CoDel in each queue (RFC 8290), as Linux's
``fq_codel``, the default queue discipline of most Linux distributions.

Source: T. Høiland-Jørgensen, P. McKenney, D. Täht, J. Gettys, E. Dumazet,
"The Flow Queue CoDel Packet Scheduler and Active Queue Management
Algorithm", RFC 8290, 2018 (§4 the algorithm, §5 the defaults); Linux's
``net/sched/sch_fq_codel.c`` and ``include/net/codel_impl.h`` for the rules
where the RFC leaves a choice.

* **Classification** (§4.1.1): each flow hashes to one of ``flows`` queues.
* **Enqueue** (§4.1): the packet joins its queue's tail, stamped with its
  arrival time. A queue not on either list joins the tail of the *new
  flows* list with ``deficit = quantum``. When the discipline then holds
  more than ``limit`` packets, it drops from the head of the queue with the
  largest backlog in bytes, up to ``drop_batch`` packets or until half of
  that backlog is gone, and adds the number dropped to that queue's CoDel
  ``count`` (Linux's ``fq_codel_drop``).
* **Dequeue** (§4.2): take the first queue of the new-flows list, else of the
  old-flows list. If its deficit is spent (``≤ 0``), add ``quantum`` and move
  it to the tail of the old flows; look again. Otherwise let CoDel dequeue
  from it (below); if that yields nothing, the queue leaves its list — except
  that a new flow with old flows waiting moves to the old-flows tail (so an
  emptied new flow cannot starve them); look again. Else charge the packet's
  bytes to the deficit and send it.
* **CoDel per queue** (RFC 8289, Linux's ``codel_dequeue``): each queue has
  its own ``first_above_time``, ``drop_next``, ``count``, ``lastcount``,
  ``dropping``; ``target`` and ``interval`` are shared. A sojourn is *above*
  when it is at least ``target`` and more than one MTU remains queued in
  the whole discipline (§5.3 of RFC 8289, with Linux's byte backlog). In the
  dropping state, while ``now ≥ drop_next``: ``count += 1``, then mark an
  ECN-capable packet (which ends the loop, ``drop_next`` advanced by
  ``interval/√count``) or drop it and dequeue the next, leaving the state if
  that one is not above, else advancing ``drop_next``. Entering the dropping
  state: mark or drop the packet (and dequeue the next), ``count`` restarts
  at 1, or at ``count − lastcount`` when that exceeds 1 and the last
  episode's ``drop_next`` is less than 16 intervals ago; ``drop_next =
  now + interval/√count``.

Defaults (Linux ``fq_codel_init``; RFC 8290 §5): 1024 queues, ``quantum``
one MTU (Linux: ``psched_mtu``, the device's MTU plus link header; here a
data packet's size on the wire, ``mss + header``, which ``quantum=None``
stands for), ``target`` 5 ms, ``interval`` 100 ms, ``limit`` 10240 packets,
``drop_batch`` 64, ``ecn`` on (Linux marks ECT packets by default).

Differences from Linux:

* The hash: a flow's queue is drawn uniformly at random, from the link's
  seeded generator, when its first packet arrives (Linux: ``jhash`` of the
  5-tuple with a random perturbation). Two flows share a queue with
  probability ``1/flows``, as with a good hash.
* ``memory_limit`` (32 MB) is not modelled: with packets of one size it is
  reached after the packet limit.
* ``interval/√count`` is exact (Linux: a Newton step of ``1/√count`` in
  fixed point); times are floats (Linux: ``codel_time_t``, 1024 ns units).
* ``ce_threshold`` (off by default) is not offered.
"""

from __future__ import annotations

import math
import random
from collections import deque
from dataclasses import dataclass
from typing import ClassVar

from .base import flag, real, register, whole_limit
from .scheduler import (Packet, Scheduler, SchedulerLink, SchedulerState,
                        deficit_round_robin, whole)


class FlowQueue:
    """One flow queue: its packets, DRR deficit (bytes), byte backlog, and
    CoDel's state (RFC 8289 §5 names)."""

    __slots__ = ("index", "packets", "deficit", "backlog", "listed", "first_above_time",
                 "drop_next", "count", "lastcount", "dropping")

    def __init__(self, index: int) -> None:
        self.index = index
        self.packets: deque[Packet] = deque()
        self.deficit = 0
        self.backlog = 0
        self.listed = False          # on the new- or old-flows list
        self.first_above_time = 0.0
        self.drop_next = 0.0
        self.count = self.lastcount = 0
        self.dropping = False


class FqCodelState(SchedulerState):
    """FQ-CoDel's run-time state.

    Attributes:
        queues: flow queues by index (created at their first packet).
        new_flows, old_flows: the two round-robin lists (RFC 8290 §4.2).
        backlog: bytes held.
    """

    def __init__(self, discipline: "FqCodel", link: SchedulerLink, rng: random.Random) -> None:
        super().__init__(discipline, link, rng)
        self.queues: dict[int, FlowQueue] = {}
        self.bucket: dict[int, int] = {}  # flow -> queue index: the hash
        self.new_flows: deque[FlowQueue] = deque()
        self.old_flows: deque[FlowQueue] = deque()
        self.backlog = 0
        self.quantum = discipline.quantum if discipline.quantum is not None else link.mtu
        self.mtu = link.mtu
        self.target, self.interval = discipline.target, discipline.interval
        self.ecn = discipline.ecn

    def queue_of(self, flow: int) -> FlowQueue:
        """The queue ``flow`` hashes to (§4.1.1)."""
        idx = self.bucket.get(flow)
        if idx is None:
            idx = self.bucket[flow] = self.rng.randrange(self.discipline.flows)
        fq = self.queues.get(idx)
        if fq is None:
            fq = self.queues[idx] = FlowQueue(idx)
        return fq

    def enqueue(self, t: float, packet: Packet) -> None:
        fq = self.queue_of(packet.flow)
        packet.t = t
        fq.packets.append(packet)
        fq.backlog += packet.size
        self.backlog += packet.size
        if not fq.listed:
            fq.listed = True
            fq.deficit = self.quantum
            self.new_flows.append(fq)
        self.qlen += 1
        if self.qlen > self.discipline.limit:
            self.drop_batch()

    def drop_batch(self) -> None:
        """Overflow: drop from the head of the fattest queue (bytes; the
        lowest index among equals), up to ``drop_batch`` packets or half its
        backlog, and raise its CoDel ``count`` by as many (Linux ``fq_codel_drop``)."""
        fat = None
        for idx in sorted(self.queues):
            fq = self.queues[idx]
            if fq.backlog > (fat.backlog if fat is not None else 0):
                fat = fq
        threshold = fat.backlog >> 1
        dropped = length = 0
        while True:
            packet = fat.packets.popleft()
            length += packet.size
            dropped += 1
            self.drop(packet, "overflow")
            if dropped >= self.discipline.drop_batch or length >= threshold:
                break
        fat.count += dropped
        fat.backlog -= length
        self.backlog -= length
        self.qlen -= dropped

    def dequeue(self, t: float) -> Packet | None:
        return deficit_round_robin(self.new_flows, self.old_flows, self.quantum,
                                   lambda fq: self.codel_dequeue(fq, t), _unlist)

    def _pop(self, fq: FlowQueue) -> Packet | None:
        if not fq.packets:
            return None
        packet = fq.packets.popleft()
        fq.backlog -= packet.size
        self.backlog -= packet.size
        self.qlen -= 1
        return packet

    def should_drop(self, fq: FlowQueue, packet: Packet | None, now: float) -> bool:
        """CoDel's estimator (RFC 8289 §5.3) on ``fq``, after ``packet`` left it."""
        if packet is None:
            fq.first_above_time = 0.0
            return False
        if now - packet.t < self.target or self.backlog <= self.mtu:
            fq.first_above_time = 0.0
            return False
        if fq.first_above_time == 0.0:
            fq.first_above_time = now + self.interval
            return False
        return now >= fq.first_above_time

    def codel_dequeue(self, fq: FlowQueue, now: float) -> Packet | None:
        """CoDel's dequeue on one flow queue (RFC 8289 §5.4-5.7, Linux's
        ``codel_dequeue``): the packet to send, or ``None``."""
        packet = self._pop(fq)
        if packet is None:
            fq.dropping = False
            return None
        drop = self.should_drop(fq, packet, now)
        interval = self.interval
        if fq.dropping:
            if not drop:
                fq.dropping = False
            else:
                while fq.dropping and now >= fq.drop_next:
                    fq.count += 1
                    if self.ecn and self.mark(packet):
                        fq.drop_next += interval / math.sqrt(fq.count)
                        return packet
                    self.drop(packet, "fq_codel")
                    packet = self._pop(fq)
                    if not self.should_drop(fq, packet, now):
                        fq.dropping = False
                    else:
                        fq.drop_next += interval / math.sqrt(fq.count)
        elif drop:
            if not (self.ecn and self.mark(packet)):
                self.drop(packet, "fq_codel")
                packet = self._pop(fq)
                self.should_drop(fq, packet, now)
            fq.dropping = True
            delta = fq.count - fq.lastcount
            fq.count = delta if delta > 1 and now - fq.drop_next < 16.0 * interval else 1
            fq.lastcount = fq.count
            fq.drop_next = now + interval / math.sqrt(fq.count)
        return packet


@register
@dataclass(frozen=True)
class FqCodel(Scheduler):
    """FQ-CoDel (RFC 8290, Linux ``fq_codel``): deficit round robin over
    hashed flow queues, new flows first, CoDel in each queue.

    Attributes:
        limit: packets held in all queues together (Linux: 10240).
        flows: number of flow queues (Linux: 1024).
        quantum: bytes a queue may send per round (``None``: one MTU, a data
            packet's size on the wire).
        target: CoDel's target sojourn (s; 5 ms).
        interval: CoDel's interval (s; 100 ms).
        drop_batch: most packets dropped at once on overflow (Linux: 64).
        ecn: mark ECN-capable packets instead of dropping them (Linux: on).
    """

    limit: float = 10240
    flows: int = 1024
    quantum: int | None = None
    target: float = 0.005
    interval: float = 0.1
    drop_batch: int = 64
    ecn: bool = True
    kind: ClassVar[str] = "fq_codel"
    unit: ClassVar[str] = "packets"

    def __post_init__(self) -> None:
        whole_limit(self)
        whole(self, "flows", "a whole number of queues from 1 to 65536", 1, 65536)
        if self.quantum is not None:
            whole(self, "quantum", "None (one MTU) or a whole number of bytes ≥ 256", 256)
        real(self, "target", "a delay > 0 s, such as 0.005", lambda v: v > 0)
        target = self.target
        real(self, "interval", f"a time > target={target} s, such as 0.1", lambda v: v > target)
        whole(self, "drop_batch", "a whole number of packets ≥ 1, such as 64", 1)
        flag(self, "ecn")

    def start(self, link: SchedulerLink, rng: random.Random) -> FqCodelState:
        return FqCodelState(self, link, rng)


def _unlist(fq: FlowQueue) -> None:
    """A flow queue that leaves both lists (fq_codel keeps no idle time)."""
    fq.listed = False
