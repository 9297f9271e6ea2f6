"""The scheduler contract: a link whose queue is several queues, the next
packet picked at dequeue.

A FIFO discipline (:mod:`.base`) decides each packet's fate at its arrival,
because a FIFO of equal packets knows every packet's dequeue time then. A
scheduler with several queues does not: which packet leaves next depends on
packets that have not arrived yet (a new flow's first packet overtakes a
standing queue under fair queueing). Such a discipline is a
:class:`Scheduler`; its link (:class:`ccsim.packet.scheduled.ScheduledLink`)
keeps real queues of :class:`Packet` objects and asks the scheduler's
run-time state for the next packet each time the wire is free, at that time,
through an event of the engine's clock. The engine then passes packets hop
by hop (an event per hop), so every link sees its arrivals at their times.
Links with FIFO disciplines keep their arrival-time fast path.

A scheduler is two objects, as any discipline:

* its *description*, a frozen dataclass subclassing :class:`Scheduler`
  (parameters, validation, a registered ``kind``);
* its *run-time state*, a :class:`SchedulerState` whose :meth:`~SchedulerState.enqueue`
  takes each arriving packet, in time order, and whose
  :meth:`~SchedulerState.dequeue` returns the packet to transmit next (or
  ``None``: nothing queued). Either may drop packets (:meth:`SchedulerState.drop`,
  the arriving one or any queued one) or mark them (:meth:`SchedulerState.mark`).
  ``qlen`` counts the packets it holds.

Deficit round robin over flow queues (:mod:`.fq_codel`), a coupled dual
queue (:mod:`.dualpi2`), strict or weighted priority: each is this contract.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
import random
from collections import deque
from typing import Any, Callable, ClassVar, Protocol

from ..errors import ScenarioError, ScenarioTypeError
from .base import QueueDiscipline

__all__ = ["Scheduler", "SchedulerState", "SchedulerLink", "Packet", "NOT_ECT", "ECT0", "ECT1"]

NOT_ECT, ECT0, ECT1 = 0, 1, 2
"""A packet's ECN codepoint (RFC 3168 §5): not ECN-capable, ECT(0) (classic
ECN), ECT(1) (the L4S identifier, RFC 9331)."""


class Packet:
    """One packet held by a scheduled link.

    Attributes:
        flow: the flow's index in the scenario (its 5-tuple, for hashing).
        ect: ECN codepoint: :data:`NOT_ECT`, :data:`ECT0` or :data:`ECT1`.
        ce: marked CE (here or on a link before).
        size: bytes on the wire.
        data: a data packet (else an ACK, two-way traffic).
        t: when it was enqueued (s).
        item, done: the engine's: ``done(packet, arrival)`` is called when it
            leaves (``arrival``: at the far end, s) or is dropped (``-1.0``).
        tag: the scheduler's own note on the packet (``None`` until it sets one).
    """

    __slots__ = ("flow", "ect", "ce", "size", "data", "t", "item", "done", "tag")

    def __init__(self, flow: int, ect: int, ce: bool, size: int, data: bool, item: Any,
                 done: Callable[["Packet", float], None]) -> None:
        self.flow, self.ect, self.ce, self.size, self.data = flow, ect, ce, size, data
        self.t = 0.0
        self.item, self.done = item, done
        self.tag = None


class SchedulerLink(Protocol):
    """What a scheduler may use of its link (the packet engine's
    :class:`~ccsim.packet.scheduled.ScheduledLink` has these).

    Attributes:
        tx: time to serialise one data packet (s).
        limit: the scheduler's buffer (packets).
        mtu: a data packet's size on the wire (bytes).
        free_at: when the packet on the wire finishes (s).
        marks: CE marks made here (:meth:`SchedulerState.mark` counts them).
    """

    tx: float
    limit: int
    mtu: int
    free_at: float
    marks: int

    def dropped(self, packet: "Packet", reason: str) -> None:
        """``packet`` was discarded (:meth:`SchedulerState.drop`)."""


class SchedulerState:
    """Run-time state of one scheduler on one link (mutable, one per run).

    Attributes:
        link: the link (read ``tx``, ``limit``, ``mtu``, ``free_at``; do not change them).
        rng: the link's seeded generator for this scheduler's draws (hashing,
            random marking).
        qlen: packets held (the one on the wire not counted).
    """

    def __init__(self, discipline: "Scheduler", link: SchedulerLink,
                 rng: random.Random) -> None:
        self.discipline, self.link, self.rng = discipline, link, rng
        self.qlen = 0

    def enqueue(self, t: float, packet: Packet) -> None:
        """``packet`` arrives at ``t`` (s, non-decreasing over calls)."""
        raise NotImplementedError

    def dequeue(self, t: float) -> Packet | None:
        """The packet to put on the wire at ``t`` (s), or ``None``."""
        raise NotImplementedError

    def drop(self, packet: Packet, reason: str) -> None:
        """Discard ``packet`` (no longer held: the caller took it out of its
        queue and ``qlen``); ``reason``: ``"overflow"`` or the discipline's kind."""
        self.link.dropped(packet, reason)

    def mark(self, packet: Packet) -> bool:
        """Set CE on an ECN-capable packet (RFC 3168 §5; counted once, a
        packet already CE is left as it is); ``False`` (nothing done) when it
        is not ECN-capable: drop it instead."""
        if not packet.ect:
            return False
        if not packet.ce:
            packet.ce = True
            self.link.marks += 1
        return True


class Scheduler(QueueDiscipline):
    """Base of every scheduler's description (subclasses are frozen
    dataclasses, as for :class:`~ccsim.QueueDiscipline`): ``limit`` counts
    packets; :meth:`start` returns a :class:`SchedulerState`. The fluid engine
    models none of them (``fluid = False``) until one declares a model."""

    fluid: ClassVar[Any] = False

    def to_dict(self) -> dict[str, Any]:
        """``{"kind": ..., field: value, ...}``, ``ecn`` always (on by default here)."""
        return {"kind": self.kind, **dataclasses.asdict(self)}

    def start(self, link: SchedulerLink, rng: random.Random) -> SchedulerState:
        raise NotImplementedError


def deficit_round_robin(new: deque, old: deque, quantum: int,
                        take: Callable[[Any], "Packet | None"],
                        emptied: Callable[[Any], None]) -> "Packet | None":
    """The next packet of a deficit round robin over flow queues with new and
    old lists (RFC 8290 §4.2, and Linux's ``sch_fq``): serve the first flow of
    the new list, else of the old. A flow whose ``deficit`` is spent (≤ 0,
    bytes) gets ``quantum`` more and goes to the old list's tail; a flow with
    nothing to send leaves its list — a new one through the old list first,
    if that holds any — and ``emptied(flow)`` is told when it leaves both.
    ``take(flow)`` returns the flow's next packet or ``None``; the packet's
    ``size`` (bytes) is charged to the deficit."""
    while True:
        head = new if new else old
        if not head:
            return None
        flow = head[0]
        if flow.deficit <= 0:
            flow.deficit += quantum
            head.popleft()
            old.append(flow)
            continue
        packet = take(flow)
        if packet is None:
            head.popleft()
            if head is new and old:  # a pass through the old flows first
                old.append(flow)
            else:
                emptied(flow)
            continue
        flow.deficit -= packet.size
        return packet


def whole(obj: Any, name: str, allowed: str, low: int, high: float = math.inf) -> int:
    """``obj.name`` as an int in ``[low, high]``, else a ScenarioError naming
    ``queue.name``, its value and ``allowed``."""
    value = getattr(obj, name)
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ScenarioTypeError(f"queue.{name}", value, allowed)
    if not (math.isfinite(value) and float(value).is_integer() and low <= value <= high):
        raise ScenarioError(f"queue.{name}", value, allowed)
    object.__setattr__(obj, name, int(value))
    return int(value)
