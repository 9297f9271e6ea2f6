"""The fluid engine's ACK clock: windows in flight, arrivals, delayed ACKs.

A window-limited flow is ACK-clocked (Jacobson, SIGCOMM 1988): it keeps its
whole window in flight, in whole segments, and its arrivals at the queue are
its data in flight over its RTT (a paced flow's no faster than it paces). A
receiver that delays ACKs (RFC 1122 §4.2.3.2, RFC 5681 §4.2: one ACK per two
segments, else on a timer) slows the clock of a window that does not fill
the link, and slows its growth with it; Linux's quick-ACK mode
(:data:`QUICK_ACKS`) acknowledges at once after a start or a timeout. A law
that counts ACKs rather than segments (``ack_counting``) keeps its share of
the growth it computes per segment (each flow's share is set up once, by
:func:`ccsim.fluid.layout._ack_share`).

Engine attributes read: ``cwnd``, ``ssthresh``, ``path_cap``, ``pacing``,
``tau``, ``ghost``, ``growth``, ``sending``, ``queued``, ``rec_until``,
``quick_left``, ``ack_segs``, ``delack``, ``delack_timeout``, ``cap_f``,
``ack_clocked``, ``ack_counted``, ``ack_share_ss``/``ack_share_ca``,
``nr_any`` (and :meth:`_holes_left`, of :mod:`ccsim.fluid.losses`).
Written: ``hold`` (each flow's ACK-clock rate under delayed ACKs), and the
step's ``cwnd`` and growth passed in.
"""

from __future__ import annotations

import numpy as np

from ..algorithms.fluid import any_
from .fast import indices as _indices


QUICK_ACKS = 16
"""Linux's ``TCP_MAX_QUICKACKS``: ACKs of new data a receiver in quick-ACK
mode sends at once (:data:`ccsim.packet.receiver.MAX_QUICKACKS`)."""


class AckClock:
    """The ACK clock's part of :class:`~ccsim.fluid.engine.FluidEngine` (a mixin)."""

    def _window(self, i: np.ndarray | slice = slice(None)) -> np.ndarray:
        """What each flow (of ``i``, indices; default all) keeps in flight
        while it sends (segments): its window within the path's cap; a paced
        flow no more than rate × RTT of data physically in flight, beside
        what it lost unseen (pacing spaces sending; only cwnd counts those)."""
        window = np.minimum(self.cwnd[i], self.path_cap[i])
        # whole segments: a sender transmits while snd_nxt − snd_una + 1 ≤ cwnd
        np.copyto(window, np.floor(window), where=window >= 1.0)
        if self.nr_any:  # a NewReno recovery's holes hold part of its window
            window = np.maximum(window - self._holes_left(i), 0.0)
        if self.paced:
            window = np.minimum(window, self.pacing[i] * self.tau[i] + self.ghost[i])
        return window

    def _growth_sent(self) -> np.ndarray:
        """The last step's window growth (segments, per flow) that goes out as
        new data: a window held by the receiver (or the path's cap) sends no
        more as ``cwnd`` grows."""
        cap, cwnd = self.path_cap, self.cwnd
        return np.maximum(np.minimum(cwnd, cap) - np.minimum(cwnd - self.growth, cap), 0.0)

    def _arrivals(self, physical: np.ndarray, tau: np.ndarray, x: np.ndarray) -> np.ndarray:
        """Each flow's arrival rate at the queue, into ``x`` (packets/s): what
        it has physically in flight over its RTT, a paced flow's no faster
        than it paces. Returns their sum per scenario."""
        np.divide(physical, tau, out=x)
        if self.delack:
            np.multiply(x, self.hold, out=x)
        if self.paced:
            np.minimum(x, self.pacing, out=x)
        return np.bincount(self.scen, x, self.S)

    def _held_acks(self, q_need: np.ndarray, tau: np.ndarray, tf: np.ndarray) -> None:
        """How delayed ACKs (RFC 1122 §4.2.3.2, RFC 5681 §4.2: one ACK per two
        segments, else on a timer) slow the ACK clock of a flow whose window
        does not fill the link, into ``hold`` (its rate over ``window/RTT``).

        Such a flow's window crosses the bottleneck as a train of back-to-back
        pairs, one every RTT. The first segment of each pair waits at the
        receiver for the second, one packet time ``1/C``; the pair its ACK
        releases is sent back to back, so the second waits as long at the
        bottleneck: each pair's round lasts ``τ + 1/C``. Of an odd window
        (``cwnd`` counts whole segments), the last segment has no partner
        until the next train: its ACK waits for the delayed-ACK timer ``T``
        (Linux: 40 ms), or for that train if it comes first, ``τ − (w − 1)/C``
        later. So ``w`` segments take ``(w − s)/(τ + 1/C) + s/(τ + min(T, gap))``
        per second, ``s`` being 1 for an odd window. Where the link is full
        a standing queue feeds it continuously and the clock is the link's;
        in recovery the receiver acknowledges at once (out-of-order data), and
        so in Linux's quick-ACK mode (``quick_ack``): the first
        :data:`QUICK_ACKS` ACKs of new data at the start and after a timeout."""
        hold = self.hold
        hold.fill(1.0)
        empty = q_need <= 0.0
        if not any_(empty):  # a standing queue everywhere: the link's clock
            return
        w = np.floor(np.minimum(self.cwnd, self.path_cap))
        on = (self.ack_segs > 1.0) & self.sending & (w >= 1.0) & (tf >= self.rec_until) \
            & empty[self.scen] & (self.quick_left <= 0.0)
        if not any_(on):
            return
        i = _indices(on)
        w, t, c = w[i], tau[i], self.cap_f[i]
        odd = np.mod(w, 2.0)
        gap = np.maximum(t - (w - 1.0) / c, 0.0)
        wait = np.minimum(self.delack_timeout[i], gap)
        rate = (w - odd) / (t + 1.0 / c) + odd / (t + wait)
        hold[i] = rate * t / w

    def _count_acks(self, cwnd: np.ndarray, grown: np.ndarray, hf: np.ndarray,
                    tau: np.ndarray) -> None:
        """Scale the step's growth ``grown`` (in place, and ``cwnd`` with it) of
        flows whose laws count ACKs, not segments, behind delayed ACKs.

        Congestion avoidance adds a fixed amount per ACK: ``share`` of the
        per-segment growth; so does slow start behind a queue, where it adds
        ``i`` per acknowledged segment (:meth:`FlowArrays.ss_grown`). On a
        link not yet full slow start multiplies the window by ``1 + i`` per
        RTT, and one ACK per ``1/share`` segments makes that ``1 + share·i``.
        ``i`` is read back from the law's own step (``cwnd/before = (1 +
        i)^(h/RTT)``), so the rule holds for Reno's ``i = 1`` and Hybla's
        ``2^ρ − 1`` alike.
        """
        before = cwnd - grown
        if not any_((grown > 0) & self.ack_counted):  # nothing to scale
            np.add(before, grown, out=cwnd)
            return
        in_ss = before < self.ssthresh
        share = np.where(in_ss, self.ack_share_ss, self.ack_share_ca)
        scaled = (grown > 0) & (share < 1.0)
        ss = scaled & in_ss & (hf > 0) & (before > 0) & ~self.queued
        # (under run()'s errstate: the flows outside ``ss`` may divide by 0)
        per_rtt = np.log(np.where(ss, cwnd / np.where(ss, before, 1.0), 1.0)) \
            * tau / np.where(ss, hf, 1.0)                    # ln(1 + i)
        ss_grown = before * np.expm1(np.log1p(np.expm1(per_rtt) * share) * hf / tau)
        kept = np.where(ss, ss_grown, grown * share)
        np.copyto(grown, kept, where=scaled)
        np.add(before, grown, out=cwnd)

    def _held_growth(self, cwnd: np.ndarray, grown: np.ndarray) -> None:
        """Slow the step's growth ``grown`` (in place, and ``cwnd`` with it)
        of window-limited flows whose ACK clock delayed ACKs hold
        (:meth:`_held_acks`): a window law grows per acknowledged segment
        (RFC 5681 §3.1: ``cwnd += acked`` in slow start, ``acked/cwnd`` per ACK
        in congestion avoidance), so its round is a window of ACKs, ``RTT /
        hold`` long, not an RTT. The step's growth is the law's over
        ``hold`` of the step: linear growth scaled by ``hold``, slow start's
        multiplication raised to the power ``hold``. (Paced laws set their
        windows from their estimates and are left alone.)"""
        slow = (self.hold < 1.0) & (grown > 0) & self.ack_clocked
        if not any_(slow):
            return
        i = _indices(slow)
        now, hold = cwnd[i], self.hold[i]
        before = now - grown[i]
        ss = (before < self.ssthresh[i]) & (before > 0)
        factor = now / np.where(ss, before, 1.0)
        new = np.where(ss, before * factor ** hold, before + grown[i] * hold)
        cwnd[i] = new
        grown[i] = new - before
