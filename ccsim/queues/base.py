"""The queue-discipline contract: what a link asks its queue about each packet.

A discipline is two objects, as a window law is a class and its instance:

* its *description*, a frozen dataclass subclassing :class:`QueueDiscipline`:
  the parameters a :class:`~ccsim.Scenario` stores, validates, serialises and
  hashes, with a registered ``kind`` name (``"droptail"``, ``"red"``, ...);
* its *run-time state*, a :class:`QueueState` that
  :meth:`QueueDiscipline.start` builds fresh for every run and whose
  :meth:`QueueState.arrive` decides, for each packet arriving at the link in
  time order, :data:`ENQUEUE`, :data:`DROP` or :data:`MARK` (set ECN's CE
  codepoint, RFC 3168, and enqueue).

How a FIFO link sees the future
-------------------------------
The packet engine decides a packet's fate when it arrives at the link (see
:mod:`ccsim.packet.link`): every packet has the same size, the queue is FIFO,
so the packet's dequeue time (start of its transmission) is already known at
arrival: ``max(link.free_at, t)``, and its sojourn in the queue is that
minus ``t``. A discipline that decides at *dequeue* (CoDel, RFC 8289) is
expressed by deciding at arrival with the packet's own dequeue time and
sojourn, and by advancing its control law at that dequeue time: dequeue
order is arrival order, so the state sees the same sequence of dequeue
events at the same times as a dequeue-time implementation. What it cannot
see is a packet that arrives after this one but before its dequeue (see the
discipline's "Differences from the source").

The link state a discipline may read is a :class:`LinkView`: ``tx`` (s per
packet), ``limit`` (packets waiting), ``free_at`` (s, when the last accepted
packet finishes; the link is busy at ``t`` iff ``free_at > t``), ``queue``
(departure times of the packets held, oldest first; departures ``<= t``
already removed). It must not change them. The packet engine's
:class:`ccsim.packet.link.LinkState` is one; the disciplines, a layer below
the engine, name only this view of it.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
import random
from collections import deque
from typing import Any, ClassVar, Protocol

import numpy as np

from .._registry import Registry
from ..errors import ScenarioError, ScenarioTypeError

__all__ = ["QueueDiscipline", "QueueState", "FluidQueue", "LinkView", "ENQUEUE", "DROP", "MARK",
           "register", "names", "get"]

ENQUEUE = 0
"""Verdict: the packet joins the queue."""
DROP = 1
"""Verdict: the packet is discarded."""
MARK = 2
"""Verdict: the packet joins the queue carrying ECN's CE mark (RFC 3168 §5);
only for packets of ECN-capable flows (``ect``)."""


class LinkView(Protocol):
    """What a discipline may read of the link it sits on, and must not change
    (the packet engine's :class:`~ccsim.packet.link.LinkState` has these).

    Attributes:
        tx: time to serialise one data packet (s).
        limit: buffer, in packets waiting (the one in service not counted).
        free_at: when the last accepted packet finishes its transmission (s);
            the link is busy at ``t`` iff ``free_at > t``.
        queue: departure times of the packets held, oldest first (s); those
            ``<= t`` already removed when :meth:`QueueState.arrive` is asked.
    """

    tx: float
    limit: int
    free_at: float
    queue: deque[float]


class QueueState:
    """Run-time state of one discipline on one link (mutable, one per run).

    Attributes:
        link: the link's run-time state (read only; see the module docstring).
        rng: the link's seeded generator for this queue's random draws.
    """

    def __init__(self, discipline: "QueueDiscipline", link: LinkView,
                 rng: random.Random) -> None:
        self.discipline = discipline
        self.link = link
        self.rng = rng

    def arrive(self, t: float, waiting: int, ect: bool) -> int:
        """A packet arrives at ``t`` (s, non-decreasing over calls) finding
        ``waiting`` packets queued (the one in service not counted); ``ect``:
        its flow is ECN-capable. Returns :data:`ENQUEUE`, :data:`DROP` or
        :data:`MARK` (never for ``ect=False``). The buffer limit is the
        discipline's to enforce (:meth:`full`)."""
        raise NotImplementedError

    def full(self, t: float, waiting: int) -> bool:
        """Drop-tail's rule: the link is busy and ``limit`` packets wait."""
        return waiting >= self.link.limit and self.link.free_at > t

    def congestion(self, ect: bool) -> int:
        """The verdict for a congestion signal: :data:`MARK` for an
        ECN-capable packet when the discipline has ``ecn`` on, else :data:`DROP`."""
        return MARK if ect and self.discipline.ecn else DROP


class QueueDiscipline:
    """Base of every queue description (subclasses are frozen dataclasses).

    Subclasses set ``kind`` (the registry name), declare ``limit`` (the
    physical buffer) and their parameters as dataclass fields with defaults,
    validate them in ``__post_init__`` (raising
    :class:`~ccsim.ScenarioError` naming ``queue.<field>``), and implement
    :meth:`start`. Register one with :func:`ccsim.queues.register` so that a
    scenario naming it round-trips through dict/JSON/TOML.

    Attributes:
        limit: buffer, in packets waiting (or bytes when ``unit`` is
            ``"bytes"``, drop-tail only).
        unit: ``"packets"`` or ``"bytes"``.
        ecn: mark ECN-capable packets instead of dropping them (RFC 3168).
    """

    name: ClassVar[str] = ""  # registry key; equals ``kind``
    kind: ClassVar[str] = ""
    limit: float
    unit: str = "packets"
    ecn: bool = False
    #: How the fluid engine models this discipline: ``False`` (it does not:
    #: such scenarios are refused in ``mode="fluid"``), ``True`` (the
    #: engine's own model: drop-tail, RED) or a :class:`FluidQueue` subclass,
    #: declared in the discipline's own file.
    fluid: ClassVar[Any] = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.name = cls.kind

    def packets(self, packet_size: int) -> int:
        """Capacity in whole packets of ``packet_size`` bytes."""
        return int(self.limit if self.unit == "packets" else self.limit // packet_size)

    def start(self, link: LinkView, rng: random.Random) -> QueueState:
        """A fresh run-time state on ``link`` drawing from ``rng``."""
        raise NotImplementedError

    def to_dict(self) -> dict[str, Any]:
        """``{"kind": ..., field: value, ...}``; ``ecn`` only when on (so
        scenarios written before ECN keep their keys)."""
        out = {"kind": self.kind, **dataclasses.asdict(self)}
        if not out.get("ecn", True):
            del out["ecn"]
        return out


class FluidQueue:
    """A discipline in the fluid engine: its congestion signal over arrays of
    scenarios (one entry per scenario of the batch that uses it).

    Once per step the engine asks :meth:`signal` what fraction of the step's
    arrivals the discipline selects, from the queue at the start of the step;
    ECN-capable flows' selected packets are marked where the discipline marks
    them, the other flows' are dropped (as whole packets: Poisson counts when
    ``random``, else at regular spacing).

    Args:
        queues: the scenarios' disciplines, in the order of the arrays.
        C: the bottleneck's rate per scenario (packets/s).
    """

    #: Selections are independent draws (RED, PIE) rather than scheduled (CoDel, step).
    random: ClassVar[bool] = True
    #: Flows that are not ECN-capable lose their window growth while selected
    #: (a drop-tail queue at the threshold, as at a full buffer) instead of the
    #: selected fraction of their arrivals.
    drop_growth: ClassVar[bool] = False

    def __init__(self, queues: "list[QueueDiscipline]", C: "np.ndarray") -> None:
        self.queues, self.C = queues, C

    def signal(self, t: "np.ndarray", h: "np.ndarray", q: "np.ndarray",
               arrived: "np.ndarray") -> "tuple[np.ndarray, np.ndarray]":
        """The fraction of the step's arrivals selected, in [0, 1], and whether
        an ECN-capable packet selected is marked (else dropped), per scenario.
        ``t``: start of the step (s); ``h``: its length (s; 0 for scenarios
        that do not advance, which must keep their state); ``q``: the queue
        (packets waiting); ``arrived``: the arrival rate of the last step
        (packets/s)."""
        raise NotImplementedError

    def column(self, name: str) -> "np.ndarray":
        """The disciplines' parameter ``name`` as a float array."""
        return np.array([float(getattr(q, name)) for q in self.queues])


REGISTRY: Registry[type[QueueDiscipline]] = Registry(QueueDiscipline, "queue")
register = REGISTRY.register
names = REGISTRY.names
get = REGISTRY.get


# -- validators shared by the disciplines ------------------------------------------
def real(obj: Any, name: str, allowed: str, ok: Any = lambda v: True) -> float:
    """``obj.name`` as a finite float satisfying ``ok``, else a ScenarioError
    naming ``queue.name``, its value and ``allowed``."""
    value = getattr(obj, name)
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ScenarioTypeError(f"queue.{name}", value, allowed)
    value = float(value)
    if not math.isfinite(value) or not ok(value):
        raise ScenarioError(f"queue.{name}", value, allowed)
    object.__setattr__(obj, name, value)
    return value


def whole_limit(obj: Any) -> float:
    """``obj.limit`` as a whole number of packets > 0."""
    limit = real(obj, "limit", "a buffer > 0 packets", lambda v: v > 0)
    if not limit.is_integer():
        raise ScenarioError("queue.limit", obj.limit, "a whole number of packets")
    return limit


def flag(obj: Any, name: str) -> bool:
    value = getattr(obj, name)
    if not isinstance(value, bool):
        raise ScenarioTypeError(f"queue.{name}", value, "True or False")
    return value
