"""TCP Westwood+: after a loss, set the window to the bandwidth it measured.

Sources: S. Mascolo, C. Casetti, M. Gerla, M. Y. Sanadidi, R. Wang, "TCP
Westwood: Bandwidth estimation for enhanced transport over wireless links",
ACM MobiCom 2001; the per-RTT sampling of Westwood+ from L. A. Grieco,
S. Mascolo, "Performance evaluation and comparison of Westwood+, New Reno,
and Vegas TCP congestion control", ACM CCR 34(2), 2004; Linux
``net/ipv4/tcp_westwood.c`` (v6.x).

Bandwidth estimate (Westwood+): the bytes acknowledged over an interval of
at least one RTT (and at least ``min_interval``), divided by its length, is
one sample ``b_k``; two cascaded low-pass filters (Linux's
``westwood_filter``), with ``g`` the filter gain, smooth it::

    bw_ns = (1 − g)·bw_ns + g·b_k        bw_est = (1 − g)·bw_est + g·bw_ns

(the first sample fills both). ``bw_est`` is in bit/s of payload.

* growth: Reno's — slow start ``cwnd += acked``, congestion avoidance
  ``cwnd += acked / cwnd``;
* RTTs are read in whole jiffies, rounded up (Linux's ``usecs_to_jiffies``
  of each sample): ``jiffy`` is ``1/HZ``, 4 ms for Linux's default
  ``CONFIG_HZ = 250``; ``jiffy=0`` reads them exactly. ``RTT_min`` is the
  smallest since the start or since the last timeout: after a timeout
  Linux takes the next sample as the new minimum (``reset_rtt_min``).
* on loss: ``ssthresh = max(bw_est · RTT_min / (8·MSS), 2)`` segments, the
  window that fills the measured bandwidth with no queue; after three
  duplicate ACKs ``cwnd = min(cwnd, ssthresh)``, after a timeout ``cwnd = 1``.

Default recovery: ``"prr"`` — Linux runs Westwood+, like every congestion
control, with SACK recovery and PRR (``net/ipv4/tcp_input.c``).

Differences from the source:

* After a fast loss ``ssthresh`` is also capped at ``cwnd``: ccsim's recovery
  strategies end with ``cwnd = ssthresh``, and this keeps the paper's
  ``cwnd = min(cwnd, ssthresh)`` (a loss never raises the window). Linux
  uses Reno's ``cwnd/2`` on entering recovery and sets ``cwnd = ssthresh =
  bw_est·RTT_min`` when it completes, which can raise the window.
* Before the first bandwidth sample (or the first RTT sample) the loss
  response is Linux's: ``westwood_bw_rttmin`` gives its floor of 2 segments
  (the paper does not say; ccsim used to answer Reno's FlightSize/2).
* Linux updates ``RTT_min`` on every ACK from the latest sample; ccsim on
  every sample (the same minimum; after a timeout the first sample, where
  Linux may take the last one from before it if an ACK without a sample
  comes first).
* Westwood+ in early 2.6 kernels took ``RTT_min`` as the minimum of the
  *smoothed* RTT (``srtt >> 3``) in jiffies, which on a path whose queue
  never empties stays near the queued RTT: its windows after a loss were
  far larger than today's. Not modelled.
* Bytes acknowledged are counted from ``Ack.delivered`` (segments delivered,
  SACKed ones included, times the MSS), so data acknowledged during loss
  recovery, when the window law sees no ``on_ack``, is counted at the next
  ACK. Linux counts duplicate ACKs as one MSS each (``westwood_acked_count``).
* An interval ``(start, now]`` counts the ACKs after its start up to and
  including the one that closes it; Linux adds the closing ACK's bytes to
  the next interval, which after a recovery (data acknowledged while the law
  saw no ACK) would credit a whole recovery's data to one short interval.
* The first interval starts at the first ACK; Linux starts it when the
  connection is set up. The window is a float.

Defaults and their sources: ``gain = 1/8`` — Linux ``westwood_do_filter``,
``(7·a + b) >> 3`` (Grieco & Mascolo use a gain of 0.1); ``min_interval =
0.05`` s — Linux ``TCP_WESTWOOD_RTT_MIN = HZ/20``, the shortest interval a
sample is taken over ("an estimation on small time intervals is better to
avoid"); ``jiffy = 0.004`` s — ``1/HZ`` with mainline Linux's default
``CONFIG_HZ = 250`` (``kernel/Kconfig.hz``; 1000 gives 0.001).
"""

from __future__ import annotations

import math

import numpy as np

from .base import MIN_SSTHRESH, Ack, Loss, RttSample
from .fluid import FlowArrays, any_
from .registry import register
from .reno import Reno, RenoFluid, one_segment_per_window_of_acks


def jiffies(rtt, jiffy: float):
    """``rtt`` (s; a float or an array) rounded up to whole ticks of ``jiffy``
    seconds, as Linux's ``usecs_to_jiffies`` of the sample in µs (a jiffy
    under 1 µs reads whole µs)."""
    tick = max(round(jiffy * 1e6), 1)  # µs
    us = np.round(rtt * 1e6) if isinstance(rtt, np.ndarray) else round(rtt * 1e6)
    return -(-us // tick) * tick / 1e6


def filter_once(ns, est, sample, gain: float):
    """One bandwidth sample through Westwood+'s two cascaded EWMAs (Linux
    ``westwood_filter``): ``bw_ns`` towards the sample, then ``bw_est``
    towards the new ``bw_ns``, each by ``gain``. Returns (``bw_ns``,
    ``bw_est``)."""
    ns = (1.0 - gain) * ns + gain * sample
    return ns, (1.0 - gain) * est + gain * ns


def filtered(ns, est, sample, k, gain: float):
    """``k`` (≥ 1; whole, an array or a number) samples of the same value
    through :func:`filter_once`, in closed form: with ``a = 1 − gain``,
    ``bw_ns = s + aᵏ(ns − s)`` and ``bw_est = s + aᵏ((est − s) + k·gain·(ns −
    s))``. Where ``k`` is 1 the result is :func:`filter_once`'s, bit for bit."""
    ns1, est1 = filter_once(ns, est, sample, gain)
    ak = (1.0 - gain) ** k
    nsk = sample + ak * (ns - sample)
    estk = sample + ak * ((est - sample) + k * gain * (ns - sample))
    return np.where(k > 1, nsk, ns1), np.where(k > 1, estk, est1)


def _window_from_estimate(before: dict, event: object, after: dict) -> str | None:
    """Mascolo et al. §3: at a loss ``ssthresh = max(BWE·RTTmin/MSS, 2)``,
    no more than ``cwnd`` after three duplicate ACKs; 2 segments while there
    is no estimate (Linux)."""
    if not isinstance(event, Loss):
        return None
    bw, rtt = before["bw_est"], before["rtt_min"]
    if bw > 0 and math.isfinite(rtt):
        window = bw * rtt / (8.0 * before["mss"])  # bit/s · s / (bit/segment)
        if event.kind == "fast":
            window = min(window, before["cwnd"])
        expected = max(window, MIN_SSTHRESH)
    else:
        expected = MIN_SSTHRESH
    if not math.isclose(after["ssthresh"], expected, rel_tol=1e-9, abs_tol=1e-9):
        return (f"{event.kind} loss with bw_est={bw!r} bit/s, min_rtt={rtt!r} s, "
                f"cwnd={before['cwnd']!r}: ssthresh became {after['ssthresh']!r}, "
                f"the rule gives {expected!r}")
    return None


@register
class Westwood(Reno):
    """TCP Westwood+ (Mascolo et al. 2001; Grieco & Mascolo 2004) with PRR
    recovery, as Linux runs it."""

    name = "westwood"
    recovery = "prr"  # Linux: SACK recovery with PRR for every law (tcp_input.c)
    param_space = {"gain": (0.01, 1.0), "min_interval": (0.0, 0.5), "jiffy": (0.0, 0.01)}
    properties = (one_segment_per_window_of_acks, _window_from_estimate)

    def __init__(self, *, gain: float = 0.125, min_interval: float = 0.05,
                 jiffy: float = 0.004, extra_ack: bool = False) -> None:
        self.gain = gain                  # weight of a new sample in each filter
        self.min_interval = min_interval  # shortest sampling interval (s)
        self.jiffy = jiffy                # RTTs in whole ticks of this clock, rounded up (s)
        self.extra_ack = extra_ack        # Reno's growth as 2.6.3x-3.x stepped it (reno.py)

    def start(self, initial_window: float, mss: int) -> None:
        super().start(initial_window, mss)
        self.bw_est = 0.0       # filtered bandwidth estimate (bit/s)
        self.bw_ns_est = 0.0    # first filter stage (bit/s)
        self.acked_bytes = 0.0  # payload acknowledged in the current interval (bytes)
        self.interval_start: float | None = None  # time the interval began (s)
        self.last_delivered = 0.0  # Ack.delivered at the last ACK (segments)
        self.rtt = math.nan     # latest RTT sample, in whole jiffies (s)
        self.rtt_min = math.inf  # smallest of them since the start or the last timeout (s)
        self.reset_rtt_min = False  # a timeout: the next sample is the new minimum

    def max_growth_per_rtt(self, cwnd: float) -> float:
        return 1.0  # Reno's growth

    def in_jiffies(self, rtt: float) -> float:
        """``rtt`` (s) rounded up to whole jiffies, as Linux's
        ``usecs_to_jiffies`` of the sample in µs; unchanged when ``jiffy`` is 0."""
        if not self.jiffy:
            return rtt
        return jiffies(rtt, self.jiffy)

    def on_rtt(self, sample: RttSample) -> None:
        if sample.rtt > 0:
            self.rtt = rtt = self.in_jiffies(sample.rtt)
            if self.reset_rtt_min or rtt < self.rtt_min:
                self.rtt_min, self.reset_rtt_min = rtt, False

    def on_ack(self, ack: Ack) -> None:
        self._measure(ack)
        super().on_ack(ack)

    def _measure(self, ack: Ack) -> None:
        if self.interval_start is None:  # the first ACK opens the first interval
            self.interval_start, self.last_delivered = ack.now, ack.delivered
            return
        # Payload delivered since the last ACK, this one's included (bytes).
        self.acked_bytes += (ack.delivered - self.last_delivered) * self.mss
        self.last_delivered = ack.delivered
        elapsed = ack.now - self.interval_start
        # One sample per RTT (Westwood+), never over less than min_interval.
        if math.isfinite(self.rtt) and elapsed > max(self.rtt, self.min_interval):
            self._filter(self.acked_bytes * 8.0 / elapsed)  # bit/s
            self.acked_bytes = 0.0
            self.interval_start = ack.now

    def _filter(self, sample: float) -> None:
        """Linux's two cascaded EWMAs; the first sample fills both."""
        g = self.gain
        if self.bw_ns_est == 0.0 and self.bw_est == 0.0:
            self.bw_ns_est = self.bw_est = sample
        else:
            self.bw_ns_est = (1.0 - g) * self.bw_ns_est + g * sample
            self.bw_est = (1.0 - g) * self.bw_est + g * self.bw_ns_est

    def rate_halving_floor(self) -> float:
        """Linux 2.6.x–3.1's ``min_cwnd`` op, ``tcp_westwood_bw_rttmin``:
        the bandwidth estimate times the minimum RTT, the ``ssthresh`` this
        law sets at a loss (segments)."""
        return self.ssthresh

    def ssthresh_after(self, loss: Loss) -> float:
        if self.bw_est <= 0.0 or not math.isfinite(self.rtt_min):
            return MIN_SSTHRESH  # no estimate yet: Linux's westwood_bw_rttmin floor, max(0, 2)
        window = self.bw_est * self.rtt_min / (8.0 * self.mss)  # segments
        if loss.kind == "fast":
            window = min(window, self.cwnd)
        return max(window, MIN_SSTHRESH)

    def on_loss(self, loss: Loss) -> None:
        super().on_loss(loss)
        if loss.kind == "timeout":  # Linux (CA_EVENT_LOSS): RTT_min afresh from the next ACK
            self.reset_rtt_min = True


class WestwoodFluid(RenoFluid):
    """Westwood+ in the fluid engine: Reno's growth (:class:`RenoFluid`),
    :class:`Westwood`'s bandwidth estimate and its loss response.

    Per ACK the class adds the segments delivered since the last ACK to the
    current interval and, once the interval is longer than both the latest
    RTT sample and ``min_interval``, turns it into one sample (bytes / time)
    through the two cascaded EWMAs (gain ``gain`` each; the first sample
    fills both). Over a step: the step's deliveries (``delivered`` since the
    last step, so data acknowledged in recovery counts at the next step,
    as in the class) join the interval, which closes at the end of the step
    (``now + h``) if it is then longer than ``max(rtt, min_interval)``. A
    step ``k ≥ 2`` such intervals long (a long step between losses) closes
    ``k`` of them, each a sample of the interval's mean rate: the filters'
    ``k`` updates at once (:func:`filtered`); a shorter step closes one. The
    first step with deliveries opens the first interval (the class's first
    ACK).

    On loss, as :meth:`Westwood.ssthresh_after`: ``ssthresh =
    max(BWE · RTT_min, 2)`` segments (no more than ``cwnd`` after a fast
    loss), 2 before the first estimate; ``RTT_min`` is the smallest RTT
    sample of the steps since the start or the last timeout
    (:meth:`least_sample`: without the receiving delay whose mean the step's
    RTT holds), in whole jiffies rounded up, as the class reads its samples.
    The estimate is kept in segments/s (the class's ``bw_est`` in bit/s over
    ``8·MSS``).
    """

    scalar_params = ("jiffy",)  # the RTT tick
    long_steps = True  # a long step takes a sample per interval it spans (filtered)

    state = {"bw_est": 0.0, "bw_ns": 0.0, "int_start": math.nan, "int_acked": 0.0,
             "last_delivered": 0.0, "rtt_min": math.inf, "reset_rtt_min": 0.0}

    def grow(self, f: FlowArrays) -> None:
        cc = self.cc
        moving = (f.h > 0) & (f.acked > 0)
        if any_(moving):
            rtt, low = f.rtt, self.least_sample(f)
            if cc.jiffy:  # whole jiffies, rounded up, as Westwood.in_jiffies
                rtt, low = jiffies(rtt, cc.jiffy), jiffies(low, cc.jiffy)
            fresh_min = moving & ((f.reset_rtt_min > 0) | (low < f.rtt_min))
            f.rtt_min[fresh_min] = low[fresh_min]
            f.reset_rtt_min[fresh_min] = 0.0
            end = f.now + f.h
            first = moving & np.isnan(f.int_start)
            f.int_start[first] = end[first]
            f.last_delivered[first] = f.delivered[first]
            counting = moving & ~first
            f.int_acked[counting] += (f.delivered - f.last_delivered)[counting]
            f.last_delivered[counting] = f.delivered[counting]
            elapsed = end - f.int_start
            interval = np.maximum(rtt, cc.min_interval)
            close = counting & (elapsed > interval)
            if any_(close):
                sample = f.int_acked / np.where(close, elapsed, 1.0)   # segments/s
                # a step several intervals long takes as many samples, each
                # the interval's mean rate (Linux samples once per interval)
                k = np.maximum(np.floor(f.h / interval), 1.0)
                fresh = close & (f.bw_ns == 0) & (f.bw_est == 0)
                old = close & ~fresh
                f.bw_ns[fresh] = sample[fresh]
                f.bw_est[fresh] = sample[fresh]
                ns, est = filtered(f.bw_ns, f.bw_est, sample, k, cc.gain)
                f.bw_ns[old] = ns[old]
                f.bw_est[old] = est[old]
                f.int_acked[close] = 0.0
                f.int_start[close] = end[close]
        super().grow(f)

    @staticmethod
    def least_sample(f: FlowArrays) -> np.ndarray:
        """The smallest RTT sample (s) of the step: its RTT without the
        queue of paced trains (``rtt_floor``) and without the receiving delay,
        of which ``rtt`` holds the mean (half of ``ack_wait``). The delay is
        uniform from zero and a flow takes a sample per ACK, of the latest
        segment it acknowledges (Linux's ``ca_rtt_us`` from ``last_ackt`` in
        ``tcp_clean_rtx_queue``, handed to ``pkts_acked``), so its minimum is
        a segment's that was acknowledged at once; in the packet engine a
        Westwood+ flow at 5 Mbit/s over 200 ms sees 202.9 ms, 204 ms in
        jiffies, where the mean RTT, 204.1 ms, reads 208."""
        floor = f.rtt if f.rtt_floor is None else f.rtt_floor
        return floor - 0.5 * f.ack_wait

    def ssthresh_after(self, f: FlowArrays, m: np.ndarray, kind: str) -> np.ndarray:
        bw, rtt = f.bw_est[m], f.rtt_min[m]
        known = (bw > 0) & np.isfinite(rtt)
        window = bw * np.where(known, rtt, 0.0)
        if kind == "fast":
            window = np.minimum(window, f.cwnd[m])
        return np.maximum(window, MIN_SSTHRESH)  # 2 with no estimate yet, as the window law

    def on_loss(self, f: FlowArrays, m: np.ndarray, kind: str) -> None:
        super().on_loss(f, m, kind)
        if kind == "timeout":  # RTT_min afresh from the next step (Linux's reset_rtt_min)
            f.reset_rtt_min[m] = 1.0


Westwood.fluid = WestwoodFluid
