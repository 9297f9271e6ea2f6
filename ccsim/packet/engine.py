"""The packet engine: a scenario's links, senders and receivers on SimPy.

SimPy's event heap and clock drive time. What needs an event is what a
sender reacts to — an ACK's arrival, its retransmission timer, a flow's
start and stop — plus a delayed-ACK timer and the trace sampler.

A data packet needs none: every link is a FIFO queue with a fixed
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

Assumptions, stated once: the reverse path is uncongested (an ACK takes the
propagation delay back, and its 40 bytes of serialisation are neglected);
every data packet is full-size on the wire (``mss + header`` bytes).
"""

from __future__ import annotations

import math
import time
from collections import Counter
from typing import Any, Callable

import numpy as np
import simpy
from simpy.events import NORMAL

from ..results import Result, build
from ..scenario import Scenario
from .link import LinkState
from .tcp import Receiver, Sender


class _Call(simpy.Event):
    """A pre-triggered SimPy event that calls ``fn(payload)`` when it is due.

    Lighter than :class:`simpy.Timeout` (no checks, no generator process):
    the engine creates one per ACK.
    """

    def __init__(self, env: simpy.Environment, fn: Callable, payload: Any) -> None:
        self.env = env
        self.callbacks = [_fire]
        self._ok = True
        self._value = payload
        self.fn = fn


def _fire(event: _Call) -> None:
    event.fn(event._value)


class PacketEngine:
    """Builds the run-time objects of one scenario and runs it.

    Attributes:
        env: the SimPy environment.
        links: run-time link states, in path order.
        senders, receivers: one per flow, in scenario order.
        times: sample times of the traces (s).
        cwnd, ssthresh, rtt: sampled per flow, arrays of shape
            ``(len(times), n_flows)`` (segments, segments, s).
        queue: the bottleneck's backlog at each sample time (packets).
    """

    def __init__(self, scenario: Scenario) -> None:
        self.scenario = sc = scenario
        self.env = env = simpy.Environment()
        dt = sc.sample_interval
        n_bins = int(math.ceil(sc.duration / dt - 1e-9))  # bins/samples in [0, duration)
        self.n_bins = n_bins
        seeds = np.random.SeedSequence(sc.seed).generate_state(2 * len(sc.links))
        self.links = [LinkState(link, sc.packet_size, (int(seeds[2 * i]), int(seeds[2 * i + 1])),
                                n_bins, dt) for i, link in enumerate(sc.links)]
        self.data_packets = 0
        one_way = sum(link.delay for link in sc.links)
        self.senders: list[Sender] = []
        self.receivers: list[Receiver] = []
        for i, flow in enumerate(sc.flows):
            access = (sc.flow_rtt(i) - sc.path_rtt) / 2.0  # one way, both sides together
            access = max(access, 0.0)  # rtt == path rtt up to rounding
            rec = flow.make_recovery()
            receiver = Receiver(
                sack=sc.sack or rec.uses_sack, delayed_ack=sc.delayed_ack,
                ack_delay=sc.delayed_ack_timeout, back=one_way + access,
                schedule=self.schedule, deliver_ack=None, n_bins=n_bins, bin_width=dt)
            sender = Sender(
                flow.make_algorithm(), rec, now=lambda: env.now,
                transmit=self._path(receiver, access / 2.0, access / 2.0,
                                    Counter(flow.drop_segments), flow.ecn),
                schedule=self.schedule, initial_window=sc.initial_window, mss=sc.mss,
                rwnd=min(math.inf if sc.rwnd is None else math.floor(sc.rwnd / sc.mss),
                         self._path_cap(i)),
                min_rto=sc.min_rto, initial_rto=sc.initial_rto, max_rto=sc.max_rto,
                end_seq=(math.ceil(flow.size / sc.mss) if flow.size is not None
                         else math.inf),
                packet_bits=sc.packet_size * 8.0,
                ack_counting=sc.ack_counting, rtt_granularity=sc.rtt_granularity,
                limited_transmit=sc.limited_transmit)
            receiver.deliver_ack = sender.on_ack  # the two ends know each other
            receiver.deliver_ce = sender.on_ack_ce  # ACKs echoing ECN marks
            self.senders.append(sender)
            self.receivers.append(receiver)
            env.schedule(_Call(env, lambda s: s.start(), sender), NORMAL, flow.start)
            if flow.stop is not None and flow.stop < sc.duration:
                env.schedule(_Call(env, lambda s: s.stop(), sender), NORMAL, flow.stop)
        self.times = np.arange(n_bins) * dt
        shape = (n_bins, len(sc.flows))
        self.cwnd = np.full(shape, np.nan)
        self.ssthresh = np.full(shape, np.nan)
        self.rtt = np.full(shape, np.nan)
        self.queue = np.zeros(n_bins)
        self.bar = None  # the progress bar while a run shows one
        env.schedule(_Call(env, self._sample, 0), NORMAL, 0.0)

    def _path_cap(self, i: int) -> float:
        """The most segments flow ``i`` keeps outstanding, whatever its window:
        ten times what the path can hold (its bandwidth-delay product at the
        bottleneck plus every buffer on the way), so a window law that asks
        for a window far beyond it costs no more work per ACK than the path
        allows (the fluid engine caps the same way)."""
        sc = self.scenario
        buffers = sum(link.limit for link in self.links)
        return 10.0 * (sc.bdp_packets(i) + buffers)

    def schedule(self, at: float, fn: Callable, payload: Any) -> None:
        """Call ``fn(payload)`` at simulation time ``at`` (s, not in the past)."""
        env = self.env
        env.schedule(_Call(env, fn, payload), NORMAL, at - env.now)

    def _path(self, receiver: Receiver, before: float, after: float,
              drops: Counter[int], ecn: bool = False) -> Callable:
        """The function a sender transmits with: across every link to ``receiver``.

        ``before`` and ``after`` are the flow's one-way access delays in front
        of the first link and behind the last (s); the first ``drops[seq]``
        transmissions of segment ``seq`` are lost on the way in. ``ecn``: the
        flow is ECN-capable; a packet any link marks reaches the receiver CE.
        """
        links = [link.forward for link in self.links]
        receive = receiver.receive
        engine = self

        def enter(seq: int, t: float) -> None:
            for forward in links:
                t = forward(t)
                if t < 0.0:
                    return
            receive(seq, t + after)

        if ecn:
            states, receive_ce = self.links, receiver.receive_ce

            def enter(seq: int, t: float) -> None:  # the ECN-capable variant
                ce = False
                for link in states:
                    t = link.forward_ect(t)
                    if t < 0.0:
                        return
                    ce = ce or link.ce
                (receive_ce if ce else receive)(seq, t + after)

        if before <= 0.0:
            def transmit(seq: int, now: float) -> None:
                engine.data_packets += 1
                enter(seq, now)
        else:
            def transmit(seq: int, now: float) -> None:
                engine.data_packets += 1
                self.schedule(now + before, _enter_later, (enter, seq, now + before))
        if not drops:
            return transmit

        def transmit_or_drop(seq: int, now: float) -> None:
            if seq in drops:
                drops[seq] -= 1
                if not drops[seq]:
                    del drops[seq]
                engine.data_packets += 1
                return
            transmit(seq, now)
        return transmit_or_drop

    def _sample(self, k: int) -> None:
        """Record the traced state at ``k · sample_interval`` and re-arm."""
        t = self.times[k]
        for i, s in enumerate(self.senders):
            if s.started and s.done_at is None:
                self.cwnd[k, i] = s.cc.cwnd
                self.ssthresh[k, i] = s.cc.ssthresh
                self.rtt[k, i] = s.last_rtt
        self.queue[k] = self.links[self.scenario.bottleneck].backlog(t)
        if self.bar is not None:
            self.bar.update(t - self.bar.n)
        if k + 1 < len(self.times):
            self.env.schedule(_Call(self.env, self._sample, k + 1), NORMAL,
                              self.times[k + 1] - self.env.now)

    def run(self, progress: bool = False) -> Result:
        """Simulate until the scenario's duration and assemble the result;
        ``progress``: a bar in simulated seconds, moved at every trace sample."""
        sc = self.scenario
        start = time.perf_counter()
        if progress:
            from ..run import progress_bar

            self.bar = progress_bar(sc.duration, "packet run")
        try:
            self.env.run(until=sc.duration)
        finally:
            if self.bar is not None:
                self.bar.update(sc.duration - self.bar.n)
                self.bar.close()
                self.bar = None
        wall = time.perf_counter() - start
        n = self.n_bins
        flows = []
        for flow, s in zip(sc.flows, self.senders):
            end = min(sc.duration, math.inf if flow.stop is None else flow.stop,
                      math.inf if s.done_at is None else s.done_at)
            flows.append({"end": end,
                          "done_at": s.done_at, "retransmits": s.retransmits,
                          "timeouts": s.timeouts, "recoveries": s.recoveries,
                          "rtt_sum": s.rtt_sum, "rtt_count": s.rtt_count})
        bottleneck = self.links[sc.bottleneck]
        delivered = np.array([r.delivered_per_bin[:n] for r in self.receivers], float).T
        return build(sc, "packet", times=self.times, cwnd=self.cwnd, ssthresh=self.ssthresh,
                     rtt=self.rtt, queue=self.queue, delivered=delivered,
                     departures=np.array(bottleneck.departures_per_bin[:n], float),
                     flows=flows,
                     extra={"drops": bottleneck.drops, "losses": bottleneck.losses,
                            **({"marks": bottleneck.marks}  # CE marks, when a flow can take them
                               if any(f.ecn for f in sc.flows) else {}),
                            "data_packets": self.data_packets, "wall_time": wall})


def _enter_later(args: tuple[Callable, int, float]) -> None:
    enter, seq, t = args
    enter(seq, t)
