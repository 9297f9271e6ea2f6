"""The fluid engine's rare events: flows open and stop, timers fire, losses are found.

Each flow has a wake-up time (``wake``: its start, its stop, its timer, the
end of its recovery, a go-back-N restart's cumulative ACK, its next loss
detection) and each scenario the least of its flows' (``wake_s``); a step
runs :meth:`Events._events` only where one has come, and only on the flows
that woke, which dispatches to the opening of a flow (its initial window,
RFC 6928 in Linux; Linux's quick-ACK mode) and to the loss machinery of
:mod:`ccsim.fluid.losses`. :meth:`Events._update_flags` then recomputes the
woken flows' flags (``sending``, ``floor``) and wake-up times;
:meth:`Events._complete` ends sized flows that delivered their last segment.

Engine attributes read: ``start``, ``stop``, ``size``, ``iw``,
``quick_on``, ``d``, ``min_cwnd``, ``loss_window``, ``rto_flight``,
``rto_lost``, ``t_detect``, ``pending``, ``delivered``, ``t0``,
``t0_marked``. Written: ``started``, ``done``, ``fresh``, ``end_time``,
``done_at``, ``t1``, ``next_mark``, the flags and wake-up times
(``sending``, ``floor``, ``wake``, ``wake_s``, ``rec_s``), a new flow's
state (``cwnd``, ``ssthresh``, ``pacing``, ``srtt``, ``rttvar``,
``quick_left``, its laws' state through ``start``), and on a timeout the
loss state (``outstanding``, ``ghost``, ``lost``, ``pending``,
``rto_until``, ``rec_until``, ``rec_point``, ...).
"""

from __future__ import annotations

import numpy as np

from ..algorithms.fluid import any_
from .acks import QUICK_ACKS
from .fast import indices as _indices


class Events:
    """The rare events of :class:`~ccsim.fluid.engine.FluidEngine` (a mixin)."""

    def _events(self, tf: np.ndarray, h: np.ndarray) -> None:
        # only live scenarios with a flow that woke, and only their flows (by
        # index): a batch of a thousand scenarios has some event at nearly
        # every step, in a few of its scenarios (a scenario that has reached
        # its end is not here, whatever its wake-up times)
        woke_s = (h > 0) & (self.t >= self.wake_s)
        wi = _indices(woke_s[self.scen])
        tw = tf[wi]
        started = self.started[wi]
        newly = ~started & (tw >= self.start[wi])
        if any_(newly):
            self._open(self._mask(wi[newly]))
            started = self.started[wi]
        done = self.done[wi]
        stopping = started & ~done & (tw >= self.stop[wi])
        if any_(stopping):
            si = wi[stopping]
            self.done[si] = True
            self.end_time[si] = self.stop[si]
            done = self.done[wi]
        active = started & ~done
        # a sending flow has its whole window out: that is its FlightSize
        window = self._window(wi)
        out = self.outstanding[wi]
        self.outstanding[wi] = np.where(active & ~np.isfinite(self.rto_until[wi]),
                                        np.maximum(out, window), out)
        # retransmission timers that fire now: a timeout reduction, the loss window
        fire = active & (tw >= self.rto_until[wi])
        if any_(fire):
            fire = self._mask(wi[fire])
            # FlightSize at the timeout: nothing was cumulatively ACKed past
            # the first hole, so it is what was out when the loss was detected
            self.outstanding[fire] = self.rto_flight[fire]
            self._loss(fire, "timeout")
            self._note(fire, tf, "timeout")
            self.cwnd[fire] = self.loss_window[fire]
            self._loss_phase(fire)
            self.retransmits[fire] += self.rto_lost[fire]
            self.outstanding[fire] = 0.0  # go back: what is still out is sent again,
            self.ghost[fire] = 0.0  # losses since the timeout included
            self.retransmits[fire] += self.lost[fire]
            self.lost[fire] = 0.0
            self.loss_flight[fire] = 0.0
            self.pending[fire] = False
            self.rto_until[fire] = np.inf
            self.rec_until[fire] = tf[fire]
            self.rec_point[fire] = -np.inf
            self._go_back(fire, tf)
            # the timer's silence (an RTO and more) exceeds the receiver's
            # quick-ACK gap (its RTT plus min_rto): quick ACKs again
            self.quick_left[fire] = QUICK_ACKS * self.quick_on[fire]
        jump = active & (tw >= self.jump_at[wi])
        if any_(jump):
            self._restart_burst(self._mask(wi[jump]))
        # recoveries that end now: were any of their retransmissions lost?
        ended = active & (self.resent[wi] > 0) & (tw >= self.rec_until[wi])
        if any_(ended):
            self._retransmissions_lost(self._mask(wi[ended]), tf)
        # recoveries that outlast the retransmission timer end in a timeout
        late = active & (tw >= self.rec_timeout[wi])
        if any_(late):
            self._recovery_timeout(self._mask(wi[late]), tf)
        # losses detected now (one RTT after the first drop of a window)
        due = self.pending[wi] & active & (tw >= self.t_detect[wi]) \
            & (tw >= self.rec_until[wi]) & ~np.isfinite(self.rto_until[wi])
        if any_(due):
            self._detect(self._mask(wi[due]), tf)
        self._update_flags(wi)

    def _open(self, newly: np.ndarray) -> None:
        self.started |= newly
        self.fresh |= newly
        self.cwnd[newly] = self.iw[newly]
        self.quick_left[newly] = QUICK_ACKS * self.quick_on[newly]
        self.srtt[newly], self.rttvar[newly] = self.d[newly], self.d[newly] / 2.0
        self.ssthresh[newly] = np.inf
        self.pacing[newly] = np.inf
        self.rec_until[newly] = 0.0
        self.rec_point[newly] = -np.inf
        self.rec_timeout[newly] = np.inf
        self.loss_until[newly] = 0.0
        self.jump_at[newly] = np.inf
        self.resent[newly] = 0.0
        for g in self._groups_in(newly):
            m = newly[g.lo:g.hi]
            for name, value in g.law.state.items():
                getattr(g.f, name)[m] = value
            g.call("start", m)

    def _complete(self, before, deliv, tf, hf) -> None:
        """Sized flows that delivered their last segment this step."""
        done = self.sending & (self.delivered >= self.size)
        if not any_(done):
            return
        frac = np.where(deliv > 0, (self.size - before) / deliv, 1.0)
        end = tf + hf * np.clip(frac, 0.0, 1.0)
        self.done_at[done] = end[done]
        self.end_time[done] = end[done]
        self.done |= done
        np.minimum.at(self.t1, self.scen[done], end[done])
        self.next_mark = np.where(self.t0_marked, self.t1, self.t0)
        self._update_flags()

    def _update_flags(self, i: np.ndarray | None = None) -> None:
        """Recompute the per-flow flags and wake-up times after events, of
        the flows ``i`` (indices; None: all), the only ones whose state the
        events changed; then every scenario's next event."""
        if i is None:
            i = slice(None)
            self.sending = np.zeros(self.F, bool)
            self.floor = np.zeros(self.F)
            self.wake = np.zeros(self.F)
        started = self.started[i]
        active = started & ~self.done[i]
        rto_until = self.rto_until[i]
        waiting = np.isfinite(rto_until)
        self.sending[i] = active & ~waiting
        self.floor[i] = np.where(active, self.min_cwnd[i], -np.inf)
        # (a flow waiting for its timer detects nothing: the timeout repairs it)
        rec_until = self.rec_until[i]
        detect = np.where(self.pending[i] & ~waiting,
                          np.maximum(self.t_detect[i], rec_until), np.inf)
        timed = np.minimum(np.minimum(self.stop[i], rto_until), self.rec_timeout[i])
        np.minimum(timed, self.jump_at[i], out=timed)
        np.minimum(timed, np.where(self.resent[i] > 0, rec_until, np.inf), out=timed)
        # a flow not yet open wakes at its start (it is not active)
        wake = np.where(active, timed, np.where(started, np.inf, self.start[i]))
        self.wake[i] = np.minimum(wake, detect, out=wake)
        self.wake_s = self._scenario_min(self.wake)  # each scenario's next event
        self._recoveries_end()

    def _recoveries_end(self, stale: np.ndarray | None = None) -> None:
        """Each scenario's next end of a recovery (s; inf if none is under
        way), of the scenarios in the mask ``stale`` (None: all)."""
        if stale is None:
            active = self.started & ~self.done
            self.rec_s = self._scenario_min(
                np.where(active & (self.rec_until > self.t[self.scen]), self.rec_until, np.inf))
            return
        i = _indices(stale[self.scen])
        s, until = self.scen[i], self.rec_until[i]
        on = self.started[i] & ~self.done[i] & (until > self.t[s])
        rec_s = self.rec_s.copy()
        rec_s[stale] = np.inf
        np.minimum.at(rec_s, s, np.where(on, until, np.inf))
        self.rec_s = rec_s
