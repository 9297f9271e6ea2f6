"""A link whose queue is a scheduler (:mod:`ccsim.queues.scheduler`):
packets held in real queues, the next one picked when the wire is free.

Unlike a FIFO link (:mod:`ccsim.packet.link`), this one cannot tell a packet
its departure time at arrival: the scheduler picks among the queued packets
at each dequeue, and packets yet to arrive may go first. So the link has an
event of its own per packet, on the engine's clock: when a transmission
ends, it asks the scheduler for the next packet (``dequeue``) at that time;
an arrival to an idle link is dequeued at once. A packet that leaves is
handed back to the engine through its ``done(packet, arrival)`` with its
time at the far end (serialisation, propagation) or ``-1.0`` when the
scheduler dropped it or a random link error lost it. The engine passes
packets hop by hop when any link is scheduled.

It offers what the engine and results read of a link: ``tx``, ``ack_tx``,
``delay``, ``limit``, ``drops``, ``marks``, ``losses``, ``ack_drops``,
``departures``, ``kind``, ``backlog(t)``, and ``reason`` (why the latest
packet was dropped: ``"overflow"``, the discipline's kind, or ``"error"``).
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

from .bins import TimeBins
from .clock import Clock
from .link import LinkState

if TYPE_CHECKING:
    from ..queues.scheduler import Packet


class ScheduledLink:
    """Run-time state of a link with a scheduler.

    Attributes:
        tx, ack_tx: time to serialise a data packet, an ACK (s).
        delay: propagation delay (s).
        limit: the scheduler's buffer (packets).
        mtu: a data packet's size on the wire (bytes).
        free_at: when the packet on the wire finishes (s).
        busy: a packet is on the wire.
        state: the scheduler's run-time state.
    """

    __slots__ = ("tx", "ack_tx", "delay", "limit", "mtu", "loss", "loss_rng", "free_at", "busy",
                 "clock", "state", "drops", "marks", "losses", "ack_drops", "departures", "kind",
                 "reason")

    def __init__(self, link, packet_size: int, seeds: tuple[int, int], n_bins: int,
                 bin_width: float, ack_size: int, clock: Clock) -> None:
        self.tx = packet_size * 8.0 / link.rate
        self.ack_tx = ack_size * 8.0 / link.rate
        self.delay = link.delay
        self.limit = link.queue.packets(packet_size)
        self.mtu = packet_size
        self.loss = link.loss
        self.loss_rng = random.Random(seeds[0])
        self.free_at = 0.0
        self.busy = False
        self.clock = clock
        self.drops = self.marks = self.losses = self.ack_drops = 0
        self.departures = TimeBins(n_bins + 1, bin_width)
        self.kind = link.queue.kind
        self.reason = "overflow"
        self.state = link.queue.start(self, random.Random(seeds[1]))

    def enqueue(self, t: float, packet: "Packet") -> None:
        """``packet`` arrives at ``t`` (s, the clock's time)."""
        self.state.enqueue(t, packet)
        if not self.busy:
            self._send(t)

    def _send(self, t: float) -> None:
        """The wire is free at ``t``: put the scheduler's next packet on it."""
        packet = self.state.dequeue(t)
        if packet is None:
            self.busy = False
            return
        self.busy = True
        if packet.data:
            self.free_at = done = t + self.tx
            departures = self.departures
            if done * departures.rate < departures.bin_next:
                departures.in_bin += 1
            else:
                LinkState._departure(self, t, done)  # the same bin accounting as a FIFO link
        else:
            self.free_at = done = t + self.ack_tx
        self.clock.schedule(done, self._send, done)
        if packet.data and self.loss and self.loss_rng.random() < self.loss:
            self.losses += 1
            self.reason = "error"
            packet.done(packet, -1.0)
            return
        packet.done(packet, done + self.delay)

    def dropped(self, packet: "Packet", reason: str) -> None:
        """The scheduler discarded ``packet`` (see :meth:`SchedulerState.drop`)."""
        if packet.data:
            self.drops += 1
        else:
            self.ack_drops += 1
        self.reason = reason
        packet.done(packet, -1.0)

    def backlog(self, t: float) -> int:
        """Packets waiting (the one on the wire not counted); ``t`` is the
        clock's time, and every arrival until then has been enqueued."""
        return self.state.qlen
