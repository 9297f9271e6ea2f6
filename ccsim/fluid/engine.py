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
  (:meth:`FluidEngine._paced_trains`); that queue adds to the RTTs.
* **Delayed ACKs** slow the ACK clock of a window that does not fill the
  link: pairs a packet time apart, an odd window's last segment held by the
  receiver's timer (:meth:`FluidEngine._held_acks`).
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
steps of up to ``max_step`` RTTs (:meth:`FluidEngine._long_steps`). Each
scenario's clock is its own: a step advances every live scenario by its own
step, so a scenario's result does not depend on its neighbours.

Flows of one algorithm share one fluid-law instance; parameters that differ
among them are arrays over the group's flows (:mod:`ccsim.fluid.params`).
The results of a batch are assembled at once, each result's tables built
when first read (:mod:`ccsim.fluid.results`).
"""

from __future__ import annotations

import dataclasses
import math
import time
from typing import Sequence

import numpy as np

from ..algorithms import get as get_algorithm
from ..algorithms.fluid import FlowArrays, FluidLaw, any_
from ..errors import CcsimError, ScenarioError, law_failure
from ..errors import packet_only as _packet_only
from ..recovery import get as get_recovery
from ..scenario import RED, DropTail, Scenario
from . import draws
from .fast import indices as _indices
from .hooks import HookLaw
from .events import Events
from .losses import LossRecovery
from .aqm import ECHO_SLOTS, ActiveQueues
from .bottleneck import Bottleneck
from .steps import StepRules
from .acks import AckClock, _ack_share
from .params import ParamView, split_names

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


def _refuse(sc: Scenario, i: int, stacks: Sequence) -> None:
    """Raise for what the fluid model cannot represent, naming it
    (``stacks``: each flow's resolved stack, ``sc.flow_stack(j)``)."""
    slowest = min(link.rate for link in sc.links)
    if sc.links[sc.bottleneck].rate > slowest:
        raise _packet_only(f"scenarios[{i}].bottleneck", sc.bottleneck,
                           "a slowest link",
                           "it queues only at the slowest link")
    if sc.rtt_granularity > 0:
        raise _packet_only(f"scenarios[{i}].rtt_granularity", sc.rtt_granularity,
                           "0 (exact)",
                           "it has no RTT samples to tick")
    if sc.routed:
        j = next(j for j, f in enumerate(sc.flows) if f.route is not None
                 and f.route != (0, len(sc.links) - 1))
        raise _packet_only(f"scenarios[{i}].flows[{j}].route", sc.flows[j].route,
                           "None (the whole path)",
                           "it models one shared bottleneck")
    if sc.two_way:
        j = next(j for j, f in enumerate(sc.flows) if f.reverse)
        raise ScenarioError(f"scenarios[{i}].flows[{j}].reverse", True,
                            "False (left to right) in the fluid engine",
                            "it models one direction's bottleneck with ACKs uncongested; "
                            "use mode='packet' for two-way traffic")
    for j, flow in enumerate(sc.flows):
        if flow.source is not None:
            raise _packet_only(f"scenarios[{i}].flows[{j}].source", dict(flow.source),
                               "None (a TCP flow)",
                               "UDP sources (ccsim.CBR, ccsim.OnOff) are not modelled "
                               "there")
        if flow.access_buffer is not None:
            raise _packet_only(f"scenarios[{i}].flows[{j}].access_buffer", flow.access_buffer,
                               "None (an unbounded host queue)",
                               "a full host queue's local congestion signal is not "
                               "modelled there")
        if flow.access_jitter:
            raise _packet_only(f"scenarios[{i}].flows[{j}].access_jitter", flow.access_jitter,
                               "0",
                               "it has no packets to delay one by one")
        if flow.overhead:
            raise _packet_only(f"scenarios[{i}].flows[{j}].overhead", flow.overhead,
                               "0",
                               "it has no packets to space out")
    if sc.tail_loss_probe:  # given: the stacks' probes are left out (docs/engine.md)
        raise _packet_only(f"scenarios[{i}].tail_loss_probe", sc.tail_loss_probe,
                           "False",
                           "it has no tail of segments to probe")
    if sc.handshake:  # given: the stacks' handshakes are left out (docs/engine.md)
        raise _packet_only(f"scenarios[{i}].handshake", sc.handshake,
                           "False",
                           "it starts each flow's window at its start")
    for k, link in enumerate(sc.links):
        if link.jitter:
            raise _packet_only(f"scenarios[{i}].links[{k}].jitter", link.jitter,
                               "0",
                               "it has no packets to delay one by one")
        if link.schedule is not None:
            if k != sc.bottleneck:
                raise _packet_only(f"scenarios[{i}].links[{k}].rate", link.schedule,
                                   "a fixed rate off the bottleneck",
                                   "it models one bottleneck")
            if not min(link.schedule.rates) > 0.0:
                raise ScenarioError(f"scenarios[{i}].links[{k}].rate", link.schedule,
                                    "a schedule whose rates are all > 0 in the fluid engine",
                                    "a link that is down has no fluid queue to drain; "
                                    "use mode='packet'")
            if type(link.queue) is not DropTail:
                raise ScenarioError(f"scenarios[{i}].links[{k}].queue", link.queue,
                                    "'droptail' on a link whose rate changes, in the fluid "
                                    "engine", "its AQM models take a fixed rate; "
                                    "use mode='packet'")
        q = link.queue
        if not type(q).fluid:
            raise ScenarioError(f"scenarios[{i}].links[{k}].queue", q,
                                "a queue the fluid engine models: 'droptail', 'red', "
                                "'codel', 'pie' or 'step'",
                                f"it has no model of {type(q).__name__} ({q.kind!r}); "
                                "use mode='packet'")
    for j, flow in enumerate(sc.flows):
        law = get_algorithm(flow.algorithm)
        if law.own_ecn_response and law.__dict__.get("fluid") is None:
            raise ScenarioError(f"scenarios[{i}].flows[{j}].algorithm", flow.algorithm,
                                "a law with a fluid law when it reacts to marks itself",
                                "its per-ACK Accurate ECN reaction has no fluid form "
                                "through the hooks; use mode='packet'")
        if flow.drop_segments:
            raise _packet_only(f"scenarios[{i}].flows[{j}].drop_segments", flow.drop_segments,
                               "empty",
                               "it has no segments to drop")


class _Group:
    """Flows of one window law: a contiguous slice, one fluid-law instance.
    ``view``: the parameters as arrays over the slice (None when its flows
    share one parameter set)."""

    def __init__(self, law: FluidLaw, lo: int, hi: int, name: str,
                 view: ParamView | None = None) -> None:
        self.law, self.lo, self.hi, self.name, self.view = law, lo, hi, name, view
        self.f = FlowArrays()
        self.alive = True  # some scenario of the group's flows still runs

    def call(self, method: str, m: np.ndarray, *args) -> None:
        """``law.method(f, m, *args)`` with the parameters of the flows in ``m``."""
        law = self.law
        if self.view is None:
            getattr(law, method)(self.f, m, *args)
            return
        law.cc = self.view.masked(m)
        try:
            getattr(law, method)(self.f, m, *args)
        finally:
            law.cc = self.view


class FluidEngine(AckClock, StepRules, Bottleneck, ActiveQueues, LossRecovery, Events):
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

    # -- setup -------------------------------------------------------------------
    def _setup(self) -> None:
        scs = self.scenarios
        S = len(scs)
        # one window-law instance per algorithm and parameter set; flows of one
        # algorithm share a group (and a fluid law) unless their parameters
        # differ in ways the law cannot take as arrays (see .params)
        instances: dict[tuple[str, str], object] = {}
        # each flow with the law's parameters its stack gives it
        stacks = self._stacks
        law_flows = [[f if f.params == st.params else dataclasses.replace(f, params=st.params)
                      for f, st in zip(sc.flows, row)] for sc, row in zip(scs, stacks)]
        self.law_flows = law_flows
        for flows in law_flows:
            for flow in flows:
                pkey = (flow.algorithm, repr(flow.params))
                if pkey not in instances:
                    instances[pkey] = flow.make_algorithm()
        signature: dict[tuple[str, str], str] = {}
        by_alg: dict[str, list[tuple[str, str]]] = {}
        for pkey in instances:
            by_alg.setdefault(pkey[0], []).append(pkey)
        for alg, pkeys in by_alg.items():
            law_cls = vars(get_algorithm(alg)).get("fluid")
            if law_cls is None:  # the hooks route: one group per parameter set
                for pkey in pkeys:
                    signature[pkey] = pkey[1]
                continue
            split = split_names([instances[k] for k in pkeys], law_cls.scalar_params)
            for pkey in pkeys:
                own = vars(instances[pkey])
                signature[pkey] = repr([(n, own.get(n)) for n in split])
        entries = []  # (group key, scenario, flow index, parameter set)
        for s in range(len(scs)):
            for j, flow in enumerate(law_flows[s]):
                pkey = (flow.algorithm, repr(flow.params))
                entries.append(((flow.algorithm, signature[pkey]), s, j, pkey))
        entries.sort(key=lambda e: (e[0], e[1], e[2]))
        F = len(entries)
        self.S, self.F = S, F
        self.scen = np.array([e[1] for e in entries], dtype=np.int64)
        self.jidx = np.array([e[2] for e in entries], dtype=np.int64)
        # each scenario's flows in their own order (one sort, not a scan per scenario)
        by_scen = np.lexsort((self.jidx, self.scen))
        self.order = np.split(by_scen, np.cumsum(np.bincount(self.scen, minlength=S))[:-1])

        def per_flow(fn, dtype=float):
            return np.array([fn(scs[e[1]], e[2]) for e in entries], dtype=dtype)

        # propagation, and the hosts' NICs: a NIC at least as fast as every
        # link (the scenario's check) only delays each packet by its packet time,
        # once at the sender and once at the receiver (the fluid has no bursts);
        # and each link's own packet time: a link stores a packet whole before
        # it forwards it, so even an empty queue delays a data packet by its
        # transmission at every link, the bottleneck's 1/C included (ACKs carry
        # no data: none). Pipe and buffer then hold C·d + 1 + B, the packet in
        # service beside the B waiting, as a packet-level queue does. And the
        # receiving delay (Scenario.ack_wait): uniform up to its bound, never
        # before the segment before, which leaves the bottleneck at least a
        # packet time earlier: half the bound on average (exactly so for the
        # default bound, one packet time at the bottleneck)
        self.d = per_flow(lambda sc, j: sc.flow_rtt(j) + (
            0.0 if sc.flows[j].access_rate is None
            else 2.0 * sc.packet_size * 8.0 / sc.flows[j].access_rate)
            + sum(sc.packet_size * 8.0 / link.rate for link in sc.links)
            + 0.5 * sc.ack_wait)
        self.start = per_flow(lambda sc, j: sc.flow_start(j))  # start jitter included
        self.stop = per_flow(lambda sc, j: sc.flows[j].stop if sc.flows[j].stop is not None
                             else math.inf)
        self.size = per_flow(lambda sc, j: sc.flows[j].size / sc.mss
                             if sc.flows[j].size is not None else math.inf)
        self.iw = np.array([stacks[e[1]][e[2]].initial_window for e in entries], float)
        self.rwnd = per_flow(lambda sc, j: math.floor(sc.rwnd / sc.mss) if sc.rwnd else math.inf)
        classes = [get_algorithm(scs[e[1]].flows[e[2]].algorithm) for e in entries]
        self.loss_window = np.array([c.loss_window for c in classes], float)
        self.min_cwnd = np.array([c.min_cwnd for c in classes], float)
        recs = [get_recovery(stacks[e[1]][e[2]].recovery) for e in entries]
        # RFC 3042 limited transmit: two more segments out to raise duplicate ACKs
        self.dupthresh = np.array([
            max(r.dupthresh - (2 if stacks[e[1]][e[2]].limited_transmit else 0), 1)
            for r, e in zip(recs, entries)], float)
        # the duplicate ACKs that announce a loss, limited transmit or not: a
        # loss on the way is found that many segments after its own ACK was due
        self.dup_acks = np.array([float(r.dupthresh) for r in recs])
        # RACK (RFC 8985 §6.2) finds a lost retransmission once data sent after
        # it is delivered, so it is resent within the recovery, not by the timer
        self.rack = np.array([r.detector is not None and r.detector.__name__ == "Rack"
                              for r in recs])
        # RFC 8985 §7: a tail loss probe sends that later data when the window has none
        self.tlp = np.array([bool(stacks[e[1]][e[2]].tail_loss_probe) and r.uses_sack
                             for r, e in zip(recs, entries)])
        self.multi_halve = np.array([r.fluid_multiple_loss == "halve_each" for r in recs])
        self.multi_rtts = np.array([r.fluid_multiple_loss == "rtt_each" for r in recs])
        self.restart_lw = np.array([r.fluid_restart == "loss_window" for r in recs])
        # without SACK a timeout goes back N: the receiver's data past the holes
        # comes back in one cumulative ACK (:meth:`_go_back`)
        self.go_back = np.array([not r.uses_sack for r in recs])
        # one reduction per window of data (Scenario.reduction_window "all",
        # Linux's tcp_enter_loss): a timeout ending a fast recovery keeps the
        # recovery's ssthresh, and the law hears of no new loss
        self.keep_ssthresh = np.array([stacks[e[1]][e[2]].reduction_window == "all"
                                       for e in entries])
        self.mss = per_flow(lambda sc, j: sc.mss)
        # a law that counts ACKs, not segments (``ack_counting``), behind a receiver
        # that acknowledges two segments per ACK keeps half the growth it computes
        # per segment, in the phase where it counts ACKs
        flow_stacks = [stacks[e[1]][e[2]] for e in entries]
        self.ack_share_ss = np.array([_ack_share(st, "slow-start") for st in flow_stacks])
        self.ack_share_ca = np.array([_ack_share(st, "congestion-avoidance")
                                      for st in flow_stacks])
        self.ack_counted = (self.ack_share_ss < 1.0) | (self.ack_share_ca < 1.0)
        self.counts_acks = bool(self.ack_counted.any())
        # bursts at the queue (:meth:`_burst_drops`): segments each ACK releases
        # (two behind delayed ACKs), and how much faster than the bottleneck
        # the sender's NIC puts a burst on the wire (inf: no NIC)
        self.ack_segs = np.array([2.0 if st.delayed_ack else 1.0 for st in flow_stacks])
        self.delack_timeout = np.array([st.delayed_ack_timeout if st.delayed_ack else 0.0
                                        for st in flow_stacks])
        self.delack = bool(any_(self.ack_segs > 1.0))
        self.hold = np.ones(F)  # each flow's ACK-clock rate under delayed ACKs (_held_acks)
        self.ack_clocked = np.ones(F, bool)  # not paced: grows as its ACKs come (set below)
        # Linux's quick-ACK mode: the receiver's next ACKs of new data go at once
        self.quick_on = np.array([bool(st.quick_ack and st.delayed_ack) for st in flow_stacks])
        self.quick_left = np.zeros(F)
        self.nic_ratio = per_flow(lambda sc, j: math.inf if sc.flows[j].access_rate is None
                                  else sc.flows[j].access_rate
                                  / sc.links[sc.bottleneck].rate)
        self.no_nic = not any_(np.isfinite(self.nic_ratio))  # every burst at once
        # per scenario: the bound of the receiving delay (s), whose mean the
        # base RTT holds and whose spread brings a burst early (_burst_drops)
        self.ack_wait = np.array([sc.ack_wait for sc in scs])
        self.ack_wait_f = self.ack_wait[self.scen]  # the same, per flow (what laws read)
        self.fresh = np.zeros(F, bool)         # opened this step: its initial window is a burst
        self.restart_burst = np.zeros(F)       # segments a go-back-N restart sends at once

        # per scenario: the bottleneck is the slowest link; the rest adds delay and loss
        links = [sc.links[sc.bottleneck] for sc in scs]  # a slowest link (checked)
        self.C = np.array([l.rate / (8.0 * sc.packet_size) for sc, l in zip(scs, links)])
        # bottlenecks whose rate changes: (scenario, schedule, packet bits), C set at each step
        self.schedules = [(s, l.schedule, 8.0 * sc.packet_size)
                          for s, (sc, l) in enumerate(zip(scs, links)) if l.schedule is not None]
        for s, schedule, bits in self.schedules:
            self.C[s] = schedule.rate_at(0.0) / bits
        self.B = np.array([float(l.queue.packets(sc.packet_size)) for sc, l in zip(scs, links)])
        self.p_loss = np.array([1.0 - math.prod(1.0 - l.loss for l in sc.links) for sc in scs])
        red = [l.queue if isinstance(l.queue, RED) else None for l in links]
        self.is_red = np.array([r is not None for r in red])
        self.red_min = np.array([r.min_th if r else 0.0 for r in red])
        self.red_max = np.array([r.max_th if r else 1.0 for r in red])
        self.red_p = np.array([r.max_p if r else 0.0 for r in red])
        self.red_w = np.array([r.weight if r else 0.0 for r in red])
        self.red_gentle = np.array([bool(r and r.gentle) for r in red])
        self.red_ecn = np.array([bool(r and r.ecn) for r in red])
        # active queues with a fluid model of their own (CoDel, PIE, step marking)
        by_model: dict[type, list[int]] = {}
        for s, l in enumerate(links):
            model = type(l.queue).fluid
            if isinstance(model, type):
                by_model.setdefault(model, []).append(s)
        self.aqms = [(model([links[s].queue for s in idx], self.C[idx]), np.array(idx))
                     for model, idx in by_model.items()]
        # drop-tail bottlenecks: a drop there takes a burst's tail, and the rest
        # of its flow's round gets through (_next_round)
        self.plain_tail = ~self.is_red
        for _, idx in self.aqms:
            self.plain_tail[idx] = False
        self.ect = np.array([scs[e[1]].flows[e[2]].ecn for e in entries], bool)
        self.duration = np.array([sc.duration for sc in scs])
        self.dt = np.array([sc.sample_interval for sc in scs])
        self.n_bins = np.array([int(math.ceil(sc.duration / sc.sample_interval - 1e-9))
                                for sc in scs], dtype=np.int64)
        self.key = np.array([draws.scenario_key(sc.seed) for sc in scs], dtype=np.uint64)
        self.stream_keys = {name: draws.stream_key(self.key, k)
                            for name, k in draws.STREAMS.items()}
        # the stacks' timers are the same for every flow of a scenario
        self.min_rto = np.array([row[0].min_rto for row in stacks])
        self.max_rto = np.array([sc.max_rto for sc in scs])
        self.initial_rto = np.array([row[0].initial_rto for row in stacks])
        # the flows scenario by scenario, and where each scenario's begin
        # (every scenario has a flow: Scenario requires one)
        self.by_scen = np.concatenate(self.order)
        self.scen_first = np.cumsum([0] + [len(o) for o in self.order[:-1]])
        # ... and as a table of S columns (padded with index F: an extra entry
        # that holds +inf), where that costs at most four times the flows:
        # its column minima take a few microseconds, reduceat's per-segment
        # cost about 50 µs on a batch of a thousand scenarios
        widest = max(len(o) for o in self.order)
        self.scen_table = None
        if S * widest <= 4 * F:
            table = np.full((widest, S), F, dtype=np.int64)  # a column per scenario
            for s_, o in enumerate(self.order):
                table[:len(o), s_] = o
            self.scen_table = table
            self.pad = np.full(F + 1, np.inf)
        self.d_min = np.full(S, np.inf)
        np.minimum.at(self.d_min, self.scen, self.d)
        self.d_max = np.zeros(S)
        np.maximum.at(self.d_max, self.scen, self.d)
        # the interval in which every flow is active: from the last start to the first end
        self.t0 = np.full(S, 0.0)
        np.maximum.at(self.t0, self.scen, self.start)
        self.t1 = self.duration.copy()
        np.minimum.at(self.t1, self.scen, self.stop)

        # -- state (flows) ----------------------------------------------------------
        self.cwnd, self.ssthresh = np.zeros(F), np.full(F, np.inf)  # 0: not open yet
        self.pacing = np.full(F, np.inf)
        self.min_rtt = np.full(F, np.inf)
        self.srtt, self.rttvar = self.d.copy(), self.d / 2.0  # until the first ACKs
        self.started = np.zeros(F, bool)
        self.done = np.zeros(F, bool)
        self.pending = np.zeros(F, bool)       # a loss happened, not yet detected
        self.freeze_until = np.full(F, np.inf)  # no growth before then while pending
        self.t_detect = np.full(F, np.inf)     # when it will be (s)
        self.lost = np.zeros(F)                # losses in the window being detected
        self.found_lost = np.zeros(F)          # segments found lost since the start (cumulative)
        self.loss_flight = np.zeros(F)         # most in flight as a pending loss happened
        self.rec_until = np.zeros(F)           # recovery lasts until (s)
        self.rto_until = np.full(F, np.inf)    # silent until the timer fires (s)
        self.rec_timeout = np.full(F, np.inf)  # a recovery ends in a timeout then (s)
        self.resent = np.zeros(F)              # segments resent by the current recovery
        self.rec_old = np.zeros(F, bool)       # in recovery, nothing new sent since it began
        self.rec_point = np.full(F, -np.inf)   # data leaving the link before then (s) was
        #                                        sent before the recovery began
        self.rec_old_any = False
        self.p_lost = np.zeros(F)              # share of its data lost lately (~ RTT/2)
        self.p_lost_on = False                 # some share is not 0
        self.rto_lost = np.zeros(F)            # losses the timeout will repair
        self.rto_flight = np.zeros(F)          # FlightSize when it was set (segments)
        self.loss_until = np.zeros(F)          # the loss phase after a timeout lasts until
        #                                        ``delivered`` reaches this (segments)
        self.jump_at = np.full(F, np.inf)      # a go-back-N restart passes its holes then (s)
        self.jump_held = np.zeros(F)           # segments the receiver holds past them
        self.nr_holes = np.zeros(F)            # holes a NewReno recovery began with
        self.nr_start = np.zeros(F)            # ... when (s), one repaired per RTT of
        self.nr_tau = np.ones(F)               # ... this (s)
        self.nr_any = False
        self.backoff = np.zeros(F)
        self.delivered = np.zeros(F)
        self.retransmits = np.zeros(F)
        self.timeouts = np.zeros(F)
        self.recoveries = np.zeros(F)
        # (time, flow index in the batch, event) of recoveries and timeouts, kept
        # with the traces (they are plot material, not figures of the summary)
        self.loss_events: list[tuple[np.ndarray, np.ndarray, str]] = []
        self.rtt_sum, self.ack_sum = np.zeros(F), np.zeros(F)
        self.end_time = np.full(F, np.nan)
        self.done_at = np.full(F, np.nan)
        self.D_t0, self.D_t1 = np.zeros(F), np.zeros(F)
        # per-step signals laws read (kept as arrays so that group views stay valid)
        self.outstanding = np.zeros(F)         # data sent, not yet ACKed (segments)
        self.queued = np.zeros(F, bool)        # the bottleneck held a queue in the step
        self.rtt_floor = np.zeros(F)           # the step's RTT without paced trains' queue
        self.growth = np.zeros(F)              # window growth in the last step (segments)
        self.ghost = np.zeros(F)               # of which lost and not yet resent (segments)
        self.owed = np.zeros(F)                # link losses not yet taken from departures
        # accumulated expected queue drops, from a random phase in [0, 1)
        self.drop_credit = draws.uniforms(self.key[self.scen], draws.STREAMS["drops"],
                                          np.zeros(F, np.int64), self.jidx)
        self.h_f, self.now_f = np.zeros(F), np.zeros(F)
        self.tau, self.rate = self.d.copy(), np.zeros(F)
        self.acked = np.zeros(F)
        # ECN (RFC 3168): marks made at the queue reach the sender one RTT later
        self.marked = np.zeros(F)              # echoes of the step (segments)
        self.marked_at_queue = np.zeros(F)     # cumulative marks made (segments)
        self.echo_seen = np.zeros(F)           # cumulative marks echoed so far (segments)
        self.mark_credit = draws.uniforms(self.key[self.scen], draws.STREAMS["marks"],
                                          np.zeros(F, np.int64), self.jidx)
        self.cwr_until = np.zeros(F)           # an ECN reduction: no growth until (s)
        self.cwr_deliv = np.zeros(F)           # ... and its data: delivered when this is
        self.cwr_marks = np.zeros(F)           # marks made until then (inf: not yet known)
        self.ecn_reductions = np.zeros(F)

        # -- state (scenarios) --------------------------------------------------------
        self.t = np.zeros(S)
        self.q = np.zeros(S)
        self.avg = np.zeros(S)                 # RED's average queue (packets)
        self.arrived = np.zeros(S)             # arrival rate of the last step (packets/s)
        self.steps = np.zeros(S, dtype=np.int64)
        self.dep = np.zeros(S)                 # packets through the bottleneck
        self.dep_t0, self.dep_t1 = np.zeros(S), np.zeros(S)
        self.sent = np.zeros(S)
        self.drops, self.losses = np.zeros(S), np.zeros(S)
        self.marks = np.zeros(S)               # CE marks made at the bottleneck (packets)

        # -- groups: one law instance per (algorithm, parameters) ------------------------
        self.groups: list[_Group] = []
        self.group_of = np.zeros(F, np.int64)  # each flow's group (an index into groups)
        self.cap_f = self.C[self.scen]  # per flow, the bottleneck's rate (segments/s)
        k = 0
        while k < F:
            key = entries[k][0]
            hi = k
            while hi < F and entries[hi][0] == key:
                hi += 1
            cls = classes[k]
            law_cls = vars(cls).get("fluid")
            pkeys = list(dict.fromkeys(e[3] for e in entries[k:hi]))
            cc = instances[pkeys[0]]
            view = None
            if len(pkeys) > 1:  # parameters that differ: arrays over the group's flows
                where = {p: n for n, p in enumerate(pkeys)}
                view = ParamView([instances[p] for p in pkeys],
                                 np.array([where[e[3]] for e in entries[k:hi]]))
            if law_cls is None:
                law = HookLaw(cc, [self.law_flows[e[1]][e[2]] for e in entries[k:hi]],
                              [scs[e[1]].packet_size * 8.0 for e in entries[k:hi]],
                              where=[(e[1], e[2]) for e in entries[k:hi]])
            else:
                law = law_cls(view if view is not None else cc)
            g = _Group(law, k, hi, cls.__name__, view)
            f = g.f
            for name in ("cwnd", "ssthresh", "pacing", "min_rtt", "srtt", "delivered", "mss",
                         "base_rtt", "rtt", "rate", "acked", "inflight", "marked", "h", "now",
                         "capacity", "scenario", "lost", "lost_inflight", "queued", "ack_segs",
                         "delack_timeout", "quick_left", "start", "rtt_floor", "ack_wait",
                         "loss_until"):
                source = {"base_rtt": self.d, "rtt": self.tau, "h": self.h_f, "now": self.now_f,
                          "ack_wait": self.ack_wait_f,
                          "inflight": self.outstanding, "capacity": self.cap_f,
                          "scenario": self.scen, "lost": self.found_lost,
                          "lost_inflight": self.loss_flight}.get(name, getattr(self, name, None))
                setattr(f, name, source[k:hi])
            for name, value in law.state.items():
                setattr(f, name, np.full(hi - k, float(value)))
            self.group_of[k:hi] = len(self.groups)
            self.groups.append(g)
            k = hi

        # a window far beyond what the path can hold is sent as the path allows:
        # at most ten times pipe and buffer in flight (and never past rwnd)
        self.path_cap = np.minimum(self.rwnd, 10.0 * (self.C * self.d_max + self.B)[self.scen])

        # -- what the loop may skip ---------------------------------------------------
        self.end_of_run = self.duration * (1 - 1e-12)
        self.shortest = self.min_step * self.duration
        self.paced = any(g.law.paces for g in self.groups)
        self.by_scen = np.argsort(self.scen, kind="stable")  # flows grouped by scenario
        for g in self.groups:
            self.ack_clocked[g.lo:g.hi] = not g.law.paces
        # scenarios with a flow whose law paces (their overflow persists)
        self.paced_s = None
        if self.paced:
            pacer = np.zeros(F, bool)
            for g in self.groups:
                pacer[g.lo:g.hi] = g.law.paces
            self.paced_s = np.bincount(self.scen, pacer, S) > 0
        # scenarios that may take long steps: every law has a closed form,
        # and neither RED nor random loss needs sampling within the step
        short_law = np.zeros(F, bool)
        round_law = np.zeros(F, bool)  # laws that decide once per round
        for g in self.groups:
            short_law[g.lo:g.hi] = not (g.law.long_steps or g.law.round_steps)
            round_law[g.lo:g.hi] = g.law.round_steps and not g.law.long_steps
        self.red = bool(any_(self.is_red))
        # what a long step may fill: the buffer (RED: up to its min_th)
        self.long_room = np.where(self.is_red, np.minimum(self.B, self.red_min), self.B)
        # marks are possible: an ECN-capable flow behind RED with ecn or a marking AQM
        marking = self.red_ecn.copy()
        for _, idx in self.aqms:
            marking[idx] = True
        by_rounds = np.bincount(self.scen, round_law, S) > 0
        self.long_ok = ((np.bincount(self.scen, short_law, S) == 0) & ~marking
                        & (self.max_step > self.step)
                        & ~(by_rounds & (self.is_red | (self.p_loss > 0))))
        # the longest step (RTTs): one round where a law decides once per round
        self.long_rtts = np.where(by_rounds, min(1.0, self.max_step), self.max_step)
        # scenarios that may hold at a fixed point: every open flow's law holds
        # at equilibrium (FluidLaw.holds; _settle), and nothing samples within a step
        hold_law = np.zeros(F, bool)
        for g in self.groups:
            hold_law[g.lo:g.hi] = g.law.holds and not g.law.paces
        aqm = np.zeros(S, bool)
        for _, idx in self.aqms:
            aqm[idx] = True
        self.hold_law = hold_law  # (a flow not yet started, or finished, holds nothing back)
        self.hold_ok = ((np.bincount(self.scen, hold_law, S) > 0) & ~self.is_red & ~aqm
                        & (self.p_loss == 0))
        for s, _, _ in self.schedules:  # a rate that changes moves any fixed point
            self.hold_ok[s] = False
        self.hold_live = bool(any_(self.hold_ok))
        self.settled = np.zeros(S, bool)       # at a fixed point after the last step
        self.red_p_last = np.zeros(S)          # RED's drop probability in the last step
        self.red_pb = np.zeros(S)              # RED's p_b in the step (before its count)
        # RED's count (Floyd & Jacobson 1993): arrivals since its last early drop,
        # and the uniform that places the next one (index -1: drawn before any step)
        self.red_count = np.zeros(S)
        self.red_u = draws.uniforms(self.key, draws.STREAMS["red"], np.zeros(S, np.int64),
                                    np.full(S, -1, np.int64))
        # each RED scenario's flows, in order, padded with -1 (where its drops fall)
        width = max([len(self.order[s]) for s in _indices(self.is_red)], default=0)
        self.red_flows = np.full((S, width), -1, np.int64)
        for s in _indices(self.is_red):
            self.red_flows[s, :len(self.order[s])] = self.order[s]
        self.h_last = np.ones(S)
        self.long_live = bool(any_(self.long_ok))  # some such scenario still runs
        self.ecn_on = bool(any_(self.ect & marking[self.scen]))
        self.echo_law = np.zeros(F, bool)      # flows whose law reads the echoes itself
        for g in self.groups:
            self.echo_law[g.lo:g.hi] = g.law.marks
        if self.ecn_on:  # cumulative marks at the ends of the last ECHO_SLOTS steps
            self.echo_t = np.zeros((ECHO_SLOTS, S))
            self.echo_m = np.zeros((ECHO_SLOTS, F))
        self.lossy = bool(any_(self.p_loss > 0))
        self.sized = bool(any_(np.isfinite(self.size)))
        self.uniform_s = self.d_max == self.d_min
        self.uniform = bool(self.uniform_s.all())
        self.t0_marked = self.t0 <= 0
        self.next_mark = np.where(self.t0_marked, self.t1, self.t0)
        self._update_flags()

        # -- traces: samples at k·dt (cumulative deliveries at the bin edges) ------------
        if self.traces:
            n = int(self.n_bins.max())
            self.next_k = np.zeros(S, dtype=np.int64)
            self.next_sample = np.zeros(S)
            self.tr_cwnd = np.full((F, n), np.nan)
            self.tr_ssthresh = np.full((F, n), np.nan)
            self.tr_rtt = np.full((F, n), np.nan)
            self.tr_delivered = np.zeros((F, n + 1))
            self.tr_queue = np.zeros((S, n))

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

    # -- events (rare): checked only when a flow's wake-up time has come ------------------
    def _groups_in(self, mask: np.ndarray) -> list[_Group]:
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

    # -- pieces of a step ---------------------------------------------------------------
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
