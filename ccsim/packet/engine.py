"""The packet engine: a scenario's links, senders and receivers.

What needs an event is what a sender reacts to — an ACK's arrival, its
retransmission timer, a pacing release, a flow's start and stop — plus a
delayed-ACK timer and the trace sampler. They live on the engine's own heap
(:class:`~ccsim.packet.clock.Clock`), a tuple each, handled in time order
and, at one instant, in the order they were scheduled. SimPy is the outer
loop: processes added to :attr:`PacketEngine.env` run in turn with the
engine's events (each after the engine's events due before it).

A data packet needs no event: every link is a FIFO queue with a fixed
propagation delay, and every flow crosses the whole chain of links, so the
order in which packets reach each link (and each receiver) is the order in
which they reach the first one. When a packet enters the first link, its
passage through every queue and its arrival time at the receiver are
therefore already determined, and are computed there and then (exactly, not
approximately: each link sees its arrivals in time order). A sender-side
access delay, when a flow has one, is the only hop before the first link
and costs one event. The receiver's state is updated at the packet's
arrival time, which may lie ahead of the clock; everything it emits (ACKs)
is scheduled at its own time, so the senders see a causal world.

Two-way traffic (a flow with ``reverse=True``: data right to left over each
link's reverse side) takes the hop-by-hop path for data of both directions,
and every ACK becomes a packet of ``header`` bytes crossing the links of its
way back, one event per hop (:meth:`PacketEngine._ack_path`), queued FIFO
with the other direction's data, and dropped by a full queue.

Assumptions, stated once: one way, the reverse path is uncongested (an ACK
takes the propagation delay back, and its 40 bytes of serialisation are
neglected); two ways, ACKs are all ``header`` bytes (SACK option bytes
neglected), count as one packet against queue limits (which are in packets,
as ns-2's) and suffer no random link errors; every data packet is full-size
on the wire (``mss + header`` bytes).
"""

from __future__ import annotations

import dataclasses
import math
import random
import time
from collections import Counter, deque
from functools import partial
from typing import Callable

import numpy as np
import simpy

from .. import algorithms
from ..errors import CcsimError, ScenarioError, ScenarioTypeError, law_failure
from ..recovery import get as get_recovery
from ..metrics import integrate_bins
from ..queues.scheduler import ECT0, ECT1, NOT_ECT, Packet, Scheduler
from ..results import Result, add_link_trace, build
from ..scenario import Scenario
from .accecn import AccEcnReceiver, AccEcnResponse
from .clock import Clock
from .events import (EventLog, congestion_rows, drop_reason, events_table,
                     queue_drop_reason)
from .link import LinkState
from .fast_path import FastSender
from .receiver import Receiver
from .scheduled import ScheduledLink
from .tcp import Sender
from .udp import UdpReceiver, UdpSource


_OVERHEAD = 1  # labels the flows' overhead generators among the scenario seed's streams
_ACK_JITTER = 3  # and their ACK jitter's (2: the start jitter, ccsim.scenario)
_LINK_JITTER = 4  # and each link's jitter element's (Link.jitter)
_SOURCE = 6  # and a UDP source's on/off periods (5: ccsim.Arrivals' draws)
_NIC_JITTER = 7  # and each sender's NIC jitter's (Flow.access_jitter)


class PacketEngine:
    """Builds the run-time objects of one scenario and runs it.

    Attributes:
        env: the SimPy environment of the outer loop, for processes of one's
            own (the engine schedules none there; ``processes``: functions
            ``fn(env, net)`` started with the run, :mod:`ccsim.packet.processes`).
        clock: the engine's own event heap and the simulation time (s).
        links: run-time link states, in path order.
        senders, receivers: one per flow, in scenario order.
        times: sample times of the traces (s).
        cwnd, ssthresh, rtt: sampled per flow, arrays of shape
            ``(len(times), n_flows)`` (segments, segments, s).
        queue: the bottleneck's backlog at each sample time (packets; its
            forward side, left to right, ACKs of reverse flows included).
        two_way: ACKs cross the links as packets (a flow is reverse).
        reverse_links: each link's reverse side, in path order (two-way only).
        reverse_queue: the bottleneck's reverse backlog at each sample time
            (packets; two-way only, else ``None``).

    ``sender_class`` is the class of the flows' senders: :class:`FastSender`, or
    :class:`~ccsim.packet.tcp.Sender` (the readable reference it must agree
    with bit for bit), or a subclass of either that changes a part.
    """

    nic_shortcut = True
    """A packet leaving a host's NIC (:attr:`Flow.access_rate`) is handed to
    the first link at once, with its future arrival time, when that time is
    before every event on the heap (nothing can reach the link first);
    ``False``: always through an event, the slow twin the shortcut is tested
    against bit for bit."""

    def __init__(self, scenario: Scenario, events: bool = False,
                 hop_by_hop: bool | None = None, two_way: bool | None = None,
                 sender_class: type[Sender] = FastSender,
                 processes: list | tuple = ()) -> None:
        self.scenario = sc = scenario
        self.processes = tuple(processes)  # users' SimPy processes (ccsim.packet.processes)
        self.held: set[int] = set()  # flows a process holds back from their start
        self.process_error: Exception | None = None  # what a user's process raised
        self.log = EventLog() if events else None
        # ACKs as packets through the queues of their way back (None: when some
        # flow is reverse, and only then); True for a one-way scenario gives its
        # ACKs the serialisation and queueing they would meet in a two-way one
        self.two_way = sc.two_way if two_way is None else two_way
        if sc.two_way and not self.two_way:
            raise ScenarioError("two_way", two_way, "True or None with a reverse flow "
                                "(its data and the others' ACKs share the queues)")
        # each hop an event of its own: needed when flows' routes differ (None:
        # then and only then); the whole-chain shortcut gives the same results.
        # Two-way traffic needs it always: ACKs reach the links at their own times
        # a scheduler picks packets at dequeue (ccsim.queues.scheduler): its
        # link has events of its own, and is told of packets as they arrive
        scheduled = any(isinstance(link.queue, Scheduler) for link in sc.links)
        self.hop_by_hop = (self.two_way or sc.routed or scheduled if hop_by_hop is None
                           else hop_by_hop or self.two_way or scheduled)
        self.env = simpy.Environment()
        self.clock = clock = Clock()
        dt = sc.sample_interval
        n_bins = int(math.ceil(sc.duration / dt - 1e-9))  # bins/samples in [0, duration)
        self.n_bins = n_bins
        n_links = len(sc.links)
        # the reverse sides' seeds follow the forward sides' (a longer draw
        # from the same sequence begins with the same words)
        seeds = np.random.SeedSequence(sc.seed).generate_state(
            (4 if self.two_way else 2) * n_links)
        # ACKs, and SYNs (Scenario.handshake), are packets of ``header`` bytes on the links
        ack = sc.header if self.two_way or any(
            f.source is None and sc.flow_stack(j).handshake for j, f in enumerate(sc.flows)) else 0
        self.links = [_link_state(link, sc.packet_size, (int(seeds[2 * i]), int(seeds[2 * i + 1])),
                                  n_bins, dt, ack, clock, sc.seed, i)
                      for i, link in enumerate(sc.links)]
        # each link's other side, right to left, when traffic goes both ways
        self.reverse_links = [
            _link_state(link, sc.packet_size, (int(seeds[2 * (n_links + i)]),
                                               int(seeds[2 * (n_links + i) + 1])), n_bins, dt, ack,
                        clock, sc.seed, n_links + i)
            for i, link in enumerate(sc.links)] if self.two_way else []
        if not self.hop_by_hop:
            for link in self.links[1:]:  # told of each packet as it enters the first
                link.told_ahead()
        self.senders: list[Sender] = []
        self.receivers: list[Receiver] = []
        self.handshakes: dict[int, Callable[[int], None]] = {}  # flow -> sends its SYN (try k)
        self.sender_class = sender_class
        for i, flow in enumerate(sc.flows):
            self._add_flow(i, flow, sender_class)
        self.times = np.arange(n_bins) * dt
        shape = (n_bins, len(sc.flows))
        self.cwnd = np.full(shape, np.nan)
        self.ssthresh = np.full(shape, np.nan)
        self.rtt = np.full(shape, np.nan)
        self.queue = np.zeros(n_bins)
        self.reverse_queue = np.zeros(n_bins) if self.two_way else None
        self.bar = None  # the progress bar while a run shows one
        clock.schedule(0.0, self._sample, 0)

    def _add_flow(self, i: int, flow, sender_class: type[Sender]) -> None:
        """Flow ``i`` of the scenario: its sender and receiver, its path, its
        start and stop on the clock."""
        sc, clock = self.scenario, self.clock
        n_bins, dt = self.n_bins, sc.sample_interval
        one_way = sc.route_rtt(i) / 2.0  # the links the flow crosses
        access = (sc.flow_rtt(i) - sc.route_rtt(i)) / 2.0  # one way, both sides together
        access = max(access, 0.0)  # rtt == route rtt up to rounding
        if flow.source is not None:  # an unresponsive UDP source (ccsim.packet.udp)
            self._add_source(i, flow, access / 2.0, n_bins, dt)
            return
        st = sc.flow_stack(i)  # the flow's stack, profile and knobs resolved
        rec = get_recovery(st.recovery)(**dict(st.recovery_params))  # the stack's keywords
        sack = st.sack or rec.uses_sack
        # two ways, an ACK's trip back is hops of its own after the receiver's
        # access delay; one way, it is the propagation delay, all at once
        back = access / 2.0 if self.two_way else one_way + access
        accecn = flow.ecn == "accecn"  # Accurate ECN feedback (RFC 9768)
        receiver = (AccEcnReceiver if accecn else Receiver)(
            sack=sack, dsack=sack and st.tail_loss_probe, delayed_ack=st.delayed_ack,
            ack_delay=st.delayed_ack_timeout, back=back,
            clock=clock, deliver_ack=None, n_bins=n_bins, bin_width=dt,
            quick_gap=sc.flow_rtt(i) + st.min_rto if st.quick_ack else None)
        # the hosts' NICs (Flow.access_rate): one packet time each (s)
        nic = 0.0 if flow.access_rate is None else sc.packet_size * 8.0 / flow.access_rate
        sender = sender_class(
            algorithms.get(flow.algorithm)(**dict(st.params)), rec, clock=clock,
            transmit=self._path(i, receiver, access / 2.0, access / 2.0 + nic,
                                Counter(flow.drop_segments), flow.ecn, flow.overhead,
                                _codepoint(flow), nic, flow.access_buffer,
                                flow.access_jitter),
            initial_window=st.initial_window, mss=sc.mss,
            rwnd=min(math.inf if sc.rwnd is None else math.floor(sc.rwnd / sc.mss),
                     self._path_cap(i)),
            min_rto=st.min_rto, initial_rto=st.initial_rto, max_rto=sc.max_rto,
            end_seq=(math.ceil(flow.size / sc.mss) if flow.size is not None
                     else math.inf),
            packet_bits=sc.packet_size * 8.0,
            ack_counting=st.ack_counting, rtt_granularity=sc.rtt_granularity,
            limited_transmit=st.limited_transmit, tail_loss_probe=st.tail_loss_probe,
            law_rtt=st.law_rtt, loss_flight=st.loss_flight,
            reduction_window=st.reduction_window, exit_ack=st.exit_ack)
        if accecn:
            sender.ecn = AccEcnResponse()
        receiver.deliver_ack = sender.on_ack  # the two ends know each other
        receiver.deliver_ce = sender.on_ack_ce  # ACKs echoing ECN marks
        if self.log is not None:
            receiver.deliver_ack = recorded = self.log.ack(i, sender, clock)
            receiver.deliver_ce = partial(_echo_then, sender, recorded)
        if self.two_way:
            receiver.deliver_ack = self._ack_path(i, receiver.deliver_ack, access / 2.0)
            receiver.deliver_ce = self._ack_path(i, receiver.deliver_ce, access / 2.0)
        self.senders.append(sender)
        self.receivers.append(receiver)
        if st.handshake:
            self.handshakes[i] = self._handshake(i, sender, access / 2.0, back, st.initial_rto)
            clock.schedule(sc.flow_start(i), self._start_flow, i)
        elif self.processes:  # a process may hold the flow back (FlowHandle.hold)
            clock.schedule(sc.flow_start(i), self._start_flow, i)
        else:
            clock.schedule(sc.flow_start(i), Sender.start, sender)  # start jitter included
        if flow.stop is not None and flow.stop < sc.duration:
            clock.schedule(flow.stop, Sender.stop, sender)

    def add_flow(self, flow, at: float) -> int:
        """Add ``flow`` to the running scenario, opening at ``at`` (s, not
        before now) as a declared flow with ``start = at`` would; its index.
        The run's scenario becomes the one with the flow declared so
        (:attr:`scenario`, and the result's)."""
        from ..scenario import Flow

        sc = self.scenario
        if not isinstance(flow, Flow):
            raise ScenarioTypeError("add_flow(flow)", flow, "a ccsim.Flow (or ccsim.CBR(...), "
                                    "ccsim.OnOff(...))")
        if flow.start != 0.0:
            raise ScenarioError("add_flow(flow).start", flow.start, "0 (left unset)",
                                "the flow opens at add_flow's at= (default: now)")
        if isinstance(at, bool) or not isinstance(at, (int, float)) or not math.isfinite(at) \
                or not self.now <= at < sc.duration:
            raise ScenarioError("add_flow(at)", at, f"a time in [now = {self.now:g}, "
                                f"duration = {sc.duration:g}) s")
        if flow.reverse and not self.two_way:
            raise ScenarioError("add_flow(flow).reverse", True, "False in a run without a "
                                "reverse flow declared", "whether ACKs queue with data is "
                                "fixed when the run begins: declare a reverse flow")
        full = (0, len(sc.links) - 1)
        if flow.route not in (None, full) and not self.hop_by_hop:
            raise ScenarioError("add_flow(flow).route", flow.route, f"None or {full} in this run",
                                "a run whose flows all cross the whole chain takes a packet "
                                "through it at once; declare a routed flow to add one")
        extended = sc.replace(flows=sc.flows + (dataclasses.replace(flow, start=float(at)),))
        i = len(sc.flows)
        self.scenario = extended
        column = np.full((self.n_bins, 1), np.nan)
        self.cwnd = np.hstack([self.cwnd, column])
        self.ssthresh = np.hstack([self.ssthresh, column])
        self.rtt = np.hstack([self.rtt, column])
        self._add_flow(i, extended.flows[i], self.sender_class)
        return i

    def _add_source(self, i: int, flow, before: float, n_bins: int, dt: float) -> None:
        """Flow ``i``, a UDP source: its packets on the same path as a TCP
        sender's, counted by a receiver that sends nothing back."""
        sc = self.scenario
        if self.log is not None:
            raise ScenarioError("events", True, "False with a UDP source (ccsim.CBR, "
                                "ccsim.OnOff): their packets are not logged")
        receiver = UdpReceiver(n_bins, dt)
        seed = int(np.random.SeedSequence([sc.seed, _SOURCE, i]).generate_state(1)[0])
        stop = sc.duration if flow.stop is None else min(flow.stop, sc.duration)
        source = UdpSource(dict(flow.source), sc.mss,
                           self._path(i, receiver, before, before, Counter()),
                           self.clock, seed, stop)
        self.senders.append(source)
        self.receivers.append(receiver)
        self.clock.schedule(sc.flow_start(i), UdpSource.start, source)

    @property
    def now(self) -> float:
        """Simulation time (s)."""
        return self.clock.now

    def _path_cap(self, i: int) -> float:
        """The most segments flow ``i`` keeps outstanding, whatever its window:
        ten times what the path can hold (its bandwidth-delay product at the
        bottleneck plus every buffer on the way), so a window law that asks
        for a window far beyond it costs no more work per ACK than the path
        allows (the fluid engine caps the same way)."""
        sc = self.scenario
        buffers = sum(link.limit for link in self.links)
        return 10.0 * (sc.bdp_packets(i) + buffers)

    def _path(self, i: int, receiver: Receiver, before: float, after: float,
              drops: Counter[int], ecn: bool = False, overhead: float = 0.0,
              codepoint: int = NOT_ECT, nic: float = 0.0,
              host_limit: int | None = None, nic_jitter: float = 0.0) -> Callable:
        """The function flow ``i``'s sender transmits with: across every link
        to ``receiver``.

        ``before`` and ``after`` are the flow's one-way access delays in front
        of the first link and behind the last (s); the first ``drops[seq]``
        transmissions of segment ``seq`` are lost on the way in. ``ecn``: the
        flow is ECN-capable; a packet any link marks reaches the receiver CE.
        ``overhead``: each packet waits a further uniform random time up to
        this (s) before the first link, in order (``Flow.overhead``).
        ``codepoint``: the ECN codepoint its packets carry (schedulers classify by it).
        ``nic``: the sender's NIC's packet time (s; 0: an infinitely fast host):
        packets leave it one after the other (:func:`_nic_transmit`).
        ``host_limit``: the host queue in front of the NIC (packets waiting;
        ``None``: unbounded, :attr:`Flow.access_buffer`); a segment handed to
        it full is a local congestion signal to the sender
        (:meth:`Sender.local_congestion`). ``nic_jitter``: the most a packet
        leaving the NIC is delayed (s; :attr:`Flow.access_jitter`).
        """
        links = self.links if self.hop_by_hop else [link.forward for link in self.links]
        end = self.scenario.duration  # the shortcut walks no link past it
        receive, receive_ce = receiver.receive, receiver.receive_ce
        log = self.log
        if log is not None:
            receive, receive_ce = log.deliver(i, receive), log.deliver(i, receive_ce)
        wait = self.scenario.ack_wait
        # each segment reaches its receiver a random time up to ``wait`` late,
        # behind the one before (Scenario.ack_jitter): the flow's own generator
        jitter = (random.Random(int(np.random.SeedSequence(
            [self.scenario.seed, _ACK_JITTER, i]).generate_state(1)[0])).random
            if wait > 0.0 else None)
        nic_transmit = None  # the common case's sender behind a NIC, inline (below)
        if jitter is not None and (self.hop_by_hop or log is not None or ecn
                                   or len(links) > 1):
            receive, receive_ce = _jittered(receive, receive_ce, wait, jitter)
        if self.hop_by_hop:
            enter = self._hop_by_hop(i, receive, receive_ce, after, ecn, codepoint)
        elif log is not None or ecn:  # the general loop: drops recorded, marks carried
            states = self.links

            def enter(seq: int, t: float) -> None:
                ce = False
                for j, link in enumerate(states):
                    if j and t >= end:  # reaches this link after the run: as hop by hop
                        return
                    drops_before = link.drops
                    arrival = link.forward_ect(t) if ecn else link.forward(t)
                    if arrival < 0.0:
                        if log is not None:
                            log.drop(i, seq, t, j, drop_reason(link, drops_before))
                        return
                    if log is not None:
                        log.forward(i, seq, arrival - link.delay, j)
                    t = arrival
                    ce = ce or (ecn and link.ce)
                (receive_ce if ce else receive)(seq, t + after)
        elif len(links) == 1 and jitter is not None:  # the common case, jitter inline
            forward = links[0]
            reached = 0.0  # when the segment before reached the receiver (s)

            def enter(seq: int, t: float) -> None:
                nonlocal reached
                t = forward(t)
                if t >= 0.0:
                    t = t + after + wait * jitter()  # as (t + after) in _jittered
                    if t < reached:
                        t = reached
                    reached = t
                    receive(seq, t)

            if (nic > 0.0 and overhead <= 0.0 and self.nic_shortcut and host_limit is None
                    and nic_jitter <= 0.0):
                # _nic_transmit and enter in one: the same rules, one call fewer per packet
                clock = self.clock
                heap, schedule_enter = clock.heap, clock.schedule
                free = 0.0  # when the previous packet left the NIC (s)

                def nic_transmit(seq: int, now: float) -> None:
                    nonlocal reached, free
                    free = (free if free > now else now) + nic
                    t = free + before
                    if t < heap[0][0]:  # never empty in a run: Clock.run's mark
                        t = forward(t)
                        if t >= 0.0:
                            t = t + after + wait * jitter()
                            if t < reached:
                                t = reached
                            reached = t
                            receive(seq, t)
                    else:
                        schedule_enter(t, _enter_later, (enter, seq, t))
        elif len(links) == 1:
            forward = links[0]

            def enter(seq: int, t: float) -> None:
                t = forward(t)
                if t >= 0.0:
                    receive(seq, t + after)
        else:
            first, rest = links[0], links[1:]

            def enter(seq: int, t: float) -> None:
                t = first(t)
                if t < 0.0:
                    return
                for forward in rest:
                    if t >= end:  # reaches this link after the run, where hop by hop stops
                        return
                    t = forward(t)
                    if t < 0.0:
                        return
                receive(seq, t + after)

        schedule = self.clock.schedule
        if nic_transmit is not None:
            transmit = nic_transmit
        elif nic > 0.0:
            transmit = _nic_transmit(self.clock, enter, nic, before, overhead,
                                     self._overhead_draws(i) if overhead > 0.0 else None,
                                     self.nic_shortcut and not any(
                                         type(link) is ScheduledLink for link in self.links),
                                     host_limit, self._local_congestion(i), nic_jitter,
                                     self._draws(i, _NIC_JITTER) if nic_jitter > 0.0 else None)
        elif overhead > 0.0:
            # the flow's own generator, from the scenario's seed and its index
            uniform = random.Random(int(np.random.SeedSequence(
                [self.scenario.seed, _OVERHEAD, i]).generate_state(1)[0])).random
            last = [0.0]  # when the previous packet reaches the first link (s)

            def transmit(seq: int, now: float) -> None:
                at = now + before + overhead * uniform()
                if at < last[0]:  # behind the one before: no overtaking
                    at = last[0]
                last[0] = at
                schedule(at, _enter_later, (enter, seq, at))
        elif before <= 0.0:
            transmit = enter
        else:
            def transmit(seq: int, now: float) -> None:
                schedule(now + before, _enter_later, (enter, seq, now + before))
        if drops:
            unless_chosen = transmit

            def transmit(seq: int, now: float) -> None:
                if seq in drops:
                    drops[seq] -= 1
                    if not drops[seq]:
                        del drops[seq]
                    if log is not None:
                        log.drop(i, seq, now, -1, "chosen")
                    return
                unless_chosen(seq, now)
        if log is not None:
            transmit = log.transmit(i, lambda: self.senders[i], transmit)
        return transmit

    def _local_congestion(self, i: int) -> Callable[[float], None]:
        """What flow ``i``'s host queue calls when a segment finds it full:
        the sender hears of it (:meth:`Sender.local_congestion`) once its
        current send is over, at the same instant, through one event however
        many segments found the queue full meanwhile."""
        pending = False
        clock = self.clock

        def tell(_: None) -> None:
            nonlocal pending
            pending = False
            self.senders[i].local_congestion()

        def refused(now: float) -> None:
            nonlocal pending
            if not pending:
                pending = True
                clock.schedule(now, tell, None)
        return refused

    def _overhead_draws(self, i: int) -> Callable[[], float]:
        """Flow ``i``'s send-overhead generator: its own, from the scenario's
        seed and its index."""
        return self._draws(i, _OVERHEAD)

    def _draws(self, i: int, stream: int) -> Callable[[], float]:
        """Flow ``i``'s uniform generator for ``stream`` (``_OVERHEAD``,
        ``_NIC_JITTER``): its own, from the scenario's seed and its index."""
        return random.Random(int(np.random.SeedSequence(
            [self.scenario.seed, stream, i]).generate_state(1)[0])).random

    def _hop_by_hop(self, i: int, receive: Callable, receive_ce: Callable, after: float,
                    ecn: bool, codepoint: int = NOT_ECT) -> Callable:
        """Flow ``i``'s way over its route when flows' routes differ: a link
        is told of a packet when the packet reaches it, through an event, so
        that packets of flows joining the chain part of the way reach every
        link in time order too (the whole-chain shortcut computes a packet's
        passage through every link when it enters the first)."""
        hops = self._hops(i, data=True)
        states, index = [link for _, link in hops], [j for j, _ in hops]
        end, log, schedule = len(states) - 1, self.log, self.clock.schedule

        def hop(k: int, seq: int, t: float, ce: bool) -> None:
            link = states[k]
            drops_before = link.drops
            arrival = link.forward_ect(t) if ecn else link.forward(t)
            if arrival < 0.0:
                if log is not None:
                    log.drop(i, seq, t, index[k], drop_reason(link, drops_before))
                return
            if log is not None:
                log.forward(i, seq, arrival - link.delay, index[k])
            ce = ce or (ecn and link.ce)
            if k == end:
                (receive_ce if ce else receive)(seq, arrival + after)
            else:
                schedule(arrival, _next_hop, (hop, k + 1, seq, arrival, ce))

        if any(type(link) is ScheduledLink for link in states):
            # rebinds the name the FIFO hop above schedules its next hop with
            hop = self._scheduled_hops(i, states, index, receive, receive_ce, after, ecn,
                                       codepoint, hop)

        def enter(seq: int, t: float) -> None:
            hop(0, seq, t, False)
        return enter

    def _scheduled_hops(self, i: int, states: list, index: list[int], receive: Callable,
                        receive_ce: Callable, after: float, ecn: bool, codepoint: int,
                        fifo_hop: Callable) -> Callable:
        """Flow ``i``'s hop function when a link on its way is scheduled
        (:class:`~ccsim.packet.scheduled.ScheduledLink`): a packet joins its
        queues and goes on when the scheduler sends it (``leave``); FIFO links
        stay ``fifo_hop``."""
        end, log, clock, size = len(states) - 1, self.log, self.clock, self.scenario.packet_size
        schedule = clock.schedule

        def leave(packet: Packet, arrival: float) -> None:
            k, seq = packet.item
            link = states[k]
            if arrival < 0.0:
                if log is not None:
                    log.drop(i, seq, clock.now, index[k], link.reason)
                return
            if log is not None:
                log.forward(i, seq, arrival - link.delay, index[k])
            if k == end:
                (receive_ce if packet.ce else receive)(seq, arrival + after)
            else:
                schedule(arrival, _next_hop, (hop, k + 1, seq, arrival, packet.ce))

        def hop(k: int, seq: int, t: float, ce: bool) -> None:
            link = states[k]
            if type(link) is ScheduledLink:
                link.enqueue(t, Packet(i, codepoint, ce, size, True, (k, seq), leave))
            else:
                fifo_hop(k, seq, t, ce)
        return hop

    def _hops(self, i: int, data: bool) -> list[tuple[int, LinkState]]:
        """The link sides flow ``i``'s data (``data``) or ACKs cross, in the
        order they cross them, each with its link's index in the chain: left
        to right over the forward sides, or right to left over the reverse
        ones (a reverse flow's data, a forward flow's ACKs when two-way)."""
        flow = self.scenario.flows[i]
        first, last = flow.route or (0, len(self.links) - 1)
        leftward = flow.reverse if data else not flow.reverse
        if leftward:
            return [(j, self.reverse_links[j]) for j in range(last, first - 1, -1)]
        return [(j, self.links[j]) for j in range(first, last + 1)]

    def _ack_path(self, i: int, deliver: Callable, before: float,
                  log: bool = True) -> Callable:
        """Flow ``i``'s ACKs when traffic goes both ways: each one a packet of
        ``header`` bytes through the queues of the links on its way back, one
        event per hop, then ``before`` (s, the sender's access delay) to
        ``deliver`` (the sender's ``on_ack`` or ``on_ack_ce``). The function
        returned takes the ACK when it reaches the first of those links (the
        receiver schedules it there). A queue may drop it: the sender never
        sees it, and the next cumulative ACK covers what it said."""
        hops = self._hops(i, data=False)
        states, index = [link for _, link in hops], [j for j, _ in hops]
        end, log, clock = len(states) - 1, self.log if log else None, self.clock
        schedule = clock.schedule

        def hop(k: int, ack: tuple, t: float) -> None:
            link = states[k]
            arrival = link.ack(t)
            if arrival < 0.0:
                if log is not None:
                    log.ack_drop(i, ack[0], t, index[k], queue_drop_reason(link))
                return
            if k == end:
                schedule(arrival + before, deliver, ack)
            else:
                schedule(arrival, _next_ack_hop, (hop, k + 1, ack, arrival))

        if any(type(link) is ScheduledLink for link in states):
            fifo_hop, size = hop, self.scenario.header

            def leave(packet: Packet, arrival: float) -> None:
                k, ack = packet.item
                if arrival < 0.0:
                    if log is not None:
                        log.ack_drop(i, ack[0], clock.now, index[k], states[k].reason)
                elif k == end:
                    schedule(arrival + before, deliver, ack)
                else:
                    schedule(arrival, _next_ack_hop, (hop, k + 1, ack, arrival))

            def hop(k: int, ack: tuple, t: float) -> None:  # noqa: F811 (rebinds the FIFO hop's)
                link = states[k]
                if type(link) is ScheduledLink:  # an ACK: not ECN-capable (RFC 3168 §6.1.4)
                    link.enqueue(t, Packet(i, NOT_ECT, False, size, False, (k, ack), leave))
                else:
                    fifo_hop(k, ack, t)

        def enter(ack: tuple) -> None:
            hop(0, ack, clock.now)
        return enter

    def _sample(self, k: int) -> None:
        """Record the traced state at ``k · sample_interval`` and re-arm."""
        t = self.times[k]
        for i, s in enumerate(self.senders):
            if s.started and s.done_at is None:
                self.cwnd[k, i] = s.cc.cwnd
                self.ssthresh[k, i] = s.cc.ssthresh
                self.rtt[k, i] = s.rtt.last_rtt
        self.queue[k] = self.links[self.scenario.bottleneck].backlog(t)
        if self.reverse_queue is not None:
            self.reverse_queue[k] = self.reverse_links[self.scenario.bottleneck].backlog(t)
        if self.bar is not None:
            self.bar.update(t - self.bar.n)
        if k + 1 < len(self.times):
            self.clock.schedule(float(self.times[k + 1]), self._sample, k + 1)

    def _start_flow(self, i: int) -> None:
        """Open flow ``i`` at its start unless a user's process holds it."""
        if i not in self.held and not self.senders[i].started:
            self.open_flow(i)

    def open_flow(self, i: int) -> None:
        """Open flow ``i`` now: its SYN (:attr:`Scenario.handshake`), else its
        first window."""
        if i in self.handshakes:
            self.handshakes[i](0)
        else:
            type(self.senders[i]).start(self.senders[i])

    def _handshake(self, i: int, sender: Sender, before: float, back: float,
                   initial_rto: float) -> Callable[[int], None]:
        """Flow ``i``'s connection opening: the function that sends its SYN
        (try ``k``, from 0). The SYN waits ``before`` (s, the sender's access
        delay), crosses the flow's links as a ``header``-byte packet, queued
        FIFO with their traffic (all at once when the engine takes a packet
        through the whole chain, else a hop per event); at the receiver the
        SYN-ACK goes back as an ACK does (``back`` s one way, through the
        reverse queues two ways). Its arrival gives the estimator its first
        sample (not after a resent SYN: Karn) and opens the window. A
        dropped SYN is sent again after ``initial_rto``·2^k (Linux's and
        ns-3's connection timer, backed off)."""
        clock, schedule = self.clock, self.clock.schedule
        hops = [link for _, link in self._hops(i, data=True)]
        at_once = not self.hop_by_hop
        sent_at = [0.0]
        tries = [0]

        def established(_: object) -> None:
            now = clock.now
            if not sender.started and sender.done_at is None:
                if tries[0] == 0:
                    est = sender.rtt
                    est.take(est.measure(sent_at[0], now) if est.tick else now - sent_at[0])
                type(sender).start(sender)

        if self.two_way:
            syn_ack = self._ack_path(i, established, before, log=False)
        else:
            def syn_ack(_: object) -> None:
                schedule(clock.now + back, established, None)

        def hopped(k: int, arrival: float) -> None:
            if arrival < 0.0:  # dropped: the connection timer sends it again
                schedule(sent_at[0] + initial_rto * 2.0 ** tries[0], syn, tries[0] + 1)
            elif k == len(hops) - 1:
                schedule(arrival + before, syn_ack, None)  # the receiver's access delay
            elif at_once:
                hop(k + 1, arrival)
            else:
                schedule(arrival, _syn_hop, (hop, k + 1, arrival))

        def left(packet: Packet, arrival: float) -> None:  # a scheduler sent (or dropped) it
            hopped(packet.item, arrival)

        def hop(k: int, t: float) -> None:
            link = hops[k]
            if type(link) is ScheduledLink:  # a SYN: not ECN-capable (RFC 3168 §6.1.1)
                link.enqueue(t, Packet(i, NOT_ECT, False, self.scenario.header, False, k, left))
            else:
                hopped(k, link.ack(t))

        def syn(k: int) -> None:
            sent_at[0], tries[0] = clock.now, k
            schedule(clock.now + before, _syn_hop, (hop, 0, clock.now + before))

        return syn

    def _loop(self, until: float) -> None:
        """Run to ``until`` (s): the engine's own events, and SimPy's (a
        user's processes on :attr:`env`) in turn, each SimPy event after the
        engine's events due before it. Events at ``until`` do not run, as
        with ``simpy.Environment.run(until=...)``."""
        env, clock = self.env, self.clock
        while True:
            at = env.peek()
            clock.run(at if at < until else until)
            if at >= until:
                break
            clock.now = at
            env.step()

    def run(self, progress: bool = False) -> Result:
        """Simulate until the scenario's duration and assemble the result;
        ``progress``: a bar in simulated seconds, moved at every trace sample."""
        sc = self.scenario
        start = time.perf_counter()
        if progress:
            from .._progress import progress_bar

            self.bar = progress_bar(sc.duration, "packet run")
        if self.processes:
            from .processes import start_processes

            start_processes(self, self.processes)
        try:
            self._loop(sc.duration)
        except Exception as exc:
            if self.process_error is not None:  # a user's process raised it: as it was
                raise self.process_error from None
            if isinstance(exc, CcsimError):
                raise
            # a law's own bug: say whose, where and when
            laws = {id(s.cc): (s.cc.name or type(s.cc).__name__, f"flow {i}")
                    for i, s in enumerate(self.senders) if getattr(s, "cc", None) is not None}
            failure = law_failure(exc, laws, self.clock.now)
            if failure is None:
                raise
            raise failure from exc
        finally:
            if self.bar is not None:
                self.bar.update(sc.duration - self.bar.n)
                self.bar.close()
                self.bar = None
        wall = time.perf_counter() - start
        sc = self.scenario  # with the flows a process added (Network.add_flow)
        n = self.n_bins
        flows = []
        for flow, s, r in zip(sc.flows, self.senders, self.receivers):
            end = min(sc.duration, math.inf if flow.stop is None else flow.stop,
                      math.inf if s.done_at is None else s.done_at)
            flows.append({"end": end, "udp": ((s.transmissions, r.received)
                                              if isinstance(s, UdpSource) else None),
                          "done_at": s.done_at, "retransmits": s.retransmits,
                          "timeouts": s.timeouts, "recoveries": s.recoveries,
                          "rtt_sum": s.rtt.rtt_sum, "rtt_count": s.rtt.rtt_count})
        bottleneck = self.links[sc.bottleneck]
        delivered = np.array([r.deliveries.per_bin(n) for r in self.receivers], float).T
        extra = {}
        if self.two_way:  # ACKs dropped anywhere, either side of any link
            extra["ack_drops"] = sum(link.ack_drops for link in self.links + self.reverse_links)
        res = build(sc, "packet", times=self.times, cwnd=self.cwnd, ssthresh=self.ssthresh,
                     rtt=self.rtt, queue=self.queue, delivered=delivered,
                     departures=np.array(bottleneck.departures.per_bin(n), float),
                     flows=flows,
                     extra={"drops": bottleneck.drops, "losses": bottleneck.losses,
                            **({"marks": bottleneck.marks}  # CE marks, when a flow can take them
                               if any(f.ecn for f in sc.flows) else {}),
                            "data_packets": self.data_packets, **extra, "wall_time": wall},
                     events=(self.log.table(self.senders) if self.log is not None
                             else events_table(congestion_rows(self.senders))))
        for i, (flow, s) in enumerate(zip(sc.flows, self.senders)):
            unsent = [d for d in flow.drop_segments if d >= s.high_tx]
            if unsent:  # asked for, but the run never got there: say so
                res.warnings.append(f"flow {i}: drop_segments {unsent} were never sent (the "
                                    f"flow sent segments 0..{s.high_tx - 1}), so not dropped")
        if self.two_way:  # the reverse flows' data, over the same interval as utilisation
            res.traces = add_link_trace(res.traces, "reverse_queue", self.times,
                                        self.reverse_queue)
            t0, t1 = res.metrics["interval"]
            other = self.reverse_links[sc.bottleneck]
            bits = integrate_bins(np.array(other.departures.per_bin(n), float),
                                  sc.sample_interval, t0, t1) * sc.packet_size * 8.0
            res.metrics["reverse_utilisation"] = (
                float(bits) / (sc.links[sc.bottleneck].rate * (t1 - t0)) if t1 > t0 else math.nan)
        return res

    @property
    def data_packets(self) -> int:
        """Data packets sent so far, retransmissions and chosen drops included."""
        return sum(s.transmissions for s in self.senders)


def _link_state(link, packet_size: int, seeds: tuple[int, int], n_bins: int, bin_width: float,
                ack_size: int, clock: Clock, seed: int = 0,
                index: int = -1) -> LinkState | ScheduledLink:
    """A link's run-time state: a FIFO :class:`LinkState`, or a
    :class:`ScheduledLink` when its queue is a scheduler. ``index``: the
    link's place on the path, its forward side (its jitter's generator)."""
    if isinstance(link.queue, Scheduler):
        if link.schedule is not None or link.jitter:
            raise ScenarioError("link.queue", link.queue,
                                "a FIFO queue (drop-tail or an AQM) on a link with a rate "
                                "schedule or jitter", "schedulers serve fixed-rate links only")
        return ScheduledLink(link, packet_size, seeds, n_bins, bin_width, ack_size, clock)
    jitter_seed = 0
    if link.jitter:  # its own generator, from the scenario's seed and its place
        jitter_seed = int(np.random.SeedSequence([seed, _LINK_JITTER, index]).generate_state(1)[0])
    return LinkState(link, packet_size, seeds, n_bins, bin_width, ack_size, jitter_seed)


def _codepoint(flow) -> int:
    """The ECN codepoint of a flow's packets: ECT(1), the L4S identifier
    (RFC 9331), when it is ECN-capable and its window law declares itself
    scalable (``l4s``); ECT(0) when ECN-capable; else not ECT."""
    if not flow.ecn:
        return NOT_ECT
    return ECT1 if getattr(algorithms.get(flow.algorithm), "l4s", False) else ECT0


def _echo_then(sender: Sender, recorded: Callable, ack: tuple) -> None:
    """An ACK echoing CE marks, with the event log on: the echo, then the
    recorded ``on_ack``."""
    sender.ecn.on_echo(sender, ack[2], ack[0], sender.clock.now)
    recorded((ack[0], ack[1]))


def _nic_transmit(clock: Clock, enter: Callable, nic: float, before: float, overhead: float,
                  uniform: Callable[[], float] | None, ahead: bool,
                  limit: int | None = None, refused: Callable[[float], None] | None = None,
                  jitter: float = 0.0, jitter_draw: Callable[[], float] | None = None
                  ) -> Callable:
    """A sender behind a NIC of packet time ``nic`` (s): a FIFO that never
    drops, so a packet leaves it at ``max(ready, free) + nic`` (``free``: when
    the one before left) and reaches the first link ``before`` (s) later;
    ``ready`` is its send time, plus its send overhead (uniform up to
    ``overhead``, behind the one before) when ``uniform`` draws it.

    No event of its own when none is needed: a packet due at the first link
    before every event on the heap (the run's end among them:
    :meth:`Clock.run`) is handed to the link at once with its future arrival time, since nothing
    can reach the link before it; otherwise it is scheduled there, as a hop.
    ``ahead``: the links take arrivals ahead of the clock (FIFO ones; a
    scheduled link acts on :attr:`Clock.now`, so it always gets the event).

    ``limit``: the host queue holds this many packets waiting, besides the
    one the NIC is sending (``None``: unbounded). A packet that finds it
    full calls ``refused(now)`` and waits at the host until there is room,
    in order: its time through the NIC is the same, nothing is lost (a
    2011 Linux kernel kept a segment its qdisc refused at the head of the
    socket's queue and sent it on a later ACK, ``tcp_write_xmit``).

    ``jitter``: each packet leaving the NIC is delayed a further
    ``jitter · jitter_draw()`` (s), none overtaking the one before.
    """
    heap, schedule = clock.heap, clock.schedule
    free = 0.0  # when the previous packet left the NIC (s)
    ready_last = 0.0  # when the previous packet was ready, its overhead waited (s)
    held: deque[float] = deque()  # when each packet at the host leaves the NIC (s)
    last = 0.0  # when the previous packet reached the first link, jitter included (s)

    def transmit(seq: int, now: float) -> None:
        nonlocal free, ready_last, last
        if uniform is not None:
            now = now + overhead * uniform()
            if now < ready_last:  # behind the one before: no overtaking
                now = ready_last
            ready_last = now
        if limit is not None:
            while held and held[0] <= now:
                held.popleft()
            if len(held) > limit:  # full: limit waiting, and the one the NIC sends
                refused(now)
        free = (free if free > now else now) + nic
        if limit is not None:
            held.append(free)
        at = free + before
        if jitter_draw is not None:
            at += jitter * jitter_draw()
            if at < last:  # behind the one before: no overtaking
                at = last
            last = at
        if ahead and at < heap[0][0]:  # never empty in a run: Clock.run's mark
            enter(seq, at)
        else:
            schedule(at, _enter_later, (enter, seq, at))
    return transmit


def _next_ack_hop(args: tuple[Callable, int, tuple, float]) -> None:
    hop, k, ack, t = args
    hop(k, ack, t)


def _syn_hop(args: tuple[Callable, int, float]) -> None:
    hop, k, t = args
    hop(k, t)


def _next_hop(args: tuple[Callable, int, int, float, bool]) -> None:
    hop, k, seq, t, ce = args
    hop(k, seq, t, ce)


def _enter_later(args: tuple[Callable, int, float]) -> None:
    enter, seq, t = args
    enter(seq, t)


def _jittered(receive: Callable, receive_ce: Callable, wait: float,
              uniform: Callable[[], float]) -> tuple[Callable, Callable]:
    """``receive`` and ``receive_ce`` told of each segment a random time,
    uniform up to ``wait`` (s), late, and never before the one before."""
    last = 0.0

    def late(seq: int, t: float) -> float:
        nonlocal last
        t += wait * uniform()
        if t < last:
            t = last
        last = t
        return t

    def plain(seq: int, t: float) -> None:
        receive(seq, late(seq, t))

    def marked(seq: int, t: float) -> None:
        receive_ce(seq, late(seq, t))
    return plain, marked
