"""RACK: loss detection by transmission order (RFC 8985), as Linux runs it.

Sources: Y. Cheng, N. Cardwell, N. Dukkipati, P. Jha, "The RACK-TLP Loss
Detection Algorithm for TCP", RFC 8985, 2021, §6.2 (marking losses); Linux
``net/ipv4/tcp_recovery.c`` and ``tcp_packets_in_flight`` in
``include/net/tcp.h`` (6.x) for how marked segments are then counted.

A segment is lost once a segment *sent after it* has been delivered
(cumulatively acknowledged or SACKed) and the reordering window has passed.
The rule is about transmissions, not sequence numbers, so it also finds a
retransmission lost a second time, which RFC 6675's IsLost cannot: without
it, only the retransmission timer, backed off, finds such a loss.

Marked segments wait in :attr:`Rack.lost` until they are sent again, and
``pipe`` (the segments in flight) is Linux's ``packets_out − sacked_out −
lost_out + retrans_out``: the unSACKed outstanding segments less those marked
lost and not resent since.

Differences from the source:

* ccsim's paths are FIFO, so segments are never reordered and the
  reordering window is 0: what Linux uses in recovery while it has seen no
  reordering (``tcp_rack_reo_wnd``). Recovery still starts on DupThresh
  SACKed segments, Linux's own threshold while it has seen no reordering;
  marks made before that wait for it — unless the sender runs tail loss
  probes (``tail_loss_probe``; the probe itself, RFC 8985 §7, is the
  sender's), when they start one after the reordering timer (§6.3) of
  ``min_rtt / 4``, the window Linux uses outside recovery.
* "Sent after" compares transmission counts, not timestamps: ccsim sends a
  burst's segments at one instant.
* A delivery of a retransmitted segment that comes less than ``min_rtt``
  after the retransmission is taken to be of the earlier copy and dates
  nothing (§6.2 step 2, without timestamps). Times compare to a microsecond,
  as Linux's do: a resend that took exactly ``min_rtt`` (an empty queue) is
  not "sooner" because of a rounding error.
"""

from __future__ import annotations

import bisect
from collections import deque
from typing import TYPE_CHECKING

_US = 1e-6  # Linux's clock resolution for these comparisons (s)

if TYPE_CHECKING:
    from .scoreboard import Scoreboard


class Rack:
    """Transmission-ordered loss marks for one sender (segments count
    sequence space): a :class:`~ccsim.recovery.base.LossDetector`.

    Attributes:
        queue: ``(transmission index, segment)`` of transmissions not yet
            judged, in the order they were sent.
        latest: transmission index of the most recently sent segment known
            delivered (RFC 8985's ``RACK.xmit_ts``); -1 before any.
        lost: segments marked lost and not sent again since, ascending.
    """

    __slots__ = ("queue", "latest", "lost", "marked")

    def __init__(self) -> None:
        self.queue: deque[tuple[int, int]] = deque()
        self.latest = -1
        self.lost: list[int] = []
        self.marked = 0  # segments ever marked lost by RACK (PRR tells newly lost by it)

    def on_sent(self, index: int, seq: int) -> None:
        """Segment ``seq`` went out as transmission number ``index``; if it was
        marked lost, it no longer waits."""
        self.queue.append((index, seq))
        lost = self.lost
        if lost:
            if lost[0] == seq:
                del lost[0]
            else:
                i = bisect.bisect_left(lost, seq)
                if i < len(lost) and lost[i] == seq:
                    del lost[i]

    def on_ack(self, sent: dict, una: int, ackno: int, new: list[tuple[int, int]],
               board: "Scoreboard", now: float, min_rtt: float) -> bool:
        """An ACK moved the cumulative ACK from ``una`` to ``ackno`` and SACKed
        the ``new`` ranges for the first time: date its deliveries, mark what
        they show lost, unmark what arrived. Returns whether a retransmission
        was found lost.

        ``sent[seq]`` is the segment's latest transmission: ``[0]`` its time
        (s), ``[1]`` whether it was a retransmission, ``[4]`` its index.
        """
        latest = self.latest
        if ackno == una + 1 and not new:  # the usual ACK: one segment, nothing SACKed
            record = sent[una]
            # §6.2 step 2: a resend delivered sooner than min_rtt is not what arrived
            if record[4] > latest and not (record[1] and now - record[0] < min_rtt - _US):
                latest = record[4]
        else:
            for start, end in ((una, ackno), *new):
                for seq in range(start, end):
                    record = sent[seq]
                    if record[4] > latest and not (record[1] and now - record[0] < min_rtt - _US):
                        latest = record[4]
        self.latest = latest
        if ackno > una:
            una = ackno
        queue = self.queue
        while queue and queue[0][0] < latest and queue[0][1] < una:
            queue.popleft()  # acknowledged: nothing to judge (the usual case)
        lost_retransmission = False
        if queue and queue[0][0] < latest:
            lost_retransmission = self.mark(sent, board, una)
        if self.lost:
            self.forget(una, new)
        return lost_retransmission

    def mark(self, sent: dict, board: "Scoreboard", una: int) -> bool:
        """Mark every outstanding, unSACKed segment sent before ``latest`` lost;
        return whether one of them was a retransmission."""
        queue, latest, lost = self.queue, self.latest, self.lost
        lost_retransmission = False
        while queue and queue[0][0] < latest:
            index, seq = queue.popleft()
            if seq >= una:
                record = sent.get(seq)
                if record is not None and record[4] == index and not board.is_sacked(seq):
                    bisect.insort(lost, seq)
                    self.marked += 1
                    lost_retransmission = lost_retransmission or record[1]
        return lost_retransmission

    def forget(self, una: int, new_ranges: list[tuple[int, int]]) -> None:
        """Unmark segments now acknowledged or SACKed (after a timeout every
        outstanding segment is marked, and some of them were still in flight)."""
        lost = self.lost
        if not lost:
            return
        if lost[0] < una:
            del lost[:bisect.bisect_left(lost, una)]
        for start, end in new_ranges:
            del lost[bisect.bisect_left(lost, start):bisect.bisect_left(lost, end)]

    def on_timeout(self, una: int, high: int, board: "Scoreboard") -> None:
        """At a timeout, every unSACKed outstanding segment is lost (Linux's
        ``tcp_timeout_mark_lost``)."""
        lost, seq = [], una
        for start, end in board.blocks:
            lost.extend(range(seq, start))
            seq = end
        lost.extend(range(seq, high))
        self.lost = lost
        self.queue.clear()

    def pipe(self, una: int, high: int, board: "Scoreboard") -> int:
        """Segments in flight: unSACKed in ``[una, high)`` less those marked lost."""
        return high - una - board.count - len(self.lost)

    def reordering_window(self, min_rtt: float) -> float:
        """RFC 8985 §6.2's ``RACK.reo_wnd`` outside recovery, as Linux sets it
        while it has seen no reordering: a quarter of the minimum RTT (s)."""
        return min_rtt / 4.0
