"""The fluid engine: a whole batch of scenarios as one array program.

Every flow of every scenario in the batch is one entry of flat numpy arrays
(ordered by window law, so that each law works on a contiguous slice); every
scenario is one entry of per-scenario arrays, and ``scen`` maps flows to
their scenario. One step of the loop below advances every scenario by its
own time step at once. Model (``docs/fluid.md`` says more, and where it is
wrong):

* **Sources.** A window-limited flow is ACK-clocked: it keeps its whole
  window ``min(cwnd, rwnd)`` in flight, in whole segments (``floor``),
  refilled as ACKs free room, and sends nothing while a reduction drains
  it; a paced flow keeps rate × RTT.
* **Bottleneck.** The queue ``q`` (packets) at the slowest link is the one
  the data physically in flight implies: where the flows' rates
  ``inflight / (base RTT + q/C)`` add up to the link rate ``C`` (Newton's
  method where base RTTs differ). Departures are shared by those rates.
  Other links add their propagation delay and their random loss. The base
  RTT is an empty path's: propagation, the packet's time at the NICs and at
  every link, half the receiving delay. Below full load the trains of
  window-limited paced flows still queue where they overlap
  (:mod:`ccsim.fluid.bottleneck`); that queue adds to the RTTs.
* **Delayed ACKs** slow the ACK clock of a window that does not fill the
  link: pairs a packet time apart, an odd window's last segment held by the
  receiver's timer (:mod:`ccsim.fluid.acks`).
* **Loss events.** In-flight data beyond pipe and buffer is dropped as it
  arrives, shared by the flows' arrival rates (slow start's back-to-back
  pairs counting twice) and dropped as whole packets when a
  flow's drop counter passes a whole number; RED's drop probability (from
  its average queue) and random link loss give Poisson counts drawn from the
  scenario's seeded counter-based generator (:mod:`ccsim.fluid.draws`).
* **Reaction.** A flow learns of its first loss one RTT after the lost
  segment was sent (a drop at the queue an RTT after it, a loss on the link
  among the departures ``dupthresh`` segments after it); losses in that
  RTT belong to the same window. It then reduces once (its law's
  :meth:`~ccsim.algorithms.fluid.FluidLaw.on_loss`), stays in recovery (no
  growth) for one RTT — one per lost segment for NewReno, one per further
  halving for Reno — or, where the packet engine would (fewer than
  ``dupthresh`` segments left to raise duplicate ACKs; losses Reno's halved
  windows cannot clock out), falls silent for a retransmission timeout
  (RFC 6298, with backoff) and restarts from the loss window; under RACK
  a lost retransmission is resent within the recovery instead. Data sent
  before a fast recovery began and lost belongs to it (RFC 6675's
  RecoveryPoint): repaired there, with no second reduction.
* **Active queues and ECN.** CoDel, PIE and step marking have fluid models
  of their own (:class:`~ccsim.queues.FluidQueue`, in each discipline's
  file) that select a fraction of each step's arrivals from the queue at its
  start, as RED does from its average: an ECN-capable flow's selected
  packets are marked where the queue marks (RFC 3168), the others' dropped.
  Marks reach the sender an RTT later (a ring of the last
  :data:`ECHO_SLOTS` steps' cumulative marks); a law that reads them itself
  (DCTCP) finds them in ``marked``, the others' ``on_ecn`` runs at most
  once per RTT, outside recovery, with no growth for that RTT.
* **Growth.** Between losses each law's
  :meth:`~ccsim.algorithms.fluid.FluidLaw.grow` advances its windows; in
  congestion avoidance not while a loss awaits detection.

The step of each scenario is a fraction ``step`` of the smallest current RTT
among its flows (it lengthens as queues fill) and, once none of its flows is
in slow start, never shorter than ``min_step`` of the scenario's duration.
Between loss events, where its laws have closed forms, a scenario takes long
steps of up to ``max_step`` RTTs (:mod:`ccsim.fluid.steps`). Each
scenario's clock is its own: a step advances every live scenario by its own
step, so a scenario's result does not depend on its neighbours.

Flows of one algorithm share one fluid-law instance; parameters that differ
among them are arrays over the group's flows (:mod:`ccsim.fluid.params`).
The results of a batch are assembled at once, each result's tables built
when first read (:mod:`ccsim.fluid.results`).

This module is the core: :class:`FluidEngine`'s ``run`` and ``_step``, whose
sequence is the model's table of contents, with the recording of traces and
the random draws. Each concern is a part of its own, a mixin
:class:`FluidEngine` inherits (their methods read and write the engine's
arrays; each module's docstring lists which):

* :mod:`ccsim.fluid.layout`: the batch as arrays, built in named parts;
* :mod:`ccsim.fluid.scope`: what the model refuses, with a clear error;
* :mod:`ccsim.fluid.events`: flows open and stop, timers fire, wake-ups;
* :mod:`ccsim.fluid.acks`: windows in flight, arrivals, delayed and counted ACKs;
* :mod:`ccsim.fluid.bottleneck`: the queue, paced trains, bursts, overflow;
* :mod:`ccsim.fluid.aqm`: RED, CoDel, PIE, step marking, ECN echoes;
* :mod:`ccsim.fluid.losses`: detection, recoveries, timeouts, go-back-N;
* :mod:`ccsim.fluid.steps`: long steps and fixed points.
"""

from __future__ import annotations

import time
from typing import Sequence

import numpy as np

from ..algorithms.fluid import any_
from ..errors import CcsimError, ScenarioError, law_failure
from ..scenario import Scenario
from . import draws
from .acks import AckClock
from .aqm import ActiveQueues
from .bottleneck import Bottleneck
from .events import Events
from .fast import indices as _indices
from .layout import Group, Layout
from .losses import LossRecovery
from .scope import refuse as _refuse
from .steps import StepRules

__all__ = ["FluidEngine", "FluidLawError", "STEP", "MIN_STEP", "MAX_STEP"]

STEP = 0.25
"""Default step as a fraction of the smallest current RTT of a scenario."""

MAX_STEP = 4.0
"""Default longest step (RTTs) between loss events: a scenario whose flows
are all in congestion avoidance with laws that have a closed form
(``FluidLaw.long_steps``), no loss on its way and no RED or random loss,
steps up to this many RTTs, and no further than half the time its windows'
growth needs to fill pipe and buffer, nor past its next event."""

MIN_STEP = 1.0 / 10_000
"""Default shortest step outside slow start, as a fraction of the scenario's
duration: about 10,000 steps per run at most, whatever the RTT (a 60-s run:
steps of 6 ms or more once no flow is in slow start)."""


class FluidLawError(CcsimError):
    """A fluid law (or a class's hooks, run by the fluid engine) left a
    window that is not a finite number at or above the law's floor."""


class FluidEngine(Layout, Events, AckClock, Bottleneck, ActiveQueues, LossRecovery, StepRules):
    """Integrates a batch of scenarios together.

    Args:
        scenarios: the batch.
        step: step as a fraction of each scenario's smallest current RTT.
        min_step: shortest step as a fraction of each scenario's duration.
        max_step: longest step (RTTs) of a scenario between loss events, when
            its laws integrate long steps exactly (``FluidLaw.long_steps``);
            ``max_step=step`` keeps every step at ``step``.
        traces: record the time series (cwnd, ssthresh, RTT, goodput, queue);
            without them a result's ``traces`` is empty and the batch needs
            memory for its summaries only.
    """

    def __init__(self, scenarios: Sequence[Scenario], *, step: float = STEP,
                 min_step: float = MIN_STEP, max_step: float = MAX_STEP,
                 traces: bool = True) -> None:
        if not (isinstance(step, (int, float)) and 0 < step <= 1):
            raise ScenarioError("step", step, "a fraction of the RTT in (0, 1]")
        if not (isinstance(min_step, (int, float)) and 0 < min_step <= 0.1):
            raise ScenarioError("min_step", min_step, "a fraction of the duration in (0, 0.1]")
        if not (isinstance(max_step, (int, float)) and step <= max_step <= 64):
            raise ScenarioError("max_step", max_step,
                                f"RTTs from step ({step!r}) to 64")
        # each flow's stack (its profile and knobs resolved), once
        self._stacks = [[sc.flow_stack(j) for j in range(len(sc.flows))] for sc in scenarios]
        for i, (sc, stacks) in enumerate(zip(scenarios, self._stacks)):
            _refuse(sc, i, stacks)
        self.scenarios = list(scenarios)
        self.step, self.min_step, self.max_step = float(step), float(min_step), float(max_step)
        self.traces = traces
        self._setup()

    # -- the loop ------------------------------------------------------------------
    def run(self, progress: bool = False) -> list:
        """Integrate every scenario to its duration; their results, in order.
        ``progress``: a bar over the longest duration, at the fraction done
        by the batch's slowest scenario."""
        wall = time.perf_counter()
        bar = None
        total = float(self.duration.max())
        if progress:
            from .._progress import progress_bar

            bar = progress_bar(total, f"fluid batch of {self.S}")
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            try:
                while self._step():
                    if bar is not None:
                        bar.update(float((self.t / self.duration).min()) * total - bar.n)
            except CcsimError:
                raise
            except Exception as exc:  # a law's own bug (hooks route): whose, where, when
                failure = law_failure(exc, self._hook_laws(), float(self.t.min()))
                if failure is None:
                    raise
                raise failure from exc
        if bar is not None:
            bar.update(total - bar.n)
            bar.close()
        wall = time.perf_counter() - wall
        from .results import assemble_batch

        return assemble_batch(self, wall / self.S)

    def _hook_laws(self) -> dict[int, tuple[str, str]]:
        """Every window law run through its hooks: ``id(law)`` → (algorithm,
        which flow of which scenario)."""
        out = {}
        for g in self.groups:
            for law, (i, j) in zip(getattr(g.law, "laws", ()), getattr(g.law, "where", ())):
                where = f"flow {j}" if self.S == 1 else f"scenario {i}, flow {j}"
                out[id(law)] = (law.name or type(law).__name__, where)
        return out

    def _step(self) -> bool:
        """Advance every live scenario by its own step; False once all are done."""
        scen, C = self.scen, self.C
        t = self.t
        live = t < self.end_of_run
        if not any_(live):
            return False
        for s, schedule, bits in self.schedules:  # the rate in force (piecewise constant)
            C[s] = schedule.rate_at(t[s]) / bits
        if self.schedules:
            np.take(C, scen, out=self.cap_f)
        # a fraction of the smallest current RTT, bounded below except in slow
        # start (which doubles per RTT), ending on the duration
        h = self.step * (self.d_min + self.q / C)
        in_ss = np.bincount(scen, self.sending & (self.cwnd < self.ssthresh), self.S)
        # in slow start a step ends on the scenario's next event (a loss
        # detected, a start): a window that grows by the link's rate must stop
        # growing when its sender learns of the loss, not a step later (a
        # quarter RTT of slow start is a quarter of the window in excess)
        if any_(in_ss):
            h = np.where(in_ss > 0, np.where(self.wake_s > t, np.minimum(h, self.wake_s - t), h),
                         np.maximum(h, self.shortest))
        else:
            h = np.maximum(h, self.shortest)
        if self.long_live:
            h = self._long_steps(h, in_ss)
        if self.hold_live and any_(self.settled):  # a fixed point: on to the next event
            h = np.where(self.settled & (in_ss == 0), np.maximum(h, self.wake_s - t), h)
        h = np.where(live, np.minimum(h, self.duration - t), 0.0)
        for s, schedule, _ in self.schedules:  # a step ends where the rate changes
            h[s] = min(h[s], schedule.next_change(t[s]) - t[s])
        hf, tf = h[scen], t[scen]
        # flows open or stop, timers fire, losses are detected (in live scenarios:
        # a finished one's pending wake-ups would call this at every step)
        if any_((t >= self.wake_s) & live):
            self._events(tf, h)

        # the bottleneck: the queue that the data physically in flight implies
        inflight = self.outstanding
        target = self._window()
        if self.rec_old_any:  # a recovery's window: until the flow sends new data
            ri = _indices(self.rec_old)
            keep = (target[ri] * self.sending[ri] <= inflight[ri]) & (tf[ri] < self.rec_until[ri])
            self.rec_old[ri] = keep
            self.rec_old_any = bool(any_(keep))
        np.maximum(inflight, target * self.sending, out=inflight)
        red_in = self._red_arrivals(hf) if self.red else None
        red_p = self._red_probability(h, red_in) if self.red else None
        if red_p is not None:
            self.red_p_last = red_p
        physical = inflight - self.ghost
        if red_p is not None:  # RED drops (or marks) that share of the step's arrivals
            red_sel = red_in * red_p[scen]
            if self.ecn_on:
                red_mark = red_sel * (self.ect & self.red_ecn[scen])
                self.marked_at_queue += red_mark
                red_sel = red_sel - red_mark
            red_drop = np.minimum(red_sel, physical)
            self.ghost += red_drop
            physical -= red_drop
        aqm_drop = aqm_regular = None
        if self.aqms:  # CoDel, PIE, step marking: their signal from the queue so far
            aqm_drop, aqm_regular = self._aqm_signals(t, h, hf, physical)
            self.ghost += aqm_drop
            physical -= aqm_drop
        q_need = self._queue(physical)
        q_new = np.minimum(q_need, self.B)
        np.take(q_new > 0, scen, out=self.queued)
        tau = self.tau
        trains = self._paced_trains(physical) if self.paced else None
        np.add(self.d, (q_new / C)[scen], out=tau)
        np.copyto(self.rtt_floor, tau)
        if trains is not None:  # a link below full load still queues overlapping trains
            np.add(self.d, (np.maximum(q_new, trains) / C)[scen], out=tau)
        x = np.empty_like(physical)
        if self.delack:
            self._held_acks(q_need, tau, tf)
        A = self._arrivals(physical, tau, x)
        overflow = q_need - self.B
        t_lost = None  # when the step's first loss happened (default: mid-step)
        if any_(overflow > 0):  # what does not fit in pipe + buffer is dropped on arrival
            overflow = np.maximum(overflow, 0.0) * live
            dropped = np.minimum(self._overflow_shares(overflow, x, A), physical)
            self.ghost += dropped
            physical -= dropped
            A = self._arrivals(physical, tau, x)
            t_lost = self._overflow_time(overflow, t, hf)
        else:
            dropped = None
        burst = self._burst_drops(q_need, physical, x, A, hf, tau, dropped)
        if burst is not None:  # bursts that overflow the buffer the fluid queue leaves
            burst = burst * live[scen]
            self.ghost += burst
            physical -= burst
            dropped = burst if dropped is None else dropped + burst
            A = self._arrivals(physical, tau, x)
        overflowed = dropped  # overflow and bursts: sent with the buffer full
        self.arrived = A
        departed = np.where(q_need > 0, C, np.minimum(A, C)) * h   # packets through the link
        # each flow's part of them (none where nothing arrives: a lone flow's timer)
        dep_f = np.where(A > 0, departed / np.where(A > 0, A, 1.0), 0.0)[scen] * x
        # a flow that is not sending cannot deliver more than it has in flight
        np.minimum(dep_f, np.where(self.sending, np.inf, physical), out=dep_f)
        # the step's random counts, drawn in one call (each count depends on
        # its own mean and uniform alone): the link's losses, before the
        # deliveries, and PIE's drops, independent (RED's come at its count's
        # gaps: _red_spaced, below)
        requests = []
        if aqm_drop is not None:
            requests.append((aqm_drop if aqm_regular is None else aqm_drop - aqm_regular,
                             "drops"))
        k_loss = None
        if self.lossy:
            lost_on_link = dep_f * self.p_loss[scen]
            k_loss, *k_random = self._draw((lost_on_link, "losses"), *requests)
            deliv = self._link_losses(dep_f, k_loss)
        else:
            lost_on_link, deliv = None, dep_f
            k_random = self._draw(*requests) if requests else []
        inflight -= deliv                       # ACKed: out of flight (the lost stay)
        if self.delack:  # quick ACKs spent: one per segment
            np.maximum(self.quick_left - deliv, 0.0, out=self.quick_left)
        np.maximum(inflight, self.ghost, out=inflight)

        # the share of each flow's data lost lately, averaged over about half an
        # RTT: what a retransmission sent now meets. Random loss and RED drop
        # (and CoDel, PIE) drop whatever arrives; a drop-tail overflow counts only beside a paced
        # flow (which keeps its rate through others' recoveries): ACK-clocked
        # senders send less than they receive in recovery, so the overflow
        # that caused it drains while the retransmissions go out.
        # (the paced flows' overflow as a product, not added and taken away
        # again: a share that does not depend on the batch to the last bit)
        wasted = 0.0
        for part in (dropped * self.paced_s[scen] if self.paced_s is not None
                     and dropped is not None else None,
                     red_drop if red_p is not None else None, aqm_drop, lost_on_link):
            if part is not None:
                wasted = wasted + part
        if isinstance(wasted, float):  # nothing lost in the step
            inst = 0.0
        else:
            offered = x * hf + wasted
            inst = np.where(offered > 0, wasted / np.where(offered > 0, offered, 1.0), 0.0)
            self.p_lost_on = True
        if self.p_lost_on:  # (until some step loses data, every share stays 0)
            self.p_lost += np.minimum(2.0 * hf / tau, 1.0) * (inst - self.p_lost)

        for part in (dropped, red_drop if red_p is not None else None, aqm_drop):
            if part is not None:
                self.sent += np.bincount(scen, part, self.S)

        # losses: whole packets, and the detection they will lead to
        if aqm_regular is not None:  # scheduled AQM drops are regular, as overflow
            dropped = aqm_regular if dropped is None else dropped + aqm_regular
        red_early = None
        if red_p is not None:  # RED above max_th drops every arrival: regular, as overflow
            every = (self.red_pb >= 1.0)[scen]
            if any_(every):
                all_in = np.where(every, red_drop, 0.0)
                dropped = all_in if dropped is None else dropped + all_in
            red_early = self._red_spaced(np.where(every, 0.0, red_drop), red_p)
        k_drop = None if dropped is None else self._queue_drops(dropped)
        if red_early is not None:
            k_drop = red_early if k_drop is None else k_drop + red_early
        for k in k_random:  # the random queue drops drawn above
            if k is not None:
                k_drop = k if k_drop is None else k_drop + k
        if k_drop is not None or k_loss is not None:
            # in flight as the lost data went out (Linux's tx_in_flight): the window
            # before the step's deliveries, less what overflowed (sent once full)
            sent_into = self.outstanding + deliv
            if overflowed is not None:
                sent_into = sent_into - overflowed
            self._losses(k_drop, k_loss, tf, hf, tau, sent_into, t_lost, x)

        # deliveries, completions and the measurement marks
        self.delivered += deliv
        t_new = t + h
        np.copyto(t_new, self.duration, where=t_new >= self.end_of_run)  # land on the end
        if self.sized:
            self._complete(self.delivered - deliv, deliv, tf, hf)
        if any_((t_new >= self.next_mark) & live):
            self._marks(t, h, t_new, self.delivered - deliv, deliv, departed, live)
        self.dep += departed
        self.sent += A * h  # what the queue took; what it dropped was sent too

        # RTT estimators, as RFC 6298 over the step's ACKs (gain 1/8 and 1/4 per ACK)
        acks = deliv
        # the smallest sample of the step: the queue at its lower end
        low = self.d + (np.minimum(self.q, q_new) / C)[scen]
        np.minimum(self.min_rtt, np.where(acks > 0, low, np.inf), out=self.min_rtt)
        g = np.minimum(acks * 0.125, 1.0)
        gv = np.minimum(acks * 0.25, 1.0)
        self.rttvar += gv * (np.abs(self.srtt - tau) - self.rttvar)
        self.srtt += g * (tau - self.srtt)
        self.rtt_sum += tau * acks
        self.ack_sum += acks

        # growth: each law over its slice
        # growth: not in recovery; and in congestion avoidance not while a loss
        # is on its way to detection — the segment that overflowed was this
        # RTT's one more, and the next would come with the reduction (a loss
        # found a round late, _next_round: the window grows in that round)
        frozen = self.pending & (self.cwnd >= self.ssthresh) & (tf < self.freeze_until)
        np.multiply(hf, self.sending & (tf >= self.rec_until) & (tf >= self.cwr_until) & ~frozen,
                    out=self.h_f)
        np.copyto(self.now_f, tf)
        np.copyto(self.rate, x)
        np.copyto(self.acked, deliv)
        if self.ecn_on:  # the echoes of marks made one RTT ago
            self._echoes(live, t_new, tf, tau)
        grown = self.cwnd.copy()
        for g in self.groups:
            if g.alive:
                g.law.grow(g.f)
        cwnd = self.cwnd
        np.subtract(cwnd, grown, out=grown)
        if self.counts_acks:  # per-ACK laws keep their share of what they grew
            self._count_acks(cwnd, grown, self.h_f, tau)
        if self.delack:  # ... and grow as their ACKs come
            self._held_growth(cwnd, grown)
        np.maximum(grown, 0.0, out=self.growth)
        if any_(~((cwnd >= self.floor) & (cwnd < np.inf))):
            self._bad_window(self.started & ~self.done, "grow")
        if self.hold_live:
            self._settle(grown, tf, q_new, live)

        if self.traces and any_(t_new > self.next_sample):
            self._record(t, h, t_new, self.delivered - deliv, deliv, q_new)
        self.q = q_new
        np.copyto(self.h_last, h, where=live)
        self.t = np.where(live, t_new, t)
        self.steps += live
        if any_(self.t >= self.end_of_run) and any_(live & (self.t >= self.end_of_run)):
            finished = self.t >= self.end_of_run  # skip laws whose scenarios are all done
            for g in self.groups:
                g.alive = not finished[self.scen[g.lo:g.hi]].all()
            self.long_live = bool(any_(self.long_ok & ~finished))
        return True

    # -- over flows and scenarios -------------------------------------------------------
    def _groups_in(self, mask: np.ndarray) -> list[Group]:
        """The groups with a flow in ``mask``, in their order (one count over
        the groups, not a test of each group's slice)."""
        hit = np.bincount(self.group_of[mask], minlength=len(self.groups))
        return [self.groups[j] for j in hit.nonzero()[0].tolist()]

    def _mask(self, idx: np.ndarray) -> np.ndarray:
        """A mask over the batch's flows, true at the indices ``idx``."""
        m = np.zeros(self.F, bool)
        m[idx] = True
        return m

    def _scenario_min(self, values: np.ndarray) -> np.ndarray:
        """The least of each scenario's flows' ``values`` (one per scenario)."""
        if self.S == 1:  # one scenario: its flows' least value
            return np.minimum.reduce(values, keepdims=True)
        if self.scen_table is None:
            return np.minimum.reduceat(values[self.by_scen], self.scen_first)
        pad = self.pad
        pad[:-1] = values
        return pad[self.scen_table].min(axis=0)  # row by row: vectorised over S

    def _scenario_max(self, values: np.ndarray) -> np.ndarray:
        """The greatest of each scenario's flows' ``values`` (one per scenario)."""
        return -self._scenario_min(-values)

    def _marks(self, t, h, t_new, before, deliv, departed, live) -> None:
        """Cumulative deliveries at the start (t0) and end (t1) of the interval
        in which every flow is active, interpolated within the step."""
        scen = self.scen
        for first, mark, D, dep_mark in ((True, self.t0, self.D_t0, self.dep_t0),
                                         (False, self.t1, self.D_t1, self.dep_t1)):
            cross = (t < mark) & (t_new >= mark) & live
            if first:
                cross &= ~self.t0_marked
                self.t0_marked |= cross
            if any_(cross):
                frac = np.where(h > 0, (mark - t) / h, 0.0)
                cf = cross[scen]
                D[cf] = (before + deliv * frac[scen])[cf]
                dep_mark[cross] = (self.dep + departed * frac)[cross]
        self.next_mark = np.where(self.t0_marked, self.t1, self.t0)

    # -- draws, recording, errors -------------------------------------------------------
    def _draw(self, *requests: tuple[np.ndarray, str]) -> list[np.ndarray | None]:
        """Poisson counts per flow, one array for each ``(mean, stream)`` of
        ``requests`` (None where its means are all 0). Each count is a
        function of its own mean and uniform alone, so the requests share one
        hash and one count (fewer numpy calls per step, the same values)."""
        idx = [_indices(mean > 0) for mean, _ in requests]
        sizes = [i.size for i in idx]
        if not any(sizes):
            return [None] * len(requests)
        if len(requests) == 1:
            at, mean = idx[0], requests[0][0][idx[0]]
            keys = self.stream_keys[requests[0][1]][self.scen[at]]
        else:
            at = np.concatenate(idx)
            mean = np.concatenate([m[i] for (m, _), i in zip(requests, idx)])
            keys = np.concatenate([self.stream_keys[stream][self.scen[i]]
                                   for (_, stream), i in zip(requests, idx)])
        u = draws.stream_uniforms_unguarded(keys, self.steps[self.scen[at]],
                                            self.jidx[at])  # (run() ignores overflow)
        counts = draws.poisson(mean, u)
        out: list[np.ndarray | None] = []
        lo = 0
        for i, n in zip(idx, sizes):
            k = None
            if n:
                k = np.zeros(self.F)
                k[i] = counts[lo:lo + n]
            out.append(k)
            lo += n
        return out

    def _record(self, t, h, t_new, before, deliv, q_new) -> None:
        """Traces: the state after the step at every sample time ``k·dt`` it
        passed, and the cumulative deliveries there (interpolated within the
        step), whose differences are the goodput of each bin."""
        scen, dt = self.scen, self.dt
        while True:
            due = (self.next_sample < t_new) & (self.next_k < self.n_bins)
            if not any_(due):
                return
            ss = _indices(due)
            ff = _indices(due[scen])
            sf = scen[ff]
            kk = self.next_k[sf]
            on = (self.started & ~self.done)[ff]
            self.tr_cwnd[ff, kk] = np.where(on, self.cwnd[ff], np.nan)
            self.tr_ssthresh[ff, kk] = np.where(on, self.ssthresh[ff], np.nan)
            self.tr_rtt[ff, kk] = np.where(on, self.tau[ff], np.nan)
            frac = np.minimum(np.maximum((self.next_sample[sf] - t[sf]) / h[sf], 0.0), 1.0)
            self.tr_delivered[ff, kk] = before[ff] + deliv[ff] * frac
            self.tr_queue[ss, self.next_k[ss]] = q_new[ss]
            self.next_k[ss] += 1
            self.next_sample[ss] = self.next_k[ss] * dt[ss]

    def _bad_window(self, mask: np.ndarray, hook: str, what: str = "cwnd") -> None:
        arr = getattr(self, what)
        floor = np.where(self.started & ~self.done, self.min_cwnd, -np.inf)
        bad = _indices(mask & ~((arr >= floor) & (arr < np.inf)))
        if not bad.size:
            bad = _indices(~((arr >= floor) & (arr < np.inf)))
        i = int(bad[0])
        s, j = int(self.scen[i]), int(self.jidx[i])
        flow = self.scenarios[s].flows[j]
        raise FluidLawError(
            f"{flow.algorithm}'s fluid law left {what}={float(arr[i])!r} after {hook} "
            f"(scenarios[{s}].flows[{j}], t={self.t[s]:.6g} s); a window must be finite "
            f"and at least {float(self.min_cwnd[i])!r} segments")
