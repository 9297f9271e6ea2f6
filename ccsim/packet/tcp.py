"""The TCP sender of the packet engine, made of named parts.

Sequence numbers count segments of ``mss`` payload bytes; an ACK number is
the next segment expected. A :class:`Sender` is ACK-clocked and owns:

* the RTT estimator and RTO of RFC 6298 (:class:`~ccsim.packet.rtt.RttEstimator`),
* the retransmission timer (:class:`~ccsim.packet.timers.RetransmissionTimer`)
  and, for paced laws, the pacer (:class:`~ccsim.packet.timers.Pacer`),
* loss detection: duplicate ACKs, the SACK scoreboard
  (:class:`~ccsim.recovery.scoreboard.Scoreboard`) and the strategy's loss
  detector (RACK, :class:`~ccsim.recovery.rack.Rack`), with tail loss probes
  (:class:`~ccsim.packet.tail_loss_probe.TailLossProbe`),
* the recovery state (``in_recovery``, ``recover``, ``dupacks``), which its
  recovery strategy (:mod:`ccsim.recovery`) asks and tells through
  :class:`~ccsim.recovery.SenderView`: fast retransmit starts in one place,
  :meth:`Sender.enter_recovery`,
* the sending path (:meth:`Sender.send`): the window, the loss phase after a
  timeout, pacing, limited transmit,
* the window law (:mod:`ccsim.algorithms`), told of every event the law/engine
  contract lists, and of ECN echoes (:class:`~ccsim.packet.ecn.EcnResponse`).

This class is the readable reference. The engine runs
:class:`~ccsim.packet.fast_path.FastSender`, the same sender with its per-ACK
path written out inline for speed; a test checks that both give the same
results bit for bit.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Callable

from ..algorithms.base import (NOT_SAMPLED, Ack, CongestionControl, Loss, RecoveryState,
                               RttSample)
from ..errors import AlgorithmStateError
from ..recovery.scoreboard import Scoreboard
from .ecn import EcnResponse
from .rtt import RttEstimator
from .tail_loss_probe import TailLossProbe
from .timers import Pacer, RetransmissionTimer, valid_pacing_rate

if TYPE_CHECKING:
    from ..recovery.base import Recovery
    from .clock import Clock


class Sender:
    """The sending end of one flow.

    Attributes:
        cc: the window law; ``cc.cwnd`` and ``cc.ssthresh`` in segments.
        recovery: the loss-recovery strategy.
        snd_una, snd_nxt, high_tx, dupacks, in_recovery, recover: see
            :class:`ccsim.recovery.SenderView`.
        rtt: the RFC 6298 estimator (``srtt``, ``rttvar``, ``rto``,
            ``min_rtt``, ``last_rtt`` in s); ``srtt``, ``rttvar`` and
            ``min_rtt`` on the sender read it.
        timer: the retransmission timer. pacer: the pacer (used only while
            the law sets ``pacing_rate``).
        scoreboard: SACK scoreboard (strategies with ``uses_sack``), else ``None``.
        detector: the strategy's loss detector, else ``None``.
        tlp: the tail loss probe (with ``tail_loss_probe`` and SACK), else ``None``.
        ecn: the response to ECN echoes (marks echoed, reductions).
        sent: per outstanding segment, its latest transmission: ``(time (s),
            resent, delivered then, delivered time then, transmission index,
            in flight then, first send time then)``.
        delivered: segments delivered so far: cumulatively acknowledged or
            SACKed; ``delivered_time``: when that count last grew (s), or
            when a segment left with nothing outstanding.
        first_tx_time: the send time (s) of the segment the latest rate
            sample was taken from, or of the segment that left with nothing
            outstanding: where the next samples' send phase starts.
        transmissions, retransmits, timeouts, recoveries: counters.
        local_reductions: window reductions for a full host queue
            (:meth:`local_congestion`).
        loss_log: ``(time, "recovery" or "timeout", snd_una, cwnd,
            ssthresh)`` at each loss detected, before the law reacts.
        end_seq: the flow sends segments below this (grows without bound for
            bulk flows).
        done_at: time the last segment was acknowledged (s), or ``None``.

    The delivery-rate sample handed to laws that ask for it
    (``samples_delivery_rate``) follows Linux's ``net/ipv4/tcp_rate.c``
    (ns-3's ``TcpRateLinux`` ports the same rules, so every stack has them):

    * a segment sent with nothing outstanding (``tcp_rate_skb_sent``: no
      ``packets_out``) starts both phases at its send time
      (``first_tx_mstamp`` and ``delivered_mstamp``), so a sample after an
      idle period or a late start does not span the silence;
    * the sample's interval is the longer of the send phase (from
      ``first_tx_time`` then to the acknowledged segment's send time,
      ``tcp_rate_skb_delivered``) and the ACK phase (from ``delivered_time``
      then to now): ``tcp_rate_gen``'s ``max(snd_us, ack_us)``, which keeps a
      burst of compressed ACKs from passing for a faster path;
    * a sample whose interval is shorter than the minimum RTT is no sample
      (``delivery_rate`` ``None``; ``tcp_rate_gen`` sets ``interval_us = -1``
      as "unreliable"), as when a spurious retransmission's ACK arrives
      soon after it went out.

    The sample is taken from the highest segment the ACK cumulatively
    acknowledges (Linux: the most recently sent of those it acknowledges or
    SACKs), and the minimum RTT is the flow's smallest sample (Linux:
    ``tcp_min_rtt``, a 300-s windowed minimum).
    """

    def __init__(self, cc: CongestionControl, recovery: "Recovery", *, clock: "Clock",
                 transmit: Callable[[int, float], None],
                 initial_window: float, mss: int, rwnd: float, min_rto: float,
                 initial_rto: float, max_rto: float, end_seq: float,
                 packet_bits: float = 0.0, ack_counting: str = "segments",
                 rtt_granularity: float = 0.0, limited_transmit: bool = False,
                 tail_loss_probe: bool = False, law_rtt: str = "sample",
                 loss_flight: str = "flight", reduction_window: str = "none",
                 exit_ack: bool = False) -> None:
        self.cc = cc
        self.recovery = recovery
        self.clock = clock
        self.send_segment = transmit    # puts a segment on the path: (seq, time)
        self.mss = mss
        self.rwnd = rwnd                # most segments outstanding: receiver window or path cap
        self.initial_window = initial_window
        self.end_seq = end_seq
        # the parts
        self.rtt = RttEstimator(initial_rto, min_rto, max_rto, rtt_granularity)
        self.timer = RetransmissionTimer(clock, self._timer_expired)
        self.pacer = Pacer(clock, self._paced_wake, packet_bits, longest_gap=max_rto)
        self.scoreboard = Scoreboard() if recovery.uses_sack else None
        detector = recovery.detector  # a loss detector of the strategy's, if it has one
        self.detector = detector() if detector is not None else None
        self.tlp = TailLossProbe() if tail_loss_probe and self.scoreboard is not None else None
        self.ecn = EcnResponse()
        # sequence state
        self.snd_una = self.snd_nxt = self.high_tx = 0
        # per segment out: (sent at, resent, delivered then, delivered_time then,
        # transmission index, in flight then: tx_in_flight for laws that sample rates,
        # first_tx_time then)
        self.sent: dict[int, tuple[float, bool, float, float, int, int, float]] = {}
        self.transmissions = 0
        self.delivered = 0.0
        self.delivered_time = 0.0       # Linux tp->delivered_mstamp
        self.first_tx_time = 0.0        # Linux tp->first_tx_mstamp
        self.ack_delivered = 0          # segments the latest ACK delivered (acked + SACKed)
        # the recovery state: this class owns it, strategies ask and tell
        self.dupacks = 0
        self.in_recovery = False
        self.recover = -1
        self.entered_in_loss_phase = False  # the recovery began in the loss phase after an RTO
        self.rto_seq = -1               # segment last resent by the timer
        self.reordering_pending = False  # the detector's reordering timer is set
        # counters and life cycle
        self.retransmits = self.timeouts = self.recoveries = 0
        self.local_reductions = 0       # reductions for a full host queue (local_congestion)
        self.loss_log: list[tuple[float, str, int, float, float]] = []
        self.started = False
        self.done_at: float | None = None
        # what the law asks for
        self.wants_rtt = type(cc).on_rtt is not CongestionControl.on_rtt
        self.samples_rate = cc.samples_delivery_rate  # Ack.delivery_rate, for laws that read it
        self.per_ack = ack_counting == "acks"  # window laws see acked = 1 (ns-2/ns-3)
        # ... or only below ssthresh (ns-3's classes on TcpNewReno::SlowStart),
        # or only above it (Linux's HighSpeed)
        self.per_ack_in_slow_start = ack_counting == "acks-in-slow-start"
        self.per_ack_in_avoidance = ack_counting == "acks-in-congestion-avoidance"
        # laws that read the recovery state (on_recovery: BBR's packet conservation)
        self.tells_recovery = type(cc).on_recovery is not CongestionControl.on_recovery
        self.loss_phase = False         # a timeout's loss phase a law is to hear the end of
        self.marked_told = 0            # the detector's marks when the law last heard
        self.entered_now = False        # this ACK began the recovery (already told)
        self.limited_transmit = limited_transmit  # RFC 3042
        # the laws are handed the smoothed RTT and the least of those (ns-3's PktsAcked)
        self.law_smoothed = law_rtt == "smoothed"
        self.law_min_rtt = math.inf
        # a fast recovery hands the law RFC 6675's pipe, not FlightSize (ns-3's EnterRecovery)
        self.loss_pipe = loss_flight == "pipe"
        # every loss hands the law the window, not FlightSize (Linux's ssthresh(), ns-2's
        # slowdown), and PRR divides by it (Linux's prior_cwnd)
        self.loss_cwnd = loss_flight == "cwnd"
        # which reductions hold for their window of data (Scenario.reduction_window):
        # any (Linux's tcp_enter_loss / tcp_enter_recovery), an ECN one (ns-2), none
        self.window_any = reduction_window == "all"
        self.window_ecn = reduction_window in ("all", "ecn")
        self.timer_entry = False        # the recovery being entered began on a timer, not an ACK
        # the ACK that ends a fast recovery reaches the law's on_ack (Scenario.exit_ack:
        # Linux's tcp_cong_control runs cong_avoid after tcp_fastretrans_alert left it)
        self.exit_ack = exit_ack
        self.reno_sacked = 0            # duplicates standing for delivered segments (no SACK)
        self.recovery_high = -1         # high_tx when the last recovery began

    # -- what the estimator knows, under the names strategies and results read ----------
    @property
    def srtt(self) -> float:
        """Smoothed RTT (s), NaN before the first sample."""
        return self.rtt.srtt

    @property
    def rttvar(self) -> float:
        """RTT variation (s), NaN before the first sample."""
        return self.rtt.rttvar

    def now(self) -> float:
        """Simulation time (s)."""
        return self.clock.now

    # -- life cycle ----------------------------------------------------------------------
    def start(self) -> None:
        """Open the connection: fresh window, first flight."""
        self.cc.start(self.initial_window, self.mss)
        self.check_law("start", math.nan, math.nan)
        self.started = True
        self.send(self.now())

    def stop(self) -> None:
        """Send no new data from now on (bulk flows with a stop time)."""
        self.end_seq = min(self.end_seq, self.high_tx)
        if self.snd_una >= self.end_seq:
            self.finish(self.now())

    def finish(self, now: float) -> None:
        """The last segment is acknowledged at ``now`` (s)."""
        self.done_at = now
        self.timer.stop()

    # -- an ACK arrives ----------------------------------------------------------------
    def on_ack(self, ack: tuple[int, tuple]) -> None:
        """An ACK arrives: ``(ack number, SACK blocks)``. Loss detection reads
        it first; then it is a duplicate (:meth:`on_duplicate_ack`) or
        acknowledges new data (:meth:`on_new_ack`); then the sender sends
        what the window allows."""
        ackno, blocks = ack
        una, now = self.snd_una, self.clock.now
        newly_sacked = released = 0
        lost_retransmission = False
        if self.scoreboard is not None:
            newly_sacked, released, lost_retransmission = self.detect_losses(
                ackno, blocks, una, now)
        if ackno <= una:
            if ackno == una and self.high_tx > una and self.done_at is None:
                self.on_duplicate_ack(newly_sacked, now)
        elif self.on_new_ack(ackno, blocks, newly_sacked - released, now):
            return  # the flow is done
        if lost_retransmission and not self.in_recovery and self.snd_una < self.recover:
            # Linux (tcp_fastretrans_alert): a retransmission lost in the loss
            # phase after a timeout starts a recovery, with a new reduction.
            self.enter_recovery()
        if self.tells_recovery:
            self.recovery_ack()
        self.send(now)

    def detect_losses(self, ackno: int, blocks: tuple, una: int,
                      now: float) -> tuple[int, int, bool]:
        """SACK bookkeeping and the strategy's loss detector, for an ACK of
        ``ackno`` with ``blocks`` while ``una`` was the cumulative ACK.
        Returns the segments newly SACKed, those SACKed before and now
        cumulatively acknowledged, and whether a retransmission was found
        lost."""
        board, detector = self.scoreboard, self.detector
        newly_sacked = released = 0
        new: list[tuple[int, int]] | tuple | None = ()  # None: nothing wants the new ranges
        if blocks or board.blocks:  # else there is nothing to record or release
            new = [] if detector is not None else None
            newly_sacked, released = board.update(max(ackno, una), blocks, new)
        lost_retransmission = False
        if detector is not None:
            lost_retransmission = detector.on_ack(self.sent, una, ackno, new, board, now,
                                                  self.rtt.min_rtt)
            if self.tlp is not None and detector.lost and not self.reordering_pending:
                self.arm_reordering_timer(now)
        return newly_sacked, released, lost_retransmission

    def on_new_ack(self, ackno: int, blocks: tuple, sacked: int, now: float) -> bool:
        """The ACK acknowledges new data up to ``ackno``; ``sacked``: segments
        it newly SACKed less those SACKed before that it now acknowledges.
        Returns whether the flow is done."""
        una = self.snd_una
        resent = False
        for seq in range(una, ackno):
            record = self.sent.pop(seq)
            resent = resent or record[1]
        acked = ackno - una
        self.snd_una = ackno
        self.snd_nxt = max(self.snd_nxt, ackno)
        self.dupacks = 0
        rtt = None
        if not resent:  # Karn: no sample if the ACK covers a retransmission
            rtt = self.rtt.measure(record[0], now)
            self.rtt.take(rtt)
            if self.law_smoothed:
                rtt = self.rtt.srtt
                if rtt < self.law_min_rtt:
                    self.law_min_rtt = rtt
            if self.wants_rtt:
                self.tell_rtt(rtt, now)
        self.ack_delivered = acked + sacked
        self.delivered += self.ack_delivered
        delivery_rate = tx_in_flight = sample_delivered = NOT_SAMPLED
        if self.samples_rate:  # tcp_rate.c: over the acknowledged segment's flight (bit/s)
            sample_delivered = self.delivered - record[2]
            tx_in_flight = float(record[5])
            send_phase = record[0] - record[6]  # tcp_rate_skb_delivered: snd_us
            self.first_tx_time = record[0]
            interval = now - record[3]  # tcp_rate_gen: ack_us, then the longer of the two
            if send_phase > interval:
                interval = send_phase
            # shorter than the minimum RTT (or no RTT yet): "unreliable", no sample
            delivery_rate = (sample_delivered * self.mss * 8.0 / interval
                             if interval >= self.rtt.min_rtt and interval > 0 else None)
        if self.ack_delivered:  # tcp_rate_gen: delivered_mstamp moves when delivered grows
            self.delivered_time = now
        in_recovery = self.in_recovery
        if in_recovery:
            reno_delivered = self.remove_reno_sacks(acked)
            self.recovery.on_ack(self, acked)
            if self.exit_ack and not self.in_recovery:  # this ACK ended the recovery
                in_recovery = False  # what it delivered: Linux's acked_sacked
                acked = self.ack_delivered if self.scoreboard is not None else reno_delivered
        if self.loss_phase and ackno >= self.recover:  # the loss phase after a timeout ends
            self.loss_phase = False
            self.tell_recovery("open")
        cc = self.cc
        if not in_recovery or cc.acks_in_recovery:
            w, s = cc.cwnd, cc.ssthresh
            cc.on_ack(Ack(now=now, acked=self.law_acked(acked), rtt=rtt,
                          min_rtt=self.law_min_rtt if self.law_smoothed else self.rtt.min_rtt,
                          srtt=self.rtt.srtt,
                          inflight=self.snd_nxt - ackno, delivered=self.delivered,
                          delivery_rate=delivery_rate, tx_in_flight=tx_in_flight,
                          sample_delivered=sample_delivered))
            self.check_law("on_ack", w, s)
        if self.tlp is not None:
            self.tlp.on_ack(self, ackno, blocks)
        if ackno >= self.end_seq:
            self.finish(now)
            return True
        if ackno >= self.high_tx:
            self.timer.stop()  # RFC 6298 §5.2: all data acknowledged
        elif not self.in_recovery:  # §5.3; in recovery the strategy decides
            self.restart_timer()
        return False

    def on_duplicate_ack(self, newly_sacked: int, now: float) -> None:
        """A duplicate ACK: counted (with SACK, only one that SACKs new data,
        RFC 6675 §2), handed to the strategy in recovery, and outside it the
        strategy says whether it starts fast retransmit."""
        self.ack_delivered = newly_sacked
        self.delivered += newly_sacked
        if newly_sacked:  # tcp_rate_gen: delivered_mstamp moves when delivered grows
            self.delivered_time = now
        if self.scoreboard is None or newly_sacked:
            self.dupacks += 1
            if self.in_recovery:
                self.reno_sacked += 1
                self.recovery.on_dupack(self)
            elif self.recovery.triggered(self):
                self.enter_recovery()
            if self.limited_transmit:
                self.send_limited(now)

    def on_ack_ce(self, ack: tuple[int, tuple, int]) -> None:
        """An ACK that echoes CE marks arrives: ``(ack number, SACK blocks,
        marked segments)``. The echo first (:class:`~ccsim.packet.ecn.EcnResponse`),
        then the ACK as any other; ACKs without marks go straight to :meth:`on_ack`."""
        self.ecn.on_echo(self, ack[2], ack[0], self.clock.now)
        self.on_ack((ack[0], ack[1]))

    def local_congestion(self) -> None:
        """The host queue in front of the NIC refused a segment
        (:attr:`Flow.access_buffer`; the engine calls this at the same
        instant, after the send that met the full queue). A 2011 Linux
        kernel's ``tcp_transmit_skb``, told ``NET_XMIT_DROP`` by a full
        qdisc, called ``tcp_enter_cwr``: ``ssthresh`` from the module's
        ``ssthresh()``, ``cwnd`` down to it, no retransmission, and only
        from the Open or Disorder state — the window state ECN echoes share
        (:class:`~ccsim.packet.ecn.EcnResponse`'s ``cwr_high``: once per
        window of data). The law reacts as to an ECN echo by default
        (:meth:`~ccsim.algorithms.CongestionControl.on_ecn`'s rule: a fast
        loss's ``ssthresh``, ``cwnd`` to it), even when it reacts to echoes
        in its own way."""
        ecn = self.ecn
        if (self.done_at is not None or self.in_recovery or self.snd_una < self.recover
                or self.snd_una < ecn.cwr_high):
            return
        cc = self.cc
        w, s = cc.cwnd, cc.ssthresh
        # the stack's flight at a loss: Linux's ssthresh() reads snd_cwnd (loss_flight="cwnd")
        flight = min(w, self.rwnd) if self.loss_cwnd else self.snd_nxt - self.snd_una
        cc.on_loss(Loss(now=self.clock.now, kind="fast", inflight=float(flight),
                        min_rtt=self.rtt.min_rtt, srtt=self.rtt.srtt))
        cc.cwnd = max(cc.ssthresh, cc.min_cwnd)
        self.check_law("on_loss", w, s)
        ecn.cwr_high = self.high_tx
        self.local_reductions += 1

    # -- loss recovery: the state this sender owns ----------------------------------------
    def remove_reno_sacks(self, acked: int) -> int:
        """Without SACK, Linux counts each duplicate ACK in recovery as a
        segment delivered (``tcp_add_reno_sack``); a cumulative ACK of
        ``acked`` segments delivers the rest, at least one, and takes
        ``acked − 1`` duplicates off the count (``tcp_remove_reno_sacks``).
        Returns the segments it delivered."""
        delivered = max(acked - self.reno_sacked, 1)
        self.reno_sacked = max(self.reno_sacked - (acked - 1), 0)
        return delivered

    def enter_recovery(self) -> None:
        """Fast retransmit (RFC 5681 §3.2 step 2): the one place a recovery
        starts. The sender calls it when the strategy's :meth:`triggered`
        says a duplicate ACK does, when RACK finds a retransmission lost in
        the loss phase after a timeout, and when the reordering timer
        confirms RACK's marks; the strategy's ``enter`` then has the law
        reduce (:meth:`signal_loss`) and resends."""
        self.entered_in_loss_phase = self.snd_una < self.recover
        self.recovery_high = self.high_tx  # Linux's high_seq for the recovery (tcp_enter_loss)
        self.reno_sacked = self.dupacks  # Linux's sacked_out without SACK (tcp_add_reno_sack)
        self.in_recovery = True
        if not self.tells_recovery:
            self.recovery.enter(self)
            return
        resent = self.retransmits
        self.recovery.enter(self)
        self.loss_phase = False
        self.tell_recovery("recovery", sent=self.retransmits - resent)
        self.entered_now = True

    def recovery_ack(self) -> None:
        """After an ACK, for a law that reads the recovery state: in fast
        recovery (not on the ACK that began it), tell it again, as Linux's
        ``cong_control`` reads the state on every ACK."""
        if self.entered_now:
            self.entered_now = False
        elif self.in_recovery:
            self.tell_recovery("recovery", change=False)

    def exit_recovery(self) -> None:
        """The strategy's rules end the recovery."""
        self.in_recovery = False
        if self.tells_recovery:
            self.tell_recovery("open")

    def in_flight(self) -> int:
        """Segments in flight as Linux's ``tcp_packets_in_flight`` counts them
        for a rate sample's ``tx_in_flight``: those sent and not cumulatively
        acknowledged, less the SACKed and those the loss detector marked lost
        and has not resent."""
        flight = self.high_tx - self.snd_una
        if self.scoreboard is not None:
            flight -= self.scoreboard.count
        lost = getattr(self.detector, "lost", None)
        return flight - len(lost) if lost else flight

    def pipe(self) -> float:
        """Segments in flight as the recovery strategy counts them (its
        ``pipe``: Linux's ``tcp_packets_in_flight``), or FlightSize less the
        duplicate ACKs for a strategy without one."""
        pipe = getattr(self.recovery, "pipe", None)
        if pipe is not None:
            return float(pipe(self))
        return float(max(self.snd_nxt - self.snd_una - self.dupacks, 0))

    def tell_recovery(self, state: str, sent: int = 0, change: bool = True) -> None:
        """Tell a law that reads it (``on_recovery``) that the recovery state is
        ``state``; ``sent``: segments the change itself just sent, not yet
        in flight when the law decides (Linux sends after ``cong_control``)."""
        cc = self.cc
        w, s = cc.cwnd, cc.ssthresh
        timer = state == "loss"
        marked = self.detector.marked if self.detector is not None else 0
        lost, self.marked_told = marked - self.marked_told, marked
        cc.on_recovery(RecoveryState(
            now=self.clock.now, state=state, pipe=self.pipe() - sent,
            inflight=float(self.snd_nxt - self.snd_una), delivered=self.delivered,
            acked=0.0 if timer else float(self.ack_delivered), lost=float(lost),
            change=change))
        self.check_law("on_recovery", w, s)

    def set_ssthresh(self, ssthresh: float) -> None:
        """A strategy whose source sets the threshold itself, after the law's
        reaction (Vegas's ¾ rule, Rate-Halving's exit), sets it here."""
        if not ssthresh > 0.0:
            self.law_error("recovery", "ssthresh", ssthresh, "a threshold > 0 segments")
        self.cc.ssthresh = ssthresh

    def signal_loss(self, kind: str) -> None:
        """Tell the window law of a loss (``"fast"`` or ``"timeout"``); counts
        fast recoveries.

        ``Loss.inflight`` is RFC 5681's FlightSize, data sent and not
        cumulatively acknowledged — except at a timeout with SACK, or a
        recovery that starts in the loss phase after one, where what the
        receiver has SACKed is left out: after a large overshoot most of the
        cumulative flight has arrived, and counting it would set ``ssthresh``
        from data no longer in the network (Linux avoids the same trap by
        keeping the recovery's ``ssthresh`` at such a timeout). With
        ``loss_flight="pipe"`` a fast recovery hands the strategy's pipe
        instead, the head counted lost (ns-3's ``EnterRecovery``: RFC
        6675's ``BytesInFlight()``). With ``loss_flight="cwnd"`` every loss,
        fast or timeout, hands the window the sender may fill, ``min(cwnd,
        rwnd)``, before the law reacts (Linux's ``ssthresh()`` modules read
        ``snd_cwnd``; ns-2's ``slowdown`` halves ``window()``).
        """
        flight = self.snd_nxt - self.snd_una
        loss_phase = (self.entered_in_loss_phase if self.in_recovery
                      else self.snd_una < self.recover)
        if self.tlp is not None:
            self.tlp.high_seq = -1  # a loss detected ends a tail-probe episode
        cc = self.cc
        if kind == "fast":
            self.recoveries += 1
            self.loss_log.append((self.clock.now, "recovery", self.snd_una, cc.cwnd,
                                  cc.ssthresh))
            if self.reduction_holds("fast"):
                return  # the ECN reduction's ssthresh stays
        if self.loss_cwnd:
            flight = min(cc.cwnd, self.rwnd)
        elif self.scoreboard is not None and (kind != "fast" or loss_phase):
            # what the receiver holds below snd_nxt: after a go-back-N timeout
            # snd_nxt is below SACKed data, which is not in that flight either
            flight -= self.scoreboard.sacked_in(self.snd_una, self.snd_nxt)
        if self.loss_pipe and kind == "fast":
            flight = self.pipe()
            detector = self.detector
            if detector is not None and (not detector.lost or detector.lost[0] != self.snd_una):
                flight -= 1  # ns-3 marks the head lost before it counts
        w, s = cc.cwnd, cc.ssthresh
        cc.on_loss(Loss(now=self.now(), kind=kind, inflight=float(flight),
                        min_rtt=self.rtt.min_rtt, srtt=self.rtt.srtt))
        self.check_law("on_loss", w, s)

    def reduction_holds(self, kind: str) -> bool:
        """Whether a loss of ``kind`` (``"fast"`` or ``"timeout"``) found now
        falls within the window of data of a reduction already made, so that
        ``ssthresh`` stays as it is (``Scenario.reduction_window``).

        With ``"all"`` (Linux) a window holds one reduction, whatever began
        it: ``tcp_enter_recovery`` calls ``ssthresh()`` only when not already
        in a cwnd reduction (``tcp_in_cwnd_reduction``: the CWR state of an
        ECN or local reduction, or Recovery), and ``tcp_enter_loss`` only from
        Open or Disorder, once ``snd_una`` has reached ``high_seq``, or in
        the Loss state after ``snd_una`` has moved since the last timeout
        (``icsk_retransmits`` 0). With ``"ecn"`` (ns-2) only an ECN
        reduction's window holds: ``dupack_action`` and ``timeout`` skip the
        halving while ``highest_ack_ < recover_`` after ``CWND_ACTION_ECN``.
        With ``"none"`` (ns-3) every loss reduces. Every stack keeps RFC
        5681's rule for repeated timeouts (:meth:`on_timeout`)."""
        una = self.snd_una
        if kind == "fast":
            return (self.window_ecn and self.in_recovery and not self.entered_in_loss_phase
                    and una < self.ecn.cwr_high)  # a recovery starting, not the probe's CWR
        if self.in_recovery:  # a timeout in a fast recovery (Reno's strategy moves no recover)
            return self.window_any and una < max(self.recover, self.recovery_high)
        if una < self.recover:  # in the loss phase after a timeout: on_timeout's rule
            return False
        return self.window_ecn and una < self.ecn.cwr_high  # after an ECN or local reduction

    def arm_reordering_timer(self, now: float) -> None:
        """RFC 8985 §6.3, as Linux runs it outside recovery: segments the
        detector marks lost before DupThresh SACKs start a recovery once its
        reordering window has passed without their being delivered."""
        if self.in_recovery or self.snd_una < self.recover:
            return
        self.reordering_pending = True
        self.clock.schedule(now + self.detector.reordering_window(self.rtt.min_rtt),
                            self._reordering_timeout, None)

    def _reordering_timeout(self, _: None) -> None:
        self.reordering_pending = False
        if (self.detector.lost and not self.in_recovery and self.snd_una >= self.recover
                and self.done_at is None):
            self.timer_entry = True  # PRR counts one segment delivered (tcp_rack_reo_timeout)
            self.enter_recovery()
            self.timer_entry = False
            self.entered_now = False  # no ACK of this recovery yet: the next one is told
            self.send(self.clock.now)

    # -- the retransmission timer --------------------------------------------------------
    def restart_timer(self) -> None:
        """(Re)arm the retransmission timer one RTO from now (RFC 6298 §5.3),
        or one probe timeout from now if a tail loss probe comes first."""
        span = self.rtt.rto
        if self.tlp is not None:
            span = self.tlp.timeout(self, span)
        self.timer.restart(span)

    def _timer_expired(self) -> None:
        if self.tlp is not None and self.tlp.armed:
            self.tlp.probe(self)
        else:
            self.on_timeout()

    def on_timeout(self) -> None:
        """RFC 6298 §5.4–5.6 and RFC 5681 §3.1: back off, go back to the first
        unacknowledged segment with the loss window."""
        now = self.now()
        self.timeouts += 1
        self.loss_log.append((now, "timeout", self.snd_una, self.cc.cwnd, self.cc.ssthresh))
        # RFC 5681: ssthresh once per segment, and once per window (reduction_holds)
        if self.snd_una != self.rto_seq and not self.reduction_holds("timeout"):
            self.signal_loss("timeout")
        else:
            self.cc.cwnd = self.cc.loss_window
        self.rto_seq = self.snd_una
        self.recovery.on_timeout(self)
        self.in_recovery = False
        self.dupacks = 0
        self.recover = self.high_tx
        self.rtt.back_off()
        if self.detector is not None:  # it marks what the timeout lost
            self.detector.on_timeout(self.snd_una, self.high_tx, self.scoreboard)
        else:
            self.snd_nxt = self.snd_una
        if self.tells_recovery:
            self.loss_phase = True
            self.tell_recovery("loss")
        self.timer.stop()
        self.send(now)

    # -- the sending path ----------------------------------------------------------------
    def send(self, now: float) -> None:
        """Send while the window allows (RFC 5681 §3.1); in recovery, strategies
        that own transmission choose what to send; in the loss phase after a
        timeout, a loss detector's marks go first; a paced law sends one
        segment per pacing interval. The retransmission timer runs whenever
        data is outstanding (RFC 6298 §5.1)."""
        if self.in_recovery and self.recovery.owns_sending:
            self.recovery.send(self)
        elif self.detector is not None and self.snd_una < self.recover:
            self.send_marked_first(now)
        elif self.cc.pacing_rate:
            self.send_paced(now, min(self.cc.cwnd, self.rwnd))
        else:
            self.send_window(now)
        if not self.timer.running and self.high_tx > self.snd_una:
            self.restart_timer()

    def send_window(self, now: float) -> None:
        """New data while ``snd_nxt − snd_una < window`` — after a timeout,
        going back over what the receiver lacks first."""
        window = min(self.cc.cwnd, self.rwnd)  # cwnd, within the receiver window
        nxt = self.snd_nxt
        if nxt < self.high_tx:  # going back after a timeout: resend what the receiver lacks
            board = self.scoreboard
            if board is not None and board.blocks:
                nxt = self.resend_unsacked(nxt, window, now)
        while nxt - self.snd_una + 1 <= window and nxt < self.end_seq:  # then new data
            self.transmit_at(nxt, now)
            nxt += 1
        self.snd_nxt = nxt

    def send_marked_first(self, now: float) -> None:
        """The loss phase after a timeout, with a loss detector (Linux's ``TCP_CA_Loss``):
        while ``cwnd − pipe ≥ 1``, resend the lowest segment marked lost, else
        send new data. Paced flows send one segment per pacing interval."""
        detector, board = self.detector, self.scoreboard
        window = min(self.cc.cwnd, self.rwnd)  # cwnd, within the receiver window
        paced = self.cc.pacing_rate
        if paced and self.pacer.blocked(now):
            return
        pipe = detector.pipe(self.snd_una, self.high_tx, board)
        while window - pipe >= 1:
            if detector.lost:
                self.transmit_at(detector.lost[0], now)
            elif self.snd_nxt < self.end_seq and self.snd_nxt - self.snd_una < self.rwnd:
                self.transmit_at(self.snd_nxt, now)
                self.snd_nxt += 1
            else:
                return
            if paced:
                self.paced(now)
                return
            pipe += 1

    def send_paced(self, now: float, window: float) -> None:
        """One segment per ``packet_bits / pacing_rate`` seconds, within the
        window; the pacer brings the sender back when the next may go."""
        if self.pacer.blocked(now):
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
        self.paced(now)

    def paced(self, now: float) -> None:
        """A paced segment went out at ``now``: the next waits one interval."""
        rate = self.cc.pacing_rate
        if not valid_pacing_rate(rate, self.pacer.slowest):
            self.law_error(None, "pacing_rate", rate,
                           f"a finite rate of at least {self.pacer.slowest:.4g} bit/s (one "
                           f"packet per max_rto={self.rtt.max_rto:g} s; slower, the flow "
                           "stalls past its own timer), or None for no pacing")
        self.pacer.sent(now, rate)

    def _paced_wake(self) -> None:
        self.send(self.clock.now)

    def resend_unsacked(self, nxt: int, window: float, now: float) -> int:
        """Going back after a timeout with SACK: resend only what the receiver
        lacks, and do not count what it holds as in flight (RFC 6675 §5.1: the
        recovery after an RTO uses all the SACK information there is)."""
        board, una, high = self.scoreboard, self.snd_una, self.high_tx
        held = board.sacked_in(una, nxt)  # SACKed segments below nxt
        while nxt < high:
            skip_to = board.sacked_run_end(nxt)
            if skip_to > nxt:
                held += skip_to - nxt
                nxt = skip_to
                continue
            if nxt - una - held + 1 > window:
                break
            self.transmit_at(nxt, now)
            nxt += 1
        return nxt

    def send_limited(self, now: float) -> None:
        """RFC 3042: the first two duplicate ACKs outside recovery each let one
        new segment out, up to cwnd + 2 outstanding, if the receiver allows."""
        dup = self.dupacks
        if self.in_recovery or dup > 2 or self.snd_una <= self.recover:
            return
        nxt = self.snd_nxt
        if (nxt < self.end_seq and nxt == self.high_tx
                and nxt - self.snd_una < min(self.cc.cwnd + dup, self.rwnd)):
            self.transmit_at(nxt, now)
            self.snd_nxt = nxt + 1

    def transmit_at(self, seq: int, now: float) -> None:
        """Put segment ``seq`` on the path at ``now`` (s) and record it; it is
        a retransmission if below ``high_tx``. ``snd_nxt`` is the caller's."""
        retransmission = seq < self.high_tx
        if retransmission:
            self.retransmits += 1
        else:
            self.high_tx = seq + 1
        index = self.transmissions = self.transmissions + 1
        if not self.sent:  # tcp_rate_skb_sent: nothing outstanding, both phases start now
            self.first_tx_time = self.delivered_time = now
        self.sent[seq] = (now, retransmission, self.delivered, self.delivered_time, index,
                          self.in_flight() if self.samples_rate else 0, self.first_tx_time)
        if self.detector is not None:
            self.detector.on_sent(index, seq)
            if retransmission and seq == self.snd_una:
                self.restart_timer()  # Linux re-arms the RTO on resending the head
        self.send_segment(seq, now)

    def retransmit(self, seq: int) -> None:
        """Send segment ``seq`` again, now."""
        self.transmit_at(seq, self.now())

    def transmit(self, seq: int) -> None:
        """Send segment ``seq`` now: a retransmission, or ``snd_nxt`` (new data)."""
        self.transmit_at(seq, self.now())
        if seq == self.snd_nxt:
            self.snd_nxt += 1

    # -- the window law ------------------------------------------------------------------
    def tell_rtt(self, rtt: float, now: float) -> None:
        """Hand a valid RTT sample to the window law's ``on_rtt`` (laws that
        override it), after the estimator has taken it."""
        cc = self.cc
        w, s = cc.cwnd, cc.ssthresh
        cc.on_rtt(RttSample(now=now, rtt=rtt,
                            min_rtt=self.law_min_rtt if self.law_smoothed else self.rtt.min_rtt,
                            srtt=self.rtt.srtt,
                            inflight=self.snd_nxt - self.snd_una))
        self.check_law("on_rtt", w, s)

    def law_acked(self, acked: int) -> int:
        """The segments the window law is told an ACK acknowledged
        (``ack_counting``): all of them, or one per ACK always or in one phase."""
        if self.per_ack:
            return 1
        if self.cc.cwnd < self.cc.ssthresh:
            return 1 if self.per_ack_in_slow_start else acked
        return 1 if self.per_ack_in_avoidance else acked

    def check_law(self, hook: str, cwnd_before: float, ssthresh_before: float) -> None:
        """Refuse what a window law's hook left that no sender can use: a
        window that is not finite or under one segment (the flow would hang,
        or stall for ever), a threshold that is not positive. Values the hook
        did not change are not its doing (a recovery may hold cwnd below one
        segment while data is in flight) and are not checked."""
        cc = self.cc
        if cc.cwnd != cwnd_before and not 1.0 <= cc.cwnd < math.inf:
            self.law_error(hook, "cwnd", cc.cwnd, "a finite window of at least one segment")
        if cc.ssthresh != ssthresh_before and not cc.ssthresh > 0.0:
            self.law_error(hook, "ssthresh", cc.ssthresh,
                           "a threshold > 0 segments (math.inf before the first loss)")

    def law_error(self, hook: str | None, variable: str, value: object, allowed: str) -> None:
        """Raise :class:`~ccsim.errors.AlgorithmStateError` for the law's ``hook``."""
        cc = self.cc
        raise AlgorithmStateError(cc.name or type(cc).__name__, hook, self.now(), variable,
                                  value, allowed)
