"""The arithmetic of each topology: from a builder's keywords (bandwidth,
RTT, buffer, ...) to the fields of the :class:`~ccsim.Scenario` it describes,
each keyword checked, without building the scenario itself.
:mod:`.builders` builds it, and :meth:`Scenario.replace
<ccsim.Scenario.replace>` re-builds a dumbbell from here: :mod:`.core`
imports this module and :mod:`.builders` imports :mod:`.core`, one way.
"""

from __future__ import annotations

import dataclasses
import numbers
from typing import Any, Iterable, Mapping

from ..errors import ScenarioError, ScenarioTypeError
from ..units import parse_rate
from .checks import probability, seconds, whole_bytes
from .flows import Flow, as_flow, host_queue
from .links import MIN_RATE, Link, make_queue
from .schedule import as_schedule
from .workloads import expand

MSS = 1460
"""Default segment payload (bytes): a 1500-byte Ethernet MTU less 40 bytes of
IPv4 and TCP headers (RFC 879, RFC 894); :attr:`Scenario.mss`."""
HEADER = 40
"""Default header bytes of each data packet on the wire; :attr:`Scenario.header`."""
KNOBS = ("mss", "header", "initial_window", "min_rto", "initial_rto", "max_rto",
         "delayed_ack", "delayed_ack_timeout", "sack", "rwnd", "trace_interval",
         "ack_counting", "rtt_granularity", "limited_transmit", "tail_loss_probe",
         "start_jitter", "ack_jitter", "stack", "quick_ack", "law_rtt",
         "handshake", "loss_flight", "reduction_window", "exit_ack")
"""The stack knobs: the fields of :class:`~ccsim.Scenario` that every builder
passes through as keywords (:attr:`Scenario.KNOBS`)."""


ACCESS = "10x"
"""The default NIC of a dumbbell's hosts (:func:`~ccsim.dumbbell`'s
``access``): ten times the bottleneck rate, with no propagation delay of its
own. A dumbbell's hosts sit on links much faster than the bottleneck: ns-3's
dumbbell examples put 100 Mbit/s access links around a 10 Mbit/s bottleneck,
testbeds 1 Gbit/s NICs behind 100 Mbit/s bottlenecks. A multiple of the
bottleneck keeps a scenario's timing the same at any bandwidth."""


def access_specs(access: Any, n: int, rate: float
                 ) -> list[tuple[float | None, float, int | None, float]]:
    """:func:`~ccsim.dumbbell`'s ``access`` for each of ``n`` flows, as
    ``(NIC rate in bit/s or None, one-way delay of each access link in s,
    host queue in packets or None, NIC jitter in s)``; ``rate`` is the
    bottleneck's (bit/s), for multiples such as ``"10x"``."""
    allowed = ("a rate ('1Gbps', bit/s, or a multiple of the bottleneck such as '10x'), "
               "a dict with 'rate', 'delay', 'buffer' and 'jitter', None or False (infinitely fast "
               "hosts), or a list of these, one per flow")

    def one(spec: Any, field: str) -> tuple[float | None, float, int | None, float]:
        if spec is None or spec is False:
            return None, 0.0, None, 0.0
        delay, buffer, jitter = 0.0, None, 0.0
        if isinstance(spec, Mapping):
            extra = sorted(set(spec) - {"rate", "delay", "buffer", "jitter"})
            if extra:
                raise ScenarioTypeError(f"{field}.{extra[0]}", spec[extra[0]],
                                        "access keys: rate, delay, buffer, jitter")
            jitter = seconds(spec.get("jitter", 0.0), f"{field}.jitter", positive=False)
            delay = seconds(spec.get("delay", 0.0), f"{field}.delay", positive=False)
            if delay < 0:
                raise ScenarioError(f"{field}.delay", spec["delay"], "a delay ≥ 0, such as '1ms'")
            buffer = spec.get("buffer")
            if buffer is not None:
                buffer = host_queue(buffer, f"{field}.buffer")
            spec = spec.get("rate", ACCESS)
            if spec is None or spec is False:
                if buffer is not None:
                    raise ScenarioError(f"{field}.buffer", buffer,
                                        "None for infinitely fast hosts (rate None)",
                                        "a host queue drains at its NIC's rate")
                if jitter:
                    raise ScenarioError(f"{field}.jitter", jitter,
                                        "0 for infinitely fast hosts (rate None)",
                                        "the jitter delays packets leaving the NIC")
                return None, delay, None, 0.0
            field = f"{field}.rate"
        if isinstance(spec, bool) or not isinstance(spec, (str, numbers.Real)):
            raise ScenarioTypeError(field, spec, allowed)
        if isinstance(spec, str) and spec.strip().lower().endswith("x"):
            try:
                times = float(spec.strip()[:-1])
            except ValueError:
                raise ScenarioError(field, spec, allowed) from None
            if not times >= 1.0 or times == float("inf"):
                raise ScenarioError(field, spec, "a multiple ≥ 1 of the bottleneck, such as '10x'")
            return times * rate, delay, buffer, jitter
        nic = parse_rate(spec, field)
        if not nic >= MIN_RATE:
            raise ScenarioError(field, spec, f"a rate ≥ {MIN_RATE:g} bit/s, such as '1Gbps'")
        return nic, delay, buffer, jitter

    if isinstance(access, (list, tuple)):
        if len(access) != n:
            raise ScenarioError("access", access, f"one entry per flow ({n} flows), or "
                                "a single rate or dict for all")
        return [one(spec, f"access[{i}]") for i, spec in enumerate(access)]
    return [one(access, "access")] * n


def packet_bytes(knobs: Mapping[str, Any]) -> int:
    """Bytes of a full data packet for these knobs, before the scenario exists
    (``Scenario.packet_size`` once it does)."""
    return (whole_bytes(knobs.get("mss", MSS), "mss", 1)
            + whole_bytes(knobs.get("header", HEADER), "header", 0))


def stack_knobs(knobs: Mapping[str, Any]) -> dict[str, Any]:
    """``knobs`` as a dict, once each is known to be one of :data:`KNOBS`."""
    unknown = sorted(set(knobs) - set(KNOBS))
    if unknown:
        raise ScenarioTypeError(unknown[0], knobs[unknown[0]],
                                "a stack knob: " + ", ".join(KNOBS))
    return dict(knobs)


def dumbbell_fields(bandwidth: Any, rtt: Any, buffer: Any = None, queue: Any = "droptail",
                    loss: float = 0.0, flows: Iterable[Any] = ("reno", "reno"),
                    duration: Any = "60s", seed: int = 0, access: Any = ACCESS,
                    jitter: Any = 0.0,
                    **knobs: Any) -> dict[str, Any]:
    """The fields of the :class:`~ccsim.Scenario` that :func:`~ccsim.dumbbell`
    builds (see there), its keywords checked."""
    knobs = stack_knobs(knobs)
    schedule = as_schedule(bandwidth, "bandwidth")
    rate = schedule.rate if schedule is not None else parse_rate(bandwidth, "bandwidth")
    if not rate >= MIN_RATE:
        raise ScenarioError("bandwidth", bandwidth,
                            f"a rate ≥ {MIN_RATE:g} bit/s, such as '10Mbps'")
    base_rtt = seconds(rtt, "rtt", positive=True)
    if isinstance(flows, (str, Flow)) or not isinstance(flows, Iterable):
        raise ScenarioTypeError("flows", flows, "a list of algorithm names or ccsim.Flow")
    # Arrivals become their flows here: the scenario holds plain Flows
    flows = [as_flow(f, i) for i, f in enumerate(expand(flows, rate, duration, seed))]
    nics = access_specs(access, len(flows), rate)
    if any(f.rtt is not None for f in flows) or any(d > 0 for _, d, _, _ in nics):
        flows = [f if f.rtt is not None else dataclasses.replace(f, rtt=base_rtt)
                 for f in flows]
    min_rtt = min([base_rtt] + [f.rtt for f in flows if f.rtt is not None])
    # each host's NIC and queue: a flow's own access_rate (and access_buffer)
    # stays; each of its two access links (sender's, receiver's) adds its
    # delay both ways
    flows = [dataclasses.replace(f, access_rate=nic if f.access_rate is None else f.access_rate,
                                 access_buffer=(buffer if f.access_buffer is None
                                                else f.access_buffer),
                                 access_jitter=f.access_jitter or jitter,
                                 rtt=f.rtt + 4.0 * d if d else f.rtt)
             for f, (nic, d, buffer, jitter) in zip(flows, nics)]
    packet = packet_bytes(knobs)
    q = make_queue(queue, buffer, rate, base_rtt, packet, "dumbbell")
    link = Link(rate=schedule if schedule is not None else rate, delay=min_rtt / 2.0, queue=q,
                loss=probability(loss, "loss"), jitter=seconds(jitter, "jitter", positive=False))
    return dict(links=(link,), flows=tuple(flows), duration=duration, seed=seed,
                topology="dumbbell", **knobs)



def parking_lot_fields(hops: int, bandwidth: Any, rtt: Any, buffer: Any = None,
                       queue: Any = "droptail", long: Any = "reno", cross: Any = "reno",
                       duration: Any = "60s", seed: int = 0, **knobs: Any) -> dict[str, Any]:
    """The fields of the :class:`~ccsim.Scenario` that :func:`~ccsim.parking_lot`
    builds (see there), its keywords checked."""
    knobs = stack_knobs(knobs)
    if isinstance(hops, bool) or not isinstance(hops, numbers.Integral) or hops < 1:
        raise ScenarioTypeError("hops", hops, "a whole number of links ≥ 1")
    rate = parse_rate(bandwidth, "bandwidth")
    if not rate >= MIN_RATE:
        raise ScenarioError("bandwidth", bandwidth,
                            f"a rate ≥ {MIN_RATE:g} bit/s, such as '10Mbps'")
    hop_rtt = seconds(rtt, "rtt", positive=True)
    packet = packet_bytes(knobs)
    links = tuple(Link(rate=rate, delay=hop_rtt / 2.0,
                       queue=make_queue(queue, buffer, rate, hop_rtt, packet, f"links[{k}]"))
                  for k in range(int(hops)))
    flows = [dataclasses.replace(as_flow(long, 0), route=None)]
    flows += [dataclasses.replace(as_flow(cross, k + 1), route=(k, k)) for k in range(int(hops))]
    return dict(links=links, flows=tuple(flows), duration=duration, seed=seed,
                topology="parking_lot", **knobs)



def path_fields(links: Iterable[Any], flows: Iterable[Any] = ("reno",), duration: Any = "60s",
                seed: int = 0, bottleneck: int | None = None, **knobs: Any) -> dict[str, Any]:
    """The fields of the :class:`~ccsim.Scenario` that :func:`~ccsim.path`
    builds (see there), its keywords checked."""
    knobs = stack_knobs(knobs)
    specs = list(links) if isinstance(links, Iterable) else None
    if not specs:
        raise ScenarioTypeError("links", links, "a non-empty list of ccsim.Link or dicts")
    rates, delays = [], []
    for i, spec in enumerate(specs):
        if isinstance(spec, Link):
            rates.append(spec.rate)
            delays.append(spec.delay)
        elif isinstance(spec, Mapping) and "rate" in spec and "delay" in spec:
            schedule = as_schedule(spec["rate"], f"links[{i}].rate")
            rates.append(schedule.rate if schedule is not None
                         else parse_rate(spec["rate"], f"links[{i}].rate"))
            delays.append(seconds(spec["delay"], f"links[{i}].delay", positive=False))
        else:
            raise ScenarioTypeError(f"links[{i}]", spec,
                                    "a ccsim.Link or a dict with 'rate' and 'delay'")
    rtt = 2.0 * sum(delays)
    packet = packet_bytes(knobs)
    built = []
    for i, spec in enumerate(specs):
        if isinstance(spec, Link):
            built.append(spec)
            continue
        extra = set(spec) - {"rate", "delay", "buffer", "queue", "loss", "jitter"}
        if extra:
            raise ScenarioTypeError(f"links[{i}].{sorted(extra)[0]}", spec[sorted(extra)[0]],
                                    "link keys: rate, delay, buffer, queue, loss, jitter")
        if not rates[i] >= MIN_RATE:
            raise ScenarioError(f"links[{i}].rate", spec["rate"], f"a rate ≥ {MIN_RATE:g} bit/s")
        q = make_queue(spec.get("queue", "droptail"), spec.get("buffer"), rates[i],
                       rtt, packet, f"links[{i}]")
        schedule = as_schedule(spec["rate"], f"links[{i}].rate")
        built.append(Link(rate=schedule if schedule is not None else rates[i], delay=delays[i],
                          queue=q, loss=probability(spec.get("loss", 0.0), f"links[{i}].loss"),
                          jitter=spec.get("jitter", 0.0)))
    if isinstance(flows, Iterable) and not isinstance(flows, str):
        # Arrivals become their flows here, offered to the chosen bottleneck
        # (the slowest link by default)
        at = rates[bottleneck] if isinstance(bottleneck, int) and 0 <= bottleneck < len(rates) \
            else min(rates)
        flows = expand(flows, at, duration, seed)
    return dict(links=tuple(built), flows=tuple(flows), duration=duration, seed=seed,
                bottleneck=bottleneck, topology="path", **knobs)
