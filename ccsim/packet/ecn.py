"""The sender's response to ECN echoes (RFC 3168 §6.1.2).

Source: K. Ramakrishnan, S. Floyd, D. Black, "The Addition of Explicit
Congestion Notification (ECN) to IP", RFC 3168, 2001, §6.1.2: the sender
reacts to congestion experienced at most once per window of data, and not
while it is already reducing for a loss.

Deviations: the receiver echoes a count of CE-marked segments per ACK (what
DCTCP's receiver state machine, RFC 8257 §3.2, and Accurate ECN give the
sender) rather than RFC 3168's ECE flag until CWR; with a once-per-window
reaction both lead to the same reductions, and only the count lets a law
such as DCTCP measure the marked fraction.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..algorithms.base import CongestionControl, EcnEcho

if TYPE_CHECKING:
    from .tcp import Sender


class EcnResponse:
    """One sender's ECN state.

    Attributes:
        marked: CE marks echoed to the sender so far (segments).
        cwr_high: no reduction until the cumulative ACK reaches this (the
            data outstanding at the last reduction).
        reductions: the law's ``on_ecn`` reactions.
    """

    __slots__ = ("marked", "cwr_high", "reductions")

    def __init__(self) -> None:
        self.marked = 0
        self.cwr_high = 0
        self.reductions = 0

    def on_echo(self, tcp: "Sender", marked: int, ackno: int, now: float) -> None:
        """An ACK up to ``ackno`` echoed ``marked`` CE marks at ``now`` (s): the
        law hears of every echo (``on_ce_echo``) and reacts (``on_ecn``) at
        most once per window of data, and not in loss recovery or the loss
        phase after a timeout. The default reaction (a loss's) is handed the
        stack's flight at a loss: with ``loss_flight="cwnd"`` the window,
        as Linux's ``tcp_enter_cwr`` calls ``ssthresh()`` on ``snd_cwnd``."""
        self.marked += marked
        cc = tcp.cc
        echo = EcnEcho(now=now, marked=marked, marked_total=self.marked,
                       delivered=tcp.delivered, inflight=float(tcp.snd_nxt - tcp.snd_una),
                       min_rtt=tcp.rtt.min_rtt, srtt=tcp.rtt.srtt)
        cc.on_ce_echo(echo)
        if tcp.in_recovery or tcp.snd_una < tcp.recover or ackno < self.cwr_high:
            return
        w, s = cc.cwnd, cc.ssthresh
        if tcp.loss_cwnd and type(cc).on_ecn is CongestionControl.on_ecn:
            # the default reaction is a loss's, from the stack's flight at a loss:
            # Linux's tcp_enter_cwr calls ssthresh() on snd_cwnd
            echo = echo._replace(inflight=min(w, tcp.rwnd))
        cc.on_ecn(echo)
        tcp.check_law("on_ecn", w, s)
        self.cwr_high = tcp.high_tx
        self.reductions += 1
