"""CDG (CAIA Delay-Gradient): back off with a probability that grows with the
RTT's rise, and tell congestion losses from others.

Sources: D. A. Hayes, G. Armitage, "Revisiting TCP congestion control using
delay gradients", IFIP Networking 2011, pp. 328–341 (the algorithm); Linux
``net/ipv4/tcp_cdg.c`` (K. K. Jonassen, 2015; mainline since 4.2), the
default rule for rule and constant for constant (its module parameters keep
their names and integer units here).

Per ACK with an RTT sample (``tcp_cdg_acked``): the round's smallest and
largest RTT, ``rtt_min`` and ``rtt_max``. A delayed-ACK filter (Hayes, CAIA
TR 100219A) counts ACKs of several segments (up to 5); while it is positive,
an ACK of one segment only lowers ``rtt_min`` (and counts one off).

Once per round (the first ACK beyond what was sent when the round began;
``tcp_cdg_cong_avoid``), with a previous round to compare:

* gradients ``g_min = rtt_min − rtt_min_prev`` and ``g_max = rtt_max −
  rtt_max_prev``, summed over the last ``window`` rounds (the paper's moving
  average times ``window``; extrapolated to ``window`` rounds until filled);
  ``grad = Σg_min`` if positive, else ``Σg_max``;
* a sum at or below −32 µs means the last backoff worked: its count resets;
* ``grad > 0``: back off with probability ``1 − exp(−grad·backoff_factor)``
  (``grad`` in µs, ``backoff_factor`` per 10⁶ µs — the paper's
  ``1 − e^(−ḡ/G)`` with ``backoff_factor = 1000/(G·window)``), unless this is
  the ``use_ineff + 1``-th backoff in a row without a falling delay
  (ineffectual backoff: a loss-based flow is filling the queue). A backoff
  remembers ``shadow = max(shadow, cwnd)`` and reduces the window as an ECN
  echo would (Linux's CWR state): ``ssthresh = max(2,
  ⌊cwnd·backoff_beta/1024⌋)``, and nothing grows until the data sent before
  it is acknowledged; then a fresh round begins;
* otherwise Reno's growth, and the shadow window grows by as much as
  ``cwnd`` did;
* slow start ends early by CDG's HyStart (``hystart_detect``: 1 ACK train,
  2 delay, 3 both): a train of ACKs closer than 3 ms longer than half the
  smallest RTT (at least 125 µs), or a round's ``rtt_min`` above ``9/8`` of
  the smallest (at least 125 µs) after 8 ACKs, sets ``ssthresh = cwnd``.

On loss (``tcp_cdg_ssthresh``): after a backoff not yet over,
``backoff_beta``'s reduction; with ``use_tolerance`` and a queue judged not
full, none; else ``shadow = min(shadow/2, cwnd)`` and ``ssthresh = max(2,
shadow, cwnd/2)`` (``use_shadow``; else ``max(2, cwnd/2)``): a flow that
backed off for delay keeps, at a loss, half the window it would have had
(the paper's coexistence). With ``use_tolerance`` the gradients' signs (in
64 µs steps) say whether the queue is full (``g_min > 0 ≥ g_max``) or not.

Differences from the source:

* The backoff's random draw comes from a generator of the flow's own,
  seeded from the ``seed`` keyword and the time of its first ACK (same
  scenario, same draws); Linux draws from the kernel's generator. The
  probability uses ``exp`` where Linux has a table approximation.
* Linux's CWR state reduces ``cwnd`` to the new ``ssthresh`` over a round
  with PRR; here ``cwnd`` drops at once (as ccsim's ECN reaction) and growth
  waits for the data then outstanding to be acknowledged.
* A loss's end of recovery (Linux's ``CA_EVENT_COMPLETE_CWR``) is taken at
  the next ACK the law sees; the RTTs of the round are taken from ACKs seen
  outside recovery only.
* RTTs are floats where Linux keeps whole µs; windows are floats, decisions
  use the whole part; the delayed-ACK filter assumes no SACKed data
  outstanding (ccsim does not tell the law). Linux grows only when
  ``cwnd``-limited, and trims the shadow window otherwise; ccsim's bulk
  senders always are. Undo after a spurious recovery is not modelled.
* ``backoff_beta`` is Linux's 724/1024 (0.7071, √½); the paper's β is 0.7.

Defaults and their sources (Linux ``tcp_cdg.c`` module parameters):
``window = 8`` rounds, ``backoff_beta = 724`` (of 1024), ``backoff_factor =
42``, ``hystart_detect = 3``, ``use_ineff = 5``, ``use_shadow = True``,
``use_tolerance = False``. Default recovery: ``"prr"`` (Linux: SACK recovery
with PRR for every law).
"""

from __future__ import annotations

import math

import numpy as np

from .._splitmix import draw, seed_from, uniform
from .base import Ack, CongestionControl, Loss
from .fluid import FlowArrays, FluidLaw
from .registry import register

EFFECTUAL = -32e-6
"""A summed gradient at or below this (s) shows the last backoff worked."""
TOLERANCE_STEP = 64e-6
"""``use_tolerance`` judges gradients in steps of this (s)."""
DELACK_MAX = 5
"""The delayed-ACK filter counts at most this many multi-segment ACKs."""
TRAIN_GAP = 3e-3
"""ACKs further apart than this (s) break HyStart's ACK train."""
HYSTART_FLOOR = 125e-6
"""HyStart's thresholds are at least this (s)."""
HYSTART_MIN_SAMPLES = 8
"""HyStart's delay test waits for this many ACKs of the round."""
MIN_SSTHRESH = 2.0
"""No reduction leaves ``ssthresh`` below 2 segments."""


def backoff_probability(grad: float, backoff_factor: float) -> float:
    """P(backoff) for a summed gradient ``grad`` (s): ``1 − exp(−grad_µs ·
    backoff_factor · 10⁻⁶)``; 0 for ``grad ≤ 0``."""
    if grad <= 0:
        return 0.0
    return 1.0 - math.exp(-grad * 1e6 * backoff_factor * 1e-6)


def loss_ssthresh(cwnd: float, shadow: float, use_shadow: bool) -> tuple[float, float]:
    """``(ssthresh, shadow)`` at a loss outside a backoff: ``shadow =
    min(shadow/2, W)``, ``ssthresh = max(2, shadow, W/2)`` (``W`` whole)."""
    w = math.floor(cwnd)
    shadow = min(math.floor(shadow) // 2, w)
    if use_shadow:
        return float(max(2, shadow, w // 2)), float(shadow)
    return float(max(2, w // 2)), float(shadow)


def _backoff_keeps_beta(before: dict, event: object, after: dict) -> str | None:
    """A backoff (``backoffs`` counted one more on an ACK) leaves ``cwnd =
    ssthresh = max(2, ⌊⌊cwnd⌋·backoff_beta/1024⌋)``."""
    if not isinstance(event, Ack) or after["backoffs"] != before["backoffs"] + 1:
        return None
    expected = max(2, math.floor(before["cwnd"]) * min(1024, after["backoff_beta"]) // 1024)
    if after["ssthresh"] != expected or after["cwnd"] != expected:
        return (f"backoff at cwnd={before['cwnd']!r}: cwnd={after['cwnd']!r}, "
                f"ssthresh={after['ssthresh']!r}; tcp_cdg.c gives {expected!r}")
    return None


def _shadow_at_loss(before: dict, event: object, after: dict) -> str | None:
    """A loss outside a backoff: ``ssthresh = max(2, min(shadow/2, W), W/2)``."""
    if not isinstance(event, Loss) or before["backing_off"] or after["use_tolerance"]:
        return None
    expected, _ = loss_ssthresh(before["cwnd"], before["shadow"], after["use_shadow"])
    if after["ssthresh"] != expected:
        return (f"loss at cwnd={before['cwnd']!r}, shadow={before['shadow']!r}: ssthresh "
                f"became {after['ssthresh']!r}, tcp_cdg.c gives {expected!r}")
    return None


@register
class CDG(CongestionControl):
    """CDG window law (Hayes & Armitage 2011; Linux ``tcp_cdg.c``) with PRR recovery."""

    name = "cdg"
    recovery = "prr"  # Linux: SACK recovery with PRR for every law (tcp_input.c)
    # window: a power of two from 1 to 256, checked by the constructor (not a range)
    param_space = {"backoff_beta": (0, 1024), "backoff_factor": (1, 1000),
                   "hystart_detect": (0, 3), "use_ineff": (0, 100), "seed": (0, 2**31 - 1)}
    properties = (_backoff_keeps_beta, _shadow_at_loss)

    def __init__(self, *, window: int = 8, backoff_beta: int = 724, backoff_factor: int = 42,
                 hystart_detect: int = 3, use_ineff: int = 5, use_shadow: bool = True,
                 use_tolerance: bool = False, seed: int = 0) -> None:
        from ..errors import ScenarioError
        if window < 1 or window & (window - 1):
            raise ScenarioError("window", window, "a power of two from 1 to 256 (Linux refuses "
                                "others)")
        self.window = window                  # rounds in the gradients' moving sum
        self.backoff_beta = backoff_beta      # /1024 of cwnd kept at a backoff
        self.backoff_factor = backoff_factor  # backoff probability scale (per 10⁶ µs of grad)
        self.hystart_detect = hystart_detect  # 0 off, 1 ACK train, 2 delay, 3 both
        self.use_ineff = use_ineff            # backoffs without falling delay before giving up
        self.use_shadow = use_shadow          # keep the shadow window at losses
        self.use_tolerance = use_tolerance    # no reduction at a loss with the queue not full
        self.seed = seed                      # of the backoffs' draws

    def start(self, initial_window: float, mss: int) -> None:
        super().start(initial_window, mss)
        self.rtt_min = self.rtt_max = 0.0     # this round's RTTs (s); 0: none
        self.prev_min = self.prev_max = 0.0   # the previous round's
        self.grads: list[tuple[float, float]] = [(0.0, 0.0)] * self.window
        self.gsum_min = self.gsum_max = 0.0   # sums of the last window's gradients (s)
        self.tail = 0                         # next slot of the ring
        self.filled = False
        self.state = "unknown"                # "unknown", "full", "nonfull" (tolerance)
        self.backing_off = False              # a backoff's reduction is not over
        self.delack = 0                       # delayed-ACK filter's count
        self.round_end = 0.0                  # the round ends once delivered exceeds this
        self.shadow = float(initial_window)   # shadow window (segments)
        self.backoff_cnt = 0                  # backoffs since the delay last fell
        self.delay_min = 0.0                  # smallest round rtt_min (s), HyStart's
        self.sample_cnt = 0                   # HyStart's ACKs this round
        self.last_ack = self.train_start = 0.0  # HyStart's ACK train (s); 0: none
        self.cwr_end: float | None = None     # delivered count that ends a backoff's CWR
        self.recovered = False                # a loss's recovery ends at the next ACK
        self.backoffs = 0                     # backoffs taken
        self.rng: int | None = None  # generator state (SplitMix64)

    # -- per ACK ---------------------------------------------------------------------
    def _complete_cwr(self, ack: Ack) -> None:
        """``CA_EVENT_COMPLETE_CWR``: a reduction is over; a fresh round."""
        self.state = "unknown"
        self.backing_off = False
        self.cwr_end = None
        self.round_end = ack.delivered + ack.inflight
        self.prev_min, self.prev_max = self.rtt_min, self.rtt_max
        self.rtt_min = self.rtt_max = 0.0

    def on_ack(self, ack: Ack) -> None:
        rtt = ack.rtt
        if rtt is not None and rtt > 0:  # tcp_cdg_acked, inline (every ACK)
            if self.rng is None:
                self.rng = seed_from("cdg", self.seed, ack.now)
            acked = ack.acked
            if acked == 1 and self.delack:  # delayed-ACK filter: may only lower rtt_min
                if 0 < rtt < self.rtt_min:
                    self.rtt_min = rtt
                self.delack -= 1
            else:
                if acked > 1 and self.delack < DELACK_MAX:
                    self.delack += 1
                if self.rtt_min == 0 or rtt < self.rtt_min:
                    self.rtt_min = rtt
                if rtt > self.rtt_max:
                    self.rtt_max = rtt
        if self.recovered:
            self.recovered = False
            self._complete_cwr(ack)
        if self.cwr_end is not None:  # a backoff's reduction: no growth, no rounds
            if ack.delivered < self.cwr_end:
                return
            self._complete_cwr(ack)
        if self.cwnd < self.ssthresh and self.hystart_detect:
            self._hystart(ack.now)
        if ack.delivered > self.round_end and (self.rtt_min > 0 or self.rtt_max > 0):
            grad = self._gradient() if (self.prev_min > 0 or self.prev_max > 0) else 0.0
            self.round_end = ack.delivered + ack.inflight
            self.prev_min, self.prev_max = self.rtt_min, self.rtt_max
            self.rtt_min = self.rtt_max = 0.0
            self.last_ack = 0.0
            self.sample_cnt = 0
            if grad > 0 and self._backoff(grad, ack):
                return
        before = self.cwnd
        if before >= self.ssthresh:  # Reno's congestion avoidance (tcp_reno_cong_avoid)
            self.cwnd = before + ack.acked / before
        else:
            acked = self.slow_start(ack.acked)
            if acked:
                self.cwnd += acked / self.cwnd
        self.shadow += self.cwnd - before

    def _hystart(self, now: float) -> None:
        """CDG's HyStart (``tcp_cdg_hystart_update``): may set ``ssthresh = cwnd``."""
        if self.rtt_min > 0:
            self.delay_min = self.rtt_min if self.delay_min == 0 else min(self.delay_min,
                                                                          self.rtt_min)
        if self.delay_min == 0:
            return
        if self.hystart_detect & 1:
            if self.last_ack == 0:
                self.last_ack = self.train_start = now
            elif now < self.last_ack + TRAIN_GAP:
                self.last_ack = now
                if now > self.train_start + max(self.delay_min / 2, HYSTART_FLOOR):
                    self.ssthresh = float(math.floor(self.cwnd))
                    return
        if self.hystart_detect & 2:
            if self.sample_cnt < HYSTART_MIN_SAMPLES:
                self.sample_cnt += 1
            elif self.rtt_min > max(self.delay_min * 9 / 8, HYSTART_FLOOR):
                self.ssthresh = float(math.floor(self.cwnd))

    def _gradient(self) -> float:
        """``tcp_cdg_grad``: the window's summed gradient (s) of this round."""
        g_min, g_max = self.rtt_min - self.prev_min, self.rtt_max - self.prev_max
        if self.window > 1:
            old_min, old_max = self.grads[self.tail]
            self.gsum_min += g_min - old_min
            self.gsum_max += g_max - old_max
            self.grads[self.tail] = (g_min, g_max)
            self.tail = (self.tail + 1) % self.window
            g_min, g_max = self.gsum_min, self.gsum_max
        grad = g_min if g_min > 0 else g_max
        if not self.filled:
            if self.tail == 0:
                self.filled = True
            else:
                grad = grad * self.window / self.tail
        if g_min <= EFFECTUAL or g_max <= EFFECTUAL:
            self.backoff_cnt = 0
        if self.use_tolerance:
            q_min, q_max = round(g_min / TOLERANCE_STEP), round(g_max / TOLERANCE_STEP)
            if q_min > 0 and q_max <= 0:
                self.state = "full"
            elif (q_min > 0 and q_max > 0) or q_max < 0:
                self.state = "nonfull"
        return grad

    def _backoff(self, grad: float, ack: Ack) -> bool:
        """``tcp_cdg_backoff``: maybe back off (``True`` if it did)."""
        self.rng, u = draw(self.rng)
        if u >= backoff_probability(grad, self.backoff_factor):
            return False
        if self.use_ineff:
            self.backoff_cnt += 1
            if self.backoff_cnt > self.use_ineff:
                return False
        self.shadow = max(self.shadow, self.cwnd)
        self.backing_off = True
        self.backoffs += 1
        self.ssthresh = self._backoff_window()
        self.cwnd = self.ssthresh
        self.cwr_end = ack.delivered + ack.inflight
        return True

    def _backoff_window(self) -> float:
        return float(max(2, math.floor(self.cwnd) * min(1024, self.backoff_beta) // 1024))

    # -- losses --------------------------------------------------------------------
    def ssthresh_after(self, loss: Loss) -> float:
        if self.backing_off:
            return self._backoff_window()
        if self.state == "nonfull" and self.use_tolerance:
            return float(math.floor(self.cwnd))
        return loss_ssthresh(self.cwnd, self.shadow, self.use_shadow)[0]

    def on_loss(self, loss: Loss) -> None:
        shadow = self.shadow
        if not self.backing_off and not (self.state == "nonfull" and self.use_tolerance):
            shadow = loss_ssthresh(self.cwnd, self.shadow, self.use_shadow)[1]
        super().on_loss(loss)  # ssthresh_after: from the shadow window before the loss
        self.shadow = shadow
        self.cwr_end = None
        self.recovered = True  # recovery (or the loss phase) ends before the next ACK we see


class CDGFluid(FluidLaw):
    """CDG in the fluid engine.

    Once per round (when ``delivered`` passes what was sent at its start) the
    round's smallest and largest RTT are compared with the previous round's,
    and the last ``window`` gradients summed as the window law does. Each
    round with ``grad > 0`` adds its hazard ``−ln(1 − P) =
    grad_µs·backoff_factor·10⁻⁶``; the flow backs off in the round where the
    hazards summed since its last backoff pass an exponential variable of
    mean 1, drawn afresh after each: the window law's draw per round,
    ``u < P``, in distribution (the same draws are a hash of the ``seed``
    keyword, the flow's opening time and the count). Drawn, not at the
    mean: backoffs that come in runs (a queue still rising in the window's
    sum after a backoff) cut the window twice or three times in a row, as in
    the packet engine (alone in 4 BDP, 10 Mbit/s, 40 ms, means over seeds
    1–5: 0.85 of the link in both; 0.92 when the fluid backed off at the
    mean). A backoff cuts ``cwnd`` and ``ssthresh`` to
    ``backoff_beta/1024`` of the window and holds growth until the data then
    outstanding is acknowledged (Linux's CWR); that round then becomes the
    previous one (``CA_EVENT_COMPLETE_CWR``), with the RTTs its ACKs carry:
    those of the data sent before the backoff, which met the queue it found,
    and behind delayed ACKs one time in two the RTT of the data sent after
    the backoff's pause, whose ACK ends the round when the round's last
    segment is the odd one of a pair (:meth:`_draw_parity`; without delayed
    ACKs that data comes back after the round ended). ``use_ineff``
    backoffs without a falling delay stop them until it falls. Slow start
    ends by HyStart's delay test (the RTT above ``9/8`` of the smallest);
    its ACK train is not modelled (the fluid has no ACK spacing; in the
    packet engine the train ends slow start near half the path's BDP, the
    delay test near 9/8 of it). Between: Reno's growth, and the shadow
    window grows with ``cwnd``. On loss: as the window law
    (``use_tolerance`` is not modelled: its loss response is the shadow
    window's).
    """

    scalar_params = ("*",)
    base_state = {"rtt_lo": 0.0, "rtt_hi": 0.0, "prev": 0.0, "prev_hi": 0.0, "gsum": 0.0,
                  "gsum_hi": 0.0, "tail": 0.0, "filled": 0.0, "hazard": 0.0, "threshold": 1.0,
                  "draws": 0.0, "cwr_lo": 0.0, "cwr_drained": 0.0, "round_end": 0.0,
                  "cwr_end": -1.0, "shadow": math.nan, "ineff": 0.0, "backing": 0.0}

    def __init__(self, cc: CDG) -> None:
        super().__init__(cc)
        # the window's gradients, one array per slot of the ring
        self.state = dict(self.base_state, **{f"g{k}": 0.0 for k in range(cc.window)},
                          **{f"h{k}": 0.0 for k in range(cc.window)})

    def start(self, f: FlowArrays, m: np.ndarray) -> None:
        f.shadow[m] = f.cwnd[m]
        self._draw_thresholds(f, m)

    def _draw_thresholds(self, f: FlowArrays, m: np.ndarray) -> None:
        """A fresh exponential threshold (mean 1) of accumulated hazard for the
        next backoff of each flow in ``m``: the draws of the window law, each
        round's ``u < 1 − exp(−H)``, amount to backing off in the first round
        where the summed hazards ``ΣH`` since the last backoff pass an
        exponential variable. Its uniforms are a hash of the ``seed`` keyword,
        the time the flow opened and the count of draws, so the same scenario
        gives the same draws whatever the batch."""
        for i in np.flatnonzero(m):
            u = uniform(seed_from("cdg", self.cc.seed, float(f.start[i])), 0, int(f.draws[i]))
            f.threshold[i] = -math.log1p(-u)
            f.draws[i] += 1.0

    def _draw_parity(self, f: FlowArrays, m: np.ndarray) -> None:
        """Whether each backoff's CWR round, for the flows in ``m``, ends on
        the ACK of data sent after its pause: behind delayed ACKs
        (``ack_segs`` 2), when its last segment is the odd one of a pair, one
        time in two (see :meth:`_draw_thresholds` for the uniforms)."""
        pairs = np.broadcast_to(f.ack_segs, f.cwnd.shape) > 1.0
        for i in np.flatnonzero(m):
            u = uniform(seed_from("cdg", self.cc.seed, float(f.start[i])), 1, int(f.draws[i]))
            f.cwr_drained[i] = float(bool(pairs[i]) and u < 0.5)

    def grow(self, f: FlowArrays) -> None:
        cc = self.cc
        live = f.h > 0
        if not live.any():
            return
        rtt = f.rtt
        np.copyto(f.rtt_lo, np.where(live & ((f.rtt_lo == 0) | (rtt < f.rtt_lo)), rtt, f.rtt_lo))
        np.copyto(f.rtt_hi, np.where(live & (rtt > f.rtt_hi), rtt, f.rtt_hi))
        in_cwr = live & (f.cwr_end >= 0)
        done = in_cwr & (f.delivered >= f.cwr_end)
        if done.any():
            f.cwr_end[done] = -1.0
            f.backing[done] = 0.0
            f.round_end[done] = (f.delivered + f.inflight)[done]
            # CA_EVENT_COMPLETE_CWR: the CWR round becomes the previous one, with
            # the RTTs its ACKs carried (set at the backoff, below): its largest
            # the queue the backoff found, its smallest that too or, where the
            # round ended on the ACK of data sent after the pause, the drained
            # queue; then the next round's gradient of the minimum shows no fall
            # and the window's sum of minima stays as the rise left it
            seen = done & (f.rtt_lo > 0)
            f.prev[seen] = np.where(f.cwr_drained > 0, f.rtt_lo, f.cwr_lo)[seen]
            f.prev_hi[seen] = f.rtt_hi[seen]
            f.rtt_lo[done] = f.rtt_hi[done] = 0.0
        held = in_cwr & ~done
        if cc.hystart_detect & 2:  # the delay test (the ACK train needs ACK spacing)
            stop = (live & ~held & (f.cwnd < f.ssthresh)
                    & (rtt > np.maximum(f.min_rtt * 9 / 8, HYSTART_FLOOR)))
            f.ssthresh[stop] = np.floor(f.cwnd[stop])
        ended = live & ~held & (f.delivered > f.round_end) & (f.rtt_lo > 0)
        backoff = np.zeros_like(live)
        if ended.any():
            has_prev = ended & (f.prev > 0)
            g = np.where(has_prev, f.rtt_lo - f.prev, 0.0)
            g_hi = np.where(has_prev, f.rtt_hi - f.prev_hi, 0.0)
            w = cc.window
            for k in range(w):  # the ring: replace slot `tail` of each flow
                at = has_prev & (f.tail == k)
                if at.any():
                    slot, slot_hi = getattr(f, f"g{k}"), getattr(f, f"h{k}")
                    f.gsum[at] += g[at] - slot[at]
                    f.gsum_hi[at] += g_hi[at] - slot_hi[at]
                    slot[at], slot_hi[at] = g[at], g_hi[at]
            f.tail[has_prev] = (f.tail[has_prev] + 1) % w
            grad = np.where(f.gsum > 0, f.gsum, f.gsum_hi)
            f.filled[has_prev & (f.tail == 0)] = 1.0
            grad = np.where(f.filled > 0, grad, grad * w / np.maximum(f.tail, 1.0))
            f.ineff[has_prev & ((f.gsum <= EFFECTUAL) | (f.gsum_hi <= EFFECTUAL))] = 0.0
            rising = has_prev & (grad > 0)
            f.hazard[rising] += grad[rising] * 1e6 * cc.backoff_factor * 1e-6
            fire = rising & (f.hazard >= f.threshold)
            f.hazard[fire] = 0.0
            if fire.any():
                self._draw_thresholds(f, fire)
            if cc.use_ineff:
                f.ineff[fire] += 1.0
                fire &= f.ineff <= cc.use_ineff
            backoff = fire
            f.round_end[ended] = (f.delivered + f.inflight)[ended]
            f.prev[ended], f.prev_hi[ended] = f.rtt_lo[ended], f.rtt_hi[ended]
            f.rtt_lo[ended] = f.rtt_hi[ended] = 0.0
        if backoff.any():
            f.shadow[backoff] = np.maximum(f.shadow[backoff], f.cwnd[backoff])
            cut = np.maximum(2.0, np.floor(np.floor(f.cwnd) * min(1024, cc.backoff_beta) / 1024))
            f.cwnd[backoff] = cut[backoff]
            f.ssthresh[backoff] = cut[backoff]
            f.backing[backoff] = 1.0
            f.cwr_end[backoff] = (f.delivered + f.inflight)[backoff]
            # the CWR round's ACKs are those of the data sent before the backoff,
            # which met the queue it found: its RTTs are the RTT now (the fluid's
            # own drains within the step). The data sent after the backoff's pause
            # comes back only as the round ends (its queue is what the round's
            # last segment met, less the pause), so it counts only if the ACK
            # that ends the round is its own: behind delayed ACKs, when the
            # round's last segment is an odd one the receiver holds until the
            # next arrives, one time in two (a draw, as the backoff's)
            f.rtt_hi[backoff] = rtt[backoff]
            f.cwr_lo[backoff] = rtt[backoff]
            self._draw_parity(f, backoff)
        frozen = held | backoff
        saved = f.cwnd[frozen]
        before = f.cwnd.copy()
        h_ca = f.slow_start()
        f.cwnd += np.where(h_ca > 0, h_ca / rtt, 0.0)
        f.cwnd[frozen] = saved
        f.shadow += np.where(live & ~frozen, f.cwnd - before, 0.0)

    def ssthresh_after(self, f: FlowArrays, m: np.ndarray, kind: str) -> np.ndarray:
        cc = self.cc
        w = np.floor(f.cwnd[m])
        beta = np.maximum(2.0, np.floor(w * min(1024, cc.backoff_beta) / 1024))
        shadow = np.minimum(np.floor(np.floor(f.shadow[m]) / 2), w)
        normal = (np.maximum(np.maximum(2.0, shadow), np.floor(w / 2)) if cc.use_shadow
                  else np.maximum(2.0, np.floor(w / 2)))
        return np.where(f.backing[m] > 0, beta, normal)

    def on_loss(self, f: FlowArrays, m: np.ndarray, kind: str) -> None:
        w = np.floor(f.cwnd[m])
        shadow = np.minimum(np.floor(np.floor(f.shadow[m]) / 2), w)
        super().on_loss(f, m, kind)
        f.shadow[m] = np.where(f.backing[m] > 0, f.shadow[m], shadow)
        f.backing[m] = 0.0
        f.cwr_end[m] = -1.0
        f.round_end[m] = f.delivered[m] + f.inflight[m]
        # CA_EVENT_COMPLETE_CWR: the round under way becomes the previous one, so
        # the first round after the recovery measures the queue's fall (which
        # tells the ineffectual-backoff count that backing off helped)
        seen = f.rtt_lo[m] > 0
        f.prev[m] = np.where(seen, f.rtt_lo[m], f.prev[m])
        f.prev_hi[m] = np.where(seen, f.rtt_hi[m], f.prev_hi[m])
        f.rtt_lo[m] = f.rtt_hi[m] = 0.0


CDG.fluid = CDGFluid
