"""The generic route: a window law without a fluid law, run through its hooks.

"Write a class, run it in both engines" holds for every class: when an
algorithm declares no :attr:`~ccsim.algorithms.CongestionControl.fluid`, the
fluid engine keeps one instance of it per flow and, once per step, hands it
what the step brought: an :class:`~ccsim.algorithms.RttSample` and one
:class:`~ccsim.algorithms.Ack` aggregating the step's acknowledged segments;
loss events reach :meth:`~ccsim.algorithms.CongestionControl.on_loss` as in
the packet engine. Every event is built by name from the contract
(:mod:`ccsim.algorithms.contract`, which says when this route calls each
hook). Slower than a fluid law (a Python call per flow per step)
but faithful to the class's own rules at the step's resolution.

One correction keeps slow start honest: packet by packet, on a link not
yet full the ACKs of one window arrive over the next RTT and each adds a
segment, so the window doubles per RTT; in a fluid step the flow's ACK rate
is ``cwnd / RTT``, and handing that to ``cwnd += acked`` would grow it by
``e`` per RTT. While ``cwnd < ssthresh`` on such a link the engine therefore
hands ``ln 2`` of the step's acknowledged segments to the hook (``cwnd · (1
+ ln 2 · h / RTT)`` per step: doubling per RTT to first order). Behind a
queue the ACKs do come at ``cwnd / RTT`` (the flow's share of the link's
rate), and the hook gets them all (:meth:`FlowArrays.ss_grown`).
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from ..algorithms.base import NOT_SAMPLED, CongestionControl
from ..algorithms.contract import event
from ..algorithms.fluid import FlowArrays, FluidLaw

__all__ = ["HookLaw"]

LN2 = math.log(2.0)


class HookLaw(FluidLaw):
    """Runs a window law's own hooks once per step, one instance per flow.

    Args:
        cc: an instance with the group's parameters (not used for flows).
        flows: the group's :class:`~ccsim.Flow` objects, in slice order.
        packet_bits: bits of one full data packet of each flow (for
            converting ``pacing_rate``, bit/s, to segments per second).
        where: (scenario, flow) indices of each flow in the batch, to say
            whose law failed when one raises.
    """

    paces = True  # a class may set pacing_rate in any hook

    def __init__(self, cc: Any, flows: Sequence[Any], packet_bits: Sequence[float],
                 where: Sequence[tuple[int, int]] = ()) -> None:
        super().__init__(cc)
        self.laws = [flow.make_algorithm() for flow in flows]
        self.where = list(where)
        self.packet_bits = list(packet_bits)
        self.wants_rtt = type(cc).on_rtt is not CongestionControl.on_rtt
        self.samples_rate = cc.samples_delivery_rate  # Ack.delivery_rate, if the law reads it
        self.marked_total = [0] * len(self.laws)  # CE marks echoed to each flow (segments)
        self.hears_echoes = type(cc).on_ce_echo is not CongestionControl.on_ce_echo

    def start(self, f: FlowArrays, m: np.ndarray) -> None:
        for i in np.flatnonzero(m):
            cc = self.laws[i]
            cc.start(float(f.cwnd[i]), int(f.mss[i]))
            self._read(f, i, cc)

    def _read(self, f: FlowArrays, i: int, cc: Any) -> None:
        f.cwnd[i] = cc.cwnd
        f.ssthresh[i] = cc.ssthresh
        rate = cc.pacing_rate
        f.pacing[i] = rate / self.packet_bits[i] if rate else math.inf

    def grow(self, f: FlowArrays) -> None:
        if self.hears_echoes:
            self._echoes(f)
        acked = f.acked
        todo = np.flatnonzero((acked > 0) & ((f.h > 0) | self._in_recovery(f)))
        if todo.size == 0:
            return
        cols = [a[todo].tolist() for a in (f.now, f.h, f.rtt, f.min_rtt, f.srtt, f.inflight,
                                            f.delivered, acked, f.cwnd, f.ssthresh, f.mss,
                                            f.queued)]
        for i, now, h, rtt, min_rtt, srtt, inflight, delivered, n, cwnd, ssthresh, mss, \
                queued in zip(todo.tolist(), *cols):
            cc = self.laws[i]
            cc.cwnd, cc.ssthresh = cwnd, ssthresh
            if self.wants_rtt:
                cc.on_rtt(event("on_rtt", now=now, rtt=rtt, min_rtt=min_rtt, srtt=srtt,
                                inflight=inflight))
            rate = (n * mss * 8.0 / (h if h > 0 else rtt)  # the step's delivery rate (bit/s)
                    if self.samples_rate else NOT_SAMPLED)
            # over the step: its deliveries, and in flight before them
            sample_delivered = n if self.samples_rate else NOT_SAMPLED
            tx_in_flight = inflight + n if self.samples_rate else NOT_SAMPLED
            if cc.cwnd < cc.ssthresh and not queued:
                n *= LN2
            cc.on_ack(event("on_ack", now=now, acked=n, rtt=rtt, min_rtt=min_rtt, srtt=srtt,
                            inflight=inflight, delivered=delivered, delivery_rate=rate,
                            tx_in_flight=tx_in_flight, sample_delivered=sample_delivered))
            self._read(f, i, cc)

    def _echoes(self, f: FlowArrays) -> None:
        """The step's CE echoes, before its ACK, as a sender hands them on
        (in recovery and reductions too)."""
        for i in np.flatnonzero(f.marked > 0):
            cc = self.laws[i]
            k = float(f.marked[i])
            self.marked_total[i] += k
            cc.cwnd, cc.ssthresh = float(f.cwnd[i]), float(f.ssthresh[i])
            cc.on_ce_echo(self._echo("on_ce_echo", f, i, k))
            self._read(f, i, cc)

    def _echo(self, hook: str, f: FlowArrays, i: int, marked: float):
        """The ``EcnEcho`` of flow ``i``'s step for ``hook``."""
        return event(hook, now=float(f.now[i]), marked=marked, marked_total=self.marked_total[i],
                     delivered=float(f.delivered[i]), inflight=float(f.inflight[i]),
                     min_rtt=float(f.min_rtt[i]), srtt=float(f.srtt[i]))

    def _in_recovery(self, f: FlowArrays) -> np.ndarray | bool:
        """Laws that see ACKs during recovery (``acks_in_recovery``) get them
        in every step in which they are acknowledged data."""
        return bool(self.cc.acks_in_recovery)

    def on_loss(self, f: FlowArrays, m: np.ndarray, kind: str) -> None:
        for i in np.flatnonzero(m):
            cc = self.laws[i]
            cc.cwnd, cc.ssthresh = float(f.cwnd[i]), float(f.ssthresh[i])
            cc.on_loss(event("on_loss", now=float(f.now[i]), kind=kind,
                             inflight=float(f.inflight[i]), min_rtt=float(f.min_rtt[i]),
                             srtt=float(f.srtt[i])))
            self._read(f, i, cc)

    def on_ecn(self, f: FlowArrays, m: np.ndarray) -> None:
        for i in np.flatnonzero(m):
            cc = self.laws[i]
            cc.cwnd, cc.ssthresh = float(f.cwnd[i]), float(f.ssthresh[i])
            cc.on_ecn(self._echo("on_ecn", f, i, float(f.marked[i])))
            self._read(f, i, cc)
