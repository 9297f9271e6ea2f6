"""A scenario's checks across its fields: what no single field can say
alone (a flow's start before the end, its RTT at least its path's, a trace
interval that fits in memory, ...). :func:`normalised` is what
:class:`~ccsim.Scenario` runs when it is built; every refusal names the field,
the value and what is allowed.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Iterable

from ..errors import ScenarioError, ScenarioTypeError
from ..units import parse_size
from .checks import positive_number, seconds, whole, whole_bytes
from .flows import ACK_COUNTINGS, Flow, as_flow
from .links import Link
from .stacks import STACKS

if TYPE_CHECKING:
    from .core import Scenario

TRACE_VARIABLES_PER_FLOW = ("cwnd", "ssthresh", "rtt", "goodput")
"""Traced per flow; the bottleneck's queue is traced once per scenario."""
MAX_TRACE_ROWS = 20_000_000
"""Most rows of tidy traces a scenario may ask for with ``trace_interval``."""
TRACE_BYTES_PER_ROW = 100
"""Peak memory to assemble one trace row (bytes; measured: 97 for a run's
tidy traces, including the per-flow arrays they are built from)."""
MIN_RTO_FLOOR = 1e-6
"""Smallest ``min_rto`` (s): Linux's ``tcp_rto_min_us`` takes no less than 1 µs."""
MAX_PACKET = 65_535
"""Bytes of the largest IPv4 packet (its 16-bit total length), headers included."""
MAX_MSS = MAX_PACKET - 40
"""Largest segment payload (bytes): an IPv4 packet less 20 bytes of IP and 20 of TCP header."""


def normalised(sc: "Scenario") -> dict[str, Any]:
    """The fields of ``sc`` in base units (links and flows as tuples, times
    in seconds, sizes in bytes, the bottleneck chosen), after checking each
    and how they fit together; raises :class:`~ccsim.ScenarioError` or
    :class:`~ccsim.ScenarioTypeError` for the first that does not."""
    links = tuple(sc.links) if isinstance(sc.links, Iterable) else None
    if not links or not all(isinstance(x, Link) for x in links):
        raise ScenarioTypeError("links", sc.links, "a non-empty sequence of ccsim.Link")
    if isinstance(sc.flows, (str, Flow)) or not isinstance(sc.flows, Iterable):
        raise ScenarioTypeError("flows", sc.flows, "a list of algorithm names or ccsim.Flow")
    flows = tuple(as_flow(f, i) for i, f in enumerate(sc.flows))
    if not flows:
        raise ScenarioError("flows", sc.flows, "at least one flow")
    duration = seconds(sc.duration, "duration", positive=True)
    whole(sc.seed, "seed", 0, "an integer ≥ 0")
    if sc.topology not in ("dumbbell", "path", "parking_lot"):
        raise ScenarioError("topology", sc.topology, "'dumbbell', 'path' or 'parking_lot'")
    mss, header = whole_bytes(sc.mss, "mss", 1), whole_bytes(sc.header, "header", 0)
    if mss > MAX_MSS:
        raise ScenarioError("mss", sc.mss, f"at most {MAX_MSS} bytes (an IPv4 packet's 65,535 "
                                           "bytes less 40 of IP and TCP headers)")
    packet = mss + header
    if packet > MAX_PACKET:
        raise ScenarioError("header", sc.header, f"at most {MAX_PACKET - mss} bytes: with mss="
                                                 f"{mss}, a packet of at most {MAX_PACKET} bytes "
                                                 "(an IPv4 packet's limit)")
    for i, flow in enumerate(flows):
        if flow.size is not None and flow.drop_segments:
            last = math.ceil(flow.size / mss) - 1
            if flow.drop_segments[-1] > last:
                raise ScenarioError(f"flows[{i}].drop_segments", flow.drop_segments,
                                    f"segment numbers 0..{last}: the flow's size is "
                                    f"{flow.size:g} bytes, {last + 1} segments of {mss}")
    for i, link in enumerate(links):
        if link.queue.unit == "bytes" and link.queue.limit < packet:
            raise ScenarioError(f"links[{i}].queue.limit", link.queue.limit,
                                f"at least one packet ({packet} bytes)")
    bottleneck = sc.bottleneck
    if bottleneck is None:
        bottleneck = min(range(len(links)), key=lambda i: links[i].rate)
    else:
        whole(bottleneck, "bottleneck", 0, f"a link index in 0..{len(links) - 1}")
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
        fastest = max(link.rate for link in links[first:last + 1])
        if flow.access_rate is not None and flow.access_rate < fastest:
            raise ScenarioError(f"flows[{i}].access_rate", flow.access_rate,
                                f"at least the fastest link the flow crosses, {fastest:g} bit/s "
                                "(a NIC's packet time adds as a fixed delay only when packets "
                                "reach it no closer together than that), or None",
                                "model a slow access link as a link of the path (ccsim.path)")
        if path_rtt <= 0 and flow.rtt is None:
            raise ScenarioError(f"flows[{i}].rtt", flow.rtt,
                                "a round-trip time > 0 (the links have no delay)")
    if not isinstance(sc.stack, str) or sc.stack not in STACKS:
        raise ScenarioError("stack", sc.stack, ", ".join(repr(n) for n in STACKS),
                            "each is a table of settings: docs/stack.md")
    iw = sc.initial_window
    if iw is not None:
        iw = positive_number(iw, "initial_window", "a window in segments")
        if iw < 1.0:  # a sender with less than one segment of window can never send
            raise ScenarioError("initial_window", sc.initial_window,
                                "a window of at least one segment")
    times = {name: None if getattr(sc, name) is None else
             seconds(getattr(sc, name), name, positive=True)
             for name in ("min_rto", "initial_rto", "max_rto", "delayed_ack_timeout")}
    min_rto = times["min_rto"]
    if min_rto is None:
        min_rto = STACKS[sc.stack].knobs["min_rto"].value
    if times["max_rto"] < min_rto:
        raise ScenarioError("max_rto", sc.max_rto, f"≥ min_rto={min_rto} s")
    if min_rto < MIN_RTO_FLOOR:
        raise ScenarioError("min_rto", sc.min_rto, "at least 1 µs, the floor of Linux's "
                            "net.ipv4.tcp_rto_min_us (its default: 200 ms)")
    for name in ("delayed_ack", "sack", "limited_transmit", "tail_loss_probe", "quick_ack",
                 "handshake", "exit_ack"):
        if getattr(sc, name) is not None and not isinstance(getattr(sc, name), bool):
            raise ScenarioTypeError(name, getattr(sc, name),
                                    f"True, False or None (the {sc.stack} stack's)")
    if sc.ack_counting not in (None, *ACK_COUNTINGS):
        raise ScenarioError("ack_counting", sc.ack_counting,
                            f"one of {ACK_COUNTINGS} or None (the stack's)")
    if sc.law_rtt not in (None, "sample", "smoothed"):
        raise ScenarioError("law_rtt", sc.law_rtt, "'sample', 'smoothed' or None (the stack's)")
    if sc.loss_flight not in (None, "flight", "pipe", "cwnd"):
        raise ScenarioError("loss_flight", sc.loss_flight,
                            "'flight', 'pipe', 'cwnd' or None (the stack's)")
    if sc.reduction_window not in (None, "all", "ecn", "none"):
        raise ScenarioError("reduction_window", sc.reduction_window,
                            "'all', 'ecn', 'none' or None (the stack's)")
    granularity = seconds(sc.rtt_granularity, "rtt_granularity", positive=False)
    if granularity < 0:
        raise ScenarioError("rtt_granularity", sc.rtt_granularity,
                            "a tick ≥ 0, such as '4ms' (0: exact)")
    rwnd = sc.rwnd
    if rwnd is not None:
        rwnd = parse_size(rwnd, "rwnd")
        if rwnd < mss:
            raise ScenarioError("rwnd", sc.rwnd, f"at least one segment ({mss} bytes)")
    interval = sc.trace_interval
    if interval is not None:
        interval = seconds(interval, "trace_interval", positive=True)
        if interval > duration:
            raise ScenarioError("trace_interval", sc.trace_interval,
                                f"at most the duration, {duration} s")
        rows = (duration / interval) * (len(TRACE_VARIABLES_PER_FLOW) * len(flows) + 1)
        if rows > MAX_TRACE_ROWS:
            shortest = interval * rows / MAX_TRACE_ROWS
            raise ScenarioError(
                "trace_interval", sc.trace_interval,
                f"at most {MAX_TRACE_ROWS:,} trace rows; {duration:g} s of {len(flows)} "
                f"flow(s) at this interval is {rows:,.0f} rows, about "
                f"{rows * TRACE_BYTES_PER_ROW / 2**30:,.1f} GiB to assemble",
                f"use trace_interval ≥ {shortest:.3g} s, or a shorter duration")
    jitter = sc.start_jitter
    if jitter is not None:
        jitter = seconds(jitter, "start_jitter", positive=False)
        for i, flow in enumerate(flows):
            end = duration if flow.stop is None else min(flow.stop, duration)
            if flow.start + jitter >= end:
                raise ScenarioError("start_jitter", sc.start_jitter,
                                    f"less than flows[{i}]'s {end - flow.start:g} s from "
                                    f"its start to its {'end' if end == duration else 'stop'}",
                                    "None (the default) bounds each flow's jitter by its "
                                    "RTT and its own time")
    ack_jitter = sc.ack_jitter
    if ack_jitter is not None:
        ack_jitter = seconds(ack_jitter, "ack_jitter", positive=False)
    return dict(links=links, flows=flows, duration=duration, seed=int(sc.seed),
                bottleneck=int(bottleneck), mss=mss, header=header,
                initial_window=iw, rwnd=rwnd, trace_interval=interval,
                rtt_granularity=granularity, start_jitter=jitter, ack_jitter=ack_jitter,
                **times)
