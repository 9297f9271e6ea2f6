"""Tail loss probes (RFC 8985 §7), as Linux sends them.

Source: Y. Cheng, N. Cardwell, N. Dukkipati, P. Jha, "The RACK-TLP Loss
Detection Algorithm for TCP", RFC 8985, 2021, §7.2 (the probe timeout),
§7.3 (the probe) and §7.4 (detecting losses by it); Linux's
``tcp_send_loss_probe`` and ``tcp_process_tlp_ack`` for what is sent and how
the window reacts.

When the last segments of a flight are lost, no ACK comes back to start a
recovery, and only the retransmission timer (backed off, at least
``min_rto``) would find them. A probe timeout of two smoothed RTTs, shorter
than the RTO, sends one segment to draw an ACK whose SACK information starts
a fast recovery instead.

The probe timeout as Linux's ``tcp_schedule_loss_probe`` (since 4.13):
``2·SRTT``, plus ``min_rto`` (Linux's ``tcp_rto_min_us``, RFC 8985's
WCDelAckT) when one segment is in flight, else plus ``TIMEOUT_MIN``; and no
later than the RTO would fire (RFC 8985 §7.2 step 3): when the RTO comes
first, the probe goes at the RTO's time instead of the timeout, which then
waits one more RTO. No probe is scheduled outside Linux's Open and CWR
states (``tcp_schedule_loss_probe`` returns early): not in recovery or after
a timeout, and not in Disorder, where SACKs have arrived or segments are
marked lost but no recovery has started (:func:`in_disorder`); the RTO is
armed instead.

Deviations: none in the rules above. The probe needs SACK (the sender runs
it only with a scoreboard); at most one probe is outstanding per episode.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .tcp import Sender

TIMEOUT_MIN = 0.002
"""Added to the probe timeout when more than one segment is in flight (s):
Linux's ``TCP_TIMEOUT_MIN_US``, 2 ms (with one in flight it adds ``min_rto``,
for a delayed ACK)."""


def in_disorder(tcp: "Sender") -> bool:
    """Linux's Disorder state outside recovery (``tcp_try_keep_open``): some
    segment above ``snd_una`` is SACKed or marked lost (``tcp_left_out``), or
    the first outstanding segment was ever resent (``tcp_any_retrans_done``)."""
    if tcp.scoreboard.count:
        return True
    detector = tcp.detector
    if detector is not None and detector.lost:
        return True
    head = tcp.sent.get(tcp.snd_una)
    return head is not None and head[1]


class TailLossProbe:
    """One sender's probe state.

    Attributes:
        armed: the retransmission timer's deadline is a probe timeout (PTO),
            not the RTO.
        high_seq: the sender's ``high_tx`` when the probe went, until an ACK
            reaches it (RFC 8985's ``TLP.end_seq``); -1 outside an episode.
        resent: the probe resent the last segment (there was no new data).
        probes: probes sent.
    """

    __slots__ = ("armed", "high_seq", "resent", "probes")

    def __init__(self) -> None:
        self.armed = False
        self.high_seq = -1
        self.resent = False
        self.probes = 0

    def timeout(self, tcp: "Sender", rto: float) -> float:
        """The span (s) to arm the retransmission timer with: when a probe may
        go (no episode open, not in recovery, the loss phase after a timeout
        or Disorder, an RTT measured) the PTO of §7.2, at most ``rto`` (the probe
        then goes at the RTO's time); else ``rto``."""
        self.armed = False
        if self.high_seq < 0 and not tcp.in_recovery and tcp.snd_una >= tcp.recover \
                and tcp.rtt.rtt_count and not in_disorder(tcp):
            self.armed = True
            return min(2.0 * tcp.rtt.srtt + (tcp.rtt.min_rto if tcp.high_tx - tcp.snd_una == 1
                                             else TIMEOUT_MIN), rto)
        return rto

    def probe(self, tcp: "Sender") -> None:
        """§7.3: the PTO expired with data in flight. Send one new segment,
        beyond cwnd if need be, or with none to send the last one again; then
        wait an RTO."""
        self.probes += 1
        self.armed = False
        nxt = tcp.snd_nxt
        if nxt == tcp.high_tx and nxt < tcp.end_seq and nxt - tcp.snd_una < tcp.rwnd:
            self.resent = False
            tcp.transmit(nxt)
        else:
            self.resent = True
            tcp.retransmit(tcp.high_tx - 1)
        self.high_seq = tcp.high_tx
        tcp.restart_timer()

    def on_ack(self, tcp: "Sender", ackno: int, blocks: tuple) -> None:
        """§7.4: once the probe is acknowledged, the episode ends. A resent
        segment the receiver reports as a duplicate (D-SACK) repaired
        nothing; otherwise the probe alone repaired a tail loss, and the
        window is reduced as for a loss (Linux: CWR, ``cwnd = ssthresh``)."""
        if self.high_seq < 0 or ackno < self.high_seq:
            return
        repaired = self.resent and not (blocks and blocks[0][1] <= ackno)
        self.high_seq = -1
        if repaired and not tcp.in_recovery:
            tcp.signal_loss("fast")
            cc = tcp.cc
            cc.cwnd = min(cc.cwnd, cc.ssthresh)
