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

from .base import Ack, EcnEcho, Loss
from .registry import register
from .reno import Reno


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
        self.ssthresh = max(self.cwnd * (1.0 - self.alpha / 2.0), 2.0)
        self.cwnd = self.ssthresh

    def ssthresh_after(self, loss: Loss) -> float:
        return max(self.cwnd / 2.0, 2.0)



