"""DCTCP: Data Center TCP (Alizadeh et al., SIGCOMM 2010; RFC 8257).

Sources: M. Alizadeh, A. Greenberg, D. A. Maltz, J. Padhye, P. Patel,
B. Prabhakar, S. Sengupta, M. Sridharan, "Data Center TCP (DCTCP)", ACM
SIGCOMM 2010; S. Bensley et al., "Data Center TCP (DCTCP): TCP Congestion
Control for Data Centers", RFC 8257, 2017 (§3.3 sender, §4 parameters);
Linux ``net/ipv4/tcp_dctcp.c`` (v6.x) for the defaults.

With ``F`` the fraction of segments acknowledged in the last window of data
that carried ECN's CE mark (counted from the receiver's echo):

* once per window of data: ``alpha ← (1 − g)·alpha + g·F`` (RFC 8257 §3.3);
* on congestion marks, at most once per window (the sender's RFC 3168 rule,
  :meth:`~ccsim.algorithms.CongestionControl.on_ecn`):
  ``ssthresh = max(cwnd·(1 − alpha/2), 2)``, ``cwnd = ssthresh``;
* on a loss: Reno's ``ssthresh = max(cwnd/2, 2)`` (Linux's
  ``dctcp_react_to_loss``), recovery as the flow's strategy;
* growth: Reno's slow start and congestion avoidance.

Defaults (Linux ``tcp_dctcp.c``): ``g = 1/16`` (``dctcp_shift_g = 4``; the
paper's and RFC 8257 §4.2's 1/16), ``alpha_init = 1`` (``dctcp_alpha_on_init
= DCTCP_MAX_ALPHA``: the first marks halve the window, conservative until
alpha has been measured; RFC 8257 §4.2 also allows 0). Flows are
ECN-capable by default (``Flow(ecn=None)``): Linux negotiates ECN for DCTCP
and falls back to Reno without it, as this class does when no marks come.
The marks come from a queue that marks: ``ccsim.StepMark(K=...)`` is the
paper's switch (mark when ``K`` or more packets wait).

Differences from the source:

* A "window of data" ends when the segments delivered since the last update
  reach the flight outstanding then (Linux: ``snd_una ≥ next_seq``); the two
  agree without losses. Windows that end in loss recovery are closed at the
  first ACK after it (the law sees no ACKs in recovery).
* On the ACK that closes a window and carries marks, the reduction uses the
  previous alpha (the sender tells the law of echoes before the ACK); Linux
  updates alpha first.
* ``alpha`` is a float (Linux: fixed point in 1/1024, with
  ``min_not_zero`` keeping it from sticking above 0).
* The reduction is immediate (Linux reaches ``ssthresh`` through CWR/PRR
  over the next RTT).
"""

from __future__ import annotations

import numpy as np

from .base import MIN_SSTHRESH, Ack, EcnEcho, Loss
from .fluid import FlowArrays, FluidLaw
from .registry import register
from .reno import Reno

# The floor of a DCTCP reduction is RFC 5681's MIN_SSTHRESH (Linux dctcp_ssthresh's 2U).
ALPHA_DIVISOR = 2.0
"""A window of marks gives up ``α/2`` of itself: RFC 8257 §3.3's
``cwnd·(1 − α/2)``, the fluid model's ``W·α·F/(2R)``."""
LOSS_DIVISOR = 2.0
"""A loss halves ``cwnd`` (Linux ``dctcp_react_to_loss``)."""


@register
class DCTCP(Reno):
    """DCTCP window law: Reno growth, reduction by the marked fraction."""

    name = "dctcp"
    recovery = "prr"
    ecn = True
    param_space = {"g": (1.0 / 1024.0, 1.0), "alpha_init": (0.0, 1.0)}
    properties = ()  # the loss rule halves cwnd, not FlightSize: not Reno's check

    def __init__(self, *, g: float = 1.0 / 16.0, alpha_init: float = 1.0) -> None:
        self.g = g
        self.alpha_init = alpha_init

    def start(self, initial_window: float, mss: int) -> None:
        super().start(initial_window, mss)
        self.alpha = float(self.alpha_init)
        self.marked = 0             # CE marks echoed in the current window (segments)
        self.window_from = 0.0      # delivered count when the window began (segments)
        self.window_end = 0.0       # ... and when it ends (segments)

    def on_ce_echo(self, echo: EcnEcho) -> None:
        self.marked += echo.marked

    def on_ack(self, ack: Ack) -> None:
        if ack.delivered >= self.window_end:  # a window of data acknowledged
            delivered = ack.delivered - self.window_from
            fraction = min(self.marked / delivered, 1.0) if delivered > 0 else 0.0
            self.alpha = (1.0 - self.g) * self.alpha + self.g * fraction
            self.marked = 0
            self.window_from = ack.delivered
            self.window_end = ack.delivered + ack.inflight
        super().on_ack(ack)

    def on_ecn(self, echo: EcnEcho) -> None:
        self.ssthresh = max(self.cwnd * (1.0 - self.alpha / ALPHA_DIVISOR), MIN_SSTHRESH)
        self.cwnd = self.ssthresh

    def ssthresh_after(self, loss: Loss) -> float:
        return max(self.cwnd / LOSS_DIVISOR, MIN_SSTHRESH)


def track_marks(f: FlowArrays, g: float) -> tuple[np.ndarray, np.ndarray]:
    """One step of DCTCP's bookkeeping of marks, in place on ``f``: ``F``, the
    fraction of the step's acknowledged segments whose marks were echoed;
    ``alpha``'s EWMA (gain ``g`` per window) over the step's windows; slow
    start ended at the first echoes with one cut. Returns ``F`` and the time
    each flow spends in congestion avoidance in the step (s). DCTCP's and
    Prague's fluid laws."""
    h, rtt, cwnd = f.h, f.rtt, f.cwnd
    F = np.where(f.acked > 0, np.minimum(f.marked / np.maximum(f.acked, 1e-300), 1.0), 0.0)
    F = np.where(h > 0, F, 0.0)
    alpha = f.alpha
    alpha[...] = F + (alpha - F) * (1.0 - g) ** (h / rtt)
    cut = (cwnd < f.ssthresh) & (F > 0)
    if cut.any():
        f.ssthresh[cut] = np.maximum(cwnd * (1.0 - alpha / ALPHA_DIVISOR), MIN_SSTHRESH)[cut]
        cwnd[cut] = f.ssthresh[cut]
    return F, f.slow_start()


def marked_growth(f: FlowArrays, a: np.ndarray, b: np.ndarray, h_ca: np.ndarray) -> None:
    """Integrate dW/dt = a − b·W (segments per s: growth ``a``, cut rate ``b``
    from the marked fraction) in closed form over ``h_ca`` seconds of
    congestion avoidance, in place on ``f.cwnd``; a marked flow stays in
    congestion avoidance (ssthresh follows cwnd down) and falls no lower than
    ``MIN_SSTHRESH``. DCTCP's and Prague's fluid laws."""
    cwnd = f.cwnd
    decay = np.exp(-b * h_ca)
    marked = b > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        reduced = np.where(marked, a / b + (cwnd - a / b) * decay, cwnd + a * h_ca)
    floor = np.where(marked, np.minimum(cwnd, MIN_SSTHRESH), -np.inf)
    np.copyto(cwnd, np.maximum(reduced, floor))
    np.copyto(f.ssthresh, np.where(marked & (h_ca > 0), np.minimum(f.ssthresh, cwnd),
                                   f.ssthresh))


class DCTCPFluid(FluidLaw):
    """DCTCP in the fluid engine: the fluid model of Alizadeh, Javanmard &
    Prabhakar, "Analysis of DCTCP: Stability, Convergence, and Fairness"
    (SIGMETRICS 2011, eqs. 1–3), with ``F`` the fraction of the step's
    acknowledged segments whose marks were echoed (the engine delays marks
    by an RTT, the paper's ``p(t − R*)``)::

        dW/dt = 1/R − W·alpha·F / (2R)
        dalpha/dt = g/R · (F − alpha)

    integrated exactly over each step (``F`` constant within it): ``alpha``
    as the once-per-window EWMA of RFC 8257 §3.3 applied ``h/R`` times,
    ``W`` as the linear equation's closed form. Slow start is Reno's, ended
    by the first echoes with one cut ``W·(1 − alpha/2)`` (as the window law
    does); a loss halves ``cwnd`` (Linux's ``dctcp_react_to_loss``).

    Differences from the window law: the reduction is spread over the RTT
    of marked ACKs in proportion to the marked fraction (the paper's model),
    not one cut by ``alpha/2`` per window that carried any mark; the window
    is kept at or above 2 segments (``MIN_SSTHRESH``) by a floor, not by
    ``ssthresh``'s.
    """

    scalar_params = ("alpha_init",)  # the initial value of the state alpha

    marks = True

    def __init__(self, cc: "DCTCP") -> None:
        super().__init__(cc)
        self.state = {"alpha": float(cc.alpha_init)}

    def grow(self, f: FlowArrays) -> None:
        F, h_ca = track_marks(f, self.cc.g)
        marked_growth(f, 1.0 / f.rtt, f.alpha * F / (ALPHA_DIVISOR * f.rtt), h_ca)

    def ssthresh_after(self, f: FlowArrays, m: np.ndarray, kind: str) -> np.ndarray:
        return np.maximum(f.cwnd[m] / LOSS_DIVISOR, MIN_SSTHRESH)


DCTCP.fluid = DCTCPFluid



