"""LEDBAT++ and LEDBAT: background transport that keeps a fixed queueing delay.

Sources: P. Balasubramanian, O. Ertugay, D. Havey, M. Bagnulo, "LEDBAT++:
Congestion Control for Background Traffic", draft-irtf-iccrg-ledbat-plus-plus
(revision 06, January 2026; the default, ``variant="plusplus"``), and
S. Shalunov, G. Hazel, J. Iyengar, M. Kuehlewind, "Low Extra Delay
Background Transport (LEDBAT)", RFC 6817, 2012 (``variant="rfc6817"``).
LEDBAT is not in Linux; Windows ships LEDBAT++.

Both estimate the queueing delay they and others cause, ``q = current_delay
− base_delay``, and steer it to a target ``T``:

* ``base_delay``: RFC 6817's base history, the minimum over ``base_history``
  per-minute minima (10 minutes): a new minute starts a new entry, the oldest
  is dropped;
* ``current_delay``: RFC 6817's ``FILTER()`` over the last ``current_filter``
  samples, the minimum (the RFC's example filter).

LEDBAT++ (the draft), per ACK of ``acked`` segments, ``W = cwnd``:

* gain ``G = 1 / min(16, ⌈2·T / base_delay⌉)`` ("reduced congestion window
  gain": slower than Reno's one segment per RTT, the more so the shorter the
  path);
* ``q ≤ T``: ``W += G·acked / W`` (``G`` segments per RTT);
* ``q > T`` ("multiplicative decrease"): ``W += max(G − C·W·(q/T − 1), −W/2)
  · acked / W`` with ``C = 1``: a change per RTT proportional to the window,
  at most half of it; ``W`` not below ``MIN_CWND = 2``; ``ssthresh``
  follows ``W`` down (``min(ssthresh, W)``), so that a decrease does not
  restart slow start (the draft slow-starts only at the start, after a
  slowdown and after a timeout);
* "modified slow start": below ``ssthresh`` ``W += G·acked`` (``×(1 + G)``
  per RTT); the initial slow start ends once ``q > 3/4·T`` (``ssthresh =
  W``), or at the first loss;
* "periodic slowdown": two RTTs after the initial slow start ends, and then
  every nine times the last slowdown's duration, ``ssthresh = W``, ``W = 2``
  for two RTTs, then slow start back to ``ssthresh``; the slowdown lasts
  until ``W`` regains it. The queue drains meanwhile, and every flow sees
  the true base delay again (the draft's cure for latecomers' advantage and
  for base-delay drift);
* losses as RFC 6817: ``ssthresh = max(W/2, 2)`` (the recovery strategy
  brings ``W`` there), ``W = 1`` after a timeout, then slow start to
  ``ssthresh``.

RFC 6817 (``variant="rfc6817"``), per ACK: ``W += GAIN·(T − q)/T · acked /
W`` with ``GAIN = 1``, then ``W = min(W, FlightSize + ALLOWED_INCREASE)``
(FlightSize before this ACK, ``ALLOWED_INCREASE = 1``), ``W = max(W,
MIN_CWND)``; losses as above. Its pseudo-code has no slow start: the flow
grows from the initial window by that rule.

Where it yields: only where a competitor's queue can pass ``T``. In a
buffer holding less delay than ``3/4·T`` (a 1-BDP buffer at 40 ms holds
40 ms) none of the delay rules acts, and LEDBAT++ is a loss-driven AIMD flow
at gain ``G`` (1/3 there) that takes 25-35 % against Reno, not the 2-14 % a
buffer deeper than the target gives; see docs/algorithms.md.

Differences from the sources:

* **RTT, not one-way delay.** RFC 6817 measures one-way delay with
  timestamps; the draft's LEDBAT++ uses the RTT, as here. ccsim's reverse
  path never queues, so ``RTT − min RTT`` is the forward queueing delay and
  the two agree.
* Per-ACK growth is continuous (Windows and the Linux modules count whole
  segments); the decrease's per-RTT bound ``−W/2`` is applied per ACK as
  ``−acked/2``, which sums to half the window over one window of ACKs.
* The slowdowns' two RTTs and the two RTTs before the first one are measured
  with the smoothed RTT when they begin.
* The RFC's ``CTO`` (congestion timeout, one segment) is the sender's
  retransmission timeout; the draft's and the RFC's reaction to a loss is
  at most once per RTT, which ccsim's recovery strategies give.
* RFC 6817 lets ``FILTER()`` and its length be chosen; the minimum of the
  last 4 samples is what the Linux LEDBAT modules (Valenti's ``tcp_ledbat``,
  Li's ``tcp_ledbatpp``) use.

Defaults and their sources:

* ``variant = "plusplus"`` (the draft).
* ``target = None``: the variant's — 60 ms for LEDBAT++ (the draft's
  ``TARGET``), 100 ms for RFC 6817 (its ``TARGET`` upper bound, "MUST NOT be
  more than 100 milliseconds", used as the value, as BitTorrent's µTP does).
* ``base_history = 10`` (minutes) — RFC 6817 ``BASE_HISTORY`` ("SHOULD be 10").
* ``current_filter = 4`` (samples), see above.
* ``decrease_constant = 1.0`` — the draft's ``C``.
* ``slowdowns = True`` — the draft's periodic slowdowns (LEDBAT++ only).
"""

from __future__ import annotations

import math
from collections import deque

import numpy as np

from .base import MIN_SSTHRESH, Ack, CongestionControl, Loss, RttSample
from .fluid import FlowArrays, FluidLaw
from .registry import register

VARIANTS = ("plusplus", "rfc6817")
DEFAULT_TARGET = {"plusplus": 0.060, "rfc6817": 0.100}
"""Target queueing delay (s): the draft's 60 ms; RFC 6817's 100 ms bound."""
RFC6817_MAX_TARGET = 0.100
"""RFC 6817: ``TARGET`` MUST NOT be more than 100 ms (s)."""
MIN_CWND = 2.0
"""Floor of the delay-driven decrease and the slowdowns' window (segments):
RFC 6817 ``MIN_CWND`` ("SHOULD be 2"), the draft's "2 packets"."""
RFC6817_GAIN = 1.0
"""RFC 6817 ``GAIN`` (segments per RTT at zero queueing delay; MUST be ≤ 1)."""
ALLOWED_INCREASE = 1.0
"""RFC 6817 ``ALLOWED_INCREASE`` (segments beyond FlightSize; SHOULD be 1)."""
MAX_GAIN_DIVISOR = 16.0
"""The draft's gain is ``1 / min(16, ⌈2·T/base_delay⌉)``."""
SS_EXIT_FRACTION = 0.75
"""The draft's initial slow start ends once ``q > 3/4·T``."""
FREEZE_RTTS = 2.0
"""A slowdown holds ``cwnd = 2`` for two RTTs (the draft)."""
FIRST_SLOWDOWN_RTTS = 2.0
"""The first slowdown begins two RTTs after the initial slow start ends (the draft)."""
SLOWDOWN_SPACING = 9.0
"""The next slowdown begins nine times the last one's duration after it ended
(the draft: at most about 10 % of the time slowed down)."""
MINUTE = 60.0
"""RFC 6817's base history keeps one minimum per minute (s)."""


def gain_for(target: float, base_delay: float) -> float:
    """The draft's gain ``1 / min(16, ⌈2·target / base_delay⌉)`` (segments per RTT)."""
    return 1.0 / min(MAX_GAIN_DIVISOR, math.ceil(2.0 * target / base_delay))


def _decrease_bounded(before: dict, event: object, after: dict) -> str | None:
    """The draft: outside slow start and slowdowns, one ACK of ``acked``
    segments never takes more than ``acked/2`` from ``cwnd`` (at most half
    the window per RTT), and never below ``MIN_CWND``."""
    if not isinstance(event, Ack) or after["variant"] != "plusplus":
        return None
    if before["cwnd"] < before["ssthresh"] or after["slowdown_start"] is not None:
        return None
    change = after["cwnd"] - before["cwnd"]
    if change < -event.acked / 2.0 - 1e-9:
        return (f"one ACK of {event.acked!r} segments took {-change!r} from cwnd "
                f"{before['cwnd']!r}; the draft allows at most half a segment per segment")
    if change < 0 and after["cwnd"] < min(before["cwnd"], MIN_CWND) - 1e-9:
        return f"cwnd fell from {before['cwnd']!r} to {after['cwnd']!r}, below MIN_CWND"
    return None


@register
class Ledbat(CongestionControl):
    """LEDBAT++ (draft-irtf-iccrg-ledbat-plus-plus), or RFC 6817's LEDBAT."""

    name = "ledbat"
    recovery = "sack"  # RFC 6817 and the draft keep the host's loss recovery: SACK (RFC 6675)
    min_cwnd = 1.0     # after a timeout (RFC 6817's CTO: one segment)
    param_space = {"base_history": (1, 20), "current_filter": (1, 16),
                   "decrease_constant": (0.25, 4.0)}
    properties = (_decrease_bounded,)

    def __init__(self, *, variant: str = "plusplus", target: float | None = None,
                 base_history: int = 10, current_filter: int = 4,
                 decrease_constant: float = 1.0, slowdowns: bool = True) -> None:
        from ..errors import ScenarioError, ScenarioTypeError
        if variant not in VARIANTS:
            raise ScenarioError("variant", variant, "'plusplus' (the draft) or 'rfc6817'")
        if target is not None:
            if isinstance(target, bool) or not isinstance(target, (int, float)):
                raise ScenarioTypeError("target", target, "a delay in seconds, or None for "
                                        "the variant's default")
            high = RFC6817_MAX_TARGET if variant == "rfc6817" else 1.0
            if not 0.0 < target <= high:
                raise ScenarioError("target", target, f"within (0, {high}] s for variant "
                                    f"{variant!r}")
        self.variant = variant                      # "plusplus" or "rfc6817"
        self.target = target                        # target queueing delay (s); None: variant's
        self.base_history = base_history            # minutes of per-minute minima
        self.current_filter = current_filter        # samples the current delay is the min of
        self.decrease_constant = decrease_constant  # the draft's C
        self.slowdowns = slowdowns                  # the draft's periodic slowdowns
        self.target_delay = DEFAULT_TARGET[variant] if target is None else float(target)

    def start(self, initial_window: float, mss: int) -> None:
        super().start(initial_window, mss)
        self.base_delays: deque[float] = deque(maxlen=self.base_history)  # per-minute minima (s)
        self.base_minute = -1                      # minute of the newest entry
        self.current_delays: deque[float] = deque(maxlen=self.current_filter)  # last samples (s)
        self.queue_delay = math.nan                # q of the last ACK (s)
        self.initial = self.variant == "plusplus"  # in the initial slow start
        self.slowdown_start: float | None = None   # when the slowdown under way began (s)
        self.frozen = False                        # in a slowdown's two RTTs at cwnd = 2
        self.next_slowdown: float | None = None    # when the next slowdown is due (s)
        self._freeze_rtt = math.nan                # smoothed RTT when the slowdown began (s)

    def max_growth_per_rtt(self, cwnd: float) -> float:
        # The gain is at most 1 segment per RTT; RFC 6817 lifts a window below MIN_CWND.
        return 1.0 + max(MIN_CWND - cwnd, 0.0)

    # -- delay estimates ------------------------------------------------------------------
    def on_rtt(self, sample: RttSample) -> None:
        rtt, minute = sample.rtt, math.floor(sample.now / MINUTE)
        if minute != self.base_minute or not self.base_delays:
            self.base_delays.append(rtt)         # a new minute: the oldest falls out
            self.base_minute = minute
        elif rtt < self.base_delays[-1]:
            self.base_delays[-1] = rtt
        self.current_delays.append(rtt)

    @property
    def base_delay(self) -> float:
        """Minimum of the base history (s); ``inf`` before the first sample."""
        return min(self.base_delays, default=math.inf)

    @property
    def current_delay(self) -> float:
        """Minimum of the last ``current_filter`` samples (s); ``inf`` before the first."""
        return min(self.current_delays, default=math.inf)

    # -- the laws -----------------------------------------------------------------------
    def on_ack(self, ack: Ack) -> None:
        if not self.current_delays:
            return  # no delay sample yet (Karn's rule): nothing to steer by
        base = self.base_delay
        q = max(self.current_delay - base, 0.0)
        self.queue_delay = q
        if self.variant == "rfc6817":
            self._rfc6817(ack, q)
        else:
            self._plusplus(ack, q, base)

    def _rfc6817(self, ack: Ack, q: float) -> None:
        t = self.target_delay
        cwnd = self.cwnd + RFC6817_GAIN * (t - q) / t * ack.acked / self.cwnd
        cwnd = min(cwnd, ack.inflight + ack.acked + ALLOWED_INCREASE)  # FlightSize before the ACK
        self.cwnd = max(cwnd, MIN_CWND)

    def _plusplus(self, ack: Ack, q: float, base: float) -> None:
        t, now = self.target_delay, ack.now
        rtt = ack.srtt if math.isfinite(ack.srtt) and ack.srtt > 0 else self.current_delay
        gain = gain_for(t, base)
        if self.slowdowns:
            if self.frozen:
                if now - self.slowdown_start < FREEZE_RTTS * self._freeze_rtt:
                    return                       # held at cwnd = 2
                self.frozen = False              # then slow start back to ssthresh
            elif (self.slowdown_start is None and self.next_slowdown is not None
                  and now >= self.next_slowdown):
                self.ssthresh = max(self.cwnd, MIN_SSTHRESH)
                self.cwnd = min(self.cwnd, MIN_CWND)
                self.slowdown_start, self.frozen, self.next_slowdown = now, True, None
                self._freeze_rtt = rtt
                return
        if self.cwnd < self.ssthresh:            # the draft's slow start, with its gain
            if self.initial and q > SS_EXIT_FRACTION * t:
                self.ssthresh = max(self.cwnd, MIN_SSTHRESH)
                self._initial_ended(now, rtt)
                return
            self.cwnd = min(self.cwnd + gain * ack.acked, self.ssthresh)
            if self.cwnd >= self.ssthresh:
                self._slow_start_ended(now, rtt)
            return
        self._slow_start_ended(now, rtt)         # (ended by a loss, or already over)
        if q <= t:
            per_rtt = gain
        else:
            per_rtt = max(gain - self.decrease_constant * self.cwnd * (q / t - 1.0),
                          -self.cwnd / 2.0)
        cwnd = self.cwnd + per_rtt * ack.acked / self.cwnd
        if per_rtt >= 0:
            self.cwnd = cwnd
        else:  # and slow start stays over: ssthresh follows the window down
            self.cwnd = max(cwnd, min(self.cwnd, MIN_CWND))
            self.ssthresh = max(min(self.ssthresh, self.cwnd), MIN_SSTHRESH)

    def _initial_ended(self, now: float, rtt: float) -> None:
        self.initial = False
        if self.slowdowns:
            self.next_slowdown = now + FIRST_SLOWDOWN_RTTS * rtt

    def _slow_start_ended(self, now: float, rtt: float) -> None:
        if self.initial:
            self._initial_ended(now, rtt)
        elif self.slowdown_start is not None and not self.frozen:
            self.next_slowdown = now + SLOWDOWN_SPACING * (now - self.slowdown_start)
            self.slowdown_start = None

    def ssthresh_after(self, loss: Loss) -> float:
        # RFC 6817: cwnd = max(cwnd/2, MIN_CWND) (the recovery brings cwnd to it)
        return max(self.cwnd / 2.0, MIN_SSTHRESH)


class LedbatFluid(FluidLaw):
    """LEDBAT++ and RFC 6817 in the fluid engine.

    ``base_delay`` is the smallest RTT the flow has seen (the base history's
    minimum, exact while the flow is younger than ``base_history`` minutes;
    ccsim's paths keep their propagation delay), ``current_delay`` the step's
    RTT (the step's samples share it, so their minimum is it). Per step of
    ``h`` (``h/rtt`` RTTs): below the target ``dW/dt = G/rtt``; above it
    ``dW/dt = max(G − C·W·(q/T − 1), −W/2)/rtt``, no faster than the per-ACK
    bound's ``W·e^(−h/(2·rtt))`` and not below 2; slow start multiplies ``W``
    by ``(1 + G)`` per RTT; the initial slow start's exit, the slowdowns
    (``ssthresh = W``, ``W = 2`` for two smoothed RTTs, slow start back, the
    next nine durations later) and the loss rule as the window law. RFC 6817:
    ``dW/dt = (T − q)/T / rtt``, not below 2; its cap at FlightSize + 1 is
    left out (a bulk flow's window is in flight).
    """

    state = {"initial": 1.0, "sd_start": math.nan, "sd_next": math.nan, "frozen": 0.0,
             "freeze_rtt": math.nan}

    def start(self, f: FlowArrays, m: np.ndarray) -> None:
        f.initial[m] = 1.0 if self.cc.variant == "plusplus" else 0.0

    def grow(self, f: FlowArrays) -> None:
        cc = self.cc
        live = (f.h > 0) & (f.acked > 0)
        if not live.any():
            return
        base = np.minimum(f.min_rtt, f.rtt)
        q = np.maximum(f.rtt - base, 0.0)
        t = cc.target_delay
        rounds = f.h / f.rtt
        if cc.variant == "rfc6817":
            cwnd = f.cwnd + RFC6817_GAIN * (t - q) / t * rounds
            np.copyto(f.cwnd, np.where(live, np.maximum(cwnd, MIN_CWND), f.cwnd))
            return
        now = f.now
        rtt = np.where(np.isfinite(f.srtt) & (f.srtt > 0), f.srtt, f.rtt)
        gain = 1.0 / np.minimum(MAX_GAIN_DIVISOR, np.ceil(2.0 * t / base))
        held = np.zeros_like(live)
        if cc.slowdowns:
            thaw = live & (f.frozen > 0) & (now - f.sd_start >= FREEZE_RTTS * f.freeze_rtt)
            f.frozen[thaw] = 0.0
            due = live & np.isnan(f.sd_start) & (now >= f.sd_next)  # NaN: none scheduled
            if due.any():
                f.ssthresh[due] = np.maximum(f.cwnd[due], MIN_SSTHRESH)
                f.cwnd[due] = np.minimum(f.cwnd[due], MIN_CWND)
                f.sd_start[due] = now[due]
                f.freeze_rtt[due] = rtt[due]
                f.frozen[due] = 1.0
                f.sd_next[due] = np.nan
            held = (f.frozen > 0) | due
        act = live & ~held
        leave = act & (f.cwnd < f.ssthresh) & (f.initial > 0) & (q > SS_EXIT_FRACTION * t)
        if leave.any():
            f.ssthresh[leave] = np.maximum(f.cwnd[leave], MIN_SSTHRESH)
        h_ca = f.slow_start(gain, h=np.where(act & ~leave, f.h, 0.0))
        ended = leave | (act & (f.cwnd >= f.ssthresh))
        first = ended & (f.initial > 0)
        f.initial[first] = 0.0
        if cc.slowdowns:
            f.sd_next[first] = (now + FIRST_SLOWDOWN_RTTS * rtt)[first]
            back = ended & ~first & ~np.isnan(f.sd_start)
            f.sd_next[back] = (now + SLOWDOWN_SPACING * (now - f.sd_start))[back]
            f.sd_start[back] = np.nan
        ca = act & ~leave & (h_ca > 0)
        r = h_ca / f.rtt
        with np.errstate(invalid="ignore"):
            over = q / t - 1.0
        per_rtt = np.where(q <= t, gain,
                           np.maximum(gain - cc.decrease_constant * f.cwnd * over, -f.cwnd / 2.0))
        grown = f.cwnd + per_rtt * r
        shrunk = np.maximum(grown, np.maximum(f.cwnd * np.exp(-r / 2.0),
                                              np.minimum(f.cwnd, MIN_CWND)))
        np.copyto(f.cwnd, np.where(ca, np.where(per_rtt >= 0, grown, shrunk), f.cwnd))
        down = ca & (per_rtt < 0)  # slow start stays over: ssthresh follows the window down
        f.ssthresh[down] = np.maximum(np.minimum(f.ssthresh, f.cwnd), MIN_SSTHRESH)[down]

    def ssthresh_after(self, f: FlowArrays, m: np.ndarray, kind: str) -> np.ndarray:
        return np.maximum(f.cwnd[m] / 2.0, MIN_SSTHRESH)


Ledbat.fluid = LedbatFluid
