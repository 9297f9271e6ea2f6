"""HyStart++: leave slow start when the RTT starts to rise (RFC 9406).

Source: P. Balasubramanian, Y. Huang, M. Olson, "HyStart++: Modified Slow
Start for TCP", RFC 9406, 2023, §4.2 (algorithm) and §4.3 (constants), as
RFC 9438 §4.10 recommends for CUBIC.

Per round of data (one RTT), the smallest RTT sample is kept. Once a round
has ``N_RTT_SAMPLE`` samples, if its minimum exceeds the previous round's by
``RttThresh = clamp(lastRoundMinRTT / 8, 4 ms, 16 ms)``, slow start gives way
to Conservative Slow Start (CSS): growth divided by ``CSS_GROWTH_DIVISOR``
for up to ``CSS_ROUNDS`` rounds, then congestion avoidance (``ssthresh =
cwnd``). If in CSS a round's minimum RTT falls below the baseline that
started it, the exit was spurious and slow start resumes. A loss ends it all
(the window law's usual reaction).

Differences from the source: a round ends once the segments in flight at its
start have been delivered (``Ack.delivered`` and ``Ack.inflight``), which is
the RFC's "ACK covers windowEnd = SND.NXT" in segment counts; ``L`` (the
per-ACK cap) is unbounded, as the RFC says for senders that do not pace.
"""

from __future__ import annotations

import math

from .base import Ack

# RFC 9406 §4.3's constants, shared by CUBIC's window law and its fluid law.
MIN_RTT_THRESH = 0.004     # s: the smallest RTT rise that ends slow start
MAX_RTT_THRESH = 0.016     # s: the largest
MIN_RTT_DIVISOR = 8        # the rise threshold is last round's min RTT / 8, within those
N_RTT_SAMPLE = 8           # RTT samples a round needs before it is compared
CSS_GROWTH_DIVISOR = 4     # Conservative Slow Start grows 1/4 as fast as slow start
CSS_ROUNDS = 5             # rounds of CSS before congestion avoidance


class HyStartPlusPlus:
    """Slow-start exit state for one connection; :meth:`growth` is called per
    ACK below ``ssthresh`` and returns the fraction of the ACK's segments that
    slow start may add (1 in slow start, 1/4 in CSS, 0 once it has ended)."""

    def __init__(self) -> None:
        self.round_end = -1.0               # delivered count that ends the round
        self.last_round_min = math.inf      # s
        self.round_min = math.inf           # s
        self.samples = 0
        self.css_baseline = math.inf        # s; finite while in CSS
        self.css_rounds = 0
        self.done = False                   # CSS finished: congestion avoidance

    @property
    def in_css(self) -> bool:
        """Whether Conservative Slow Start is running."""
        return math.isfinite(self.css_baseline)

    def growth(self, ack: Ack) -> float:
        """Update the round state with ``ack``; return the growth factor."""
        if ack.delivered >= self.round_end:          # a new round begins
            if self.in_css:
                self.css_rounds += 1
                if self.css_rounds >= CSS_ROUNDS:
                    self.done = True
                    return 0.0
            self.last_round_min, self.round_min = self.round_min, math.inf
            self.samples = 0
            self.round_end = ack.delivered + ack.inflight
        if ack.rtt is not None:
            self.round_min = min(self.round_min, ack.rtt)
            self.samples += 1
        if self.samples >= N_RTT_SAMPLE and math.isfinite(self.last_round_min):
            if not self.in_css:
                thresh = min(max(MIN_RTT_THRESH, self.last_round_min / MIN_RTT_DIVISOR),
                             MAX_RTT_THRESH)
                if self.round_min >= self.last_round_min + thresh:
                    self.css_baseline = self.round_min
                    self.css_rounds = 0
            elif self.round_min < self.css_baseline:  # the exit was spurious
                self.css_baseline = math.inf
        return 1.0 / CSS_GROWTH_DIVISOR if self.in_css else 1.0
