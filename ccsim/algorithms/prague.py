"""TCP Prague: the L4S team's scalable congestion control (RFC 9331 §4).

Sources: the L4S team's reference implementation, Linux
``net/ipv4/tcp_prague.c`` (github.com/L4STeam/linux, module version 0.6;
O. Tilmans, K. De Schepper, B. Briscoe); K. De Schepper, O. Tilmans,
B. Briscoe, "Prague Congestion Control", IETF draft
draft-briscoe-iccrg-prague-congestion-control; B. Briscoe et al., "The
Explicit Congestion Notification (ECN) Protocol for Low Latency, Low Loss,
and Scalable Throughput (L4S)", RFC 9331, 2023, §4 (the Prague
requirements); RFC 9768 (Accurate ECN feedback).

DCTCP's response made safe for the Internet. With ``F`` the fraction of
segments delivered in a round that the receiver reported CE-marked:

* **alpha** (an EWMA of ``F``, gain ``g = 1/16``, from 1): updated once per
  round trip of data, once marks have been seen; with RTT independence on,
  also no more often than once per ``rtt_target``.
* **Reduction** on marks (the ACK's newly marked segments, from Accurate
  ECN): ``cwnd −= alpha·cwnd/2`` and ``ssthresh = cwnd``, at most once per
  round trip of data (Linux's CWR state) and, with RTT independence on, no
  more often than once per ``rtt_target``; never in loss recovery.
* **Growth** per ACK on the segments it acknowledges that were *not*
  marked: slow start, then additive increase ``cwnd += acked·ai/cwnd``.
  ``ai`` is 1, or, with RTT independence (``rtt_scaling="rate"``, Linux's
  default ``RTT_CONTROL_RATE``) once ``rtt_transition`` rounds have passed
  since slow start and for ``srtt`` below ``rtt_target`` (and at most
  100 ms), ``(srtt/rtt_target)²``: a flow with a short RTT grows by one
  segment per ``rtt_target`` in rate, as a flow at the target RTT does.
  ``"scalable"`` and ``"additive"`` are the reference's other heuristics;
  ``"none"`` turns RTT independence off.
* **Pacing** at ``cwnd·MSS/srtt``, twice that while ``cwnd < ssthresh/2``.
* **Loss**: the window is halved (``ssthresh = max(cwnd/2, 2)``, recovery
  by PRR as Linux's), the classic fallback of Linux's ``prague_enter_loss``.
* **ECN**: the flow sends ECT(1) (``l4s``), needs Accurate ECN feedback
  (Linux's ``TCP_CONG_NEEDS_ACCECN``): ``Flow("prague")`` implies
  ``ecn="accecn"`` and refuses another setting. It reacts to marks itself
  (``own_ecn_response``): the sender's RFC 3168 rule is not applied.

Defaults (``tcp_prague.c``): ``g = 1/16`` (``PRAGUE_SHIFT_G = 4``),
``alpha`` from 1 (``PRAGUE_MAX_ALPHA``), ``rtt_target`` 25 ms
(``prague_rtt_target``), ``rtt_scaling`` ``"rate"``
(``prague_rtt_scaling = RTT_CONTROL_RATE``), ``rtt_transition`` 500 rounds
(``DEFAULT_RTT_TRANSITION``), RTT scaling only up to 100 ms
(``MAX_SCALED_RTT``), ``MIN_CWND`` 2.

Differences from the reference:

* Floats for ``alpha`` and ``cwnd`` (Linux: fixed point in 2⁻²⁰, with the
  fractional window ``frac_cwnd`` rounded up into ``snd_cwnd``); the
  reduction is applied at once, not one segment per ACK.
* The pacing rate counts the MSS, not the MTU (as ccsim's BBR); no TSO
  burst sizing (``prague_burst_shift``): ccsim sends one segment at a time.
* Growth ignores whether the flow is limited by its window
  (``tcp_is_cwnd_limited``), as ccsim's other laws do.
* Classic ECN bottleneck detection (``prague_ecn_fallback``, off by
  default in the reference) is not modelled.
* A round ends when the segments delivered since it began reach the flight
  outstanding then (Linux: ``snd_una ≥ next_seq``).
* The fluid engine runs :class:`PragueFluid`, DCTCP's fluid model with
  Prague's growth (see there); it has no model of DualPI2.
"""

from __future__ import annotations

import math

import numpy as np

from .base import MIN_SSTHRESH, Ack, CongestionControl, EcnEcho, Loss
from .dctcp import DCTCPFluid, marked_growth, track_marks
from .fluid import FlowArrays
from .registry import register

ALPHA_DIVISOR = 2.0
"""A reduction gives up ``alpha/2`` of the window (DCTCP's, RFC 8257 §3.3)."""
LOSS_DIVISOR = 2.0
"""A loss halves the window (``prague_enter_loss``)."""
MAX_SCALED_RTT = 0.1
"""RTT scaling applies up to this smoothed RTT (s): ``MAX_SCALED_RTT``, 100 ms."""
RTT_SCALINGS = ("none", "rate", "scalable", "additive")
"""``prague_rtt_scaling``'s heuristics: ``RTT_CONTROL_NONE``, ``_RATE``
(the default), ``_SCALABLE`` and ``_ADDITIVE``."""
SCALABLE_R0 = 2.0 ** 14 * 1e-6
"""``RTT_CONTROL_SCALABLE``'s R0 (s): 2¹⁴ µs ≈ 16 ms."""
SCALABLE_R1 = (2.0 ** 10 + 2.0 ** 9) * 1e-6
"""``RTT_CONTROL_SCALABLE``'s R1 (s): 1536 µs ≈ 1.5 ms."""


def scaled_increase(scaling: str, srtt: float, rtt_target: float) -> float:
    """The additive increase per window of ACKs (segments) under RTT
    independence ``scaling``, for a smoothed RTT ``srtt`` (s): the
    reference's ``ai_ack_increase`` heuristics; 1 for ``"none"``, an
    unknown RTT, or one above ``MAX_SCALED_RTT``."""
    if scaling == "none" or not srtt > 0.0 or srtt > MAX_SCALED_RTT:
        return 1.0
    if scaling == "scalable":
        r0, r1 = SCALABLE_R0, SCALABLE_R1
        return (r0 / 8.0 + min(max(srtt - r1, 0.0), r0)) * srtt / (r0 * r0)
    target = rtt_target + (srtt if scaling == "additive" else 0.0)
    return 1.0 if srtt >= target else (srtt / target) ** 2


@register
class Prague(CongestionControl):
    """TCP Prague window law: DCTCP's reduction, RTT-independent growth, pacing."""

    name = "prague"
    recovery = "prr"
    ecn = "accecn"
    l4s = True
    own_ecn_response = True
    min_cwnd = 1.0
    param_space = {"g": (1.0 / 1024.0, 1.0), "alpha_init": (0.0, 1.0),
                   "rtt_target": (1e-3, 0.1), "rtt_transition": (0, 10_000)}
    properties = ()

    def __init__(self, *, g: float = 1.0 / 16.0, alpha_init: float = 1.0,
                 rtt_target: float = 0.025, rtt_scaling: str = "rate",
                 rtt_transition: int = 500) -> None:
        if rtt_scaling not in RTT_SCALINGS:
            from ..errors import ScenarioError
            raise ScenarioError("rtt_scaling", rtt_scaling,
                                "'rate' (the default), 'scalable', 'additive' or 'none'")
        self.g = g
        self.alpha_init = alpha_init
        self.rtt_target = rtt_target
        self.rtt_scaling = rtt_scaling
        self.rtt_transition = rtt_transition

    def start(self, initial_window: float, mss: int) -> None:
        super().start(initial_window, mss)
        self.alpha = float(self.alpha_init)
        self.saw_ce = False          # no alpha update before the path shows an AQM
        self.marked = 0              # CE-marked segments reported in the round
        self.unmarked_pending = 0    # marked segments of the next ACK, not grown on
        self.round = 0               # rounds since slow start ended
        self.round_from = 0.0        # delivered when the round began (segments)
        self.round_end = 0.0         # ... and when it ends (segments)
        self.alpha_stamp = -math.inf  # last alpha update (s)
        self.cwr_stamp = -math.inf   # last reduction on marks (s)
        self.cwr_end = -1.0          # no reduction until delivered passes this
        self.in_loss = False         # between a loss and the first ACK after recovery
        self.ai = 1.0                # additive increase per window of ACKs (segments)

    # -- RTT independence --------------------------------------------------------
    def rtt_independent(self) -> bool:
        """RTT independence is in force: a heuristic chosen, out of slow
        start, and ``rtt_transition`` rounds past it."""
        return (self.rtt_scaling != "none" and self.cwnd >= self.ssthresh
                and self.round >= self.rtt_transition)

    def target(self, srtt: float) -> float:
        """The RTT the flow behaves as if it had (s)."""
        return self.rtt_target + (srtt if self.rtt_scaling == "additive" else 0.0)

    def ai_increase(self, srtt: float) -> float:
        """Segments added per window of unmarked ACKs (``prague_ai_ack_increase``)."""
        if self.round < self.rtt_transition:
            return 1.0
        return scaled_increase(self.rtt_scaling, srtt, self.rtt_target)

    # -- hooks -------------------------------------------------------------------
    def on_ce_echo(self, echo: EcnEcho) -> None:
        self.saw_ce = True
        self.marked += echo.marked
        self.unmarked_pending += echo.marked
        if self.in_loss or echo.delivered < self.cwr_end:
            return  # in loss recovery, or a reduction this round already (CWR)
        if self.rtt_independent() and echo.now - self.cwr_stamp < self.target(echo.srtt):
            return
        self.cwr_stamp = echo.now
        self.cwr_end = echo.delivered + echo.inflight
        self.cwnd = max(self.cwnd - self.alpha * self.cwnd / ALPHA_DIVISOR, MIN_SSTHRESH)
        self.ssthresh = self.cwnd
        self._pace(echo.srtt)

    def on_ack(self, ack: Ack) -> None:
        self.in_loss = False
        acked = ack.acked - self.unmarked_pending  # marked segments do not grow the window
        self.unmarked_pending = 0
        if acked > 0:
            if self.cwnd < self.ssthresh:
                room = self.ssthresh - self.cwnd
                self.cwnd += min(acked, room)
                acked = max(acked - room, 0.0)
            if acked > 0:
                self.cwnd += acked * self.ai / self.cwnd
        if ack.delivered >= self.round_end and self._ewma_due(ack):
            if self.saw_ce:
                delivered = ack.delivered - self.round_from
                fraction = min(self.marked / delivered, 1.0) if delivered > 0 else 0.0
                self.alpha = (1.0 - self.g) * self.alpha + self.g * fraction
                self.alpha_stamp = ack.now
            self.marked = 0
            self.round_from = ack.delivered
            self.round_end = ack.delivered + ack.inflight
            if self.cwnd >= self.ssthresh:
                self.round += 1
            self.ai = self.ai_increase(ack.srtt)
        self._pace(ack.srtt)

    def _ewma_due(self, ack: Ack) -> bool:
        """``prague_should_update_ewma``: a round elapsed, and with RTT
        independence in force, the target RTT since the last update."""
        return not self.rtt_independent() or ack.now - self.alpha_stamp >= self.target(ack.srtt)

    def _pace(self, srtt: float) -> None:
        """``prague_update_pacing_rate``: a window per smoothed RTT, doubled
        below half of ``ssthresh`` (slow start sends two segments per ACK)."""
        if not srtt > 0.0:
            return
        rate = self.cwnd * self.mss * 8.0 / srtt
        self.pacing_rate = 2.0 * rate if self.cwnd < self.ssthresh / 2.0 else rate

    def on_loss(self, loss: Loss) -> None:
        self.in_loss = True
        super().on_loss(loss)

    def ssthresh_after(self, loss: Loss) -> float:
        return max(self.cwnd / LOSS_DIVISOR, MIN_SSTHRESH)

    def max_growth_per_rtt(self, cwnd: float) -> float:
        return 1.0  # additive increase, scaled down (never up) by RTT independence


class PragueFluid(DCTCPFluid):
    """TCP Prague in the fluid engine: DCTCP's fluid model (Alizadeh,
    Javanmard & Prabhakar, SIGMETRICS 2011; :class:`~ccsim.algorithms.dctcp.DCTCPFluid`)
    with Prague's growth, ``F`` the fraction of the step's acknowledged
    segments whose marks were echoed::

        dW/dt = (1 − F)·ai/R − W·alpha·F / (2R)
        dalpha/dt = g/R · (F − alpha)

    Only unmarked segments grow the window; ``ai`` is the window law's
    (:meth:`Prague.ai_increase`), with the rounds since slow start counted
    as ``h/R`` per step. Slow start ends at the first echoes with one cut
    ``W·(1 − alpha/2)``; a loss halves the window.

    Differences from the window law: the reductions are spread over the
    marked ACKs in proportion to the marked fraction (the model's), with no
    once-per-``rtt_target`` limit; alpha is updated from the first step (the
    law waits for the first mark).
    """

    def __init__(self, cc: "Prague") -> None:
        super().__init__(cc)
        self.state = {"alpha": float(cc.alpha_init), "rounds": 0.0}

    def grow(self, f: FlowArrays) -> None:
        rtt, cwnd, cc = f.rtt, f.cwnd, self.cc
        F, h_ca = track_marks(f, cc.g)
        alpha = f.alpha
        rounds = f.rounds
        rounds += h_ca / rtt
        ai = np.ones_like(cwnd)
        on = rounds >= cc.rtt_transition
        if cc.rtt_scaling != "none" and on.any():
            ai[on] = [scaled_increase(cc.rtt_scaling, r, cc.rtt_target) for r in rtt[on]]
        # marked segments do not grow the window: growth (1 − F)·ai per RTT
        marked_growth(f, (1.0 - F) * ai / rtt, alpha * F / (ALPHA_DIVISOR * rtt), h_ca)


Prague.fluid = PragueFluid
