"""The sender the engine runs: :class:`~ccsim.packet.tcp.Sender` with its
per-ACK path written out in one method.

An ACK is the engine's commonest event, and a method call costs a few per
cent of its speed, so :meth:`FastSender.on_ack` inlines, for the common case
(one or two segments newly acknowledged, no SACK information), what the
reference sender does through named parts: ``on_new_ack``, RFC 6298's
estimator (:meth:`RttEstimator.take <ccsim.packet.rtt.RttEstimator.take>`),
the timer's restart (:meth:`RetransmissionTimer.restart
<ccsim.packet.timers.RetransmissionTimer.restart>`) and the steady-state
sending path (``send_window`` and ``transmit_at``, or ``send_paced`` with
the pacer's bookkeeping). Everything else is the reference's own code, called.

It is a loan, not a second definition: ``tests/test_sender_parts.py`` runs
scenarios that take every branch with both senders and requires the same
results bit for bit, and checks that the events built here name their
fields. Change the reference first; then this copy, until that test passes.
"""

from __future__ import annotations

from ..algorithms.base import NOT_SAMPLED, Ack, RttSample
from .rtt import CLOCK_GRANULARITY
from .tcp import Sender

_INF = float("inf")  # a module global: cheaper to look up per ACK than math.inf
_new_event = tuple.__new__  # builds an event without NamedTuple's Python-level __new__
_NO_RANGES = ()  # an ACK that SACKed nothing new


class FastSender(Sender):
    """:class:`~ccsim.packet.tcp.Sender`, its per-ACK path inline."""

    def on_ack(self, ack: tuple[int, tuple]) -> None:
        """:meth:`Sender.on_ack <ccsim.packet.tcp.Sender.on_ack>`, inline."""
        ackno, blocks = ack
        una = self.snd_una
        now = self.clock.now
        newly_sacked = released = 0
        lost_retransmission = False
        board = self.scoreboard
        if board is not None:  # detect_losses, inline
            detector = self.detector
            new = _NO_RANGES
            if blocks or board.blocks:  # else there is nothing to record or release
                new = [] if detector is not None else None
                newly_sacked, released = board.update(ackno if ackno > una else una, blocks,
                                                      new)
            if detector is not None:
                lost_retransmission = detector.on_ack(self.sent, una, ackno, new, board, now,
                                                      self.rtt.min_rtt)
                if self.tlp is not None and detector.lost and not self.reordering_pending:
                    self.arm_reordering_timer(now)
        if ackno <= una:
            if ackno == una and self.high_tx > una and self.done_at is None:
                self.on_duplicate_ack(newly_sacked, now)
        else:  # on_new_ack, inline
            sent = self.sent
            if ackno == una + 1:
                record = sent.pop(una)
                resent = record[1]
            else:
                resent = False
                for seq in range(una, ackno):
                    record = sent.pop(seq)
                    resent = resent or record[1]
            acked = ackno - una
            self.snd_una = ackno
            if self.snd_nxt < ackno:
                self.snd_nxt = ackno
            self.dupacks = 0
            est = self.rtt
            rtt = None
            if not resent:  # Karn: no sample if the ACK covers a retransmission
                rtt = now - record[0] if not est.tick else est.measure(record[0], now)
                # RttEstimator.take, inline
                if est.rtt_count == 0:
                    est.srtt = srtt = rtt
                    est.rttvar = rttvar = rtt / 2.0
                else:
                    srtt = est.srtt
                    error = srtt - rtt
                    if error < 0.0:
                        error = -error
                    est.rttvar = rttvar = 0.75 * est.rttvar + 0.25 * error
                    est.srtt = srtt = 0.875 * srtt + 0.125 * rtt
                spread = 4.0 * rttvar
                rto = srtt + (spread if spread > CLOCK_GRANULARITY else CLOCK_GRANULARITY)
                if rto < est.min_rto:
                    rto = est.min_rto
                est.rto = rto if rto < est.max_rto else est.max_rto
                est.rtt_sum += rtt
                est.rtt_count += 1
                est.last_rtt = rtt
                if rtt < est.min_rtt:
                    est.min_rtt = rtt
                if self.law_smoothed:
                    rtt = srtt
                    if rtt < self.law_min_rtt:
                        self.law_min_rtt = rtt
                if self.wants_rtt:
                    cc = self.cc
                    w, s = cc.cwnd, cc.ssthresh
                    min_rtt, srtt, inflight = est.min_rtt, est.srtt, self.snd_nxt - ackno
                    if self.law_smoothed:
                        min_rtt = self.law_min_rtt
                    cc.on_rtt(_new_event(RttSample, (now, rtt, min_rtt, srtt, inflight)))
                    if not (1.0 <= cc.cwnd < _INF and cc.ssthresh > 0.0):
                        self.check_law("on_rtt", w, s)
            self.ack_delivered = acked - released + newly_sacked
            self.delivered = delivered = self.delivered + self.ack_delivered
            delivery_rate = tx_in_flight = sample_delivered = NOT_SAMPLED
            if self.samples_rate:  # tcp_rate.c, as Sender.on_new_ack (bit/s)
                sample_delivered = delivered - record[2]
                tx_in_flight = float(record[5])
                send_phase = record[0] - record[6]
                self.first_tx_time = record[0]
                interval = now - record[3]
                if send_phase > interval:
                    interval = send_phase
                delivery_rate = (sample_delivered * self.mss * 8.0 / interval
                                 if interval >= est.min_rtt and interval > 0 else None)
            if self.ack_delivered:
                self.delivered_time = now
            in_recovery = self.in_recovery
            if in_recovery:
                reno_delivered = self.remove_reno_sacks(acked)
                self.recovery.on_ack(self, acked)
                if self.exit_ack and not self.in_recovery:  # this ACK ended the recovery
                    in_recovery = False
                    acked = (self.ack_delivered if self.scoreboard is not None
                             else reno_delivered)
            if self.loss_phase and ackno >= self.recover:  # the loss phase ends
                self.loss_phase = False
                self.tell_recovery("open")
            cc = self.cc
            if not in_recovery or cc.acks_in_recovery:
                w, s = cc.cwnd, cc.ssthresh
                if self.per_ack or (self.per_ack_in_slow_start if w < s
                                    else self.per_ack_in_avoidance):
                    acked = 1  # Sender.law_acked
                min_rtt, srtt, inflight = est.min_rtt, est.srtt, self.snd_nxt - ackno
                if self.law_smoothed:
                    min_rtt = self.law_min_rtt
                cc.on_ack(_new_event(Ack, (now, acked, rtt, min_rtt, srtt, inflight,
                                           delivered, delivery_rate, tx_in_flight,
                                           sample_delivered)))
                if not (1.0 <= cc.cwnd < _INF and cc.ssthresh > 0.0):  # one test, no call
                    self.check_law("on_ack", w, s)
            if self.tlp is not None:
                self.tlp.on_ack(self, ackno, blocks)
            if ackno >= self.end_seq:
                self.finish(now)
                return
            timer = self.timer
            if ackno >= self.high_tx:
                timer.deadline = None
            elif not self.in_recovery:
                if self.tlp is not None:
                    self.restart_timer()
                else:  # RetransmissionTimer.restart, inline
                    timer.deadline = deadline = now + est.rto
                    if timer.pending is None or deadline < timer.pending:
                        timer.pending = deadline
                        self.clock.schedule(deadline, timer.on_event, deadline)
        if lost_retransmission and not self.in_recovery and self.snd_una < self.recover:
            self.enter_recovery()
        if self.tells_recovery:
            self.recovery_ack()
        cc, nxt = self.cc, self.snd_nxt
        if self.in_recovery or self.snd_una < self.recover or cc.pacing_rate \
                or nxt < self.high_tx:
            self.send(now)  # recovery, the loss phase after a timeout, pacing, going back
            return
        # the steady state: send_window and transmit_at, inline
        window = cc.cwnd
        if window > self.rwnd:
            window = self.rwnd
        una, end = self.snd_una, self.end_seq
        if nxt - una + 1 <= window and nxt < end:
            sent, send_segment, detector = self.sent, self.send_segment, self.detector
            if not sent:  # tcp_rate_skb_sent: nothing outstanding, both phases start now
                self.first_tx_time = self.delivered_time = now
            delivered, delivered_time, first_tx = (self.delivered, self.delivered_time,
                                                   self.first_tx_time)
            index = self.transmissions
            # Sender.in_flight just after each send (nxt == high_tx here): nxt less this
            out_of_flight = self.high_tx - self.in_flight() - 1 if self.samples_rate else None
            while nxt - una + 1 <= window and nxt < end:
                index += 1
                sent[nxt] = (now, False, delivered, delivered_time, index,
                             0 if out_of_flight is None else nxt - out_of_flight, first_tx)
                if detector is not None:
                    detector.on_sent(index, nxt)
                send_segment(nxt, now)
                nxt += 1
            self.transmissions = index
            self.high_tx = self.snd_nxt = nxt
        if self.timer.deadline is None and self.high_tx > self.snd_una:
            self.restart_timer()

    def send_paced(self, now: float, window: float) -> None:
        """:meth:`Sender.send_paced <ccsim.packet.tcp.Sender.send_paced>`, the
        pacer's checks and scheduling inline."""
        pacer = self.pacer
        if now < pacer.next_send or pacer.waiting:
            return
        nxt = self.snd_nxt
        board = self.scoreboard
        if board is not None and board.blocks and nxt < self.high_tx:
            nxt = board.sacked_run_end(nxt)  # after a timeout: skip what arrived
        if nxt - self.snd_una + 1 > window or nxt >= self.end_seq:
            self.snd_nxt = nxt
            return
        self.transmit_at(nxt, now)
        self.snd_nxt = nxt + 1
        rate = self.cc.pacing_rate
        if not pacer.slowest <= rate < _INF:
            self.paced(now)  # raises
        pacer.next_send = at = now + pacer.packet_bits / rate
        pacer.waiting = True
        self.clock.schedule(at, self._pacer_woke, None)

    def _pacer_woke(self, _: None) -> None:
        self.pacer.waiting = False
        self.send(self.clock.now)
