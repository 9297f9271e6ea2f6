"""Tahoe recovery: fast retransmit, then slow start from the hole.

Source: V. Jacobson, "Congestion Avoidance and Control", SIGCOMM 1988, and
4.3BSD-Tahoe; as simulated by Fall & Floyd, "Simulation-based Comparisons of
Tahoe, Reno, and SACK TCP", CCR 26(3), 1996, §2.

On the third duplicate ACK: ``ssthresh`` from the window law, ``cwnd`` = the
loss window (one segment), and transmission restarts at the first
unacknowledged segment (go-back-N), so every segment after the hole is sent
again as slow start reopens the window. There is no recovery state.

Differences from the source: ``recover`` is set as RFC 6582 §3.2 does so that
duplicate ACKs caused by the go-back-N retransmissions do not trigger a
second fast retransmit for the same window (ns-2's Tahoe does the same with
its ``bugfix`` option).
"""

from __future__ import annotations

from .base import Recovery, SenderView
from .registry import register


@register
class TahoeRecovery(Recovery):
    """Fast retransmit without fast recovery."""

    name = "tahoe"
    fluid_restart = "loss_window"  # fast retransmit, then slow start from one segment

    def enter(self, tcp: SenderView) -> None:
        """Fast retransmit by going back: slow start from the hole, and no
        recovery state (the sender's ends at once)."""
        tcp.signal_loss("fast")
        tcp.cc.cwnd = tcp.cc.loss_window
        tcp.recover = tcp.high_tx
        tcp.snd_nxt = tcp.snd_una
        tcp.exit_recovery()
