"""What the fluid engine models, and the clear error for what it does not.

The fluid model has one bottleneck (the slowest link), one direction of TCP
flows with uncongested ACKs, and no packets to delay, space or drop one by
one: a scenario that needs any of these is refused before a run, naming
the field, its value and what the fluid engine allows (``mode="packet"``
models them all).
"""

from __future__ import annotations

from typing import Sequence

from ..algorithms import get as get_algorithm
from ..errors import ScenarioError
from ..errors import packet_only as _packet_only
from ..scenario import DropTail, Scenario


def refuse(sc: Scenario, i: int, stacks: Sequence) -> None:
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
