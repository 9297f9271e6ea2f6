"""TCP sender and receiver of the packet engine.

Sequence numbers count segments of ``mss`` payload bytes; an ACK number is
the next segment expected. The sender is ACK-clocked, times retransmissions
per RFC 6298 (Karn's rule, exponential backoff, a minimum RTO) and hands
duplicate ACKs and ACKs during recovery to its recovery strategy
(:mod:`ccsim.recovery`); its window law (:mod:`ccsim.algorithms`) sees
:class:`~ccsim.algorithms.Ack`, :class:`~ccsim.algorithms.Loss` and
:class:`~ccsim.algorithms.RttSample` events. The receiver sends cumulative
ACKs, SACK blocks (RFC 2018) when asked, and may delay ACKs (RFC 5681 §4.2).
"""

from __future__ import annotations

import bisect
import math
from heapq import heappush
from typing import TYPE_CHECKING, Callable

from ..algorithms.base import NOT_SAMPLED, Ack, CongestionControl, EcnEcho, Loss, RttSample
from ..errors import AlgorithmStateError
from ..recovery.scoreboard import Scoreboard
from .bins import TimeBins

if TYPE_CHECKING:
    from ..recovery.base import Recovery
    from .clock import Clock

CLOCK_GRANULARITY = 0.001
"""G of RFC 6298 §2 (s): 1 ms, a Linux jiffy at HZ=1000."""

WORST_CASE_DELAYED_ACK = 0.2
"""WCDelAckT of RFC 8985 §7.2 (s): what a probe timeout allows for a delayed
ACK when one segment is in flight."""

_INF = math.inf  # a module global: cheaper to look up per ACK than math.inf
_NO_RANGES = ()  # an ACK that SACKed nothing new
_new_event = tuple.__new__  # builds an Ack without NamedTuple's Python-level __new__
MAX_SACK_BLOCKS = 3
"""SACK blocks per ACK: what fits beside the timestamp option (RFC 2018 §3)."""

class Receiver:
    """The receiving end of one flow.

    It is told of each data segment at the time the segment arrives (which may
    be ahead of the simulation clock: see :mod:`ccsim.packet.engine`) and
    schedules each ACK's arrival back at the sender.

    Attributes:
        rcv_nxt: next segment expected in order.
        deliveries: segments delivered in order in each trace bin
            (``deliveries.per_bin(n)``).
    """

    __slots__ = ("rcv_nxt", "ooo", "ends", "starts", "recent", "sack", "dsack", "delayed",
                 "ack_delay", "held", "held_until", "timer_at", "back", "clock", "heap", "next_id",
                 "deliver_ack", "deliveries", "ce", "deliver_ce")

    def __init__(self, sack: bool, delayed_ack: bool, ack_delay: float, back: float,
                 clock: "Clock", deliver_ack: Callable | None, n_bins: int,
                 bin_width: float, dsack: bool = False) -> None:
        self.rcv_nxt = 0
        self.ooo: set[int] = set()        # segments held above rcv_nxt
        # SACK blocks [start, end) above rcv_nxt: ends by start, the starts sorted, and
        # the starts from least to most recently touched (RFC 2018 §4 reports the latter)
        self.ends: dict[int, int] = {}
        self.starts: list[int] = []
        self.recent: dict[int, None] = {}
        self.sack = sack
        self.dsack = dsack  # report a duplicate segment as a D-SACK block (RFC 2883)
        self.delayed = delayed_ack
        self.ack_delay = ack_delay         # longest an ACK is held (s)
        self.held = 0                      # in-order segments not yet acknowledged
        self.held_until = 0.0              # when the held ACK must go (s)
        self.timer_at: float | None = None  # the pending delayed-ACK timer event (s)
        self.back = back                   # ACK travel time back to the sender (s)
        self.clock = clock
        self.heap, self.next_id = clock.heap, clock.next_id  # where ACKs are scheduled
        self.deliver_ack = deliver_ack     # the sender's on_ack, set once both exist
        self.deliveries = TimeBins(n_bins + 1, bin_width)
        self.ce = 0                        # CE-marked segments not yet echoed (RFC 3168)
        self.deliver_ce = None             # the sender's on_ack_ce, for ACKs that echo marks

    def receive_ce(self, seq: int, t: float) -> None:
        """Data segment ``seq`` arrives at ``t`` (s) marked CE: the next ACK
        echoes it, as a count (see :class:`~ccsim.algorithms.EcnEcho`)."""
        if self.held and t >= self.held_until:  # the held ACK left before this arrived
            self._ack(self.held_until)
        self.ce += 1
        self.receive(seq, t)  # not its common case (ce is set): the ACK goes through _ack

    def receive(self, seq: int, t: float) -> None:
        """Data segment ``seq`` arrives at time ``t`` (s)."""
        if seq == self.rcv_nxt and not (self.ooo or self.recent or self.delayed or self.ce):
            # the common case, in order with nothing held: an ACK at once, no SACK
            self.rcv_nxt = nxt = seq + 1
            deliveries = self.deliveries
            x = t * deliveries.rate
            if x < deliveries.bin_next:  # in the current trace bin (TimeBins)
                deliveries.in_bin += 1
            else:
                deliveries.count(x, 1)
            heappush(self.heap, (t + self.back, self.next_id(), self.deliver_ack, (nxt, ())))
            return
        if self.held and t >= self.held_until:  # the delayed-ACK timer went first
            self._ack(self.held_until)
        nxt = self.rcv_nxt
        if self.dsack and (seq < nxt or seq in self.ooo):  # held already: say so first
            self._ack(t, (seq, seq + 1))
            return
        in_order = seq == nxt
        if in_order:
            nxt += 1
            ooo = self.ooo
            while ooo and nxt in ooo:
                ooo.remove(nxt)
                nxt += 1
            self.deliveries.at(t, nxt - self.rcv_nxt)
            self.rcv_nxt = nxt
        elif seq > nxt:
            self.ooo.add(seq)
        if self.sack and (self.recent or not in_order):  # in order, no holes: none to keep
            self._update_blocks(seq)
        # RFC 5681 §4.2: ACK out-of-order and gap-filling segments at once,
        # otherwise (with delayed ACKs) every second segment or on the timer.
        if not self.delayed or not in_order or self.ooo or nxt != seq + 1:
            self._ack(t)
        elif self.held:
            self._ack(t)
        else:
            self.held = 1
            self.held_until = until = t + self.ack_delay
            if self.timer_at is None:  # else the pending one, due earlier, re-arms itself
                self.timer_at = until
                self.clock.schedule(until, self._timer, until)

    def _timer(self, at: float) -> None:
        """The delayed-ACK timer: one event per receiver at a time. At the
        held ACK's deadline it sends the ACK; earlier (its ACK went out with
        the next segment, and a later one is held now) it re-arms itself at
        the new deadline, so holding an ACK costs no event of its own."""
        self.timer_at = None
        if not self.held:
            return
        if self.held_until == at:
            self._ack(at)
        else:
            self.timer_at = until = self.held_until
            self.clock.schedule(until, self._timer, until)

    def _ack(self, t: float, dsack: tuple[int, int] | None = None) -> None:
        """Send an ACK at ``t``: the cumulative ACK and the SACK blocks, a
        D-SACK block first if ``dsack`` (RFC 2883: a duplicate segment)."""
        self.held = 0
        blocks = ()
        if self.recent or dsack:
            ends, picked = self.ends, [dsack] if dsack else []
            for start in reversed(self.recent):  # most recently touched first
                if len(picked) == MAX_SACK_BLOCKS:
                    break
                picked.append((start, ends[start]))
            blocks = tuple(picked)
        if self.ce:  # ECN echo: the CE-marked segments this ACK covers
            heappush(self.heap, (t + self.back, self.next_id(), self.deliver_ce,
                                 (self.rcv_nxt, blocks, self.ce)))
            self.ce = 0
            return
        heappush(self.heap, (t + self.back, self.next_id(), self.deliver_ack,
                             (self.rcv_nxt, blocks)))

    def _update_blocks(self, seq: int) -> None:
        """Keep SACK blocks above ``rcv_nxt``, the one holding ``seq`` the most
        recent (RFC 2018 §4). Blocks are disjoint and never adjacent; a segment
        joins the blocks that end at it and start after it, found in O(1)."""
        nxt, ends, starts, recent = self.rcv_nxt, self.ends, self.starts, self.recent
        if seq < nxt:  # rcv_nxt moved: drop the blocks it has passed
            gone = 0
            while gone < len(starts) and ends[starts[gone]] <= nxt:
                del ends[starts[gone]], recent[starts[gone]]
                gone += 1
            del starts[:gone]
            return
        i = bisect.bisect_right(starts, seq) - 1
        if i >= 0 and ends[starts[i]] > seq:  # already held: its block becomes the latest
            start = starts[i]
            del recent[start]
            recent[start] = None
            return
        start, end = seq, seq + 1
        if i >= 0 and ends[starts[i]] == seq:  # the block ending here
            start = starts[i]
            del starts[i], recent[start]
        else:
            i += 1
        if i < len(starts) and starts[i] == end:  # the block starting just after
            end = ends.pop(end)
            del starts[i], recent[seq + 1]
        ends[start] = end
        starts.insert(i, start)
        recent[start] = None


class Sender:
    """The sending end of one flow.

    Attributes:
        cc: the window law; ``cc.cwnd`` and ``cc.ssthresh`` in segments.
        recovery: the loss-recovery strategy.
        snd_una, snd_nxt, high_tx, dupacks, in_recovery, recover: see
            :class:`ccsim.recovery.SenderView`.
        srtt, rttvar, rto: RFC 6298 estimator state (s).
        min_rtt: smallest RTT sample (s). last_rtt: latest sample (s).
        delivered: segments delivered so far: cumulatively acknowledged or
            SACKed.
        retransmits, timeouts, recoveries: counters.
        end_seq: the flow sends segments below this (grows without bound for
            bulk flows).
        done_at: time the last segment was acknowledged (s), or ``None``.
    """

    def __init__(self, cc: CongestionControl, recovery: "Recovery", *, clock: "Clock",
                 transmit: Callable[[int, float], None],
                 initial_window: float, mss: int, rwnd: float, min_rto: float,
                 initial_rto: float, max_rto: float, end_seq: float,
                 packet_bits: float = 0.0, ack_counting: str = "segments",
                 rtt_granularity: float = 0.0, limited_transmit: bool = False,
                 tail_loss_probe: bool = False) -> None:
        self.cc = cc
        self.recovery = recovery
        self.clock = clock
        self._send_segment = transmit
        self.mss = mss
        self.packet_bits = packet_bits  # one full packet on the wire (bits), for pacing
        self.next_send = 0.0            # earliest time a paced segment may go (s)
        self.pace_pending = False       # a pacing timer event is scheduled
        self.rwnd = rwnd                # most segments outstanding: receiver window or path cap
        self.min_rto, self.max_rto = min_rto, max_rto
        self.initial_window = initial_window
        self.snd_una = self.snd_nxt = self.high_tx = 0
        self.end_seq = end_seq
        self.dupacks = 0
        self.in_recovery = False
        self.recover = -1
        # per outstanding segment, its latest transmission: (time, resent,
        # delivered then, delivered_time then, transmission index)
        self.sent: dict[int, tuple[float, bool, float, float, int]] = {}
        self.transmissions = 0
        self.srtt = math.nan
        self.rttvar = math.nan
        self.rto = initial_rto
        self.min_rtt = math.inf
        self.last_rtt = math.nan
        self.rtt_sum = 0.0
        self.rtt_count = 0
        self.delivered = 0.0
        self.delivered_time = 0.0
        self.retransmits = self.timeouts = self.recoveries = 0
        # (time, "recovery" or "timeout", snd_una, cwnd, ssthresh) at each loss
        # detected, before the window law reacts: Result.events' rows
        self.loss_log: list[tuple[float, str, int, float, float]] = []
        self.rto_seq = -1               # segment last resent by the timer
        self.deadline: float | None = None  # retransmission timer (s), None: off
        self.timer_at: float | None = None  # earliest pending timer event (s)
        self.started = False
        self.done_at: float | None = None
        self.wants_rtt = type(cc).on_rtt is not CongestionControl.on_rtt
        self.samples_rate = cc.samples_delivery_rate  # Ack.delivery_rate, for laws that read it
        self.scoreboard = Scoreboard() if recovery.uses_sack else None
        detector = recovery.detector  # a loss detector of the strategy's, if it has one
        self.detector = detector() if detector is not None else None
        self.ack_delivered = 0          # segments the latest ACK delivered (acked + SACKed)
        self.per_ack = ack_counting == "acks"  # window laws see acked = 1 (ns-2/ns-3)
        self.tick = rtt_granularity     # RTT clock tick (s); 0: exact
        self.limited_transmit = limited_transmit  # RFC 3042
        self.tlp = tail_loss_probe and self.scoreboard is not None  # RFC 8985 §7: needs SACK
        self.probe_pending = False      # the timer's deadline is a loss probe's, not the RTO's
        self.tlp_high_seq = -1          # high_tx when a probe went, until ACKed; -1: none
        self.tlp_resent = False         # that probe resent the last segment
        self.probes = 0
        self.reo_pending = False        # the detector's reordering timer is set
        self.marked = 0                 # CE marks echoed to this sender (segments)
        self.cwr_high = 0               # no ECN reduction until the ACK reaches this (RFC 3168)
        self.ecn_reductions = 0

    def now(self) -> float:
        """Simulation time (s)."""
        return self.clock.now

    # -- life cycle ----------------------------------------------------------
    def start(self) -> None:
        """Open the connection: fresh window, first flight."""
        self.cc.start(self.initial_window, self.mss)
        self._check_law("start", math.nan, math.nan)
        self.started = True
        self.send(self.now())

    def stop(self) -> None:
        """Send no new data from now on (bulk flows with a stop time)."""
        self.end_seq = min(self.end_seq, self.high_tx)
        if self.snd_una >= self.end_seq:
            self._finish(self.now())

    def _finish(self, now: float) -> None:
        self.done_at = now
        self.deadline = None

    # -- the per-ACK path ------------------------------------------------------
    def on_ack(self, ack: tuple[int, tuple]) -> None:
        """An ACK arrives: ``(ack number, SACK blocks)``.

        The hot path of the engine, written for the common case (one or two
        segments newly acknowledged, no SACK information) without changing
        the general one: SACK bookkeeping, then either the duplicate-ACK
        path (:meth:`_on_duplicate`) or the new-data path inline (Karn's RTT
        sample, deliveries, the recovery strategy and the window law, the
        retransmission timer), then sending.
        """
        ackno, blocks = ack
        una = self.snd_una
        now = self.clock.now
        newly_sacked = released = 0
        lost_retransmission = False
        board = self.scoreboard
        if board is not None:
            detector = self.detector
            new = _NO_RANGES
            if blocks or board.blocks:  # else there is nothing to record or release
                new = [] if detector is not None else None
                newly_sacked, released = board.update(ackno if ackno > una else una, blocks,
                                                      new)
            if detector is not None:
                lost_retransmission = detector.on_ack(self.sent, una, ackno, new, board, now,
                                                      self.min_rtt)
                if self.tlp and detector.lost and not self.reo_pending:
                    self._arm_reordering_timer(now)
        if ackno <= una:
            if ackno == una and self.high_tx > una and self.done_at is None:
                self._on_duplicate(newly_sacked, now)
        else:  # new data acknowledged: the rest of this method
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
            rtt = None
            if not resent:  # Karn: no sample if the ACK covers a retransmission
                rtt = now - record[0] if not self.tick else self._ticked(record[0], now)
                # RFC 6298 §2's estimator (inline: this runs per ACK); a valid
                # sample also clears the backoff (§5.7)
                if self.rtt_count == 0:
                    self.srtt = srtt = rtt
                    self.rttvar = rttvar = rtt / 2.0
                else:
                    srtt = self.srtt
                    error = srtt - rtt
                    if error < 0.0:
                        error = -error
                    self.rttvar = rttvar = 0.75 * self.rttvar + 0.25 * error
                    self.srtt = srtt = 0.875 * srtt + 0.125 * rtt
                spread = 4.0 * rttvar
                rto = srtt + (spread if spread > CLOCK_GRANULARITY else CLOCK_GRANULARITY)
                if rto < self.min_rto:
                    rto = self.min_rto
                self.rto = rto if rto < self.max_rto else self.max_rto
                self.rtt_sum += rtt
                self.rtt_count += 1
                self.last_rtt = rtt
                if rtt < self.min_rtt:
                    self.min_rtt = rtt
                if self.wants_rtt:
                    self._on_rtt(rtt, now)
            self.ack_delivered = acked - released + newly_sacked
            self.delivered = delivered = self.delivered + self.ack_delivered
            rate = NOT_SAMPLED
            if self.samples_rate:  # over the acknowledged segment's flight (bit/s)
                interval = now - record[3]
                rate = ((delivered - record[2]) * self.mss * 8.0 / interval
                        if interval > 0 else None)
            self.delivered_time = now
            in_recovery = self.in_recovery
            if in_recovery:
                self.recovery.on_ack(self, acked)
            cc = self.cc
            if not in_recovery or cc.acks_in_recovery:
                w, s = cc.cwnd, cc.ssthresh
                cc.on_ack(_new_event(Ack, (now, 1 if self.per_ack else acked, rtt,
                                           self.min_rtt, self.srtt, self.snd_nxt - ackno,
                                           delivered, rate)))
                if not (1.0 <= cc.cwnd < _INF and cc.ssthresh > 0.0):  # one test, no call
                    self._check_law("on_ack", w, s)
            if self.tlp:
                self._tail_probe_ack(ackno, blocks)
            if ackno >= self.end_seq:
                self._finish(now)
                return
            if ackno >= self.high_tx:
                self.deadline = None
            elif self.tlp:
                if not self.in_recovery:
                    self.restart_timer()
            elif not self.in_recovery:  # RFC 6298 §5.3; in recovery the strategy decides
                self.deadline = deadline = now + self.rto  # restart_timer, inline
                if self.timer_at is None or deadline < self.timer_at:
                    self.timer_at = deadline
                    self.clock.schedule(deadline, self._on_timer, deadline)
        if lost_retransmission and not self.in_recovery and self.snd_una < self.recover:
            # Linux (tcp_fastretrans_alert): a retransmission lost in the loss
            # phase after a timeout starts a recovery, with a new reduction.
            self.recovery.enter(self)
        cc, nxt = self.cc, self.snd_nxt
        if self.in_recovery or self.snd_una < self.recover or cc.pacing_rate \
                or nxt < self.high_tx:
            self.send(now)  # recovery, the loss phase after a timeout, pacing, going back
            return
        # the steady state: new data as the window allows, ACK-clocked (send(), inline)
        window = cc.cwnd
        if window > self.rwnd:
            window = self.rwnd
        una, end = self.snd_una, self.end_seq
        if nxt - una + 1 <= window and nxt < end:  # _transmit, inline
            sent, send_segment, detector = self.sent, self._send_segment, self.detector
            delivered, delivered_time = self.delivered, self.delivered_time
            index = self.transmissions
            while nxt - una + 1 <= window and nxt < end:
                index += 1
                sent[nxt] = (now, False, delivered, delivered_time, index)
                if detector is not None:
                    detector.on_sent(index, nxt)
                send_segment(nxt, now)
                nxt += 1
            self.transmissions = index
            self.high_tx = self.snd_nxt = nxt
        if self.deadline is None and self.high_tx > self.snd_una:
            self.restart_timer()

    def _on_duplicate(self, newly_sacked: int, now: float) -> None:
        """A duplicate ACK: count it and hand it to the recovery strategy."""
        self.ack_delivered = newly_sacked
        self.delivered += newly_sacked
        # With SACK, a duplicate ACK must carry new SACK data (RFC 6675 §2),
        # so duplicates of data the receiver already holds do not count.
        if self.scoreboard is None or newly_sacked:
            self.dupacks += 1
            self.recovery.on_dupack(self)
            if self.limited_transmit:
                self._limited_transmit(now)

    def on_ack_ce(self, ack: tuple[int, tuple, int]) -> None:
        """An ACK that echoes CE marks arrives: ``(ack number, SACK blocks,
        marked segments)``. The echo first (:meth:`_ecn_echo`), then the ACK
        as any other; ACKs without marks go straight to :meth:`on_ack`."""
        self._ecn_echo(ack[2], ack[0], self.now())
        self.on_ack((ack[0], ack[1]))

    def _ecn_echo(self, marked: int, ackno: int, now: float) -> None:
        """An ACK echoed ``marked`` CE marks: the law hears of every echo, and
        reacts (``on_ecn``) at most once per window of data — not until the
        data outstanding at the last reduction is acknowledged — and not in
        loss recovery or the loss phase after a timeout (RFC 3168 §6.1.2)."""
        self.marked += marked
        cc = self.cc
        echo = EcnEcho(now, marked, self.marked, self.delivered,
                       float(self.snd_nxt - self.snd_una), self.min_rtt, self.srtt)
        cc.on_ce_echo(echo)
        if self.in_recovery or self.snd_una < self.recover or ackno < self.cwr_high:
            return
        w, s = cc.cwnd, cc.ssthresh
        cc.on_ecn(echo)
        self._check_law("on_ecn", w, s)
        self.cwr_high = self.high_tx
        self.ecn_reductions += 1

    def send(self, now: float) -> None:
        """Send while the window allows (RFC 5681 §3.1); in recovery, strategies
        that own transmission choose what to send. The retransmission timer
        runs whenever data is outstanding (RFC 6298 §5.1)."""
        if self.in_recovery and self.recovery.owns_sending:
            self.recovery.send(self)
        elif self.detector is not None and self.snd_una < self.recover:
            self._send_marked_first(now)
        else:
            self._send_window(now)
        if self.deadline is None and self.high_tx > self.snd_una:
            self.restart_timer()

    def _send_window(self, now: float) -> None:
        cc = self.cc
        window = cc.cwnd
        if window > self.rwnd:
            window = self.rwnd
        if cc.pacing_rate:
            self._send_paced(now, window)
            return
        nxt, una, end = self.snd_nxt, self.snd_una, self.end_seq
        if nxt < self.high_tx:  # going back after a timeout: resend what the receiver lacks
            board = self.scoreboard
            if board is not None and board.blocks:
                nxt = self._resend_unsacked(nxt, window, now)
        while nxt - una + 1 <= window and nxt < end:  # then the rest, and new data
            self._transmit(nxt, now)
            nxt += 1
        self.snd_nxt = nxt

    def _send_marked_first(self, now: float) -> None:
        """The loss phase after a timeout, with a loss detector (Linux's ``TCP_CA_Loss``):
        while ``cwnd − pipe ≥ 1``, resend the lowest segment marked lost, else
        send new data. Paced flows send one segment per pacing interval."""
        detector, board = self.detector, self.scoreboard
        window = min(self.cc.cwnd, self.rwnd)
        paced = self.cc.pacing_rate
        if paced and (now < self.next_send or self.pace_pending):
            return
        pipe = detector.pipe(self.snd_una, self.high_tx, board)
        while window - pipe >= 1:
            if detector.lost:
                self._transmit(detector.lost[0], now)
            elif self.snd_nxt < self.end_seq and self.snd_nxt - self.snd_una < self.rwnd:
                self._transmit(self.snd_nxt, now)
                self.snd_nxt += 1
            else:
                return
            if paced:
                self._pace_next(now)
                return
            pipe += 1

    def _send_paced(self, now: float, window: float) -> None:
        """One segment per ``packet_bits / pacing_rate`` seconds, within the
        window; a timer brings the sender back when the next may go."""
        if now < self.next_send or self.pace_pending:
            return
        nxt = self.snd_nxt
        board = self.scoreboard
        if board is not None and board.blocks and nxt < self.high_tx:
            nxt = board.sacked_run_end(nxt)  # after a timeout: skip what arrived
        if nxt - self.snd_una + 1 > window or nxt >= self.end_seq:
            self.snd_nxt = nxt
            return
        self._transmit(nxt, now)
        self.snd_nxt = nxt + 1
        self._pace_next(now)

    def _pace_next(self, now: float) -> None:
        """A segment went out at ``now``: the next may go one pacing interval later."""
        rate = self.cc.pacing_rate
        if not 0.0 < rate < math.inf:
            self._law_error(None, "pacing_rate", rate,
                            "a finite rate > 0 bit/s, or None for no pacing")
        self.next_send = now + self.packet_bits / rate
        self.pace_pending = True
        self.clock.schedule(self.next_send, self._pace, None)

    def _pace(self, _: object) -> None:
        self.pace_pending = False
        self.send(self.now())

    def _resend_unsacked(self, nxt: int, window: float, now: float) -> int:
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
            self._transmit(nxt, now)
            nxt += 1
        return nxt

    def _transmit(self, seq: int, now: float) -> None:
        retransmission = seq < self.high_tx
        if retransmission:
            self.retransmits += 1
        else:
            self.high_tx = seq + 1
        index = self.transmissions = self.transmissions + 1
        self.sent[seq] = (now, retransmission, self.delivered, self.delivered_time, index)
        if self.detector is not None:
            self.detector.on_sent(index, seq)
            if retransmission and seq == self.snd_una:
                self.restart_timer()  # Linux re-arms the RTO on resending the head
        self._send_segment(seq, now)

    def _limited_transmit(self, now: float) -> None:
        """RFC 3042: the first two duplicate ACKs outside recovery each let one
        new segment out, up to cwnd + 2 outstanding, if the receiver allows."""
        dup = self.dupacks
        if self.in_recovery or dup > 2 or self.snd_una <= self.recover:
            return
        nxt = self.snd_nxt
        if (nxt < self.end_seq and nxt == self.high_tx
                and nxt - self.snd_una < min(self.cc.cwnd + dup, self.rwnd)):
            self._transmit(nxt, now)
            self.snd_nxt = nxt + 1

    def _ticked(self, sent: float, now: float) -> float:
        """An RTT read off a clock of ``self.tick``: the difference of the two
        truncated readings, at least one tick (Linux's jiffy estimator)."""
        tick = self.tick
        ticks = math.floor(now / tick + 1e-9) - math.floor(sent / tick + 1e-9)
        return max(ticks, 1) * tick

    def _on_rtt(self, rtt: float, now: float) -> None:
        """Hand a valid RTT sample to the window law's ``on_rtt`` (laws that
        override it), after the estimator has taken it."""
        cc = self.cc
        w, s = cc.cwnd, cc.ssthresh
        cc.on_rtt(_new_event(RttSample, (now, rtt, self.min_rtt, self.srtt,
                                         self.snd_nxt - self.snd_una)))
        if not (1.0 <= cc.cwnd < _INF and cc.ssthresh > 0.0):
            self._check_law("on_rtt", w, s)

    # -- what recovery strategies call (SenderView) ---------------------------------
    def signal_loss(self, kind: str) -> None:
        """Tell the window law of a loss; counts fast recoveries.

        ``Loss.inflight`` is RFC 5681's FlightSize, data sent and not
        cumulatively acknowledged — except at a timeout with SACK, or a
        recovery that starts in the loss phase after one, where what the
        receiver has SACKed is left out: after a large overshoot most of the
        cumulative flight has arrived, and counting it would set ``ssthresh``
        from data no longer in the network (Linux avoids the same trap by
        keeping the recovery's ``ssthresh`` at such a timeout).
        """
        flight = self.snd_nxt - self.snd_una
        loss_phase = self.snd_una < self.recover and not self.in_recovery
        self.tlp_high_seq = -1  # a loss detected ends a tail-probe episode
        cc = self.cc
        if kind == "fast":
            self.recoveries += 1
            self.loss_log.append((self.clock.now, "recovery", self.snd_una, cc.cwnd,
                                  cc.ssthresh))
        if self.scoreboard is not None and (kind != "fast" or loss_phase):
            # what the receiver holds below snd_nxt: after a go-back-N timeout
            # snd_nxt is below SACKed data, which is not in that flight either
            flight -= self.scoreboard.sacked_in(self.snd_una, self.snd_nxt)
        w, s = cc.cwnd, cc.ssthresh
        cc.on_loss(Loss(self.now(), kind, float(flight), self.min_rtt, self.srtt))
        self._check_law("on_loss", w, s)

    def _check_law(self, hook: str, cwnd_before: float, ssthresh_before: float) -> None:
        # called when cwnd or ssthresh is out of bounds after a hook (the hot path tests
        # that inline); raises only for what the hook itself changed
        """Refuse what a window law's hook left that no sender can use: a
        window that is not finite or under one segment (the flow would hang,
        or stall for ever), a threshold that is not positive. Values the hook
        did not change are not its doing (a recovery may hold cwnd below one
        segment while data is in flight) and are not checked."""
        cc = self.cc
        if cc.cwnd != cwnd_before and not 1.0 <= cc.cwnd < math.inf:
            self._law_error(hook, "cwnd", cc.cwnd, "a finite window of at least one segment")
        if cc.ssthresh != ssthresh_before and not cc.ssthresh > 0.0:
            self._law_error(hook, "ssthresh", cc.ssthresh,
                            "a threshold > 0 segments (math.inf before the first loss)")

    def _law_error(self, hook: str | None, variable: str, value: object, allowed: str) -> None:
        cc = self.cc
        raise AlgorithmStateError(cc.name or type(cc).__name__, hook, self.now(), variable,
                                  value, allowed)

    def retransmit(self, seq: int) -> None:
        """Send segment ``seq`` again, now."""
        self._transmit(seq, self.now())

    def transmit(self, seq: int) -> None:
        """Send segment ``seq`` now: a retransmission, or ``snd_nxt`` (new data)."""
        self._transmit(seq, self.now())
        if seq == self.snd_nxt:
            self.snd_nxt += 1

    def restart_timer(self) -> None:
        """(Re)arm the retransmission timer to fire one RTO from now (RFC 6298 §5.3),
        or, with tail loss probes, one PTO from now if that comes first.

        Pending timer events are reused: one that fires before the deadline
        re-arms itself, so moving the deadline later costs no event.
        """
        span = self.rto
        self.probe_pending = False
        if self.tlp and self.tlp_high_seq < 0 and not self.in_recovery \
                and self.snd_una >= self.recover and self.rtt_count:
            # RFC 8985 §7.2: PTO = 2·SRTT, plus WCDelAckT with one segment in flight
            pto = 2.0 * self.srtt + (WORST_CASE_DELAYED_ACK
                                     if self.high_tx - self.snd_una == 1 else 0.0)
            if pto < span:
                span, self.probe_pending = pto, True
        self.deadline = deadline = self.now() + span
        if self.timer_at is None or deadline < self.timer_at:
            self.timer_at = deadline
            self.clock.schedule(deadline, self._on_timer, deadline)

    # -- the retransmission timer ------------------------------------------------
    def _on_timer(self, at: float) -> None:
        if at != self.timer_at:
            return  # superseded by an earlier event
        self.timer_at = None
        if self.deadline is None:
            return
        if at < self.deadline:
            self.timer_at = self.deadline
            self.clock.schedule(self.deadline, self._on_timer, self.deadline)
            return
        if self.probe_pending:
            self._probe()
        else:
            self._timeout()

    def _probe(self) -> None:
        """RFC 8985 §7.3: the probe timeout expired with data in flight. Send
        one new segment, beyond cwnd if need be (Linux's ``tcp_send_loss_probe``),
        or with none to send the last one again; then wait an RTO."""
        now = self.now()
        self.probes += 1
        self.probe_pending = False
        nxt = self.snd_nxt
        if nxt == self.high_tx and nxt < self.end_seq and nxt - self.snd_una < self.rwnd:
            self.tlp_resent = False
            self._transmit(nxt, now)
            self.snd_nxt = nxt + 1
        else:
            self.tlp_resent = True
            self._transmit(self.high_tx - 1, now)
        self.tlp_high_seq = self.high_tx
        self.restart_timer()

    def _arm_reordering_timer(self, now: float) -> None:
        """RFC 8985 §6.3, as Linux runs it outside recovery: segments the
        detector marks lost before DupThresh SACKs start a recovery once its
        reordering window has passed without their being delivered."""
        if self.in_recovery or self.snd_una < self.recover:
            return
        self.reo_pending = True
        self.clock.schedule(now + self.detector.reordering_window(self.min_rtt),
                            self._reordering_timeout, None)

    def _reordering_timeout(self, _: None) -> None:
        self.reo_pending = False
        if (self.detector.lost and not self.in_recovery and self.snd_una >= self.recover
                and self.done_at is None):
            self.recovery.enter(self)
            self.send(self.clock.now)

    def _tail_probe_ack(self, ackno: int, blocks: tuple) -> None:
        """RFC 8985 §7.4: once the probe is acknowledged, the episode ends. A
        resent segment that the receiver reports as a duplicate (D-SACK)
        repaired nothing; otherwise the probe alone repaired a tail loss, and
        the window is reduced as for a loss (Linux: CWR, cwnd = ssthresh)."""
        if self.tlp_high_seq < 0 or ackno < self.tlp_high_seq:
            return
        repaired = self.tlp_resent and not (blocks and blocks[0][1] <= ackno)
        self.tlp_high_seq = -1
        if repaired and not self.in_recovery:
            self.signal_loss("fast")
            cc = self.cc
            cc.cwnd = min(cc.cwnd, cc.ssthresh)

    def _timeout(self) -> None:
        """RFC 6298 §5.4–5.6 and RFC 5681 §3.1: back off, go back to the first
        unacknowledged segment with the loss window."""
        now = self.now()
        self.timeouts += 1
        self.loss_log.append((now, "timeout", self.snd_una, self.cc.cwnd, self.cc.ssthresh))
        if self.snd_una != self.rto_seq:  # RFC 5681: ssthresh once per segment
            self.signal_loss("timeout")
        else:
            self.cc.cwnd = self.cc.loss_window
        self.rto_seq = self.snd_una
        self.recovery.on_timeout(self)
        self.in_recovery = False
        self.dupacks = 0
        self.recover = self.high_tx
        self.rto = min(self.rto * 2.0, self.max_rto)
        if self.detector is not None:  # it marks what the timeout lost
            self.detector.on_timeout(self.snd_una, self.high_tx, self.scoreboard)
        else:
            self.snd_nxt = self.snd_una
        self.deadline = None
        self.send(now)
