"""PRR: Proportional Rate Reduction (RFC 6937).

Source: M. Mathis, N. Dukkipati, Y. Cheng, "Proportional Rate Reduction for
TCP", RFC 6937, 2013, §3; the successor of Rate-Halving, and what Linux runs
(``tcp_cwnd_reduction`` in ``net/ipv4/tcp_input.c``).

On entry ``ssthresh`` comes from the window law and ``RecoverFS =
snd.nxt − snd.una`` (with ``Scenario.loss_flight="cwnd"``, the Linux stack's,
the window as the recovery begins: Linux's ``tcp_cwnd_reduction`` divides by
``prior_cwnd``, the ``snd_cwnd`` that ``tcp_init_cwnd_reduction`` saved). On every ACK in recovery, with ``DeliveredData`` the
segments it newly acknowledged or SACKed::

    prr_delivered += DeliveredData
    if pipe > ssthresh:                       # proportional part
        sndcnt = ceil(prr_delivered · ssthresh / RecoverFS) − prr_out
    else:                                     # slow-start reduction bound
        limit = max(prr_delivered − prr_out, DeliveredData)
        if the ACK advanced snd.una and RACK marked nothing newly lost:
            limit += 1                        # Linux's condition (RFC: always)
        sndcnt = min(ssthresh − pipe, limit)
    cwnd = pipe + max(sndcnt, 0 if prr_out else 1)   # Linux: the fast retransmit

and every segment sent adds to ``prr_out``. On leaving, ``cwnd = ssthresh``.
A law that sets its own window in recovery (``controls_recovery_window``:
BBR, whose Linux module has ``cong_control``) keeps it: PRR then only
chooses what to send, as Linux skips ``tcp_cwnd_reduction`` for such a law.

Which segments are lost, and so ``pipe``, come from RACK (RFC 8985,
:mod:`ccsim.recovery.rack`), as in Linux since 4.18 (``tcp_recovery = 1``):
the segments sent before the latest one delivered. The lowest marked segment
goes out first, then new data (Linux's ``tcp_xmit_retransmit_queue``). So a
retransmission lost again is resent within recovery, not after a timeout.
Recovery starts as RFC 6675 §5 has it (:mod:`ccsim.recovery.sack`).

The ACK that starts the recovery is counted as Linux and ns-3 count it
(``tcp_cwnd_reduction`` and ``TcpPrrRecovery::DoRecovery`` run on it):
``prr_delivered`` is what it delivered (one segment when RACK's reordering
timer starts the recovery, ``tcp_rack_reo_timeout``), and ``sndcnt`` is at
least one segment while ``prr_out`` is 0, which forces the fast
retransmit; the sender then sends the lowest marked segment first.

Differences from the source: segments count
sequence space (one SMSS = one segment); RFC 6675's rescue retransmission is
not sent (Linux has the Tail Loss Probe instead: the scenario's
``tail_loss_probe``).
As in Linux and unlike RFC 6937, the bound's "+1" needs an ACK that advanced
``snd.una`` and marked nothing newly lost (``FLAG_SND_UNA_ADVANCED &&
!newly_lost``).
"""

from __future__ import annotations

import math

from .base import SenderView
from .rack import Rack
from .registry import register
from .sack import SackRecovery


@register
class PrrRecovery(SackRecovery):
    """RFC 6937 proportional rate reduction over RFC 6675 SACK recovery."""

    name = "prr"
    detector = Rack

    def __init__(self) -> None:
        super().__init__()
        self.recover_fs = 1
        self.prr_delivered = 0
        self.prr_out = 0
        self.last_una = self.last_marked = 0

    def enter(self, tcp: SenderView) -> None:
        if tcp.loss_cwnd:  # Linux divides by prior_cwnd, the window as the recovery begins
            self.recover_fs = max(min(tcp.cc.cwnd, tcp.rwnd), 1.0)
        else:
            self.recover_fs = max(tcp.snd_nxt - tcp.snd_una, 1)
        self.prr_delivered = 0
        self.prr_out = 0
        if tcp.cc.controls_recovery_window:
            self.last_una, self.last_marked = tcp.snd_una, tcp.detector.marked
            super().enter(tcp)        # the fast retransmit now; the law sets the window
            return
        self.begin(tcp)
        # tcp_cwnd_reduction runs on the entering ACK too, with what it delivered
        # (the reordering timer's entry counts one segment: tcp_rack_reo_timeout);
        # its floor of one segment while prr_out is 0 forces the fast retransmit,
        # which the sender's next send puts out first (the lowest segment marked lost).
        # The bound's +1 never applies here: the entering ACK either advanced
        # nothing or had RACK mark something newly lost.
        self.last_una, self.last_marked = tcp.snd_una, tcp.detector.marked
        self.reduce(tcp, 1 if tcp.timer_entry else tcp.ack_delivered, False)

    def on_recovery_ack(self, tcp: SenderView) -> None:
        if tcp.cc.controls_recovery_window:
            return  # Linux: no tcp_cwnd_reduction for a cong_control module (BBR)
        # Linux: the +1 only when the ACK advanced snd_una and marked nothing lost
        plus_one = tcp.snd_una > self.last_una and tcp.detector.marked == self.last_marked
        self.reduce(tcp, tcp.ack_delivered, plus_one)
        self.last_una, self.last_marked = tcp.snd_una, tcp.detector.marked

    def reduce(self, tcp: SenderView, delivered: int, plus_one: bool) -> None:
        """RFC 6937 on one ACK that delivered ``delivered`` segments, as Linux's
        ``tcp_cwnd_reduction``: ``cwnd = pipe + sndcnt``."""
        self.prr_delivered += delivered
        pipe = self.pipe(tcp)
        ssthresh = tcp.cc.ssthresh
        if pipe > ssthresh:
            sndcnt = math.ceil(self.prr_delivered * ssthresh / self.recover_fs) - self.prr_out
        else:
            limit = max(self.prr_delivered - self.prr_out, delivered)
            if plus_one:
                limit += 1
            sndcnt = min(ssthresh - pipe, limit)
        # Linux: at least one segment until the fast retransmit has gone (prr_out 0)
        tcp.cc.cwnd = pipe + max(sndcnt, 0 if self.prr_out else 1)

    def pipe(self, tcp: SenderView) -> float:
        """Linux's ``tcp_packets_in_flight``, from RACK's marks."""
        return tcp.detector.pipe(tcp.snd_una, tcp.high_tx, tcp.scoreboard)

    def first_retransmission(self, tcp: SenderView) -> int | None:
        """The lowest segment marked lost (the first unacknowledged one, when
        recovery starts on duplicate ACKs)."""
        return tcp.detector.lost[0] if tcp.detector.lost else None

    def next_segment(self, tcp: SenderView) -> int | None:
        """The lowest segment marked lost, else new data, else nothing."""
        if tcp.detector.lost:
            return tcp.detector.lost[0]
        if self.new_data_allowed(tcp):
            return tcp.snd_nxt
        return None

    def on_sent(self, tcp: SenderView, seq: int) -> None:
        self.prr_out += 1

    def leave(self, tcp: SenderView) -> None:
        if not tcp.cc.controls_recovery_window:
            tcp.cc.cwnd = tcp.cc.ssthresh
        tcp.exit_recovery()
