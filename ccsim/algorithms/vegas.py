"""TCP Vegas: keep a few segments queued at the bottleneck, measured by delay.

Sources: Linux ``net/ipv4/tcp_vegas.c`` (v6.x), the default; L. S. Brakmo,
L. L. Peterson, "TCP Vegas: End to End Congestion Avoidance on a Global
Internet", IEEE JSAC 13(8), 1995, pp. 1465–1480, §3.2 (congestion avoidance)
and §3.3 (modified slow start), as keywords.

Update rules, once per round (an RTT of ACKs: the data outstanding when the
round began has been acknowledged), with ``BaseRTT`` the smallest RTT sample
of the connection and ``RTT`` the smallest sample of the round just ended.
``diff`` measures the flow's segments in the bottleneck queue:

* Linux (default): ``target = ⌊W · BaseRTT / RTT⌋`` and
  ``diff = ⌊W · (RTT − BaseRTT) / BaseRTT⌋``, with ``W = ⌊cwnd⌋`` and both
  RTTs in whole µs plus one (``tcp_vegas_pkts_acked``). This is the segments
  queued times ``RTT/BaseRTT``, truncated;
* the paper (``diff_rule="paper"``): ``target = cwnd · BaseRTT / RTT`` and
  ``diff = (Expected − Actual) · BaseRTT = cwnd · (1 − BaseRTT / RTT)``, the
  segments queued, exactly;
* ns-3 (``diff_rule="ns3"``, ``TcpVegas::IncreaseWindow``):
  ``target = ⌊W · BaseRTT / RTT⌋`` and ``diff = W − target``, the segments
  queued rounded up.

Then:

* congestion avoidance: ``diff < α`` → ``cwnd += 1``; ``diff > β`` →
  ``cwnd −= 1`` (never below 2) and ``ssthresh = min(ssthresh, cwnd)``;
  otherwise ``cwnd`` is unchanged;
* slow start (default, Linux ``tcp_vegas_cong_avoid``): Reno's
  ``cwnd += acked`` on every ACK; at a round's end ``diff > γ`` ends it:
  ``cwnd = min(cwnd, target + 1)`` (the window that matches the actual rate,
  plus one) and ``ssthresh = min(ssthresh, cwnd)`` (``tcp_vegas_ssthresh``).
  With ``slow_start="paper"`` (§3.3) the window grows only every other
  round, and the round in between, at a fixed window, is the one compared;
  ``diff > γ`` then sets ``cwnd = ssthresh = min(cwnd, target + 1)``;
* every round ends (Linux) with ``ssthresh = max(ssthresh, ⌊W/2⌋ + ⌊W/4⌋)``
  (``tcp_current_ssthresh``); the paper variant does not;
* a round with two RTT samples or fewer (delayed ACKs at tiny windows,
  Karn's rule) makes no Vegas decision: its last ACK gets Reno's step;
* on loss: Reno's, ``ssthresh = max(FlightSize / 2, 2)`` (RFC 5681 eq. 4);
  with ``loss_rule="ns3"``, ns-3's ``TcpVegas::GetSsThresh``,
  ``ssthresh = max(min(ssthresh, cwnd − 1), 2)`` (tcp-vegas.cc, 3.44), which
  the recovery then brings ``cwnd`` down to; after a timeout ``cwnd = 1``
  and ``BaseRTT`` is forgotten (Linux: the retransmission leaves with
  nothing in flight, ``CA_EVENT_TX_START``, and
  ``tcp_vegas_init`` resets it). The next ACK outside recovery begins a
  fresh round (Linux re-enables Vegas when the connection is back in Open
  state).

Default recovery: ``"vegas"``, Brakmo & Peterson §3.1 (see
:mod:`ccsim.recovery.vegas`), as the ns-2 studies Vegas is known for ran it
(Lai & Yao; Zhang & Bian). Linux keeps its own recovery for Vegas;
``Flow("vegas", recovery="prr")`` runs it so.

Differences from the source:

* Defaults are Linux's: its slow start and its ``diff``. Brakmo & Peterson's
  are ``slow_start="paper"`` and ``diff_rule="paper"``; their experiments
  also used α = 1, β = 3. Linux's ``diff`` counts more segments than are
  queued once the queue's delay is comparable to ``BaseRTT``, and its
  truncation holds the window while ``α ≤ diff < β + 1``.
* The window is a float (Reno's steps in a round of few samples add
  fractions); Linux's decisions use its whole part, as here. RTTs are
  rounded to the µs, where Linux's clock truncates.
* Rounds are counted in delivered segments (``Ack.delivered`` and
  ``Ack.inflight`` stand in for Linux's ``snd_una`` and ``beg_snd_nxt``).
* Linux disables Vegas (Reno's growth, and a fresh round after) while
  duplicate ACKs or SACKs are outstanding before a recovery (``Disorder``
  state); ccsim keeps Vegas' rounds until a loss is signalled.
* Linux's slow start ends late. A round's RTT samples come from segments
  sent during the round before, and the smallest is the earliest of them,
  sent when the window was a quarter of the one being judged. A lone flow at
  10 Mbit/s and 50 ms leaves slow start at cwnd 157 with 114 packets
  queued (BDP 42), and drains them one segment per RTT, for about 13 s. A
  flow that starts meanwhile takes that queue for propagation delay and
  keeps it (Low, Peterson & Wang, "Understanding TCP Vegas", JACM 2002).
  ``slow_start="paper"`` judges a round at a fixed window and overshoots
  less.
* Vegas' equilibrium is a band, not a point: each flow holds its ``diff``
  anywhere in ``[α, β]``, so flows with the same path may keep rates up to
  ``β/α`` apart (``(β + 1)/α`` with Linux's truncation; Boutremans & Le
  Boudec, "A note on the fairness of TCP Vegas", 2000). ``alpha = beta``
  removes that spread.

Defaults and their sources: ``alpha = 2``, ``beta = 4``, ``gamma = 1``
(segments) — Linux ``tcp_vegas.c`` module parameters (6.x);
``slow_start = "linux"``, ``diff_rule = "linux"``.
"""

from __future__ import annotations

import math

import numpy as np

from .base import MIN_SSTHRESH, Ack, Loss, RttSample
from .fluid import FlowArrays, FluidLaw, any_
from .registry import register
from .reno import Reno, halves_on_loss

MIN_WINDOW = 2.0
"""Vegas never takes ``cwnd`` below 2 segments (Linux ``tcp_vegas_cong_avoid``)."""
ROUND_STEP = 1.0
"""Congestion avoidance moves ``cwnd`` one segment per round towards
``[α, β]`` (Brakmo & Peterson §3.2)."""
EXIT_MARGIN = 1.0
"""Slow start ends with ``cwnd = min(cwnd, target + 1)`` (segments; Linux)."""
FEW_SAMPLES = 2
"""A round with this many RTT samples or fewer decides nothing (Linux)."""


def _target_and_diff(cwnd: float, base_rtt: float, rtt: float, rule: str) -> tuple[float, float]:
    """The window that matches the actual rate, and ``diff``, in segments.

    ``rule="linux"`` (``tcp_vegas_cong_avoid``): whole segments of the window
    and RTTs in whole µs plus one, ``target = ⌊W·BaseRTT/RTT⌋`` and ``diff =
    ⌊W·(RTT − BaseRTT)/BaseRTT⌋``. ``rule="paper"`` (Brakmo & Peterson §3.2):
    ``diff = (Expected − Actual)·BaseRTT = cwnd·(1 − BaseRTT/RTT)``, exact.
    ``rule="ns3"`` (``TcpVegas::IncreaseWindow``, tcp-vegas.cc): whole
    segments, ``target = ⌊W·BaseRTT/RTT⌋`` and ``diff = W − target``, the
    segments queued rounded up."""
    if rule == "paper":
        target = cwnd * base_rtt / rtt
        return target, cwnd - target
    w = math.floor(cwnd)
    if rule == "ns3":
        target = float(math.floor(w * (base_rtt / rtt)))
        return target, w - target
    base_us, rtt_us = round(base_rtt * 1e6) + 1, round(rtt * 1e6) + 1
    return float(w * base_us // rtt_us), float(w * (rtt_us - base_us) // base_us)


def _decision(before: dict, event: object, after: dict) -> tuple[float, float] | None:
    """(diff, cwnd change) of the one Vegas decision made in congestion
    avoidance during this step, or ``None`` if there was not exactly one."""
    if not (isinstance(event, Ack) or getattr(event, "acks", None)):
        return None
    if before["cwnd"] < before["ssthresh"] or after["decisions"] != before["decisions"] + 1:
        return None
    cwnd, base, rtt = before["cwnd"], after["base_rtt"], after["rtt_used"]
    if after["diff_rule"] == "paper":  # Brakmo & Peterson: cwnd·(1 − BaseRTT/RTT)
        diff = cwnd * (1.0 - base / rtt)
    elif after["diff_rule"] == "ns3":  # ns-3's TcpVegas: W − ⌊W·BaseRTT/RTT⌋
        diff = math.floor(cwnd) - math.floor(math.floor(cwnd) * (base / rtt))
    else:  # Linux tcp_vegas_cong_avoid: whole segments, RTTs in µs + 1
        base_us, rtt_us = int(base * 1e6 + 0.5) + 1, int(rtt * 1e6 + 0.5) + 1
        diff = math.floor(cwnd) * (rtt_us - base_us) // base_us
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
        expected = max(before["cwnd"] - ROUND_STEP, MIN_WINDOW) - before["cwnd"]
    elif diff < after["alpha"]:
        expected = ROUND_STEP
    else:
        return None
    if not math.isclose(change, expected, rel_tol=1e-9, abs_tol=1e-9):
        return (f"diff = {diff!r} with alpha={after['alpha']!r}, beta={after['beta']!r}: cwnd "
                f"changed by {change!r}, the rule says {expected!r}")
    return None


def _loss_rule(before: dict, event: object, after: dict) -> str | None:
    """On a loss, the ``loss_rule``'s ``ssthresh``: Reno's (RFC 5681 eq. 4),
    or ns-3's ``max(min(ssthresh, cwnd − 1), 2)`` (``TcpVegas::GetSsThresh``)."""
    if before.get("loss_rule") != "ns3":
        return halves_on_loss(before, event, after)
    if not isinstance(event, Loss):
        return None
    expected = max(min(before["ssthresh"], before["cwnd"] - 1.0), MIN_SSTHRESH)
    if not math.isclose(after["ssthresh"], expected, rel_tol=1e-9, abs_tol=1e-9):
        return (f"{event.kind} loss at cwnd={before['cwnd']!r}, ssthresh="
                f"{before['ssthresh']!r}: ssthresh became {after['ssthresh']!r}; ns-3's "
                f"max(min(ssthresh, cwnd - 1), 2) = {expected!r}")
    return None


@register
class Vegas(Reno):
    """TCP Vegas window law (Brakmo & Peterson 1995) with their recovery (§3.1), as ns-2 runs it."""

    name = "vegas"
    recovery = "vegas"  # Brakmo & Peterson §3.1 (ccsim.recovery.vegas), as ns-2 (Zhang & Bian; Lai & Yao)
    param_space = {"alpha": (0.5, 3.0), "beta": (3.0, 8.0), "gamma": (0.25, 3.0)}
    properties = (_holds_inside_alpha_beta, _one_segment_per_round, _loss_rule)

    def __init__(self, *, alpha: float = 2.0, beta: float = 4.0, gamma: float = 1.0,
                 slow_start: str = "linux", diff_rule: str = "linux",
                 loss_rule: str = "reno") -> None:
        from ..errors import ScenarioError
        if slow_start not in ("linux", "paper"):
            raise ScenarioError("slow_start", slow_start, "'linux' or 'paper'")
        if diff_rule not in ("linux", "paper", "ns3"):
            raise ScenarioError("diff_rule", diff_rule, "'linux', 'paper' or 'ns3'")
        if loss_rule not in ("reno", "ns3"):
            raise ScenarioError("loss_rule", loss_rule, "'reno' or 'ns3'")
        self.alpha = alpha  # fewest segments to keep queued (segments)
        self.beta = beta    # most segments to keep queued (segments)
        self.gamma = gamma  # queued segments that end slow start (segments)
        self.slow_start_variant = slow_start  # "linux": every ACK; "paper": every other round
        self.diff_rule = diff_rule  # "linux": whole segments and µs; "paper": exact; "ns3"
        self.loss_rule = loss_rule  # "reno": FlightSize/2; "ns3": min(ssthresh, cwnd - 1)

    def params(self) -> dict:
        # ``slow_start`` is also Reno's method: the keyword's value is kept apart
        return {"alpha": self.alpha, "beta": self.beta, "gamma": self.gamma,
                "slow_start": self.slow_start_variant, "diff_rule": self.diff_rule,
                "loss_rule": self.loss_rule}

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
            few = self.round_samples <= FEW_SAMPLES
            if not few:
                self.decide()
            self._begin_round(ack)
            if few:
                # Too few samples to trust (Linux): Reno's step for this ACK.
                acked = self.slow_start(ack.acked)
                if acked:
                    self.cwnd += acked / self.cwnd
                return
        if self.cwnd < self.ssthresh and (self.growing or self.slow_start_variant == "linux"):
            self.slow_start(ack.acked)  # congestion avoidance moves only at round ends

    def decide(self) -> None:
        """The once-per-round decision, from the round that just ended
        (:meth:`on_ack` calls it when a round with more than ``FEW_SAMPLES``
        RTT samples ends). A seam: a subclass that changes only the decision
        overrides this, and records ``rtt_used``, ``diff`` and ``decisions``
        as it does, which the declared properties read."""
        cwnd, rtt = self.cwnd, self.round_min_rtt
        target, diff = _target_and_diff(cwnd, self.base_rtt, rtt, self.diff_rule)
        self.rtt_used, self.diff = rtt, diff
        self.decisions += 1
        if self.slow_start_variant == "linux":
            self._decide_linux(cwnd, target, diff)
            return
        if cwnd < self.ssthresh:
            if self.growing:           # cwnd changed this round: compare after the next
                self.growing = False
            elif diff > self.gamma:    # queue building: leave slow start
                self.cwnd = max(min(cwnd, target + EXIT_MARGIN), MIN_WINDOW)
                self.ssthresh = self.cwnd
            else:
                self.growing = True
        elif diff > self.beta:         # too much queued: slow down
            self.cwnd = max(cwnd - ROUND_STEP, MIN_WINDOW)
            self.ssthresh = min(self.ssthresh, self.cwnd)
        elif diff < self.alpha:        # too little queued: speed up
            self.cwnd = cwnd + ROUND_STEP

    def _decide_linux(self, cwnd: float, target: float, diff: float) -> None:
        """Linux ``tcp_vegas_cong_avoid`` at a round's end: slow start ends once
        ``diff > γ`` (``cwnd = min(cwnd, ⌊target⌋ + 1)``) or grows on (by the
        round-ending ACK's own slow-start step, in :meth:`on_ack`); in
        congestion avoidance ±1 outside ``[α, β]``; ``ssthresh`` never above
        ``cwnd − 1`` after a cut, and every round ends with
        ``ssthresh = max(ssthresh, ⌊cwnd/2⌋ + ⌊cwnd/4⌋)`` (tcp_current_ssthresh)."""
        if cwnd < self.ssthresh:
            if diff > self.gamma:
                self.cwnd = min(cwnd, math.floor(target) + EXIT_MARGIN)
                self.ssthresh = min(self.ssthresh, self.cwnd)  # tcp_vegas_ssthresh
        elif diff > self.beta:
            self.cwnd = cwnd - ROUND_STEP
            self.ssthresh = min(self.ssthresh, self.cwnd)
        elif diff < self.alpha:
            self.cwnd = cwnd + ROUND_STEP
        self.cwnd = max(self.cwnd, MIN_WINDOW)
        whole = math.floor(self.cwnd)
        self.ssthresh = max(self.ssthresh, float(whole // 2 + whole // 4))

    def ssthresh_after(self, loss: Loss) -> float:
        if self.loss_rule == "ns3":  # TcpVegas::GetSsThresh
            return max(min(self.ssthresh, self.cwnd - 1.0), MIN_SSTHRESH)
        return super().ssthresh_after(loss)

    def on_loss(self, loss: Loss) -> None:
        super().on_loss(loss)
        self.round_end = None  # a fresh round once recovery is over
        self.growing = True
        if loss.kind == "timeout":
            # Linux: the retransmission after a timeout leaves with nothing in
            # flight (CA_EVENT_TX_START), and tcp_vegas_init forgets BaseRTT.
            self.base_rtt = math.inf


class VegasFluid(FluidLaw):
    """Vegas in the fluid engine.

    ``BaseRTT`` is the smallest RTT the flow has seen, ``RTT`` the current
    one (Linux's forgetting of ``BaseRTT`` at a timeout is not modelled).
    Linux's ``diff = cwnd·(RTT − BaseRTT)/BaseRTT`` is truncated to whole
    segments, so it holds the window while ``⌈α⌉ ≤ diff < ⌊β⌋ + 1``; the
    paper's (``diff_rule="paper"``) ``diff = cwnd·(1 − BaseRTT/RTT)`` while
    ``α ≤ diff ≤ β``; ns-3's (``diff_rule="ns3"``), the queue rounded up,
    while ``⌈α⌉ − 1 < queue ≤ ⌊β⌋``. All are compared as segments queued,
    ``cwnd·(1 − BaseRTT/RTT)``, against the band scaled to it. Congestion
    avoidance moves ``cwnd`` one segment per RTT towards the band, and no
    further than its edge within a step (a segment more in flight adds at
    most one segment queued), so a step longer than the RTT cannot jump
    over it. A round whose ACKs carry ``FEW_SAMPLES`` RTT samples or fewer
    (windows of up to five segments behind delayed ACKs) decides nothing and
    adds Reno's ``acked/cwnd`` for its last ACK, as Linux's
    ``tcp_vegas_cong_avoid`` (:meth:`_few_samples`): at 5 % random loss this
    is most rounds. Slow start doubles per RTT and ends once ``diff > γ`` with
    ``cwnd = min(cwnd, cwnd·BaseRTT/RTT + 1)``, as Linux's
    ``tcp_vegas_cong_avoid`` (the paper's every-other-round slow start,
    ``slow_start="paper"``, is not modelled apart). On loss: the window
    law's rule (``loss_rule``).
    """

    scalar_params = ("alpha", "beta")  # Linux rounds them to whole segments
    round_steps = True  # one segment per round, and no further than the band
    holds = True  # inside the band at a steady queue, nothing moves the window

    def grow(self, f: FlowArrays) -> None:
        cc = self.cc
        moving = f.h > 0
        base = np.minimum(f.min_rtt, f.rtt)
        queued = 1.0 - base / f.rtt          # segments queued per segment of window
        if cc.diff_rule == "paper":
            scale, lo, hi = 1.0, cc.alpha, cc.beta
        elif cc.diff_rule == "ns3":  # ns-3's diff is the segments queued rounded up
            scale, lo, hi = 1.0, math.ceil(cc.alpha) - 1.0, math.floor(cc.beta)
        else:  # Linux's diff is queued·RTT/BaseRTT, in whole segments
            scale, lo, hi = base / f.rtt, math.ceil(cc.alpha), math.floor(cc.beta) + 1.0
        few = self._few_samples(f)
        in_ss = moving & (f.cwnd < f.ssthresh)
        leave = in_ss & ~few & (f.cwnd * queued > cc.gamma * scale)
        if any_(leave):
            f.cwnd[leave] = np.maximum(np.minimum(f.cwnd, f.cwnd * base / f.rtt + EXIT_MARGIN),
                                       MIN_WINDOW)[leave]
            f.ssthresh[leave] = f.cwnd[leave]
        h_ca = f.slow_start()
        queue = f.cwnd * queued
        rounds = h_ca / f.rtt
        step = ROUND_STEP * rounds           # segments this step may move cwnd
        up = np.minimum(step, np.maximum(lo * scale - queue, 0.0))
        down = np.minimum(step, np.maximum(queue - hi * scale, 0.0))
        if any_(few):  # no decision: the round-ending ACK's Reno step, acked/cwnd
            up = np.where(few, rounds * f.ack_segs / np.maximum(f.cwnd, 1.0), up)
            down = np.where(few, 0.0, down)
        cwnd = np.maximum(f.cwnd + up - down, np.where(down > 0, MIN_WINDOW, 0.0))
        np.copyto(f.cwnd, np.where(h_ca > 0, np.maximum(cwnd, np.minimum(f.cwnd, MIN_WINDOW)),
                                   f.cwnd))
        shrink = (down > 0) & (h_ca > 0)
        np.copyto(f.ssthresh, np.where(shrink, np.minimum(f.ssthresh, f.cwnd), f.ssthresh))


    @staticmethod
    def _few_samples(f: FlowArrays) -> np.ndarray:
        """Flows whose rounds carry ``FEW_SAMPLES`` RTT samples or fewer, so
        that Linux's ``tcp_vegas_cong_avoid`` decides nothing and gives the
        round's last ACK Reno's step (``cntRTT <= 2``). A round's samples are
        its ACKs: ``W = ⌊cwnd⌋`` segments (the packet sender's flight), one
        ACK per ``ack_segs`` of them; an odd window's last segment is ACKed
        by the delayed-ACK timer when it fires before the next round's first
        segment arrives, ``RTT − (W − 1)/C`` later, and otherwise together
        with that segment, in the next round (RFC 1122 §4.2.3.2)."""
        w = np.floor(f.cwnd)
        pairs = np.floor(w / f.ack_segs)
        odd = w - pairs * f.ack_segs > 0
        gap = f.rtt - (w - 1.0) / f.capacity
        timer = odd & (f.delack_timeout < gap)
        return pairs + timer <= FEW_SAMPLES

    def ssthresh_after(self, f: FlowArrays, m: np.ndarray, kind: str) -> np.ndarray:
        if self.cc.loss_rule == "ns3":  # Vegas.ssthresh_after's ns-3 rule
            return np.maximum(np.minimum(f.ssthresh[m], f.cwnd[m] - 1.0), MIN_SSTHRESH)
        return super().ssthresh_after(f, m, kind)


Vegas.fluid = VegasFluid
