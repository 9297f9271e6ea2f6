"""A link with its egress queue: drop-tail or RED, then serialisation and
propagation, then random link errors.

Packets of one run all have the same size on the wire (``mss + header``
bytes), so serialisation takes a fixed ``tx`` seconds and a FIFO queue is
fully described by the departure times of the packets it holds. A link is
told about arrivals in time order and answers at once when the packet leaves
the far end (or that it was dropped); the queue's contents at any later time
follow from the departure times, so the link needs no events of its own.
"""

from __future__ import annotations

import random
from collections import deque

from ..scenario import RED, Link


class LinkState:
    """Run-time state of one :class:`~ccsim.scenario.Link`.

    Attributes:
        tx: time to serialise one data packet (s).
        delay: propagation delay (s).
        limit: buffer, in packets waiting (the one in service not counted).
        drops: packets dropped by the queue (overflow or RED).
        losses: packets lost to random link errors.
        departures_per_bin: packets transmitted in each trace bin (for
            utilisation), a packet whose transmission straddles bins shared
            between them by time.
    """

    __slots__ = ("tx", "delay", "limit", "loss", "free_at", "queue", "red", "avg",
                 "count", "drops", "losses", "loss_rng", "red_rng", "departures_per_bin",
                 "n_bins", "bin_rate", "arrivals", "last_drop_early")

    def __init__(self, link: Link, packet_size: int, seeds: tuple[int, int],
                 n_bins: int, bin_width: float) -> None:
        self.tx = packet_size * 8.0 / link.rate  # bits per packet / bit/s
        self.delay = link.delay
        self.limit = link.queue.packets(packet_size)
        self.loss = link.loss
        self.red = link.queue if isinstance(link.queue, RED) else None
        self.free_at = 0.0          # when the last accepted packet finishes (s)
        self.queue: deque[float] = deque()    # departure times, oldest first (s)
        self.arrivals: deque[float] = deque()  # arrival times, same order (s)
        self.avg = 0.0              # RED's average queue (packets)
        self.count = -1             # RED: packets since the last drop
        self.drops = 0
        self.losses = 0
        self.last_drop_early = False  # the latest queue drop was RED's early one
        self.loss_rng = random.Random(seeds[0])
        self.red_rng = random.Random(seeds[1])
        self.departures_per_bin = [0] * (n_bins + 1)
        self.n_bins = n_bins + 1
        self.bin_rate = 1.0 / bin_width

    def forward(self, t: float) -> float:
        """A data packet arrives at time ``t`` (s; non-decreasing over calls).

        Returns the time it arrives at the far end of the link (s), or ``-1.0``
        if the queue dropped it or a link error lost it.
        """
        queue, arrivals = self.queue, self.arrivals
        while queue and queue[0] <= t:
            queue.popleft()
            arrivals.popleft()
        waiting = len(queue) - 1 if queue else 0  # the head is in service
        if self.red is not None and self._red_drops(t, waiting, bool(queue)):
            self.drops += 1
            self.last_drop_early = True
            return -1.0
        if waiting >= self.limit and queue:
            self.drops += 1
            self.last_drop_early = False
            return -1.0
        start = self.free_at
        if start < t:
            start = t
        self.free_at = done = start + self.tx
        queue.append(done)
        arrivals.append(t)
        rate = self.bin_rate
        b = int(done * rate)
        if b < self.n_bins:
            if start * rate >= b:  # started in the same bin (int() of it is b)
                self.departures_per_bin[b] += 1
            else:  # the transmission straddles bins: each gets its share of it
                self._spread(start, done)
        if self.loss and self.loss_rng.random() < self.loss:
            self.losses += 1
            return -1.0
        return done + self.delay

    def _spread(self, start: float, done: float) -> None:
        """Credit each bin with the fraction of one packet's transmission,
        ``[start, done)``, that falls in it, so that no bin holds more than
        the link can send in it (utilisation over any interval is at most 1)."""
        bins, rate = self.departures_per_bin, self.bin_rate
        k = int(start * rate)
        while k < len(bins) and k / rate < done:
            lo, hi = max(start, k / rate), min(done, (k + 1) / rate)
            bins[k] += (hi - lo) / self.tx
            k += 1

    def backlog(self, t: float) -> int:
        """Packets waiting at time ``t`` (not counting the one in service).

        ``t`` may precede arrivals already handed to :meth:`forward` (links
        downstream of the first learn of packets ahead of time); those are not
        counted.
        """
        queue, arrivals = self.queue, self.arrivals
        while queue and queue[0] <= t:
            queue.popleft()
            arrivals.popleft()
        present = len(queue)
        i = present - 1
        while i >= 0 and arrivals[i] > t:
            present -= 1
            i -= 1
        return present - 1 if present > 0 else 0

    def _red_drops(self, t: float, waiting: int, busy: bool) -> bool:
        """RED's early-drop decision for an arrival at ``t`` (Floyd & Jacobson
        1993, Fig. 2), updating the average queue and the count."""
        red = self.red
        w = red.weight
        if busy:
            self.avg += w * (waiting - self.avg)
        else:  # idle since free_at: decay as if m empty-queue packets had passed
            m = (t - self.free_at) / self.tx
            self.avg *= (1.0 - w) ** m if m > 0 else (1.0 - w)
        avg = self.avg
        if avg < red.min_th:
            self.count = -1
            return False
        if avg < red.max_th:
            p_b = red.max_p * (avg - red.min_th) / (red.max_th - red.min_th)
        elif red.gentle and avg < 2.0 * red.max_th:
            p_b = red.max_p + (1.0 - red.max_p) * (avg - red.max_th) / red.max_th
        else:
            self.count = 0
            return True
        self.count += 1
        denom = 1.0 - self.count * p_b
        if denom <= 0.0 or self.red_rng.random() < p_b / denom:
            self.count = 0
            return True
        return False
