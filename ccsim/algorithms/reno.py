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
"""

from __future__ import annotations

import math

from .base import MIN_SSTHRESH, Ack, CongestionControl, Loss
from .fluid import FlowArrays, FluidLaw
from .registry import register


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

    def max_growth_per_rtt(self, cwnd: float) -> float:
        # RFC 5681 eq. 3: cwnd += SMSS*SMSS/cwnd per ACK, at most one segment per RTT.
        return 1.0

    def rate_halving_floor(self) -> float:
        """``tcp_reno_min_cwnd``, this law's ``min_cwnd`` op in Linux
        2.6.x–3.1: ``ssthresh/2`` (segments)."""
        return self.ssthresh / 2.0

    def on_ack(self, ack: Ack) -> None:
        if self.cwnd >= self.ssthresh:  # congestion avoidance (slow_start would pass it all)
            self.cwnd += ack.acked / self.cwnd
            return
        acked = self.slow_start(ack.acked)
        if acked:
            self.cwnd += acked / self.cwnd


class RenoFluid(FluidLaw):
    """Reno in the fluid engine: slow start doubles ``cwnd`` per RTT up to
    ``ssthresh``; congestion avoidance adds one segment per RTT
    (``dcwnd/dt = 1/RTT``, RFC 5681 eq. 3 with a window of ACKs per RTT);
    a loss sets ``ssthresh = max(FlightSize/2, 2)`` (eq. 4)."""

    long_steps = True  # linear between losses

    def grow(self, f: FlowArrays) -> None:
        f.cwnd += f.slow_start() / f.rtt


Reno.fluid = RenoFluid
