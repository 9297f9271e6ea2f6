"""PRR: Proportional Rate Reduction (RFC 6937).

Source: M. Mathis, N. Dukkipati, Y. Cheng, "Proportional Rate Reduction for
TCP", RFC 6937, 2013, §3; the successor of Rate-Halving, and what Linux runs
(``tcp_cwnd_reduction`` in ``net/ipv4/tcp_input.c``).

On entry ``ssthresh`` comes from the window law and ``RecoverFS =
snd.nxt − snd.una``. On every ACK in recovery, with ``DeliveredData`` the
segments it newly acknowledged or SACKed::

    prr_delivered += DeliveredData
    if pipe > ssthresh:                       # proportional part
        sndcnt = ceil(prr_delivered · ssthresh / RecoverFS) − prr_out
    else:                                     # slow-start reduction bound
        limit = max(prr_delivered − prr_out, DeliveredData) + 1
        sndcnt = min(ssthresh − pipe, limit)
    cwnd = pipe + max(sndcnt, 0)

and every segment sent adds to ``prr_out``. Which segments go out is RFC
6675's NextSeg (:mod:`ccsim.recovery.sack`). On leaving, ``cwnd = ssthresh``.

Differences from the source: the fast retransmit on entry is sent at once and
counted in ``prr_out`` (Linux forces it the same way); segments count
sequence space (one SMSS = one segment).
"""

from __future__ import annotations

import math

from .base import SenderView
from .registry import register
from .sack import SackRecovery


@register
class PrrRecovery(SackRecovery):
    """RFC 6937 proportional rate reduction over RFC 6675 SACK recovery."""

    name = "prr"

    def __init__(self) -> None:
        super().__init__()
        self.recover_fs = 1
        self.prr_delivered = 0
        self.prr_out = 0

    def enter(self, tcp: SenderView) -> None:
        self.recover_fs = max(tcp.snd_nxt - tcp.snd_una, 1)
        self.prr_delivered = self.prr_out = 0
        super().enter(tcp)            # the fast retransmit, counted in prr_out
        tcp.cc.cwnd = self.pipe(tcp)  # from the next ACK on, PRR sets cwnd

    def on_recovery_ack(self, tcp: SenderView) -> None:
        delivered = tcp.ack_delivered
        self.prr_delivered += delivered
        pipe = self.pipe(tcp)
        ssthresh = tcp.cc.ssthresh
        if pipe > ssthresh:
            sndcnt = math.ceil(self.prr_delivered * ssthresh / self.recover_fs) - self.prr_out
        else:
            limit = max(self.prr_delivered - self.prr_out, delivered) + 1
            sndcnt = min(ssthresh - pipe, limit)
        tcp.cc.cwnd = pipe + max(sndcnt, 0)

    def on_sent(self, tcp: SenderView, seq: int) -> None:
        self.prr_out += 1

    def leave(self, tcp: SenderView) -> None:
        tcp.cc.cwnd = tcp.cc.ssthresh
        tcp.in_recovery = False
