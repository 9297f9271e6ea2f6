"""The fluid engine's losses: detection, fast recovery, NewReno's rounds, timeouts.

* **Whole losses** (:meth:`LossRecovery._losses`): a step's drops at the
  queue and losses on a link (:meth:`LossRecovery._link_losses`) are whole
  packets; a flow learns of its first loss an RTT after the lost segment was
  sent (a link loss ``dupthresh`` segments after it, RFC 5681 §3.2; a
  drop-tail drop in a short train a round later,
  :meth:`LossRecovery._next_round`), and losses in that RTT belong to the
  same window. Data sent before a fast recovery began and lost belongs to
  it (RFC 6582's ``recover``, RFC 6675's RecoveryPoint;
  :meth:`LossRecovery._absorb`).
* **Detection** (:meth:`LossRecovery._detect`): one reduction (the law's
  ``on_loss``) and a recovery of one RTT — one per hole for NewReno (RFC
  6582, :meth:`LossRecovery._holes_left`), one per further halving for
  Reno, PRR's resending pace for SACK (RFC 6937,
  :meth:`LossRecovery._resend_time`) — or, where too few segments are left
  to raise ``dupthresh`` duplicate ACKs, a retransmission timeout (RFC 6298
  with backoff, :meth:`LossRecovery._rto`).
* **Lost retransmissions** (:meth:`LossRecovery._retransmissions_lost`):
  resent within the recovery under RACK (RFC 8985), else repaired by the
  timer; a NewReno recovery that outlasts its timer ends in a timeout
  (:meth:`LossRecovery._recovery_timeout`, :meth:`LossRecovery._newreno_flight`).
* **After a timeout**: the loss phase (Linux's ``TCP_CA_Loss``,
  :meth:`LossRecovery._loss_phase`) and, without SACK, go-back-N with the
  receiver's held data in one cumulative ACK (:meth:`LossRecovery._go_back`,
  :meth:`LossRecovery._restart_burst`).

Engine attributes read: the per-flow recovery rules set up from each flow's
stack (``dupthresh``, ``dup_acks``, ``rack``, ``tlp``, ``multi_halve``,
``multi_rtts``, ``restart_lw``, ``go_back``, ``keep_ssthresh``,
``loss_window``), the timers' bounds (``min_rto``, ``max_rto``,
``initial_rto``), ``srtt``, ``rttvar``, ``ack_sum``, ``tau``, ``rate``,
``cwnd``, ``ssthresh``, ``delivered``, ``p_lost``, ``queued``,
``plain_tail``, ``ack_clocked``, ``steps``, ``stream_keys``. Written: the
loss and recovery state (``pending``, ``t_detect``, ``freeze_until``,
``lost``, ``found_lost``, ``loss_flight``, ``rec_until``, ``rec_point``,
``rec_old``, ``rec_timeout``, ``resent``, ``rto_until``, ``rto_lost``,
``rto_flight``, ``backoff``, ``loss_until``, ``jump_at``, ``jump_held``,
``restart_burst``, the NewReno rounds ``nr_*``), ``outstanding``,
``ghost``, ``owed``, the counts (``retransmits``, ``timeouts``,
``recoveries``, ``drops``, ``losses``), ``loss_events``, the wake-up times
(``wake``, ``wake_s``), and the laws' windows through ``on_loss``.
"""

from __future__ import annotations

import numpy as np

from ..algorithms.fluid import any_
from . import draws
from .fast import indices as _indices


class LossRecovery:
    """Loss detection, recovery and timeouts of :class:`~ccsim.fluid.engine.FluidEngine` (a mixin)."""

    def _link_losses(self, dep_f: np.ndarray, k_loss: np.ndarray | None) -> np.ndarray:
        """What the flows deliver of their departures ``dep_f`` (segments)
        when the link loses the whole packets ``k_loss`` (drawn with the
        step's expected losses): all of them but those packets, which stay
        outstanding and leave the flight (``ghost``) until a recovery or a
        timeout resends them. A packet lost beyond the step's departures is
        taken from the next steps' (``owed``). Whole packets, not the
        expected loss: between two losses nothing is missing from the
        flight, as in the packet engine (with the expected loss a window of
        three segments at 5 % loss, without a loss for a second, had lost a
        third of its flight to losses no sender would know of)."""
        if k_loss is not None:
            self.owed += k_loss
        if not any_(self.owed):
            return dep_f
        paid = np.minimum(self.owed, dep_f)
        self.owed -= paid
        self.ghost += paid                  # lost: outstanding, no longer in flight
        return dep_f - paid

    def _losses(self, k_drop, k_loss, tf, hf, tau, sent_into, t_lost=None, x=None) -> None:
        """Whole lost packets this step: a flow's first starts its detection
        clock. ``k_drop``: dropped at the queue as they arrived, sent now, so
        found an RTT after ``t_lost`` (when the step's first loss happened;
        None: mid-step). ``k_loss``: lost on a link among the step's
        departures, which the fluid's ACK clock acknowledges as they leave —
        data sent an RTT ago — so found as soon as the ``dupthresh``
        segments sent after it are acknowledged, ``dupthresh/x`` later at the
        flow's rate ``x`` (RFC 5681 §3.2, RFC 6675; at most an RTT):
        detection an RTT after sending in both cases, as in the packet engine.
        ``sent_into``: each flow's data in flight when the lost data were sent
        (for ``lost_inflight``). A loss of data sent before the flow's fast
        recovery began belongs to that recovery: repaired in it, with no
        further reduction (RFC 6582's ``recover``, RFC 6675's RecoveryPoint)
        — a link loss among the departures of the recovery's first RTT
        (``rec_point``); a drop while the flow has sent nothing new since
        (the last step's growth, sent before the detection, meets the
        overflow that caused it). A drop-tail drop on a link not yet full
        with too few segments of its round behind it is found a round later
        (:meth:`_next_round`)."""
        scen = self.scen
        if k_loss is not None and any_(self.rec_point > tf):
            late = (k_loss > 0) & (tf < self.rec_point)
            if any_(late):  # of the window the recovery repairs: resent in it
                self._absorb(late, k_loss, tau)
                self.resent[late] += k_loss[late]
                self.losses += np.bincount(scen, np.where(late, k_loss, 0.0), self.S)
                k_loss = np.where(late, 0.0, k_loss)
        k = (0.0 if k_drop is None else k_drop) + (0.0 if k_loss is None else k_loss)
        hit = k > 0
        if self.rec_old_any:
            old = hit & self.rec_old
            if any_(old):
                self._absorb(old, k, tau)
                hit &= ~old
                k = np.where(old, 0.0, k)
        when = tf + 0.5 * hf if t_lost is None else t_lost
        # a drop in a train on a link not yet full may be found a round late
        late = 0.0 if k_drop is None else tau * self._next_round(k_drop > 0)
        if k_loss is None:
            timely = when + tau
        else:  # a link loss is found sooner than a drop of the same step
            link = hit & (k_loss > 0)
            late = np.where(link, 0.0, late)
            timely = when + np.where(link, np.minimum(self.dup_acks / x, tau), tau)
        found = timely + late  # (the same sums either way: a batch with random loss or not)
        first = hit & ~self.pending  # a detection already due stays, but a link loss's sooner
        if k_loss is not None:
            first |= link & (found < self.t_detect)
        self.t_detect[first] = found[first]
        # its window's growth stops only for the round a timely detection takes
        self.freeze_until[first] = timely[first]
        self.pending |= hit
        self.lost += k
        np.maximum(self.loss_flight, np.where(hit, sent_into, 0.0), out=self.loss_flight)
        if k_drop is not None:
            self.drops += np.bincount(scen, k_drop, self.S)
        if k_loss is not None:
            self.losses += np.bincount(scen, k_loss, self.S)
        if any_(first):  # their detection is their next wake-up (and maybe their scenario's)
            fi = _indices(first)
            detect = np.where(np.isfinite(self.rto_until[fi]), np.inf,
                              np.maximum(self.t_detect[fi], self.rec_until[fi]))
            np.minimum.at(self.wake, fi, detect)
            np.minimum.at(self.wake_s, self.scen[fi], detect)

    def _next_round(self, dropped: np.ndarray) -> np.ndarray:
        """The share of the flows' ``dropped`` segments (mask) found a round
        late (RTTs): a drop-tail drop on a link with no queue, in a window of
        ``w`` whole segments that crosses it as one ACK-clocked train a round.

        Fast retransmit needs ``dupthresh`` duplicate ACKs (RFC 5681 §3.2),
        raised by segments sent after the lost one. Where the link keeps no
        queue, a window-limited flow's round is a train followed by an idle
        gap (Jacobson, SIGCOMM 1988), and a drop at a uniform place in it has
        ``0..w − 1`` of its round's segments behind it: fewer than
        ``dupthresh`` with probability ``min(dupthresh/w, 1)``, and then the
        duplicate ACKs wait for the next round's train (limited transmit,
        RFC 3042, lets it out), found two RTTs after the drop, not one. (On a
        full link the ACK clock never stops: the next round follows at once.)
        A drop-tail buffer drops a burst's tail and lets the rest of the round
        through (:meth:`_burst_drops`); RED and the other active queues drop
        anywhere in the train, its followers too in RED's drop-all phases, so
        they keep the one RTT.
        """
        w = np.maximum(np.floor(np.minimum(self.cwnd, self.path_cap)), 1.0)
        late = dropped & ~self.queued & self.ack_clocked & self.plain_tail[self.scen]
        if self.paced:
            late &= self.pacing == np.inf
        return np.where(late, np.minimum(self.dup_acks / w, 1.0), 0.0)

    def _absorb(self, old: np.ndarray, k: np.ndarray, tau: np.ndarray) -> None:
        """Flows in ``old`` lost ``k`` segments sent before their recovery
        began: resent within it out of the reduced window (as at its start),
        NewReno's one more RTT per hole (RFC 6582)."""
        self.retransmits[old] += k[old]
        self.outstanding[old] -= self.ghost[old]
        self.ghost[old] = 0.0
        more = old & self.multi_rtts
        if any_(more):
            self.rec_until[more] += (k * tau)[more]
            # its end, and so its flow's and scenario's next event, moved: now,
            # not at the next event of whichever scenario of the batch has one
            self._update_flags(_indices(more))

    def _loss(self, mask: np.ndarray, kind: str) -> None:
        """The laws' reaction to a loss (ssthresh) for the flows in ``mask``."""
        for g in self._groups_in(mask):
            g.call("on_loss", mask[g.lo:g.hi], kind)
        bad = mask & ~(self.ssthresh >= 1.0)
        if any_(bad):
            self._bad_window(bad, f"on_loss({kind!r})", "ssthresh")

    def _note(self, mask: np.ndarray, tf: np.ndarray, event: str) -> None:
        """Note ``event`` for the flows in ``mask`` at their time ``tf`` (s)."""
        if self.traces:
            where = _indices(mask)
            self.loss_events.append((tf[where].copy(), where, event))

    def _detect(self, due: np.ndarray, tf: np.ndarray) -> None:
        """Flows in ``due`` detect the losses of a window: a fast recovery or,
        where the packet engine would need its timer, a timeout.

        A window of ``w`` segments with ``k`` losses raises enough duplicate
        ACKs for fast retransmit when ``w − k ≥ dupthresh``. Under Reno
        recovery every further loss needs a further fast retransmit after the
        partial ACK that ended the previous one, clocked out by the new
        segments the halved window lets out: the ``j``-th needs ``w/2^j − k ≥
        dupthresh``, so all ``k`` are repaired without the timer only when
        ``w/2^(k−1) ≥ dupthresh + k``.
        """
        # on the detecting flows alone (index arrays): a batch of a thousand
        # scenarios has some detection at nearly every step
        i = _indices(due)
        lost, cwnd, mh, dup = self.lost[i], self.cwnd[i], self.multi_halve[i], self.dupthresh[i]
        self.jump_at[i] = np.inf  # a go-back-N restart that lost part of itself ends here
        self.found_lost[i] += lost  # what the laws' on_loss reads as ``lost``
        halvings = np.where(mh, np.maximum(lost, 1.0), 1.0)
        to = (cwnd - lost < dup) | (mh & (lost >= 2)
                                    & (cwnd / np.exp2(halvings - 1.0) < dup + lost))
        fi, ti = i[~to], i[to]
        F = self.F
        if fi.size:
            fast = np.zeros(F, bool)
            fast[fi] = True
            self._note(fast, tf, "recovery")
            self._loss(fast, "fast")
            self.loss_until[fast] = 0.0  # a recovery begun in the loss phase ends it
            left = halvings[~to]
            more = left >= 2
            while any_(more):  # Reno: one more reduction per further loss
                ai = fi[more]
                self.cwnd[ai] = np.minimum(self.cwnd[ai], self.ssthresh[ai])
                again = np.zeros(F, bool)
                again[ai] = True
                self._loss(again, "fast")
                left = left - more
                more = more & (left >= 2)
            lf, tau, tff = self.lost[fi], self.tau[fi], tf[fi]
            self.cwnd[fi] = np.where(self.restart_lw[fi], self.loss_window[fi],
                                     np.minimum(self.cwnd[fi], self.ssthresh[fi]))
            rtts = self.multi_rtts[fi]
            rounds = np.where(rtts | self.multi_halve[fi], np.maximum(lf, 1.0), 1.0)
            self.rec_until[fi] = tff + rounds * tau + self._resend_time(fi, lf, rtts)
            # NewReno (RFC 6582, the "Impatient" variant the packet engine and
            # Linux follow) restarts the timer at the first partial ACK only:
            # a recovery of one RTT per hole that outlasts it ends in a timeout
            if any_(rtts):
                rto = self._rto(fi)
                outlast = rtts & ((rounds - 1.0) * tau > rto)
                oi = fi[outlast]
                self.rec_timeout[oi] = (tff + tau + rto)[outlast]
                self.rec_until[oi] = self.rec_timeout[oi]
                # that timeout's FlightSize and holes left (_recovery_timeout)
                left, flight = self._newreno_flight(lf, tau, rto, self.outstanding[fi],
                                                    self.ssthresh[fi])
                self.rto_lost[oi] = left[outlast]
                self.rto_flight[oi] = flight[outlast]
            self.recoveries[fi] += np.where(self.multi_halve[fi], np.maximum(lf, 1.0), 1.0)
            # the holes hold part of a NewReno window until repaired (_holes_left)
            self.nr_holes[fi] = np.where(rtts & (lf >= 2.0), lf, 0.0)
            self.nr_start[fi] = tff
            self.nr_tau[fi] = tau
            self.nr_any = self.nr_any or bool(any_(rtts & (lf >= 2.0)))
            self.retransmits[fi] += lf
            self.backoff[fi] = 0.0
            self.resent[fi] = np.maximum(lf, 1.0)
            # until it sends new data, what it loses was sent before the recovery
            # began (Reno's partial ACKs end it: each further loss is another)
            self.rec_old[fi] = ~self.multi_halve[fi]
            self.rec_old_any = True
            # data leaving the link for the next RTT was sent before it began
            # (Reno's partial ACKs end it: each further loss is another)
            self.rec_point[fi] = np.where(self.multi_halve[fi], -np.inf, tff + tau)
        if ti.size:
            rto = self._rto(ti)
            # the window never recovered from the previous timeout: back off
            again = self.cwnd[ti] <= 2.0 * self.loss_window[ti]
            self.backoff[ti] = np.where(again, self.backoff[ti] + 1.0, 0.0)
            wait = np.minimum(rto * np.exp2(self.backoff[ti]), self.max_rto[self.scen[ti]])
            self.rto_until[ti] = tf[ti] + wait
            self.rto_lost[ti] = self.lost[ti]
            self.rto_flight[ti] = self.outstanding[ti]
            self.timeouts[ti] += 1
        # fast recovery resends the lost segments out of the reduced window
        if fi.size:
            self.outstanding[fi] -= self.ghost[fi]
            self.ghost[fi] = 0.0
        self.pending[i] = False
        self.lost[i] = 0.0
        self.loss_flight[i] = 0.0
        self.t_detect[i] = np.inf

    def _resend_time(self, fi: np.ndarray, lost: np.ndarray, rtts: np.ndarray) -> np.ndarray:
        """How much longer than an RTT a SACK-based recovery of the flows
        ``fi`` (indices) lasts (s): it ends when the last of its ``lost``
        retransmissions is acknowledged, and they go out at the rate its ACK
        clock allows — PRR (RFC 6937, Linux) resends the first at once and
        the rest at its delivery rate ``x``, scaled by ``ssthresh/RecoverFS``
        while more than ``ssthresh`` is in flight — so the last leaves
        ``(lost − 1)/x`` later (``RecoverFS/ssthresh`` times that). A
        slow-start overshoot with a thousand holes takes two or three RTTs to
        repair, not one; a single loss, one RTT. (NewReno and Reno count their
        RTTs per hole already.) A flow whose rate had fallen (most of its
        window lost) still resends ``ssthresh`` per RTT once its pipe is
        below ``ssthresh``: PRR's slow-start reduction bound (RFC 6937 §3.1,
        PRR-SSRB). The proportional part lasts only while the pipe exceeds
        ``ssthresh``: RFC 6675's pipe counts what is out, not yet SACKed nor
        marked lost, and the holes (spread through the window) are marked as
        the SACKs pass them, so the pipe falls from ``RecoverFS`` as the
        window's ``RecoverFS − lost`` deliveries come, below ``ssthresh``
        after ``(1 − ssthresh/RecoverFS)`` of them; each lets out
        ``ssthresh/RecoverFS`` segments, and the rest go out at ``x`` (a
        window that lost most of itself to a RED queue dropping all it got
        waits on no more than those deliveries)."""
        x = np.maximum(self.rate[fi], self.ssthresh[fi] / self.tau[fi])
        recover_fs = self.outstanding[fi]          # FlightSize at the loss's detection
        ssthresh = np.maximum(self.ssthresh[fi], 1.0)
        share = np.minimum(ssthresh / np.maximum(recover_fs, 1.0), 1.0)  # sends per delivery
        # deliveries while the pipe exceeds ssthresh (none if what is left of the
        # window is no more than ssthresh: PRR-SSRB from the start)
        slow_max = np.where(recover_fs - lost > ssthresh,
                            (1.0 - share) * (recover_fs - lost), 0.0)
        slow = np.minimum((lost - 1.0) / share, slow_max)       # deliveries the resends wait on
        segments = slow + (lost - 1.0 - slow * share)            # ... and the rest, at x
        free = ~(rtts | self.multi_halve[fi]) & (x > 0) & (lost > 1.0)
        return np.where(free, segments / np.where(x > 0, x, 1.0), 0.0)

    def _rto(self, i: np.ndarray) -> np.ndarray:
        """The retransmission timeout now of the flows ``i`` (indices), before
        backoff (RFC 6298)."""
        s = self.scen[i]
        rto = np.where(self.ack_sum[i] == 0, self.initial_rto[s],
                       self.srtt[i] + np.maximum(0.001, 4.0 * self.rttvar[i]))
        return np.minimum(np.maximum(rto, self.min_rto[s]), self.max_rto[s])

    def _retransmissions_lost(self, ended: np.ndarray, tf: np.ndarray) -> None:
        """Flows in ``ended`` finish a fast recovery. Each segment it resent
        met the loss rate ``p`` the flow's data meets as the recovery ends
        (after the reduction: a drop-tail overflow has ended by then, random
        loss, RED and persistent overload have not); a lost retransmission is
        repaired by the retransmission timer alone (as in the packet engine
        and Linux without RACK), so with probability ``1 − (1 − p)^resent``
        the flow falls silent until its timer, set when the recovery began
        (at least one RTT ago), fires. Under RACK (RFC 8985 §6.2; Linux's
        default) a lost retransmission is marked lost once a segment sent
        after it is delivered, and resent: the recovery lasts one RTT more,
        its retransmission again at risk. That later segment is new data the
        reduced window lets out (at least two segments: the retransmission
        and one more) or, with tail loss probes (§7), the probe a PTO of two
        smoothed RTTs later; with neither, the timer repairs it."""
        idx = _indices(ended)
        resent = self.resent[idx]
        self.resent[idx] = 0.0
        p = self.p_lost[idx]
        risky = p > 0
        if not any_(risky):
            return
        idx, p, resent = idx[risky], np.minimum(p[risky], 1.0), resent[risky]
        s = self.scen[idx]
        u = draws.stream_uniforms_unguarded(self.stream_keys["retransmits"][s], self.steps[s],
                                            self.jidx[idx])
        hit = idx[u < 1.0 - (1.0 - p) ** resent]
        if not hit.size:
            return
        rack = self.rack[hit] & ((self.cwnd[hit] >= 2.0) | self.tlp[hit])
        if any_(rack):
            ri = hit[rack]
            # found an RTT after it was sent (or after the probe), then resent
            probe = np.where(self.cwnd[ri] >= 2.0, 0.0, 2.0 * self.srtt[ri])
            self.rec_until[ri] = tf[ri] + probe + self.tau[ri]
            self.resent[ri] = 1.0
            self.retransmits[ri] += 1.0
            hit = hit[~rack]
            if not hit.size:
                return
        started = tf[hit] - self.tau[hit]  # the recovery began an RTT or more ago
        self.rto_until[hit] = np.maximum(tf[hit], started + self._rto(hit))
        self.rto_lost[hit] = 1.0
        self.rto_flight[hit] = self.outstanding[hit]
        self.timeouts[hit] += 1
        self.rec_timeout[hit] = np.inf
        self.rec_point[hit] = -np.inf  # the timeout repairs what is lost meanwhile

    @staticmethod
    def _newreno_flight(k, tau, rto, flight, ssthresh):
        """The holes left and the FlightSize (``snd_nxt − snd_una``,
        segments) when the timer ends a NewReno recovery of ``k`` holes that
        began with ``flight`` out, an RTT ``tau`` and a timer ``rto`` (s):
        the recovery repairs one hole per RTT (RFC 6582), ``n = ⌊(tau +
        rto)/tau⌋`` before the timer fires, and each partial ACK moves
        ``snd_una`` past a hole and (holes spread evenly) the data up to the
        next, so ``flight·(k − n)/k`` of the old window is still out. Its
        window, ``ssthresh`` inflated by one per duplicate ACK, counts the
        holes not yet repaired, so round ``j`` sends ``ssthresh − (k − j)``
        new segments (:meth:`_holes_left`), all still out at the timeout."""
        n = np.minimum(np.floor((tau + rto) / tau), k - 1.0)
        left = np.maximum(k - n, 1.0)
        a = ssthresh - k  # new segments in the first round (if positive)
        j0 = np.clip(np.ceil(-a), 0.0, n)  # rounds that send nothing new
        count = n - j0
        sent = count * a + (j0 + n - 1.0) * count / 2.0
        return left, flight * left / np.maximum(k, 1.0) + np.maximum(sent, 0.0)

    def _go_back(self, fire: np.ndarray, tf: np.ndarray) -> None:
        """Flows in ``fire`` restart after a timeout. Without SACK the sender
        goes back to the first hole and resends from there in slow start
        (RFC 5681 §3.1), but the receiver holds the data that arrived past
        the holes (``rto_flight − rto_lost`` segments, less any lost since):
        once slow start's rounds of 1, 2, 4, … have resent the ``k`` holes,
        in ``⌈log2(k + 1)⌉`` RTTs, one cumulative ACK covers all it holds.
        Linux's slow start counts every segment an ACK covers
        (``tcp_slow_start``: cwnd += acked, up to ssthresh; no RFC 3465
        limit), and the packet engine follows it, so the window jumps to
        ssthresh there and what it frees goes out back to back
        — the whole window, as the ACK covers all that was out
        (:meth:`_restart_burst`, :meth:`_burst_drops`): into a buffer smaller
        than that burst, a slow-start restart loses the burst's tail, and a
        NewReno recovery of one RTT per hole then outlasts the timer again
        (Fall & Floyd, CCR 1996, on Reno's and NewReno's multiple losses)."""
        held = self.rto_flight - self.rto_lost - self.lost
        back = fire & self.go_back & (held >= 1.0)
        k = np.maximum(self.rto_lost + self.lost, 1.0)
        lw = np.maximum(self.loss_window, 1.0)
        rounds = np.ceil(np.log2(k / lw + 1.0))
        self.jump_at[fire] = np.inf
        self.jump_at[back] = (tf + rounds * self.tau)[back]
        self.jump_held[back] = held[back]

    def _restart_burst(self, jump: np.ndarray) -> None:
        """Flows in ``jump`` get the cumulative ACK of a go-back-N restart
        (:meth:`_go_back`): slow start adds what it covers, up to ssthresh,
        and the window it frees is one burst at the NIC's rate."""
        ss = jump & (self.cwnd < self.ssthresh)
        new = np.where(ss, np.minimum(self.cwnd + self.jump_held, self.ssthresh), self.cwnd)
        # the ACK covers everything out (the go-back-N resends lie below it):
        # the whole window is free at once
        self.restart_burst[ss] = new[ss]
        self.cwnd[jump] = new[jump]
        self.jump_at[jump] = np.inf
        self.jump_held[jump] = 0.0

    def _loss_phase(self, fire: np.ndarray) -> None:
        """Flows in ``fire`` time out: their loss phase lasts until the holes
        left in the data out at the timeout (``rto_lost`` and those lost
        since) are delivered, as Linux leaves ``TCP_CA_Loss`` once ``snd_una``
        passes ``high_seq`` (``tcp_process_loss``); a fast recovery begun
        meanwhile ends it (``tcp_enter_recovery``). Laws read it as
        ``loss_until``."""
        self.loss_until[fire] = (self.delivered + self.rto_lost + self.lost)[fire]

    def _recovery_timeout(self, late: np.ndarray, tf: np.ndarray) -> None:
        """Flows in ``late`` were still in recovery when their timer fired:
        a timeout (RFC 5681 §3.1) — ssthresh from FlightSize, the loss
        window, and the holes not yet repaired sent again from the first
        (:meth:`_go_back`).

        Its FlightSize (``rto_flight``, :meth:`_newreno_flight`) is not the
        reduced window but all sent past the first hole left. In a stack with
        one reduction per window of data (Linux: ``tcp_enter_loss`` calls the
        law's ssthresh only outside a recovery not yet ended), the
        recovery's ssthresh stays and the law is not called."""
        self.outstanding[late] = self.rto_flight[late]
        self._loss(late & ~self.keep_ssthresh, "timeout")
        self._note(late, tf, "timeout")
        self.cwnd[late] = self.loss_window[late]
        self._loss_phase(late)
        self._go_back(late, tf)
        self.outstanding[late] = 0.0
        self.ghost[late] = 0.0
        self.retransmits[late] += self.lost[late]
        self.lost[late] = 0.0
        self.loss_flight[late] = 0.0
        self.pending[late] = False
        self.t_detect[late] = np.inf
        self.timeouts[late] += 1
        self.rec_timeout[late] = np.inf
        self.rec_until[late] = tf[late]
        self.rec_point[late] = -np.inf
        self.resent[late] = 0.0

    def _holes_left(self, i: np.ndarray | slice = slice(None)) -> np.ndarray:
        """The holes each flow's (of ``i``) NewReno recovery has not yet
        repaired (segments; 0 outside one). NewReno (RFC 6582) repairs one
        hole per partial ACK, one per RTT, and its window counts them:
        ``cwnd`` is ``ssthresh`` inflated by one per duplicate ACK — per
        segment that left the network — so new data goes out while ``snd_nxt
        − snd_una``, which includes the holes, stays below it, and the data
        in transit is ``ssthresh`` less the holes left."""
        on, done = self._newreno_rounds(i)
        if not any_(on):
            if isinstance(i, slice):
                self.nr_any = False  # until the next such recovery begins
            return 0.0
        return np.where(on, np.maximum(self.nr_holes[i] - done, 0.0), 0.0)

    def _newreno_rounds(self, i: np.ndarray | slice = slice(None)
                        ) -> tuple[np.ndarray, np.ndarray]:
        """Which flows (of ``i``, indices; default all) are in a NewReno
        recovery of several holes (a mask), and the whole RTTs since it
        began: the holes repaired so far, one per partial ACK (RFC 6582)."""
        tf = self.t[self.scen[i]]
        on = (self.nr_holes[i] > 0) & (tf < self.rec_until[i])
        return on, np.floor(np.maximum(tf - self.nr_start[i], 0.0) / self.nr_tau[i])
