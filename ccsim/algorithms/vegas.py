"""TCP Vegas: keep a few segments queued at the bottleneck, measured by delay.

Source: L. S. Brakmo, L. L. Peterson, "TCP Vegas: End to End Congestion
Avoidance on a Global Internet", IEEE JSAC 13(8), 1995, pp. 1465–1480, §3.2
(congestion avoidance) and §3.3 (modified slow start); Linux
``net/ipv4/tcp_vegas.c`` (v6.x) for the details the paper leaves open.

Update rules, once per round (an RTT of ACKs: the data outstanding when the
round began has been acknowledged), with ``BaseRTT`` the smallest RTT sample
of the connection and ``RTT`` the smallest sample of the round just ended::

    Expected = cwnd / BaseRTT          Actual = cwnd / RTT
    diff     = (Expected − Actual) · BaseRTT = cwnd · (1 − BaseRTT / RTT)

``diff`` is the number of the flow's segments sitting in the bottleneck queue.

* congestion avoidance: ``diff < α`` → ``cwnd += 1``; ``diff > β`` →
  ``cwnd −= 1`` (never below 2); otherwise ``cwnd`` is unchanged;
* slow start (default, Linux ``tcp_vegas_cong_avoid``): Reno's per-ACK
  ``cwnd += acked`` on every ACK; at a round's end ``diff > γ`` ends it:
  ``cwnd = min(cwnd, ⌊cwnd · BaseRTT / RTT⌋ + 1)`` (the window that matches
  the actual rate, plus one) and ``ssthresh = cwnd − 1``. With
  ``slow_start="paper"`` (Brakmo & Peterson §3.3) the window grows only every
  other round, and the round in between, at a fixed window, is the one
  compared: ``cwnd = min(cwnd, cwnd · BaseRTT / RTT + 1)``, ``ssthresh =
  cwnd``;
* every round ends (Linux) with ``ssthresh = max(ssthresh, ⌊cwnd/2⌋ +
  ⌊cwnd/4⌋)`` (``tcp_current_ssthresh``), and a decrease sets ``ssthresh =
  min(ssthresh, cwnd − 1)``; the paper variant keeps ``min(ssthresh, cwnd)``
  and nothing else;
* on loss: Reno's, ``ssthresh = max(FlightSize / 2, 2)`` (RFC 5681 eq. 4);
  after a timeout ``cwnd = 1``. The next ACK outside recovery begins a fresh
  round (Linux re-enables Vegas when the connection is back in Open state).

Default recovery: ``"reno"``. Vegas is a 1995 design built on BSD Reno, and
the comparisons it is known for (seed 004's ns-2 study, seed 003, Mo et al.,
"Analysis and Comparison of TCP Reno and Vegas", INFOCOM 1999) run it with
Reno's fast recovery beside Reno senders; with the same recovery on both sides
a Vegas/Reno comparison compares window laws only. (Linux would run it with
SACK and PRR; ``Flow("vegas", recovery="prr")`` does that.)

Differences from the paper:

* ``diff`` uses the paper's ``(Expected − Actual)·BaseRTT``; Linux computes
  ``cwnd·(RTT − BaseRTT)/BaseRTT``, i.e. scales by ``RTT`` instead, which
  counts more segments than are queued once the queue delay is large.
* ``RTT`` is the minimum RTT sample of the round (Linux; it filters out
  delayed-ACK noise), not the paper's average over the round.
* As in Linux, a round with two RTT samples or fewer (delayed ACKs at tiny
  windows, Karn's rule) makes no Vegas decision: its last ACK gets Reno's
  step instead.
* Rounds are counted in delivered segments (``Ack.delivered`` and
  ``Ack.inflight`` stand in for Linux's ``snd_una`` and ``beg_snd_nxt``).
* Slow start is Linux's by default. It ends a round late: a round's
  minimum RTT reflects the queue of the round before, so a lone flow
  overshoots by up to a window (about 80 packets at 10 Mbit/s, 40 ms) and
  drains it one segment per RTT; Linux does the same. A flow that starts
  meanwhile takes that queue for propagation delay and keeps it queued
  (Low, Peterson & Wang, "Understanding TCP Vegas", JACM 2002).
  ``slow_start="paper"`` overshoots less.
* The paper's other two mechanisms, the fine-grained retransmission timer and
  the decrease only for losses at the current rate, belong to loss recovery
  and are not modelled; the window is a float.

Defaults and their sources: ``alpha = 2``, ``beta = 4``, ``gamma = 1``
(segments) — Linux ``tcp_vegas.c`` module parameters (6.x); the paper's
experiments used α = 1, β = 3. ``slow_start = "linux"``; ``"paper"`` for
Brakmo & Peterson's.
"""

from __future__ import annotations

import math

import numpy as np

from .base import Ack, Loss, RttSample
from .fluid import FlowArrays, FluidLaw
from .registry import register
from .reno import Reno, _halves_on_loss


def _decision(before: dict, event: object, after: dict) -> tuple[float, float] | None:
    """(diff, cwnd change) of the one Vegas decision made in congestion
    avoidance during this step, or ``None`` if there was not exactly one."""
    if not (isinstance(event, Ack) or getattr(event, "acks", None)):
        return None
    if before["cwnd"] < before["ssthresh"] or after["decisions"] != before["decisions"] + 1:
        return None
    # Restated from the paper: diff = cwnd·(1 − BaseRTT/RTT), cwnd the window of the round.
    diff = before["cwnd"] * (1.0 - after["base_rtt"] / after["rtt_used"])
    return diff, after["cwnd"] - before["cwnd"]


def _holds_inside_alpha_beta(before: dict, event: object, after: dict) -> str | None:
    """Brakmo & Peterson §3.2: a round in congestion avoidance with
    ``α ≤ diff ≤ β`` leaves ``cwnd`` unchanged."""
    d = _decision(before, event, after)
    if d is not None and after["alpha"] <= d[0] <= after["beta"] and d[1] != 0:
        return (f"diff = {d[0]!r} is within [alpha, beta] = [{after['alpha']!r}, "
                f"{after['beta']!r}] but cwnd went from {before['cwnd']!r} to {after['cwnd']!r}")
    return None


def _one_segment_per_round(before: dict, event: object, after: dict) -> str | None:
    """Brakmo & Peterson §3.2: ``diff > β`` → one segment less (not below 2,
    Linux's floor), ``diff < α`` → one more, once per round."""
    d = _decision(before, event, after)
    if d is None:
        return None
    diff, change = d
    if diff > after["beta"]:
        expected = max(before["cwnd"] - 1.0, 2.0) - before["cwnd"]
    elif diff < after["alpha"]:
        expected = 1.0
    else:
        return None
    if not math.isclose(change, expected, rel_tol=1e-9, abs_tol=1e-9):
        return (f"diff = {diff!r} with alpha={after['alpha']!r}, beta={after['beta']!r}: cwnd "
                f"changed by {change!r}, the rule says {expected!r}")
    return None


@register
class Vegas(Reno):
    """TCP Vegas window law (Brakmo & Peterson 1995) with Reno fast recovery."""

    name = "vegas"
    recovery = "vegas"  # Brakmo & Peterson §3.1 (ccsim.recovery.vegas), as ns-2 (seeds 003-004)
    param_space = {"alpha": (0.5, 3.0), "beta": (3.0, 8.0), "gamma": (0.25, 3.0)}
    properties = (_holds_inside_alpha_beta, _one_segment_per_round, _halves_on_loss)

    def __init__(self, *, alpha: float = 2.0, beta: float = 4.0, gamma: float = 1.0,
                 slow_start: str = "linux") -> None:
        if slow_start not in ("linux", "paper"):
            from ..errors import ScenarioError
            raise ScenarioError("slow_start", slow_start, "'linux' or 'paper'")
        self.alpha = alpha  # fewest segments to keep queued (segments)
        self.beta = beta    # most segments to keep queued (segments)
        self.gamma = gamma  # queued segments that end slow start (segments)
        self.slow_start_variant = slow_start  # "linux": every ACK; "paper": every other round

    def params(self) -> dict:
        # ``slow_start`` is also Reno's method: the keyword's value is kept apart
        return {"alpha": self.alpha, "beta": self.beta, "gamma": self.gamma,
                "slow_start": self.slow_start_variant}

    def start(self, initial_window: float, mss: int) -> None:
        super().start(initial_window, mss)
        self.base_rtt = math.inf       # smallest RTT sample of the connection (s)
        self.round_end: float | None = None  # the round ends once delivered exceeds this
        self.round_min_rtt = math.inf  # smallest RTT sample of this round (s)
        self.round_samples = 0         # RTT samples taken this round
        self.growing = True            # slow start: this round grows (else it holds)
        self.rtt_used = math.nan       # RTT of the last decision (s)
        self.diff = math.nan           # diff of the last decision (segments)
        self.decisions = 0             # rounds that made a Vegas decision

    def max_growth_per_rtt(self, cwnd: float) -> float:
        # One segment per round at most (a round of too few samples: Reno's acked/cwnd).
        return 1.0

    def on_rtt(self, sample: RttSample) -> None:
        rtt = sample.rtt
        if rtt > 0:  # Linux adds 1 µs so that neither RTT can be zero
            self.base_rtt = min(self.base_rtt, rtt)
            self.round_min_rtt = min(self.round_min_rtt, rtt)
            self.round_samples += 1

    def _begin_round(self, ack: Ack) -> None:
        # Everything outstanding now must be acknowledged before the round ends.
        self.round_end = ack.delivered + ack.inflight
        self.round_min_rtt = math.inf
        self.round_samples = 0

    def on_ack(self, ack: Ack) -> None:
        if self.round_end is None:  # first ACK of the connection or after a loss
            self._begin_round(ack)
        elif ack.delivered > self.round_end:
            few = self.round_samples <= 2
            if not few:
                self._decide()
            self._begin_round(ack)
            if few:
                # Too few samples to trust (Linux): Reno's step for this ACK.
                acked = self.slow_start(ack.acked)
                if acked:
                    self.cwnd += acked / self.cwnd
                return
        if self.cwnd < self.ssthresh and (self.growing or self.slow_start_variant == "linux"):
            self.slow_start(ack.acked)  # congestion avoidance moves only at round ends

    def _decide(self) -> None:
        """The once-per-round decision, from the round that just ended."""
        cwnd, rtt = self.cwnd, self.round_min_rtt
        target = cwnd * self.base_rtt / rtt  # the window that matches the actual rate
        diff = cwnd - target                 # = cwnd·(1 − BaseRTT/RTT): segments queued
        self.rtt_used, self.diff = rtt, diff
        self.decisions += 1
        if self.slow_start_variant == "linux":
            self._decide_linux(cwnd, target, diff)
            return
        if cwnd < self.ssthresh:
            if self.growing:           # cwnd changed this round: compare after the next
                self.growing = False
            elif diff > self.gamma:    # queue building: leave slow start
                self.cwnd = max(min(cwnd, target + 1.0), 2.0)
                self.ssthresh = self.cwnd
            else:
                self.growing = True
        elif diff > self.beta:         # too much queued: slow down
            self.cwnd = max(cwnd - 1.0, 2.0)
            self.ssthresh = min(self.ssthresh, self.cwnd)
        elif diff < self.alpha:        # too little queued: speed up
            self.cwnd = cwnd + 1.0

    def _decide_linux(self, cwnd: float, target: float, diff: float) -> None:
        """Linux ``tcp_vegas_cong_avoid`` at a round's end: slow start ends once
        ``diff > γ`` (``cwnd = min(cwnd, ⌊target⌋ + 1)``) or grows on (by the
        round-ending ACK's own slow-start step, in :meth:`on_ack`); in
        congestion avoidance ±1 outside ``[α, β]``; ``ssthresh`` never above
        ``cwnd − 1`` after a cut, and every round ends with
        ``ssthresh = max(ssthresh, ⌊cwnd/2⌋ + ⌊cwnd/4⌋)`` (tcp_current_ssthresh)."""
        if cwnd < self.ssthresh:
            if diff > self.gamma:
                self.cwnd = min(cwnd, math.floor(target) + 1.0)
                self.ssthresh = min(self.ssthresh, self.cwnd - 1.0)  # tcp_vegas_ssthresh
        elif diff > self.beta:
            self.cwnd = cwnd - 1.0
            self.ssthresh = min(self.ssthresh, self.cwnd - 1.0)
        elif diff < self.alpha:
            self.cwnd = cwnd + 1.0
        self.cwnd = max(self.cwnd, 2.0)
        whole = math.floor(self.cwnd)
        self.ssthresh = max(self.ssthresh, float(whole // 2 + whole // 4))

    def on_loss(self, loss: Loss) -> None:
        super().on_loss(loss)
        self.round_end = None  # a fresh round once recovery is over
        self.growing = True


class VegasFluid(FluidLaw):
    """Vegas in the fluid engine.

    ``diff = cwnd·(1 − BaseRTT/RTT)`` with ``BaseRTT`` the smallest RTT the
    flow has seen and ``RTT`` the current one. Congestion avoidance moves
    ``cwnd`` one segment per RTT towards the band ``α ≤ diff ≤ β`` — and no
    further than the band's edge within a step (a segment more in flight adds
    at most one to ``diff``), so a step longer than the RTT cannot jump over
    the two-segment band. Slow start doubles per RTT and ends once
    ``diff > γ`` with ``cwnd = min(cwnd, cwnd·BaseRTT/RTT + 1)``, as Linux's
    ``tcp_vegas_cong_avoid`` (the paper's every-other-round slow start,
    ``slow_start="paper"``, is not modelled apart). On loss: Reno's.
    """

    def grow(self, f: FlowArrays) -> None:
        cc = self.cc
        base = np.minimum(f.min_rtt, f.rtt)
        queued = 1.0 - base / f.rtt          # diff per segment of window
        moving = f.h > 0
        in_ss = moving & (f.cwnd < f.ssthresh)
        leave = in_ss & (f.cwnd * queued > cc.gamma)
        if leave.any():
            f.cwnd[leave] = np.maximum(np.minimum(f.cwnd, f.cwnd * base / f.rtt + 1.0), 2.0)[leave]
            f.ssthresh[leave] = f.cwnd[leave]
        h_ca = f.slow_start()
        diff = f.cwnd * queued
        rounds = h_ca / f.rtt
        up = np.minimum(rounds, np.maximum(cc.alpha - diff, 0.0))
        down = np.minimum(rounds, np.maximum(diff - cc.beta, 0.0))
        cwnd = np.maximum(f.cwnd + up - down, np.where(down > 0, 2.0, 0.0))
        np.copyto(f.cwnd, np.where(h_ca > 0, np.maximum(cwnd, np.minimum(f.cwnd, 2.0)), f.cwnd))
        shrink = (down > 0) & (h_ca > 0)
        np.copyto(f.ssthresh, np.where(shrink, np.minimum(f.ssthresh, f.cwnd), f.ssthresh))


Vegas.fluid = VegasFluid
