"""Flows: one TCP connection each, its window law, recovery and timing.

A :class:`Flow` names its algorithm (and recovery strategy) by their
registered names, so that a scenario serialises and hashes by name;
:func:`as_flow` reads the entries of a builder's ``flows`` list.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from .. import algorithms, recovery
from ..errors import ScenarioError, ScenarioTypeError
from ..units import parse_rate, parse_size
from .checks import seconds, set_normalised
from .links import MIN_RATE
from .source_spec import normalised_source

ACK_COUNTINGS = ("segments", "acks", "acks-in-slow-start", "acks-in-congestion-avoidance")
"""What a window law is told an ACK acknowledged (``Scenario.ack_counting``
says what each means)."""


def host_queue(value: Any, field: str) -> int:
    """A host queue's size (:attr:`Flow.access_buffer`): a whole number of
    packets ≥ 1, else an error naming ``field``."""
    if (isinstance(value, bool) or not isinstance(value, numbers.Real)
            or not 1 <= value < float("inf") or value != int(value)):
        raise ScenarioError(field, value, "a whole number of packets ≥ 1, such as 1000 "
                            "(Linux's txqueuelen), or None (an unbounded host queue)")
    return int(value)


@dataclass(frozen=True)
class Flow:
    """One TCP connection from a sender to a receiver across the whole path.

    Attributes:
        algorithm: registered congestion-control name (see
            ``ccsim.algorithms.names()``); a registered class is accepted and
            stored by name.
        start: time the flow opens (s).
        stop: time a bulk flow stops sending new data (s), or ``None``.
        size: bytes to transfer; the flow ends when all are acknowledged and
            reports its completion time. ``None`` is an unlimited backlog.
        rtt: the flow's two-way propagation delay (s); the difference from the
            path's own is made up by access delays split evenly between the
            sender and receiver sides. ``None``: the path's.
        recovery: loss-recovery strategy (``ccsim.recovery.names()``);
            ``None``: the algorithm's own default.
        params: the algorithm's keyword arguments, given as a dict and stored
            as sorted ``(name, value)`` pairs.
        drop_segments: segment numbers (0 = the first) whose first
            transmission is lost on the way into the first link — the chosen
            drops of Fall & Floyd's multiple-drop experiments (CCR 1996). A
            number given k times loses the segment's first k transmissions
            (so ``(7, 7)`` loses its first retransmission as well).
        ecn: the flow is ECN-capable (RFC 3168): its packets may be marked
            instead of dropped by a queue with ECN on, its receiver echoes
            the marks and its sender reduces its window at most once per
            window of data (:meth:`~ccsim.algorithms.CongestionControl.on_ecn`).
            ``"accecn"``: ECN-capable with Accurate ECN feedback (RFC 9768,
            :mod:`ccsim.packet.accecn`): the receiver's ACE counter on every
            ACK, decoded by the sender into newly marked segments.
            ``None`` (the default): the algorithm's own ``ecn`` (on for
            DCTCP, which Linux runs with ECN only; ``"accecn"`` for TCP
            Prague, which refuses any other; off for every other law).
        route: ``(first, last)``, the indices of the first and the last link
            of the path's chain the flow crosses (cross traffic that joins and
            leaves part of the way, as in :func:`parking_lot`); ``None``: the
            whole chain.
        overhead: the most a segment waits at the sender before it leaves
            (s): each waits a random time, uniform in ``[0, overhead]`` and
            drawn from the scenario's seed, behind the segment before it (so
            none overtakes another). ns-2's ``overhead_``, the remedy Floyd &
            Jacobson (1992) give for phase effects: without it, loss-free
            drop-tail flows in a deterministic simulator can lock into a
            pattern in which one flow takes every drop. About one bottleneck
            packet time breaks the locks. Packet engine only.
        reverse: the flow's data crosses the chain right to left, over each
            link's reverse side (every link is duplex: its reverse side has the
            same rate, delay, kind of queue and loss, with a queue of its own),
            and its ACKs come back left to right through the forward queues.
            With a ``route``, the data enters at link ``last`` and leaves at
            ``first``. A scenario with a reverse flow carries traffic both
            ways, so every flow's ACKs queue behind the other direction's data
            (Zhang, Shenker & Clark 1991; ``docs/engine.md``). ``False`` (the
            default): left to right.
        access_rate: the rate of the sending host's NIC (bit/s; strings such
            as ``"1Gbps"`` accepted), or ``None``: an infinitely fast host.
            Builders set it from their ``access`` keyword.
        access_buffer: the sending host's queue in front of its NIC, in
            packets (the qdisc and the NIC's ring together), or ``None``
            (the default): unbounded. Needs ``access_rate``. A segment the
            sender hands to a full host queue is a local congestion signal,
            as a 2011 Linux kernel's ``NET_XMIT_DROP`` from a full qdisc was
            (``tcp_enter_cwr``): the window is reduced as for a loss, at most
            once per window of data, and the segment waits at the host until
            the queue has room (nothing is lost or resent). Builders set it
            from ``access={"rate": ..., "buffer": ...}``; docs/stack.md,
            "The host queue". Packet engine only.
        access_jitter: the most a packet leaving the sending host's NIC is
            delayed (s), uniform in ``[0, access_jitter]`` and drawn from the
            scenario's seed, none overtaking another: the NIC's timing
            against the next link's (clocks of one nominal rate drift apart,
            interrupts and DMA vary), which a simulator's exact rates lock
            in phase. About one NIC packet time breaks the lock, the remedy
            Floyd & Jacobson (1992) give for phase effects. ``0`` (the
            default): exact. Needs ``access_rate``. Packet engine only.
        source: ``None`` for a TCP flow; for an unresponsive UDP source the
            sending pattern (made by :func:`~ccsim.CBR` or
            :func:`~ccsim.OnOff`; stored as sorted pairs), and then
            ``algorithm`` is a placeholder never run.
    """

    algorithm: str
    start: float = 0.0
    stop: float | None = None
    size: float | None = None
    rtt: float | None = None
    recovery: str | None = None
    params: tuple[tuple[str, Any], ...] = ()
    drop_segments: tuple[int, ...] = ()
    ecn: bool | str | None = None
    route: tuple[int, int] | None = None
    overhead: float = 0.0
    reverse: bool = False
    ack_counting: str | None = None
    access_rate: float | None = None
    source: Any = None
    access_buffer: int | None = None
    access_jitter: float = 0.0

    def __post_init__(self) -> None:
        algo = self.algorithm
        if isinstance(algo, type):
            name = getattr(algo, "name", None)
            if not algorithms.registry.REGISTRY.holds(algo):
                raise ScenarioError("flow.algorithm", algo, "a registered algorithm",
                                    "call ccsim.algorithms.register(cls) first")
            algo = name
        cls = algorithms.get(algo)
        start = seconds(self.start, "flow.start", positive=False)
        stop = None if self.stop is None else seconds(self.stop, "flow.stop", positive=True)
        if stop is not None and stop <= start:
            raise ScenarioError("flow.stop", self.stop, f"a time after start={start} s")
        size = None if self.size is None else parse_size(self.size, "flow.size")
        if size is not None and size <= 0:
            raise ScenarioError("flow.size", self.size, "a size > 0 bytes, such as '1MB'")
        rtt = None if self.rtt is None else seconds(self.rtt, "flow.rtt", positive=True)
        rec = None if self.recovery is None else recovery.get(self.recovery).name
        if rec is not None and cls.preset and rec != cls.recovery:
            raise ScenarioError("flow.recovery", rec,
                                f"{cls.recovery!r} or None with {cls.name!r}, which means Reno's "
                                f"window law with {cls.recovery!r} recovery",
                                f"for Reno's law with {rec!r} recovery: "
                                f"Flow('reno', recovery={rec!r})")
        params = self.params
        if isinstance(params, Mapping):
            params = params.items()
        try:
            params = tuple(sorted((str(k), v) for k, v in params))
        except (TypeError, ValueError):
            raise ScenarioTypeError("flow.params", self.params,
                                    "a dict of the algorithm's keyword arguments") from None
        params = tuple(sorted(cls.validate_params(dict(params), "flow.params").items()))
        try:
            cls(**dict(params))
        except TypeError as exc:
            raise ScenarioTypeError("flow.params", dict(params),
                                    f"keyword arguments {algo!r} accepts", str(exc)) from None
        drops = self.drop_segments
        if isinstance(drops, (str, bytes)) or not isinstance(drops, Iterable) or not all(
                isinstance(d, numbers.Integral) and not isinstance(d, bool) and d >= 0
                for d in drops):
            raise ScenarioTypeError("flow.drop_segments", drops,
                                    "a list of segment numbers, integers ≥ 0")
        ecn = cls.ecn if self.ecn is None else self.ecn
        if not (isinstance(ecn, bool) or ecn == "accecn"):
            raise ScenarioTypeError("flow.ecn", self.ecn, "True (RFC 3168 feedback), 'accecn' "
                                    "(Accurate ECN, RFC 9768), False or None (the algorithm's "
                                    "default)")
        if cls.own_ecn_response and ecn != "accecn":
            raise ScenarioError("flow.ecn", self.ecn,
                                f"'accecn' or None with {cls.name!r}, which reacts to each "
                                f"ACK's newly marked segments and needs Accurate ECN "
                                f"feedback (RFC 9768)")
        route = self.route
        if route is not None:
            if (isinstance(route, (str, bytes)) or not isinstance(route, Iterable)
                    or len(route := tuple(route)) != 2
                    or not all(isinstance(k, numbers.Integral) and not isinstance(k, bool)
                               and k >= 0 for k in route)
                    or route[0] > route[1]):
                raise ScenarioTypeError("flow.route", self.route,
                                        "(first, last): link indices, first <= last, or None")
            route = (int(route[0]), int(route[1]))
        overhead = seconds(self.overhead, "flow.overhead", positive=False)
        if not isinstance(self.reverse, bool):
            raise ScenarioTypeError("flow.reverse", self.reverse,
                                    "True (data right to left, over each link's reverse side) "
                                    "or False (left to right, the default)")
        if self.ack_counting not in (None, *ACK_COUNTINGS):
            raise ScenarioError("flow.ack_counting", self.ack_counting,
                                f"one of {ACK_COUNTINGS} or None (the scenario's or its "
                                "stack's)")
        access_rate = None
        if self.access_rate is not None:
            access_rate = parse_rate(self.access_rate, "flow.access_rate")
            if not access_rate >= MIN_RATE:
                raise ScenarioError("flow.access_rate", self.access_rate,
                                    f"a rate ≥ {MIN_RATE:g} bit/s such as '1Gbps', or None "
                                    "(infinitely fast hosts)")
        set_normalised(self, access_rate=access_rate)
        access_buffer = self.access_buffer
        if access_buffer is not None:
            access_buffer = host_queue(access_buffer, "flow.access_buffer")
            if access_rate is None:
                raise ScenarioError("flow.access_buffer", access_buffer,
                                    "None for a host without a NIC (access_rate None)",
                                    "a host queue drains at its NIC's rate: give "
                                    "access_rate, or access={'rate': ..., 'buffer': ...}")
            set_normalised(self, access_buffer=access_buffer)
        access_jitter = seconds(self.access_jitter, "flow.access_jitter", positive=False)
        if access_jitter and access_rate is None:
            raise ScenarioError("flow.access_jitter", self.access_jitter,
                                "0 for a host without a NIC (access_rate None)",
                                "the jitter delays packets leaving the NIC")
        set_normalised(self, access_jitter=access_jitter)
        source = normalised_source(self.source)
        if source is not None and (self.size is not None or self.reverse or drops
                                   or self.route is not None or access_buffer is not None
                                   or access_jitter):
            raise ScenarioError("flow.source", dict(source), "a source without size, reverse, "
                                "route, access_buffer, access_jitter or drop_segments (a UDP source sends at "
                                "its own pace left to right across the whole path)")
        set_normalised(self, source=source, algorithm=cls.name, recovery=rec, start=start,
                       stop=stop,
                       size=size, rtt=rtt, params=params, ecn=ecn, route=route,
                       overhead=overhead, drop_segments=tuple(sorted(int(d) for d in drops)))

    def make_algorithm(self) -> algorithms.CongestionControl:
        """A fresh instance of the flow's window law with its parameters."""
        return algorithms.get(self.algorithm)(**dict(self.params))

    @property
    def recovery_name(self) -> str:
        """The recovery strategy in force: ``recovery`` or the algorithm's default."""
        return self.recovery or algorithms.get(self.algorithm).recovery

    def make_recovery(self) -> recovery.Recovery:
        """A fresh instance of the flow's recovery strategy."""
        return recovery.get(self.recovery_name)()

    @property
    def label(self) -> str:
        """Short human label: the algorithm, plus the recovery if overridden,
        and ``(reverse)`` for a flow sending right to left."""
        if self.source is not None:
            return dict(self.source)["kind"]
        return (self.algorithm + (f"+{self.recovery}" if self.recovery else "")
                + (" (reverse)" if self.reverse else ""))


def as_flow(spec: Any, i: int) -> Flow:
    """The ``i``-th entry of a ``flows`` list as a :class:`Flow`: a Flow as it
    is, a dict as its keywords, an algorithm name or registered class as
    ``Flow(spec)``; anything else is refused naming ``flows[i]``."""
    if isinstance(spec, Flow):
        return spec
    if isinstance(spec, Mapping):
        return Flow(**spec)
    if isinstance(spec, (str, type)):
        return Flow(spec)
    raise ScenarioTypeError(f"flows[{i}]", spec, "an algorithm name, a ccsim.Flow or a dict")
