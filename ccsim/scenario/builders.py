"""The builders: a scenario from the few numbers that describe it.

:func:`dumbbell`, :func:`parking_lot` and :func:`path` take human units
(``"10Mbps"``, ``"20ms"``, ``"1BDP"``) and the stack knobs, and return a
validated :class:`~ccsim.Scenario`; their arithmetic is in
:mod:`.topologies`.
"""

from __future__ import annotations

from typing import Any, Iterable

from .core import Scenario
from .topologies import ACCESS, dumbbell_fields, parking_lot_fields, path_fields


def dumbbell(bandwidth: Any, rtt: Any, buffer: Any = None, queue: Any = "droptail",
             loss: float = 0.0, flows: Iterable[Any] = ("reno", "reno"),
             duration: Any = "60s", seed: int = 0, access: Any = ACCESS,
             jitter: Any = 0.0,
             **knobs: Any) -> Scenario:
    """A dumbbell: every flow crosses one bottleneck link.

    Args:
        bandwidth: bottleneck rate (bit/s or ``"10Mbps"``), or a rate that
            changes: a list of ``(time, rate)`` steps or a
            :class:`~ccsim.RateSchedule` such as :func:`ccsim.read_mahimahi`'s.
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
        access: each host's NIC, the access link between it and the
            bottleneck: a rate (``"1Gbps"``, bit/s, or a multiple of
            ``bandwidth`` such as ``"10x"``, the default), a dict with ``rate``
            and ``delay`` (each access link's one-way propagation delay: the
            flow's RTT grows by four of it), or a list of these, one per flow;
            ``None`` or ``False``: infinitely fast hosts (the model before
            access links; bursts reach the bottleneck at one instant). A
            :class:`Flow` with its own ``access_rate`` keeps it. Bursts leave
            each sender one NIC packet time apart, so the bursts of flows
            sending together interleave at the bottleneck; ``docs/engine.md``,
            "Hosts and access links".
        jitter: the bottleneck's jitter (s): each data packet delayed by up
            to this after the link, order kept (:attr:`Link.jitter`).
        **knobs: stack knobs of :class:`Scenario` (``mss``, ``initial_window``,
            ``min_rto``, ``delayed_ack``, ``sack``, ``rwnd``, ...).

    The bottleneck's propagation delay is half the smallest flow RTT (access
    delays not counted); flows with longer RTTs get access delays that make up
    the difference.
    """
    return Scenario(**dumbbell_fields(bandwidth, rtt, buffer, queue, loss, flows, duration, seed,
                                      access, jitter, **knobs))


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
    return Scenario(**parking_lot_fields(hops, bandwidth, rtt, buffer, queue, long, cross,
                                         duration, seed, **knobs))


def path(links: Iterable[Any], flows: Iterable[Any] = ("reno",), duration: Any = "60s",
         seed: int = 0, bottleneck: int | None = None, **knobs: Any) -> Scenario:
    """A multi-hop path: every flow crosses ``links`` in order.

    Each link is a :class:`Link` or a dict with ``rate``, ``delay`` and
    optionally ``buffer`` (as in :func:`dumbbell`; a BDP multiple uses the
    path's two-way delay and that link's rate), ``queue``, ``loss`` and
    ``jitter``; ``rate`` may be a schedule (steps or a Mahimahi trace). Seed
    002's two hosts through four routers with the bottleneck at the first
    router is five links, the second one the slowest.
    """
    return Scenario(**path_fields(links, flows, duration, seed, bottleneck, **knobs))
