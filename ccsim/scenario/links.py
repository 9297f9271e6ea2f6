"""Links and their queues: the chain a scenario's flows cross.

A :class:`Link` is a rate, a propagation delay, an egress queue (a
:class:`~ccsim.queues.QueueDiscipline`) and a random-loss probability;
:func:`make_queue` builds the queue the builders ask for by name and buffer
(packets, bytes or a multiple of the bandwidth-delay product).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .. import queues
from ..errors import ScenarioError, ScenarioTypeError
from ..queues import DropTail, QueueDiscipline
from ..units import parse_buffer, parse_rate
from .checks import probability, seconds, set_normalised
from .schedule import RateSchedule, as_schedule

MIN_RATE = 1000.0
"""Slowest link (bit/s): a 1,500-byte packet in 12 s. Below it serialisation
times overflow the clock's precision (1e-300 bit/s gave 1e304 s per packet)."""

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


@dataclass(frozen=True)
class Link:
    """A link: transmission at ``rate``, then ``delay`` of propagation.

    Attributes:
        rate: transmission rate (bit/s); strings such as ``"10Mbps"`` accepted.
            A rate that changes is given here too: a list of ``(time, rate)``
            steps or a :class:`~ccsim.RateSchedule` (such as
            :func:`ccsim.read_mahimahi`'s); ``rate`` then reads back as its
            nominal rate (:attr:`RateSchedule.rate`) and ``schedule`` holds it.
        delay: one-way propagation delay (s); ``"5ms"`` accepted; may be 0.
        queue: the egress queue in front of the link.
        loss: probability that a data packet is lost on this link after being
            transmitted (random link error), in [0, 1).
        schedule: the rate schedule, or ``None`` for a fixed rate.
        jitter: each data packet is further delayed by a uniform random time
            in ``[0, jitter]`` (s) after the link, order kept (a packet never
            overtakes the one before): non-congestive delay, such as a
            cellular or Wi-Fi link's (Arun et al., SIGCOMM 2022). 0: none.
    """

    rate: float
    delay: float
    queue: QueueDiscipline = field(default_factory=lambda: DropTail(1000))
    loss: float = 0.0
    schedule: RateSchedule | None = None
    jitter: float = 0.0

    def __post_init__(self) -> None:
        schedule = as_schedule(self.rate, "link.rate")
        if schedule is not None:
            if self.schedule is not None and self.schedule != schedule:
                raise ScenarioError("link.schedule", self.schedule,
                                    "None when rate is a schedule, or the same schedule")
        elif self.schedule is not None:
            schedule = as_schedule(self.schedule, "link.schedule")
            if schedule is None:
                raise ScenarioTypeError("link.schedule", self.schedule,
                                        "a ccsim.RateSchedule, a list of (time, rate) steps, "
                                        "or None")
            if parse_rate(self.rate, "link.rate") != schedule.rate:
                raise ScenarioError("link.rate", self.rate,
                                    f"the schedule's nominal rate ({schedule.rate:g} bit/s) "
                                    "when a schedule is given, or the schedule itself")
        if schedule is not None:
            set_normalised(self, schedule=schedule, rate=schedule.rate)
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
        set_normalised(self, queue=queue)
        set_normalised(self, rate=rate, delay=seconds(self.delay, "link.delay", positive=False),
                       loss=probability(self.loss, "link.loss"),
                       jitter=seconds(self.jitter, "link.jitter", positive=False))
