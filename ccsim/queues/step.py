"""Step marking: DCTCP's switch rule (Alizadeh et al., SIGCOMM 2010; RFC 8257 §3.1)."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import ClassVar

from ..errors import ScenarioError
import numpy as np

from .base import DROP, ENQUEUE, MARK, FluidQueue, LinkView, QueueDiscipline, QueueState, real, \
    register, whole_limit


class _StepState(QueueState):
    def arrive(self, t: float, waiting: int, ect: bool) -> int:
        if self.full(t, waiting):
            return DROP
        if waiting >= self.discipline.K:
            return MARK if ect else DROP
        return ENQUEUE


class StepMarkFluid(FluidQueue):
    """Step marking in the fluid engine: the DCTCP fluid model's
    ``p(t) = 1[q(t) ≥ K]`` (Alizadeh, Javanmard & Prabhakar, "Analysis of
    DCTCP", SIGMETRICS 2011, §2) on the queue at the start of each step.

    Differences from the packet rule: the queue is read once per step, so a
    crossing of ``K`` is seen up to a step late; a flow that is not
    ECN-capable sees a drop-tail queue of ``K`` packets (its window growth
    is dropped while ``K`` wait, as the fluid engine drops a full buffer's
    overflow), not the loss of every packet arriving above ``K``.
    """

    random = False
    drop_growth = True

    def __init__(self, queues, C):
        super().__init__(queues, C)
        self.K = self.column("K")

    def signal(self, t, h, q, arrived):
        return (q >= self.K).astype(float), np.ones(len(q), bool)


@register
@dataclass(frozen=True)
class StepMark(QueueDiscipline):
    """Mark an arriving packet with CE when at least ``K`` packets wait.

    The instantaneous-queue threshold of DCTCP's switches (Alizadeh et al.,
    "Data Center TCP (DCTCP)", SIGCOMM 2010, §3.1; RFC 8257 §3.1). A packet of
    a flow that is not ECN-capable is dropped where an ECN-capable one would
    be marked (RFC 3168 §5: a router marks only ECT packets). ``K`` counts
    packets waiting, not the one in service, as ``limit`` does.

    Attributes:
        K: marking threshold (packets waiting; whole, ≥ 1).
        limit: physical buffer (packets waiting); tail drop when full.
    """

    K: float
    limit: float = 1000
    kind: ClassVar[str] = "step"
    unit: ClassVar[str] = "packets"
    ecn: ClassVar[bool] = True

    def __post_init__(self) -> None:
        K = real(self, "K", "a whole number of packets ≥ 1", lambda v: v >= 1 and v.is_integer())
        limit = whole_limit(self)
        if K > limit:
            raise ScenarioError("queue.K", self.K, f"a threshold ≤ limit={limit:g} packets")

    def start(self, link: LinkView, rng: random.Random) -> QueueState:
        return _StepState(self, link, rng)


StepMark.fluid = StepMarkFluid
