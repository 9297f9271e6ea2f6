"""The RTT estimator and retransmission timeout of RFC 6298 §2.

Source: V. Paxson, M. Allman, J. Chu, M. Sargent, "Computing TCP's
Retransmission Timer", RFC 6298, 2011, §2 (the estimator), §5.5 (backing
off) and §5.7 (a valid sample after a backoff); Karn's rule (§3) is the
sender's: it hands over no sample from a retransmitted segment.

Deviations: none in the rules. ``min_rto`` and ``max_rto`` are the
scenario's (RFC 6298's 1 s floor, or Linux's 200 ms); the clock granularity
``G`` is 1 ms, a Linux jiffy at HZ=1000. With ``tick > 0`` samples are read
off a clock of that tick (Linux's jiffy estimator before 4.x; ns-2's 100 ms
``tcpTick_``).
"""

from __future__ import annotations

import math

CLOCK_GRANULARITY = 0.001
"""G of RFC 6298 §2 (s): 1 ms, a Linux jiffy at HZ=1000."""


class RttEstimator:
    """Smoothed RTT, its variation and the retransmission timeout of one
    sender.

    The sender's per-ACK path runs :meth:`take` inline (a call per ACK costs
    a few per cent of the engine's speed); ``tests/test_sender_parts.py``
    checks that the inline copy and this method agree on every sample.

    Attributes:
        srtt, rttvar: RFC 6298's SRTT and RTTVAR (s); NaN before the first sample.
        rto: the retransmission timeout (s): the initial RTO until the first
            sample, then ``max(min_rto, SRTT + max(G, 4·RTTVAR))`` capped at
            ``max_rto``, doubled by each :meth:`back_off`.
        min_rtt, last_rtt: the smallest and the latest sample (s).
        rtt_sum, rtt_count: the samples' sum (s) and number.
        tick: the RTT clock's tick (s); 0 for exact samples.
    """

    __slots__ = ("srtt", "rttvar", "rto", "min_rto", "max_rto", "min_rtt", "last_rtt",
                 "rtt_sum", "rtt_count", "tick")

    def __init__(self, initial_rto: float, min_rto: float, max_rto: float,
                 tick: float = 0.0) -> None:
        self.srtt = math.nan
        self.rttvar = math.nan
        self.rto = initial_rto
        self.min_rto, self.max_rto = min_rto, max_rto
        self.min_rtt = math.inf
        self.last_rtt = math.nan
        self.rtt_sum = 0.0
        self.rtt_count = 0
        self.tick = tick

    def take(self, rtt: float) -> None:
        """A valid sample ``rtt`` (s): RFC 6298 §2.2–2.4, which also clears a
        backoff (§5.7)."""
        if self.rtt_count == 0:
            self.srtt = rtt
            self.rttvar = rtt / 2.0
        else:
            self.rttvar = 0.75 * self.rttvar + 0.25 * abs(self.srtt - rtt)
            self.srtt = 0.875 * self.srtt + 0.125 * rtt
        rto = self.srtt + max(CLOCK_GRANULARITY, 4.0 * self.rttvar)
        self.rto = min(max(rto, self.min_rto), self.max_rto)
        self.rtt_sum += rtt
        self.rtt_count += 1
        self.last_rtt = rtt
        self.min_rtt = min(self.min_rtt, rtt)

    def back_off(self) -> None:
        """A retransmission timeout: double the RTO, up to ``max_rto`` (§5.5)."""
        self.rto = min(self.rto * 2.0, self.max_rto)

    def measure(self, sent: float, now: float) -> float:
        """The sample of a segment sent at ``sent`` and acknowledged at ``now``
        (s): exact, or with ``tick`` the difference of the two truncated
        clock readings, at least one tick."""
        tick = self.tick
        if not tick:
            return now - sent
        ticks = math.floor(now / tick + 1e-9) - math.floor(sent / tick + 1e-9)
        return max(ticks, 1) * tick
