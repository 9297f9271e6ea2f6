"""Per-bin counts of the trace interval, kept in time order at little cost
per event.

A link counts the packets it transmits in each trace bin (for utilisation)
and a receiver the segments it delivers in order (for goodput). Both see
their events in time order — a FIFO link's departures, a flow's arrivals
over a chain of FIFO links — so only the current bin's count can change: it
is kept in one accumulator, ``in_bin``, and written to its bin when a later
bin begins (or the counts are read). Per event, a multiplication and a
comparison; the additions are those of adding to the bin each time, in the
same order, so the sums are the same bit for bit.
"""

from __future__ import annotations

import math


class TimeBins:
    """Counts per bin of ``width`` seconds, of events arriving in time order.

    The owner counts an event at time ``t`` inline::

        x = t * bins.rate
        if x < bins.bin_next:     # in the current bin
            bins.in_bin += count
        else:
            bins.count(x, count)

    Attributes:
        rate: bins per second (1 / width).
        bin_next: where the current bin ends, in bins (its index + 1).
        in_bin: the current bin's count so far.
    """

    __slots__ = ("bins", "current", "bin_next", "in_bin", "rate")

    def __init__(self, n_bins: int, width: float) -> None:
        self.bins: list[float] = [0] * n_bins
        self.rate = 1.0 / width
        self.current, self.bin_next, self.in_bin = 0, 1.0, 0

    def close(self) -> None:
        """Write the current bin's count to it."""
        if self.current >= 0:
            self.bins[self.current] = self.in_bin

    def open(self, x: float) -> None:
        """Make the bin holding ``x`` (in bins, at or after the current one)
        the current one, with what it holds already; past the last bin,
        counts go nowhere."""
        b = int(x)
        if b < len(self.bins):
            self.current, self.bin_next, self.in_bin = b, b + 1.0, self.bins[b]
        else:
            self.current, self.bin_next, self.in_bin = -1, math.inf, 0

    def count(self, x: float, n: float) -> None:
        """``n`` events at ``x`` (in bins), past the current bin (the owner
        has tested ``x < bin_next``)."""
        self.close()
        self.open(x)
        self.in_bin += n

    def at(self, t: float, n: float) -> None:
        """``n`` events at time ``t`` (s): the test and the count, for
        callers off the hot path."""
        x = t * self.rate
        if x < self.bin_next:
            self.in_bin += n
        else:
            self.count(x, n)

    def per_bin(self, n: int) -> list[float]:
        """The counts of the first ``n`` bins."""
        self.close()
        return self.bins[:n]
