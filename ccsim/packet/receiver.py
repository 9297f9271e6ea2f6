"""The receiving end of a TCP flow in the packet engine.

Sequence numbers count segments; an ACK number is the next segment
expected. The receiver sends cumulative ACKs, SACK blocks (RFC 2018) and
D-SACK blocks (RFC 2883) when asked, echoes CE marks (RFC 3168, as a
count), and may delay ACKs (RFC 5681 §4.2), with Linux's quick-ACK mode.
"""

from __future__ import annotations

import bisect
import math
from heapq import heappush
from typing import TYPE_CHECKING, Callable

from .bins import TimeBins

if TYPE_CHECKING:
    from .clock import Clock

MAX_SACK_BLOCKS = 3
"""SACK blocks per ACK: what fits beside the timestamp option (RFC 2018 §3)."""
MAX_QUICKACKS = 16
"""ACKs of new data sent at once in quick-ACK mode: Linux's ``TCP_MAX_QUICKACKS``
(``tcp_incr_quickack`` takes ``min(rcv_wnd / (2·rcv_mss), 16)``, 16 for any
receive window of 32 segments or more)."""


class Receiver:
    """The receiving end of one flow.

    It is told of each data segment at the time the segment arrives (which may
    be ahead of the simulation clock: see :mod:`ccsim.packet.engine`) and
    schedules each ACK's arrival back at the sender.

    Attributes:
        rcv_nxt: next segment expected in order.
        deliveries: segments delivered in order in each trace bin
            (``deliveries.per_bin(n)``).
    """

    __slots__ = ("rcv_nxt", "ooo", "ends", "starts", "recent", "sack", "dsack", "delayed",
                 "ack_delay", "held", "held_until", "timer_at", "back", "clock", "heap", "next_id",
                 "deliver_ack", "deliveries", "ce", "deliver_ce", "quick", "quick_gap",
                 "last_data")

    def __init__(self, sack: bool, delayed_ack: bool, ack_delay: float, back: float,
                 clock: "Clock", deliver_ack: Callable | None, n_bins: int,
                 bin_width: float, dsack: bool = False, quick_gap: float | None = None) -> None:
        self.rcv_nxt = 0
        self.ooo: set[int] = set()        # segments held above rcv_nxt
        # SACK blocks [start, end) above rcv_nxt: ends by start, the starts sorted, and
        # the starts from least to most recently touched (RFC 2018 §4 reports the latter)
        self.ends: dict[int, int] = {}
        self.starts: list[int] = []
        self.recent: dict[int, None] = {}
        self.sack = sack
        self.dsack = dsack  # report a duplicate segment as a D-SACK block (RFC 2883)
        self.delayed = delayed_ack
        self.ack_delay = ack_delay         # longest an ACK is held (s)
        self.held = 0                      # in-order segments not yet acknowledged
        self.held_until = 0.0              # when the held ACK must go (s)
        self.timer_at: float | None = None  # the pending delayed-ACK timer event (s)
        self.back = back                   # ACK travel time back to the sender (s)
        self.clock = clock
        self.heap, self.next_id = clock.heap, clock.next_id  # where ACKs are scheduled
        self.deliver_ack = deliver_ack     # the sender's on_ack, set once both exist
        self.deliveries = TimeBins(n_bins + 1, bin_width)
        self.ce = 0                        # CE-marked segments not yet echoed (RFC 3168)
        self.deliver_ce = None             # the sender's on_ack_ce, for ACKs that echo marks
        # Linux's quick-ACK mode (tcp_event_data_recv): with delayed ACKs, the
        # first data segment, and one after a silence longer than quick_gap (s,
        # the RTO; None: no quick ACKs), make the next MAX_QUICKACKS ACKs of new
        # data go at once
        self.quick = 0
        self.quick_gap = quick_gap
        self.last_data = -math.inf

    def receive_ce(self, seq: int, t: float) -> None:
        """Data segment ``seq`` arrives at ``t`` (s) marked CE: the next ACK
        echoes it, as a count (see :class:`~ccsim.algorithms.EcnEcho`)."""
        if self.held and t >= self.held_until:  # the held ACK left before this arrived
            self._ack(self.held_until)
        self.ce += 1
        if self.quick_gap is not None and self.quick < 2:
            # Linux's __tcp_ecn_check_ce: "better not delay acks, sender can have a
            # very low cwnd": tcp_enter_quickack_mode(sk, 2)
            self.quick = 2
        self.receive(seq, t)  # not its common case (ce is set): the ACK goes through _ack

    def receive(self, seq: int, t: float) -> None:
        """Data segment ``seq`` arrives at time ``t`` (s)."""
        if seq == self.rcv_nxt and not (self.ooo or self.recent or self.delayed or self.ce):
            # the common case, in order with nothing held: an ACK at once, no SACK
            self.rcv_nxt = nxt = seq + 1
            deliveries = self.deliveries
            x = t * deliveries.rate
            if x < deliveries.bin_next:  # in the current trace bin (TimeBins)
                deliveries.in_bin += 1
            else:
                deliveries.count(x, 1)
            heappush(self.heap, (t + self.back, self.next_id(), self.deliver_ack, (nxt, ())))
            return
        if self.held and t >= self.held_until:  # the delayed-ACK timer went first
            self._ack(self.held_until)
        if self.quick_gap is not None:  # tcp_incr_quickack(sk, TCP_MAX_QUICKACKS)
            if t - self.last_data > self.quick_gap:
                self.quick = MAX_QUICKACKS
            self.last_data = t
        nxt = self.rcv_nxt
        if self.dsack and (seq < nxt or seq in self.ooo):  # held already: say so first
            self._ack(t, (seq, seq + 1))
            return
        in_order = seq == nxt
        if in_order:
            nxt += 1
            ooo = self.ooo
            while ooo and nxt in ooo:
                ooo.remove(nxt)
                nxt += 1
            self.deliveries.at(t, nxt - self.rcv_nxt)
            self.rcv_nxt = nxt
        elif seq > nxt:
            self.ooo.add(seq)
        if self.sack and (self.recent or not in_order):  # in order, no holes: none to keep
            self._update_blocks(seq)
        # RFC 5681 §4.2: ACK out-of-order and gap-filling segments at once,
        # otherwise (with delayed ACKs) every second segment or on the timer.
        if not self.delayed or not in_order or self.ooo or nxt != seq + 1:
            self._ack(t)
        elif self.held:
            self._ack(t)
        elif self.quick:  # quick-ACK mode: tcp_dec_quickack_mode, once per ACK of new data
            self.quick -= 1
            self._ack(t)
        else:
            self.held = 1
            self.held_until = until = t + self.ack_delay
            if self.timer_at is None:  # else the pending one, due earlier, re-arms itself
                self.timer_at = until
                self.clock.schedule(until, self.on_delayed_ack_timer, until)

    def on_delayed_ack_timer(self, at: float) -> None:
        """The delayed-ACK timer: one event per receiver at a time. At the
        held ACK's deadline it sends the ACK; earlier (its ACK went out with
        the next segment, and a later one is held now) it re-arms itself at
        the new deadline, so holding an ACK costs no event of its own."""
        self.timer_at = None
        if not self.held:
            return
        if self.held_until == at:
            self._ack(at)
        else:
            self.timer_at = until = self.held_until
            self.clock.schedule(until, self.on_delayed_ack_timer, until)

    def _ack(self, t: float, dsack: tuple[int, int] | None = None) -> None:
        """Send an ACK at ``t``: the cumulative ACK and the SACK blocks, a
        D-SACK block first if ``dsack`` (RFC 2883: a duplicate segment)."""
        self.held = 0
        blocks = ()
        if self.recent or dsack:
            ends, picked = self.ends, [dsack] if dsack else []
            for start in reversed(self.recent):  # most recently touched first
                if len(picked) == MAX_SACK_BLOCKS:
                    break
                picked.append((start, ends[start]))
            blocks = tuple(picked)
        if self.ce:  # ECN echo: the CE-marked segments this ACK covers
            heappush(self.heap, (t + self.back, self.next_id(), self.deliver_ce,
                                 (self.rcv_nxt, blocks, self.ce)))
            self.ce = 0
            return
        heappush(self.heap, (t + self.back, self.next_id(), self.deliver_ack,
                             (self.rcv_nxt, blocks)))

    def _update_blocks(self, seq: int) -> None:
        """Keep SACK blocks above ``rcv_nxt``, the one holding ``seq`` the most
        recent (RFC 2018 §4). Blocks are disjoint and never adjacent; a segment
        joins the blocks that end at it and start after it, found in O(1)."""
        nxt, ends, starts, recent = self.rcv_nxt, self.ends, self.starts, self.recent
        if seq < nxt:  # rcv_nxt moved: drop the blocks it has passed
            gone = 0
            while gone < len(starts) and ends[starts[gone]] <= nxt:
                del ends[starts[gone]], recent[starts[gone]]
                gone += 1
            del starts[:gone]
            return
        i = bisect.bisect_right(starts, seq) - 1
        if i >= 0 and ends[starts[i]] > seq:  # already held: its block becomes the latest
            start = starts[i]
            del recent[start]
            recent[start] = None
            return
        start, end = seq, seq + 1
        if i >= 0 and ends[starts[i]] == seq:  # the block ending here
            start = starts[i]
            del starts[i], recent[start]
        else:
            i += 1
        if i < len(starts) and starts[i] == end:  # the block starting just after
            end = ends.pop(end)
            del starts[i], recent[seq + 1]
        ends[start] = end
        starts.insert(i, start)
        recent[start] = None
