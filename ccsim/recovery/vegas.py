"""Vegas recovery: the fine-grained retransmission checks of TCP Vegas.

Source: L. S. Brakmo, L. L. Peterson, "TCP Vegas: End to End Congestion
Avoidance on a Global Internet", IEEE JSAC 13(8), 1995, §3.1; and ns-2's
``tcp-vegas.cc``, which Zhang & Bian and Lai & Yao ran. Vegas keeps a send time per
segment and a fine-grained timeout from the RTT estimate, and:

* on every duplicate ACK, not only the third, it resends the first
  unacknowledged segment if that segment has been out longer than the
  fine-grained timeout (the third duplicate retransmits regardless, as Reno);
* on the first (and second) ACK of new data after such a retransmission, it
  checks the next unacknowledged segment the same way and resends it if
  expired, without changing the window again (multiple losses in a window
  need no second halving and no coarse timeout);
* it decreases the window only when the lost segment was sent after the last
  decrease (a loss at the current rate), and then to three quarters of the
  window (to half if the segment had already been resent, to 2 at three
  segments or fewer), inflating by the duplicates as Reno does until the
  next ACK of new data.

Fine-grained timeout: ns-2's ``(srtt + 2·rttvar)·17/16`` from the sender's
RFC 6298 estimates, with no coarse floor (``min_rto``); before the first RTT
sample nothing is ever expired.

Differences from the source: the decrease goes through the window law's
``on_loss`` first (so the law resets its rounds and the run counts a
recovery), then cwnd and ssthresh are set to the Vegas value; ns-2 sets
ssthresh to 2 after deflation (congestion avoidance), ccsim to the deflated
window, which has the same effect. ns-2 grows the fine-grained timeout by
1/8 at each such retransmission (doubling it for a segment already resent);
ccsim recomputes it from the estimator each time. ccsim's sender hands ACKs
of new data to the strategy only in recovery, so the sender stays in recovery
(the window law does not grow) until the second ACK after a retransmission
has been checked; its cwnd is the deflated window meanwhile.
"""

from __future__ import annotations

from .base import Recovery, SenderView
from .registry import register


@register
class VegasRecovery(Recovery):
    """Brakmo & Peterson's fine-grained retransmission and decrease rule."""

    name = "vegas"

    def __init__(self) -> None:
        self.changed_at = -1.0   # time of the last window decrease (s)
        self.worried = 0         # ACKs of new data still to check
        self.window = 0.0        # the deflated window during recovery

    def timeout(self, tcp: SenderView) -> float:
        srtt, rttvar = tcp.srtt, tcp.rttvar
        if srtt != srtt:  # no sample yet
            return float("inf")
        return (srtt + 2.0 * rttvar) * 17.0 / 16.0

    def expired(self, tcp: SenderView, seq: int) -> bool:
        record = tcp.sent.get(seq)
        return record is not None and tcp.now() - record[0] >= self.timeout(tcp)

    def triggered(self, tcp: SenderView) -> bool:
        """Any duplicate ACK whose first unacknowledged segment has expired,
        and the third regardless; none of go-back-N's after a timeout."""
        if tcp.snd_una <= tcp.recover:
            return False
        return tcp.dupacks >= self.dupthresh or self.expired(tcp, tcp.snd_una)

    def on_dupack(self, tcp: SenderView) -> None:
        tcp.cc.cwnd += 1.0  # inflation, as Reno

    def enter(self, tcp: SenderView) -> None:
        record = tcp.sent.get(tcp.snd_una)
        sent_at, resent = (record[0], record[1]) if record else (tcp.now(), False)
        self.worried = min(2, tcp.snd_nxt - tcp.snd_una)
        if self.changed_at < sent_at:  # lost at the current rate: decrease
            win = min(tcp.cc.cwnd, tcp.rwnd)
            tcp.signal_loss("fast")
            if win <= 3:
                win = 2.0
            elif resent:
                win = win / 2.0
            else:
                win = win - win / 4.0
            tcp.set_ssthresh(win)
            self.changed_at = tcp.now()
        else:
            win = tcp.cc.cwnd
        self.window = win
        tcp.cc.cwnd = win + tcp.dupacks
        tcp.retransmit(tcp.snd_una)

    def on_ack(self, tcp: SenderView, acked: int) -> None:
        # Deflate; stay "in recovery" (no window growth) while ACKs remain to check,
        # so the sender keeps handing them to this strategy.
        tcp.cc.cwnd = self.window
        self.check(tcp)
        if self.worried > 0 and tcp.snd_una < tcp.high_tx:
            tcp.restart_timer()
        else:
            tcp.exit_recovery()

    def check(self, tcp: SenderView) -> None:
        """The first ACKs of new data after a retransmission: resend an expired head."""
        if self.worried <= 0:
            return
        self.worried -= 1
        if tcp.snd_una < tcp.high_tx and self.expired(tcp, tcp.snd_una):
            tcp.retransmit(tcp.snd_una)
        else:
            self.worried = 0

    def on_timeout(self, tcp: SenderView) -> None:
        self.worried = 0
        self.changed_at = tcp.now()
