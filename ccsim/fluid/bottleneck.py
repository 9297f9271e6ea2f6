"""The fluid engine's bottleneck: its queue, the trains and bursts it sees, its drops.

* **The queue** (:meth:`Bottleneck._queue`): the one the data physically in
  flight implies, where the flows' rates ``inflight / (base RTT + q/C)``
  add up to the link rate ``C`` (Newton's method where base RTTs differ).
* **Paced trains** (:meth:`Bottleneck._paced_trains`): below full load the
  trains of window-limited paced flows still queue where they overlap; the
  time-average queue of periodic trains (:func:`_periodic_queue`, Reich's
  formula) over low-discrepancy phases (:func:`_phases`, Roberts 2018).
* **Bursts** (:meth:`Bottleneck._burst_drops`): an ACK-clocked sender's
  bursts (Jacobson, SIGCOMM 1988; slow start's trains, Hoe, SIGCOMM 1996),
  which the fluid queue averages away, overflow a small buffer
  (:func:`_train_tail`).
* **Overflow** (:meth:`Bottleneck._overflow_shares`,
  :meth:`Bottleneck._overflow_time`): what does not fit in pipe and buffer
  is dropped on arrival, shared by the flows' arrival rates (Bohacek et al.,
  SIGMETRICS 2003; Shorten, Wirth & Leith, ToN 2006), and dropped as whole
  packets when a flow's drop credit passes a whole number
  (:meth:`Bottleneck._queue_drops`).

Engine attributes read: ``C``, ``B``, ``d``, ``d_max``, ``q``, ``tau``,
``cwnd``, ``ssthresh``, ``pacing``, ``sending``, ``queued``, ``growth``,
``h_last``, ``t``, ``rec_until``, ``cwr_until``, ``ack_segs``,
``ack_wait``, ``nic_ratio``, ``no_nic``, ``paced``, ``uniform``,
``uniform_s``, ``by_scen``. Written: ``drop_credit``, ``fresh`` and
``restart_burst`` (spent once their burst is counted).
"""

from __future__ import annotations

import functools

import numpy as np

from ..algorithms.fluid import any_
from .fast import clip as _clip
from .fast import indices as _indices


def _train_tail(rise: np.ndarray, b: np.ndarray, room: np.ndarray,
                n: np.ndarray) -> np.ndarray:
    """Mean drops (packets) of a burst that raises the queue by ``rise`` (of
    ``b`` segments) with ``room`` packets free, behind ``K`` growth segments
    its flow sent earlier in the round, ``K`` uniform on 0..``n`` (``n`` not
    whole: the two whole neighbours, weighted).

    A window-limited flow on a link not yet full sends its round as one
    train clocked by the link's departures (ACK clocking, Jacobson,
    SIGCOMM 1988), each burst coming as the one ahead of it leaves. A
    growth segment shifts the rest of the train a packet later, so every
    burst behind it in the round finds one packet more in the buffer until
    the round's idle gap drains it. A burst at a uniform place ``u`` in the
    round has each of the round's ``n`` other growth segments ahead of it
    with probability ``u``, so ``K`` is uniform on 0..n. The mean of
    ``clip(rise + K − room, 0, b)``, in closed form."""
    c = rise - room
    k0 = np.maximum(np.ceil(-c), 0.0)       # first K that drops anything
    k1 = np.maximum(np.ceil(b - c), 1.0)    # first K that drops the whole burst

    def mean(m):  # over K = 0..m, m whole
        hi = np.minimum(k1 - 1.0, m)
        cnt = np.maximum(hi - k0 + 1.0, 0.0)
        part = cnt * c + 0.5 * (k0 + hi) * cnt  # the K whose drops are c + K
        return (np.where(cnt > 0, part, 0.0) + b * np.maximum(m - k1 + 1.0, 0.0)) / (m + 1.0)

    lo = np.floor(n)
    f = n - lo
    at_lo, above = mean(np.stack([lo, lo + 1.0]))  # (one pass for both neighbours)
    return np.where(f > 0, (1.0 - f) * at_lo + f * above, at_lo)


TRAIN_PHASES = 16
"""Relative phases of paced trains averaged over (:meth:`Bottleneck._paced_trains`)."""


@functools.lru_cache(maxsize=None)
def _phases(n: int) -> np.ndarray:
    """:data:`TRAIN_PHASES` phase vectors of ``n`` trains (fractions of a
    period, shape ``(TRAIN_PHASES, n)``): the first train at 0, the others on
    the low-discrepancy sequence of Roberts (2018), ``frac(½ + m·α)`` with
    ``α_k = φ_d^−k`` and ``φ_d`` the root of ``x^(d+1) = x + 1``, ``d = n − 1``
    (for two trains, the golden ratio's). Cached: read it, never write it."""
    d = max(n - 1, 1)
    g = 2.0
    for _ in range(60):  # φ_d by fixed-point iteration
        g = (1.0 + g) ** (1.0 / (d + 1))
    alpha = g ** -np.arange(1, d + 1)
    m = np.arange(1, TRAIN_PHASES + 1)[:, None]
    out = np.zeros((TRAIN_PHASES, n))
    out[:, 1:] = np.mod(0.5 + m * alpha[None, :n - 1], 1.0)
    return out


def _periodic_queue(rate: np.ndarray, duty: np.ndarray, drain: np.ndarray,
                    phases: np.ndarray) -> np.ndarray:
    """The time-average queue, as a multiple of the period's packets at rate
    1 (multiply by the period, s, for packets), of trains that repeat every
    period: train ``k`` of row ``i`` arrives at ``rate[i, k]`` (packets/s)
    for the fraction ``duty[i, k]`` of the period from ``phases[j, k]``, the
    link drains ``drain[i]`` (packets/s). The queue of piecewise-constant
    rates is integrated exactly over two periods, the second counted: from
    empty it meets the periodic queue where that empties, which it does
    once per period when the trains' mean rate is below ``drain``. The
    queue at each segment's start is Reich's: the net input since the start
    less its least value so far. Mean over the phase vectors ``j``."""
    rows, phase_n, n = rate.shape[0], phases.shape[0], phases.shape[1]
    on = phases[None, :, :]                                  # (rows, phases, trains)
    off = np.mod(on + duty[:, None, :], 1.0)
    cuts = np.empty((rows, phase_n, 2 * n + 2))
    cuts[..., :n] = on
    cuts[..., n:2 * n] = off
    cuts[..., 2 * n] = 0.0
    cuts[..., 2 * n + 1] = 1.0
    cuts.sort(axis=2)
    mid = 0.5 * (cuts[..., 1:] + cuts[..., :-1])             # (rows, phases, segments)
    since = np.mod(mid[..., None] - on[:, :, None, :], 1.0)  # (.., segments, trains)
    arriving = np.add.reduce(np.where(since < duty[:, None, None, :], rate[:, None, None, :], 0.0),
                             axis=3)
    slope = arriving - drain[:, None, None]                  # packets/s (period 1 s)
    length = cuts[..., 1:] - cuts[..., :-1]
    # Reich's formula over two periods from empty: the queue at each segment's
    # start is the net input since then less its least value so far
    seg = slope.shape[2]
    rise = np.empty((rows, phase_n, 2 * seg))
    np.multiply(slope, length, out=rise[..., :seg])
    rise[..., seg:] = rise[..., :seg]
    net = np.empty((rows, phase_n, 2 * seg + 1))
    net[..., 0] = 0.0
    np.add.accumulate(rise, axis=2, out=net[..., 1:])
    least = np.minimum.accumulate(net, axis=2)
    q = net[..., seg:-1] - least[..., seg:-1]                # the second lap
    # rising, or falling until empty: the time with a queue in each segment
    busy = np.where(slope >= 0, length, np.minimum(length, q / np.where(slope < 0, -slope, 1.0)))
    area = np.add.reduce(q * busy + 0.5 * slope * busy * busy, axis=2)
    return np.add.reduce(area, axis=1) / phase_n  # (ndarray.mean's sum and division)


class Bottleneck:
    """The bottleneck's part of :class:`~ccsim.fluid.engine.FluidEngine` (a mixin)."""

    def _queue(self, inflight: np.ndarray) -> np.ndarray:
        """The queue (packets) the flows' data in flight implies, unbounded by
        the buffer: the ``q`` at which their rates ``min(inflight / (d + q/C),
        pacing)`` add up to the link's rate ``C`` (0 if they fall short of it
        with an empty queue). ACK clocking makes this so: a window-limited
        flow has its whole window out, on the wire or in the queue.

        Newton's method from ``Σ inflight − C·d_max``, a lower bound of the
        root of this decreasing convex function, converges from below; it is
        exact at once when every flow has the same base RTT and none is paced.
        """
        scen, C, d, pacing = self.scen, self.C, self.d, self.pacing
        total = np.bincount(scen, inflight, self.S)
        q = np.maximum(total - C * self.d_max, 0.0)
        if self.uniform and not self.paced:  # one base RTT each: the bound is the root
            return q
        exact = self.uniform_s  # one base RTT, nothing paced: the bound is the root
        if self.paced:
            exact = exact & (np.bincount(scen, pacing < np.inf, self.S) == 0)
        if not any_(~exact):
            return q
        inexact = ~exact
        for _ in range(3):
            tau = d + (q / C)[scen]
            x = inflight / tau
            if self.paced:
                paced = x > pacing
                rate = np.bincount(scen, np.where(paced, pacing, x), self.S)
                slope = np.bincount(scen, np.where(paced, 0.0, x / tau), self.S) / C
            else:  # the same without the pacing rates (all inf)
                rate = np.bincount(scen, x, self.S)
                slope = np.bincount(scen, x / tau, self.S) / C
            move = (rate > C) & inexact
            if not any_(move):  # converged: further iterations leave q as it is
                break
            q = np.maximum(q + np.where(move & (slope > 0), (rate - C) / slope, 0.0), 0.0)
        return q

    def _paced_trains(self, physical: np.ndarray) -> np.ndarray | None:
        """The time-average queue (packets, per scenario; None if no
        scenario has one) that the trains of window-limited paced flows
        build on a link they do not fill.

        A paced flow whose window, not its pacing rate ``r``, limits it sends
        its window as one train at ``r`` each RTT: on for ``x/r`` of the RTT
        (``x`` its mean rate) and silent for the rest, whatever spacing its
        ACKs came back with (pacing sets the spacing anew each round; Copa,
        paced at twice its rate, sends its window in half an RTT). Where such
        trains overlap they arrive faster than the link drains them and
        queue, though their mean rates fall short of it. ACK-clocked flows
        take the spacing the bottleneck gave their ACKs, so their trains
        merge with the others' (Jacobson 1988): their arrivals count as a
        steady rate ``b`` and leave ``C − b`` to drain the trains. The queue
        is that of the periodic arrivals of the trains over one period ``T``
        (the trains' rate-weighted RTT, each on for its share ``x/r`` of
        it), exact for piecewise-constant rates, averaged over
        :data:`TRAIN_PHASES` phases of the trains to each other: the phases
        are independent of the flows' rates, so every relative phase is
        equally likely. Rates are the last step's (``tau``), so that the
        queue does not enter its own computation. Deviations: one period for
        all trains (RTTs differ by their base RTTs alone); a train's peak is
        its pacing rate, or its NIC's rate if slower."""
        scen, C = self.scen, self.C
        x = physical / self.tau
        paced = self.pacing < np.inf  # (ACK-clocked flows' trains merge: steady)
        peak = np.minimum(self.pacing, self.nic_ratio * C[scen])
        bursty = self.sending & paced & (x > 0) & (x < peak * (1.0 - 1e-9))
        if not any_(bursty):
            return None
        bursty &= ~self.queued  # (a full link's queue already holds them)
        fi = self.by_scen[bursty[self.by_scen]]  # grouped by scenario, flow order within
        if fi.size == 0:
            return None
        first = np.empty(fi.size, bool)  # each scenario's first train
        first[0] = True
        np.not_equal(scen[fi[1:]], scen[fi[:-1]], out=first[1:])
        start = _indices(first)
        sid = scen[fi[start]]
        count = np.empty_like(start)  # trains per scenario
        np.subtract(start[1:], start[:-1], out=count[:-1])
        count[-1] = fi.size - start[-1]
        group = first.cumsum() - 1  # each train's scenario, as an index into sid
        steady = np.bincount(scen, np.where(self.sending & ~bursty, x, 0.0), self.S)
        drain = (C - steady)[sid]  # what the link leaves the trains (packets/s)
        room = np.bincount(group, peak[fi], sid.size) > drain
        if not any_(room):  # the trains together never outrun the link
            return None
        # per scenario with room, its trains as rows: peak rate, duty (x/r)
        keep = room[group]
        fi, sid, count, drain = fi[keep], sid[room], count[room], drain[room]
        row = np.arange(sid.size).repeat(count)
        period = (np.bincount(row, x[fi] * self.tau[fi], sid.size)
                  / np.bincount(row, x[fi], sid.size))
        queue = np.zeros(sid.size)
        sizes = sorted(set(count.tolist()))
        for n in sizes:  # by count of trains: the phases of n trains
            of_n = count == n
            rows = _indices(of_n)
            # those scenarios' trains, grouped by scenario: n to a row, in order
            fn = fi[of_n[row]] if len(sizes) > 1 else fi
            rate = peak[fn]
            duty = (x[fn] / rate).reshape(rows.size, n)
            rate = rate.reshape(rows.size, n)
            # one train has no phase to another: its TRAIN_PHASES vectors are
            # all zero, and the first alone gives their mean bit for bit
            # (numpy's pairwise sum of 16 equal terms is exact; tested)
            phases = _phases(n) if n > 1 else _phases(1)[:1]
            queue[rows] = _periodic_queue(rate, duty, drain[rows], phases)
        out = np.zeros(self.S)
        out[sid] = np.minimum(queue * period, self.B[sid])  # packets
        return out

    def _burst_drops(self, q_need, physical, x, A, hf, tau, overflowed=None) -> np.ndarray | None:
        """Drops per flow (packets) from the bursts an ACK-clocked sender puts
        on the queue, which the fluid queue averages away (None if none).

        Each ACK frees ``a`` segments (two behind delayed ACKs, RFC 5681
        §4.2) plus the window's growth per ACK, sent back to back at the
        sender's NIC rate, ``r`` times the bottleneck's: a burst of ``b``
        segments raises the queue by ``b' = b − ⌊(b − 1)/r⌋`` while the link
        serves the rest. The buffer holds ``B`` waiting and one in service.

        * A link not yet full (no fluid queue), in congestion avoidance:
          an ACK-clocked burst comes as the link's departures clock it, one
          burst per burst served, with the queue empty and the server freed
          by the burst ahead of it, not at random phase to the other flows'
          packets. The receiving delay, uniform up to
          ``ack_wait`` (its mean in ``d``), moves each ACK: the burst comes
          early by the difference of two such delays when that is
          positive, onto the work its flow's last burst still has at the
          server, ``C·ack_wait·E[(U − U')⁺] = C·ack_wait/6`` packets on
          average (``U, U'`` uniform on [0, 1]). A burst drops ``b' − (B + 1
          − C·ack_wait/6)``. Without the spread (``ack_jitter=0``) a pair or
          a growth segment's three fit two packets of buffer, as in the
          packet engine (a lone NewReno behind 2 packets at 10 Mbit/s, 40
          ms: utilisation 0.735, against 0.19 while the server was taken as
          busy for the link's load); behind delayed ACKs and one packet
          every growth segment is lost. The share of ACKs that carries the
          growth sends one segment more. Each growth segment shifts the
          rest of its flow's round a packet later, so the bursts behind it
          find one packet more until the round's idle gap (:func:`_train_tail`),
          and the round's first burst, one of ``cwnd/a``, follows that gap:
          it finds the server free (no tail of its own ahead) and loses
          ``b' − (B + 1)``. Other flows' trains are not counted: their
          growth lands on a train of this flow only where the trains abut,
          and counting every other flow's growth (clustered trains) lost 3
          times the packet engine's rate for two NewReno flows behind 2
          packets.
        * A link not yet full in slow start, whose train arrives ``1 + i``
          times as fast as it drains (Hoe, SIGCOMM 1996), and a flow that
          opens, which sends its initial window as one burst clocked by
          nothing: a burst finds the server busy for the share ``ρ`` of the
          time the link's load keeps it so, and drops ``b' − (B + 1 − ρ)``;
          the RTT's growth also queues as that train, and the ACKs that
          meet the part of its ramp above the buffer each lose their
          growth.
        * A full link: a window of ``W`` whole segments puts its queue's
          sawtooth at ``W − C·d`` (the fluid ``q``) at its peak, not above:
          each ACK's burst replaces the segments the ACK took out of flight,
          and a growth segment is the window's own increment, already in
          ``W`` (in the packet engine without the receiving delay's spread,
          ``ack_jitter=0``: mean queue ``W − C·d − (a − 1)/2``, peak ``W −
          C·d``, the first loss at ``W > C·d + B``). Two things move the
          peak: a NIC drains ``b − b'`` of a burst of ``b`` as it sends it,
          and the receiving delay, uniform up to ``ack_wait`` (its mean in
          ``d``), brings an ACK and its burst up to ``ack_wait`` early, onto
          ``C·ack_wait`` packets more (default one packet time: the first
          loss at ``W`` about ``C·d + B``, a segment earlier, as measured).
          So pipe and buffer hold ``b' − b + C·ack_wait`` packets less than
          the fluid model's; what goes beyond is dropped as the overflow is.

        On an empty queue a burst loses its own tail (it arrives faster than
        the bottleneck interleaves others' packets); at a full link what the
        sawtooth's peak leaves full drops whatever arrives next, shared as an
        overflow is (:meth:`_overflow_shares`). Paced flows send no bursts.
        A go-back-N restart sends its window as one burst into the buffer the
        queue left (:meth:`_restart_burst`); ``overflowed``, the step's
        overflow per flow (packets) if any, is part of that burst's tail and
        not counted twice.
        """
        scen = self.scen
        a = self.ack_segs
        clocked = self.sending & (x > 0)
        if self.paced:
            clocked &= self.pacing == np.inf
        restart = any_(self.restart_burst)
        if not any_(clocked) and not any_(self.fresh) and not restart:
            return None
        r = self.nic_ratio
        full = q_need > 0  # per scenario: the fluid queue is not empty
        full_f = full[scen]
        idle = clocked & ~full_f
        fresh = any_(self.fresh)
        if fresh or any_(idle):
            # what a burst may add to an empty queue: the buffer and the
            # server, busy for the link's load where the flow's data outruns
            # the link (slow start, an initial window); in congestion
            # avoidance freed by the burst ahead but for the work its flow's
            # last burst leaves there when the receiving delay's spread
            # brings this ACK early (the link's clock)
            room_load = (self.B + 1.0 - np.minimum(A / self.C, 1.0))[scen]
            room = np.where(self.cwnd < self.ssthresh, room_load,
                            (self.B + 1.0 - self.C * self.ack_wait / 6.0)[scen])

        def rise(b):  # how far a burst of b segments raises the queue
            if self.no_nic:  # (the whole burst: no NIC paces it out)
                return b
            return b - np.floor(np.maximum(b - 1.0, 0.0) / r)

        n_ack = np.where(clocked, x * hf / a, 0.0)  # ACKs this step
        h_last = self.h_last[scen]
        # growth this step (none in a recovery or an ECN reduction begun since:
        # the last step's growth is no guide to a window that was just cut and
        # does not grow)
        tf = self.t[scen]
        held = (tf < self.rec_until) | (tf < self.cwr_until)
        grow = np.where(held, 0.0, self._growth_sent() * np.where(h_last > 0, hf / h_last, 0.0))
        per_ack = np.where(n_ack > 0, grow / np.where(n_ack > 0, n_ack, 1.0), 0.0)
        # a link not yet full: each burst on an empty queue, on the growth
        # its flow sent earlier in the round (congestion avoidance,
        # :func:`_train_tail`), and the round's first burst after its idle gap
        if any_(idle):
            whole = np.floor(per_ack)
            frac = per_ack - whole
            lo = a + whole
            ca = idle & (self.cwnd >= self.ssthresh)
            ahead = np.where(ca, grow * tau / np.where(hf > 0, hf, 1.0), 0.0)  # per round
            first = np.where(ca, a / np.maximum(self.cwnd, a), 0.0)  # bursts first in a round
            room_gap = (self.B + 1.0)[scen]

            # per ACK, a burst of lo or (its share frac) lo + 1, behind the
            # round's growth (room) or first in it (room_gap): the four as
            # rows of one call
            hi = lo + 1.0
            rows = _train_tail(np.stack([rise(lo), rise(hi)] * 2), np.stack([lo, hi] * 2),
                               np.stack([room, room, room_gap, room_gap]),
                               np.stack([np.maximum(ahead - whole, 0.0),
                                         np.maximum(ahead - whole - 1.0, 0.0)] * 2))
            behind = (1.0 - frac) * rows[0] + frac * rows[1]
            after_gap = (1.0 - frac) * rows[2] + frac * rows[3]
            drops = np.where(idle, n_ack * ((1.0 - first) * behind + first * after_gap), 0.0)
            ss = idle & (self.cwnd < self.ssthresh) & (grow > 0)
        else:  # every clocked flow meets a queue
            drops = np.zeros(self.F)
            ss = idle
        if any_(ss):  # slow start: the RTT's growth ramps the queue up
            ramp = grow * tau / np.where(hf > 0, hf, 1.0)  # segments
            above = _clip((ramp + rise(a + per_ack) - room) / np.where(ramp > 0, ramp, 1.0),
                            0.0, 1.0)
            drops = np.where(ss, np.maximum(drops, grow * above), drops)
        if fresh:  # an initial window, on the wire at once
            f = self.fresh
            first = _clip(rise(self.cwnd) - room_load, 0.0, self.cwnd)
            drops = np.where(f & ~full_f, first, drops)
            self.fresh[:] = False
        if restart:  # a go-back-N restart's burst, into the buffer the queue left
            b = self.restart_burst  # (the step's overflow is part of its tail)
            q0 = np.minimum(self.q, self.B)
            room_q = (self.B - q0 + (q0 == 0))[scen]
            lost = _clip(rise(b) - room_q, 0.0, b)
            if overflowed is not None:
                lost = np.maximum(lost - overflowed, 0.0)
            drops = np.maximum(drops, lost)
            self.restart_burst[:] = 0.0
        # a full link: pipe and buffer hold the largest burst's peak less
        # (whole segments: the sawtooth peaks at q, less what the NIC drains,
        # plus what an early ACK's burst finds)
        busy = clocked & full_f
        if any_(busy):
            if self.no_nic:  # every burst whole: rise(b) − b is 0 for each busy flow
                most = np.where(np.bincount(scen, busy, self.S) > 0, 0.0, -np.inf)
            else:
                b = a + np.where(per_ack > 0, np.ceil(per_ack), 0.0)
                most = self._scenario_max(np.where(busy, rise(b) - b, -np.inf))
            short = np.maximum(most + self.C * self.ack_wait, 0.0)
            held = np.minimum(q_need, self.B)
            level = np.where(full, np.maximum(held - (self.B - short), 0.0), 0.0)
            if any_(level > 0):
                drops = drops + self._overflow_shares(level, x, A)
        if not any_(drops > 0):
            return None
        return np.minimum(drops, physical)

    def _overflow_shares(self, overflow: np.ndarray, x: np.ndarray,
                         A: np.ndarray) -> np.ndarray:
        """Each flow's part of a drop-tail overflow (packets).

        A full drop-tail queue drops the packets that arrive while it is
        full, so the overflow is shared by the flows' arrival rates over the
        step (packets/s), as in the hybrid models of Bohacek, Hespanha, Lee &
        Obraczka (SIGMETRICS 2003) and the rate-proportional drops of Shorten,
        Wirth & Leith (IEEE/ACM ToN 2006). An ACK-clocked flow in slow start
        sends two segments back to back per ACK, so the second lands on the
        queue its twin has just topped up: its arrivals count twice. A paced
        flow sends no bursts. Measured against the packet engine on the
        tuning set (docs/fluid.md), this beats sharing by window growth
        (which split every law's link by 1/RTT) and by plain rate.
        """
        i = _indices((overflow > 0)[self.scen])  # the flows of scenarios that overflow
        s = self.scen[i]
        burst = self.sending[i] & (self.cwnd[i] < self.ssthresh[i])
        if self.paced:
            burst &= self.pacing[i] == np.inf
        w = x[i] * (1.0 + burst)
        W = np.bincount(s, w, self.S)
        out = np.zeros(self.F)
        out[i] = np.where(W > 0, overflow / np.where(W > 0, W, 1.0), 0.0)[s] * w
        return out

    def _overflow_time(self, overflow: np.ndarray, t: np.ndarray,
                       hf: np.ndarray) -> np.ndarray:
        """When each flow's part of a drop-tail overflow was dropped (s). The
        windows' growth of the last step went out as its ACKs came, over that
        step, and reaches the fluid queue at this step's start: an overflow
        no larger than that growth is its top, reached ``overflow/growth`` of
        the last step before this one's start (in slow start a window that
        crosses pipe and buffer mid-step loses from then, and its sender
        learns of it an RTT later, not a step later). An overflow without
        such growth happened during this step: mid-step."""
        rise = np.bincount(self.scen, self.growth, self.S)
        grew = (rise > 0) & (overflow > 0)
        part = np.minimum(overflow / np.where(grew, rise, 1.0), 1.0)
        first = t - self.h_last * part
        return np.where(grew[self.scen], first[self.scen], t[self.scen] + 0.5 * hf)

    def _queue_drops(self, mean: np.ndarray) -> np.ndarray | None:
        """Whole queue drops per flow (None if none): each flow drops a packet
        whenever its accumulated expected drops pass a whole number, from a
        random phase drawn once per flow. A full drop-tail queue (and RED,
        which spaces its drops by its count) drops regularly, not as a Poisson
        process: a flow whose share of the overflow is one packet per RTT loses
        one packet per RTT, and which flows lose one in a given RTT follows
        their shares and phases."""
        if not any_(mean > 0):
            return None
        before = np.floor(self.drop_credit)
        self.drop_credit += mean
        k = np.floor(self.drop_credit) - before
        return k if any_(k) else None
