"""TCP-NV (New Vegas): keep at most ``nv_pad`` segments queued, measured by rate.

Source: Linux ``net/ipv4/tcp_nv.c`` (L. Brakmo, 2016; mainline since 4.8), the
default rule for rule and constant for constant (its module parameters keep
their names and integer units here). NV has no paper; its design notes are
the file's own comments. Its source warns that it is meant for data centres
where every flow runs NV: against a loss-based flow it yields.

Per ACK that carries an RTT sample (``tcpnv_acked``, outside loss recovery):

* ``avg_rtt = (rtt·nv_rtt_factor + avg_rtt·(256 − nv_rtt_factor)) / 256``
  (an average of the samples, weight 1/2 by default); the first sample after
  a (re)start also sets ``min_rtt = avg_rtt``;
* ``rate = in_flight / avg_rtt`` with ``in_flight`` the segments delivered
  while the acknowledged segment was in flight, itself included: the data
  outstanding when it was sent, if none was lost (``tcp_clean_rtx_queue``
  hands ``sample.in_flight = mss · (tp->delivered − rs->prior_delivered)``,
  the ACK's ``sample_delivered``; so NV asks for the rate sample,
  :attr:`samples_delivery_rate`); the round keeps its largest ``rate``,
  and the ACKs counted since the last decision (``eval``, at most 255);
* ``min_rtt`` is the smallest ``avg_rtt`` since the last min-RTT reset, and
  ``min_rtt_new`` the smallest since then: 2 s after the flow began and every
  ``nv_reset_period·(384 + u)/512`` s afterwards (``u`` uniform in 0..255)
  ``min_rtt = min_rtt_new`` and the latter starts afresh;
* once per round (the first ACK beyond what was sent when the round began):
  ``max_win = ⌊max_rate·min_rtt⌋ + nv_pad``, the window the measured rate
  needs plus the allowed queue, and with ``W = ⌊cwnd⌋``:

  - ``W > max_win`` (congestion): after ``nv_rtt_min_cnt`` rounds and
    ``nv_ssthresh_eval_min_calls`` ACKs in slow start (``ssthresh = ∞``), or
    ``nv_dec_eval_min_calls`` ACKs after it (short of those, growth stops once
    ``nv_stop_rtt_cnt`` rounds passed without a decision): growth stops,
    ``ssthresh = nv_ssthresh_factor·max_win/8``, and ``cwnd`` falls by
    ``max(2, (W − max_win)·nv_cong_dec_mult/128)`` if ``W − max_win > 2``,
    else to ``max_win``;
  - ``W ≤ max_win − nv_pad_buffer`` (room): after
    ``nv_inc_eval_min_calls`` ACKs, growth is allowed again; consecutive such
    rounds raise a negative growth factor by one every
    ``nv_cwnd_growth_rate_neg`` of them (and a non-negative one every
    ``nv_cwnd_growth_rate_pos``, 0: never);
  - in between: nothing;

  and a decision resets the counts and keeps ``cwnd ≥ nv_min_cwnd``;
* growth (``tcpnv_cong_avoid``), only while allowed: Reno's slow start below
  ``ssthresh``, then ``cwnd += acked/cnt`` with ``cnt = max(4, W >> g)`` for
  a growth factor ``g ≥ 0`` (Reno's one segment per RTT at ``g = 0``) and
  ``cnt = W << −g`` below 0;
* on loss: ``ssthresh = max(W·nv_loss_dec_factor/1024, 2)`` (80 %), growth
  stops until a round finds room, and the round counts restart when recovery
  ends; a timeout also lowers the growth factor by one (not below −8) after
  clamping it to at most 0, so the flow regrows at half Reno's speed or less.

Differences from the source:

* RTTs, rates and windows are floats where Linux keeps µs, 100 bit/s units
  and whole segments; the decisions use the whole part of ``cwnd``, as Linux.
* Rounds and bytes acknowledged are counted in delivered segments
  (``Ack.delivered``, SACKed ones included) for Linux's ``snd_una``.
* The min-RTT reset draws ``u`` from a generator of its own, seeded from the
  ``seed`` keyword and the time of the flow's first ACK, so the same
  scenario gives the same draws; Linux draws from the kernel's entropy.
* A congestion decision's ``ssthresh`` is at least 2 segments; Linux's can
  fall below with ``nv_ssthresh_factor < 8`` and a small ``nv_pad``.
* Not modelled: the RTT bounds a BPF program may install
  (``BPF_SOCK_OPS_BASE_RTT``), the ``nv_catchup`` state (never entered in
  mainline), and undo after a spurious recovery. Linux grows only when
  ``cwnd``-limited; ccsim's bulk senders always are.
* The ``nv_min_cwnd`` kept per connection for TSO/interrupt coalescence
  (4, +2 when a round ends on its first ACK with a window acknowledged, at
  most 81, halved at each min-RTT reset) is modelled; ccsim has no TSO, so
  it acts only at tiny windows.

Measured (10 Mbit/s, 40 ms; ``docs/algorithms.md``): alone in a 4-BDP buffer
NV holds 8-10 segments queued at full utilisation until its first min-RTT
reset; each reset then takes the period's standing queue for base delay, so
without other jitter the queue grows by about ``nv_pad`` per reset, as the
rule implies. Against CUBIC it takes 0.34-0.41 of a 4-BDP link, but 0.62
of a 1-BDP one (its minimum RTT, re-measured after each loss, includes CUBIC's
queue, and it keeps 80 % at a loss).

Defaults and their sources (Linux ``tcp_nv.c`` module parameters and
constants): ``nv_pad = 10`` segments, ``nv_pad_buffer = 2``,
``nv_reset_period = 5`` s, ``nv_min_cwnd = 2``, ``nv_cong_dec_mult = 38``
(``30·128/100``, 30 %), ``nv_ssthresh_factor = 8`` (×8/8), ``nv_rtt_factor =
128`` (of 256), ``nv_loss_dec_factor = 819`` (of 1024, 80 %),
``nv_cwnd_growth_rate_neg = 8``, ``nv_cwnd_growth_rate_pos = 0``,
``nv_dec_eval_min_calls = 60``, ``nv_inc_eval_min_calls = 20``,
``nv_ssthresh_eval_min_calls = 30``, ``nv_stop_rtt_cnt = 10``,
``nv_rtt_min_cnt = 2``; ``NV_MIN_CWND = 4``, ``NV_MIN_CWND_GROW = 2``,
``NV_TSO_CWND_BOUND = 80``, the first min-RTT reset after 2 s.
Default recovery: ``"prr"`` (Linux: SACK recovery with PRR for every law).
"""

from __future__ import annotations

import math
from typing import ClassVar

import numpy as np

from .._splitmix import draw, seed_from
from .base import Ack, CongestionControl, Loss
from .fluid import FlowArrays, FluidLaw
from .registry import register

FIRST_RESET = 2.0
"""Seconds from the flow's start to the first min-RTT reset (``jiffies + 2·HZ``)."""
TSO_MIN_CWND = 4.0
"""The per-connection ``nv_min_cwnd`` starts here and never halves below it
(``NV_MIN_CWND``)."""
TSO_MIN_CWND_GROW = 2.0
"""Its step up when a round ends on its first ACK (``NV_MIN_CWND_GROW``)."""
TSO_CWND_BOUND = 80.0
"""It grows while not above this (``NV_TSO_CWND_BOUND``), to at most one more."""
CA_MIN_CNT = 4.0
"""At a growth factor ≥ 0, one segment per at least this many acknowledged."""
GROWTH_FACTOR_FLOOR = -8
"""A timeout lowers the growth factor no further than this."""
MIN_SSTHRESH = 2.0
"""A congestion decision sets ``ssthresh`` no lower than this (segments)."""
MAX_EVAL = 255
"""The ACK and round counters saturate here (Linux's ``u8``)."""


def max_window(max_rate: float, min_rtt: float, pad: float) -> float:
    """NV's ``max_win``: the window the round's largest rate needs at
    ``min_rtt`` (whole segments, truncated) plus ``pad`` queued segments."""
    return math.floor(max_rate * min_rtt) + pad


def congestion_decrease(w: float, max_win: float, cong_dec_mult: int) -> float:
    """The window after a congestion decision at whole window ``w > max_win``:
    ``w − max(2, ⌊(w − max_win)·mult/128⌋)`` if the gap exceeds 2, else
    ``max_win`` (``mult > 0``) or unchanged."""
    if w - max_win > 2:
        return w - max(2.0, float(math.floor((w - max_win) * cong_dec_mult / 128)))
    return max_win if cong_dec_mult > 0 else w


def _loss_keeps_loss_dec_factor(before: dict, event: object, after: dict) -> str | None:
    """``tcpnv_recalc_ssthresh``: ``ssthresh = max(⌊⌊cwnd⌋·819/1024⌋, 2)``."""
    if not isinstance(event, Loss):
        return None
    expected = max(math.floor(math.floor(before["cwnd"]) * before["nv_loss_dec_factor"] / 1024),
                   2)
    if after["ssthresh"] != expected:
        return (f"loss at cwnd={before['cwnd']!r}: ssthresh became {after['ssthresh']!r}, "
                f"tcp_nv.c gives {expected!r}")
    return None


def _no_growth_while_stopped(before: dict, event: object, after: dict) -> str | None:
    """Growth stopped by a congestion decision or a loss stays stopped: an ACK
    that finds it stopped and makes no decision does not raise ``cwnd``."""
    if not isinstance(event, Ack) or before["allow_growth"] or after["allow_growth"]:
        return None
    if after["decisions"] == before["decisions"] and after["cwnd"] > before["cwnd"] + 1e-9:
        return f"cwnd grew from {before['cwnd']!r} to {after['cwnd']!r} with growth stopped"
    return None


@register
class NV(CongestionControl):
    """TCP-NV window law (Linux ``tcp_nv.c``) with PRR recovery."""

    name = "nv"
    recovery = "prr"  # Linux: SACK recovery with PRR for every law (tcp_input.c)
    samples_delivery_rate: ClassVar[bool] = True  # in_flight: the rate sample's delivered count
    param_space = {"nv_pad": (2, 40), "nv_pad_buffer": (0, 5), "nv_reset_period": (1.0, 20.0),
                   "nv_min_cwnd": (1, 10), "nv_cong_dec_mult": (0, 128),
                   "nv_ssthresh_factor": (1, 16), "nv_rtt_factor": (0, 256),
                   "nv_loss_dec_factor": (512, 1024), "nv_cwnd_growth_rate_neg": (0, 16),
                   "nv_cwnd_growth_rate_pos": (0, 16), "nv_dec_eval_min_calls": (1, 255),
                   "nv_inc_eval_min_calls": (1, 255), "nv_ssthresh_eval_min_calls": (1, 255),
                   "nv_stop_rtt_cnt": (1, 255), "nv_rtt_min_cnt": (1, 255),
                   "seed": (0, 2**31 - 1)}
    properties = (_loss_keeps_loss_dec_factor, _no_growth_while_stopped)

    def __init__(self, *, nv_pad: int = 10, nv_pad_buffer: int = 2,
                 nv_reset_period: float = 5.0, nv_min_cwnd: int = 2,
                 nv_cong_dec_mult: int = 30 * 128 // 100, nv_ssthresh_factor: int = 8,
                 nv_rtt_factor: int = 128, nv_loss_dec_factor: int = 819,
                 nv_cwnd_growth_rate_neg: int = 8, nv_cwnd_growth_rate_pos: int = 0,
                 nv_dec_eval_min_calls: int = 60, nv_inc_eval_min_calls: int = 20,
                 nv_ssthresh_eval_min_calls: int = 30, nv_stop_rtt_cnt: int = 10,
                 nv_rtt_min_cnt: int = 2, seed: int = 0) -> None:
        self.nv_pad = nv_pad                    # segments queued NV allows (max_win − need)
        self.nv_pad_buffer = nv_pad_buffer      # grow only this far below max_win (segments)
        self.nv_reset_period = nv_reset_period  # s between min-RTT resets (±25 % at random)
        self.nv_min_cwnd = nv_min_cwnd          # NV's decisions leave cwnd at least this
        self.nv_cong_dec_mult = nv_cong_dec_mult  # /128 of the excess cut on congestion
        self.nv_ssthresh_factor = nv_ssthresh_factor  # /8 of max_win as ssthresh on congestion
        self.nv_rtt_factor = nv_rtt_factor      # /256 weight of a new RTT sample in avg_rtt
        self.nv_loss_dec_factor = nv_loss_dec_factor  # /1024 of cwnd as ssthresh on loss
        self.nv_cwnd_growth_rate_neg = nv_cwnd_growth_rate_neg  # rounds of room per step up (g<0)
        self.nv_cwnd_growth_rate_pos = nv_cwnd_growth_rate_pos  # ... (g ≥ 0); 0: never
        self.nv_dec_eval_min_calls = nv_dec_eval_min_calls  # ACKs before a decrease
        self.nv_inc_eval_min_calls = nv_inc_eval_min_calls  # ACKs before growth resumes
        self.nv_ssthresh_eval_min_calls = nv_ssthresh_eval_min_calls  # ... leaving slow start
        self.nv_stop_rtt_cnt = nv_stop_rtt_cnt  # rounds without a decision that stop growth
        self.nv_rtt_min_cnt = nv_rtt_min_cnt    # rounds before a congestion decision
        self.seed = seed                        # of the min-RTT reset period's draws

    def start(self, initial_window: float, mss: int) -> None:
        super().start(initial_window, mss)
        self.allow_growth = True       # cleared by congestion or loss (nv_allow_cwnd_growth)
        self.growth_factor = 0         # g: cnt = max(4, W >> g), or W << -g below 0
        self.min_rtt = math.inf        # active minimum of avg_rtt (s)
        self.min_rtt_new = math.inf    # minimum since the last reset (s)
        self.reset_at = math.nan       # time of the next min-RTT reset (s)
        self.tso_min_cwnd = TSO_MIN_CWND  # per-connection nv_min_cwnd (segments)
        self.rng: int | None = None  # generator state (SplitMix64)
        self.decisions = 0             # congestion-avoidance decisions made
        self.reset_pending = False     # round counts restart when recovery ends
        self._reset(0.0)

    def max_slow_start_step(self, ack: Ack) -> float:
        """Slow start's one segment per segment acknowledged, plus the floor
        ``nv_min_cwnd`` a round's decision lifts ``cwnd`` to at once."""
        return ack.acked + self.nv_min_cwnd

    def max_growth_per_rtt(self, cwnd: float) -> float:
        """At most doubling (``cnt ≥ 4`` even with a growth factor above 0),
        plus the ``nv_min_cwnd`` floor a decision lifts ``cwnd`` to."""
        return cwnd + self.nv_min_cwnd

    def _reset(self, delivered: float) -> None:
        """``tcpnv_reset``: the counts of a fresh measurement."""
        self.no_cong_cnt = 0           # consecutive rounds with room
        self.rtt_cnt = 0               # rounds since the last decision
        self.avg_rtt = 0.0             # averaged RTT (s); 0: none yet
        self.max_rate = 0.0            # largest rate of the round (segments/s)
        self.round_end = delivered     # the round ends once delivered exceeds this
        self.eval_cnt = 0              # ACKs with a sample since the last decision
        self.last_delivered = delivered

    def on_ack(self, ack: Ack) -> None:
        if self.reset_pending:  # back in the Open state after a recovery
            self.reset_pending = False
            self._reset(ack.delivered)
        self._measure(ack)
        self._grow(ack.acked)

    def _measure(self, ack: Ack) -> None:
        """``tcpnv_acked``: average the RTT, track rates and decide once per round."""
        rtt = ack.rtt
        if rtt is None or rtt <= 0:
            return
        if self.rng is None:  # the flow's first sample: its clock starts
            self.rng = seed_from("nv", self.seed, ack.now)
            self.reset_at = ack.now - rtt + FIRST_RESET
        acked_segments = ack.delivered - self.last_delivered
        self.last_delivered = ack.delivered
        # segments delivered over the acknowledged segment's flight (Linux's sample.in_flight)
        in_flight = ack.sample_delivered
        if not in_flight:
            return
        if self.nv_rtt_factor > 0:
            if self.avg_rtt > 0:
                f = self.nv_rtt_factor / 256.0
                avg = rtt * f + self.avg_rtt * (1.0 - f)
            else:
                avg = rtt
                self.min_rtt = 2.0 * avg  # (then lowered to avg just below)
            self.avg_rtt = avg
        else:
            avg = rtt
        rate = in_flight / avg
        if rate > self.max_rate:
            self.max_rate = rate
        if self.eval_cnt < MAX_EVAL:
            self.eval_cnt += 1
        if avg < self.min_rtt:
            self.min_rtt = avg
        if avg < self.min_rtt_new:
            self.min_rtt_new = avg
        now = ack.now
        if now >= self.reset_at:
            self.min_rtt, self.min_rtt_new = self.min_rtt_new, math.inf
            self.rng, u = draw(self.rng)
            self.reset_at = now + self.nv_reset_period * (384 + math.floor(u * 256)) / 512
            self.tso_min_cwnd = max(float(self.tso_min_cwnd // 2), TSO_MIN_CWND)
        if ack.delivered > self.round_end:
            self._end_round(ack, acked_segments)

    def _end_round(self, ack: Ack, acked_segments: float) -> None:
        snd_nxt = ack.delivered + ack.inflight
        self.round_end = snd_nxt
        if self.rtt_cnt < MAX_EVAL:
            self.rtt_cnt += 1
        if (self.eval_cnt == 1 and acked_segments >= self.tso_min_cwnd - 1
                and self.tso_min_cwnd < TSO_CWND_BOUND + 1):
            # one ACK for the whole round: the window is too small to measure
            self.tso_min_cwnd = min(self.tso_min_cwnd + TSO_MIN_CWND_GROW, TSO_CWND_BOUND + 1)
            self.round_end = snd_nxt + self.tso_min_cwnd
            self.eval_cnt = 0
            self.allow_growth = True
            return
        max_win = max_window(self.max_rate, self.min_rtt, self.nv_pad)
        w = float(math.floor(self.cwnd))
        if w > max_win:
            if self.rtt_cnt < self.nv_rtt_min_cnt:
                return
            if self.ssthresh == math.inf:
                if self.eval_cnt < self.nv_ssthresh_eval_min_calls:
                    return
            elif self.eval_cnt < self.nv_dec_eval_min_calls:
                if self.allow_growth and self.rtt_cnt > self.nv_stop_rtt_cnt:
                    self.allow_growth = False
                return
            self.allow_growth = False
            self.ssthresh = max(float(math.floor(self.nv_ssthresh_factor * max_win / 8)), MIN_SSTHRESH)
            self.cwnd = congestion_decrease(w, max_win, self.nv_cong_dec_mult)
            self.growth_factor = min(self.growth_factor, 0)
            self.no_cong_cnt = 0
        elif w <= max_win - self.nv_pad_buffer:
            if self.eval_cnt < self.nv_inc_eval_min_calls:
                return
            self.allow_growth = True
            self.no_cong_cnt += 1
            g = self.growth_factor
            if g < 0 and 0 < self.nv_cwnd_growth_rate_neg < self.no_cong_cnt:
                self.growth_factor, self.no_cong_cnt = g + 1, 0
            elif g >= 0 and 0 < self.nv_cwnd_growth_rate_pos < self.no_cong_cnt:
                self.growth_factor, self.no_cong_cnt = g + 1, 0
        else:
            return
        self.decisions += 1
        self.eval_cnt = 0
        self.rtt_cnt = 0
        self.max_rate = 0.0
        if self.cwnd < self.nv_min_cwnd:
            self.cwnd = float(self.nv_min_cwnd)

    def _grow(self, acked: float) -> None:
        """``tcpnv_cong_avoid``: Reno's growth, slowed by a negative factor."""
        if not self.allow_growth:
            return
        if self.cwnd < self.ssthresh:
            acked = self.slow_start(acked)
            if not acked:
                return
        w = math.floor(self.cwnd)
        g = self.growth_factor
        cnt = w * 2.0 ** -g if g < 0 else max(CA_MIN_CNT, float(w >> g))
        self.cwnd += acked / cnt

    def ssthresh_after(self, loss: Loss) -> float:
        return float(max(math.floor(math.floor(self.cwnd) * self.nv_loss_dec_factor / 1024), 2))

    def on_loss(self, loss: Loss) -> None:
        super().on_loss(loss)
        self.reset_pending = True   # tcpnv_state: Recovery, CWR or Loss
        self.allow_growth = False
        if loss.kind == "timeout":
            g = min(self.growth_factor, 0)
            if self.nv_cwnd_growth_rate_neg > 0 and g > GROWTH_FACTOR_FLOOR:
                g -= 1
            self.growth_factor = g


class NVFluid(FluidLaw):
    """TCP-NV in the fluid engine.

    Once per round (when ``delivered`` passes what was sent at the round's
    start) the flow compares ``W = ⌊cwnd⌋`` with ``max_win =
    ⌊cwnd·min_rtt/rtt⌋ + nv_pad`` (the window the current rate needs at the
    NV minimum RTT plus the allowed queue; ``rate = (inflight + acked)/rtt``,
    what was in flight when the step's acknowledged data left, over the RTT) and applies the window law's decisions
    (:func:`congestion_decrease`, ``ssthresh`` and the growth flag), with the
    same round and ACK counts: ``eval`` counts ACKs, as ``tcpnv_acked`` runs
    once per ACK (one per ``ack_segs`` segments behind delayed ACKs, one per
    segment in quick-ACK mode), so growth stopped by a loss resumes after
    ``nv_inc_eval_min_calls`` ACKs, not segments. NV's minimum RTT is the smallest
    RTT since the last reset, reset every ``nv_reset_period`` s (the mean of
    Linux's random period, ±0.1 %) and at the first step after a loss (Linux
    takes the first sample after a recovery). Growth while allowed: slow
    start, then ``acked/cnt`` per ACK, one segment per RTT at ``g = 0``
    (``dcwnd/dt = 1/(RTT·2^−g)`` below it); the per-connection TSO minimum
    is not modelled. On loss: ``ssthresh = max(W·819/1024, 2)`` and growth
    stops; a timeout lowers ``g``.
    """

    scalar_params = ("*",)
    state = {"allow": 1.0, "g": 0.0, "nv_min": math.inf, "nv_min_new": math.inf,
             "reset_at": math.nan, "round_end": 0.0, "rtt_cnt": 0.0, "eval_cnt": 0.0,
             "no_cong": 0.0, "max_rate": 0.0, "fresh": 1.0}

    def start(self, f: FlowArrays, m: np.ndarray) -> None:
        f.reset_at[m] = f.now[m] + FIRST_RESET

    def grow(self, f: FlowArrays) -> None:
        cc = self.cc
        live = f.h > 0
        if not live.any():
            return
        rtt = f.rtt
        fresh = live & (f.fresh > 0)
        f.nv_min[fresh] = rtt[fresh]
        f.fresh[fresh] = 0.0
        np.minimum(f.nv_min, np.where(live, rtt, np.inf), out=f.nv_min)
        np.minimum(f.nv_min_new, np.where(live, rtt, np.inf), out=f.nv_min_new)
        due = live & (f.now >= f.reset_at)
        if due.any():
            f.nv_min[due] = np.minimum(f.nv_min_new[due], rtt[due])
            f.nv_min_new[due] = np.inf
            f.reset_at[due] = f.now[due] + cc.nv_reset_period * (384 + 127.5) / 512
        rate = (f.inflight + f.acked) / rtt  # in flight when the step's ACKed data left
        np.maximum(f.max_rate, np.where(live, rate, 0.0), out=f.max_rate)
        # eval counts ACKs (tcpnv_acked runs once per ACK): behind delayed ACKs
        # one per ack_segs segments, one per segment in quick-ACK mode
        quick = np.minimum(f.acked, f.quick_left)
        f.eval_cnt += np.where(live, quick + (f.acked - quick) / f.ack_segs, 0.0)
        np.minimum(f.eval_cnt, MAX_EVAL, out=f.eval_cnt)
        ended = live & (f.delivered > f.round_end)
        if ended.any():
            self._end_round(f, ended)
        held = live & (f.allow <= 0)  # growth stopped: not even slow start
        saved = f.cwnd[held]
        h_ca = f.slow_start()
        f.cwnd[held] = saved
        w = np.floor(f.cwnd)
        g = f.g
        cnt = np.where(g < 0, w * np.exp2(-g), np.maximum(CA_MIN_CNT, np.floor(w * np.exp2(-g))))
        # per ACK acked/cnt: over h_ca, (cwnd/rtt)·h_ca acknowledged segments
        f.cwnd += np.where((h_ca > 0) & (f.allow > 0), f.cwnd * h_ca / (rtt * cnt), 0.0)

    def _end_round(self, f: FlowArrays, ended: np.ndarray) -> None:
        cc = self.cc
        f.round_end[ended] = (f.delivered + f.inflight)[ended]
        f.rtt_cnt[ended] = np.minimum(f.rtt_cnt[ended] + 1.0, MAX_EVAL)
        max_win = np.floor(f.max_rate * f.nv_min) + cc.nv_pad
        w = np.floor(f.cwnd)
        over = ended & (w > max_win) & (f.rtt_cnt >= cc.nv_rtt_min_cnt)
        in_ss = np.isinf(f.ssthresh)
        enough = np.where(in_ss, f.eval_cnt >= cc.nv_ssthresh_eval_min_calls,
                          f.eval_cnt >= cc.nv_dec_eval_min_calls)
        stop = over & ~enough & ~in_ss & (f.allow > 0) & (f.rtt_cnt > cc.nv_stop_rtt_cnt)
        f.allow[stop] = 0.0
        dec = over & enough
        room = ended & (w <= max_win - cc.nv_pad_buffer) & (f.eval_cnt >= cc.nv_inc_eval_min_calls)
        if dec.any():
            f.allow[dec] = 0.0
            f.ssthresh[dec] = np.maximum(np.floor(cc.nv_ssthresh_factor * max_win[dec] / 8), MIN_SSTHRESH)
            gap = w - max_win
            cut = np.where(gap > 2, w - np.maximum(2.0, np.floor(gap * cc.nv_cong_dec_mult / 128)),
                           max_win if cc.nv_cong_dec_mult > 0 else w)
            f.cwnd[dec] = cut[dec]
            f.g[dec] = np.minimum(f.g[dec], 0.0)
            f.no_cong[dec] = 0.0
        if room.any():
            f.allow[room] = 1.0
            f.no_cong[room] += 1.0
            up = room & (((f.g < 0) & (cc.nv_cwnd_growth_rate_neg > 0)
                          & (f.no_cong > cc.nv_cwnd_growth_rate_neg))
                         | ((f.g >= 0) & (cc.nv_cwnd_growth_rate_pos > 0)
                            & (f.no_cong > cc.nv_cwnd_growth_rate_pos)))
            f.g[up] += 1.0
            f.no_cong[up] = 0.0
        decided = dec | room
        f.eval_cnt[decided] = 0.0
        f.rtt_cnt[decided] = 0.0
        f.max_rate[decided] = 0.0
        f.cwnd[decided] = np.maximum(f.cwnd[decided], cc.nv_min_cwnd)

    def ssthresh_after(self, f: FlowArrays, m: np.ndarray, kind: str) -> np.ndarray:
        return np.maximum(np.floor(np.floor(f.cwnd[m]) * self.cc.nv_loss_dec_factor / 1024), 2.0)

    def on_loss(self, f: FlowArrays, m: np.ndarray, kind: str) -> None:
        super().on_loss(f, m, kind)
        f.allow[m] = 0.0
        f.fresh[m] = 1.0
        f.rtt_cnt[m] = 0.0
        f.eval_cnt[m] = 0.0
        f.max_rate[m] = 0.0
        f.no_cong[m] = 0.0
        f.round_end[m] = f.delivered[m]
        if kind == "timeout":
            g = np.minimum(f.g[m], 0.0)
            if self.cc.nv_cwnd_growth_rate_neg > 0:
                g = np.where(g > GROWTH_FACTOR_FLOOR, g - 1.0, g)
            f.g[m] = g


NV.fluid = NVFluid
