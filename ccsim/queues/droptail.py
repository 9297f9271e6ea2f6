"""Drop-tail: a FIFO queue that drops arrivals when its buffer is full."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import ClassVar

from ..errors import ScenarioError
from ..units import parse_buffer
from .base import DROP, ENQUEUE, LinkView, QueueDiscipline, QueueState, real, register


class _DropTailState(QueueState):
    def arrive(self, t: float, waiting: int, ect: bool) -> int:
        return DROP if self.full(t, waiting) else ENQUEUE


@register
@dataclass(frozen=True)
class DropTail(QueueDiscipline):
    """First-in first-out queue that drops arrivals when full.

    The packet engine runs drop-tail inline in the link (its fast path); the
    run-time object below states the same rule for anyone who asks.

    Attributes:
        limit: capacity, in packets waiting (the one being transmitted is not
            counted) or in bytes, per ``unit``.
        unit: ``"packets"`` or ``"bytes"``.
    """

    limit: float
    unit: str = "packets"
    kind: ClassVar[str] = "droptail"
    fluid: ClassVar[bool] = True

    def __post_init__(self) -> None:
        if self.unit not in ("packets", "bytes"):
            raise ScenarioError("queue.unit", self.unit, "'packets' or 'bytes'")
        if isinstance(self.limit, str):  # "64KB", "100 packets", as a scenario's buffer reads
            amount, kind = parse_buffer(self.limit, "queue.limit")
            if kind == "bdp":
                raise ScenarioError("queue.limit", self.limit, "packets or a size: a queue "
                                    "alone has no bandwidth-delay product",
                                    "give the multiple to the builder: dumbbell(buffer='1BDP')")
            if kind == "packets" and self.unit == "bytes":
                raise ScenarioError("queue.limit", self.limit, "a size such as '64KB' with "
                                    "unit='bytes'", "or a number of bytes, or leave unit out")
            object.__setattr__(self, "unit", kind)
            object.__setattr__(self, "limit", amount)
        limit = real(self, "limit", "a buffer > 0: packets (100), or a size such as '64KB'",
                     lambda v: v > 0)
        if self.unit == "packets" and not limit.is_integer():
            raise ScenarioError("queue.limit", self.limit, "a whole number of packets")

    def start(self, link: LinkView, rng: random.Random) -> QueueState:
        return _DropTailState(self, link, rng)
