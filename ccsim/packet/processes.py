"""SimPy processes of one's own: what a user's process sees of a run.

``ccsim.run(sc, processes=[fn])`` calls ``fn(env, net)`` once, at time 0,
and runs the generator it returns as a SimPy process on the packet engine's
clock: ``env`` is the :class:`simpy.Environment` (``yield env.timeout(s)``)
and ``net`` a :class:`Network`, the handles below. Each process's events run
after the engine's events due before them. Example: a link that fails for
2 s at t = 10 s::

    def outage(env, net):
        yield env.timeout(10.0)
        net.link().loss = 1.0      # every packet on the wire lost
        yield env.timeout(2.0)
        net.link().loss = 0.0

What a change reaches: the packet engine gives each packet its departure
time as it joins a queue, so a new rate or delay applies to packets that
arrive at the link from then on (those queued keep theirs); a delay may only
grow (a packet never overtakes one on the wire); a loss or limit applies at
once. A process may add a flow the scenario does not declare
(:meth:`Network.add_flow`): it opens as a declared flow with that start
would, and the result's scenario, summary and traces have it as one more
flow. Not possible: changing a link that has a rate schedule (its schedule
is its rate). Example: a new flow started when flow 0 finishes::

    def relay(env, net):
        yield net.flow(0).finished()
        net.add_flow(ccsim.Flow("bbr", size=500_000))
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Callable, Iterable

from ..errors import ScenarioError, ScenarioTypeError
from ..scenario import MIN_RATE

if TYPE_CHECKING:
    import simpy

    from .engine import PacketEngine


class LinkHandle:
    """One link of the path (its forward side), read and set from a process."""

    __slots__ = ("_engine", "_state", "index")

    def __init__(self, engine: "PacketEngine", index: int) -> None:
        self._engine, self.index = engine, index
        self._state = engine.links[index]

    @property
    def rate(self) -> float:
        """Transmission rate (bit/s): a schedule's rate in force on a link
        that has one (its window mean, for a Mahimahi trace)."""
        schedule = getattr(self._state, "schedule", None)
        if schedule is not None:
            return schedule.rate_at(self._engine.now)
        return self._engine.scenario.packet_size * 8.0 / self._state.tx

    @rate.setter
    def rate(self, value: float) -> None:
        if getattr(self._state, "schedule", None) is not None:
            raise ScenarioError(f"links[{self.index}].rate", value,
                                "unchanged on a link with a rate schedule",
                                "the schedule is its rate; give the change as a step")
        if isinstance(value, bool) or not isinstance(value, (int, float)) \
                or not value >= MIN_RATE or not math.isfinite(value):
            raise ScenarioError(f"links[{self.index}].rate", value,
                                f"a finite rate ≥ {MIN_RATE:g} bit/s (a failed link: loss = 1)")
        sc = self._engine.scenario
        self._state.tx = sc.packet_size * 8.0 / value
        self._state.ack_tx = self._state.ack_tx and sc.header * 8.0 / value

    @property
    def delay(self) -> float:
        """Propagation delay (s)."""
        return self._state.delay

    @delay.setter
    def delay(self, value: float) -> None:
        if isinstance(value, bool) or not isinstance(value, (int, float)) \
                or not math.isfinite(value) or value < self._state.delay:
            raise ScenarioError(f"links[{self.index}].delay", value,
                                f"a finite delay ≥ the current {self._state.delay:g} s",
                                "packets keep their order: a shorter delay would let one "
                                "overtake those on the wire")
        self._state.delay = float(value)

    @property
    def loss(self) -> float:
        """Probability that a data packet is lost after the link, in [0, 1]
        (1: the link is down)."""
        return self._state.loss

    @loss.setter
    def loss(self, value: float) -> None:
        if isinstance(value, bool) or not isinstance(value, (int, float)) \
                or not 0.0 <= value <= 1.0:
            raise ScenarioError(f"links[{self.index}].loss", value, "a probability in [0, 1]")
        self._state.loss = float(value)

    @property
    def limit(self) -> float:
        """The queue's buffer (packets waiting, the one in service not counted)."""
        return self._state.limit

    @limit.setter
    def limit(self, value: float) -> None:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 1:
            raise ScenarioError(f"links[{self.index}].limit", value, "at least one packet")
        self._state.limit = value

    @property
    def backlog(self) -> int:
        """Packets waiting in the queue now (the one in service not counted)."""
        return self._state.backlog(self._engine.now)

    @property
    def drops(self) -> int:
        """Packets the queue dropped so far."""
        return self._state.drops

    @property
    def losses(self) -> int:
        """Packets lost to link errors so far (``loss``)."""
        return self._state.losses


class FlowHandle:
    """One flow: its sender's state, and its start and stop."""

    __slots__ = ("_engine", "_sender", "index")

    def __init__(self, engine: "PacketEngine", index: int) -> None:
        self._engine, self.index = engine, index
        self._sender = engine.senders[index]

    def _tcp(self, what: str) -> Any:
        """The flow's TCP sender; a UDP source (ccsim.CBR, ccsim.OnOff) has
        none of what a process reads or changes of a TCP flow."""
        if not hasattr(self._sender, "cc"):
            raise ScenarioError(f"flows[{self.index}]", what, "a TCP flow",
                                "a UDP source has no window, RTT or start of its own to "
                                "control; it sends from its start time")
        return self._sender

    @property
    def cwnd(self) -> float:
        """Congestion window (segments), NaN before the flow opens."""
        return getattr(self._tcp("cwnd").cc, "cwnd", math.nan)

    @property
    def ssthresh(self) -> float:
        """Slow-start threshold (segments), NaN before the flow opens."""
        return getattr(self._tcp("ssthresh").cc, "ssthresh", math.nan)

    @property
    def srtt(self) -> float:
        """Smoothed RTT (s; RFC 6298), NaN before the first sample."""
        return self._tcp("srtt").rtt.srtt

    @property
    def min_rtt(self) -> float:
        """Smallest RTT sampled (s), NaN before the first sample."""
        return self._tcp("min_rtt").rtt.min_rtt

    @property
    def rtt(self) -> float:
        """The smoothed RTT, or the flow's base RTT before the first sample (s):
        what ``yield env.timeout(flow.rtt)`` waits for once per RTT."""
        srtt = self._tcp("rtt").rtt.srtt
        return srtt if srtt == srtt else self._engine.scenario.flow_rtt(self.index)

    @property
    def delivered(self) -> float:
        """Segments delivered so far (cumulatively or selectively acknowledged)."""
        return self._tcp("delivered").delivered

    @property
    def delivered_bytes(self) -> float:
        """Bytes delivered so far (``delivered`` × MSS)."""
        return self._tcp("delivered_bytes").delivered * self._sender.mss

    @property
    def started(self) -> bool:
        """The flow has opened."""
        return self._tcp("started").started

    @property
    def done(self) -> bool:
        """The flow has finished: its last segment acknowledged (a sized
        flow's, or after :meth:`stop`)."""
        return self._tcp("done").done_at is not None

    def hold(self) -> None:
        """Do not open the flow at its scenario start: a process will call
        :meth:`start`. Call it before the flow's start time."""
        if self._tcp("hold()").started:
            raise ScenarioError(f"flows[{self.index}]", "hold()",
                                "a flow that has not opened yet",
                                "hold it before its start time (start=... in the scenario)")
        self._engine.held.add(self.index)

    def start(self) -> None:
        """Open the flow now (one held with :meth:`hold`)."""
        if self._tcp("start()").started:
            raise ScenarioError(f"flows[{self.index}]", "start()", "a flow not opened yet")
        self._engine.held.discard(self.index)
        self._engine.clock.schedule(self._engine.now, self._engine.open_flow, self.index)

    def stop(self) -> None:
        """Send no new data from now on; the flow ends once what it sent is
        acknowledged."""
        sender = self._tcp("stop()")
        self._engine.clock.schedule(self._engine.now, type(sender).stop, sender)

    def finished(self, poll: float = 0.001) -> "simpy.Process":
        """A SimPy event that fires once the flow is :attr:`done`, checked
        every ``poll`` seconds: ``yield net.flow(0).finished()``."""
        self._tcp("finished()")
        env = self._engine.env

        def wait():
            while self._sender.done_at is None:
                yield env.timeout(poll)
        return env.process(wait())


class Network:
    """What a user's process sees of a run (see the module's description).

    Attributes:
        env: the SimPy environment (its ``now`` is the simulation time, s).
    """

    def __init__(self, engine: "PacketEngine") -> None:
        self._engine = engine
        self.env = engine.env
        self._links = [LinkHandle(engine, k) for k in range(len(engine.links))]
        self._flows = [FlowHandle(engine, i) for i in range(len(engine.senders))]

    @property
    def scenario(self) -> Any:
        """The scenario being run, with the flows added so far declared."""
        return self._engine.scenario

    @property
    def now(self) -> float:
        """Simulation time (s)."""
        return self._engine.now

    def add_flow(self, flow: Any, at: float | None = None) -> FlowHandle:
        """Add a flow the scenario does not declare, and return its handle.

        ``flow`` is a :class:`ccsim.Flow` (or a ``ccsim.CBR(...)`` /
        ``ccsim.OnOff(...)`` source) with its ``start`` left unset; it opens at
        ``at`` (s; default now, never before now) as a declared flow with
        ``start = at`` would, start jitter included. It takes the next index
        (``len(net.flows) - 1``), and the result has it as one more flow: a
        row of the summary, a column of the traces, its ``fct`` if sized.
        Refused: a reverse flow in a run with none declared, a ``route`` over
        part of the chain in a run whose flows all cross all of it."""
        i = self._engine.add_flow(flow, self.now if at is None else at)
        self._flows.append(FlowHandle(self._engine, i))
        return self._flows[i]

    def link(self, index: int | None = None) -> LinkHandle:
        """Link ``index`` of the path (default: the bottleneck)."""
        k = self.scenario.bottleneck if index is None else index
        if not isinstance(k, int) or not 0 <= k < len(self._links):
            raise ScenarioError("link", index, f"a link index in 0..{len(self._links) - 1}")
        return self._links[k]

    def flow(self, index: int) -> FlowHandle:
        """Flow ``index`` of the scenario."""
        if isinstance(index, bool) or not isinstance(index, int) \
                or not 0 <= index < len(self._flows):
            raise ScenarioError("flow", index, f"a flow index in 0..{len(self._flows) - 1}")
        return self._flows[index]

    @property
    def links(self) -> list[LinkHandle]:
        """Every link, in path order."""
        return list(self._links)

    @property
    def flows(self) -> list[FlowHandle]:
        """Every flow, in scenario order."""
        return list(self._flows)


def start_processes(engine: "PacketEngine", processes: Iterable[Callable[..., Any]]) -> None:
    """Call each ``fn(env, net)`` and run what it returns as a SimPy process."""
    net = Network(engine)
    for k, fn in enumerate(processes):
        if not callable(fn):
            raise ScenarioTypeError(f"processes[{k}]", fn,
                                    "a function fn(env, net) returning a SimPy generator")
        gen = fn(engine.env, net)
        if not hasattr(gen, "send") or not hasattr(gen, "throw"):
            raise ScenarioTypeError(f"processes[{k}]", fn,
                                    "a generator function: fn(env, net) must yield SimPy "
                                    "events (yield env.timeout(1.0))")
        engine.env.process(_guarded(engine, gen))


def _guarded(engine: "PacketEngine", gen: Any) -> Any:
    """Run ``gen``; an exception it raises is kept on the engine, which raises
    it as it was (SimPy rebuilds a failed process's exception from its
    ``args``, which ccsim's errors do not survive)."""
    try:
        return (yield from gen)
    except Exception as exc:
        engine.process_error = exc
        raise RuntimeError(f"a process failed: {exc}") from None
