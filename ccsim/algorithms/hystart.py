"""Leaving slow start before the first loss: HyStart++ (RFC 9406) and Linux's
HyStart (:class:`HyStartLinux`, CUBIC's default, below).

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

    def __eq__(self, other: object) -> bool:  # state, for checkers comparing snapshots
        return type(other) is type(self) and vars(other) == vars(self)

    __hash__ = None  # mutable

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


# -- Linux's HyStart (net/ipv4/tcp_cubic.c), CUBIC's default --------------------------------
HYSTART_ACK_TRAIN = 1      # hystart_detect bit: ACK-train detection
HYSTART_DELAY = 2          # hystart_detect bit: delay-increase detection
HYSTART_MIN_SAMPLES = 8    # RTT samples a round takes before the delay test
HYSTART_DELAY_MIN = 0.004  # s: the delay threshold's floor
HYSTART_DELAY_MAX = 0.016  # s: its ceiling
HYSTART_LOW_WINDOW = 16    # segments: below this window HyStart does not look
HYSTART_ACK_DELTA = 0.002  # s: ACKs at most this far apart belong to one train
GSO_MAX_SIZE = 65536       # bytes: sk_gso_max_size, in hystart_ack_delay's allowance
ACK_DELAY_CAP = 0.001      # s: hystart_ack_delay's ceiling (USEC_PER_MSEC)


class HyStartLinux:
    """Linux's HyStart (Ha & Rhee, "Taming the elephants: New TCP slow start",
    Computer Networks 55(9), 2011, as ``net/ipv4/tcp_cubic.c`` runs it in 6.x:
    ``hystart_update`` and ``bictcp_hystart_reset``). Per ACK in slow start
    with ``cwnd ≥ HYSTART_LOW_WINDOW`` it may end slow start by setting
    ``ssthresh = cwnd`` (no Conservative Slow Start):

    * a round begins when the ACK passes the data outstanding at the last
      round's start; ``round_start`` and ``last_ack`` are then its time;
    * ACK train (``detect & 1``): an ACK at most ``HYSTART_ACK_DELTA`` after
      the previous one of the train extends it; once the train spans more
      than ``(delay_min + ack_delay)/2`` the pipe is full. ``ack_delay`` is
      ``hystart_ack_delay``: ``min(1 ms, 4·GSO_MAX_SIZE / pacing_rate)``,
      with Linux's internal pacing rate in slow start, ``2·cwnd·mss/srtt``;
      the halving is Linux's for a socket that does not pace (pfifo_fast or
      fq_codel, not fq);
    * delay (``detect & 2``): the smallest RTT of the round's first
      ``HYSTART_MIN_SAMPLES`` samples and after exceeds ``delay_min +
      clamp(delay_min/8, 4 ms, 16 ms)``.

    ``delay_min`` is the flow's minimum RTT (``Ack.min_rtt``). Differences
    from the source: rounds are counted in delivered segments (``Ack.delivered``
    and ``Ack.inflight``) instead of ``snd_una`` passing ``end_seq``; samples
    come from ACKs outside loss recovery only (slow start never runs in it);
    Linux ignores RTT samples for one second after a congestion epoch starts,
    and ccsim's ``Ack.min_rtt`` keeps them (the minimum only falls).
    """

    def __init__(self, detect: int = HYSTART_ACK_TRAIN | HYSTART_DELAY) -> None:
        self.detect = detect
        self.round_end = -1.0        # delivered count that ends the round
        self.round_start = 0.0       # s
        self.last_ack = 0.0          # s: the train's latest ACK
        self.curr_rtt = math.inf     # s: the round's smallest sample
        self.sample_cnt = 0
        self.found = False           # slow start ended by HyStart
        self.exit: str | None = None  # "train" or "delay" once found

    def __eq__(self, other: object) -> bool:  # state, for checkers comparing snapshots
        return type(other) is type(self) and vars(other) == vars(self)

    __hash__ = None  # mutable

    def ack_delay(self, cwnd: float, mss: int, srtt: float) -> float:
        """``hystart_ack_delay`` (s): the allowance for ACKs held back by GSO."""
        if not (srtt > 0 and math.isfinite(srtt)):
            return 0.0  # no pacing rate yet (Linux: sk_pacing_rate == 0)
        rate = 2.0 * cwnd * mss / srtt  # tcp_update_pacing_rate in slow start, bytes/s
        return min(ACK_DELAY_CAP, 4.0 * GSO_MAX_SIZE / rate)

    def update(self, ack: Ack, cwnd: float, mss: int) -> bool:
        """Take ``ack`` (in slow start, ``cwnd ≥ HYSTART_LOW_WINDOW``);
        return whether slow start ends here (the caller sets ``ssthresh``)."""
        now = ack.now
        if ack.delivered >= self.round_end:  # bictcp_hystart_reset
            self.round_start = self.last_ack = now
            self.round_end = ack.delivered + ack.inflight
            self.curr_rtt = math.inf
            self.sample_cnt = 0
        delay_min = ack.min_rtt
        if self.detect & HYSTART_ACK_TRAIN and now - self.last_ack <= HYSTART_ACK_DELTA:
            self.last_ack = now
            threshold = (delay_min + self.ack_delay(cwnd, mss, ack.srtt)) / 2.0
            if now - self.round_start > threshold:
                self.found, self.exit = True, "train"
        if self.detect & HYSTART_DELAY and ack.rtt is not None:
            self.curr_rtt = min(self.curr_rtt, ack.rtt)
            if self.sample_cnt < HYSTART_MIN_SAMPLES:
                self.sample_cnt += 1
            elif self.curr_rtt > delay_min + min(max(delay_min / 8.0, HYSTART_DELAY_MIN),
                                                 HYSTART_DELAY_MAX):
                self.found, self.exit = True, "delay"
        return self.found
