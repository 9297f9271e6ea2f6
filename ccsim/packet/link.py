"""A link with its egress queue, then serialisation and propagation, then
random link errors.

Packets of one run all have the same size on the wire (``mss + header``
bytes), so serialisation takes a fixed ``tx`` seconds and a FIFO queue is
fully described by the departure times of the packets it holds. A link is
told about arrivals in time order and answers at once when the packet leaves
the far end (or that it was dropped); the queue's contents at any later time
follow from the departure times, so the link needs no events of its own.

The queue: drop-tail runs inline (:meth:`LinkState._droptail`, the fast
path); any other discipline (:mod:`ccsim.queues`) is asked about each arrival
through its run-time object's ``arrive(t, waiting, ect)``, and may enqueue,
drop or mark the packet (:meth:`LinkState._disciplined`). ``forward`` is
whichever of the two applies; ``forward_ect`` the same for packets of
ECN-capable flows, after which ``ce`` tells whether this link marked it.

With traffic both ways (:attr:`ccsim.scenario.Scenario.two_way`), ACKs cross
the links as packets of ``header`` bytes: :meth:`LinkState.ack` queues one
FIFO with the data, serialised in ``ack_tx``, so a queue's departure times
describe it still. Queue limits count packets (ns-2's default), an ACK as one;
ACKs are not subject to random link errors (``loss`` is a data-packet loss,
as in the one-way case) and are not counted in ``departures`` (data).
The data paths above are untouched by it.

A link whose rate changes (:attr:`ccsim.scenario.Link.schedule`: steps or a
Mahimahi trace) asks its schedule's wire (:meth:`RateSchedule.wire`) when
each packet goes out (:meth:`LinkState._wired`), the queue described by
departure times as before; a fixed-rate link never does. A link with
``jitter`` delays each data packet that leaves it by a uniform random time
in ``[0, jitter]``, no packet overtaking the one before (:meth:`LinkState.jitter`).
"""

from __future__ import annotations

import random
from collections import deque
from typing import Callable

from ..queues import DROP, MARK, DropTail
from ..scenario import Link
from .bins import TimeBins


class LinkState:
    """Run-time state of one :class:`~ccsim.scenario.Link`.

    Attributes:
        tx: time to serialise one data packet (s).
        delay: propagation delay (s).
        limit: buffer, in packets waiting (the one in service not counted).
        drops: packets dropped by the queue (overflow or its discipline).
        marks: packets the queue marked CE (RFC 3168).
        ce: whether the packet last handed to :meth:`forward_ect` was marked here.
        losses: packets lost to random link errors.
        ack_tx: time to serialise one ACK (s; ``header`` bytes).
        ack_drops: ACKs dropped by the queue (traffic both ways only).
        departures: packets transmitted in each trace bin (for utilisation;
            ``departures.per_bin(n)``), a packet whose transmission straddles
            bins shared between them by time.
    """

    __slots__ = ("tx", "delay", "limit", "loss", "free_at", "queue", "discipline", "drops",
                 "losses", "loss_rng", "departures", "arrivals",
                 "forward", "forward_ect", "ce", "marks", "last_drop_early", "kind", "gone",
                 "ack_tx", "ack_drops", "wire", "size", "ack_size", "schedule")

    def __init__(self, link: Link, packet_size: int, seeds: tuple[int, int],
                 n_bins: int, bin_width: float, ack_size: int = 0,
                 jitter_seed: int = 0) -> None:
        self.tx = packet_size * 8.0 / link.rate  # bits per packet / bit/s
        self.ack_tx = ack_size * 8.0 / link.rate
        self.ack_drops = 0
        self.delay = link.delay
        self.limit = link.queue.packets(packet_size)
        self.loss = link.loss
        self.free_at = 0.0          # when the last accepted packet finishes (s)
        self.queue: deque[float] = deque()    # departure times, oldest first (s)
        self.arrivals: deque[float] | None = None  # their arrival times (s): see told_ahead
        self.gone: deque[tuple[float, float]] | None = None  # see told_ahead
        self.drops = self.marks = 0
        self.losses = 0
        self.ce = False
        self.last_drop_early = False  # the latest queue drop was the discipline's, not overflow
        self.kind = link.queue.kind   # the discipline's name, for the event trace
        self.loss_rng = random.Random(seeds[0])
        self.departures = TimeBins(n_bins + 1, bin_width)
        if type(link.queue) is DropTail:  # the fast path: no discipline object on the way
            self.discipline = None
            self.forward = self.forward_ect = self._droptail
        else:  # the discipline draws from the link's second seeded generator
            self.discipline = link.queue.start(self, random.Random(seeds[1]))
            self.forward = self._disciplined
            self.forward_ect = self._disciplined_ect
        self.size, self.ack_size = packet_size, ack_size
        self.schedule = link.schedule
        self.wire = None
        if link.schedule is not None:  # a rate that changes: its wire says when packets leave
            self.wire = link.schedule.wire()
            self.forward, self.forward_ect = self._wired, self._wired_ect
        if link.jitter > 0.0:
            self.jitter(link.jitter, random.Random(jitter_seed).random)

    def _droptail(self, t: float) -> float:
        """A data packet arrives at time ``t`` (s; non-decreasing over calls).

        Returns the time it arrives at the far end of the link (s), or ``-1.0``
        if the queue dropped it or a link error lost it.
        """
        queue = self.queue
        while queue and queue[0] <= t:
            queue.popleft()
        if len(queue) > self.limit:  # full: limit waiting, and the head in service
            self.drops += 1
            self.last_drop_early = False
            return -1.0
        start = self.free_at
        if start < t:
            start = t
        self.free_at = done = start + self.tx
        queue.append(done)
        departures = self.departures
        if done * departures.rate < departures.bin_next:  # in the current trace bin
            departures.in_bin += 1
        else:
            self._departure(start, done)
        if self.loss and self.loss_rng.random() < self.loss:
            self.losses += 1
            return -1.0
        return done + self.delay

    def _admitted(self, t: float, ect: bool) -> bool:
        """Whether a data packet arriving at ``t`` (s) joins the queue: the
        discipline's verdict (drop-tail's without one), drops counted and a
        mark set in ``ce``. :meth:`_droptail` is its drop-tail twin, inlined."""
        queue = self.queue
        while queue and queue[0] <= t:
            queue.popleft()
        if self.discipline is None:
            if len(queue) > self.limit:  # full: limit waiting, and the head in service
                self.drops += 1
                self.last_drop_early = False
                return False
            return True
        waiting = len(queue) - 1 if queue else 0
        verdict = self.discipline.arrive(t, waiting, ect)
        if verdict == DROP:
            self.drops += 1
            self.last_drop_early = not (waiting >= self.limit and self.free_at > t)
            return False
        if verdict == MARK:
            if not ect:
                raise TypeError(f"queue discipline {type(self.discipline).__name__} marked "
                                "a packet of a flow that is not ECN-capable; it must drop it")
            self.marks += 1
            self.ce = True
        return True

    def _sent(self, done: float) -> float:
        """A packet that left the link at ``done`` (s): when it reaches the far
        end (s), or ``-1.0`` if a link error lost it."""
        if self.loss and self.loss_rng.random() < self.loss:
            self.losses += 1
            return -1.0
        return done + self.delay

    def _disciplined(self, t: float, ect: bool = False) -> float:
        """As :meth:`_droptail`, with the discipline's verdict on the arrival."""
        if not self._admitted(t, ect):
            return -1.0
        start = self.free_at if self.free_at > t else t
        done = start + self.tx
        self.free_at = done
        self.queue.append(done)
        departures = self.departures
        if done * departures.rate < departures.bin_next:
            departures.in_bin += 1
        else:
            self._departure(start, done)
        return self._sent(done)

    def _disciplined_ect(self, t: float) -> float:
        """:meth:`_disciplined` for a packet of an ECN-capable flow; ``ce``
        says whether it was marked here."""
        self.ce = False
        return self._disciplined(t, True)

    def _wired(self, t: float, ect: bool = False) -> float:
        """As :meth:`_disciplined` (or :meth:`_droptail`), the packet leaving
        when the schedule's wire has sent it."""
        if not self._admitted(t, ect):
            return -1.0
        self.free_at = done = self.wire.send(t, self.size)
        self.queue.append(done)
        self.departures.at(done, 1)  # a packet goes out at once at its opportunity's time
        return self._sent(done)

    def _wired_ect(self, t: float) -> float:
        """:meth:`_wired` for a packet of an ECN-capable flow."""
        self.ce = False
        return self._wired(t, True)

    def jitter(self, bound: float, uniform: Callable[[], float]) -> None:
        """Delay each data packet leaving the link by ``bound · uniform()``
        (s) more, no later packet reaching the far end before an earlier one
        (Arun et al., SIGCOMM 2022: non-congestive delay)."""
        last = -1.0

        def jittered(forward: Callable[..., float]) -> Callable[..., float]:
            def forward_jittered(t: float) -> float:
                nonlocal last
                arrival = forward(t)
                if arrival < 0.0:
                    return arrival
                arrival += bound * uniform()
                if arrival < last:
                    arrival = last
                last = arrival
                return arrival
            return forward_jittered
        self.forward, self.forward_ect = jittered(self.forward), jittered(self.forward_ect)

    def ack(self, t: float) -> float:
        """An ACK arrives at time ``t`` (s; non-decreasing over calls, data
        packets' included): queued FIFO with the data, ``ack_tx`` on the wire.

        Returns its time at the far end of the link (s), or ``-1.0`` if the
        queue dropped it (overflow, or the discipline's verdict: an ACK is
        not ECN-capable, RFC 3168 §6.1.4)."""
        queue = self.queue
        while queue and queue[0] <= t:
            queue.popleft()
        waiting = len(queue) - 1 if queue else 0
        if self.discipline is None:
            if waiting >= self.limit and queue:
                self.ack_drops += 1
                self.last_drop_early = False
                return -1.0
        elif self.discipline.arrive(t, waiting, False) == DROP:
            self.ack_drops += 1
            self.last_drop_early = not (waiting >= self.limit and self.free_at > t)
            return -1.0
        if self.wire is not None:
            self.free_at = done = self.wire.send(t, self.ack_size)
        else:
            start = self.free_at if self.free_at > t else t
            self.free_at = done = start + self.ack_tx
        queue.append(done)
        return done + self.delay

    def _departure(self, start: float, done: float) -> None:
        """Count a transmission, ``[start, done)``, that ends past the current
        trace bin: in its bin, or, if it straddles bins, a share in each, the
        fraction of it that falls there, so that no bin holds more than the
        link can send in it (utilisation over any interval is at most 1)."""
        departures = self.departures
        rate = departures.rate
        x = done * rate
        b = int(x)
        if start * rate >= b or b >= len(departures.bins):  # within its bin, or past the last
            departures.count(x, 1)
            return
        departures.close()
        bins = departures.bins
        k = int(start * rate)
        while k < len(bins) and k / rate < done:
            lo, hi = max(start, k / rate), min(done, (k + 1) / rate)
            bins[k] += (hi - lo) / self.tx
            k += 1
        departures.open(x)

    def told_ahead(self) -> None:
        """This link will be told of packets before they arrive (a link
        downstream of the first, when the engine computes a packet's passage
        through the whole chain as it enters the first). :meth:`backlog` then
        needs the arrival time of each packet queued (``arrivals``, in queue
        order), and the departures that a later arrival passes (``gone``,
        departure and arrival times) until it has seen the times they were
        still queued at. A link told of packets as they arrive needs neither:
        every packet it holds has arrived."""
        self.gone = gone = deque()
        self.arrivals = arrivals = deque()
        queue, forward, forward_ect = self.queue, self.forward, self.forward_ect

        def depart(t: float) -> None:
            while queue and queue[0] <= t:
                gone.append((queue.popleft(), arrivals.popleft()))

        def ahead(forward: Callable[[float], float]) -> Callable[[float], float]:
            def forward_ahead(t: float) -> float:
                depart(t)
                held = len(queue)
                arrival = forward(t)
                if len(queue) > held:  # queued (a link error may lose it after)
                    arrivals.append(t)
                return arrival
            return forward_ahead
        self.forward, self.forward_ect = ahead(forward), ahead(forward_ect)

    def backlog(self, t: float) -> int:
        """Packets waiting at time ``t`` (not counting the one in service).

        ``t`` may precede arrivals already handed to :meth:`forward` (links
        downstream of the first learn of packets ahead of time); those are not
        counted, and those they pushed out of the queue while still there at
        ``t`` are (``gone``: :meth:`told_ahead`). Times ``t`` of successive
        calls do not decrease.
        """
        queue, arrivals, gone = self.queue, self.arrivals, self.gone
        if gone is None:  # told of packets as they arrive: all have arrived by t
            while queue and queue[0] <= t:
                queue.popleft()
            return len(queue) - 1 if queue else 0
        while gone and gone[0][0] <= t:
            gone.popleft()
        earlier = 0
        for _, arrived in gone:  # departure order is arrival order
            if arrived > t:
                break
            earlier += 1
        while queue and queue[0] <= t:
            queue.popleft()
            arrivals.popleft()
        present = len(queue)
        i = present - 1
        while i >= 0 and arrivals[i] > t:
            present -= 1
            i -= 1
        present += earlier
        return present - 1 if present > 0 else 0
