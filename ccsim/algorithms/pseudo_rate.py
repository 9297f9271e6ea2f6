"""Pseudo-Rate TCP: a Vegas-like window bound reached by doubling, left by a direct drop.

Source: J. R. Chen, Y. C. Chen, "Pseudo-Rate TCP: a congestion avoidance
scheme with nearly optimized fairness and throughput", Computer
Communications 22(15–16), 1999, pp. 1493–1501 — **reconstructed** from the
summary in Lai & Yao's survey (§3.4 and Table 1), not from the
paper, which was not available. What the summary states: Pseudo-Rate
modifies Vegas by (1) timing one packet per cycle instead of every packet,
and (2) a window bound ``baseRTT × network service rate + queue length``
computed each cycle, towards which ``cwnd`` grows exponentially when the bound
exceeds it, and to which ``cwnd`` drops directly when the bound is below it.

Update rules as built here (windows in segments, times in seconds):

* a *cycle* is one round trip: it ends at the first ACK once the segments in
  flight when it began are delivered — the ACK of the segment that was being
  timed, whose RTT (``Ack.rtt``) is the cycle's one measurement (none if
  Karn's rule hides it);
* ``base_rtt`` = the smallest of these measurements;
* service rate ``μ`` = segments ACKed during the cycle / the cycle's RTT
  measurement (the "pseudo-rate": one window per measured RTT);
* window bound ``B = base_rtt·μ + queue``, with ``queue`` the backlog the
  flow aims to keep at the bottleneck (3 segments, the top of Vegas's
  ``[α, β] = [1, 3]`` band);
* at the end of each cycle: if ``B < cwnd``, ``cwnd = max(B, 2)`` (direct
  drop); otherwise the bound is the target and each ACK adds ``acked``
  segments (doubling per RTT) up to it;
* before the first bound (and after each loss until the next cycle ends), the
  window law is Reno's (slow start, then one segment per RTT);
* losses as Reno: ``ssthresh = max(FlightSize/2, 2)`` (RFC 5681 eq. 4),
  ``cwnd = 1`` after a timeout.

In equilibrium every flow keeps ``queue`` segments queued, so flows with
different RTTs get the same rate — the fairness Lai & Yao's Table 2 reports.

Reconstruction choices (the paper may differ on each):

* the service rate divides the segments ACKed in the cycle by the timed
  segment's RTT, not by the cycle's wall-clock duration: with the latter,
  ACK bunching makes single low-rate cycles, each met by a direct drop, and
  the fairness between RTTs is lost (measured: UF 58 % against 11 % for two
  flows of 10 and 80 ms on 10 Mb/s with a 50-packet buffer);
* the queue target of 3 segments, the floor of 2 segments for the direct
  drop, and the bound being dropped (Reno law) from a loss to the end of the
  next cycle are choices, not the paper's stated values;
* the recovery strategy is Reno's fast recovery (``"reno"``): Pseudo-Rate is
  a sender-only change to Vegas (Lai & Yao's Table 1: no SACK, unlike SACK, FACK
  and Rate-Halving), evaluated in ns against Vegas, whose ns and Linux
  versions run Reno's recovery.

Defaults: ``queue = 3.0`` segments (see above; Brakmo & Peterson's Vegas
β = 3, the reference Lai & Yao say Pseudo-Rate modifies).
"""

from __future__ import annotations

import math

import numpy as np

from .base import Ack, CongestionControl, Loss
from .fluid import FlowArrays, FluidLaw
from .registry import register

MIN_WINDOW = 2.0
"""The floor of the direct drop to a cycle's bound (segments)."""


def _direct_drop_to_bound(before: dict, event: object, after: dict) -> str | None:
    """A cycle whose bound is below ``cwnd`` drops the window straight to the
    bound (floor 2 segments). Checked on steps that complete exactly one cycle
    (a round of ACKs can close several when little is in flight); within the
    step the window only grows before that cycle ends, so the final window is
    ``max(bound, 2)`` exactly."""
    if isinstance(event, Loss) or after.get("cycles", 0) != before.get("cycles", 0) + 1:
        return None
    b = after["bound"]
    if b < before["cwnd"] and not math.isclose(after["cwnd"], max(b, MIN_WINDOW),
                                               rel_tol=1e-9, abs_tol=1e-9):
        return (f"bound {b!r} < cwnd {before['cwnd']!r}: cwnd became {after['cwnd']!r}, "
                f"the direct drop gives {max(b, MIN_WINDOW)!r}")
    return None


@register
class PseudoRate(CongestionControl):
    """Pseudo-Rate window law (reconstructed) with Vegas recovery, as Lai & Yao ran it."""

    name = "pseudo-rate"
    recovery = "vegas"  # Vegas-derived, pre-SACK (Lai & Yao): Vegas recovery, see ccsim.recovery.vegas
    param_space = {"queue": (0.5, 20.0)}
    properties = (_direct_drop_to_bound,)

    def __init__(self, *, queue: float = 3.0) -> None:
        self.queue = queue  # segments the flow aims to keep queued at the bottleneck

    def start(self, initial_window: float, mss: int) -> None:
        super().start(initial_window, mss)
        self.base_rtt = math.inf        # smallest per-cycle measurement (s)
        self.cycle_end = -1.0           # delivered count that ends the cycle
        self.cycle_start = math.nan     # time the cycle began (s)
        self.cycle_acked = 0.0          # segments ACKed in the cycle
        self.bound: float | None = None  # window bound of the last cycle (segments)
        self.cycles = 0                 # cycles completed with a bound

    def max_growth_per_rtt(self, cwnd: float) -> float:
        # Exponential increase towards the bound: at most doubling per RTT.
        return cwnd

    # -- the rule ------------------------------------------------------------------
    def window_bound(self, base_rtt: float, rate: float) -> float:
        """``baseRTT × service rate + queue length`` (segments)."""
        return base_rtt * rate + self.queue

    # -- hooks ---------------------------------------------------------------------
    def on_ack(self, ack: Ack) -> None:
        if ack.delivered >= self.cycle_end:
            self._end_cycle(ack)
        else:
            self.cycle_acked += ack.acked
        if self.bound is None:
            acked = self.slow_start(ack.acked)       # Reno until the first bound
            if acked:
                self.cwnd += acked / self.cwnd
        elif self.cwnd < self.bound:
            self.cwnd = min(self.cwnd + ack.acked, self.bound)  # exponential increase

    def _end_cycle(self, ack: Ack) -> None:
        acked = self.cycle_acked + ack.acked         # segments delivered in the cycle
        rtt = ack.rtt                                # the timed segment's RTT
        if rtt is not None and rtt > 0:
            self.base_rtt = min(self.base_rtt, rtt)
            if math.isfinite(self.cycle_start):      # a whole cycle was observed
                self.bound = self.window_bound(self.base_rtt, acked / rtt)
                self.cycles += 1
                if self.bound < self.cwnd:
                    self.cwnd = max(self.bound, MIN_WINDOW)  # direct drop
        self.cycle_start = ack.now
        self.cycle_acked = 0.0
        self.cycle_end = ack.delivered + ack.inflight

    def on_loss(self, loss: Loss) -> None:
        super().on_loss(loss)
        # Reno until a cycle after the loss gives a fresh bound.
        self.bound = None
        self.cycle_start = math.nan
        self.cycle_end = -1.0


class PseudoRateFluid(FluidLaw):
    """Pseudo-Rate in the fluid engine.

    Cycles as the class: a cycle ends once ``delivered`` passes the count
    delivered plus in flight at its start; its one measurement is the
    current RTT (the timed segment's), which updates ``base_rtt``. The
    class's service rate is the segments ACKed in the cycle over that RTT,
    and per ACK a cycle holds the segments in flight at its start: here
    that count, ``min(cwnd, inflight + acked)`` at the cycle's start (in
    flight before the step's deliveries, at most the window), so ``μ =
    size / RTT`` and ``B = base_rtt·μ + queue``
    (:meth:`PseudoRate.window_bound`): ``cwnd·(1 − N/cwnd) + queue`` with
    ``N`` the backlog, a Vegas-like target of ``queue`` segments queued.
    Deviation, measured: counting the step's deliveries instead (the
    literal rule) overshoots a cycle by part of a step, and after a
    direct drop the data still out from the larger window lengthens the
    next cycle; the bound then alternates high and low every cycle and a
    lone flow used 65–76 % of a 10 Mb/s, 40 ms link (packet engine: 95 %).
    At a cycle's end ``cwnd = max(B, 2)`` if ``B < cwnd`` (direct drop).
    Growth over a step, after any cycle end as per ACK: towards the bound,
    doubling per RTT (per ACK ``cwnd += acked``: ``cwnd·2^(h/RTT)``, capped
    at ``B``); before the first bound and after a loss until the next whole
    cycle, Reno's (slow start, then one segment per RTT). Loss: Reno's
    ``ssthresh``; the bound and the cycle restart.
    """

    state = {"base_rtt": math.inf, "cycle_end": -1.0, "cycle_start": math.nan,
             "cycle_acked": 0.0, "cycle_size": 0.0, "bound": math.nan}

    def grow(self, f: FlowArrays) -> None:
        moving = (f.h > 0) & (f.acked > 0)
        if not moving.any():
            return
        f.cycle_acked[moving] += f.acked[moving]
        ends = moving & (f.delivered >= f.cycle_end)
        if ends.any():
            rtt = f.rtt
            np.copyto(f.base_rtt, np.where(ends, np.minimum(f.base_rtt, rtt), f.base_rtt))
            whole = ends & np.isfinite(f.cycle_start)
            # the cycle's own segments: those past its end belong to the next
            acked = f.cycle_size
            bound = self.cc.window_bound(f.base_rtt, acked / rtt)
            f.bound[whole] = bound[whole]
            drop = whole & (bound < f.cwnd)
            f.cwnd[drop] = np.maximum(bound, MIN_WINDOW)[drop]
            f.cycle_start[ends] = f.now[ends]
            f.cycle_acked[ends] = 0.0
            f.cycle_size[ends] = np.minimum(f.cwnd, f.inflight + f.acked)[ends]
            f.cycle_end[ends] = (f.delivered + f.cycle_size)[ends]
        has = ~np.isnan(f.bound)
        below = has & (f.cwnd < f.bound)
        up = np.minimum(f.cwnd * np.exp2(f.h / f.rtt), np.where(has, f.bound, 0.0))
        np.copyto(f.cwnd, np.where(below & moving, up, f.cwnd))
        if (~has).any():                      # Reno until the first bound
            cwnd = f.cwnd.copy()
            f.cwnd += f.slow_start() / f.rtt
            np.copyto(f.cwnd, np.where(has, cwnd, f.cwnd))

    def on_loss(self, f: FlowArrays, m: np.ndarray, kind: str) -> None:
        super().on_loss(f, m, kind)
        f.bound[m] = math.nan
        f.cycle_start[m] = math.nan
        f.cycle_end[m] = -1.0


PseudoRate.fluid = PseudoRateFluid
