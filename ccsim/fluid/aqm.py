"""The fluid engine's active queues and ECN: RED, CoDel, PIE, step marking, echoes.

* **RED** (Floyd & Jacobson, ToN 1993): the average queue follows the
  per-arrival EWMA over each step's arrivals (:meth:`ActiveQueues._red_arrivals`,
  and the queue slow start's trains raise on a link not yet full,
  :meth:`ActiveQueues._red_trains`); its drop probability
  (:meth:`ActiveQueues._red_probability`, gentle or not) drops or, with
  ``ecn``, marks (RFC 3168 §7) that share of the arrivals, the early drops
  spaced by RED's count and falling on the arriving packet's flow
  (:meth:`ActiveQueues._red_spaced`, :meth:`ActiveQueues._red_owners`).
* **CoDel, PIE and step marking** have fluid models of their own
  (:class:`~ccsim.queues.FluidQueue`, in each discipline's file) that select
  a fraction of each step's arrivals from the queue at its start
  (:meth:`ActiveQueues._aqm_signals`): an ECN-capable flow's selected packets
  are marked where the queue marks (RFC 3168), the others' dropped.
* **Echoes** (:meth:`ActiveQueues._echoes`): marks reach the sender an RTT
  later (a ring of the last :data:`ECHO_SLOTS` steps' cumulative marks); a
  law that reads them itself (DCTCP, RFC 8257) finds them in ``marked``, the
  others' ``on_ecn`` runs at most once per window of data, outside recovery,
  with no growth for that RTT (RFC 3168 §6.1.2; Linux's CWR state).

Engine attributes read: ``q``, ``C``, ``B``, ``arrived``, ``rate``,
``growth``, ``h_last``, ``tau``, ``sending``, ``queued``, ``pacing``,
``ect``, ``is_red``, the RED parameters (``red_min``, ``red_max``,
``red_p``, ``red_w``, ``red_gentle``, ``red_ecn``, ``red_flows``,
``red_p_last``), ``aqms``, ``echo_law``, ``ecn_on``, ``steps``,
``stream_keys``, ``rec_until``, ``delivered``. Written: ``avg``,
``red_pb``, ``red_count``, ``red_u``, ``marked_at_queue``, ``marks``,
``marked``, ``echo_t``/``echo_m``/``echo_seen``, ``mark_credit``, the ECN
reduction's ``cwr_until``/``cwr_deliv``/``cwr_marks``,
``ecn_reductions``, ``h_f`` (no growth in a reduction's RTT), and the laws'
windows through ``on_ecn``.
"""

from __future__ import annotations

import numpy as np

from ..algorithms.fluid import any_
from . import draws
from .fast import indices as _indices


ECHO_SLOTS = 32
"""Steps of history kept to delay ECN echoes by an RTT: a flow whose RTT
spans more steps than this hears its marks after ``ECHO_SLOTS`` steps."""


class ActiveQueues:
    """RED, the other active queues and ECN in :class:`~ccsim.fluid.engine.FluidEngine` (a mixin)."""

    def _red_arrivals(self, hf: np.ndarray) -> np.ndarray:
        """Each flow's arrivals at the queue in this step (packets), of which
        RED selects its share: the ACK clock's, at the flow's rate ``x``
        (which on a full link is its part of the departures, ``C`` in all),
        and the window's growth of the last step, sent now on top of them.

        RED decides on every arriving packet (Floyd & Jacobson 1993, Fig. 2),
        growth included: a slow start's window sends two segments per ACK,
        arrivals twice the departures, and with the average above ``max_th``
        RED drops both, so the queue drains at the link's rate (as in the
        packet engine) instead of holding while half the arrivals pass.
        A paced flow arrives at its pacing rate, already its ``x``."""
        arrivals = self.rate * hf
        if not any_(self.growth > 0):
            return arrivals
        sent = self._growth_sent()
        clocked = self.sending & (self.pacing == np.inf) if self.paced else self.sending
        # only in a step the flow's scenario takes (a finished one keeps its growth)
        return arrivals + np.where(clocked & (hf > 0), sent, 0.0)

    def _red_probability(self, h: np.ndarray, arrivals_f: np.ndarray) -> np.ndarray:
        """RED's drop probability per scenario (Floyd & Jacobson 1993).

        The average queue follows the per-arrival EWMA (gain ``weight``) over
        the step's arrivals (``arrivals_f``, packets per flow: every arrival,
        those RED or the buffer then drops too) — at least ``C·h`` of them,
        which is also how RED decays its average over an idle period: by the
        elapsed idle time, as the packet engine's RED and Linux's (an arrival
        ends the idle period whatever its fate, so drops at an empty queue
        do not compound the decay). The
        count-based spreading of drops puts them about uniformly between 1
        and ``1/p_b`` packets apart, so the effective probability is ``2 p_b
        / (1 + p_b)``.
        """
        seen, arrived = self.q, self.arrived
        trains = self._red_trains()
        if trains is not None:  # the queue slow start's trains raise on a link not yet full
            extra, grown = trains
            arrived = arrived + grown
            seen = seen + extra / np.maximum(arrived, self.C)
        n = np.bincount(self.scen, arrivals_f, self.S)
        arrivals = np.maximum(n, self.C * h)
        self.avg = seen + (self.avg - seen) * (1.0 - self.red_w) ** arrivals
        avg, lo, hi, top = self.avg, self.red_min, self.red_max, self.red_p
        p_b = np.where(avg < lo, 0.0, top * (avg - lo) / (hi - lo))
        above = avg >= hi
        if not any_(above & self.is_red):  # (usually: below max_th, neither rule applies)
            self.red_pb = np.where(self.is_red, np.minimum(p_b, 1.0), 0.0)
            return np.where(self.is_red, np.minimum(2.0 * p_b / (1.0 + p_b), 1.0), 0.0)
        gentle = self.red_gentle & (avg < 2.0 * hi)
        p_b = np.where(above & gentle, top + (1.0 - top) * (avg - hi) / hi, p_b)
        p_b = np.where(above & ~gentle, 1.0, np.minimum(p_b, 1.0))
        self.red_pb = np.where(self.is_red, p_b, 0.0)
        p = np.where(above & ~gentle, 1.0, np.minimum(2.0 * p_b / (1.0 + p_b), 1.0))
        return np.where(self.is_red, p, 0.0)

    def _red_trains(self) -> tuple[np.ndarray, np.ndarray] | None:
        """What the trains of ACK-clocked flows on a link not yet full add to
        the queue RED's arrivals see (None if nothing): per scenario, the
        queue summed over those arrivals (packets²/s) and the arrivals the
        windows' growth adds (packets/s).

        RED updates its average at each arrival (Floyd & Jacobson 1993, §4),
        so it samples the queue when packets come, not over time. A window
        ``W`` that does not fill the link crosses the bottleneck once per RTT
        as a train spaced by the link, its ACKs come back at the link's rate,
        and each releases what it acknowledges plus the window's growth: the
        round's ``W + g`` segments arrive faster than they drain and raise
        the queue by ``g`` (slow start: ``g`` about ``W``, Hoe, SIGCOMM 1996;
        a NIC ``r`` times the bottleneck's rate caps the rise at ``(W + g)(1 −
        1/r)``). RED itself drops its share ``p`` of the round as it arrives,
        so only ``(W + g)(1 − p)`` enter the queue: the rise is ``p(W + g)``
        less, none once ``p ≥ g/(W + g)`` (a half in slow start) — above
        ``max_th``, where every arrival is dropped, the packet engine's queue
        drains and its average falls while the windows still grow; the fluid
        average kept climbing on trains that were never queued (YeAH and
        CUBIC behind RED at 10 Mbit/s, 100 ms, seed 5: to 34 packets while
        every arrival was dropped, where the packet engine's peaked at 21).
        Its arrivals see that queue rise evenly, ``g/2`` on average
        (no more than the buffer ``B`` holds: a train that fills it sees ``B``
        from then on, ``B − B²/2g`` on average), where the fluid queue is
        empty; the rest of the RTT, as RED's idle
        rule counts it, sees none. On a full link the fluid queue already
        grows as the window does. Without this a slow start's average stayed
        at 0 until the link was full, and its window overshot (YeAH behind RED
        at 100 ms: 400 segments against the packet engine's 146)."""
        live = self.sending & ~self.queued & (self.growth > 0)
        if self.paced:
            live &= self.pacing == np.inf
        if not any_(live):
            return None
        tau = self.tau
        sent = self._growth_sent()
        h_last = self.h_last[self.scen]
        g = np.where(live & (h_last > 0), sent * tau / np.where(h_last > 0, h_last, 1.0), 0.0)
        w = self.rate * tau
        # what RED drops of the round (its share in the last step: this
        # step's depends on the average these trains move); marked, it stays
        dropping = self.red_p_last[self.scen]
        if self.ecn_on:
            dropping = np.where(self.ect & self.red_ecn[self.scen], 0.0, dropping)
        taken = (w + g) * dropping
        rise = np.maximum(np.minimum(g, (w + g) * (1.0 - 1.0 / self.nic_ratio)) - taken, 0.0)
        # the mean its arrivals see: rise/2, or where the train fills the
        # buffer B, its ramp's B/2 and then B for the rest (the rest dropped)
        B = self.B[self.scen]
        seen = np.where(rise <= B, 0.5 * rise, B - B * B / (2.0 * np.where(rise > 0, rise, 1.0)))
        return (np.bincount(self.scen, (w + g) * seen / tau, self.S),
                np.bincount(self.scen, g / tau, self.S))

    def _red_spaced(self, drop: np.ndarray, p: np.ndarray) -> np.ndarray | None:
        """RED's early drops as whole packets per flow (None if none), from the
        step's expected early drops ``drop`` (packets per flow) at the
        effective probability ``p`` (per scenario).

        Floyd & Jacobson (1993, §7) drop an arrival with probability
        ``p_b/(1 − count·p_b)``, ``count`` the arrivals since the last drop,
        so that at a steady ``p_b`` the gaps between drops are uniform on 1
        to ``1/p_b`` arrivals — regular, where a Poisson process's are
        geometric and clustered — with mean ``(1 + 1/p_b)/2``: the effective
        probability ``2 p_b/(1 + p_b)`` of :meth:`_red_probability`. The fluid
        keeps the count per scenario over the step's arrivals (those RED may
        drop, ``drop/p``) and places each next drop at ``1 + u(1/p_b − 1)``
        arrivals, ``u`` uniform, at the step's ``p_b``; the count restarts
        below ``min_th``. Each drop falls on the arriving packet: its flow is
        drawn by the step's arrivals. Eight Reno flows behind RED (20 Mbit/s,
        40 ms, seeds 1–5): the gaps between the flows' reductions have a
        coefficient of variation of 1.02 in the packet engine, 1.49 with
        Poisson drops, 1.00 with the count; utilisation 0.947 against 0.909
        and 0.962. Deviation: ECN-capable flows' marks are not counted (their
        echoes are drawn as before, :meth:`_echoes`)."""
        pb = self.red_pb
        np.copyto(self.red_count, 0.0, where=(pb <= 0.0) | (pb >= 1.0))  # (above max_th: 0)
        if not any_(drop > 0):  # nothing arrives that RED may drop: no count to keep
            return None
        pf = p[self.scen]
        arrivals = np.where(drop > 0, drop / np.where(drop > 0, pf, 1.0), 0.0)
        left = np.bincount(self.scen, arrivals, self.S)
        live = (left > 0) & (pb > 0) & (pb < 1.0)
        if not any_(live):
            return None
        inv = 1.0 / np.where(live, pb, 1.0)
        keys = self.stream_keys["red"]
        k = np.zeros(self.F)
        n = 0
        while True:  # one drop per scenario and pass, while its arrivals last
            need = np.maximum(1.0 + self.red_u * (inv - 1.0) - self.red_count, 0.0)
            hit = live & (left >= need)
            rest = live & ~hit
            self.red_count[rest] += left[rest]
            if not any_(hit):
                return k if any_(k) else None
            s = _indices(hit)
            left[s] -= need[s]
            self.red_count[s] = 0.0
            live = hit
            u = draws.stream_uniforms_unguarded(keys[s], self.steps[s], np.full(s.size, 2 * n))
            self.red_u[s] = draws.stream_uniforms_unguarded(keys[s], self.steps[s],
                                                            np.full(s.size, 2 * n + 1))
            np.add.at(k, self._red_owners(s, u, arrivals), 1.0)
            n += 1

    def _red_owners(self, s: np.ndarray, u: np.ndarray, arrivals: np.ndarray) -> np.ndarray:
        """The flow each of scenarios ``s``' drops falls on: drawn (uniforms
        ``u``) by the flows' ``arrivals``, each scenario's in its own order."""
        flows = self.red_flows[s]
        cum = np.cumsum(np.where(flows >= 0, arrivals[flows], 0.0), axis=1)
        j = np.sum(cum < (u * cum[:, -1])[:, None], axis=1)
        return flows[np.arange(s.size), j]

    def _aqm_signals(self, t, h, hf, physical):
        """The active queues' selections of this step's arrivals (each flow at
        its rate of the last step): marks for ECN-capable flows where the
        queue marks them, drops for the others. Returns the expected drops per
        flow, and of them those that are scheduled rather than random (None
        if all are random)."""
        S, scen = self.S, self.scen
        p, mark, growth, regular = np.zeros(S), np.zeros(S, bool), np.zeros(S, bool), \
            np.zeros(S, bool)
        for model, idx in self.aqms:
            p[idx], mark[idx] = model.signal(t[idx], h[idx], self.q[idx], self.arrived[idx])
            growth[idx] = model.drop_growth
            regular[idx] = not model.random
        sel = self.rate * hf * p[scen]
        marks = sel * (self.ect & mark[scen])
        self.marked_at_queue += marks
        # a flow a threshold drops loses what its window adds (a drop-tail queue there)
        sel = np.where(growth[scen], self.growth * (p[scen] > 0), sel)
        drop = np.minimum(np.where(self.ect & mark[scen], 0.0, sel), physical)
        # scheduled (regular) drops, where any scenario has them; the rest are random
        return drop, (np.where(regular[scen], drop, 0.0) if any_(regular) else None)

    def _echoes(self, live, t_new, tf, tau) -> None:
        """ECN echoes: the marks made at the queue by time ``t − RTT``, read
        from the cumulative marks at the ends of the last :data:`ECHO_SLOTS`
        steps (linearly between two), reach each flow now. A law that reads
        them itself (DCTCP) finds them in ``marked``; for the others, a whole
        echoed mark — at regular spacing behind a scheduled marker (step,
        CoDel), Poisson counts behind a random one (RED, PIE) — leads to the
        law's :meth:`~ccsim.algorithms.fluid.FluidLaw.on_ecn`, never in loss
        recovery, and not again for the marks made on the data outstanding at
        the last reduction (RFC 3168 §6.1.2: those made at the queue until it
        was delivered), with no growth for an RTT (Linux's CWR state)."""
        scen = self.scen
        slot = self.steps % ECHO_SLOTS
        self.echo_t[slot[live], _indices(live)] = t_new[live]
        lf = _indices(live[scen])
        self.echo_m[slot[scen[lf]], lf] = self.marked_at_queue[lf]
        self.marks = np.bincount(scen, self.marked_at_queue, self.S)
        when = (t_new[scen] - tau)
        times = self.echo_t[:, scen]
        before = times <= when
        lo = np.argmax(np.where(before, times, -np.inf), axis=0)
        hi = np.argmin(np.where(before, np.inf, times), axis=0)
        cols = np.arange(self.F)
        t_lo, t_hi = times[lo, cols], times[hi, cols]
        m_lo, m_hi = self.echo_m[lo, cols], self.echo_m[hi, cols]
        frac = np.where(before.any(axis=0) & ~before.all(axis=0) & (t_hi > t_lo),
                        (when - t_lo) / (t_hi - t_lo), 0.0)
        # nothing yet older than an RTT: the oldest slot (the start, or ECHO_SLOTS steps ago)
        echoed = np.where(before.any(axis=0), m_lo + frac * (m_hi - m_lo), m_hi)
        new = np.maximum(echoed - self.echo_seen, 0.0) * live[scen]
        np.maximum(self.echo_seen, echoed, out=self.echo_seen)
        np.copyto(self.marked, new)
        # RFC 3168 §6.1.2: not again for marks on data sent before the last
        # reduction — those made at the queue until that data was delivered
        drained = np.isinf(self.cwr_marks) & (self.delivered >= self.cwr_deliv)
        self.cwr_marks[drained] = self.marked_at_queue[drained]
        if not any_(new > 0):
            return
        random = self.red_ecn.copy()
        for model, idx in self.aqms:
            random[idx] = model.random
        k = np.zeros(self.F)
        rnd = random[scen]
        if any_(new * rnd):
            drawn, = self._draw((new * rnd, "marks"))
            if drawn is not None:
                k += drawn
        if any_(new * ~rnd):
            before_credit = np.floor(self.mark_credit)
            self.mark_credit += new * ~rnd
            k += np.floor(self.mark_credit) - before_credit
        # a loss not yet detected does not stop it: the sender does not know of it
        react = (k > 0) & ~self.echo_law & self.sending & (tf >= self.rec_until) \
            & (self.echo_seen >= self.cwr_marks)
        if any_(react):
            # the FlightSize the law sees is its whole window, as the packet
            # sender's when the echo arrives (the step's ACKs freed part of it
            # here); what stays in flight is unchanged: the reduction sends nothing
            kept = self.outstanding.copy()
            window = self._window()
            np.copyto(self.outstanding, np.maximum(self.outstanding, window), where=react)
            for g in self._groups_in(react):
                g.call("on_ecn", react[g.lo:g.hi])
            np.copyto(self.outstanding, kept)
            if any_(~((self.cwnd >= self.floor) & (self.cwnd < np.inf))):
                self._bad_window(react, "on_ecn")
            self.cwr_until[react] = (tf + tau)[react]
            self.cwr_deliv[react] = (self.delivered + self.outstanding)[react]
            self.cwr_marks[react] = np.inf
            self.ecn_reductions[react] += 1
            self.h_f[react] = 0.0  # no growth in the reduction's RTT
