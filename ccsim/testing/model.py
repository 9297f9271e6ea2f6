"""The world the kit's event streams come from: a path, a sender's view of it,
and the bookkeeping for rules and replays. No hypothesis here.

A :class:`Path` has a base (propagation) RTT, a bottleneck rate and a buffer;
a window-limited :class:`Sender` on it produces the events the packet engine
would hand a window law (:mod:`ccsim.packet.tcp`), built by name from the
contract (:mod:`ccsim.algorithms.contract`): RTT samples are the base RTT
plus the queueing delay of the segments in flight beyond one BDP (never below
the base RTT), ``min_rtt`` is the minimum of the samples, ``srtt`` follows
RFC 6298, and delivery-rate samples are ``inflight·MSS·8 / RTT`` capped at the
bottleneck rate, so rates and RTTs agree (``NOT_SAMPLED`` for laws that do not
ask for them, as in the engines).
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field

from ..algorithms.base import NOT_SAMPLED, CongestionControl
from ..algorithms.contract import Ack, EcnEcho, Loss, RttSample, event

__all__ = ["Path", "AckRound", "Sender", "snapshot", "declared", "HOOKS"]

#: The hooks whose override makes a subclass a different law (see :func:`declared`).
HOOKS = ("start", "on_ack", "on_loss", "ssthresh_after")


@dataclass
class Path:
    """A bottleneck path.

    Attributes:
        base_rtt: round-trip propagation delay (s); an RTT step changes it.
        bandwidth: bottleneck rate (bit/s).
        mss: segment size (bytes).
        buffer: bottleneck buffer (segments).
    """

    base_rtt: float
    bandwidth: float
    mss: int
    buffer: float

    @property
    def bdp(self) -> float:
        """Bandwidth-delay product (segments)."""
        return self.bandwidth * self.base_rtt / (8.0 * self.mss)

    @property
    def capacity(self) -> float:
        """Segments the path holds before the buffer overflows: BDP + buffer."""
        return self.bdp + self.buffer

    def rtt(self, inflight: float) -> float:
        """RTT seen with ``inflight`` segments outstanding: base RTT plus the
        queueing delay of what exceeds one BDP (at most a full buffer)."""
        queue = min(max(inflight - self.bdp, 0.0), self.buffer)
        return self.base_rtt + queue * self.mss * 8.0 / self.bandwidth


@dataclass(frozen=True)
class AckRound:
    """One RTT of ACKs: ``len(acks)`` = ``floor(cwnd)`` ACKs of one segment
    each, evenly spread over one RTT (``rtt``). The event that per-RTT rules
    (:meth:`~ccsim.algorithms.base.CongestionControl.max_growth_per_rtt`,
    Reno's one segment per RTT) are stated over."""

    acks: tuple[Ack, ...]
    rtt: float


@dataclass
class Sender:
    """A sender's bookkeeping, as far as a window law can see it."""

    path: Path
    now: float = 0.0
    min_rtt: float = math.inf
    srtt: float = math.nan
    delivered: float = 0.0
    retransmitted: bool = False  # something was resent: Karn may hide samples
    samples_rate: bool = True  # else delivery_rate is NOT_SAMPLED, as the engines give
    #                            laws that do not set samples_delivery_rate
    marked: int = 0  # CE marks echoed so far (segments)
    log: list = field(default_factory=list)

    def rtt_sample(self, rtt: float, inflight: float, dt: float) -> RttSample:
        """A valid RTT sample ``dt`` seconds after the last event, with no ACK
        of new data (an ACK during loss recovery)."""
        self.now += dt
        self.sample(rtt)
        return event("on_rtt", now=self.now, rtt=rtt, min_rtt=self.min_rtt, srtt=self.srtt,
                     inflight=float(inflight))

    def sample(self, rtt: float) -> None:
        """Take a valid RTT sample (RFC 6298 §2 for srtt)."""
        self.srtt = rtt if math.isnan(self.srtt) else 0.875 * self.srtt + 0.125 * rtt
        self.min_rtt = min(self.min_rtt, rtt)

    def ack(self, acked: float, inflight_before: float, rtt: float | None,
            dt: float) -> tuple[RttSample | None, Ack]:
        """An ACK of ``acked`` new segments ``dt`` seconds after the last event,
        with ``inflight_before`` segments outstanding before it; ``rtt=None``
        means Karn's rule hid the sample. Returns the RTT sample the engine
        hands ``on_rtt`` first (or ``None``) and the ``Ack``."""
        self.now += dt
        path_rtt = self.path.rtt(inflight_before)
        sample = None
        inflight = max(inflight_before - acked, 0.0)
        if rtt is not None:
            self.sample(rtt)
            sample = event("on_rtt", now=self.now, rtt=rtt, min_rtt=self.min_rtt,
                           srtt=self.srtt, inflight=inflight)
        self.delivered += acked
        rate = (min(self.path.bandwidth, inflight_before * self.path.mss * 8.0 / path_rtt)
                if self.samples_rate else NOT_SAMPLED)
        # ACK-clocked: the acknowledged segment went out with what was then in
        # flight, and that much was delivered over its round trip
        sampled = float(inflight_before) if self.samples_rate else NOT_SAMPLED
        return sample, event("on_ack", now=self.now, acked=acked, rtt=rtt, min_rtt=self.min_rtt,
                             srtt=self.srtt, inflight=inflight, delivered=self.delivered,
                             delivery_rate=rate, tx_in_flight=sampled,
                             sample_delivered=sampled)

    def loss(self, kind: str, inflight: float, dt: float = 0.0) -> Loss:
        """A loss detected ``dt`` seconds after the last event."""
        self.now += dt
        self.retransmitted = True
        return event("on_loss", now=self.now, kind=kind, inflight=float(inflight),
                     min_rtt=self.min_rtt, srtt=self.srtt)

    def echo(self, marked: int, inflight: float, dt: float = 0.0) -> EcnEcho:
        """An ACK arriving ``dt`` seconds after the last event echoes ``marked``
        CE marks, with ``inflight`` segments outstanding before it (the
        ``EcnEcho`` for ``on_ce_echo`` and ``on_ecn``, before the ACK's own)."""
        self.now += dt
        self.marked += marked
        return event("on_ce_echo", now=self.now, marked=marked, marked_total=self.marked,
                     delivered=self.delivered, inflight=float(inflight), min_rtt=self.min_rtt,
                     srtt=self.srtt)


def snapshot(algo: CongestionControl) -> dict:
    """A copy of the algorithm's state (``vars``), safe to keep: rules compare
    one taken before a step with one taken after it."""
    out = {}
    for k, v in vars(algo).items():
        out[k] = v if isinstance(v, (int, float, str, bool, type(None))) else copy.deepcopy(v)
    return out


def same_state(a: dict, b: dict) -> bool:
    """Whether two snapshots are equal (NaN equal to NaN)."""
    if a.keys() != b.keys():
        return False
    for k in a:
        x, y = a[k], b[k]
        if isinstance(x, float) and isinstance(y, float) and math.isnan(x) and math.isnan(y):
            continue
        try:
            if x != y:
                return False
        except Exception:  # e.g. numpy arrays: compare their reprs
            if repr(x) != repr(y):
                return False
    return True


def declared(cls: type[CongestionControl], attr: str):
    """The ``attr`` declaration (``properties``, ``max_growth_per_rtt``) that
    describes ``cls``'s law: the nearest class in the MRO declaring it whose
    hooks ``cls`` keeps unchanged, else :class:`CongestionControl`'s default.

    So NewReno and Tahoe (Reno's hooks) get Reno's rules, while CUBIC (it
    overrides ``on_ack``) does not get "one segment per RTT" unless it
    declares a rule of its own.
    """
    for klass in cls.__mro__:
        if klass is CongestionControl:
            break
        if attr in vars(klass) and all(getattr(cls, h) is getattr(klass, h) for h in HOOKS):
            return getattr(klass, attr)
    return getattr(CongestionControl, attr)
