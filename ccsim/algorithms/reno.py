"""Reno: the standard TCP window law (Jacobson 1988; RFC 5681).

Source: M. Allman, V. Paxson, E. Blanton, "TCP Congestion Control",
RFC 5681, 2009, §3.1 (window law) and §3.2 (fast retransmit / fast
recovery, which ccsim keeps in :mod:`ccsim.recovery.reno`).

Update rules, with ``acked`` the segments newly acknowledged by an ACK:

* slow start (``cwnd < ssthresh``): ``cwnd += acked``, and whatever would
  carry ``cwnd`` past ``ssthresh`` is applied in congestion avoidance instead;
* congestion avoidance: ``cwnd += acked / cwnd`` — about one segment per RTT
  (RFC 5681 eq. 3);
* on loss: ``ssthresh = max(FlightSize / 2, 2)`` (RFC 5681 eq. 4); after a
  timeout ``cwnd = 1`` (the loss window). FlightSize is ``Loss.inflight``,
  the stack's flight at a loss (``Scenario.loss_flight``): in the Linux
  and ns-2 stacks the window, as ``tcp_reno_ssthresh``'s ``max(snd_cwnd >>
  1, 2)`` and ns-2's ``slowdown`` halve it.

Differences from the source:

* Slow start counts every acknowledged segment (RFC 3465 byte counting with no
  limit L, as Linux's ``tcp_slow_start`` does in ``net/ipv4/tcp_cong.c``,
  v6.x); RFC 5681 allows at most one segment per ACK. The two agree when
  every segment is ACKed (the default; ``delayed_ack=False``).
* The window is a float and grows continuously in congestion avoidance;
  Linux's ``tcp_cong_avoid_ai`` adds whole segments after ``cwnd`` ACKed
  segments. Both add one segment per window of ACKs.

``extra_ack = True`` (default ``False``, mainline's): the 2.6.3x–3.x kernels'
``tcp_cong_avoid_ai`` (Esterhuizen & Krzesinski's testbed) compared its
counter with ``w`` *before* counting the ACK in hand, so the counter reached
``w`` on the ``w``-th ACK and the window stepped on the next one: one
segment per ``w + 1`` ACKs, ``cwnd += acked/(cwnd + 1)`` here (mainline
counts first and steps after ``w``). Laws with the same counter take the
keyword too (:func:`ai_step`).
"""

from __future__ import annotations

import math

import numpy as np

from .base import MIN_SSTHRESH, Ack, CongestionControl, Loss
from .fluid import FlowArrays, FluidLaw
from .registry import register


def ai_step(acked: float, w: float, extra_ack: bool) -> float:
    """Segments an ACK adds under a one-segment-per-``w`` counter (Linux's
    ``tcp_cong_avoid_ai`` and the counters written like it): ``acked/w``, or
    ``acked/(w + 1)`` with ``extra_ack``, the 2.6.3x–3.x kernels' step on the
    ACK after the counter reached ``w``."""
    return acked / (w + 1.0) if extra_ack else acked / w


def refuse_extra_ack(cc: CongestionControl) -> None:
    """The fluid laws' refusal of ``extra_ack`` (the packet engine's alone):
    the one ACK more per step is a counter's, which no fluid law keeps."""
    if np.any(getattr(cc, "extra_ack", False)):
        from ..errors import packet_only
        raise packet_only("params.extra_ack", True, "False",
                          "the step on the ACK after the counter is a per-ACK rule")


def one_segment_per_window_of_acks(before: dict, event: object, after: dict) -> str | None:
    """A rule of Reno's law (in :attr:`Reno.properties`, for ``ccsim.testing``;
    laws that keep Reno's growth declare it too, as Westwood+ does).

    Congestion avoidance: RFC 5681 eq. (3), ``cwnd += 1/cwnd`` per segment
    ACKed — one segment per RTT of ACKs (``cwnd`` ACKs of one segment each),
    checked exactly (to float tolerance) over a whole round of ACKs."""
    acks = getattr(event, "acks", None)  # a round of ACKs (ccsim.testing.AckRound)
    if acks is None or before["cwnd"] < before["ssthresh"]:
        return None
    expected = before["cwnd"]
    for ack in acks:
        expected += ack.acked / expected
    if not math.isclose(after["cwnd"], expected, rel_tol=1e-9, abs_tol=1e-9):
        return (f"congestion avoidance: one RTT of {len(acks)} ACKs took cwnd from "
                f"{before['cwnd']!r} to {after['cwnd']!r}; RFC 5681 eq. 3 gives {expected!r} "
                f"(+{expected - before['cwnd']:.6g} segments)")
    return None


def halves_on_loss(before: dict, event: object, after: dict) -> str | None:
    """A rule of Reno's law (in :attr:`Reno.properties`; laws that keep
    Reno's decrease declare it too, as Vegas does): on a loss
    ``ssthresh = max(FlightSize / 2, 2)`` (RFC 5681 eq. 4)."""
    if not isinstance(event, Loss):
        return None
    expected = max(event.inflight / 2.0, MIN_SSTHRESH)
    if not math.isclose(after["ssthresh"], expected, rel_tol=1e-9, abs_tol=1e-9):
        return (f"{event.kind} loss with inflight={event.inflight!r}: ssthresh became "
                f"{after['ssthresh']!r}; RFC 5681 eq. 4 gives max(inflight/2, 2) = {expected!r}")
    return None


@register
class Reno(CongestionControl):
    """Reno window law with Reno fast recovery (RFC 5681)."""

    name = "reno"
    recovery = "reno"
    properties = (one_segment_per_window_of_acks, halves_on_loss)
    extra_ack = False  # for laws built on Reno's growth whose keywords leave it out

    def __init__(self, *, extra_ack: bool = False) -> None:
        self.extra_ack = extra_ack  # 2.6.3x-3.x tcp_cong_avoid_ai: a step per cwnd + 1 ACKs

    def max_growth_per_rtt(self, cwnd: float) -> float:
        # RFC 5681 eq. 3: cwnd += SMSS*SMSS/cwnd per ACK, at most one segment per RTT.
        return 1.0

    def rate_halving_floor(self) -> float:
        """``tcp_reno_min_cwnd``, this law's ``min_cwnd`` op in Linux
        2.6.x–3.1: ``ssthresh/2`` (segments)."""
        return self.ssthresh / 2.0

    def on_ack(self, ack: Ack) -> None:
        if self.cwnd >= self.ssthresh:  # congestion avoidance (slow_start would pass it all)
            self.cwnd += ai_step(ack.acked, self.cwnd, self.extra_ack)
            return
        acked = self.slow_start(ack.acked)
        if acked:
            self.cwnd += ai_step(acked, self.cwnd, self.extra_ack)


class RenoFluid(FluidLaw):
    """Reno in the fluid engine: slow start doubles ``cwnd`` per RTT up to
    ``ssthresh``; congestion avoidance adds one segment per RTT
    (``dcwnd/dt = 1/RTT``, RFC 5681 eq. 3 with a window of ACKs per RTT);
    a loss sets ``ssthresh = max(FlightSize/2, 2)`` (eq. 4)."""

    long_steps = True  # linear between losses

    def __init__(self, cc: CongestionControl) -> None:
        refuse_extra_ack(cc)  # refused once, as the batch is built
        super().__init__(cc)

    def grow(self, f: FlowArrays) -> None:
        f.cwnd += f.slow_start() / f.rtt


Reno.fluid = RenoFluid
