"""RED: Random Early Detection (Floyd & Jacobson 1993)."""

from __future__ import annotations

import random
import warnings
from dataclasses import dataclass
from typing import ClassVar

from .base import DROP, ENQUEUE, LinkView, QueueDiscipline, QueueState, flag, real, register, \
    whole_limit


class _REDState(QueueState):
    def __init__(self, discipline: "RED", link: LinkView, rng: random.Random) -> None:
        super().__init__(discipline, link, rng)
        self.avg = 0.0   # average queue (packets)
        self.count = -1  # packets since the last early drop
        self.idle_from = 0.0  # the last arrival that found the link idle (s)

    def arrive(self, t: float, waiting: int, ect: bool) -> int:
        """RED's early decision, then the physical limit (a full buffer drops,
        marked or not)."""
        early = self._early(t, waiting)
        if self.full(t, waiting):
            return DROP
        return self.congestion(ect) if early else ENQUEUE

    def _early(self, t: float, waiting: int) -> bool:
        """Floyd & Jacobson 1993, Fig. 2: update the average queue and the
        count, and say whether this arrival is selected.

        An arrival at an idle link ends the idle period whatever its fate
        (Linux's rule, see :class:`RED`): it decays the average by the time
        since the later of the link emptying and the previous such arrival."""
        red, link = self.discipline, self.link
        w = red.weight
        if link.free_at > t:  # busy: the FIFO holds a packet iff one is in service
            self.avg += w * (waiting - self.avg)
        else:  # idle: decay as if m empty-queue packets had passed
            m = (t - max(link.free_at, self.idle_from)) / link.tx
            self.avg *= (1.0 - w) ** m if m > 0 else (1.0 - w)
            self.idle_from = t
        avg = self.avg
        if avg < red.min_th:
            self.count = -1
            return False
        if avg < red.max_th:
            p_b = red.max_p * (avg - red.min_th) / (red.max_th - red.min_th)
        elif red.gentle and avg < 2.0 * red.max_th:
            p_b = red.max_p + (1.0 - red.max_p) * (avg - red.max_th) / red.max_th
        else:
            self.count = 0
            return True
        self.count += 1
        denom = 1.0 - self.count * p_b
        if denom <= 0.0 or self.rng.random() < p_b / denom:
            self.count = 0
            return True
        return False


@register
@dataclass(frozen=True)
class RED(QueueDiscipline):
    """Random Early Detection (Floyd & Jacobson, IEEE/ACM ToN 1(4), 1993).

    On each arrival the average queue ``avg`` (packets) follows an EWMA with
    gain ``weight``, decayed over idle periods as if ``m`` small packets had
    arrived (§4, the ``m = (time − q_time)/s`` rule); below ``min_th`` nothing
    is dropped, between the thresholds the drop probability rises linearly to
    ``max_p`` and is spread by the count of packets since the last drop
    (``p_a = p_b / (1 − count·p_b)``), above ``max_th`` every arrival is dropped
    — or, with ``gentle`` (Floyd, 2000), the probability rises from ``max_p``
    to 1 between ``max_th`` and ``2·max_th``. ``limit`` is the physical buffer.
    With ``ecn`` (RFC 3168 §7), ECN-capable packets RED selects are marked
    instead of dropped (and still dropped when the buffer is full).

    The idle period ends at every arrival that finds the link idle, dropped
    or not, and a dropped one starts the next: each such arrival decays the
    average by the idle time since the later of the link emptying and the
    previous arrival, so a run of drops at an empty queue decays it by the
    elapsed idle time, once. This is Linux's ``sch_red`` (on enqueue the
    average is decayed and the idle period ended; a dequeue that then finds
    the queue empty restarts it) and ns-2's ``REDQueue`` (any arrival clears
    ``idle_``). Deviation from the paper: read literally, Fig. 2 sets
    ``q_time`` only when the queue empties, so every arrival dropped at an
    empty queue would decay the average by the whole idle time so far,
    compounding; no implementation we know of does that, so it is not offered.
    Linux tabulates the decay with ``Scell_log`` and approximates short idle
    times linearly; here it is ``(1 − weight)^m`` with ``m`` the idle time
    over one packet's transmission time, and an idle time of zero counts as
    one empty-queue sample (``m`` = 1).

    Defaults are those of the paper's simulations (§6, Fig. 5): ``min_th`` 5
    and ``max_th`` 15 packets, ``weight`` 0.002, ``max_p`` 1/50.

    Attributes:
        limit: physical buffer (packets waiting).
        min_th, max_th: thresholds on the average queue (packets).
        max_p: drop probability at ``max_th``.
        weight: EWMA gain ``w_q``.
        gentle: use the gentle variant above ``max_th``.
        ecn: mark instead of dropping, for ECN-capable flows.
    """

    limit: float
    min_th: float = 5.0
    max_th: float = 15.0
    max_p: float = 0.02
    weight: float = 0.002
    gentle: bool = False
    ecn: bool = False
    kind: ClassVar[str] = "red"
    unit: ClassVar[str] = "packets"
    fluid: ClassVar[bool] = True

    def __post_init__(self) -> None:
        limit = whole_limit(self)
        min_th = real(self, "min_th", "a threshold ≥ 0 (packets)", lambda v: v >= 0)
        real(self, "max_th", f"a threshold > min_th={min_th}", lambda v: v > min_th)
        real(self, "max_p", "a probability in (0, 1]", lambda v: 0 < v <= 1)
        real(self, "weight", "an EWMA gain in (0, 1]", lambda v: 0 < v <= 1)
        flag(self, "gentle")
        flag(self, "ecn")
        if min_th >= limit:
            warnings.warn(f"queue.min_th={min_th} is not below the buffer limit={limit:g} "
                          "packets: the average queue can never pass it, so RED never drops "
                          "early and the queue acts as drop-tail; lower min_th or enlarge "
                          "the buffer", UserWarning, stacklevel=3)

    def packets(self, packet_size: int) -> int:
        """Physical capacity in packets."""
        return int(self.limit)

    def start(self, link: LinkView, rng: random.Random) -> QueueState:
        return _REDState(self, link, rng)
