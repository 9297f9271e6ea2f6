"""Linux's rate halving before PRR: ``tcp_cwnd_down`` (Linux 2.6.x to 3.1).

Source: ``net/ipv4/tcp_input.c`` of Linux 2.6.x–3.1 (``tcp_cwnd_down``,
``tcp_cwnd_min``, ``tcp_complete_cwr``); Linux 3.2 replaced it with PRR
(:mod:`ccsim.recovery.prr`, RFC 6937 §1 describes the change and the
undershoot it removed). The idea is Mathis et al.'s Rate-Halving
(:mod:`ccsim.recovery.rate_halving`); these are Linux's rules:

* Entering: the window law sets ``ssthresh``; ``cwnd`` is not cut at once.
* On every ACK in recovery that acknowledges or SACKs something: a counter
  (``snd_cwnd_cnt``, zeroed on entry) takes one; every second such ACK takes
  one segment off ``cwnd`` while ``cwnd`` is above the law's floor
  (:meth:`~ccsim.algorithms.base.CongestionControl.rate_halving_floor`,
  Linux's ``tcp_cwnd_min``: the module's ``min_cwnd`` op, or ``ssthresh``
  when it has none); then ``cwnd = min(cwnd, pipe + 1)``. The entering ACK
  counts too (``tcp_fastretrans_alert`` calls ``tcp_cwnd_down`` after
  entering).
* Leaving: ``cwnd = min(cwnd, ssthresh)`` (``tcp_complete_cwr``).

So the window falls by one segment per two ACKs from where the loss found
it, down to the floor. Most 2011 modules had ``tcp_reno_min_cwnd``
(``ssthresh/2``) as floor, so a law that backs off less than half (Scalable
to 7/8, Illinois or YeAH to up to 7/8) still fell to about half the window
over the recovery's round trip of ACKs and then slow-started back to
``ssthresh``; BIC, CUBIC and H-TCP had no ``min_cwnd`` op, so theirs stopped
at ``ssthresh``.

Which segments are lost, ``pipe``, and what is sent (the lowest segment
marked lost, then new data) are PRR's (:class:`~ccsim.recovery.prr.PrrRecovery`:
RACK's marks). Differences from the source: Linux 2.6.x–3.1 marked losses by
the duplicate-ACK threshold and FACK, not RACK; the ``tcp_moderate_cwnd``
after the recovery (``cwnd ≤ pipe + 3``) is not applied; ``cwnd`` is a float.
A law that sets its own window in recovery (``controls_recovery_window``)
keeps it, as with PRR. The fluid engine, which represents a strategy by what
it costs (:class:`~ccsim.recovery.base.Recovery`'s ``fluid_*``),
runs it as PRR: the undershoot to the floor and the slow start back to
``ssthresh`` are not in the fluid model.
"""

from __future__ import annotations

from .base import SenderView
from .prr import PrrRecovery
from .registry import register


@register
class LinuxRateHalvingRecovery(PrrRecovery):
    """Linux 2.6.x–3.1's ``tcp_cwnd_down`` over RACK-marked SACK recovery."""

    name = "linux-rate-halving"

    def __init__(self) -> None:
        super().__init__()
        self.count = 0  # Linux's snd_cwnd_cnt in recovery: ACKs since the last decrement

    def enter(self, tcp: SenderView) -> None:
        if tcp.cc.controls_recovery_window:
            super().enter(tcp)
            return
        self.begin(tcp)  # ssthresh from the law; cwnd as the loss found it
        self.count = 0
        self.last_una, self.last_marked = tcp.snd_una, tcp.detector.marked
        self.on_recovery_ack(tcp)  # tcp_cwnd_down runs on the entering ACK too

    def on_recovery_ack(self, tcp: SenderView) -> None:
        if tcp.cc.controls_recovery_window:
            return
        if tcp.ack_delivered > 0 or tcp.timer_entry:  # FLAG_ANY_PROGRESS
            self.cwnd_down(tcp)

    def cwnd_down(self, tcp: SenderView) -> None:
        """One ACK of ``tcp_cwnd_down``: a segment off ``cwnd`` every second
        ACK while above the law's floor, then ``cwnd ≤ pipe + 1``."""
        cc = tcp.cc
        decrement, self.count = divmod(self.count + 1, 2)
        if decrement and cc.cwnd > cc.rate_halving_floor():
            cc.cwnd -= decrement
        cc.cwnd = max(min(cc.cwnd, self.pipe(tcp) + 1.0), cc.min_cwnd)

    def leave(self, tcp: SenderView) -> None:
        if not tcp.cc.controls_recovery_window:
            tcp.cc.cwnd = min(tcp.cc.cwnd, tcp.cc.ssthresh)  # tcp_complete_cwr
        tcp.exit_recovery()
