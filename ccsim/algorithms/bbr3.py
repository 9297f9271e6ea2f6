"""BBR v3: BBR's path model with loss- and ECN-driven bounds on it.

Sources: N. Cardwell, I. Swett, J. Beshay, "BBR Congestion Control",
draft-ietf-ccwg-bbr (the IETF's BBRv3); Linux's out-of-tree
``net/ipv4/tcp_bbr.c``, google/bbr branch ``v3``, for the defaults. Where the
two differ, Linux's branch is the default and ``variant="draft"`` takes the
draft's value (Drain pacing gain 0.5 vs 0.35 (Linux ``bbr_drain_gain``
88/256), ProbeBW_DOWN pacing gain 0.90 vs 0.91).

Shared with :class:`~ccsim.algorithms.bbr.Bbr` (imported, subclassed):
delivery-rate sampling (``samples_delivery_rate``), the
full-pipe test (BtlBw grew by less than 25 % for 3 rounds), the send quantum
and the recovery handling (``on_recovery``: packet conservation for a round,
``prior_cwnd`` restored on leaving). BBRv3's own rules:

* STARTUP: pacing gain 2.77 (``bbr_startup_pacing_gain``), window gain 2
  (``bbr_startup_cwnd_gain``); it also ends on a loss episode whose loss rate
  is above ``loss_thresh`` (``bbr_check_loss_too_high_in_startup``), with
  ``inflight_longterm = max(BDP, inflight_latest)``.
* DRAIN (pacing gain 0.35, window gain 2) until ``inflight ≤ BDP``
  (Linux ``bbr_check_drain``), then ProbeBW_DOWN; with ``variant="draft"``
  also once more than 3 rounds have passed in Drain (the draft's
  ``BBRCheckDrainDone``: ``round_count > drain_start_round + 3``).
* ProbeBW: DOWN (pacing 0.91, until ``inflight ≤ BDP`` and ``≤`` the long-term
  bound less its headroom) → CRUISE (1.0) → after ``probe_wait`` seconds or
  ``min(BDP, 63)`` rounds (Reno coexistence) REFILL (1.0, one round, the
  short-term bounds reset) → UP (pacing 1.25, window gain 2.25; the long-term
  bound grows by 1, 2, 4 … segments per round while the window is at it)
  until an RTprop has passed and ``inflight ≥ 1.25·BDP``, or loss is too
  high → DOWN.
* ``BtlBw`` is the max of the delivery-rate samples over the last two
  ProbeBW cycles (Linux ``bw_hi[2]``: the filter advances one round after
  DOWN begins), bounded by the short-term ``bw_shortterm``.
* Loss too high (more than ``loss_thresh`` = 2 % of what was in flight lost
  in a round): ``inflight_longterm = max(inflight at the loss,
  beta · target)``, beta = 0.7, and UP ends. Once per round with loss,
  outside probing (STARTUP, REFILL, UP), ``bw_shortterm = max(bw_latest,
  beta · bw_shortterm)`` and ``inflight_shortterm = max(inflight_latest,
  beta · inflight_shortterm)``.
* The window is capped by ``inflight_longterm`` (REFILL, UP, DOWN), by it
  less ``headroom`` (0.15 of it, at least 1 segment) in CRUISE and ProbeRTT,
  and always by ``inflight_shortterm``; never below 4 segments.
* ProbeRTT when the 5-s minimum RTT (``probe_rtt_win``) expired: the window
  at half the BDP (``bbr_probe_rtt_cwnd_gain``) for 200 ms and a round, then
  ProbeBW_CRUISE (or STARTUP if the pipe was never full). RTprop itself is
  the 10-s minimum.
* Pacing at ``pacing_gain · BtlBw``, 1 % below (``bbr_pacing_margin_percent``);
  from ``2.77 · cwnd / srtt`` at the first RTT sample
  (``bbr_init_pacing_rate_from_rtt``), and never lower before the pipe is
  full (``bbr_set_pacing_rate``).
* ECN (option ``ecn_response=True``, Linux v3's ``bbr_ecn_enable``): per
  round, ``alpha += (ce_ratio − alpha)/16``; a round with marks cuts the
  short-term bounds to ``(1 − alpha/3)`` of themselves; a round with more than
  half its segments marked counts as too high, as loss does. Linux applies it
  only below a 5-ms RTprop (``bbr_ecn_max_rtt_us``); here ``ecn_max_rtt``.

Rounds and the latest signals read the ACK's rate sample (``Ack.tx_in_flight``,
``Ack.sample_delivered``) as Linux does: a round ends at the first ACK of a
segment sent after it began (``bbr_update_round``: what had been delivered
when that segment went out reaches the count delivered at the round's start;
so also REFILL's round, ProbeRTT's and a recovery's); ``inflight_latest`` is
the largest ``rs->delivered`` of a round's ACKs; a loss is too high, and sets
``inflight_longterm``, against the ``tx_in_flight`` of the ACK that found it,
not what is in flight at detection. The packet engine's sample is
``tcp_rate.c``'s (:class:`~ccsim.packet.tcp.Sender`): the longer of the send
and ACK phases, both restarted when a segment leaves with nothing
outstanding, and no sample (``delivery_rate`` ``None``) below the minimum
RTT; such an ACK ends no round and sets no latest signal
(``bbr_update_round_start`` and ``bbr_update_latest_delivery_signals`` need
``rs->interval_us > 0``).

Differences from the sources: a round's loss rate is the segments the loss
detector marked (``on_recovery``'s ``lost``), at least one per loss episode,
summed over the round (Linux: lost over the ACK's sample interval,
``rs->lost``); the rate sample is the cumulative ACK's (Linux: also
SACKed segments'), so a duplicate ACK's loss is weighed against the last
cumulative ACK's ``tx_in_flight``; ``tx_in_flight`` counts the segments the
loss detector marked lost as out of flight, and without a detector (RFC 6675
recovery) only the SACKed; ``probe_wait`` is a fixed 2.5 s (Linux draws 2–3 s
at random) and the Reno-coexistence round count starts at 0 (Linux: 0 or 1 at
random): same scenario, same result; STARTUP's loss exit takes one episode
above the threshold (Linux: 6 loss-marking ACKs in a round); no ACK-aggregation
allowance and no idle restart; ``inflight_longterm`` rises to a higher
``tx_in_flight`` only in UP (Linux: in any phase while loss is not too high).
In the fluid engine, :class:`Bbr3Fluid` runs these rules once per step (see
docs/fluid.md for its agreement with the packet engine).
"""

from __future__ import annotations

import math

import numpy as np

from .base import MIN_SSTHRESH, Ack, EcnEcho, Loss, RttSample
from .bbr import DRAIN, FLUID_MODES, PROBE_BW, PROBE_RTT, SEND_QUANTUM, STARTUP, Bbr, BbrFluid
from .fluid import FlowArrays, FluidLaw, any_
from .contract import RecoveryState
from .registry import register

STARTUP_PACING_GAIN = 2.77   # Linux v3 bbr_startup_pacing_gain (BBR_UNIT * 277 / 100)
STARTUP_CWND_GAIN = 2.0      # bbr_startup_cwnd_gain
GAINS = {  # variant -> (drain pacing gain, ProbeBW_DOWN pacing gain)
    "linux": (88 / 256, 0.91),   # bbr_drain_gain (ln 2 / 2 in 8-bit fixed point), bbr_pacing_gain[DOWN]
    "draft": (0.5, 0.90),        # draft-ietf-ccwg-bbr: BBR.pacing_gain in Drain and ProbeBW_DOWN
}
UP_PACING_GAIN, UP_CWND_GAIN = 1.25, 2.25
PROBE_RTT_CWND_GAIN = 0.5
MAX_PROBE_ROUNDS = 63        # bbr_bw_probe_max_rounds: Reno coexistence cap
DRAIN_MAX_ROUNDS = 3         # draft-ietf-ccwg-bbr BBRCheckDrainDone: round_count > drain_start_round + 3
DOWN, CRUISE, REFILL, UP = "down", "cruise", "refill", "up"


@register
class Bbr3(Bbr):
    """BBR v3: BBR v1's model, with long- and short-term bounds on bandwidth
    and in-flight data set by loss (and, optionally, ECN)."""

    name = "bbr3"
    param_space = {"beta": (0.3, 0.95), "loss_thresh": (0.005, 0.2),
                   "headroom": (0.0, 0.5), "probe_wait": (0.5, 10.0),
                   "probe_rtt_window": (1.0, 20.0), "probe_rtt_time": (0.05, 1.0),
                   "min_rtt_window": (2.0, 60.0), "pacing_margin": (0.0, 0.1)}
    def __init__(self, *, variant: str = "linux", beta: float = 0.7, loss_thresh: float = 0.02,
                 headroom: float = 0.15, probe_wait: float = 2.5,
                 probe_rtt_window: float = 5.0, probe_rtt_time: float = 0.2,
                 min_rtt_window: float = 10.0, pacing_margin: float = 0.01,
                 ecn_response: bool = False, ecn_thresh: float = 0.5,
                 ecn_max_rtt: float = 0.005) -> None:
        from ..errors import ScenarioError
        if variant not in GAINS:
            raise ScenarioError("variant", variant, "'linux' (google/bbr v3) or 'draft' "
                                "(draft-ietf-ccwg-bbr)")
        for field, value, lo, hi in (("beta", beta, 0.0, 1.0), ("loss_thresh", loss_thresh, 0.0, 1.0),
                                     ("headroom", headroom, 0.0, 1.0)):
            if not lo < value < hi and not (field == "headroom" and value == 0.0):
                raise ScenarioError(field, value, f"a fraction in ({lo}, {hi})")
        super().__init__(min_rtt_window=min_rtt_window, probe_rtt_time=probe_rtt_time,
                         pacing_margin=pacing_margin, high_gain=STARTUP_PACING_GAIN,
                         drain_gain=GAINS[variant][0])
        self.variant = variant
        self.down_gain = GAINS[variant][1]  # ProbeBW_DOWN pacing gain
        self.beta = beta                    # multiplicative cut of the bounds
        self.loss_thresh = loss_thresh      # fraction lost in a round that is too much
        self.headroom = headroom            # fraction of inflight_longterm left free in CRUISE
        self.probe_wait = probe_wait        # s in DOWN/CRUISE before probing again
        self.probe_rtt_window = probe_rtt_window  # s, the ProbeRTT minimum's window
        self.ecn_response = ecn_response
        self.ecn_thresh = ecn_thresh        # CE fraction in a round that is too much
        self.ecn_max_rtt = ecn_max_rtt      # s, RTprop above which ECN is ignored
        self._ecn = ecn_response
        self._now = 0.0

    def start(self, initial_window: float, mss: int) -> None:
        super().start(initial_window, mss)
        self.gain = STARTUP_CWND_GAIN
        self.phase = ""                        # ProbeBW sub-phase
        self.bw_hi = [0.0, 0.0]                # segments/s, max per ProbeBW cycle
        self.advance_filter = False            # advance bw_hi at the next round start
        self.bw_shortterm = math.inf           # segments/s (bw_lo)
        self.inflight_shortterm = math.inf     # segments (inflight_lo)
        self.inflight_longterm = math.inf      # segments (inflight_hi)
        self.bw_latest = 0.0                   # segments/s, max sample this round
        self.inflight_latest = 0.0             # segments, largest rs->delivered this round
        self.tx_in_flight = 0.0                # segments, the latest ACK's rs->tx_in_flight
        self.lost_in_round = 0.0
        self.loss_in_round = False
        self.ce_in_round, self.delivered_in_round = 0.0, 0.0
        self.ecn_alpha = 0.0
        self.prev_probe_too_high = False
        self.rounds_since_probe = 0
        self.up_rounds, self.up_acks, self.up_cnt = 0, 0.0, math.inf
        self.cycle_stamp = 0.0
        self.probe_rtt_min, self.probe_rtt_stamp = math.inf, 0.0
        self.probe_rtt_expired = False
        self.seen_rtt = False                  # Linux has_seen_rtt: pacing initialised
        self.drain_start_round = 0             # the draft's drain_start_round

    # -- the model -----------------------------------------------------------------
    @property
    def max_bw(self) -> float:
        return max(self.bw_hi)

    def on_rtt(self, sample: RttSample) -> None:
        """Linux v3 ``bbr_update_min_rtt``: a 5-s minimum that schedules
        ProbeRTT, and the 10-s minimum RTprop taken from it."""
        expired = sample.now - self.probe_rtt_stamp > self.probe_rtt_window
        if sample.rtt < self.probe_rtt_min or expired:
            self.probe_rtt_min, self.probe_rtt_stamp = sample.rtt, sample.now
        if self.probe_rtt_min <= self.rt_prop or sample.now - self.rt_prop_stamp > self.min_rtt_window:
            self.rt_prop, self.rt_prop_stamp = self.probe_rtt_min, self.probe_rtt_stamp
        self.probe_rtt_expired = self.probe_rtt_expired or expired

    @staticmethod
    def _prior_delivered(ack: Ack) -> float:
        """What had been delivered when the acknowledged segment went out
        (Linux's ``rs->prior_delivered``)."""
        return ack.delivered - ack.sample_delivered

    def _update_bw(self, ack: Ack) -> None:
        """Linux v3 ``bbr_update_round`` and ``bbr_update_latest_delivery_signals``:
        a round ends at the first ACK of a segment sent after it began; the
        round's ``bw_latest`` and ``inflight_latest`` are the largest rate
        sample and ``rs->delivered`` of its ACKs (the one that ends it too)."""
        # only a valid sample ends a round (bbr_update_round_start: rs->interval_us > 0;
        # the sender gives None for tcp_rate.c's invalid one)
        self.round_started = (ack.delivery_rate is not None
                              and self._prior_delivered(ack) >= self.round_end)
        self.tx_in_flight = ack.tx_in_flight
        rate = ack.delivery_rate / (self.mss * 8.0) if ack.delivery_rate else 0.0  # segments/s
        if rate:
            self.bw_latest = max(self.bw_latest, rate)
            self.inflight_latest = max(self.inflight_latest, ack.sample_delivered)
        if self.round_started:
            self.round += 1
            self.round_end = ack.delivered
            self.packet_conservation = False
            self.rounds_since_probe += 1
            self._end_round()
            self.bw_latest = rate  # bbr_advance_latest_delivery_signals
            self.inflight_latest = ack.sample_delivered if rate else 0.0
            if self.advance_filter:
                self.bw_hi = [self.bw_hi[1], 0.0]
                self.advance_filter = False
        self.delivered_in_round += ack.acked
        if rate:
            self.bw_hi[1] = max(self.bw_hi[1], rate)
        self.btl_bw = min(self.max_bw, self.bw_shortterm)

    def _end_round(self) -> None:
        """Linux v3 ``bbr_update_congestion_signals`` at a round's end: the
        short-term bounds adapt to the round's loss (and ECN), outside probing."""
        ce_ratio = self.ce_in_round / self.delivered_in_round if self.delivered_in_round else 0.0
        if self._ecn:
            self.ecn_alpha += (ce_ratio - self.ecn_alpha) / 16.0
        ecn = self._ecn and self.ce_in_round > 0 and self.rt_prop <= self.ecn_max_rtt
        if (self.loss_in_round or ecn) and not self._probing():
            if math.isinf(self.bw_shortterm):
                self.bw_shortterm = self.max_bw
            if math.isinf(self.inflight_shortterm):
                self.inflight_shortterm = self.cwnd
            if ecn:
                cut = 1.0 - self.ecn_alpha / 3.0
                self.bw_shortterm *= cut
                self.inflight_shortterm *= cut
            if self.loss_in_round:
                self.bw_shortterm = max(self.bw_latest, self.beta * self.bw_shortterm)
                self.inflight_shortterm = max(self.inflight_latest, self.beta * self.inflight_shortterm)
        self.loss_in_round, self.lost_in_round = False, 0.0
        self.ce_in_round, self.delivered_in_round = 0.0, 0.0

    def _probing(self) -> bool:
        return self.mode == STARTUP or (self.mode == PROBE_BW and self.phase in (REFILL, UP))

    def _reset_shortterm(self) -> None:
        self.bw_shortterm = self.inflight_shortterm = math.inf

    def _too_high(self, inflight: float) -> None:
        """Linux v3 ``bbr_handle_inflight_too_high``."""
        self.prev_probe_too_high = True
        self.inflight_longterm = max(inflight, self.beta * self.bdp)
        if self.mode == PROBE_BW and self.phase == UP:
            self._start_down(self._now)

    def _loss_signal(self, lost: float, inflight: float) -> None:
        """Loss found (``lost`` segments); ``inflight`` at its detection,
        used only before any ACK carried ``tx_in_flight``."""
        if self.tx_in_flight > 0:  # Linux: rs->tx_in_flight of the ACK that found it
            inflight = self.tx_in_flight
        self.loss_in_round = True
        self.lost_in_round += lost
        if self.lost_in_round > self.loss_thresh * max(inflight, 1.0):
            if self.mode == STARTUP:  # bbr_check_loss_too_high_in_startup
                self.filled_pipe = True
                self.inflight_longterm = max(self.bdp, self.inflight_latest)
            elif self._probing() or self.mode == PROBE_BW:
                self._too_high(inflight)

    # -- the state machine -------------------------------------------------------------
    def _set_phase(self, phase: str, now: float) -> None:
        self.phase, self.cycle_stamp = phase, now
        self.pacing_gain = {DOWN: self.down_gain, UP: UP_PACING_GAIN}.get(phase, 1.0)
        self.gain = UP_CWND_GAIN if phase == UP else self.cwnd_gain

    def _start_down(self, now: float) -> None:
        self.mode = PROBE_BW
        self.rounds_since_probe = 0
        self.up_cnt = math.inf
        self.advance_filter = True
        self._set_phase(DOWN, now)

    def _enter_probe_bw(self, now: float) -> None:
        self._start_down(now)

    def _time_to_probe(self, now: float) -> bool:
        reno_rounds = min(MAX_PROBE_ROUNDS, self.target(1.0))
        return now - self.cycle_stamp > self.probe_wait or self.rounds_since_probe >= reno_rounds

    def _update_mode(self, ack: Ack) -> None:
        now = ack.now
        if self.mode == STARTUP and self.filled_pipe:
            self.mode, self.pacing_gain, self.gain = DRAIN, self.drain_gain, STARTUP_CWND_GAIN
            self.drain_start_round = self.round
        if self.mode == PROBE_BW:  # Linux: bbr_update_cycle_phase before bbr_check_drain
            self._update_cycle(ack)
        if self.mode == DRAIN and (ack.inflight <= self.bdp or self._drain_rounds_over()):
            self._start_down(now)
        if self.probe_rtt_expired and self.mode != PROBE_RTT:
            self._save_cwnd()
            self.mode, self.pacing_gain, self.gain = PROBE_RTT, 1.0, PROBE_RTT_CWND_GAIN
            self.probe_rtt_done = None
        self.probe_rtt_expired = False
        if self.mode == PROBE_RTT:
            self._probe_rtt(ack)

    def _drain_rounds_over(self) -> bool:
        """The draft's second exit from Drain (``BBRCheckDrainDone``, since
        draft-ietf-ccwg-bbr-05): more than 3 rounds since Drain began, even
        with a queue left; Linux's v3 branch (``bbr_check_drain``) has none."""
        return self.variant == "draft" and self.round > self.drain_start_round + DRAIN_MAX_ROUNDS

    def _update_cycle(self, ack: Ack) -> None:
        now, inflight = ack.now, ack.inflight
        if self.phase == DOWN:
            if self._time_to_probe(now):
                self._start_refill(ack)
            elif inflight <= self._with_headroom() and inflight <= self.bdp:
                self._set_phase(CRUISE, self.cycle_stamp)  # the wait runs from DOWN's start
        elif self.phase == CRUISE:
            if self._time_to_probe(now):
                self._start_refill(ack)
        elif self.phase == REFILL:
            if self.round_started:
                self._set_phase(UP, now)
                self.up_rounds, self.up_acks = 0, 0.0
                self._raise_up_slope()
        elif self.phase == UP:
            if self.prev_probe_too_high and inflight >= self.inflight_longterm:
                self.prev_probe_too_high = False
                self._start_down(now)
            elif now - self.cycle_stamp > self.rt_prop and inflight >= UP_PACING_GAIN * self.bdp:
                self.prev_probe_too_high = False
                self._start_down(now)

    def _start_refill(self, ack: Ack) -> None:
        self._reset_shortterm()
        self.round_end = ack.delivered  # REFILL lasts a round from now
        self._set_phase(REFILL, ack.now)

    def _raise_up_slope(self) -> None:
        """Linux v3 ``bbr_raise_inflight_hi_slope``: 1, 2, 4 … segments per round."""
        growth = 2 ** self.up_rounds
        self.up_rounds = min(self.up_rounds + 1, 30)
        self.up_cnt = max(self.cwnd / growth, 1.0)

    def _probe_up(self, ack: Ack) -> None:
        """``bbr_probe_inflight_hi_upward``: while the window is at the bound."""
        if self.round_started:
            self._raise_up_slope()
        if math.isinf(self.inflight_longterm) or self.cwnd < self.inflight_longterm:
            return
        self.up_acks += ack.acked
        if self.up_acks >= self.up_cnt:
            delta = math.floor(self.up_acks / self.up_cnt)
            self.up_acks -= delta * self.up_cnt
            self.inflight_longterm += delta

    def _with_headroom(self) -> float:
        if math.isinf(self.inflight_longterm):
            return math.inf
        free = max(self.headroom * self.inflight_longterm, 1.0)
        return max(self.inflight_longterm - free, self.min_target)

    def _probe_rtt(self, ack: Ack) -> None:
        floor = max(PROBE_RTT_CWND_GAIN * self.bdp, self.min_target)
        if self.probe_rtt_done is None:
            if ack.inflight <= floor:
                self.probe_rtt_done = ack.now + self.probe_rtt_time
                self.probe_rtt_round_end = ack.delivered
            return
        if (self._prior_delivered(ack) >= self.probe_rtt_round_end
                and ack.now >= self.probe_rtt_done):
            self.probe_rtt_stamp = ack.now
            self.cwnd = max(self.cwnd, self.prior_cwnd)
            self._reset_shortterm()
            if self.filled_pipe:
                self._start_down(ack.now)
                self._set_phase(CRUISE, ack.now)
            else:
                self.mode, self.pacing_gain, self.gain = STARTUP, self.high_gain, STARTUP_CWND_GAIN

    def _cap(self) -> float:
        """``bbr_bound_cwnd_for_inflight_model``."""
        cap = math.inf
        if self.mode == PROBE_BW and self.phase != CRUISE:
            cap = self.inflight_longterm
        elif self.mode == PROBE_RTT or self.mode == PROBE_BW:
            cap = self._with_headroom()
        return max(min(cap, self.inflight_shortterm), self.min_target)

    def _set_pacing_rate(self, ack: Ack) -> None:
        """Linux v3 ``bbr_set_pacing_rate`` (the draft's
        ``BBRSetPacingRateWithGain``): at the first RTT sample the rate starts
        at ``startup gain · cwnd / srtt`` (``bbr_init_pacing_rate_from_rtt``;
        unpaced before it, as Linux's nominal 1 ms RTT), and until the pipe is
        full it only rises: a low early sample does not slow STARTUP down."""
        scale = self.mss * 8.0 * (1.0 - self.pacing_margin)  # segments/s → bit/s
        if not self.seen_rtt and ack.srtt:
            self.seen_rtt = True
            self.pacing_rate = self.high_gain * self.cwnd / ack.srtt * scale
        if self.btl_bw:
            rate = self.pacing_gain * self.btl_bw * scale
            if self.filled_pipe or self.pacing_rate is None or rate > self.pacing_rate:
                self.pacing_rate = rate

    # -- hooks -----------------------------------------------------------------------
    def on_ack(self, ack: Ack) -> None:
        self._now = ack.now
        self._update_bw(ack)
        self._check_full_pipe()
        self._update_mode(ack)
        if self.mode == PROBE_BW and self.phase == UP:
            self._probe_up(ack)
            if not self.prev_probe_too_high and ack.tx_in_flight > self.inflight_longterm:
                self.inflight_longterm = ack.tx_in_flight
        self._set_pacing_rate(ack)
        if self.mode == PROBE_RTT:
            self.cwnd = min(self.cwnd, max(PROBE_RTT_CWND_GAIN * self.bdp, self.min_target),
                            self._cap())
            self.cwnd = max(self.cwnd, self.min_target)
            return
        if not self.packet_conservation:
            target = self.target(self.gain)
            if self.filled_pipe:
                self.cwnd = min(self.cwnd + ack.acked, target)
            elif self.cwnd < target or ack.delivered < self.prior_cwnd:
                self.cwnd += ack.acked
        self.cwnd = max(min(self.cwnd, self._cap()), self.min_target)

    def on_loss(self, loss: Loss) -> None:
        self._now = loss.now
        super().on_loss(loss)
        self._loss_signal(1.0, loss.inflight)

    def on_recovery(self, change: RecoveryState) -> None:
        self._now = change.now
        entering = change.state == "recovery" and self.ca_state != "recovery"
        super().on_recovery(change)
        if entering:  # a round from now: Linux's next_rtt_delivered = tp->delivered
            self.round_end = change.delivered
        if change.lost:
            self._loss_signal(change.lost, change.inflight)

    def on_ecn(self, echo: EcnEcho) -> None:
        """Linux v3's ECN response (``ecn_response=True``): marks are counted
        per round; more than ``ecn_thresh`` of a round marked is too high."""
        if not self._ecn:
            return
        self._now = echo.now
        self.ce_in_round += echo.marked
        if (self.rt_prop <= self.ecn_max_rtt and self.delivered_in_round
                and self.ce_in_round > self.ecn_thresh * self.delivered_in_round):
            if self.mode == PROBE_BW:
                self._too_high(echo.inflight)

    def max_slow_start_step(self, ack: Ack) -> float:
        """As BBR v1: ``cwnd += acked`` toward its target, plus a jump back to
        the window before ProbeRTT or a recovery, or up to the floor of 4."""
        return Bbr.max_slow_start_step(self, ack)

    def max_growth_per_rtt(self, cwnd: float) -> float:
        """As BBR v1: ``cwnd += acked`` toward its target (at most doubling per
        RTT), the return to ``prior_cwnd`` and the floor; the bounds only cap."""
        return Bbr.max_growth_per_rtt(self, cwnd)


_PHASES = {DOWN: 0.0, CRUISE: 1.0, REFILL: 2.0, UP: 3.0}
_MODE_STARTUP, _MODE_DRAIN, _MODE_PROBE_BW, _MODE_PROBE_RTT = (
    FLUID_MODES[STARTUP], FLUID_MODES[DRAIN], FLUID_MODES[PROBE_BW], FLUID_MODES[PROBE_RTT])


class Bbr3Fluid(BbrFluid):
    """BBR v3 in the fluid engine: :class:`Bbr3`'s per-ACK rules, once per step.

    As :class:`~ccsim.algorithms.bbr.BbrFluid` (imported: its initial state,
    its STARTUP doubling and its treatment of held steps), with v3's rules:

    * loss: ``on_loss`` reads the episode's whole count from the engine
      (``lost``, cumulative), and more than ``loss_thresh`` of what is in
      flight ends STARTUP (``inflight_longterm = max(BDP, inflight_latest)``)
      or, in ProbeBW, sets ``inflight_longterm = max(inflight, beta · BDP)``
      and ends UP; at the next round's start, outside probing, the
      short-term bounds become ``max(latest, beta · bound)``;
    * ``BtlBw`` is the max over the last two ProbeBW cycles (two slots,
      advanced one round after DOWN begins), bounded by ``bw_shortterm``;
    * the delivery-rate sample of a step is Linux's (``tcp_rate.c``): what
      was delivered since the acknowledged data went out, an RTT before,
      over that RTT, and no more than was in flight then (read from a ring
      of the last ``RATE_SLOTS`` steps). A step's own ``acked / h`` is the
      rate of the current window, where ACKs report the window of an RTT
      before: in STARTUP, doubling per round, it read twice the packet
      engine's samples, and against CUBIC in a 4-BDP buffer (without HyStart
      in both engines, 30 s) BBRv3 took 0.33 of the link where the packet
      engine's takes 0.09 (0.19 with the sample restored);
    * ProbeBW's DOWN/CRUISE/REFILL/UP with the class's exits, ``probe_wait``
      and the ``min(BDP, 63)``-round Reno bound; UP raises the long-term
      bound by 1, 2, 4 … segments per round while the window is at it;
    * ProbeRTT when the 5-s minimum expired: half a BDP for 200 ms and a
      round, then CRUISE;
    * the window capped by the bounds (less ``headroom`` in CRUISE and
      ProbeRTT), never below 4 segments;
    * pacing from ``2.77 · cwnd / srtt`` at the first RTT sample (``inf``
      before) and, before the pipe is full, never lower (as the class).

    Deviations beyond the class's: phase moves are tested once per step on
    its end state; a loss's in-flight data is the engine's ``lost_inflight``:
    what the flow had in flight when the lost data went out (the window
    before the step's deliveries, less what overflowed the buffer), nearer
    Linux's ``tx_in_flight`` than the class's count at detection.
    """

    scalar_params = ("variant",)
    state = {**BbrFluid.state, "phase": 0.0, "bw_hi0": 0.0, "bw_hi1": 0.0, "advance": 0.0,
             "bw_st": math.inf, "infl_st": math.inf, "infl_lt": math.inf, "bw_latest": 0.0,
             "infl_latest": 0.0, "round_start_delivered": 0.0, "lost_seen": 0.0,
             "loss_in_round": 0.0, "lost_in_round": 0.0, "too_high": 0.0,
             "since_probe": 0.0, "up_rounds": 0.0, "up_acks": 0.0, "up_cnt": math.inf,
             "prt_min": math.inf, "prt_stamp": 0.0, "pacing_gain": STARTUP_PACING_GAIN,
             "gain": STARTUP_CWND_GAIN, "drain_start": 0.0}

    def __init__(self, cc: Bbr3) -> None:
        FluidLaw.__init__(self, cc)
        self._new_history()  # BBRv1's rate samples

    def start(self, f: FlowArrays, m: np.ndarray) -> None:
        self._forget(f, m)
        f.prior_cwnd[m] = f.cwnd[m]
        f.pacing_gain[m] = STARTUP_PACING_GAIN
        f.gain[m] = STARTUP_CWND_GAIN

    # -- helpers (the class's, over arrays) --------------------------------------------
    def _headroom(self, f: FlowArrays) -> np.ndarray:
        lt = f.infl_lt
        free = np.maximum(self.cc.headroom * np.where(np.isfinite(lt), lt, 0.0), 1.0)
        return np.where(np.isfinite(lt), np.maximum(lt - free, self.cc.min_target), np.inf)

    def _phase(self, f: FlowArrays, m: np.ndarray, phase: str, now) -> None:
        f.phase[m] = _PHASES[phase]
        if now is not None:
            f.cycle_stamp[m] = now[m]
        f.pacing_gain[m] = {DOWN: self.cc.down_gain, UP: UP_PACING_GAIN}.get(phase, 1.0)
        f.gain[m] = UP_CWND_GAIN if phase == UP else self.cc.cwnd_gain

    def _start_down(self, f: FlowArrays, m: np.ndarray, now: np.ndarray) -> None:
        f.mode[m] = _MODE_PROBE_BW
        f.since_probe[m] = 0.0
        f.up_cnt[m] = np.inf
        f.advance[m] = 1.0
        self._phase(f, m, DOWN, now)

    def _probing(self, f: FlowArrays) -> np.ndarray:
        return (f.mode == _MODE_STARTUP) | ((f.mode == _MODE_PROBE_BW) & (f.phase >= _PHASES[REFILL]))

    def _raise_slope(self, f: FlowArrays, m: np.ndarray) -> None:
        growth = np.exp2(f.up_rounds)
        f.up_rounds[m] = np.minimum(f.up_rounds + 1.0, 30.0)[m]
        f.up_cnt[m] = np.maximum(f.cwnd / growth, 1.0)[m]

    # -- loss ----------------------------------------------------------------------
    def on_loss(self, f: FlowArrays, m: np.ndarray, kind: str) -> None:
        cc = self.cc  # parameters that differ among the flows are arrays over m's flows
        i = np.flatnonzero(m)
        f.ssthresh[i] = np.maximum(f.cwnd[i], MIN_SSTHRESH)
        lost = np.maximum(f.lost[i] - f.lost_seen[i], 1.0)  # at least one per episode
        f.lost_seen[i] = f.lost[i]
        f.loss_in_round[i] = 1.0
        f.lost_in_round[i] += lost
        # in flight when they were lost (Linux's tx_in_flight), else at detection
        sent = np.where(f.lost_inflight[i] > 0, f.lost_inflight[i], f.inflight[i])
        high = f.lost_in_round[i] > cc.loss_thresh * np.maximum(sent, 1.0)
        bdp = self._bdp(f)[i]
        mode = f.mode[i]
        su = high & (mode == _MODE_STARTUP)
        if any_(su):
            f.filled[i[su]] = 1.0
            f.infl_lt[i[su]] = np.maximum(bdp, f.infl_latest[i])[su]
        pb = high & (mode == _MODE_PROBE_BW)
        if any_(pb):
            f.too_high[i[pb]] = 1.0
            f.infl_lt[i[pb]] = np.maximum(sent, cc.beta * bdp)[pb]
            up = np.zeros_like(m)
            up[i[pb & (f.phase[i] == _PHASES[UP])]] = True
            if any_(up):
                self._start_down(f, up, f.now)

    # -- per step ------------------------------------------------------------------
    def grow(self, f: FlowArrays) -> None:
        cc = self.cc
        now = f.now
        self._remember(f)
        late, act, grow = self._deliveries(f)  # BBRv1's
        if not any_(act):
            return
        # -- on_rtt: the 5-s ProbeRTT minimum and the 10-s RTprop -------------------
        p_exp = act & (now - f.prt_stamp > cc.probe_rtt_window)
        floor = f.rtt if f.rtt_floor is None else f.rtt_floor  # the least sample (Bbr1Fluid)
        new = act & ((floor < f.prt_min) | p_exp)
        np.copyto(f.prt_min, floor, where=new)
        np.copyto(f.prt_stamp, now, where=new)
        take = act & ((f.prt_min <= f.rt_prop) | (now - f.rt_prop_stamp > cc.min_rtt_window))
        np.copyto(f.rt_prop, f.prt_min, where=take)
        np.copyto(f.rt_prop_stamp, f.prt_stamp, where=take)
        np.copyto(f.expired, 1.0, where=p_exp)
        # -- rounds, the congestion signals at a round's end, the bandwidth filter ---
        started = act & (f.delivered >= f.round_end)
        if any_(started):
            f.round[started] += 1.0
            f.round_end[started] = (f.delivered + f.inflight + f.acked)[started]
            f.since_probe[started] += 1.0
            f.infl_latest[started] = (f.delivered - f.round_start_delivered)[started]
            f.round_start_delivered[started] = f.delivered[started]
            cut = started & (f.loss_in_round > 0) & ~self._probing(f)
            if any_(cut):
                f.bw_st[cut] = np.where(np.isinf(f.bw_st), np.maximum(f.bw_hi0, f.bw_hi1),
                                        f.bw_st)[cut]
                f.infl_st[cut] = np.where(np.isinf(f.infl_st), f.cwnd, f.infl_st)[cut]
                f.bw_st[cut] = np.maximum(f.bw_latest, cc.beta * f.bw_st)[cut]
                f.infl_st[cut] = np.maximum(f.infl_latest, cc.beta * f.infl_st)[cut]
            f.loss_in_round[started] = 0.0
            f.lost_in_round[started] = 0.0
            f.bw_latest[started] = 0.0
            adv = started & (f.advance > 0)
            f.bw_hi0[adv] = f.bw_hi1[adv]
            f.bw_hi1[adv] = 0.0
            f.advance[adv] = 0.0
        sample = np.maximum(np.where(grow, self._rate_sample(f), 0.0), late)
        np.copyto(f.bw_hi1, np.maximum(f.bw_hi1, sample), where=act)
        np.copyto(f.bw_latest, np.maximum(f.bw_latest, sample), where=act)
        np.copyto(f.btl_bw, np.minimum(np.maximum(f.bw_hi0, f.bw_hi1), f.bw_st), where=act)
        # -- full pipe (v1's test) -------------------------------------------------
        check = started & (f.filled == 0)
        if any_(check):
            self._full_pipe(f, check)  # BBRv1's
        # -- modes -----------------------------------------------------------------
        drain = act & (f.mode == _MODE_STARTUP) & (f.filled == 1)
        if any_(drain):
            f.drain_start[drain] = f.round[drain]
            f.mode[drain] = _MODE_DRAIN
            f.pacing_gain[drain] = cc.drain_gain
            f.gain[drain] = STARTUP_CWND_GAIN
        bdp = self._bdp(f)
        inflight = f.inflight
        pb = act & (f.mode == _MODE_PROBE_BW)
        if any_(pb):
            reno = np.minimum(MAX_PROBE_ROUNDS, np.maximum(bdp + SEND_QUANTUM, cc.min_target))
            due = (now - f.cycle_stamp > cc.probe_wait) | (f.since_probe >= reno)
            ph = f.phase
            refill = pb & (ph <= 1.0) & due
            cruise = pb & (ph == 0.0) & ~due & (inflight <= self._headroom(f)) & (inflight <= bdp)
            up = pb & (ph == 2.0) & started
            up_ph = pb & (ph == 3.0)
            down = up_ph & (((f.too_high > 0) & (inflight >= f.infl_lt))
                            | ((now - f.cycle_stamp > f.rt_prop)
                               & (inflight >= UP_PACING_GAIN * bdp)))
            if any_(cruise):
                self._phase(f, cruise, CRUISE, None)  # the wait runs from DOWN's start
            if any_(refill):
                f.bw_st[refill] = np.inf
                f.infl_st[refill] = np.inf
                f.round_end[refill] = (f.delivered + inflight)[refill]
                self._phase(f, refill, REFILL, now)
            if any_(up):
                self._phase(f, up, UP, now)
                f.up_rounds[up] = 0.0
                f.up_acks[up] = 0.0
                self._raise_slope(f, up)
            if any_(down):
                f.too_high[down] = 0.0
                self._start_down(f, down, now)
        drained = inflight <= bdp
        if cc.variant == "draft":  # the draft's BBRCheckDrainDone: or 3 rounds passed
            drained = drained | (f.round > f.drain_start + DRAIN_MAX_ROUNDS)
        leave_drain = act & (f.mode == _MODE_DRAIN) & drained
        if any_(leave_drain):
            self._start_down(f, leave_drain, now)
        enter = act & (f.expired == 1) & (f.mode != _MODE_PROBE_RTT)
        if any_(enter):
            f.prior_cwnd[enter] = f.cwnd[enter]
            f.mode[enter] = _MODE_PROBE_RTT
            f.pacing_gain[enter] = 1.0
            f.gain[enter] = PROBE_RTT_CWND_GAIN
            f.probe_rtt_done[enter] = np.nan
        np.copyto(f.expired, 0.0, where=act)
        prt = act & (f.mode == _MODE_PROBE_RTT)
        floor = np.maximum(PROBE_RTT_CWND_GAIN * bdp, cc.min_target)
        if any_(prt):
            armed = prt & ~np.isnan(f.probe_rtt_done)
            arm = prt & ~armed & (inflight <= floor)
            f.probe_rtt_done[arm] = now[arm] + cc.probe_rtt_time
            f.probe_rtt_round_end[arm] = (f.delivered + inflight + f.acked)[arm]
            leave = armed & (f.delivered > f.probe_rtt_round_end) & (now >= f.probe_rtt_done)
            if any_(leave):
                f.prt_stamp[leave] = now[leave]
                back = leave & grow
                f.cwnd[back] = np.maximum(f.cwnd, f.prior_cwnd)[back]
                f.bw_st[leave] = np.inf
                f.infl_st[leave] = np.inf
                full = leave & (f.filled == 1)
                if any_(full):
                    self._start_down(f, full, now)
                    self._phase(f, full, CRUISE, now)
                empty = leave & (f.filled == 0)
                f.mode[empty] = _MODE_STARTUP
                f.pacing_gain[empty] = cc.high_gain
                f.gain[empty] = STARTUP_CWND_GAIN
        # -- UP: raise the long-term bound while the window is at it -----------------
        upm = act & (f.mode == _MODE_PROBE_BW) & (f.phase == _PHASES[UP])
        if any_(upm):
            self._raise_slope(f, upm & started)
            at = upm & np.isfinite(f.infl_lt) & (f.cwnd >= f.infl_lt)
            f.up_acks[at] += f.acked[at]
            step = at & (f.up_acks >= f.up_cnt)
            delta = np.floor(f.up_acks / np.where(step, f.up_cnt, 1.0))
            f.up_acks[step] -= (delta * f.up_cnt)[step]
            f.infl_lt[step] += delta[step]
            seen = upm & (f.too_high == 0) & (inflight + f.acked > f.infl_lt)
            f.infl_lt[seen] = (inflight + f.acked)[seen]
        # -- pacing and the window ---------------------------------------------------
        # bbr_set_pacing_rate: from startup gain · cwnd / srtt at the first RTT sample
        # (unpaced before), and before the pipe is full the rate only rises
        first = act & np.isinf(f.pacing) & (f.srtt > 0)
        np.copyto(f.pacing, cc.high_gain * f.cwnd / np.where(first, f.srtt, 1.0)
                  * (1.0 - cc.pacing_margin), where=first)
        rate = f.pacing_gain * f.btl_bw * (1.0 - cc.pacing_margin)
        paced = act & (f.btl_bw > 0) & ((f.filled == 1) | (rate > f.pacing))
        np.copyto(f.pacing, rate, where=paced)
        target = np.maximum(f.gain * bdp + SEND_QUANTUM, cc.min_target)
        acked = f.acked
        doubled = f.cwnd * np.exp2(acked / f.cwnd)
        cwnd = np.where(f.filled == 1, np.minimum(f.cwnd + acked, target),
                        np.where((f.cwnd < target) | (f.delivered < f.prior_cwnd),
                                 doubled, f.cwnd))
        probe_bw = f.mode == _MODE_PROBE_BW
        cap = np.where(probe_bw & (f.phase != _PHASES[CRUISE]), f.infl_lt,
                       np.where(probe_bw | (f.mode == _MODE_PROBE_RTT), self._headroom(f), np.inf))
        cap = np.maximum(np.minimum(cap, f.infl_st), cc.min_target)
        cwnd = np.where(f.mode == _MODE_PROBE_RTT, np.minimum(f.cwnd, floor), cwnd)
        np.copyto(f.cwnd, np.where(grow, np.maximum(np.minimum(cwnd, cap), cc.min_target),
                                   f.cwnd))

    def ssthresh_after(self, f: FlowArrays, m: np.ndarray, kind: str) -> np.ndarray:
        return np.maximum(f.cwnd[m], MIN_SSTHRESH)


Bbr3.fluid = Bbr3Fluid
