"""Scenario: an immutable, validated description of what to simulate.

A scenario is a chain of links that every flow crosses in order, left to
right or, for a reverse flow, right to left (a dumbbell is a chain of one: the
bottleneck), per-flow access delays that give flows different RTTs, the flows
themselves, and the TCP stack's knobs. Every value
is checked when the scenario is built and stored in base units (seconds,
bit/s, bytes, segments), so a scenario round-trips through dict, JSON and
TOML unchanged and has a stable content hash, :attr:`Scenario.key`.

Build one with :func:`dumbbell` or :func:`path`; the dataclasses below are
what those return and what the engines read.
"""

from __future__ import annotations

import dataclasses
import difflib
import hashlib
import json
import math
import numbers
import tomllib
from dataclasses import dataclass, field
from typing import Any, ClassVar, Iterable, Mapping

from . import algorithms, queues, recovery
from .errors import ScenarioError, ScenarioTypeError
from .queues import RED, DropTail, QueueDiscipline
from .units import parse_buffer, parse_rate, parse_size, parse_time

__all__ = ["DropTail", "RED", "Link", "Flow", "Scenario", "dumbbell", "parking_lot", "path"]

SCHEMA = 1

MIN_RATE = 1000.0
"""Slowest link (bit/s): a 1,500-byte packet in 12 s. Below it serialisation
times overflow the clock's precision (1e-300 bit/s gave 1e304 s per packet)."""

TRACE_VARIABLES_PER_FLOW = ("cwnd", "ssthresh", "rtt", "goodput")
"""Traced per flow; the bottleneck's queue is traced once per scenario."""
MAX_TRACE_ROWS = 20_000_000
"""Most rows of tidy traces a scenario may ask for with ``trace_interval``."""
TRACE_BYTES_PER_ROW = 100
"""Peak memory to assemble one trace row (bytes; measured: 97 for a run's
tidy traces, including the per-flow arrays they are built from)."""
"""Version of the dict layout written by :meth:`Scenario.to_dict`."""


# -- small validators ----------------------------------------------------------
def _real(value: Any, field: str, allowed: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ScenarioTypeError(field, value, allowed)
    value = float(value)
    if not math.isfinite(value):
        raise ScenarioError(field, value, allowed)
    return value


def _positive(value: Any, field: str, what: str = "a number") -> float:
    value = _real(value, field, f"{what} > 0")
    if value <= 0:
        raise ScenarioError(field, value, f"{what} > 0")
    return value


def _probability(value: Any, field: str) -> float:
    allowed = "a probability in [0, 1)"
    value = _real(value, field, allowed)
    if not 0.0 <= value < 1.0:
        raise ScenarioError(field, value, allowed)
    return value


def _bytes(value: Any, field: str, minimum: int) -> int:
    """A whole number of bytes, from an int or a size such as ``"1460B"``."""
    if isinstance(value, str):
        value = parse_size(value, field)
        if value != int(value):
            raise ScenarioError(field, value, "a whole number of bytes")
        value = int(value)
    return _whole(value, field, minimum, f"a whole number of bytes ≥ {minimum}, such as 1460")


def _whole(value: Any, field: str, minimum: int, allowed: str) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ScenarioTypeError(field, value, allowed)
    if value < minimum:
        raise ScenarioError(field, value, allowed)
    return int(value)


def _time(value: Any, field: str, *, positive: bool) -> float:
    seconds = parse_time(value, field)
    if positive and seconds <= 0:
        raise ScenarioError(field, value, "a time > 0, such as '20ms'")
    return seconds


_START_JITTER = 2  # the start jitter's stream (1: the packet engine's send overhead,
#                   3: its ACK jitter)
_MASK = (1 << 64) - 1


def _splitmix(z: int) -> int:
    """SplitMix64's finaliser (Steele, Lea & Flood, OOPSLA 2014) of ``z``."""
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return z ^ (z >> 31)


def _uniform(seed: int, stream: int, i: int) -> float:
    """A uniform in [0, 1) that depends only on ``(seed, stream, i)``."""
    z = _splitmix((seed * 0x9E3779B97F4A7C15) & _MASK)
    z = _splitmix(z ^ ((stream * 0x94D049BB133111EB) & _MASK))
    z = _splitmix(z ^ ((i + 0x9E3779B97F4A7C15) & _MASK))
    return (z >> 11) * 2.0 ** -53


def _set(obj: Any, **values: Any) -> None:
    """Store normalised values on a frozen dataclass during validation."""
    for name, value in values.items():
        object.__setattr__(obj, name, value)


# -- queues ---------------------------------------------------------------------
QUEUES = queues.base.REGISTRY
"""Queue kinds by name (``ccsim.queues.names()``); users' disciplines register too."""


def make_queue(queue: Any, buffer: Any, rate: float, rtt: float, packet_size: int,
               field: str) -> QueueDiscipline:
    """Build a queue from a name (``"droptail"``, ``"red"``, ``"codel"``,
    ``"pie"``, or a registered kind) and a buffer spec.

    ``buffer`` is packets, bytes (``"64KB"``) or a multiple of the
    bandwidth-delay product ``rate · rtt`` (``"1BDP"``), rounded to the nearest
    whole packet of ``packet_size`` bytes. A queue object is returned as it
    is, and then ``buffer`` must be ``None``.
    """
    if isinstance(queue, QueueDiscipline):
        if buffer is not None:
            raise ScenarioError(f"{field}.buffer", buffer,
                                "None when a queue object is given (it carries its limit)")
        return queue
    if not isinstance(queue, str) or queue.lower() not in QUEUES.names():
        allowed = ", ".join(repr(n) for n in QUEUES.names())
        raise ScenarioError(f"{field}.queue", queue, f"{allowed}, or a queue object such as "
                            "ccsim.CoDel(limit=100)")
    cls = QUEUES.get(queue)
    amount, kind = parse_buffer("1BDP" if buffer is None else buffer, f"{field}.buffer")
    if kind == "bdp":
        bdp = rate * rtt / (8.0 * packet_size)  # bits in flight / bits per packet
        amount, kind = float(round(amount * bdp)), "packets"
        if amount < 1:
            raise ScenarioError(f"{field}.buffer", buffer,
                                "at least one packet", f"1 BDP is {bdp:.3g} packets here")
    if kind == "bytes" and amount < packet_size:
        raise ScenarioError(f"{field}.buffer", buffer,
                            f"at least one packet ({packet_size} bytes)")
    if kind == "packets" and amount < 1:
        raise ScenarioError(f"{field}.buffer", buffer, "at least one packet")
    if cls is DropTail:
        return DropTail(limit=amount, unit=kind)
    if kind == "bytes":
        amount = float(amount // packet_size)
    try:
        return cls(limit=amount)
    except TypeError:
        raise ScenarioTypeError(f"{field}.queue", queue,
                                f"a {cls.__name__} object: {queue!r} has parameters without "
                                f"defaults (such as ccsim.StepMark(K=20))") from None


# -- links and flows ------------------------------------------------------------
@dataclass(frozen=True)
class Link:
    """A link: transmission at ``rate``, then ``delay`` of propagation.

    Attributes:
        rate: transmission rate (bit/s); strings such as ``"10Mbps"`` accepted.
        delay: one-way propagation delay (s); ``"5ms"`` accepted; may be 0.
        queue: the egress queue in front of the link.
        loss: probability that a data packet is lost on this link after being
            transmitted (random link error), in [0, 1).
    """

    rate: float
    delay: float
    queue: QueueDiscipline = field(default_factory=lambda: DropTail(1000))
    loss: float = 0.0

    def __post_init__(self) -> None:
        rate = parse_rate(self.rate, "link.rate")
        if not rate >= MIN_RATE:
            raise ScenarioError("link.rate", self.rate,
                                f"a rate ≥ {MIN_RATE:g} bit/s, such as '10Mbps'")
        queue = self.queue
        if isinstance(queue, str):
            queue = make_queue(queue, 1000, 0.0, 0.0, 1, "link")
        if not isinstance(queue, QueueDiscipline):
            raise ScenarioTypeError("link.queue", self.queue,
                                    "a queue name (" + ", ".join(QUEUES.names())
                                    + ") or a ccsim.QueueDiscipline such as ccsim.CoDel()")
        _set(self, queue=queue)
        _set(self, rate=rate, delay=_time(self.delay, "link.delay", positive=False),
             loss=_probability(self.loss, "link.loss"))


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
            ``None`` (the default): the algorithm's own ``ecn`` (on for
            DCTCP, which Linux runs with ECN only; off for every other law).
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
    """

    algorithm: str
    start: float = 0.0
    stop: float | None = None
    size: float | None = None
    rtt: float | None = None
    recovery: str | None = None
    params: tuple[tuple[str, Any], ...] = ()
    drop_segments: tuple[int, ...] = ()
    ecn: bool | None = None
    route: tuple[int, int] | None = None
    overhead: float = 0.0
    reverse: bool = False

    def __post_init__(self) -> None:
        algo = self.algorithm
        if isinstance(algo, type):
            name = getattr(algo, "name", None)
            if not algorithms.registry.REGISTRY.holds(algo):
                raise ScenarioError("flow.algorithm", algo, "a registered algorithm",
                                    "call ccsim.algorithms.register(cls) first")
            algo = name
        cls = algorithms.get(algo)
        start = _time(self.start, "flow.start", positive=False)
        stop = None if self.stop is None else _time(self.stop, "flow.stop", positive=True)
        if stop is not None and stop <= start:
            raise ScenarioError("flow.stop", self.stop, f"a time after start={start} s")
        size = None if self.size is None else parse_size(self.size, "flow.size")
        if size is not None and size <= 0:
            raise ScenarioError("flow.size", self.size, "a size > 0 bytes, such as '1MB'")
        rtt = None if self.rtt is None else _time(self.rtt, "flow.rtt", positive=True)
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
        if not isinstance(ecn, bool):
            raise ScenarioTypeError("flow.ecn", self.ecn, "True, False or None (the algorithm's "
                                    "default)")
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
        overhead = _time(self.overhead, "flow.overhead", positive=False)
        if not isinstance(self.reverse, bool):
            raise ScenarioTypeError("flow.reverse", self.reverse,
                                    "True (data right to left, over each link's reverse side) "
                                    "or False (left to right, the default)")
        _set(self, algorithm=cls.name, recovery=rec, start=start, stop=stop, size=size,
             rtt=rtt, params=params, ecn=ecn, route=route, overhead=overhead,
             drop_segments=tuple(sorted(int(d) for d in drops)))

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
        return (self.algorithm + (f"+{self.recovery}" if self.recovery else "")
                + (" (reverse)" if self.reverse else ""))


def _as_flow(spec: Any, i: int) -> Flow:
    if isinstance(spec, Flow):
        return spec
    if isinstance(spec, Mapping):
        return Flow(**spec)
    if isinstance(spec, (str, type)):
        return Flow(spec)
    raise ScenarioTypeError(f"flows[{i}]", spec, "an algorithm name, a ccsim.Flow or a dict")


# -- the scenario ---------------------------------------------------------------
@dataclass(frozen=True)
class Scenario:
    """Everything a run needs: path, flows, duration, seed and stack knobs.

    Attributes:
        links: the links every flow crosses, in order.
        flows: the flows.
        duration: simulated time (s).
        seed: seed of every random draw (random loss, RED, the start jitter);
            same seed, same result.
        bottleneck: index of the link whose queue and utilisation are
            reported; default the slowest (the first of equals).
        topology: ``"dumbbell"``, ``"path"`` or ``"parking_lot"``, for labels.
        mss: segment payload (bytes). Default 1460: a 1500-byte Ethernet MTU
            less 40 bytes of IPv4 and TCP headers (RFC 879, RFC 894).
        header: header bytes added to each data packet on the wire (40).
        initial_window: initial ``cwnd`` (segments). Default 10, RFC 6928 and
            Linux's ``TCP_INIT_CWND``.
        min_rto: lower bound of the retransmission timeout (s). Default 0.2,
            Linux's ``TCP_RTO_MIN``; RFC 6298 §2.4 says 1 s.
        initial_rto: RTO before the first RTT sample (s); 1, RFC 6298 §2.1.
        max_rto: upper bound of the backed-off RTO (s); 60, RFC 6298 §2.5.
        delayed_ack: receivers acknowledge every second segment (RFC 5681
            §4.2) instead of every segment. Default off.
        delayed_ack_timeout: longest an ACK is held (s). Default 0.04,
            Linux's ``TCP_DELACK_MIN``.
        sack: receivers send SACK blocks (RFC 2018) to every flow, whatever its
            recovery strategy; strategies that need SACK turn it on for their
            flow regardless.
        rwnd: receiver window (bytes), or ``None`` for no limit.
        trace_interval: sampling period of the time series (s), or ``None``
            (the default) for :attr:`sample_interval`'s automatic choice.
        ack_counting: what the window laws count as acknowledged. Default
            ``"segments"``: the segments an ACK newly acknowledges (RFC 3465
            appropriate byte counting; Linux). ``"acks"``: one per ACK that
            advances ``snd.una``, whatever it covers, as ns-2 and ns-3's
            NewReno grow, so with delayed ACKs windows grow at half speed
            (``Ack.acked`` is 1; recovery and delivery counts are unchanged).
        rtt_granularity: tick of the clock RTT samples are read from (s).
            Default 0: exact. ``"4ms"`` is a 250 Hz jiffy clock (the kernels
            of Esterhuizen & Krzesinski), ``"1ms"`` TCP timestamps. A sample is the difference
            of the two tick counts (send and ACK times truncated to the tick),
            and at least one tick, as Linux's jiffy-based estimator counted a
            zero-jiffy sample as one; the estimator, ``min_rtt`` and the
            window laws all see the ticked value.
        limited_transmit: RFC 3042: each of the first two duplicate ACKs
            outside recovery sends one new segment (up to cwnd + 2
            outstanding). Linux has the same effect built in (duplicates and
            SACKed segments leave ``tcp_packets_in_flight``), so ``True`` is
            the Linux-like setting; default ``False`` keeps ccsim's earlier
            behaviour and the ns-2 agents of Zhang & Bian and Lai & Yao, which lack it.
        tail_loss_probe: RFC 8985 §7 Tail Loss Probe for flows with SACK:
            when no ACK comes for ``PTO = 2·SRTT`` (plus 200 ms with one
            segment in flight, never past the RTO), send one new segment
            (beyond cwnd if need be) or, with none to send, the last one
            again, so that a loss at the tail of a flight is repaired by
            fast recovery instead of a timeout. Receivers then report
            duplicate segments as D-SACK (RFC 2883), and a tail loss the
            probe alone repaired (no D-SACK) still reduces the window, as
            Linux does. With it, RACK (the ``prr`` recovery) also keeps its
            reordering timer (RFC 8985 §6.3): segments it marks lost before
            three duplicate ACKs start a recovery ``min_rtt / 4`` later, as
            Linux does outside recovery. Linux has both on; default
            ``False`` keeps ccsim's earlier behaviour and the ns-2 agents,
            which lack them.
        start_jitter: the most each flow opens after its ``start`` (s): it
            opens at a random time uniform in ``[start, start + start_jitter)``,
            drawn from the seed and the flow's index (:meth:`flow_start`), so
            that different seeds give different runs: in a deterministic
            simulator loss-free drop-tail flows would otherwise repeat one
            phase pattern for every seed (Floyd & Jacobson 1992). ``None``
            (the default): up to the flow's own round-trip time (and never
            past its stop or the end). ``0``: every flow opens exactly at its
            ``start``, for studies of one phase (``Flow.overhead`` is the
            per-segment remedy to a phase lock).
    """

    links: tuple[Link, ...]
    flows: tuple[Flow, ...]
    duration: float
    seed: int = 0
    bottleneck: int | None = None
    topology: str = "path"
    mss: int = 1460
    header: int = 40
    initial_window: float = 10.0
    min_rto: float = 0.2
    initial_rto: float = 1.0
    max_rto: float = 60.0
    delayed_ack: bool = False
    delayed_ack_timeout: float = 0.04
    sack: bool = False
    rwnd: float | None = None
    trace_interval: float | None = None
    ack_counting: str = "segments"
    rtt_granularity: float = 0.0
    limited_transmit: bool = False
    tail_loss_probe: bool = False
    start_jitter: float | None = None
    ack_jitter: float | None = None

    KNOBS: ClassVar[tuple[str, ...]] = (
        "mss", "header", "initial_window", "min_rto", "initial_rto", "max_rto",
        "delayed_ack", "delayed_ack_timeout", "sack", "rwnd", "trace_interval",
        "ack_counting", "rtt_granularity", "limited_transmit", "tail_loss_probe",
        "start_jitter", "ack_jitter")

    def __post_init__(self) -> None:
        links = tuple(self.links) if isinstance(self.links, Iterable) else None
        if not links or not all(isinstance(x, Link) for x in links):
            raise ScenarioTypeError("links", self.links, "a non-empty sequence of ccsim.Link")
        if isinstance(self.flows, (str, Flow)) or not isinstance(self.flows, Iterable):
            raise ScenarioTypeError("flows", self.flows, "a list of algorithm names or ccsim.Flow")
        flows = tuple(_as_flow(f, i) for i, f in enumerate(self.flows))
        if not flows:
            raise ScenarioError("flows", self.flows, "at least one flow")
        duration = _time(self.duration, "duration", positive=True)
        _whole(self.seed, "seed", 0, "an integer ≥ 0")
        if self.topology not in ("dumbbell", "path", "parking_lot"):
            raise ScenarioError("topology", self.topology, "'dumbbell', 'path' or 'parking_lot'")
        mss, header = _bytes(self.mss, "mss", 1), _bytes(self.header, "header", 0)
        packet = mss + header
        for i, link in enumerate(links):
            if link.queue.unit == "bytes" and link.queue.limit < packet:
                raise ScenarioError(f"links[{i}].queue.limit", link.queue.limit,
                                    f"at least one packet ({packet} bytes)")
        bottleneck = self.bottleneck
        if bottleneck is None:
            bottleneck = min(range(len(links)), key=lambda i: links[i].rate)
        else:
            _whole(bottleneck, "bottleneck", 0, f"a link index in 0..{len(links) - 1}")
            if bottleneck >= len(links):
                raise ScenarioError("bottleneck", bottleneck,
                                    f"a link index in 0..{len(links) - 1}")
        for i, flow in enumerate(flows):
            if flow.route is not None and flow.route[1] >= len(links):
                raise ScenarioError(f"flows[{i}].route", flow.route,
                                    f"link indices below {len(links)}, the links of the path")
            first, last = flow.route or (0, len(links) - 1)
            path_rtt = 2.0 * sum(link.delay for link in links[first:last + 1])
            if flow.start >= duration:
                raise ScenarioError(f"flows[{i}].start", flow.start,
                                    f"a time before the end, duration={duration} s")
            if flow.rtt is not None and flow.rtt < path_rtt * (1 - 1e-12):
                raise ScenarioError(f"flows[{i}].rtt", flow.rtt,
                                    f"at least the path's two-way delay {path_rtt} s")
            if path_rtt <= 0 and flow.rtt is None:
                raise ScenarioError(f"flows[{i}].rtt", flow.rtt,
                                    "a round-trip time > 0 (the links have no delay)")
        iw = _positive(self.initial_window, "initial_window", "a window in segments")
        if iw < 1.0:  # a sender with less than one segment of window can never send
            raise ScenarioError("initial_window", self.initial_window,
                                "a window of at least one segment")
        times = {name: _time(getattr(self, name), name, positive=True)
                 for name in ("min_rto", "initial_rto", "max_rto", "delayed_ack_timeout")}
        if times["max_rto"] < times["min_rto"]:
            raise ScenarioError("max_rto", self.max_rto, f"≥ min_rto={times['min_rto']} s")
        for name in ("delayed_ack", "sack", "limited_transmit", "tail_loss_probe"):
            if not isinstance(getattr(self, name), bool):
                raise ScenarioTypeError(name, getattr(self, name), "True or False")
        if self.ack_counting not in ("segments", "acks"):
            raise ScenarioError("ack_counting", self.ack_counting, "'segments' or 'acks'")
        granularity = _time(self.rtt_granularity, "rtt_granularity", positive=False)
        if granularity < 0:
            raise ScenarioError("rtt_granularity", self.rtt_granularity,
                                "a tick ≥ 0, such as '4ms' (0: exact)")
        rwnd = self.rwnd
        if rwnd is not None:
            rwnd = parse_size(rwnd, "rwnd")
            if rwnd < mss:
                raise ScenarioError("rwnd", self.rwnd, f"at least one segment ({mss} bytes)")
        interval = self.trace_interval
        if interval is not None:
            interval = _time(interval, "trace_interval", positive=True)
            if interval > duration:
                raise ScenarioError("trace_interval", self.trace_interval,
                                    f"at most the duration, {duration} s")
            rows = (duration / interval) * (len(TRACE_VARIABLES_PER_FLOW) * len(flows) + 1)
            if rows > MAX_TRACE_ROWS:
                shortest = interval * rows / MAX_TRACE_ROWS
                raise ScenarioError(
                    "trace_interval", self.trace_interval,
                    f"at most {MAX_TRACE_ROWS:,} trace rows; {duration:g} s of {len(flows)} "
                    f"flow(s) at this interval is {rows:,.0f} rows, about "
                    f"{rows * TRACE_BYTES_PER_ROW / 2**30:,.1f} GiB to assemble",
                    f"use trace_interval ≥ {shortest:.3g} s, or a shorter duration")
        jitter = self.start_jitter
        if jitter is not None:
            jitter = _time(jitter, "start_jitter", positive=False)
            for i, flow in enumerate(flows):
                end = duration if flow.stop is None else min(flow.stop, duration)
                if flow.start + jitter >= end:
                    raise ScenarioError("start_jitter", self.start_jitter,
                                        f"less than flows[{i}]'s {end - flow.start:g} s from "
                                        f"its start to its {'end' if end == duration else 'stop'}",
                                        "None (the default) bounds each flow's jitter by its "
                                        "RTT and its own time")
        ack_jitter = self.ack_jitter
        if ack_jitter is not None:
            ack_jitter = _time(ack_jitter, "ack_jitter", positive=False)
        _set(self, links=links, flows=flows, duration=duration, seed=int(self.seed),
             bottleneck=int(bottleneck), mss=mss, header=header,
             initial_window=iw, rwnd=rwnd, trace_interval=interval,
             rtt_granularity=granularity, start_jitter=jitter, ack_jitter=ack_jitter,
             **times)

    # -- derived quantities (all computed, none stored) --------------------------
    @property
    def packet_size(self) -> int:
        """Bytes of one full data packet on the wire: ``mss + header``."""
        return self.mss + self.header

    @property
    def sample_interval(self) -> float:
        """The trace sampling period in force (s): ``trace_interval`` if set,
        else ``max(0.01, duration / 10_000)`` — at most 10,000 samples per
        variable and flow — but never more than ``duration / 100``."""
        if self.trace_interval is not None:
            return self.trace_interval
        return min(self.duration / 100.0, max(0.01, self.duration / 10_000))

    @property
    def path_rtt(self) -> float:
        """Two-way propagation delay of the links alone (s)."""
        return 2.0 * sum(link.delay for link in self.links)

    def route(self, i: int) -> tuple[Link, ...]:
        """The links flow ``i`` crosses, in order."""
        first, last = self.flows[i].route or (0, len(self.links) - 1)
        return self.links[first:last + 1]

    def route_rtt(self, i: int) -> float:
        """Two-way propagation delay of the links flow ``i`` crosses (s)."""
        return 2.0 * sum(link.delay for link in self.route(i))

    @property
    def routed(self) -> bool:
        """Whether some flow crosses only part of the chain of links."""
        return any(f.route is not None and f.route != (0, len(self.links) - 1)
                   for f in self.flows)

    @property
    def two_way(self) -> bool:
        """Whether some flow sends right to left (:attr:`Flow.reverse`): then
        traffic crosses the links both ways and ACKs queue with data."""
        return any(f.reverse for f in self.flows)

    def flow_rtt(self, i: int) -> float:
        """Two-way propagation delay of flow ``i`` (s), access delays included."""
        rtt = self.flows[i].rtt
        return self.route_rtt(i) if rtt is None else rtt

    def flow_start(self, i: int) -> float:
        """When flow ``i`` opens (s): its ``start`` plus its start jitter, a
        uniform draw from the scenario's seed and ``i`` (SplitMix64, as the
        fluid engine's draws; the other flows and the engine do not matter)
        times the bound of :attr:`start_jitter`: the flow's RTT by default,
        but never reaching its stop or the end of the run."""
        flow = self.flows[i]
        bound = self.start_jitter
        if bound is None:
            end = self.duration if flow.stop is None else min(flow.stop, self.duration)
            bound = min(self.flow_rtt(i), end - flow.start)
        if bound <= 0.0:
            return flow.start
        return flow.start + bound * _uniform(self.seed, _START_JITTER, i)

    @property
    def ack_wait(self) -> float:
        """The bound of each segment's receiving delay in force (s):
        :attr:`ack_jitter`, or by default one packet time at the bottleneck."""
        if self.ack_jitter is not None:
            return self.ack_jitter
        return self.packet_size * 8.0 / self.links[self.bottleneck].rate

    def bdp_packets(self, i: int = 0) -> float:
        """Bandwidth-delay product of flow ``i`` at the slowest link it
        crosses (packets)."""
        rate = min(link.rate for link in self.route(i))
        return rate * self.flow_rtt(i) / (8.0 * self.packet_size)

    #: Keywords of :func:`dumbbell` that are not fields of the scenario: a
    #: :meth:`replace` naming one of them re-builds the dumbbell.
    BUILDER: ClassVar[tuple[str, ...]] = ("bandwidth", "rtt", "buffer", "queue", "loss")

    def replace(self, **changes: Any) -> "Scenario":
        """A copy with ``changes`` applied and validated again.

        ``changes`` are the scenario's fields (``flows``, ``duration``,
        ``seed``, the stack knobs, ...), and, for a scenario built by
        :func:`dumbbell`, also that builder's keywords ``bandwidth``, ``rtt``,
        ``buffer``, ``queue`` and ``loss``. Naming one of those re-builds the
        dumbbell with :func:`dumbbell`, its validation and errors, from the
        scenario's own values for the keywords not given:

        * ``bandwidth`` and ``loss``: the bottleneck's rate and loss;
        * ``rtt``: the path's two-way delay, which is the smallest flow RTT;
          flows at that RTT follow a new ``rtt``, flows with a longer RTT of
          their own keep it;
        * ``buffer``: a buffer given as ``"xBDP"`` is resolved against the new
          rate and RTT; when ``buffer`` is not among the changes the queue
          keeps its capacity in packets (or bytes), whatever the new
          bandwidth-delay product;
        * ``queue``: the queue's kind; a RED queue keeps its thresholds,
          weight and ``max_p`` when only its buffer changes.

        Anything else raises :class:`~ccsim.ScenarioTypeError` naming the
        keyword and listing the allowed ones.
        """
        fields = {f.name for f in dataclasses.fields(self)}
        builder = set(self.BUILDER) if self.topology == "dumbbell" and len(self.links) == 1 \
            else set()
        for name, value in changes.items():
            if name not in fields and name not in builder:
                allowed = sorted(fields | builder)
                close = difflib.get_close_matches(name, allowed, n=1)
                raise ScenarioTypeError(name, value, "a keyword of Scenario.replace: "
                                        + ", ".join(allowed),
                                        f"did you mean {close[0]!r}?" if close else None)
        if not builder & set(changes):
            return dataclasses.replace(self, **changes)
        clash = sorted(set(changes) & {"links", "bottleneck", "topology"})
        if clash:
            raise ScenarioTypeError(clash[0], changes[clash[0]],
                                    "not together with dumbbell keywords "
                                    + ", ".join(self.BUILDER))
        q = self.links[0].queue
        keywords = {**self._builder_keywords(), **changes}
        if "buffer" in changes and "queue" not in changes:
            keywords["queue"] = q.kind
        elif "queue" in changes and "buffer" not in changes and isinstance(changes["queue"], str):
            keywords["buffer"] = int(q.limit) if q.unit == "packets" else f"{q.limit:.17g}B"
        built = dumbbell(**keywords)
        new_q = built.links[0].queue
        if (type(q) is type(new_q) and not isinstance(q, DropTail)
                and "queue" not in changes):  # keep the discipline's parameters
            link = dataclasses.replace(built.links[0],
                                       queue=dataclasses.replace(q, limit=new_q.limit))
            built = dataclasses.replace(built, links=(link,))
        return built

    def _builder_keywords(self) -> dict[str, Any]:
        """The :func:`dumbbell` keywords that build this (dumbbell) scenario again."""
        link = self.links[0]
        rtt = self.path_rtt
        flows = [dataclasses.replace(f, rtt=None) if f.rtt == rtt else f for f in self.flows]
        q = link.queue
        return {"bandwidth": link.rate, "rtt": rtt, "loss": link.loss, "flows": flows,
                "queue": q, "buffer": None, "duration": self.duration, "seed": self.seed,
                **{k: getattr(self, k) for k in self.KNOBS}}

    # -- serialisation -------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """Plain, JSON-ready dict in base units (``schema`` names the layout)."""
        links = [{"rate": l.rate, "delay": l.delay, "loss": l.loss,
                  "queue": l.queue.to_dict()}
                 for l in self.links]
        flows = [{**{f.name: getattr(flow, f.name) for f in dataclasses.fields(flow)
                     if (f.name != "ecn" or flow.ecn != algorithms.get(flow.algorithm).ecn)
                     and (f.name != "route" or flow.route is not None)
                     and (f.name != "overhead" or flow.overhead)
                     and (f.name != "reverse" or flow.reverse)},
                  # ecn only when not the law's default, route and overhead only
                  # when given, reverse only when on: keys of scenarios from
                  # before them stay
                  "params": dict(flow.params)} for flow in self.flows]
        # tail_loss_probe only when on, the jitters only when not the default:
        # keys of scenarios from before them stay
        scalars = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
                   if f.name not in ("links", "flows")
                   and (f.name != "tail_loss_probe" or self.tail_loss_probe)
                   and (f.name not in ("start_jitter", "ack_jitter")
                        or getattr(self, f.name) is not None)}
        return {"schema": SCHEMA, **scalars, "links": links, "flows": flows}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Scenario":
        """Inverse of :meth:`to_dict`; missing optional keys take defaults."""
        data = dict(data)
        schema = data.pop("schema", SCHEMA)
        if schema != SCHEMA:
            raise ScenarioError("schema", schema, f"{SCHEMA}")
        _known_keys(data, [f.name for f in dataclasses.fields(cls)], "scenario",
                    "builder keywords such as 'bandwidth' are not stored: build with "
                    "ccsim.dumbbell(...) or change one with Scenario.replace(...)")
        try:
            links = []
            for i, spec in enumerate(data.pop("links")):
                spec = dict(spec)
                _known_keys(spec, ["rate", "delay", "queue", "loss"], f"links[{i}]")
                queue = dict(spec.pop("queue", {"kind": "droptail", "limit": 1000}))
                kind = queue.pop("kind", "droptail")
                if kind not in QUEUES.names():
                    raise ScenarioError("links.queue.kind", kind,
                                        ", ".join(repr(n) for n in QUEUES.names()))
                links.append(Link(queue=QUEUES.get(kind)(**queue), **spec))
            flows = []
            for i, spec in enumerate(data.pop("flows")):
                _known_keys(spec, [f.name for f in dataclasses.fields(Flow)], f"flows[{i}]")
                flows.append(Flow(**spec))
            return cls(links=tuple(links), flows=tuple(flows), **data)
        except (KeyError, TypeError) as exc:
            if isinstance(exc, ScenarioTypeError):
                raise
            raise ScenarioTypeError("scenario", exc.args[0] if exc.args else None,
                                    "a dict as written by Scenario.to_dict()") from None

    def to_json(self, **kwargs: Any) -> str:
        """JSON text of :meth:`to_dict`; keyword arguments go to ``json.dumps``."""
        return json.dumps(self.to_dict(), **kwargs)

    @classmethod
    def from_json(cls, text: str) -> "Scenario":
        """Inverse of :meth:`to_json`."""
        return cls.from_dict(json.loads(text))

    def to_toml(self) -> str:
        """TOML text of :meth:`to_dict` (``None`` values are left out)."""
        import tomli_w

        def drop_none(x: Any) -> Any:
            if isinstance(x, dict):
                return {k: drop_none(v) for k, v in x.items() if v is not None}
            if isinstance(x, list):
                return [drop_none(v) for v in x]
            return x

        return tomli_w.dumps(drop_none(self.to_dict()))

    @classmethod
    def from_toml(cls, text: str) -> "Scenario":
        """Inverse of :meth:`to_toml`."""
        return cls.from_dict(tomllib.loads(text))

    @property
    def key(self) -> str:
        """Stable content hash (16 hex digits): equal scenarios, equal keys,
        across processes, machines and Python versions."""
        text = json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()[:16]


def _known_keys(data: Mapping[str, Any], known: list[str], where: str,
                hint: str | None = None) -> None:
    """Refuse a key of ``data`` that is not in ``known``: the closest known
    key as the hint, else ``hint``."""
    for key in data:
        if key not in known:
            close = difflib.get_close_matches(str(key), known, n=1)
            raise ScenarioTypeError(f"{where}.{key}", data[key],
                                    f"{where} keys: " + ", ".join(known),
                                    f"did you mean {close[0]!r}?" if close else hint)


def _packet_size(knobs: Mapping[str, Any]) -> int:
    """Bytes of a full data packet for these knobs, before the scenario exists
    (``Scenario.packet_size`` once it does)."""
    return (_bytes(knobs.get("mss", Scenario.mss), "mss", 1)
            + _bytes(knobs.get("header", Scenario.header), "header", 0))


def _knobs(knobs: Mapping[str, Any]) -> dict[str, Any]:
    unknown = sorted(set(knobs) - set(Scenario.KNOBS))
    if unknown:
        raise ScenarioTypeError(unknown[0], knobs[unknown[0]],
                                "a stack knob: " + ", ".join(Scenario.KNOBS))
    return dict(knobs)


def dumbbell(bandwidth: Any, rtt: Any, buffer: Any = None, queue: Any = "droptail",
             loss: float = 0.0, flows: Iterable[Any] = ("reno", "reno"),
             duration: Any = "60s", seed: int = 0, **knobs: Any) -> Scenario:
    """A dumbbell: every flow crosses one bottleneck link.

    Args:
        bandwidth: bottleneck rate (bit/s or ``"10Mbps"``).
        rtt: two-way propagation delay of the flows that do not set their own
            (s or ``"20ms"``).
        buffer: bottleneck buffer: packets, bytes (``"64KB"``) or a multiple of
            the bandwidth-delay product (``"1BDP"``, the default, computed with
            ``rtt``); ``None`` when ``queue`` is a queue object.
        queue: ``"droptail"``, ``"red"``, ``"codel"``, ``"pie"`` (or another
            registered kind, ``ccsim.queues.names()``), or a queue object:
            :class:`DropTail`, :class:`RED`, :class:`~ccsim.CoDel`,
            :class:`~ccsim.PIE`, :class:`~ccsim.StepMark` or a user's
            :class:`~ccsim.QueueDiscipline`.
        loss: random loss probability of data packets on the bottleneck.
        flows: algorithm names, :class:`Flow` objects or dicts; a flow with
            ``reverse=True`` sends the other way, and its traffic queues the
            other flows' ACKs (two-way traffic).
        duration: simulated time (s or ``"60s"``).
        seed: random seed.
        **knobs: stack knobs of :class:`Scenario` (``mss``, ``initial_window``,
            ``min_rto``, ``delayed_ack``, ``sack``, ``rwnd``, ...).

    The bottleneck's propagation delay is half the smallest flow RTT; flows with
    longer RTTs get access delays that make up the difference.
    """
    knobs = _knobs(knobs)
    rate = parse_rate(bandwidth, "bandwidth")
    if not rate >= MIN_RATE:
        raise ScenarioError("bandwidth", bandwidth,
                            f"a rate ≥ {MIN_RATE:g} bit/s, such as '10Mbps'")
    base_rtt = _time(rtt, "rtt", positive=True)
    if isinstance(flows, (str, Flow)) or not isinstance(flows, Iterable):
        raise ScenarioTypeError("flows", flows, "a list of algorithm names or ccsim.Flow")
    flows = [_as_flow(f, i) for i, f in enumerate(flows)]
    if any(f.rtt is not None for f in flows):
        flows = [f if f.rtt is not None else dataclasses.replace(f, rtt=base_rtt)
                 for f in flows]
    min_rtt = min([base_rtt] + [f.rtt for f in flows if f.rtt is not None])
    packet = _packet_size(knobs)
    q = make_queue(queue, buffer, rate, base_rtt, packet, "dumbbell")
    link = Link(rate=rate, delay=min_rtt / 2.0, queue=q, loss=_probability(loss, "loss"))
    return Scenario(links=(link,), flows=tuple(flows), duration=duration, seed=seed,
                    topology="dumbbell", **knobs)


def parking_lot(hops: int, bandwidth: Any, rtt: Any, buffer: Any = None,
                queue: Any = "droptail", long: Any = "reno", cross: Any = "reno",
                duration: Any = "60s", seed: int = 0, **knobs: Any) -> Scenario:
    """The parking lot: ``hops`` equal links in a chain, one long flow (flow
    0) across all of them, and one cross flow per link (flow ``k + 1`` on link
    ``k``) that joins and leaves there.

    Args:
        hops: links in the chain (≥ 1).
        bandwidth: each link's rate (bit/s or ``"10Mbps"``).
        rtt: two-way propagation delay of one hop (s): a cross flow's RTT;
            the long flow's is ``hops`` times it.
        buffer, queue: each link's queue, as in :func:`dumbbell` (a BDP
            multiple uses ``rtt``).
        long, cross: the long flow's and the cross flows' algorithm (a name,
            a :class:`Flow` or a dict; their ``route`` is set here; a
            :class:`Flow` with ``reverse=True`` crosses right to left, and
            the ACKs of the others queue behind its data).
        duration, seed, **knobs: as in :func:`dumbbell`.

    Flows' routes differ, so the packet engine takes each hop as an event of
    its own (``docs/engine.md``); the fluid engine does not model it.
    """
    knobs = _knobs(knobs)
    if isinstance(hops, bool) or not isinstance(hops, numbers.Integral) or hops < 1:
        raise ScenarioTypeError("hops", hops, "a whole number of links ≥ 1")
    rate = parse_rate(bandwidth, "bandwidth")
    if not rate >= MIN_RATE:
        raise ScenarioError("bandwidth", bandwidth,
                            f"a rate ≥ {MIN_RATE:g} bit/s, such as '10Mbps'")
    hop_rtt = _time(rtt, "rtt", positive=True)
    packet = _packet_size(knobs)
    links = tuple(Link(rate=rate, delay=hop_rtt / 2.0,
                       queue=make_queue(queue, buffer, rate, hop_rtt, packet, f"links[{k}]"))
                  for k in range(int(hops)))
    flows = [dataclasses.replace(_as_flow(long, 0), route=None)]
    flows += [dataclasses.replace(_as_flow(cross, k + 1), route=(k, k)) for k in range(int(hops))]
    return Scenario(links=links, flows=tuple(flows), duration=duration, seed=seed,
                    topology="parking_lot", **knobs)


def path(links: Iterable[Any], flows: Iterable[Any] = ("reno",), duration: Any = "60s",
         seed: int = 0, bottleneck: int | None = None, **knobs: Any) -> Scenario:
    """A multi-hop path: every flow crosses ``links`` in order.

    Each link is a :class:`Link` or a dict with ``rate``, ``delay`` and
    optionally ``buffer`` (as in :func:`dumbbell`; a BDP multiple uses the
    path's two-way delay and that link's rate), ``queue`` and ``loss``. Seed
    002's two hosts through four routers with the bottleneck at the first
    router is five links, the second one the slowest.
    """
    knobs = _knobs(knobs)
    specs = list(links) if isinstance(links, Iterable) else None
    if not specs:
        raise ScenarioTypeError("links", links, "a non-empty list of ccsim.Link or dicts")
    rates, delays = [], []
    for i, spec in enumerate(specs):
        if isinstance(spec, Link):
            rates.append(spec.rate)
            delays.append(spec.delay)
        elif isinstance(spec, Mapping) and "rate" in spec and "delay" in spec:
            rates.append(parse_rate(spec["rate"], f"links[{i}].rate"))
            delays.append(_time(spec["delay"], f"links[{i}].delay", positive=False))
        else:
            raise ScenarioTypeError(f"links[{i}]", spec,
                                    "a ccsim.Link or a dict with 'rate' and 'delay'")
    rtt = 2.0 * sum(delays)
    packet = _packet_size(knobs)
    built = []
    for i, spec in enumerate(specs):
        if isinstance(spec, Link):
            built.append(spec)
            continue
        extra = set(spec) - {"rate", "delay", "buffer", "queue", "loss"}
        if extra:
            raise ScenarioTypeError(f"links[{i}].{sorted(extra)[0]}", spec[sorted(extra)[0]],
                                    "link keys: rate, delay, buffer, queue, loss")
        if not rates[i] >= MIN_RATE:
            raise ScenarioError(f"links[{i}].rate", spec["rate"], f"a rate ≥ {MIN_RATE:g} bit/s")
        q = make_queue(spec.get("queue", "droptail"), spec.get("buffer"), rates[i],
                       rtt, packet, f"links[{i}]")
        built.append(Link(rate=rates[i], delay=delays[i], queue=q,
                          loss=_probability(spec.get("loss", 0.0), f"links[{i}].loss")))
    return Scenario(links=tuple(built), flows=tuple(flows), duration=duration, seed=seed,
                    bottleneck=bottleneck, topology="path", **knobs)
