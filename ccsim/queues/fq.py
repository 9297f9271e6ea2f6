"""FQ: Linux's fair queue packet scheduler (``sch_fq``, E. Dumazet, 2013),
the discipline Linux runs BBR with for pacing.

Source: Linux ``net/sched/sch_fq.c`` (no RFC; ``man tc-fq``).

* **Flows**: one queue per socket (not a hash: no two flows share a queue).
* **Enqueue**: drop when ``limit`` packets are held, or when the packet's
  flow already holds ``flow_limit``. A flow not on a list joins the tail of
  the *new flows*; a flow seen for the first time starts with
  ``initial_quantum`` bytes of credit, one idle for more than
  ``refill_delay`` with at least ``quantum``.
* **Dequeue**: the first flow of the new flows, else of the old flows. With
  its credit spent (``≤ 0``) it gets ``quantum`` more and moves to the
  old-flows tail; look again. An empty flow leaves its list (a new one moves
  to the old flows' tail when old flows wait); look again. Else its head
  packet goes, its bytes charged to the credit.
* **Pacing**: Linux's ``sch_fq`` holds each flow's packets to its socket's
  pacing rate (``sk_pacing_rate``, which BBR sets). Here the sender paces
  itself at its window law's ``pacing_rate`` (as Linux's TCP does without
  ``fq``, its EDT pacing), so the packets reach the queue spaced already and
  this discipline does not pace them again.

Defaults (Linux ``fq_init``): ``limit`` 10000 packets, ``flow_limit`` 100,
``quantum`` 2 MTU, ``initial_quantum`` 10 MTU, ``refill_delay`` 40 ms
(``None`` for the quanta: multiples of a data packet's size on the wire).

Differences from Linux: pacing is the sender's (above; ``maxrate``,
``low_rate_threshold``, ``horizon`` and ``ce_threshold`` not offered); the
three priority bands (all TCP in one by default) and the high-priority
internal queue are not modelled; no garbage collection of idle flows.
"""

from __future__ import annotations

import random
from collections import deque
from dataclasses import dataclass
from typing import ClassVar

from .base import real, register, whole_limit
from .scheduler import (Packet, Scheduler, SchedulerLink, SchedulerState,
                        deficit_round_robin, whole)


class _Flow:
    __slots__ = ("packets", "deficit", "listed", "age")

    def __init__(self, deficit: int) -> None:
        self.packets: deque[Packet] = deque()
        self.deficit = deficit  # credit left this round (bytes)
        self.listed = False
        self.age = 0.0      # when it last left the lists (s)


class FQState(SchedulerState):
    """``sch_fq``'s run-time state: flows by index, the new and old lists."""

    def __init__(self, discipline: "FQ", link: SchedulerLink, rng: random.Random) -> None:
        super().__init__(discipline, link, rng)
        d = discipline
        self.quantum = d.quantum if d.quantum is not None else 2 * link.mtu
        self.initial = d.initial_quantum if d.initial_quantum is not None else 10 * link.mtu
        self.flows: dict[int, _Flow] = {}
        self.new_flows: deque[_Flow] = deque()
        self.old_flows: deque[_Flow] = deque()

    def enqueue(self, t: float, packet: Packet) -> None:
        d = self.discipline
        f = self.flows.get(packet.flow)
        if f is None:
            f = self.flows[packet.flow] = _Flow(self.initial)
            f.age = -d.refill_delay
        if self.qlen >= d.limit or len(f.packets) >= d.flow_limit:
            self.drop(packet, "overflow")
            return
        packet.t = t
        f.packets.append(packet)
        self.qlen += 1
        if not f.listed:
            f.listed = True
            self.new_flows.append(f)
            if t > f.age + d.refill_delay:
                f.deficit = max(f.deficit, self.quantum)

    def dequeue(self, t: float) -> Packet | None:
        def emptied(f: _Flow) -> None:
            f.listed = False
            f.age = t  # when it went idle: refill_delay counts from here
        return deficit_round_robin(self.new_flows, self.old_flows, self.quantum,
                                   self._take, emptied)

    def _take(self, f: _Flow) -> Packet | None:
        if not f.packets:
            return None
        self.qlen -= 1
        return f.packets.popleft()


@register
@dataclass(frozen=True)
class FQ(Scheduler):
    """Linux's ``fq`` (``sch_fq``): a queue per flow, served in deficit round
    robin with new flows first; per-flow limits.

    Attributes:
        limit: packets held in all flows together (Linux: 10000).
        flow_limit: packets one flow may hold (Linux: 100).
        quantum: bytes of credit per round (``None``: 2 MTU).
        initial_quantum: a new flow's first credit (``None``: 10 MTU).
        refill_delay: idle time after which a returning flow gets at least a
            quantum of credit (s; 40 ms).
    """

    limit: float = 10000
    flow_limit: int = 100
    quantum: int | None = None
    initial_quantum: int | None = None
    refill_delay: float = 0.04
    kind: ClassVar[str] = "fq"
    unit: ClassVar[str] = "packets"

    def __post_init__(self) -> None:
        whole_limit(self)
        whole(self, "flow_limit", "a whole number of packets ≥ 1, such as 100", 1)
        if self.quantum is not None:
            whole(self, "quantum", "None (2 MTU) or a whole number of bytes ≥ 1", 1)
        if self.initial_quantum is not None:
            whole(self, "initial_quantum", "None (10 MTU) or a whole number of bytes ≥ 0", 0)
        real(self, "refill_delay", "a time ≥ 0 s, such as 0.04", lambda v: v >= 0)

    def start(self, link: SchedulerLink, rng: random.Random) -> FQState:
        return FQState(self, link, rng)
