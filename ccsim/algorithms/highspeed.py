"""HighSpeed TCP: a window-dependent AIMD for large windows (RFC 3649).

Source: S. Floyd, "HighSpeed TCP for Large Congestion Windows", RFC 3649
(Experimental), 2003, §5 (the response function and the functions a(w),
b(w)) and Appendix B (the table of a(w), b(w)).

With ``w`` the window in segments and logarithms natural (any base gives the
same ratio):

* ``b(w) = (High_Decrease − 0.5)·(log w − log Low_Window)
  / (log High_Window − log Low_Window) + 0.5``;
* ``p(w) = 0.078 / w^1.2`` (the HighSpeed response function, inverted);
* ``a(w) = w²·p(w)·2·b(w) / (2 − b(w))``;
* at or below ``Low_Window``: ``a = 1``, ``b = 0.5`` — Reno.

Update rules, with ``acked`` the segments newly acknowledged by an ACK:

* slow start (``cwnd < ssthresh``): Reno's (:mod:`ccsim.algorithms.reno`,
  RFC 5681 §3.1; RFC 3649 leaves slow start alone);
* congestion avoidance: ``cwnd += a(cwnd)·acked / cwnd`` — a(w) segments per
  RTT (RFC 3649 §5: ``w = w + a(w)/w`` per ACK);
* on loss: ``ssthresh = max((1 − b(w))·w, 2)`` with ``w`` = FlightSize;
  after a timeout ``cwnd = 1`` (RFC 5681 §3.1).

Defaults (RFC 3649 §5; the same values fix Linux's table in
``net/ipv4/tcp_highspeed.c``, Linux 6.x): ``low_window = 38``,
``high_window = 83000`` segments, ``high_p = 1e-7``,
``high_decrease = 0.1``.

Differences from the source:

* By default a(w) and b(w) are Linux's: the table of RFC 3649 Appendix B
  (72 rows), ``a = row + 1`` for the row whose upper window is the first at
  least ``w``, ``b = md/256``, and ``ssthresh = w − ⌊w·md/256⌋`` — so Linux
  grows by the *next* row's a, up to one segment per RTT faster than the
  RFC between rows. ``rule="rfc3649"`` takes the closed form above,
  evaluated at the current window, which reproduces the table's a(w) to
  within 0.05 and b(w) to within 0.01 (tests/test_highspeed.py).
* ``high_p`` is recorded for provenance but not used: RFC 3649 derives the
  ``0.078 / w^1.2`` of p(w) from (Low_Window, Low_P = 1.5/38²) and
  (High_Window, High_P), and §5 states p(w) in that rounded form, so the
  law here is the RFC's formula as written. ``low_window``, ``high_window``
  and ``high_decrease`` do enter b(w) (and so a(w)).
* Just above Low_Window the closed form gives a(w) slightly below 1
  (0.955 at w = 38); a(w) is floored at 1 so HighSpeed never grows more
  slowly than Reno, as the RFC intends (§5: "HighSpeed TCP ... uses the
  same algorithm as Standard TCP" for w ≤ Low_Window, and more aggressive
  above it) and as Linux's table does.
* The decrease takes ``w`` from ``loss.inflight``, for both b(w) and the
  product: the stack's flight at a loss (``Scenario.loss_flight``), the
  window in the Linux stack, as Linux's ``hstcp_ssthresh`` reads
  ``snd_cwnd``; RFC 5681's FlightSize with ``loss_flight="flight"`` (it
  keeps an application-limited flow from keeping a large unused window,
  the reason RFC 2581 replaced cwnd by FlightSize).
* The window is a float growing continuously; Linux adds whole segments
  after cwnd / a ACKs.
* With the default ``rule="linux"``, as ``hstcp_cong_avoid`` and
  ``hstcp_ssthresh``: the row (``ca->ai``) moves only in congestion
  avoidance, on each ACK before the increase, and a loss takes ``b`` from
  the row held then: a loss in slow start (the row still 0 at a flow's
  first overshoot) halves the window whatever its size, and a loss before
  the first ACK after a recovery uses the row from before it. Slow start
  stops at ``ssthresh`` (``tcp_slow_start``'s leftover is not carried into
  congestion avoidance). The fluid law takes ``b`` at the window of the
  loss.
* Linux's ``hstcp_cong_avoid`` adds ``a + 1`` to its counter once per
  *ACK* in congestion avoidance, whatever the ACK covers (RFC 3649 §5 also
  states its rule per ACK). The law multiplies by ``acked``; the Linux
  stack profile hands it one per ACK above ``ssthresh``
  (``ack_counting="acks-in-congestion-avoidance"``), so under delayed ACKs
  it grows half as fast as per segment, as Linux's does.
"""

from __future__ import annotations

import bisect
import math

import numpy as np

from .base import MIN_SSTHRESH, Ack, Loss
from .fluid import FlowArrays, FluidLaw, law_tables
from .registry import register
from .reno import Reno


RENO_DECREASE = 0.5
"""b(w) at or below Low_Window: Reno's halving (RFC 3649 §5)."""
RESPONSE_P = 0.078
"""RFC 3649 §5's response function ``p(w) = 0.078 / w^1.2``: its coefficient..."""
RESPONSE_EXPONENT = 1.2
"""... and its exponent."""
MD_SCALE = 256.0
"""Linux keeps b(w) in 256ths (``hstcp_aimd_vals[].md``)."""

# RFC 3649 Appendix B as Linux keeps it (net/ipv4/tcp_highspeed.c): the upper
# window of each row (segments) and b(w) in 256ths; row i adds a = i + 1
# segments per RTT. A window w belongs to the first row whose upper window is
# at least w (the last row beyond it).
_ROW_WINDOWS = (
    38, 118, 221, 347, 495, 663, 851, 1058, 1284, 1529, 1793, 2076, 2378, 2699, 3039,
    3399, 3778, 4177, 4596, 5036, 5497, 5979, 6483, 7009, 7558, 8130, 8726, 9346, 9991,
    10661, 11358, 12082, 12834, 13614, 14424, 15265, 16137, 17042, 17981, 18955, 19965,
    21013, 22101, 23230, 24402, 25618, 26881, 28193, 29557, 30975, 32450, 33986, 35586,
    37253, 38992, 40808, 42707, 44694, 46776, 48961, 51258, 53677, 56230, 58932, 61799,
    64851, 68113, 71617, 75401, 79517, 84035, 89053)
_ROW_MD = (
    128, 112, 104, 98, 93, 89, 86, 83, 81, 78, 76, 74, 72, 71, 69, 68, 66, 65, 64, 62, 61,
    60, 59, 58, 57, 56, 55, 54, 53, 52, 52, 51, 50, 49, 48, 48, 47, 46, 45, 45, 44, 43, 43,
    42, 41, 41, 40, 39, 39, 38, 38, 37, 36, 36, 35, 35, 34, 33, 33, 32, 32, 31, 30, 30, 29,
    28, 28, 27, 26, 26, 25, 24)


def _row(w: float) -> int:
    """The table row of window ``w`` (Linux's ``ca->ai``)."""
    return min(bisect.bisect_left(_ROW_WINDOWS, w), len(_ROW_WINDOWS) - 1)


@register
class HighSpeed(Reno):
    """HighSpeed TCP window law (RFC 3649) with PRR recovery, as Linux runs it."""

    name = "highspeed"
    param_space = {"low_window": (10.0, 100.0), "high_window": (1000.0, 1e6),
                   "high_p": (1e-9, 1e-5), "high_decrease": (0.05, 0.5)}  # valid keyword ranges
    recovery = "prr"  # Linux: SACK recovery with PRR for every law (tcp_input.c)

    def __init__(self, *, low_window: float = 38.0, high_window: float = 83000.0,
                 high_p: float = 1e-7, high_decrease: float = 0.1,
                 rule: str = "linux") -> None:
        if rule not in ("linux", "rfc3649"):
            from ..errors import ScenarioError
            raise ScenarioError("rule", rule, "'linux' (the table) or 'rfc3649' (the formula)")
        self.low_window = low_window        # segments; Reno at or below (RFC 3649 §5)
        self.high_window = high_window      # segments; where b reaches high_decrease
        self.high_p = high_p                # loss rate at high_window (provenance only)
        self.high_decrease = high_decrease  # b(high_window), a fraction of the window
        self.rule = rule                    # "linux": Appendix B's table; "rfc3649": §5's formula

    # -- the RFC 3649 §5 functions -------------------------------------------
    def b(self, w: float) -> float:
        """Decrease factor at window ``w`` (fraction of the window given up)."""
        if self.rule == "linux":
            return _ROW_MD[_row(w)] / MD_SCALE
        if w <= self.low_window:
            return RENO_DECREASE
        span = math.log(self.high_window) - math.log(self.low_window)
        return ((self.high_decrease - RENO_DECREASE) * (math.log(w) - math.log(self.low_window))
                / span + RENO_DECREASE)

    def a(self, w: float) -> float:
        """Increase at window ``w`` (segments per RTT), at least Reno's 1."""
        if self.rule == "linux":
            return _row(w) + 1.0
        if w <= self.low_window:
            return 1.0
        b = self.b(w)
        p = RESPONSE_P / w ** RESPONSE_EXPONENT  # RFC 3649 §5's response function, as a loss rate
        return max(w * w * p * 2.0 * b / (2.0 - b), 1.0)

    # -- hooks ---------------------------------------------------------------
    def start(self, initial_window: float, mss: int) -> None:
        super().start(initial_window, mss)
        self.row = 0  # Linux's ca->ai: the table row as congestion avoidance last set it

    def max_growth_per_rtt(self, cwnd: float) -> float:
        """RFC 3649 §5: ``a(w)`` segments per RTT."""
        return self.a(cwnd)

    def on_ack(self, ack: Ack) -> None:
        if self.rule == "linux":
            if self.cwnd < self.ssthresh:  # tcp_slow_start: up to ssthresh, no further
                self.cwnd = min(self.cwnd + ack.acked, self.ssthresh)
                return
            self.row = _row(math.floor(self.cwnd))  # hstcp_cong_avoid moves ca->ai first
            self.cwnd += (self.row + 1.0) * ack.acked / self.cwnd
            return
        acked = self.slow_start(ack.acked)
        if acked:
            self.cwnd += self.a(self.cwnd) * acked / self.cwnd

    def ssthresh_after(self, loss: Loss) -> float:
        w = loss.inflight
        if self.rule == "linux":  # cwnd - ((cwnd * md) >> 8), md of the row ca->ai holds
            return max(w - math.floor(math.floor(w) * _ROW_MD[self.row] / MD_SCALE),
                       MIN_SSTHRESH)
        return max((1.0 - self.b(w)) * w, MIN_SSTHRESH)


class HighSpeedFluid(FluidLaw):
    """HighSpeed TCP in the fluid engine: per ACK ``cwnd += a(cwnd)·acked/cwnd``
    with ``cwnd/RTT`` ACKs per second is ``dcwnd/dt = a(cwnd)/RTT``; over a
    step ``a`` is taken at the step's start (it changes by a fraction of a
    percent per RTT). Slow start is Reno's. A loss sets
    ``ssthresh = max((1 − b(w))·w, 2)`` with ``w`` = FlightSize.

    ``a(w)`` and ``b(w)`` are the window law's own :meth:`HighSpeed.a` and
    :meth:`HighSpeed.b` (whatever they compute: RFC 3649's closed form or
    Linux's table), tabulated once per law on a log grid of windows 1 to 10⁷
    segments with a ratio of 1.0005 between points and looked up at the
    grid point at or below ``w``: within 0.05 % of ``w`` of the exact value,
    and exact for a step table except within that distance above a step.
    """

    long_steps = True  # a(w) moves a fraction of a percent per RTT

    scalar_params = ("*",)  # a(w), b(w) are tabulated per instance

    _GRID_RATIO = 1.0005
    _GRID_MAX = 1e7

    def __init__(self, cc) -> None:
        super().__init__(cc)
        self._w, self._a, self._b = law_tables(cc, self._tables)

    @classmethod
    def _tables(cls, cc) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The grid of windows, and ``a`` and ``b`` at its points."""
        n = int(math.log(cls._GRID_MAX) / math.log(cls._GRID_RATIO)) + 1
        w = cls._GRID_RATIO ** np.arange(n)
        ws = w.tolist()
        return w, np.array([cc.a(x) for x in ws]), np.array([cc.b(x) for x in ws])

    def _lookup(self, table: np.ndarray, w: np.ndarray) -> np.ndarray:
        i = np.searchsorted(self._w, w, side="right") - 1
        return table[np.minimum(np.maximum(i, 0), table.size - 1)]

    def a(self, w: np.ndarray) -> np.ndarray:
        return self._lookup(self._a, w)

    def b(self, w: np.ndarray) -> np.ndarray:
        return self._lookup(self._b, w)

    def grow(self, f: FlowArrays) -> None:
        h_ca = f.slow_start()
        f.cwnd += self.a(f.cwnd) * h_ca / f.rtt

    def ssthresh_after(self, f: FlowArrays, m: np.ndarray, kind: str) -> np.ndarray:
        w = f.inflight[m]
        return np.maximum((1.0 - self.b(w)) * w, MIN_SSTHRESH)


HighSpeed.fluid = HighSpeedFluid
