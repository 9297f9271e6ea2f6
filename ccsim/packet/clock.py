"""The packet engine's own event heap: simulation time at packet grain.

Every ACK arrival, retransmission timer, delayed-ACK timer, pacing release
and access-link hop is a plain tuple ``(time, id, fn, payload)`` on one
binary heap; ``id`` counts up as events are scheduled, so events due at the
same instant run in the order they were scheduled (as SimPy orders events of
one priority). Draining it costs a heap pop and a call per event, where a
SimPy event costs an object, a callback list and SimPy's step.

Flow starts and stops and the trace sampler are on it too, so every event
of a run has its place in one order. SimPy stays the outer loop
(:class:`ccsim.packet.PacketEngine`), for processes of a user's own.
"""

from __future__ import annotations

import heapq
import itertools
import math
from typing import Any, Callable


class Clock:
    """Simulation time (s) and the heap of events due at later times.

    Attributes:
        now: the time of the event being handled (s).
        heap: ``(time, id, fn, payload)`` tuples; ``fn(payload)`` is called at
            ``time``.
        next_id: returns the next event id (ties at one time run in id order).
    """

    __slots__ = ("now", "heap", "next_id")

    def __init__(self) -> None:
        self.now = 0.0
        self.heap: list[tuple[float, int, Callable, Any]] = []
        self.next_id = itertools.count().__next__

    def schedule(self, at: float, fn: Callable, payload: Any) -> None:
        """Call ``fn(payload)`` at time ``at`` (s, not before :attr:`now`)."""
        heapq.heappush(self.heap, (at, self.next_id(), fn, payload))

    def run(self, until: float) -> None:
        """Handle every event due before ``until`` (s), in time order; events
        scheduled meanwhile are handled too if due before ``until``. The
        clock is left at the last event's time.

        A mark is left on the heap at ``until`` (an event that does nothing):
        while the run lasts, the heap's first event is never later than the
        run's end, so code that asks whether anything happens before a time
        need only look at ``heap[0]`` (a NIC's departure, ``PacketEngine``)."""
        heap, pop = self.heap, heapq.heappop
        if until < math.inf:
            heapq.heappush(heap, (until, self.next_id(), _nothing, None))
        while heap and heap[0][0] < until:
            t, _, fn, payload = pop(heap)
            self.now = t
            fn(payload)

    def scheduled(self) -> int:
        """Events scheduled so far, handled or pending (this call takes an id
        of its own: harmless, ids only order ties)."""
        return self.next_id()


def _nothing(payload: Any) -> None:
    """The mark :meth:`Clock.run` leaves at its end."""
