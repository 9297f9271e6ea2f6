"""TCP Hybla: Reno made independent of the RTT (Caini & Firrincieli 2004).

Source: C. Caini, R. Firrincieli, "TCP Hybla: a TCP enhancement for
heterogeneous networks", International Journal of Satellite Communications
and Networking 22(5), 2004, pp. 547–566.

Hybla scales Reno's increase so that a connection with a long RTT grows its
window, in segments per unit of *time*, as a reference connection with
``RTT0`` does. With the normalised RTT ``rho = max(RTT / RTT0, 1)`` and
``acked`` the segments newly acknowledged by an ACK:

* slow start (``cwnd < ssthresh``): ``cwnd += (2^rho − 1)·acked`` (Reno's
  ``+acked`` at ``rho = 1``), up to ``ssthresh``; the segments left over
  once ``cwnd`` reaches ``ssthresh`` count in congestion avoidance;
* congestion avoidance: ``cwnd += rho²·acked / cwnd`` (Reno's at ``rho = 1``);
* on loss: Reno's, ``ssthresh = max(FlightSize / 2, 2)`` (RFC 5681 eq. 4);
  after a timeout ``cwnd = 1``.

``RTT`` is the smallest RTT sample of the flow (``Ack.min_rtt``); before the
first sample ``rho = 1``.

What to expect: a long-RTT Hybla flow's window grows ``ρ²`` segments per
RTT, so it overshoots a small buffer by many segments and relies on its
recovery (PRR with RACK by default) to resend retransmissions lost again.
``ρ`` comes from the propagation RTT, so a deep buffer, whose queueing delay
lengthens both flows' RTTs alike, leaves the long flow growing faster per
second than a short one and taking the larger share.

Default: ``rtt0 = 0.025`` s, the paper's reference RTT and Linux's module
parameter ``rtt0 = 25`` (ms) in ``net/ipv4/tcp_hybla.c`` (Linux 6.x).

Differences from the source:

* RTT: the paper uses the connection's RTT; Linux computes rho from the
  smoothed RTT (``srtt``) and recomputes it only when srtt falls below the
  smallest srtt seen so far. ccsim uses the smallest RTT *sample*, which
  tracks the propagation delay the paper compensates for without the
  queueing delay srtt carries.
* rho is kept above 1 by the ``max(·, 1)`` the paper's and Linux's clamps
  share. ``2^rho`` is exact (Linux quantises rho to 1/8 and 2^rho by a table
  of eighths), and, as in Linux, its exponent is capped at 16
  (``SLOW_START_MAX_RHO``): one acknowledged segment adds at most 65,535
  segments in slow start, whatever the RTT (the paper has no cap; without
  one, an ACK at a 1 s RTT would add 1.1e12 segments).
* As Linux (``snd_cwnd_clamp = 65535`` in ``hybla_init``), the window never
  exceeds ``CWND_CLAMP`` = 65,535 segments.
* Linux sets the initial window to rho segments and clamps a slow-start step
  that overshoots to ``ssthresh``; ccsim keeps the scenario's initial window
  and carries the overshoot into congestion avoidance, as its Reno does.
* The window is a float growing continuously by ``rho²/cwnd`` per ACK.
  Linux (``hybla_cong_avoid``, the same in the 2.6.3x modules and 6.x)
  truncates each ACK's step to whole 1/128ths of a segment,
  ``⌊128·rho²/snd_cwnd⌋/128`` with ``rho`` in eighths, and steps by one
  segment per ``cwnd`` ACKs only where that is 0. That is slower than
  ``rho²/cwnd`` between the multiples of 1/128: at ``rho = 1`` (RTTs below
  ``rtt0``) 2/128 per ACK at 43–64 segments (up to a third slower) and
  1/128 at 65–128 (about half of ``1/cwnd`` at 65). Not modelled; measured
  on Esterhuizen & Krzesinski's Table I in docs/studies.md.
* Linux's ``hybla_cong_avoid`` steps once per *ACK* in both phases,
  whatever the ACK covers (outside the Open state it hands ``acked`` to
  Reno's rule, which ccsim does not follow). The law multiplies by
  ``acked``; the Linux stack profile hands it one per ACK
  (``ack_counting="acks"``), so under delayed ACKs it grows as Linux's does.
"""

from __future__ import annotations

import math

import numpy as np

from .base import Ack
from .fluid import FlowArrays, FluidLaw
from .registry import register
from .reno import Reno

LINUX_MAX_RHO = 16.0
"""Linux ``tcp_hybla.c`` caps the slow-start exponent: ``1 << min(rho, 16)``."""
LINUX_CWND_CLAMP = 65535.0
"""Linux ``hybla_init``: ``tp->snd_cwnd_clamp`` (segments)."""


@register
class Hybla(Reno):
    """TCP Hybla window law (Caini & Firrincieli 2004) with Reno's decrease and
    PRR recovery, as Linux runs it."""

    name = "hybla"
    param_space = {"rtt0": (0.005, 0.5)}  # valid keyword ranges
    recovery = "prr"  # Linux: SACK recovery with PRR for every law (tcp_input.c)
    SLOW_START_MAX_RHO = LINUX_MAX_RHO  # the exponent's cap in slow start (a subclass may change it)
    CWND_CLAMP = LINUX_CWND_CLAMP       # the window's cap (segments)

    def __init__(self, *, rtt0: float = 0.025) -> None:
        self.rtt0 = rtt0  # reference RTT (s)

    def start(self, initial_window: float, mss: int) -> None:
        super().start(initial_window, mss)
        self.rho = 1.0  # no RTT sample yet: behave as Reno

    def max_growth_per_rtt(self, cwnd: float) -> float:
        """Congestion avoidance grows ``ρ²`` segments per RTT: the paper's law,
        faster than doubling while ``cwnd < ρ²``."""
        return max(self.rho * self.rho, cwnd)

    def max_slow_start_step(self, ack: Ack) -> float:
        """``(2^min(ρ, 16) − 1)·acked``: Linux's capped exponent (the
        promise, whatever ``SLOW_START_MAX_RHO`` a subclass sets)."""
        return (2.0 ** min(self.rho_for(ack.min_rtt), LINUX_MAX_RHO) - 1.0) * ack.acked

    def rho_for(self, rtt: float) -> float:
        """Normalised RTT, ``max(rtt / rtt0, 1)``; 1 when ``rtt`` is unknown."""
        if not math.isfinite(rtt) or rtt <= 0:
            return 1.0
        return max(rtt / self.rtt0, 1.0)

    def on_ack(self, ack: Ack) -> None:
        self.rho = rho = self.rho_for(ack.min_rtt)
        acked = ack.acked
        if self.cwnd < self.ssthresh:
            step = 2.0 ** min(rho, self.SLOW_START_MAX_RHO) - 1.0  # per acknowledged segment
            room = self.ssthresh - self.cwnd
            if acked * step <= room:
                self.cwnd = min(self.cwnd + acked * step, self.CWND_CLAMP)
                return
            self.cwnd = self.ssthresh
            acked -= room / step
        self.cwnd = min(self.cwnd + rho * rho * acked / self.cwnd, self.CWND_CLAMP)


class HyblaFluid(FluidLaw):
    """Hybla in the fluid engine, with ``ρ = max(min_rtt/RTT0, 1)`` from the
    engine's ``min_rtt`` (the window law's :meth:`Hybla.rho_for`, vectorised;
    ``rtt0`` from ``self.cc``).

    Slow start: per ACK ``cwnd += (2^ρ − 1)·acked``, so each round of a
    window multiplies it by ``2^ρ`` on a link not yet full, and behind a
    queue the step's ACKs add ``2^ρ − 1`` each
    (:meth:`FlowArrays.slow_start`, Reno's at ρ = 1), up to ``ssthresh``,
    the time left passing to congestion avoidance. Congestion
    avoidance: per ACK ``cwnd += ρ²·acked/cwnd``, ``dcwnd/dt = ρ²/RTT``.
    Loss: Reno's. The exponent and the window are capped as the window
    law's are (``SLOW_START_MAX_RHO``, ``CWND_CLAMP``).
    """

    long_steps = True  # linear (rho^2 per RTT) between losses

    def rho(self, f: FlowArrays) -> np.ndarray:
        r = f.min_rtt
        ok = np.isfinite(r) & (r > 0)
        return np.where(ok, np.maximum(np.where(ok, r, 0.0) / self.cc.rtt0, 1.0), 1.0)

    def grow(self, f: FlowArrays) -> None:
        cc = self.cc
        rho = self.rho(f)
        ss_rho = np.minimum(rho, cc.SLOW_START_MAX_RHO)
        cwnd, rtt = f.cwnd, f.rtt
        h_ca = f.slow_start(np.exp2(ss_rho) - 1.0)
        cwnd += rho * rho * h_ca / rtt
        np.minimum(cwnd, cc.CWND_CLAMP, out=cwnd)


Hybla.fluid = HyblaFluid
