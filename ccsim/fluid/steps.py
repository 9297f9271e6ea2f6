"""The fluid engine's step sizes beyond the usual fraction of an RTT.

A scenario's step is a fraction ``step`` of its smallest current RTT
(:meth:`~ccsim.fluid.engine.FluidEngine._step`). Two rules let calm
scenarios go further, where that changes nothing the step could resolve:

* **Long steps** (:meth:`StepRules._long_steps`): between loss events, with
  no flow in slow start and laws that integrate long steps exactly
  (``FluidLaw.long_steps``; one round at a time for ``FluidLaw.round_steps``),
  up to ``max_step`` RTTs, bounded by the time the windows' growth needs to
  fill pipe and buffer, by the mean time between random or RED losses, and
  by the scenario's next event.
* **Fixed points** (:meth:`StepRules._settle`): a scenario whose open flows'
  laws hold at equilibrium (``FluidLaw.holds``) and whose windows and queue
  did not move in a step takes the same step again up to its next event.

Engine attributes read: ``long_ok``, ``long_rtts``, ``long_room``,
``hold_ok``, ``hold_law``, ``cwnd``, ``outstanding``, ``path_cap``,
``sending``, ``started``, ``done``, ``growth``, ``h_last``, ``tau``, ``q``,
``C``, ``d_min``, ``ghost``, ``p_loss``, ``red_p_last``, ``arrived``,
``wake_s``, ``rec_s``, ``rec_until``, ``cwr_until``, ``pending`` and the
NewReno rounds (``nr_any``, ``nr_start``, ``nr_tau``). Written:
``settled`` (and ``rec_s`` through :meth:`_recoveries_end`).
"""

from __future__ import annotations

import numpy as np

from ..algorithms.fluid import any_


class StepRules:
    """The step-size rules of :class:`~ccsim.fluid.engine.FluidEngine` (a mixin)."""

    def _long_steps(self, h: np.ndarray, in_ss: np.ndarray) -> np.ndarray:
        """Longer steps for calm scenarios: no flow in slow start, and laws
        that integrate long steps exactly. Up to ``max_step`` RTTs (one,
        ``long_rtts``, where a law decides once per round); half the
        time the windows' growth (at the last step's rate) needs to fill pipe
        and buffer (RED: to its ``min_th``), and while the queue is empty no
        more than 2 % window growth; a twentieth of the mean time between
        random or RED losses; and no further than the scenario's next event
        (a flow's start or stop, a loss detected, a recovery's or a timer's
        end): near a loss the step is the usual fraction of the RTT."""
        scen, S = self.scen, self.S
        calm = self.long_ok & (in_ss == 0)
        if not any_(calm):
            return h
        stale = self.rec_s <= self.t
        if any_(stale):  # a recovery has ended: the next one's end
            self._recoveries_end(stale)
        C = self.C
        # in flight as the step will begin: the whole window (a long step's
        # deliveries exceed what was in flight at its start)
        window = np.maximum(self.outstanding, np.minimum(self.cwnd, self.path_cap) * self.sending)
        headroom = self.long_room + C * self.d_min - np.bincount(scen, window - self.ghost, S)
        # growth at the last step's rate, and at least a segment per RTT per
        # flow (the step after a recovery saw none)
        active = self.started & ~self.done
        rate = np.maximum(np.bincount(scen, self.growth, S) / self.h_last,
                          np.bincount(scen, active / self.tau, S))  # segments/s
        rate = np.where(rate > 0, rate, np.inf)  # none open yet: their start is the limit
        t_full = headroom / rate
        # a link not yet full delivers at the windows' rate at the step's start:
        # let them grow by at most 2 % over a long step (1 % of its deliveries)
        idle = self.q <= 0
        if any_(idle):
            grown = 0.02 * np.bincount(scen, window, S) / rate
            t_full = np.where(idle, np.minimum(t_full, 2.0 * grown), t_full)
        # a random loss lands within the step, but its flow grows all of it:
        # a twentieth of the mean time between losses keeps that within 5 %
        if self.lossy or self.red:
            losses = (self.p_loss + self.red_p_last) * self.arrived  # expected per second
            t_loss = np.where(losses > 0, 0.1 / np.where(losses > 0, losses, 1.0), np.inf)
            t_full = np.minimum(t_full, t_loss)
        h_long = np.minimum(np.minimum(self.long_rtts * (self.d_min + self.q / C),
                                       0.5 * t_full),
                            np.minimum(self.wake_s, self.rec_s) - self.t)
        if self.nr_any:  # a NewReno recovery's window opens by a hole each RTT
            on, done = self._newreno_rounds()
            nxt = np.where(on, self.nr_start + (done + 1.0) * self.nr_tau, np.inf)
            h_long = np.minimum(h_long, self._scenario_min(nxt) - self.t)
        return np.where(calm, np.maximum(h, h_long), h)

    def _settle(self, moved: np.ndarray, tf: np.ndarray, q_new: np.ndarray,
                live: np.ndarray) -> None:
        """Mark the scenarios at a fixed point after this step: every open
        flow's law holds at equilibrium (``FluidLaw.holds``; flows not yet
        started or finished do not count, so a Vegas flow alone holds until
        another law's flow starts), no open flow's window moved
        (``moved``: the step's change), none is in recovery, waiting for its
        timer or about to detect a loss, and the queue did not move. The next
        step of such a scenario is the same step again, so it may run to the
        scenario's next event (a flow's start or stop, or the end)."""
        unsettled = (moved != 0) | self.pending | (self.rec_until > tf) | ~self.sending \
            | (self.cwr_until > tf) | ~self.hold_law
        open_ = self.started & ~self.done
        unsettled &= open_
        self.settled = (self.hold_ok & live & (q_new == self.q)
                        & (np.bincount(self.scen, unsettled, self.S) == 0)
                        & (np.bincount(self.scen, open_, self.S) > 0))
