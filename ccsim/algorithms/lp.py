"""TCP-LP: low-priority service, yielding to other flows at the first sign of delay.

Source: A. Kuzmanovic, E. W. Knightly, "TCP-LP: Low-Priority Service via
End-Point Congestion Control", IEEE/ACM Transactions on Networking 14(4),
2006 (first at IEEE INFOCOM 2003); as implemented in Linux
``net/ipv4/tcp_lp.c`` (Wong Hoi Sing Edison and Hung Hing Lun Mike; read in
the 6.x source).

TCP-LP uses the growth of delay as an *early congestion indication* (ECI),
before a competing Reno flow would see any loss, and backs off then:

* delay signal: each sample ``d`` updates ``d_min``, ``d_max`` and the
  smoothed delay ``sd ← (1 − γ)·sd + γ·d`` (γ = 1/8);
* ECI on an ACK when ``sd ≥ d_min + δ·(d_max − d_min)`` (δ = 0.15);
* reaction: if the previous ECI is less than the inference time-out
  ``itt·RTT`` ago (the *inference phase*), ``cwnd = 1``; otherwise
  ``cwnd = max(cwnd/2, 1)``. Either way the inference phase (re)starts, and
  ``d_min = sd``, ``d_max = 2·sd`` (Linux's reset, so one ECI does not trigger
  the next);
* growth: none during the inference phase; outside it, Reno's
  (:mod:`ccsim.algorithms.reno`: slow start below ``ssthresh``, then one
  segment per RTT). An ECI also sets ``ssthresh = max(cwnd, 2)``, so that
  growth resumes additively (the paper's AI phase);
* losses as Reno: ``ssthresh = max(FlightSize/2, 2)``, ``cwnd = 1`` after a
  timeout.

``d_max`` forgets its largest value (Linux's ``owd_max_rsv``): a new record
makes the *previous* record the maximum, so one outlier does not widen the
threshold.

Differences from the source:

* **RTT, not one-way delay.** The paper measures one-way delay with TCP
  timestamps (and Linux estimates the remote clock rate for it). ccsim has no
  timestamps; its reverse path carries only ACKs and never queues, so
  ``RTT − min RTT`` *is* the forward queueing delay, and the RTT sample stands
  in for the one-way delay. On paths whose reverse direction queues, this
  would react to reverse congestion too. Like Linux's ``rcv_tsval −
  rcv_tsecr``, a sample includes the receiver's delayed-ACK wait.
* **The two clocks' offset** (``clock_offset``, s, added to every sample).
  Linux's one-way delay is the receiver's timestamp minus the echoed sender's:
  it carries the offset between the two timestamp clocks, random per
  connection since Linux 4.10 (``secure_tcp_ts_off``). The thresholds
  ``d_min + δ(d_max − d_min)`` ignore an offset, but the reset after an ECI
  (``d_max = 2·sd``) does not: it spans the offset, so the next ECI needs the
  smoothed delay ``0.15 × offset`` above the reset level, which no queue
  reaches once the offset is large: Linux's LP then runs as Reno after its
  first ECI. The Linux stack sets a large offset (docs/stack.md), the class
  default is the paper's clocks (0). With no offset and delayed ACKs, the
  40 ms delayed-ACK wait of a lone segment and the quick ACK of the next pair
  swing the delay by 40 ms: the smoothed delay, still high when ``d_min``
  falls, fires ECI after ECI in the inference phase and holds ``cwnd`` at 1
  (0.34 Mb/s of 10 in 3 s, 20 ms, 1 % loss). Offsets above 2^29 ms make
  Linux's 32-bit ``sowd << 3`` wrap; ccsim does not model that arithmetic.
* The ECI reaction runs in ``on_ack`` (outside loss recovery only, where
  ccsim's recovery strategies own ``cwnd``); Linux runs it in ``pkts_acked``
  on every ACK. Delay samples are taken on every valid RTT sample (recovery
  included), as in Linux.
* As Linux, an ECI fires whenever ``sowd`` is not below ``d_min + δ(d_max −
  d_min)`` — also when all three are equal, so the first RTT sample of a
  connection halves its window, and a delay that jumps tenfold right after
  (which "forget the maximum" leaves with ``d_max = d_min``) halves it again.
  (ccsim used to wait for ``d_max > d_min`` and missed such signals.)
* As Linux (``tcp_lp_cong_avoid`` runs after ``tcp_lp_pkts_acked``, with the
  inference flag taken before the ECI), the ACK that fires an ECI outside the
  inference phase takes its Reno step after the halving, with the threshold
  as it stood (below it, slow start: ``cwnd`` 4 becomes 2, then 3); an ECI
  inside the inference phase (``cwnd = 1``) takes none. The fluid law leaves
  this one ACK's step out (below a step's resolution).
* The inference time-out is ``itt`` times the latest RTT sample; Linux uses
  3 × (now − echoed timestamp), the RTT of the segment this ACK acknowledges.
* **ssthresh at an ECI**, by default (set after that ACK's Reno step, to
  the halved window; ``eci_ssthresh=False`` leaves it, as Linux does, and
  the Linux stack sets that). Linux changes only ``cwnd`` at an ECI, so
  below ``ssthresh`` (always, before the first loss) it slow-starts again
  after the inference phase. On the paper's clocks, with RTT as the delay
  signal, those slow-start bursts raise the delay and fire the next ECI
  long before the pipe is full: a lone flow used 21 % of a 10 Mb/s, 40 ms
  link. The law's default sets ``ssthresh`` to the reduced window, so
  growth after an ECI is additive, as the paper's AI phase describes (84 %
  on the same link). Under the Linux stack's timestamp offset the first ECI
  is the last (``clock_offset``), and the paper's rule would end slow start
  there, at half the initial window: the stack gives Linux's rule.
* ``ssthresh`` on loss halves ``loss.inflight``, as ccsim's Reno: the
  window in the Linux stack, as Linux's ``tcp_reno_ssthresh`` has it
  (``Scenario.loss_flight``).

Defaults and their sources:

* ``delta = 0.15`` — the paper's threshold parameter δ; Linux ``15 * (owd_max
  − owd_min) / 100``.
* ``gamma = 0.125`` — smoothing gain of the delay; Linux's ``sowd`` (7/8 old,
  1/8 new).
* ``itt = 3.0`` (RTTs) — inference time-out; Linux ``lp->inference = 3 *
  delta`` with delta the RTT of the ACKed segment.
* ``clock_offset = 0.0`` (s) — the paper's clocks; the Linux stack sets
  1000 s, standing for Linux's random timestamp offset.
* ``eci_ssthresh = True`` — an ECI also sets ``ssthresh`` (the paper's AI
  phase, above); ``False``: only ``cwnd`` changes (``tcp_lp_pkts_acked``;
  the Linux stack's setting).
"""

from __future__ import annotations

import math

import numpy as np

from .base import MIN_SSTHRESH, Ack, RttSample
from .fluid import FlowArrays, FluidLaw, any_
from .registry import register
from .reno import Reno, refuse_extra_ack

ECI_MAX_FACTOR = 2.0
"""After an early congestion indication ``d_max = ECI_MAX_FACTOR · sd``
(and ``d_min = sd``): Linux ``tcp_lp_pkts_acked``."""
ECI_DIVISOR = 2.0
"""An ECI outside the inference phase halves ``cwnd`` (Kuzmanovic & Knightly §3.2)."""
MIN_WINDOW = 1.0
"""``cwnd`` after an ECI inside the inference phase, and the floor of the
halving outside it (segments; Linux: ``1U``)."""


@register
class LP(Reno):
    """TCP-LP window law (Reno's growth, early backing off) with PRR recovery."""

    name = "lp"
    recovery = "prr"  # Linux: SACK recovery with PRR for every law (tcp_input.c)
    param_space = {"delta": (0.01, 1.0), "gamma": (0.01, 1.0), "itt": (0.5, 10.0),
                   "clock_offset": (0.0, 1e4)}

    def __init__(self, *, delta: float = 0.15, gamma: float = 0.125, itt: float = 3.0,
                 clock_offset: float = 0.0, eci_ssthresh: bool = True,
                 extra_ack: bool = False) -> None:
        self.delta = delta  # ECI threshold, fraction of (d_max − d_min)
        self.gamma = gamma  # EWMA gain of the smoothed delay
        self.itt = itt      # inference time-out (RTTs)
        self.clock_offset = clock_offset  # added to every delay sample (s)
        self.eci_ssthresh = eci_ssthresh  # an ECI sets ssthresh too (paper), or only cwnd (Linux)
        self.extra_ack = extra_ack  # Reno's growth as 2.6.3x-3.x stepped it (reno.py)

    def start(self, initial_window: float, mss: int) -> None:
        super().start(initial_window, mss)
        self.sowd = math.nan          # smoothed delay (s); NaN before the first sample
        self.owd_min = math.inf       # d_min (s)
        self.owd_max = 0.0            # d_max (s)
        self.owd_max_rsv = 0.0        # the record d_max will fall back to (s)
        self.last_rtt = math.nan      # latest RTT sample (s)
        self.last_drop: float | None = None  # time of the last ECI (s)

    def max_growth_per_rtt(self, cwnd: float) -> float:
        # Reno's one segment per RTT outside the inference phase, none in it.
        return 1.0

    # -- the rule ------------------------------------------------------------------
    def threshold(self) -> float:
        """Smoothed delay at and above which an ECI fires: ``d_min + δ(d_max − d_min)``."""
        return self.owd_min + self.delta * (self.owd_max - self.owd_min)

    def in_inference(self, now: float) -> bool:
        """Within ``itt`` RTTs of the last ECI."""
        if self.last_drop is None or not math.isfinite(self.last_rtt):
            return False
        return now - self.last_drop < self.itt * self.last_rtt

    # -- hooks ---------------------------------------------------------------------
    def on_rtt(self, sample: RttSample) -> None:
        self.last_rtt = sample.rtt
        d = sample.rtt + self.clock_offset
        self.owd_min = min(self.owd_min, d)
        if d > self.owd_max:  # Linux: "always forget the max of the max"
            if d > self.owd_max_rsv:
                self.owd_max = d if self.owd_max_rsv == 0.0 else self.owd_max_rsv
                self.owd_max_rsv = d
            else:
                self.owd_max = d
        if math.isnan(self.sowd):
            self.sowd = d
        else:
            self.sowd += self.gamma * (d - self.sowd)

    def on_ack(self, ack: Ack) -> None:
        inference = self.in_inference(ack.now)
        if self.sowd >= self.threshold():  # Linux: not "sowd < threshold", even if all equal
            # Early congestion indication.
            self.owd_min, self.owd_max = self.sowd, ECI_MAX_FACTOR * self.sowd
            self.owd_max_rsv = ECI_MAX_FACTOR * self.sowd
            self.cwnd = MIN_WINDOW if inference else max(self.cwnd / ECI_DIVISOR, MIN_WINDOW)
            reduced = self.cwnd
            if not inference:  # Linux: this ACK's Reno step, after the halving
                super().on_ack(ack)
            if self.eci_ssthresh:  # then additive increase (the paper's AI phase)
                self.ssthresh = max(reduced, MIN_SSTHRESH)
            self.last_drop = ack.now
            return
        if not inference:
            super().on_ack(ack)


class LPFluid(FluidLaw):
    """TCP-LP in the fluid engine.

    Delay signal: the current RTT plus ``clock_offset``, as :class:`LP` uses its
    RTT samples (base RTT plus the forward queueing delay ``rtt − min_rtt``, ccsim's reverse
    path never queuing: the one-way delay up to a constant; the thresholds
    ``d_min + δ(d_max − d_min)`` see only the queueing part, the reset
    ``d_max = 2·sd`` sees the whole RTT, as in the class).

    Per RTT sample the class updates ``d_min``, ``d_max`` (with its
    forget-the-record reserve) and ``sd ← sd + γ(d − sd)``; a step holds
    ``acked`` samples of about the same RTT, so ``sd`` moves by
    ``1 − (1 − γ)^acked`` of the way (the first sample sets it). Samples are
    taken in every step with deliveries, recovery included (the class's
    ``on_rtt``). Per ACK outside recovery, at most once per step here: an ECI
    when ``d_max > d_min`` and ``sd ≥`` the threshold — ``d_min = sd``,
    ``d_max = 2·sd``, ``cwnd = 1`` inside the inference phase (``itt`` ×
    the latest RTT since the last ECI) or ``max(cwnd/2, 1)`` outside,
    ``ssthresh = max(cwnd, 2)`` unless ``eci_ssthresh`` is off (Linux's
    rule: the window alone, so slow start goes on); otherwise Reno's growth
    (slow start, then one segment per RTT) for the part of the step after
    the inference phase ends. Losses as Reno.
    """

    round_steps = True  # an inference lasts itt RTTs; Reno between

    state = {"sowd": math.nan, "owd_min": math.inf, "owd_max": 0.0, "owd_max_rsv": 0.0,
             "last_rtt": math.nan, "last_drop": math.nan}

    def __init__(self, cc: LP) -> None:
        refuse_extra_ack(cc)  # refused once, as the batch is built
        super().__init__(cc)

    def grow(self, f: FlowArrays) -> None:
        cc = self.cc
        sampled = f.acked > 0
        if any_(sampled):                     # on_rtt: delay statistics
            np.copyto(f.last_rtt, f.rtt, where=sampled)
            d = f.rtt + cc.clock_offset
            np.copyto(f.owd_min, np.minimum(f.owd_min, d), where=sampled)
            record = sampled & (d > f.owd_max)
            if any_(record):  # a new record: past the reserve, the reserve becomes d_max
                beyond = record & (d > f.owd_max_rsv)
                np.copyto(f.owd_max, np.where(beyond & (f.owd_max_rsv != 0.0), f.owd_max_rsv, d),
                          where=record)
                np.copyto(f.owd_max_rsv, d, where=beyond)
            weight = 1.0 - (1.0 - cc.gamma) ** f.acked   # the first sample sets sd
            np.copyto(f.sowd, np.where(np.isnan(f.sowd), d, f.sowd + weight * (d - f.sowd)),
                      where=sampled)
        moving = (f.h > 0) & sampled
        if not any_(moving):
            return
        now = f.now
        ends = f.last_drop + cc.itt * f.last_rtt          # NaN: never an ECI
        inference = now < ends
        eci = moving & (f.sowd >= f.owd_min + cc.delta * (f.owd_max - f.owd_min))
        if any_(eci):
            f.owd_min[eci] = f.sowd[eci]
            f.owd_max[eci] = ECI_MAX_FACTOR * f.sowd[eci]
            f.owd_max_rsv[eci] = ECI_MAX_FACTOR * f.sowd[eci]
            f.cwnd[eci] = np.where(inference, MIN_WINDOW,
                                   np.maximum(f.cwnd / ECI_DIVISOR, MIN_WINDOW))[eci]
            sets = eci & (np.asarray(cc.eci_ssthresh) != 0)  # the paper's rule (Linux: cwnd alone)
            f.ssthresh[sets] = np.maximum(f.cwnd[sets], MIN_SSTHRESH)
            f.last_drop[eci] = now[eci]
        # Reno's growth for the part of the step outside the inference phase
        h = f.h
        left = np.where(inference, np.minimum(np.maximum(now + h - ends, 0.0), h), h)
        f.cwnd += f.slow_start(h=np.where(moving & ~eci, left, 0.0)) / f.rtt


LP.fluid = LPFluid
