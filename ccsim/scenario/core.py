"""The :class:`Scenario` itself: its fields, what follows from them (packet
size, RTTs, routes, start times) and :meth:`Scenario.replace`. Its checks
are in :mod:`.validation`, its dict/JSON/TOML forms and key in :mod:`.serial`.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import tomllib
from dataclasses import dataclass
from typing import Any, ClassVar, Mapping

from .. import algorithms
from ..errors import ScenarioTypeError
from ..queues import DropTail
from .._splitmix import uniform
from . import serial
from .checks import set_normalised
from .flows import Flow
from .links import Link
from .stacks import STACK_KNOBS, STACKS, FlowStack, resolve
from .topologies import HEADER, KNOBS, MSS, dumbbell_fields
from .validation import normalised

_START_JITTER = 2  # the start jitter's stream (1: the packet engine's send overhead,
#                   3: its ACK jitter)
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
        stack: the TCP stack around the window laws: ``"linux"`` (the
            default, current mainline Linux), ``"ns3"`` (ns-3 3.44 as
            shipped) or ``"ns2"`` (ns-2's one-way agents of the classic
            studies). Every knob below whose default is ``None`` takes the
            stack's value (:mod:`ccsim.scenario.stacks`, docs/stack.md), per
            flow; a value given here (or in ``Flow``) overrides it.
        initial_window: initial ``cwnd`` (segments). Linux and ns-3: 10 (RFC
            6928, ``TCP_INIT_CWND``); ns-2: 2.
        min_rto: lower bound of the retransmission timeout (s). Linux: 0.2
            (``TCP_RTO_MIN``); ns-3: 1 (RFC 6298 §2.4); ns-2: 0.2.
        initial_rto: RTO before the first RTT sample (s). Linux and ns-3: 1
            (RFC 6298 §2.1); ns-2: 3.
        max_rto: upper bound of the backed-off RTO (s); 60, RFC 6298 §2.5.
        delayed_ack: receivers acknowledge every second segment (RFC 5681
            §4.2) instead of every segment. Linux and ns-3: on; ns-2: off.
        delayed_ack_timeout: longest an ACK is held (s). Linux: 0.04
            (``TCP_DELACK_MIN``); ns-3: 0.2; ns-2: 0.1.
        quick_ack: with delayed ACKs, Linux's quick-ACK mode: the first 16 ACKs
            of new data (``TCP_MAX_QUICKACKS``) go at once, at the start of the
            connection and after a silence longer than the RTO (taken as the
            flow's RTT plus ``min_rto``), so slow start is not slowed by
            delayed ACKs. Linux: on; ns-3 and ns-2: off.
        sack: receivers send SACK blocks (RFC 2018) to every flow, whatever its
            recovery strategy; strategies that need SACK turn it on for their
            flow regardless. Linux and ns-3: on; ns-2: off.
        rwnd: receiver window (bytes), or ``None`` for no limit.
        trace_interval: sampling period of the time series (s), or ``None``
            (the default) for :attr:`sample_interval`'s automatic choice.
        ack_counting: what the window laws count as acknowledged, for every
            flow without its own ``Flow.ack_counting``. ``"segments"``: the
            segments an ACK newly acknowledges (RFC 3465 appropriate byte
            counting; Linux, and ns-3's CUBIC). ``"acks"``: one per ACK that advances
            ``snd.una``, whatever it covers, as ns-2 and ns-3's NewReno,
            Westwood+ and Vegas grow, so with delayed ACKs windows grow at
            half speed (``Ack.acked`` is 1; recovery and delivery counts are
            unchanged). ``"acks-in-slow-start"``: one per ACK below
            ``ssthresh``, the segments above it, as ns-3's BIC, Scalable,
            Illinois, HighSpeed and Hybla grow (``TcpNewReno::SlowStart``);
            ``"acks-in-congestion-avoidance"``: the segments below
            ``ssthresh``, one per ACK above it, as Linux's HighSpeed grows
            (``hstcp_cong_avoid``).
        law_rtt: the RTT the window laws are handed (``Ack.rtt``,
            ``RttSample.rtt``, and ``min_rtt`` the smallest of them):
            ``"sample"``, each ACK's own (Linux, ns-2), or ``"smoothed"``,
            the RFC 6298 SRTT after the sample (ns-3's ``PktsAcked``).
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
            SACKed segments leave ``tcp_packets_in_flight``). Linux and ns-3:
            on; ns-2: off.
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
            Linux does outside recovery. Linux: on; ns-3 and ns-2: off.
        handshake: open each connection with a SYN and a SYN-ACK (packet
            engine): the SYN, ``header`` bytes, crosses the flow's links and
            queues FIFO with their packets, the SYN-ACK comes back (as an ACK
            does), and the first window goes when it arrives, one RTT after
            the flow's start; its RTT is the estimator's first sample. A SYN
            a queue drops is sent again after ``initial_rto``, doubled at each
            try, and gives no sample (Karn). Flows opened together leave the
            bottleneck one SYN time apart, as ns-3's do. ns-3: on; ns-2: off;
            Linux: off, a flow starting on an established connection as iperf3
            times its tests (docs/stack.md). The fluid engine has no handshake.
        loss_flight: what the stack takes as the flight at a loss, handed
            to the window law (``Loss.inflight``, which Reno's rule halves):
            ``"flight"``, RFC 5681's FlightSize ``snd.nxt − snd.una``;
            ``"pipe"``, RFC 6675's pipe once the head is marked lost, without
            the SACKed and lost segments, at a fast recovery (ns-3's
            ``EnterRecovery``; timeouts as ``"flight"``); ``"cwnd"``, the
            window the sender may fill, ``min(cwnd, rwnd)``, at every loss,
            fast or timeout, which PRR also takes as its ``RecoverFS``
            (Linux: every ``ssthresh()`` reads ``snd_cwnd``, and
            ``tcp_cwnd_reduction`` divides by ``prior_cwnd``; ns-2:
            ``slowdown`` halves ``window()``). Linux and ns-2: ``"cwnd"``;
            ns-3: ``"pipe"``. Packet engine.
        reduction_window: which reductions of ``ssthresh`` hold for their
            window of data, so that a loss found before the cumulative ACK
            passes what was outstanding then makes no second one: ``"all"``,
            any reduction (a recovery after an ECN or local reduction starts
            without a new ``ssthresh``, and a timeout during a fast recovery
            or such a reduction keeps its ``ssthresh``: Linux's
            ``tcp_enter_recovery`` and ``tcp_enter_loss``); ``"ecn"``, only
            an ECN reduction (ns-2's ``dupack_action`` and ``timeout``);
            ``"none"``, every loss reduces (ns-3's ``EnterRecovery`` and
            ``ReTxTimeout``). A timeout that resends the segment the last one
            resent keeps ``ssthresh`` in all three (RFC 5681). Linux:
            ``"all"``; ns-2: ``"ecn"``; ns-3: ``"none"``. The fluid engine
            reads ``"all"`` at a timeout that ends a fast recovery (it keeps
            the recovery's ``ssthresh``); the rest is the packet engine's.
        exit_ack: whether the ACK that ends a fast recovery also reaches the
            window law's ``on_ack``, with the segments it delivered (newly
            acknowledged or SACKed), so the law grows on it. Linux: ``True``
            (``tcp_ack`` runs ``tcp_fastretrans_alert``, which leaves the
            recovery, before ``tcp_cong_control``, which then calls the
            module's ``cong_avoid`` with that ACK's ``acked_sacked``); ns-3:
            ``False`` (``ProcessAck`` leaving ``CA_RECOVERY`` calls
            ``ExitRecovery``, not ``IncreaseWindow``); ns-2: ``True`` for the
            Reno and NewReno agents (``recv_newack_helper`` opens the window),
            ``False`` for flows with SACK recovery (``Sack1TcpAgent::recv``
            calls only ``newack``). The end of a timeout's loss phase reaches
            the law in every stack. Packet engine.
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
    mss: int = MSS
    header: int = HEADER
    initial_window: float | None = None
    min_rto: float | None = None
    initial_rto: float | None = None
    max_rto: float = 60.0
    delayed_ack: bool | None = None
    delayed_ack_timeout: float | None = None
    sack: bool | None = None
    rwnd: float | None = None
    trace_interval: float | None = None
    ack_counting: str | None = None
    rtt_granularity: float = 0.0
    limited_transmit: bool | None = None
    tail_loss_probe: bool | None = None
    start_jitter: float | None = None
    ack_jitter: float | None = None
    stack: str = "linux"
    quick_ack: bool | None = None
    law_rtt: str | None = None
    handshake: bool | None = None
    loss_flight: str | None = None
    reduction_window: str | None = None
    exit_ack: bool | None = None

    KNOBS: ClassVar[tuple[str, ...]] = KNOBS

    def __post_init__(self) -> None:
        set_normalised(self, **normalised(self))  # checks: ccsim.scenario.validation

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
        return flow.start + bound * uniform(self.seed, _START_JITTER, i)

    def flow_stack(self, i: int) -> FlowStack:
        """Flow ``i``'s stack, every setting resolved: the flow's own
        (``recovery``, ``ack_counting``, ``params``), else the scenario's knob,
        else :attr:`stack`'s profile (:func:`ccsim.scenario.stacks.resolve`)."""
        flow = self.flows[i]
        return resolve(STACKS[self.stack], flow.algorithm,
                       algorithms.get(flow.algorithm).recovery,
                       {name: getattr(self, name) for name in STACK_KNOBS},
                       flow.recovery, flow.ack_counting, dict(flow.params))

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
    BUILDER: ClassVar[tuple[str, ...]] = ("bandwidth", "rtt", "buffer", "queue", "loss",
                                          "access", "jitter")

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
          weight and ``max_p`` when only its buffer changes;
        * ``bandwidth`` may be a rate schedule; a bottleneck whose rate
          changes keeps its schedule when ``bandwidth`` is not among the
          changes, and its ``jitter`` likewise;
        * ``access``: the hosts' NICs, for every flow; when not given, flows
          whose NICs are the default (``"10x"``) keep the default at the new
          bandwidth, others keep their rates.

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
        keywords = {**self._builder_keywords("access" in changes), **changes}
        if "buffer" in changes and "queue" not in changes:
            keywords["queue"] = q.kind
        elif "queue" in changes and "buffer" not in changes and isinstance(changes["queue"], str):
            keywords["buffer"] = int(q.limit) if q.unit == "packets" else f"{q.limit:.17g}B"
        built = Scenario(**dumbbell_fields(**keywords))
        new_q = built.links[0].queue
        if (type(q) is type(new_q) and not isinstance(q, DropTail)
                and "queue" not in changes):  # keep the discipline's parameters
            link = dataclasses.replace(built.links[0],
                                       queue=dataclasses.replace(q, limit=new_q.limit))
            built = dataclasses.replace(built, links=(link,))
        return built

    def _builder_keywords(self, new_access: bool = False) -> dict[str, Any]:
        """The :func:`dumbbell` keywords that build this (dumbbell) scenario
        again; ``new_access``: without the flows' NIC rates (new ones come)."""
        link = self.links[0]
        rtt = self.path_rtt
        flows = [dataclasses.replace(f, rtt=None) if f.rtt == rtt else f for f in self.flows]
        # NICs at the default (topologies.ACCESS) follow the bandwidth, others stay
        default = [f.access_rate == 10.0 * link.rate for f in flows]
        access = [{"rate": "10x", "buffer": f.access_buffer, "jitter": f.access_jitter}
                  if d else None for f, d in zip(flows, default)]
        flows = [dataclasses.replace(f, access_rate=None, access_buffer=None, access_jitter=0.0)
                 if d or new_access else f for f, d in zip(flows, default)]
        q = link.queue
        # a rate that changes is rebuilt from its schedule, not its nominal rate
        bandwidth = link.schedule if link.schedule is not None else link.rate
        return {"bandwidth": bandwidth, "rtt": rtt, "loss": link.loss, "flows": flows,
                "access": access, "jitter": link.jitter,
                "queue": q, "buffer": None, "duration": self.duration, "seed": self.seed,
                **{k: getattr(self, k) for k in self.KNOBS}}

    # -- serialisation (ccsim.scenario.serial) -------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """Plain, JSON-ready dict in base units (``schema`` names the layout)."""
        return serial.to_dict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Scenario":
        """Inverse of :meth:`to_dict`; missing optional keys take defaults."""
        return serial.from_dict(cls, data)

    def to_json(self, **kwargs: Any) -> str:
        """JSON text of :meth:`to_dict`; keyword arguments go to ``json.dumps``."""
        return json.dumps(self.to_dict(), **kwargs)

    @classmethod
    def from_json(cls, text: str) -> "Scenario":
        """Inverse of :meth:`to_json`."""
        try:
            data = json.loads(text)
        except (ValueError, RecursionError) as exc:  # JSONDecodeError, UnicodeDecodeError
            raise serial.parse_error("JSON", exc) from None
        return cls.from_dict(data)

    def to_toml(self) -> str:
        """TOML text of :meth:`to_dict` (``None`` values are left out)."""
        import tomli_w

        return tomli_w.dumps(serial.without_none(self.to_dict()))

    @classmethod
    def from_toml(cls, text: str) -> "Scenario":
        """Inverse of :meth:`to_toml`."""
        try:
            data = tomllib.loads(text)
        except (ValueError, RecursionError) as exc:  # TOMLDecodeError
            raise serial.parse_error("TOML", exc) from None
        return cls.from_dict(data)

    @property
    def key(self) -> str:
        """Stable content hash (16 hex digits): equal scenarios, equal keys,
        across processes, machines and Python versions."""
        return serial.key(self)

