"""BBR v1: a model of the path — bottleneck bandwidth and round-trip propagation
time — instead of a reaction to loss.

Sources: N. Cardwell, Y. Cheng, C. S. Gunn, S. Hassas Yeganeh, V. Jacobson,
"BBR: Congestion-Based Congestion Control", ACM Queue 14(5), 2016;
draft-cardwell-iccrg-bbr-congestion-control-00 (2017), §4; Linux
``net/ipv4/tcp_bbr.c`` (v1, Linux 4.9–6.x) for the constants.

The model, updated on every ACK (in recovery too: ``acks_in_recovery``):

* ``BtlBw`` — the largest delivery-rate sample over the last 10 rounds
  (``bbr_bw_rtts``), in segments/s; ``RTprop`` — the smallest RTT over the
  last 10 s (``bbr_min_rtt_win_sec``); ``BDP = BtlBw · RTprop`` segments.
* pacing rate ``= pacing_gain · BtlBw`` (less a 1% margin,
  ``bbr_pacing_margin_percent``); ``cwnd`` target ``= cwnd_gain · BDP + 3``
  segments, never below 4 (``bbr_cwnd_min_target``).
* STARTUP: ``pacing_gain = cwnd_gain = high_gain``, Linux's ``bbr_high_gain``
  (739/256 ≈ 2.887, 2/ln 2 rounded up in its fixed point),
  until BtlBw has grown by less than 25% for 3 rounds (``bbr_full_bw_thresh``,
  ``bbr_full_bw_cnt``): the pipe is full.
* DRAIN: ``pacing_gain = drain_gain``, Linux's ``bbr_drain_gain`` (88/256 ≈
  0.344, ln 2 / 2 truncated), until what is in flight is down to BDP.
* PROBE_BW: ``cwnd_gain = 2``, ``pacing_gain`` cycles through
  ``5/4, 3/4, 1, 1, 1, 1, 1, 1``, one phase per RTprop (the 5/4 phase also
  until inflight reaches 5/4·BDP; the 3/4 phase ends early once inflight is
  down to BDP).
* PROBE_RTT: when RTprop has not been refreshed for 10 s, ``cwnd = 4``
  until both 200 ms (``bbr_probe_rtt_mode_ms``) have passed and a round trip
  has completed since what is in flight came down to 4: an ACK has delivered
  a segment sent after that moment (Linux's ``bbr_update_min_rtt`` sets
  ``next_rtt_delivered = delivered`` then, and ``bbr_check_probe_rtt_done``
  waits for ``probe_rtt_round_done``), then back. Only a sample
  strictly below RTprop refreshes it (Linux's ``bbr_update_min_rtt`` since
  it changed ``<=`` to ``<``), so on a path without jitter, where samples
  return to the minimum but never undercut it, PROBE_RTT comes every 10 s
  and a bit, as it does in Linux. (The draft's ``rtt <= RTprop`` let such
  samples keep RTprop fresh: PROBE_RTT came twice in 60 s, 24 s apart.)
* Loss: no reduction (``ssthresh_after`` keeps the window); a timeout drops
  ``cwnd`` to the loss window, from which BBR regrows to its target.
* Loss recovery (``bbr_set_cwnd_to_recover_or_restore``, through the
  ``on_recovery`` hook): the window before it is saved (``bbr_save_cwnd``);
  entering fast recovery ``cwnd = pipe + acked`` (what is in flight, less
  SACKed and lost, plus what the ACK delivered) and a new round starts, during
  which the window is held (packet conservation); then BBR grows it by
  ``acked`` per ACK towards its target; leaving the recovery or a timeout's
  loss phase, ``cwnd = max(cwnd, prior_cwnd)``. BBR sets the window through
  recovery itself (``controls_recovery_window``: PRR only picks segments), as
  Linux runs no ``tcp_cwnd_reduction`` for a ``cong_control`` module.
  On every ACK of the recovery (duplicates too) the segments it found lost
  come off ``cwnd`` (Linux's ``rs->losses``, from RACK's marks; none with
  plain SACK recovery, which has no loss detector), and in the conservation
  round ``cwnd = max(cwnd, pipe + acked)``. Differences: the growth towards
  the target is taken in ``on_ack``, on cumulative ACKs only, with ``acked``
  the cumulatively acknowledged count (Linux: every ACK, acked and SACKed); the
  fluid engine has no recovery state per ACK and holds the window (its
  ``BbrFluid`` leaves ``cwnd`` to the engine in recovery).

The delivery-rate sample is Linux's ``tcp_rate.c`` in the packet engine
(:class:`~ccsim.packet.tcp.Sender`: the longer of the send and ACK phases,
restarted when a segment leaves with nothing outstanding; none below the
minimum RTT, and an ACK without one adds nothing to the bandwidth filter).

Differences from the source: the rounds are counted from delivered and
in-flight segments (a round ends once the segments in flight at its start are
delivered), on every ACK (Linux: only on one with a valid rate sample); PROBE_BW starts at a fixed phase of the gain cycle,
``probe_bw_start`` (default 2, the first 1.0 phase), where Linux draws one of
0 and 2–7 at random (same scenario, same result: sweep ``probe_bw_start`` to
see the spread); its long-term (policer) bandwidth mode and ACK-aggregation
allowance are not modelled, nor its refusal to take an expired RTprop from a
delayed ACK's sample; the send quantum allowance is a flat 3 segments
(no TSO in ccsim; Linux's ``bbr_quantization_budget`` adds
``3 · tso_segs_goal``, 6 segments above 1.2 Mbit/s, rounded up to even, and 2
more in the 5/4 phase). The 5/4 phase does not end on a loss (Linux's
``bbr_is_next_cycle_phase`` also ends it, once an RTprop has passed, on an
ACK that reports losses). The class's own recovery is RFC 6675 SACK; the
Linux stack runs it with RACK's loss marks (``prr``, as Linux finds BBR's
losses as any flow's), so a retransmission lost again is resent within the
recovery, not after the timer. Either way the strategy only chooses which
segments to resend while BBR keeps setting the window.

Loss in a shallow buffer: alone in a 0.25-BDP buffer (10 Mbit/s, 40 ms) this
law loses about 2 % of its packets; two or four v1 flows there lose 13–21 %,
the 12–20 % published for v1 in shallow buffers (docs/algorithms.md,
"BBR v1's loss in a shallow buffer").
"""

from __future__ import annotations

import math
from collections import deque
from typing import ClassVar

import numpy as np

from .base import MIN_SSTHRESH, Ack, CongestionControl, Loss, RecoveryState, RttSample
from .fluid import FlowArrays, FluidLaw, any_
from .registry import register

HIGH_GAIN = 739 / 256   # Linux bbr_high_gain = BBR_UNIT * 2885 / 1000 + 1: 2/ln 2, rounded up
DRAIN_GAIN = 88 / 256   # Linux bbr_drain_gain = BBR_UNIT * 1000 / 2885: ln 2 / 2, truncated
PACING_GAIN_CYCLE = (1.25, 0.75, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0)  # Linux bbr_pacing_gain[]
FULL_BW_GROWTH = 1.25
"""BtlBw growth per round that still counts as growth in STARTUP (Linux
``bbr_full_bw_thresh``, 5/4): less for ``FULL_BW_ROUNDS`` rounds, the pipe is full."""
FULL_BW_ROUNDS = 3
"""Rounds without ``FULL_BW_GROWTH`` that mean a full pipe (Linux ``bbr_full_bw_cnt``)."""
SEND_QUANTUM = 3.0
"""Segments added to ``gain · BDP`` in the window target (Linux
``bbr_quantization_budget``: 3 send quanta; ccsim sends single segments)."""
PROBE_RTT_GAIN = 1.0
"""PROBE_RTT's pacing and window gain (Linux: ``BBR_UNIT``)."""
STARTUP, DRAIN, PROBE_BW, PROBE_RTT = "startup", "drain", "probe_bw", "probe_rtt"


@register
class Bbr(CongestionControl):
    """BBR v1: pacing at the measured bottleneck rate, a window of two BDPs."""

    name = "bbr"
    param_space = {"bw_rounds": (2, 20), "min_rtt_window": (1.0, 60.0),
                   "probe_rtt_time": (0.05, 1.0), "cwnd_gain": (1.0, 4.0),
                   "pacing_margin": (0.0, 0.1), "high_gain": (1.5, 4.0),
                   "drain_gain": (0.25, 1.0)}  # valid keyword ranges
    recovery = "sack"
    acks_in_recovery: ClassVar[bool] = True
    controls_recovery_window: ClassVar[bool] = True  # Linux: cong_control, no PRR
    samples_delivery_rate: ClassVar[bool] = True
    min_cwnd: ClassVar[float] = 1.0

    def __init__(self, *, bw_rounds: int = 10, min_rtt_window: float = 10.0,
                 probe_rtt_time: float = 0.2, cwnd_gain: float = 2.0,
                 min_target: float = 4.0, pacing_margin: float = 0.01,
                 high_gain: float = HIGH_GAIN, drain_gain: float = DRAIN_GAIN,
                 probe_bw_start: int = 2) -> None:
        if probe_bw_start not in (0, 2, 3, 4, 5, 6, 7):
            from ..errors import ScenarioError
            raise ScenarioError("probe_bw_start", probe_bw_start,
                                "a gain-cycle phase Linux can start in: 0 or 2 to 7")
        self.bw_rounds = bw_rounds            # rounds in the max-bandwidth filter
        self.min_rtt_window = min_rtt_window  # s, RTprop filter window
        self.probe_rtt_time = probe_rtt_time  # s spent at 4 segments in PROBE_RTT
        self.cwnd_gain = cwnd_gain            # PROBE_BW window gain
        self.min_target = min_target          # segments, the smallest window
        self.pacing_margin = pacing_margin    # fraction paced below BtlBw
        self.high_gain = high_gain            # STARTUP's pacing and window gain
        self.drain_gain = drain_gain          # DRAIN's pacing gain
        self.probe_bw_start = probe_bw_start  # gain-cycle phase PROBE_BW begins in

    def start(self, initial_window: float, mss: int) -> None:
        super().start(initial_window, mss)
        self.mode = STARTUP
        self.bw_samples: deque[tuple[int, float]] = deque()  # (round, segments/s)
        self.btl_bw = 0.0                     # segments/s
        self.rt_prop = math.inf               # s
        self.rt_prop_stamp = 0.0              # when RTprop was last set (s)
        self.rt_prop_expired = False          # RTprop went 10 s without a new low
        self.round = 0
        self.round_end = -1.0                 # delivered count that ends the round
        self.round_started = False
        self.full_bw, self.full_bw_rounds, self.filled_pipe = 0.0, 0, False
        self.cycle_index, self.cycle_stamp = self.probe_bw_start, 0.0
        self.probe_rtt_done: float | None = None  # PROBE_RTT's 200 ms end (s), once armed
        self.probe_rtt_round_end = math.inf   # delivered count past which its round is done
        self.prior_cwnd = initial_window
        self.pacing_gain, self.gain = self.high_gain, self.high_gain
        self.ca_state = "open"                # the sender's recovery state (on_recovery)
        self.packet_conservation = False      # the first round of a recovery

    # -- the model -------------------------------------------------------------
    @property
    def bdp(self) -> float:
        """``BtlBw · RTprop`` (segments); the initial window before samples."""
        if not self.btl_bw or not math.isfinite(self.rt_prop):
            return self.cwnd
        return self.btl_bw * self.rt_prop

    def target(self, gain: float) -> float:
        """The window for ``gain`` (segments): ``gain · BDP`` plus the send
        quantum allowance, at least ``min_target``."""
        return max(gain * self.bdp + SEND_QUANTUM, self.min_target)

    def on_rtt(self, sample: RttSample) -> None:
        expired = sample.now - self.rt_prop_stamp > self.min_rtt_window
        # Linux: a strictly smaller sample refreshes RTprop (an equal one does
        # not, so on a path without jitter PROBE_RTT comes every 10 s)
        if sample.rtt < self.rt_prop or expired:
            self.rt_prop, self.rt_prop_stamp = sample.rtt, sample.now
        # Linux's bbr_update_min_rtt: an expired RTprop is replaced *and* sends
        # BBR to PROBE_RTT, to measure it afresh with the queue drained.
        self.rt_prop_expired = self.rt_prop_expired or expired

    def _update_bw(self, ack: Ack) -> None:
        self.round_started = ack.delivered >= self.round_end
        if self.round_started:
            self.round += 1
            self.round_end = ack.delivered + ack.inflight
            self.packet_conservation = False  # Linux bbr_update_bw: a round of it, no more
        if ack.delivery_rate:
            rate = ack.delivery_rate / (self.mss * 8.0)  # bit/s → segments/s
            samples = self.bw_samples
            while samples and samples[-1][1] <= rate:
                samples.pop()                 # monotone deque: a windowed max
            samples.append((self.round, rate))
        while self.bw_samples and self.bw_samples[0][0] <= self.round - self.bw_rounds:
            self.bw_samples.popleft()
        self.btl_bw = self.bw_samples[0][1] if self.bw_samples else 0.0

    def _check_full_pipe(self) -> None:
        if self.filled_pipe or not self.round_started:
            return
        if self.btl_bw >= self.full_bw * FULL_BW_GROWTH:
            self.full_bw, self.full_bw_rounds = self.btl_bw, 0
            return
        self.full_bw_rounds += 1
        self.filled_pipe = self.full_bw_rounds >= FULL_BW_ROUNDS

    # -- the state machine -------------------------------------------------------
    def _update_mode(self, ack: Ack) -> None:
        if self.mode == STARTUP and self.filled_pipe:
            self.mode, self.pacing_gain, self.gain = DRAIN, self.drain_gain, self.high_gain
        if self.mode == DRAIN and ack.inflight <= self.bdp:
            self._enter_probe_bw(ack.now)
        if self.mode == PROBE_BW:
            self._advance_cycle(ack)
        if self.rt_prop_expired and self.mode != PROBE_RTT:
            self._save_cwnd()
            self.mode, self.pacing_gain, self.gain = PROBE_RTT, PROBE_RTT_GAIN, PROBE_RTT_GAIN
            self.probe_rtt_done = None
        self.rt_prop_expired = False
        if self.mode == PROBE_RTT:
            self._probe_rtt(ack)

    def _enter_probe_bw(self, now: float) -> None:
        self.mode, self.gain = PROBE_BW, self.cwnd_gain
        self.cycle_index, self.cycle_stamp = self.probe_bw_start, now
        self.pacing_gain = PACING_GAIN_CYCLE[self.cycle_index]

    def _advance_cycle(self, ack: Ack) -> None:
        elapsed = ack.now - self.cycle_stamp > self.rt_prop
        gain = self.pacing_gain
        if gain > 1.0:
            move = elapsed and ack.inflight >= gain * self.bdp
        elif gain < 1.0:
            move = elapsed or ack.inflight <= self.bdp
        else:
            move = elapsed
        if move:
            self.cycle_index = (self.cycle_index + 1) % len(PACING_GAIN_CYCLE)
            self.cycle_stamp = ack.now
            self.pacing_gain = PACING_GAIN_CYCLE[self.cycle_index]

    def _probe_rtt(self, ack: Ack) -> None:
        if self.probe_rtt_done is None:
            if ack.inflight <= self.min_target:  # in flight down to the floor: arm
                self.probe_rtt_done = ack.now + self.probe_rtt_time
                # a round trip from now: done once a segment sent after now is delivered
                self.probe_rtt_round_end = ack.delivered + ack.inflight
            return
        if ack.delivered > self.probe_rtt_round_end and ack.now >= self.probe_rtt_done:
            self.rt_prop_stamp = ack.now
            self.cwnd = max(self.cwnd, self.prior_cwnd)
            if self.filled_pipe:
                self._enter_probe_bw(ack.now)
            else:
                self.mode, self.pacing_gain, self.gain = STARTUP, self.high_gain, self.high_gain

    # -- hooks -----------------------------------------------------------------------
    def on_ack(self, ack: Ack) -> None:
        self._update_bw(ack)
        self._check_full_pipe()
        self._update_mode(ack)
        if self.btl_bw:
            self.pacing_rate = (self.pacing_gain * self.btl_bw * self.mss * 8.0
                                * (1.0 - self.pacing_margin))
        if self.mode == PROBE_RTT:
            self.cwnd = min(self.cwnd, self.min_target)
            return
        if self.packet_conservation:
            return  # Linux: max(cwnd, pipe + acked), which a sender keeping pipe at cwnd holds
        target = self.target(self.gain)
        if self.filled_pipe:
            self.cwnd = min(self.cwnd + ack.acked, target)
        elif self.cwnd < target or ack.delivered < self.prior_cwnd:
            self.cwnd += ack.acked
        self.cwnd = max(self.cwnd, self.min_target)

    def ssthresh_after(self, loss: Loss) -> float:
        """BBR v1 does not reduce on loss: the window stays (at least 2)."""
        return max(self.cwnd, MIN_SSTHRESH)

    def _save_cwnd(self) -> None:
        """Linux ``bbr_save_cwnd``: the window to come back to after a
        recovery or PROBE_RTT (in recovery or PROBE_RTT already: the larger)."""
        if self.ca_state == "open" and self.mode != PROBE_RTT:
            self.prior_cwnd = self.cwnd
        else:
            self.prior_cwnd = max(self.prior_cwnd, self.cwnd)

    def on_loss(self, loss: Loss) -> None:
        self._save_cwnd()  # Linux bbr_ssthresh, at the start of a recovery or the loss phase
        super().on_loss(loss)

    def on_recovery(self, change: RecoveryState) -> None:
        """Linux ``bbr_set_cwnd_to_recover_or_restore``: entering fast recovery,
        ``cwnd = pipe + acked`` and packet conservation for one round; a
        timeout's loss phase restarts the full-pipe count (``bbr_set_state``);
        leaving either, ``cwnd = max(cwnd, prior_cwnd)``."""
        if change.state == "recovery":
            if self.ca_state != "recovery":
                self.packet_conservation = True
                self.round_end = change.delivered + change.inflight  # a round from now
                self.cwnd = max(change.pipe + change.acked, 1.0)
            else:  # an ACK in recovery: what it found lost comes off (rs->losses)
                if change.lost:
                    self.cwnd = max(self.cwnd - change.lost, 1.0)
                if self.packet_conservation:
                    self.cwnd = max(self.cwnd, change.pipe + change.acked)
        elif change.state == "loss":
            self.full_bw = 0.0
        elif self.ca_state != "open":
            self.cwnd = max(self.cwnd, self.prior_cwnd)
            self.packet_conservation = False
        self.ca_state = change.state

    def max_slow_start_step(self, ack: Ack) -> float:
        """``cwnd += acked`` toward its target, plus a jump back to the window
        before PROBE_RTT or up to the floor ``min_target``."""
        return ack.acked + max(self.prior_cwnd, self.min_target)

    def max_growth_per_rtt(self, cwnd: float) -> float:
        """``cwnd += acked`` toward its target: at most doubling per RTT, plus,
        leaving PROBE_RTT, the return to the window it had before, or a jump
        up to the floor ``min_target`` (after a reduction below it: an ECN
        echo's default)."""
        return cwnd + max(self.prior_cwnd - cwnd, self.min_target - cwnd, 0.0)


RATE_SLOTS = 32
"""Steps of each flow's deliveries a BBR fluid law keeps for its rate samples."""
FLUID_MODES = {STARTUP: 0.0, DRAIN: 1.0, PROBE_BW: 2.0, PROBE_RTT: 3.0}
"""Each mode's code in the fluid laws' ``mode`` array (BBR v1's and v3's)."""
_CYCLE = np.array(PACING_GAIN_CYCLE)


class BbrFluid(FluidLaw):
    """BBR v1 in the fluid engine: :class:`Bbr`'s per-ACK model, once per step.

    Per ACK the class updates its model (rounds, max-filtered BtlBw, RTprop),
    its phase and then ``pacing = pacing_gain · BtlBw · (1 − margin)`` and
    ``cwnd`` towards ``target = max(gain · BDP + 3, min_target)``. Over a
    step the law does the same once, with the current RTT as the RTT sample
    and as the bandwidth sample Linux's rate sample (``tcp_rate.c``): what
    was delivered since the acknowledged data went out, an RTT before, over
    that RTT, and no more than was in flight then (:meth:`_rate_sample`,
    from a ring of the last ``RATE_SLOTS`` steps). A step's own
    ``acked / h`` is the rate of the current window, where ACKs report the
    window of an RTT before; as the sample, it let a 5/4 phase compound
    within its RTT (5/4 per step: BBR against Reno behind 1000 packets at
    10 ms took 0.23 of the link, the packet engine's 0.04; now 0.07):

    * rounds end when ``delivered`` passes the count delivered plus in
      flight at the round's start (the class's rule; in flight before the
      step's deliveries, ``inflight + acked``, so that a round lasts an RTT
      and not ``1 − h/RTT`` of one); the 10-round max
      filter is a ring of per-round maxima (slot ``round mod bw_rounds``
      cleared when a round begins), which is the class's monotone deque;
    * STARTUP → DRAIN after 3 rounds with less than 25 % BtlBw growth,
      DRAIN → PROBE_BW once ``inflight ≤ BDP``, the 8-phase gain cycle
      (index 2 first), PROBE_RTT when RTprop is 10 s old (``cwnd ≤ 4`` until
      ``inflight ≤ 4``, then 200 ms and until ``delivered`` passes what was
      delivered and in flight then, ``inflight + acked`` as for rounds) — all
      the class's tests, on the state
      at the end of the step (at most one phase move per step);
    * growth: ``cwnd = min(cwnd + acked, target)`` once the pipe is full,
      as the class; before that (STARTUP's ``cwnd += acked``) the window
      doubles per RTT of ACKs, ``cwnd · 2^(acked/cwnd)`` — per ACK the
      ACKs of a window arrive over the next RTT, while a fluid step sees
      ``cwnd·h/RTT`` of them at once (the ``e``-per-RTT growth the hook
      route corrects with its ``ln 2`` factor);
    * loss: no reduction, ``ssthresh = max(cwnd, 2)`` (the class's).

    Deviation (as the class's ``acks_in_recovery``): in steps where the
    engine holds the flow (``h = 0``: in recovery, a loss on its way to
    detection, an RTO pending) but segments were delivered, the model and
    phase still advance and pacing follows them, while ``cwnd`` is left to
    the engine (the class would also keep adjusting ``cwnd`` through
    recovery). Such a step's rate sample is taken at the next call, when its
    length is known (``now − t_last``): ``h`` is 0 for it.
    Read from the class: ``high_gain``, ``drain_gain`` and the other
    parameters; shared with it, this module's ``PACING_GAIN_CYCLE``,
    ``FULL_BW_GROWTH``, ``FULL_BW_ROUNDS``, ``SEND_QUANTUM`` and
    ``PROBE_RTT_GAIN``.
    """

    scalar_params = ("bw_rounds", "probe_bw_start", "high_gain", "drain_gain", "cwnd_gain")

    paces = True
    state = {"mode": 0.0, "btl_bw": 0.0, "rt_prop": math.inf, "rt_prop_stamp": 0.0,
             "expired": 0.0, "round": 0.0, "round_end": -1.0, "full_bw": 0.0,
             "full_bw_rounds": 0.0, "filled": 0.0, "cycle_index": 2.0, "cycle_stamp": 0.0,
             "probe_rtt_done": math.nan, "probe_rtt_round_end": math.inf,
             "prior_cwnd": 0.0, "pacing_gain": HIGH_GAIN,
             "gain": HIGH_GAIN, "t_last": math.nan, "held": 0.0, "loss_end": math.inf}

    def __init__(self, cc: Bbr) -> None:
        super().__init__(cc)
        self.bw = np.zeros((0, int(cc.bw_rounds)))  # per-round maxima (segments/s)
        self._new_history()

    def _new_history(self) -> None:
        # per flow, the last RATE_SLOTS steps: their start (s, -inf before the
        # flow opened), what had been delivered and what was in flight then
        self.hist_t = np.full((0, RATE_SLOTS), -np.inf)
        self.hist_d = np.zeros((0, RATE_SLOTS))
        self.hist_i = np.zeros((0, RATE_SLOTS))
        self.slot = 0
        self.rows = np.arange(0)

    def _history(self, n: int) -> None:
        if self.hist_t.shape[0] != n:
            self.hist_t = np.full((n, RATE_SLOTS), -np.inf)
            self.hist_d = np.zeros((n, RATE_SLOTS))
            self.hist_i = np.zeros((n, RATE_SLOTS))
            self.rows = np.arange(n)  # (each flow's row, to pick a slot per row)

    def _forget(self, f: FlowArrays, m: np.ndarray) -> None:
        """The rate samples' history of the flows ``m``, which open now."""
        self._history(f.cwnd.size)
        self.hist_t[m] = -np.inf  # nothing was delivered before the flow opened
        self.hist_d[m] = 0.0
        self.hist_i[m] = 0.0

    def start(self, f: FlowArrays, m: np.ndarray) -> None:
        n = f.cwnd.size
        if self.bw.shape[0] != n:
            self.bw = np.zeros((n, self.bw.shape[1]))
        self.bw[m] = 0.0
        self._forget(f, m)
        f.prior_cwnd[m] = f.cwnd[m]
        f.pacing_gain[m] = f.gain[m] = self.cc.high_gain

    def _bdp(self, f: FlowArrays) -> np.ndarray:
        known = (f.btl_bw > 0) & np.isfinite(f.rt_prop)
        return np.where(known, f.btl_bw * np.where(known, f.rt_prop, 0.0), f.cwnd)

    def _set(self, f: FlowArrays, m: np.ndarray, mode: str, pacing_gain, gain) -> None:
        f.mode[m] = FLUID_MODES[mode]
        f.pacing_gain[m] = pacing_gain if np.isscalar(pacing_gain) else pacing_gain[m]
        f.gain[m] = gain

    def _enter_probe_bw(self, f: FlowArrays, m: np.ndarray, now: np.ndarray) -> None:
        start = self.cc.probe_bw_start
        self._set(f, m, PROBE_BW, PACING_GAIN_CYCLE[start], self.cc.cwnd_gain)
        f.cycle_index[m] = float(start)
        f.cycle_stamp[m] = now[m]

    @staticmethod
    def _deliveries(f: FlowArrays) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The step's deliveries, as v1 and v3 both take them: ``late``, the
        rate (segments/s) of a held step's deliveries, a sample once that step's
        length is known (at the next call, as ``now − t_last``); ``act``, the
        flows with deliveries to handle; ``grow``, those of them that may grow."""
        now, h = f.now, f.h
        last = now - f.t_last
        late = np.where((f.held > 0) & (last > 0), f.held / np.where(last > 0, last, 1.0), 0.0)
        held = (h <= 0) & (f.acked > 0)
        np.copyto(f.held, np.where(held, f.acked, 0.0))
        np.copyto(f.t_last, now)
        act = (f.acked > 0) & ((h > 0) | held)
        return late, act, act & (h > 0)

    def _remember(self, f: FlowArrays) -> None:
        """Keep the step's start: its time, what had been delivered and what
        was in flight (the window before the step's deliveries)."""
        self._history(f.cwnd.size)
        k = self.slot
        self.slot = (k + 1) % RATE_SLOTS
        self.hist_t[:, k] = f.now
        self.hist_d[:, k] = f.delivered - f.acked
        self.hist_i[:, k] = f.inflight + f.acked

    def _rate_sample(self, f: FlowArrays) -> np.ndarray:
        """The delivery-rate sample of the step's ACKs (segments/s), as
        Linux's ``tcp_rate.c`` takes it: what was delivered since the
        acknowledged data went out, an RTT (``rtt``, as the data met the
        queue) before the step's end, over that RTT; and no more than was in
        flight when it went out, as nothing sent after it arrives first
        (the fluid delivers as it sends, where ACKs come an RTT behind).
        With less than an RTT of history kept, the mean rate over it."""
        t_end = f.now + f.h
        t0 = t_end - f.rtt
        ht, hd, hi = self.hist_t, self.hist_d, self.hist_i
        rows, n = self.rows, ht.shape[0]
        before = ht <= t0[:, None]
        a = np.where(before, ht, -np.inf).argmax(axis=1)   # last step start ≤ t0
        b = np.where(before, np.inf, ht).argmin(axis=1)    # first after it
        later = ~np.logical_and.reduce(before, axis=1)
        some = np.logical_or.reduce(before, axis=1)
        ta = ht[rows, a]
        tb, db, ib = ht[rows, b], hd[rows, b], hi[rows, b]
        if any_(later) < n:  # (usually none: t0 falls within the kept steps)
            tb = np.where(later, tb, t_end)
            db = np.where(later, db, f.delivered)
            ib = np.where(later, ib, f.inflight)
        opened = np.isfinite(ta) & some  # else t0 precedes the flow
        w = np.where(opened & (tb > ta), (t0 - ta) / np.where(tb > ta, tb - ta, 1.0), 0.0)
        da, ia = hd[rows, a], hi[rows, a]
        d0 = da + w * (db - da)
        i0 = ia + w * (ib - ia)
        if any_(opened) < n:  # (usually none: every flow open for an RTT)
            d0 = np.where(opened, d0, 0.0)
            i0 = np.where(opened, i0, ib)
        sample = np.minimum(f.delivered - d0, i0) / f.rtt
        short = ~some  # all kept steps within the last RTT
        if any_(short):
            o = ht.argmin(axis=1)
            span = t_end - ht[rows, o]
            mean = (f.delivered - hd[rows, o]) / np.where(span > 0, span, np.inf)
            sample = np.where(short, mean, sample)
        return sample

    @staticmethod
    def _full_pipe(f: FlowArrays, check: np.ndarray) -> None:
        """The full-pipe test at a round's start, for the flows ``check``: the
        pipe is full once BtlBw has grown by less than 25 % for 3 rounds (v1's
        and v3's alike)."""
        more = check & (f.btl_bw >= f.full_bw * FULL_BW_GROWTH)
        f.full_bw[more] = f.btl_bw[more]
        f.full_bw_rounds[more] = 0.0
        flat = check & ~more
        f.full_bw_rounds[flat] += 1.0
        f.filled[flat & (f.full_bw_rounds >= FULL_BW_ROUNDS)] = 1.0

    def grow(self, f: FlowArrays) -> None:
        cc = self.cc
        now = f.now
        self._remember(f)
        late, act, grow = self._deliveries(f)
        if not any_(act):
            return
        # -- RTprop (on_rtt): a new low, or an expired one replaced ----------------
        expired = act & (now - f.rt_prop_stamp > cc.min_rtt_window)
        # the least sample: the step's floor (a paced train's first packet
        # finds no train's queue: FlowArrays.rtt_floor)
        floor = f.rtt if f.rtt_floor is None else f.rtt_floor
        new = act & ((floor < f.rt_prop) | expired)  # strictly lower, as Linux
        np.copyto(f.rt_prop, floor, where=new)
        np.copyto(f.rt_prop_stamp, now, where=new)
        np.copyto(f.expired, 1.0, where=expired)
        # -- rounds and the windowed max of delivery-rate samples -------------------
        started = act & (f.delivered >= f.round_end)
        any_started = any_(started)
        if any_started:
            f.round[started] += 1.0
            f.round_end[started] = (f.delivered + f.inflight + f.acked)[started]
        slot = (f.round % self.bw.shape[1]).astype(np.int64)
        if any_started:
            rows = started.nonzero()[0]
            self.bw[rows, slot[rows]] = 0.0
        rows = act.nonzero()[0]
        sample = np.maximum(np.where(grow, self._rate_sample(f), 0.0), late)
        self.bw[rows, slot[rows]] = np.maximum(self.bw[rows, slot[rows]], sample[rows])
        np.copyto(f.btl_bw, np.where(act, self.bw.max(axis=1), f.btl_bw))
        # -- full pipe: BtlBw grew by less than 25 % for 3 rounds --------------------
        check = started & (f.filled == 0)
        if any_started and any_(check):
            self._full_pipe(f, check)
        # -- phases ---------------------------------------------------------------
        drain = act & (f.mode == 0) & (f.filled == 1)
        if any_(drain):
            self._set(f, drain, DRAIN, self.cc.drain_gain, self.cc.high_gain)
        bdp = self._bdp(f)
        probe = act & (f.mode == 1) & (f.inflight <= bdp)
        if any_(probe):
            self._enter_probe_bw(f, probe, now)
        cyc = act & (f.mode == 2)
        if any_(cyc):
            elapsed = now - f.cycle_stamp > f.rt_prop
            g = f.pacing_gain
            # Linux's bbr_is_next_cycle_phase tests rs->prior_in_flight, in flight
            # before the ACK: before the step's deliveries (a quarter window more)
            prior = f.inflight + f.acked
            move = cyc & np.where(g > 1.0, elapsed & (prior >= g * bdp),
                                  np.where(g < 1.0, elapsed | (prior <= bdp), elapsed))
            f.cycle_index[move] = (f.cycle_index[move] + 1.0) % len(PACING_GAIN_CYCLE)
            f.cycle_stamp[move] = now[move]
            f.pacing_gain[move] = _CYCLE[f.cycle_index[move].astype(np.int64)]
        enter = act & (f.expired == 1) & (f.mode != 3)
        if any_(enter):
            self._set(f, enter, PROBE_RTT, PROBE_RTT_GAIN, PROBE_RTT_GAIN)
            f.prior_cwnd[enter] = f.cwnd[enter]
            f.probe_rtt_done[enter] = np.nan
        np.copyto(f.expired, 0.0, where=act)
        prt = act & (f.mode == 3)
        if any_(prt):
            armed = prt & ~np.isnan(f.probe_rtt_done)
            arm = prt & ~armed & (f.inflight <= cc.min_target)
            f.probe_rtt_done[arm] = now[arm] + cc.probe_rtt_time
            f.probe_rtt_round_end[arm] = (f.delivered + f.inflight + f.acked)[arm]
            leave = armed & (f.delivered > f.probe_rtt_round_end) & (now >= f.probe_rtt_done)
            if any_(leave):
                f.rt_prop_stamp[leave] = now[leave]
                back = leave & grow
                f.cwnd[back] = np.maximum(f.cwnd, f.prior_cwnd)[back]
                self._enter_probe_bw(f, leave & (f.filled == 1), now)
                self._set(f, leave & (f.filled == 0), STARTUP, self.cc.high_gain,
                          self.cc.high_gain)
        # -- pacing and the window --------------------------------------------------
        paced = act & (f.btl_bw > 0)
        np.copyto(f.pacing, f.pacing_gain * f.btl_bw * (1.0 - cc.pacing_margin), where=paced)
        target = np.maximum(f.gain * self._bdp(f) + SEND_QUANTUM, cc.min_target)
        acked = f.acked
        doubled = f.cwnd * np.exp2(acked / f.cwnd)
        cwnd = np.where(f.filled == 1, np.minimum(f.cwnd + acked, target),
                        np.where((f.cwnd < target) | (f.delivered < f.prior_cwnd),
                                 doubled, f.cwnd))
        cwnd = np.where(f.mode == 3, np.minimum(f.cwnd, cc.min_target), cwnd)
        # the end of a timeout's loss phase: back to at least the saved window
        done = grow & (f.delivered >= f.loss_end)
        if any_(done):
            cwnd = np.where(done, np.maximum(cwnd, f.prior_cwnd), cwnd)
            f.loss_end[done] = math.inf
        np.copyto(f.cwnd, np.where(grow, np.maximum(cwnd, cc.min_target), f.cwnd))

    def ssthresh_after(self, f: FlowArrays, m: np.ndarray, kind: str) -> np.ndarray:
        return np.maximum(f.cwnd[m], MIN_SSTHRESH)

    def on_loss(self, f: FlowArrays, m: np.ndarray, kind: str) -> None:
        """The class's ``on_loss`` and ``on_recovery`` at a loss: the window
        is saved (``bbr_save_cwnd``: outside a loss phase and PROBE_RTT the
        window itself, else the larger); a timeout starts the loss phase,
        which restarts the full-pipe count (Linux's ``bbr_set_state``:
        ``full_bw = 0``) and ends once what was out at the timeout has been
        delivered (``snd_una`` past ``high_seq``), when ``cwnd`` returns to
        at least the saved window (``bbr_set_cwnd_to_recover_or_restore``)."""
        f.ssthresh[m] = self.ssthresh_after(f, m, kind)
        open_ = m & ~np.isfinite(f.loss_end) & (f.mode != FLUID_MODES[PROBE_RTT])
        np.copyto(f.prior_cwnd, np.where(open_, f.cwnd, np.maximum(f.prior_cwnd, f.cwnd)),
                  where=m)
        if kind == "timeout":
            f.full_bw[m] = 0.0
            f.full_bw_rounds[m] = 0.0
            f.loss_end[m] = (f.delivered + f.inflight)[m]


Bbr.fluid = BbrFluid
