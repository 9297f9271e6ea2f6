"""The sender's SACK scoreboard and RFC 6675's queries on it.

Source: E. Blanton, M. Allman, L. Wang, I. Jarvinen, M. Kojo, Y. Nishida,
"A Conservative Loss Recovery Algorithm Based on Selective Acknowledgment
(SACK) for TCP", RFC 6675, 2012, §3 (definitions) and §4 (IsLost, SetPipe,
NextSeg), with sequence numbers counted in segments.

The SACKed segments above the cumulative ACK are kept as sorted, disjoint
``[start, end)`` intervals, with their total kept as they change. Queries
find their blocks by bisection and walk only the blocks they cover (the
count of the whole flight is O(1)), never the window:

* IsLost(s) holds when at least DupThresh SACKed segments lie above ``s``
  (RFC 6675 §4, with whole segments "(DupThresh − 1)·SMSS bytes above" and
  "DupThresh discontiguous SACKed sequences" coincide); so the unSACKed
  segments below the DupThresh-th highest SACKed one are exactly the lost
  ones — :meth:`Scoreboard.lost_below`.
* SetPipe counts each unSACKed segment in ``[HighACK, HighData)`` once if it
  is not lost and once more if it is at or below HighRxt.
"""

from __future__ import annotations

import bisect

DUPTHRESH = 3
"""RFC 6675 §2: DupThresh, as RFC 5681's three duplicate ACKs."""

MANY_HOLES = 32
"""SACK blocks from which range counts go through a Fenwick tree (O(log W))
rather than a walk over the blocks: below it the walk is cheaper
(``benchmarks/many_holes.py``)."""


class _RingCounts:
    """SACKed segments per sequence number in a Fenwick tree (Fenwick, "A new
    data structure for cumulative frequency tables", 1994) over a ring of
    ``size`` slots: adding a segment and counting a range cost O(log size),
    whatever the holes. The ring holds any range shorter than ``size``; the
    scoreboard doubles it (:meth:`Scoreboard._fit`) before a range outgrows it."""

    __slots__ = ("size", "tree")

    def __init__(self, size: int) -> None:
        self.size = size
        self.tree = [0] * (size + 1)

    def add(self, start: int, end: int, delta: int) -> None:
        """Add ``delta`` to every segment in ``[start, end)``."""
        tree, n = self.tree, self.size
        for seq in range(start, end):
            i = seq % n + 1
            while i <= n:
                tree[i] += delta
                i += i & -i

    def _prefix(self, k: int) -> int:
        """Count in ring slots ``[0, k)``."""
        tree, total = self.tree, 0
        while k > 0:
            total += tree[k]
            k -= k & -k
        return total

    def count(self, start: int, end: int) -> int:
        """Count in ``[start, end)``, for ``0 < end − start < size``."""
        n = self.size
        a, b = start % n, end % n
        if a < b:
            return self._prefix(b) - self._prefix(a)
        return self._prefix(n) - self._prefix(a) + self._prefix(b)


class Scoreboard:
    """SACKed segments above the cumulative ACK.

    Attributes:
        blocks: sorted, disjoint ``[start, end)`` intervals of SACKed segments.
    """

    __slots__ = ("blocks", "_count", "_counts")

    def __init__(self) -> None:
        self.blocks: list[list[int]] = []
        self._count = 0  # SACKed segments in all, kept as blocks change
        # per-segment counts for range queries, kept only while there are many
        # holes (a walk over a few blocks costs less than keeping the tree)
        self._counts: _RingCounts | None = None

    def _fit(self) -> None:
        """Keep the per-segment counts while the blocks are many, in a ring that
        holds all of them (doubled and refilled from the blocks as needed)."""
        blocks = self.blocks
        if len(blocks) < MANY_HOLES:
            if not blocks:
                self._counts = None
            return
        span = blocks[-1][1] - blocks[0][0]
        counts = self._counts
        if counts is not None and span < counts.size:
            return
        size = counts.size if counts is not None else 1024
        while span >= size:
            size *= 2
        self._counts = counts = _RingCounts(size)
        for start, end in blocks:
            counts.add(start, end, 1)

    def update(self, una: int, sack_blocks: tuple[tuple[int, int], ...],
               new: list[tuple[int, int]] | None = None) -> tuple[int, int]:
        """Record an ACK's SACK blocks; drop what lies below ``una``.

        Returns ``(newly_sacked, released)``: segments SACKed for the first
        time, and previously SACKed segments now covered by the cumulative ACK.
        If ``new`` is a list, the ``[start, end)`` ranges SACKed for the first
        time are appended to it.
        """
        newly = 0
        counts = self._counts
        added: list[tuple[int, int]] | None = [] if counts is not None else new
        for start, end in sack_blocks:
            if start < una:
                start = una
            if end > start:
                newly += self._add(start, end, added)
        released = 0
        blocks = self.blocks
        if blocks and blocks[0][0] < una:
            gone = 0
            while gone < len(blocks) and blocks[gone][0] < una:
                first = blocks[gone]
                if first[1] <= una:
                    released += first[1] - first[0]
                    if counts is not None:
                        counts.add(first[0], first[1], -1)
                    gone += 1
                else:
                    released += una - first[0]
                    if counts is not None:
                        counts.add(first[0], una, -1)
                    first[0] = una
                    break
            del blocks[:gone]
        self._count += newly - released
        if counts is not None:
            if blocks and blocks[-1][1] - blocks[0][0] < counts.size:
                for start, end in added:
                    counts.add(start, end, 1)
            else:
                self._counts = None  # outgrown, or empty: rebuilt by _fit if need be
            if new is not None:
                new.extend(added)
            self._fit()
        elif len(blocks) >= MANY_HOLES:
            self._fit()
        return newly, released

    def _add(self, start: int, end: int, new: list[tuple[int, int]] | None) -> int:
        """Merge ``[start, end)`` in; return how many segments were new (and
        append their ranges to ``new`` if it is a list)."""
        blocks = self.blocks
        i = bisect.bisect_left(blocks, [start, start])
        if i > 0 and blocks[i - 1][1] >= start:
            i -= 1
        j = i
        covered = 0
        lo, hi = start, end
        gap = start  # first segment of [start, end) not yet known covered
        while j < len(blocks) and blocks[j][0] <= end:
            b = blocks[j]
            covered += max(0, min(b[1], end) - max(b[0], start))
            if new is not None and b[0] > gap:
                new.append((gap, min(b[0], end)))
            gap = max(gap, b[1])
            lo, hi = min(lo, b[0]), max(hi, b[1])
            j += 1
        if new is not None and gap < end:
            new.append((gap, end))
        blocks[i:j] = [[lo, hi]]
        return (end - start) - covered

    # -- queries -----------------------------------------------------------------
    def is_sacked(self, seq: int) -> bool:
        """Whether segment ``seq`` has been SACKed."""
        blocks = self.blocks
        i = bisect.bisect_right(blocks, [seq, float("inf")]) - 1
        return i >= 0 and blocks[i][0] <= seq < blocks[i][1]

    def sacked_run_end(self, seq: int) -> int:
        """One past the SACKed run holding ``seq``; ``seq`` itself if unSACKed."""
        blocks = self.blocks
        i = bisect.bisect_right(blocks, [seq, float("inf")]) - 1
        return blocks[i][1] if i >= 0 and blocks[i][0] <= seq < blocks[i][1] else seq

    def sacked_in(self, start: int, end: int) -> int:
        """SACKed segments in ``[start, end)``: the whole count when the range
        holds every block (the usual ``[HighACK, HighData)``), else a walk of
        only the blocks that overlap it, found by bisection."""
        blocks = self.blocks
        if not blocks:
            return 0
        low, high = blocks[0][0], blocks[-1][1]
        if start <= low and end >= high:
            return self._count
        start, end = max(start, low), min(end, high)
        if end <= start:
            return 0
        if self._counts is not None:
            return self._counts.count(start, end)
        i = bisect.bisect_right(blocks, [start, float("inf")]) - 1
        if i < 0 or blocks[i][1] <= start:
            i += 1
        total = 0
        while i < len(blocks) and blocks[i][0] < end:
            b = blocks[i]
            total += min(b[1], end) - max(b[0], start)
            i += 1
        return total

    @property
    def count(self) -> int:
        """SACKed segments in all."""
        return self._count

    @property
    def highest(self) -> int | None:
        """One past the highest SACKed segment (FACK's ``snd.fack``), or None."""
        return self.blocks[-1][1] if self.blocks else None

    def lost_below(self) -> int:
        """The segment below which every unSACKed segment IsLost (RFC 6675 §4):
        the DupThresh-th highest SACKed segment; -1 when fewer are SACKed."""
        need = DUPTHRESH
        for start, end in reversed(self.blocks):
            n = end - start
            if n >= need:
                return end - need
            need -= n
        return -1

    def is_lost(self, seq: int) -> bool:
        """RFC 6675 IsLost(seq), for an unSACKed ``seq``."""
        return seq < self.lost_below()

    def pipe(self, una: int, high_data: int, high_rxt: int) -> int:
        """RFC 6675 SetPipe: segments estimated in flight.

        Args:
            una: HighACK, the first unacknowledged segment.
            high_data: one past the highest segment sent.
            high_rxt: the highest segment retransmitted in this recovery, or
                ``una - 1`` if none.
        """
        lost = self.lost_below()
        not_lost = self._unsacked(max(una, lost), high_data)
        resent = self._unsacked(una, min(high_rxt + 1, high_data))
        return not_lost + resent

    def _unsacked(self, start: int, end: int) -> int:
        return max(0, end - start - self.sacked_in(start, end)) if end > start else 0

    def first_hole(self, start: int, end: int) -> int | None:
        """The lowest unSACKed segment in ``[start, end)``, or None."""
        seq = self.sacked_run_end(start)  # blocks are disjoint and not adjacent
        return seq if seq < end else None

    def last_hole(self, start: int, end: int) -> int | None:
        """The highest unSACKed segment in ``[start, end)``, or None."""
        blocks = self.blocks
        seq = end - 1
        i = bisect.bisect_right(blocks, [seq, float("inf")]) - 1
        if i >= 0 and blocks[i][0] <= seq < blocks[i][1]:
            seq = blocks[i][0] - 1  # blocks are disjoint and not adjacent
        return seq if seq >= start else None
