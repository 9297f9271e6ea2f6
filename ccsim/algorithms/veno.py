"""TCP Veno: Reno that tells random losses from congestive ones by delay.

Source: C. P. Fu, S. C. Liew, "TCP Veno: TCP Enhancement for Transmission
Over Wireless Access Networks", IEEE JSAC 21(2), 2003, pp. 216–228; Linux
``net/ipv4/tcp_veno.c`` (v6.x).

Veno borrows Vegas's estimate of the flow's backlog at the bottleneck,
with ``BaseRTT`` the smallest RTT sample of the connection and ``RTT`` the
latest sample::

    N = Actual · (RTT − BaseRTT) = cwnd · (RTT − BaseRTT) / RTT   (segments)

and, with ``acked`` the segments newly acknowledged by an ACK:

* slow start (``cwnd < ssthresh``): Reno's, ``cwnd += acked``;
* congestion avoidance: ``N < β`` (the path is not congested) → Reno's
  ``cwnd += acked / cwnd``, one segment per RTT; ``N ≥ β`` → half that, one
  segment every other RTT;
* on loss: ``N < β`` (the loss is taken as random, e.g. a wireless error) →
  ``ssthresh = max(cwnd · 4/5, 2)``; ``N ≥ β`` (congestive) →
  ``ssthresh = max(cwnd / 2, 2)``; after a timeout ``cwnd = 1``.

Default recovery: ``"prr"`` — Linux runs Veno, like every congestion
control, with SACK recovery and PRR (``net/ipv4/tcp_input.c``); Veno changes
only Reno's increase and decrease, not its recovery.

Differences from the source:

* In the congestive state the window grows by ``acked / (2·cwnd)`` per ACK,
  half a segment per RTT continuously; Linux adds one whole segment after
  every second window of ACKs (the paper: "every other RTT"). Same rate.
* ``RTT`` is the latest RTT sample, as in Linux (its per-RTT minimum is reset
  on every ACK); the paper's ``Actual`` uses the measured RTT without saying
  how it is filtered.
* ``N`` at a loss is computed from ``cwnd`` and the latest sample at the time
  of the loss; Linux keeps the ``diff`` of its last congestion-avoidance
  call. Before the first RTT sample ``N`` is unknown and, as Linux's ``diff``
  starts at 0, a loss then is taken as random (4/5).
* As Linux, Veno grows as Reno (``+acked/cwnd``) until it has more than two
  RTT samples (``cntrtt <= 2``). Linux also never lets ``cwnd`` below 2 in
  congestion avoidance; that is not modelled. The window is a float.

Default and its source: ``beta = 3`` (segments) — the paper's β and Linux's
``beta = 3 << V_PARAM_SHIFT`` (3 segments in units of half a segment),
``tcp_veno.c`` (6.x). The 4/5 and 1/2 reductions are the paper's and Linux's.
"""

from __future__ import annotations

import math

import numpy as np

from .base import MIN_SSTHRESH, Ack, Loss, RttSample
from .fluid import FlowArrays, FluidLaw
from .registry import register
from .reno import Reno

RANDOM_LOSS_DECREASE = 4.0 / 5.0  # ssthresh / cwnd after a loss taken as random
CONGESTIVE_DECREASE = 1.0 / 2.0   # ssthresh / cwnd after a congestive loss (Reno's)
CONGESTED_SHARE = 0.5  # of Reno's increase while N ≥ β: a segment every other RTT
RENO_SAMPLES = 2       # Linux tcp_veno_cong_avoid: Reno's step until more RTT samples


def _backlog(cwnd: float, rtt: float, base_rtt: float) -> float:
    """N = cwnd·(RTT − BaseRTT)/RTT (segments); NaN before the first sample."""
    if not (math.isfinite(rtt) and math.isfinite(base_rtt) and rtt > 0):
        return math.nan
    return cwnd * (rtt - base_rtt) / rtt


def _decrease_by_backlog(before: dict, event: object, after: dict) -> str | None:
    """Fu & Liew §III: at a loss, ``ssthresh = cwnd·4/5`` if ``N < β`` (random
    loss), else ``cwnd/2``; at least 2."""
    if not isinstance(event, Loss):
        return None
    n = _backlog(before["cwnd"], before["rtt"], before["base_rtt"])
    factor = CONGESTIVE_DECREASE if n >= before["beta"] else RANDOM_LOSS_DECREASE  # NaN: random
    expected = max(before["cwnd"] * factor, MIN_SSTHRESH)
    if not math.isclose(after["ssthresh"], expected, rel_tol=1e-9, abs_tol=1e-9):
        return (f"loss with cwnd={before['cwnd']!r}, N={n!r}, beta={before['beta']!r}: "
                f"ssthresh became {after['ssthresh']!r}, the rule gives {expected!r}")
    return None


def _increase_by_backlog(before: dict, event: object, after: dict) -> str | None:
    """Fu & Liew §III: in congestion avoidance an ACK adds ``acked/cwnd`` if
    ``N < β``, else half of it (one segment every other RTT); Reno's step
    while Linux has two RTT samples or fewer."""
    if not isinstance(event, Ack) or before["cwnd"] < before["ssthresh"]:
        return None
    n = _backlog(before["cwnd"], after["rtt"], after["base_rtt"])  # this ACK's sample
    share = (CONGESTED_SHARE if after["samples"] > RENO_SAMPLES and n >= after["beta"]
             else 1.0)
    expected = before["cwnd"] + share * event.acked / before["cwnd"]
    if not math.isclose(after["cwnd"], expected, rel_tol=1e-9, abs_tol=1e-9):
        return (f"congestion avoidance, N={n!r}, beta={after['beta']!r}: an ACK of "
                f"{event.acked!r} took cwnd from {before['cwnd']!r} to {after['cwnd']!r}; "
                f"the rule gives {expected!r}")
    return None


@register
class Veno(Reno):
    """TCP Veno window law (Fu & Liew 2003) with PRR recovery, as Linux runs it."""

    name = "veno"
    recovery = "prr"  # Linux: SACK recovery with PRR for every law (tcp_input.c)
    param_space = {"beta": (0.5, 10.0)}
    properties = (_decrease_by_backlog, _increase_by_backlog)

    def __init__(self, *, beta: float = 3.0) -> None:
        self.beta = beta  # backlog that separates random from congestive loss (segments)

    def start(self, initial_window: float, mss: int) -> None:
        super().start(initial_window, mss)
        self.base_rtt = math.inf  # smallest RTT sample of the connection (s)
        self.rtt = math.nan       # latest RTT sample (s)
        self.samples = 0          # RTT samples so far (Linux's cntrtt)

    def max_growth_per_rtt(self, cwnd: float) -> float:
        return 1.0  # at most Reno's one segment per RTT

    @property
    def backlog(self) -> float:
        """The flow's segments queued at the bottleneck, N (NaN before a sample)."""
        return _backlog(self.cwnd, self.rtt, self.base_rtt)

    def congested(self) -> bool:
        """``N ≥ β``; not while ``N`` is unknown (Linux's ``diff`` starts at 0)."""
        return self.backlog >= self.beta

    def on_rtt(self, sample: RttSample) -> None:
        if sample.rtt > 0:
            self.rtt = sample.rtt
            self.base_rtt = min(self.base_rtt, sample.rtt)
            self.samples += 1

    def on_ack(self, ack: Ack) -> None:
        acked = self.slow_start(ack.acked)
        if acked:
            # Reno's step until more than two samples (Linux), then every other RTT
            # while congested
            share = (CONGESTED_SHARE if self.samples > RENO_SAMPLES and self.backlog >= self.beta
                     else 1.0)
            self.cwnd += share * acked / self.cwnd

    def ssthresh_after(self, loss: Loss) -> float:
        factor = CONGESTIVE_DECREASE if self.congested() else RANDOM_LOSS_DECREASE
        return max(self.cwnd * factor, MIN_SSTHRESH)


class VenoFluid(FluidLaw):
    """Veno in the fluid engine.

    Backlog ``N = cwnd·(RTT − BaseRTT)/RTT`` with ``RTT`` the current RTT
    (the latest sample) and ``BaseRTT`` the flow's smallest (``min_rtt``);
    unknown (NaN) before the first sample, which does not count as
    congested (the class's :meth:`Veno.congested`). The window law's
    Reno steps for its first two samples last a fraction of an RTT and are
    not modelled apart. Slow start doubles per RTT up to
    ``ssthresh``; congestion avoidance adds ``acked/cwnd`` per ACK when
    ``N < β`` and half that otherwise: over a step ``cwnd += s·h/RTT`` with
    ``s`` = 1 or 1/2 from ``N`` at the start of the step. On loss
    ``ssthresh = max(cwnd·4/5, 2)`` when ``N < β`` (random), else
    ``max(cwnd/2, 2)`` (``RANDOM_LOSS_DECREASE``, ``CONGESTIVE_DECREASE``).
    """

    def _backlog(self, f: FlowArrays, m=slice(None)) -> np.ndarray:
        rtt, base = f.rtt[m], f.min_rtt[m]
        ok = np.isfinite(base) & (rtt > 0)
        return np.where(ok, f.cwnd[m] * (rtt - np.where(ok, base, 0.0)) / rtt, np.nan)

    def grow(self, f: FlowArrays) -> None:
        congested = self._backlog(f) >= self.cc.beta
        share = np.where(congested, CONGESTED_SHARE, 1.0)
        f.cwnd += share * f.slow_start() / f.rtt

    def ssthresh_after(self, f: FlowArrays, m: np.ndarray, kind: str) -> np.ndarray:
        congested = self._backlog(f, m) >= self.cc.beta
        factor = np.where(congested, CONGESTIVE_DECREASE, RANDOM_LOSS_DECREASE)
        return np.maximum(f.cwnd[m] * factor, MIN_SSTHRESH)


Veno.fluid = VenoFluid
