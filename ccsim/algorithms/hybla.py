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

``rule="linux"`` (the default) is mainline's ``hybla_cong_avoid``
(``net/ipv4/tcp_hybla.c``; the 2.6.3x–3.x modules had the same rules but
for the exponent's cap at 16), in fixed point, once per acknowledged
segment the law is told of (the Linux profile tells it one per ACK, as
Linux steps once per ACK):

* ``ρ`` in eighths, rounded down, at least 8 (``rho_3ls``); ``ρ²`` in
  128ths is ``2·rho_3ls²`` (``rho2_7ls``);
* slow start: the step in 128ths is ``2^min(⌊ρ⌋, 16)·F − 128``, with ``F``
  the fractional part of ``ρ`` as ``⌊128·2^(i/8)⌋`` (``hybla_fraction``,
  ``i`` the eighths); the window then stops at ``ssthresh`` (what passes it
  is dropped, not carried into congestion avoidance);
* congestion avoidance: the step in 128ths is ``⌊rho2_7ls / ⌊cwnd⌋⌋``;
* whole segments of a step go to the window at once, the 128ths into a
  carry (``snd_cwnd_cents``) that adds a segment each time it reaches 128;
* where the step is 0 (``⌊cwnd⌋ > 128·ρ²``) an ACK counter
  (``snd_cwnd_cnt``, counting the ACKs whose step is under one segment, reset
  by the carry's and its own steps and at a loss) adds one segment once it
  reaches ``⌊cwnd⌋``;
* outside the Open state (after a timeout until the loss phase ends) the
  module hands the ACK to Reno's rule (``hybla_en``, ``hybla_state``).

At ``ρ = 1`` (RTTs below ``rtt0``) the step is ``⌊128/⌊cwnd⌋⌋/128``: a
segment per 32 ACKs at 30 segments, per 64 between 43 and 64, per 128
between 65 and 128, per ``cwnd`` above; Reno's law adds one per ``cwnd``.

``rule="paper"``: Caini & Firrincieli's continuous law above, the window a
float growing by ``ρ²·acked/cwnd`` (exact ``ρ`` and ``2^ρ``), slow start's
overshoot carried into congestion avoidance.

Default: ``rtt0 = 0.025`` s, the paper's reference RTT and Linux's module
parameter ``rtt0 = 25`` (ms) in ``net/ipv4/tcp_hybla.c`` (Linux 6.x);
``rule = "linux"``.

Differences from the source:

* RTT: the paper uses the connection's RTT; Linux computes rho from the
  smoothed RTT (``srtt``) and recomputes it only when srtt falls below the
  smallest srtt seen so far. ccsim uses the smallest RTT *sample*, which
  tracks the propagation delay the paper compensates for without the
  queueing delay srtt carries.
* rho is kept above 1 by the ``max(·, 1)`` the paper's and Linux's clamps
  share. With ``rule="paper"`` ``2^rho`` is exact; in both rules, as in
  Linux, its exponent is capped at 16 (``SLOW_START_MAX_RHO``): one
  acknowledged segment adds at most 65,535 segments in slow start, whatever
  the RTT (the paper has no cap; without one, an ACK at a 1 s RTT would add
  1.1e12 segments).
* As Linux (``snd_cwnd_clamp = 65535`` in ``hybla_init``), the window never
  exceeds ``CWND_CLAMP`` = 65,535 segments.
* Linux sets the initial window to rho segments; ccsim keeps the
  scenario's. With ``rule="paper"`` a slow-start step that overshoots
  ``ssthresh`` is carried into congestion avoidance, as ccsim's Reno does.
* ``rule="linux"``: the window stays a float (a threshold of half an odd
  window is fractional, as ``loss_flight`` may make it), so ``⌊cwnd⌋`` stands
  for ``snd_cwnd`` in the divisions and the steps add whole segments to it.
  Linux's ``tcp_is_cwnd_limited`` test is the sender's, not the law's; the
  Disorder and CWR states (which also turn ``hybla_en`` off) are not told to
  a law. Reno's rule outside the Open state is ccsim's continuous Reno.
* ``rule="paper"`` steps by the segments each ACK acknowledged; Linux's
  ``hybla_cong_avoid`` steps once per *ACK* in both phases, whatever the ACK
  covers. The Linux stack profile hands it one per ACK
  (``ack_counting="acks"``), so under delayed ACKs either rule grows as
  Linux's does.
* The fluid law is the paper's continuous one with either rule: the
  fixed-point carry and the ACK counter are per-ACK state. With
  ``rule="linux"`` it keeps Reno's growth in the loss phase after a
  timeout, as the fluid engine delimits it (``FlowArrays.loss_until``).
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import ScenarioError
from .base import Ack, Loss, RecoveryState
from .fluid import FlowArrays, FluidLaw
from .registry import register
from .reno import Reno

LINUX_MAX_RHO = 16.0
"""Linux ``tcp_hybla.c`` caps the slow-start exponent: ``1 << min(rho, 16)``."""
LINUX_CWND_CLAMP = 65535.0
"""Linux ``hybla_init``: ``tp->snd_cwnd_clamp`` (segments)."""
LINUX_FRACTIONS = tuple(math.floor(128 * 2 ** (i / 8)) for i in range(8))
"""Linux ``hybla_fraction``: ``2^(i/8)`` in 128ths, rounded down, ``i`` = 0–7."""
RULES = ("linux", "paper")


@register
class Hybla(Reno):
    """TCP Hybla window law (Caini & Firrincieli 2004) with Reno's decrease and
    PRR recovery, as Linux runs it."""

    name = "hybla"
    param_space = {"rtt0": (0.005, 0.5)}  # valid keyword ranges
    recovery = "prr"  # Linux: SACK recovery with PRR for every law (tcp_input.c)
    SLOW_START_MAX_RHO = LINUX_MAX_RHO  # the exponent's cap in slow start (a subclass may change it)
    CWND_CLAMP = LINUX_CWND_CLAMP       # the window's cap (segments)

    def __init__(self, *, rtt0: float = 0.025, rule: str = "linux") -> None:
        if rule not in RULES:
            raise ScenarioError("rule", rule, "'linux' (tcp_hybla.c, fixed point) or 'paper' "
                                "(Caini & Firrincieli's continuous law)")
        self.rtt0 = rtt0  # reference RTT (s)
        self.rule = rule  # "linux" (tcp_hybla.c) or "paper" (continuous)

    def start(self, initial_window: float, mss: int) -> None:
        super().start(initial_window, mss)
        self.rho = 1.0  # no RTT sample yet: behave as Reno
        self.linux = self.rule == "linux"
        self.cents = 0  # Linux snd_cwnd_cents: 128ths of a segment carried over
        self.count = 0  # Linux snd_cwnd_cnt: ACKs whose step was under a segment
        self.open = True  # Linux hybla_en: the Open state, where the module's rule runs

    def max_growth_per_rtt(self, cwnd: float) -> float:
        """Congestion avoidance grows ``ρ²`` segments per RTT: the paper's law,
        faster than doubling while ``cwnd < ρ²``. Linux's fixed point adds at
        most one segment more (``⌊cwnd⌋`` as divisor, the carry it ends)."""
        return max(self.rho * self.rho + (1.0 if self.rule == "linux" else 0.0), cwnd)

    def max_slow_start_step(self, ack: Ack) -> float:
        """``(2^min(ρ, 16) − 1)·acked``: Linux's capped exponent (the
        promise, whatever ``SLOW_START_MAX_RHO`` a subclass sets), plus the
        one segment Linux's carry may end with (rule ``"linux"``)."""
        step = (2.0 ** min(self.rho_for(ack.min_rtt), LINUX_MAX_RHO) - 1.0) * ack.acked
        return step + (1.0 if self.rule == "linux" else 0.0)

    def rho_for(self, rtt: float) -> float:
        """Normalised RTT, ``max(rtt / rtt0, 1)``; 1 when ``rtt`` is unknown."""
        if not math.isfinite(rtt) or rtt <= 0:
            return 1.0
        return max(rtt / self.rtt0, 1.0)

    def rho_eighths(self, rtt: float) -> int:
        """Linux's ``rho_3ls``: ``ρ`` in eighths, rounded down, at least 8."""
        if not math.isfinite(rtt) or rtt <= 0:
            return 8
        return max(math.floor(8.0 * rtt / self.rtt0 + 1e-9), 8)  # 1e-9: 0.05/0.025 is 2

    def on_recovery(self, change: RecoveryState) -> None:
        """``hybla_state``: the module's rule runs in the Open state only."""
        if change.change:
            self.open = change.state == "open"

    def on_loss(self, loss: Loss) -> None:
        super().on_loss(loss)
        self.count = 0  # tcp_init_cwnd_reduction, tcp_enter_loss

    def on_ack(self, ack: Ack) -> None:
        self.rho = rho = self.rho_for(ack.min_rtt)
        if self.linux:
            if not self.open:  # hybla_cong_avoid hands the ACK to tcp_reno_cong_avoid
                Reno.on_ack(self, ack)
                return
            q = self.rho_eighths(ack.min_rtt)
            for _ in range(max(round(ack.acked), 1)):  # Linux: one step per ACK
                self.linux_step(q)
            return
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

    def linux_step(self, q: int) -> None:
        """One ACK of ``hybla_cong_avoid`` in the Open state, ``q`` = ρ in
        eighths: the step in 128ths, its whole segments, the carry, the ACK
        counter where the step is 0, then slow start's stop at ``ssthresh``."""
        w = max(math.floor(self.cwnd), 1)  # snd_cwnd
        slow = self.cwnd < self.ssthresh
        if slow:
            whole_rho, eighths = divmod(q, 8)
            step = (1 << min(whole_rho, int(self.SLOW_START_MAX_RHO))) * LINUX_FRACTIONS[eighths] - 128
        else:
            step = 2 * q * q // w  # rho2_7ls / snd_cwnd
            if step < 128:
                self.count += 1
        whole, odd = divmod(step, 128)
        self.cwnd += whole
        self.cents += odd
        if self.cents >= 128:  # the carry ends: one segment (cents < 256 here)
            self.cwnd += 1
            self.cents -= 128
            self.count = 0
        if step == 0 and self.count >= w:  # no step for a window of ACKs
            self.cwnd += 1
            self.count = 0
        if slow:
            self.cwnd = min(self.cwnd, self.ssthresh)
        self.cwnd = min(self.cwnd, self.CWND_CLAMP)


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
    law's are (``SLOW_START_MAX_RHO``, ``CWND_CLAMP``). This is the paper's
    continuous law whatever ``rule``: Linux's 128ths, carry and ACK counter
    (``rule="linux"``, the window law's default) are per-ACK state; at ρ = 1
    they grow a window of 43–64 segments up to a third slower, of 65–128 up
    to half.

    ``rule="linux"``: in the loss phase after a timeout (``delivered <
    loss_until``: until the holes left at the timeout are delivered, Linux's
    ``TCP_CA_Loss``), ρ is 1: Reno's slow start, doubling per RTT, and
    Reno's avoidance (``hybla_state`` turns ``hybla_en`` off outside
    ``TCP_CA_Open``), as the window law's :meth:`Hybla.on_recovery`.
    """

    long_steps = True  # linear (rho^2 per RTT) between losses
    scalar_params = ("rule",)  # an if on it

    def rho(self, f: FlowArrays) -> np.ndarray:
        r = f.min_rtt
        ok = np.isfinite(r) & (r > 0)
        return np.where(ok, np.maximum(np.where(ok, r, 0.0) / self.cc.rtt0, 1.0), 1.0)

    def grow(self, f: FlowArrays) -> None:
        cc = self.cc
        rho = self.rho(f)
        if cc.rule == "linux":  # hybla_en: Reno's rule (rho = 1) in the loss phase
            rho = np.where(f.delivered < f.loss_until, 1.0, rho)
        ss_rho = np.minimum(rho, cc.SLOW_START_MAX_RHO)
        cwnd, rtt = f.cwnd, f.rtt
        h_ca = f.slow_start(np.exp2(ss_rho) - 1.0)
        cwnd += rho * rho * h_ca / rtt
        np.minimum(cwnd, cc.CWND_CLAMP, out=cwnd)


Hybla.fluid = HyblaFluid
