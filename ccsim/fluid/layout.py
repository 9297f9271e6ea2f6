"""The fluid engine's layout: a batch of scenarios as flat arrays, built in parts.

Every flow of every scenario in the batch is one entry of flat numpy arrays,
ordered by window law so that each law works on a contiguous slice (a
:class:`Group`); every scenario is one entry of per-scenario arrays, and
``scen`` maps flows to their scenario. :meth:`Layout._setup` builds them in
named parts, in a fixed order: the flows and their groups, per-flow
constants (from each flow's resolved stack: its recovery, ACK and timer
rules), the bottleneck of each scenario (rate or schedule, buffer, random
loss, RED and the fluid AQM models), per-scenario constants, the state the
steps integrate, the laws' groups, the step rules (what the loop may skip),
and the traces. Random streams (:mod:`ccsim.fluid.draws`) are counter-based
and keyed by each scenario's seed, so a scenario's draws do not depend on
its batch.

Flows of one algorithm share one fluid-law instance; parameters that differ
among them are arrays over the group's flows (:mod:`ccsim.fluid.params`). A
class without its own fluid law runs through its hooks
(:mod:`ccsim.fluid.hooks`).

Engine attributes read: ``scenarios``, ``_stacks``, ``step``, ``min_step``,
``max_step``, ``traces``. Written: every array the other parts read.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from ..algorithms import get as get_algorithm
from ..algorithms.fluid import FlowArrays, FluidLaw, any_
from ..recovery import get as get_recovery
from ..scenario import RED
from . import draws
from .aqm import ECHO_SLOTS
from .fast import indices as _indices
from .hooks import HookLaw
from .params import ParamView, split_names


def _ack_share(stack, phase: str) -> float:
    """The share of a law's per-segment growth it keeps in ``phase``
    (``"slow-start"`` or ``"congestion-avoidance"``) under its flow's
    ``ack_counting``: 1, or one half where it counts ACKs and the receiver
    delays them (two segments per ACK). In slow start this grows a Reno window
    by ``√2`` per RTT where the per-ACK rule gives 1.5, a first-order
    approximation; in congestion avoidance it is exact for laws that add a
    fixed amount per ACK (Reno, Hybla, HighSpeed)."""
    per_ack = stack.ack_counting in ("acks", f"acks-in-{phase}")
    return 0.5 if per_ack and stack.delayed_ack else 1.0


class Group:
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


class Layout:
    """The layout of :class:`~ccsim.fluid.engine.FluidEngine`'s arrays (a mixin)."""

    def _setup(self) -> None:
        """Lay the batch out as arrays, part by part (the order of every array's
        creation and every random stream's use is the one the results rest on)."""
        entries, instances = self._setup_laws()
        classes = self._setup_flows(entries)
        self._setup_links()
        self._setup_scenarios(entries)
        self._setup_state()
        self._setup_groups(entries, classes, instances)
        # a window far beyond what the path can hold is sent as the path allows:
        # at most ten times pipe and buffer in flight (and never past rwnd)
        self.path_cap = np.minimum(self.rwnd, 10.0 * (self.C * self.d_max + self.B)[self.scen])
        self._setup_step_rules()
        self._setup_traces()

    def _setup_laws(self) -> tuple[list, dict]:
        """Flows and groups: each flow's law instance, the flat flow order (by group), scenario indices."""
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
        return entries, instances

    def _setup_flows(self, entries: list) -> list:
        """Per-flow constants: delays, starts and stops, windows, recovery rules, ACKs, NICs."""
        scs, stacks, F = self.scenarios, self._stacks, self.F
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
        return classes

    def _setup_links(self) -> None:
        """The bottleneck of each scenario: its rate (or schedule), buffer, random loss, RED and AQM models."""
        scs = self.scenarios
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

    def _setup_scenarios(self, entries: list) -> None:
        """Per-scenario constants: ECN flags, durations, seeds' keys, timers, flow tables, measured interval."""
        scs, stacks, S, F = self.scenarios, self._stacks, self.S, self.F
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

    def _setup_state(self) -> None:
        """The state the steps integrate, per flow and per scenario (loss, recovery and timer state included)."""
        S, F = self.S, self.F
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

    def _setup_groups(self, entries: list, classes: list, instances: dict) -> None:
        """One group per window law: its fluid law (or the hooks' route) and its views of the flow arrays."""
        scs, F = self.scenarios, self.F
        self.groups: list[Group] = []
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
            g = Group(law, k, hi, cls.__name__, view)
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

    def _setup_step_rules(self) -> None:
        """What the loop may skip: long steps, fixed points, RED's count, ECN echoes, the first wake-ups."""
        S, F = self.S, self.F
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
        # scenarios that may take long steps: every law has a closed form (or
        # decides once per round: steps of up to an RTT, and neither RED nor
        # random loss, whose drops land within a step), and no marks
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

    def _setup_traces(self) -> None:
        """Traces: samples at k·dt (cumulative deliveries at the bin edges)."""
        S, F = self.S, self.F
        if self.traces:
            n = int(self.n_bins.max())
            self.next_k = np.zeros(S, dtype=np.int64)
            self.next_sample = np.zeros(S)
            self.tr_cwnd = np.full((F, n), np.nan)
            self.tr_ssthresh = np.full((F, n), np.nan)
            self.tr_rtt = np.full((F, n), np.nan)
            self.tr_delivered = np.zeros((F, n + 1))
            self.tr_queue = np.zeros((S, n))
