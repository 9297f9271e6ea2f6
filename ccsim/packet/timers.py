"""The sender's two clocks: the retransmission timer (RFC 6298 §5) and the
pacer.

Both schedule their events on the engine's :class:`~ccsim.packet.clock.Clock`
lazily: a timer moved later keeps its pending event, which re-arms itself
when it fires early, so restarting the timer on every ACK costs no event.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from .clock import Clock


class RetransmissionTimer:
    """One sender's retransmission timer (RFC 6298 §5): running whenever data
    is outstanding, restarted as ACKs of new data arrive, calling ``expire``
    when it runs out.

    The sender's per-ACK path restarts it inline (see :meth:`restart`);
    ``tests/test_sender_parts.py`` checks the copy against this method.

    Attributes:
        deadline: when the timer expires (s), or ``None`` when it is stopped.
        pending: the earliest timer event on the clock (s), or ``None``.
    """

    __slots__ = ("clock", "expire", "deadline", "pending")

    def __init__(self, clock: "Clock", expire: Callable[[], None]) -> None:
        self.clock = clock
        self.expire = expire
        self.deadline: float | None = None
        self.pending: float | None = None

    @property
    def running(self) -> bool:
        """Whether the timer is set."""
        return self.deadline is not None

    def restart(self, span: float) -> None:
        """(Re)arm the timer to expire ``span`` (s) from now (§5.3). A pending
        event that comes first is reused (it re-arms itself)."""
        self.deadline = deadline = self.clock.now + span
        if self.pending is None or deadline < self.pending:
            self.pending = deadline
            self.clock.schedule(deadline, self.on_event, deadline)

    def stop(self) -> None:
        """All data is acknowledged: turn the timer off (§5.2)."""
        self.deadline = None

    def on_event(self, at: float) -> None:
        """The clock event scheduled for ``at`` (s): expire, or re-arm if the
        deadline moved later, or nothing if an earlier event superseded it."""
        if at != self.pending:
            return  # superseded by an earlier event
        self.pending = None
        deadline = self.deadline
        if deadline is None:
            return
        if at < deadline:  # moved later since this event was scheduled
            self.pending = deadline
            self.clock.schedule(deadline, self.on_event, deadline)
            return
        self.expire()


class Pacer:
    """Spaces a paced sender's segments ``packet_bits / rate`` seconds apart
    and wakes the sender (``wake``) when the next may go.

    Attributes:
        next_send: the earliest time the next segment may go (s).
        waiting: a wake-up is scheduled.
        slowest: the lowest rate that can pace (bit/s): one packet per
            ``longest_gap`` seconds (the sender's longest RTO). Slower, the
            sender would sit silent past its own timer: a stalled flow.
    """

    __slots__ = ("clock", "wake", "packet_bits", "next_send", "waiting", "slowest")

    def __init__(self, clock: "Clock", wake: Callable[[], None], packet_bits: float,
                 longest_gap: float = math.inf) -> None:
        self.clock = clock
        self.wake = wake
        self.packet_bits = packet_bits  # one full packet on the wire (bits)
        self.next_send = 0.0
        self.waiting = False
        self.slowest = packet_bits / longest_gap

    def blocked(self, now: float) -> bool:
        """Whether a segment must wait at ``now`` (s)."""
        return now < self.next_send or self.waiting

    def sent(self, now: float, rate: float) -> None:
        """A segment went out at ``now`` (s) at ``rate`` (bit/s): the next may go
        one packet time later, when the sender is woken. ``rate`` must be
        finite and at least :attr:`slowest` (the sender checks it)."""
        self.next_send = now + self.packet_bits / rate
        self.waiting = True
        self.clock.schedule(self.next_send, self._wake, None)

    def _wake(self, _: object) -> None:
        self.waiting = False
        self.wake()


def valid_pacing_rate(rate: float, slowest: float) -> bool:
    """Whether a window law's ``pacing_rate`` (bit/s) can space segments:
    finite, and at least ``slowest`` (bit/s, positive)."""
    return slowest <= rate < math.inf
