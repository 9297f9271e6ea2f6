"""The loss-recovery seam: what the sender does between detecting a loss by
duplicate ACKs and the end of recovery.

The sender asks the strategy whether a duplicate ACK starts fast retransmit
(:meth:`Recovery.triggered`), and tells it when a recovery starts
(:meth:`Recovery.enter`), of every duplicate ACK and ACK of new data during
it, and of a timeout; the strategy may retransmit, adjust ``cwnd`` and end
the recovery. The window law (:mod:`ccsim.algorithms`) decides the new
``ssthresh`` when the strategy calls :meth:`SenderView.signal_loss`. Window
laws and strategies combine freely (ns-3's ``TcpRecoveryOps``).

Sequence numbers count segments: segment ``i`` carries payload bytes
``[i·MSS, (i+1)·MSS)`` and an ACK number is the next segment expected.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, Protocol

if TYPE_CHECKING:
    from ..algorithms.base import CongestionControl
    from .scoreboard import Scoreboard


class LossDetector(Protocol):
    """A loss detector a strategy brings along (:attr:`Recovery.detector`):
    told of every transmission and of what every ACK delivers, it marks
    segments lost by a rule of its own, beside the duplicate-ACK count
    (RACK, :mod:`ccsim.recovery.rack`, is the one ccsim ships).

    With a detector, the sender also: resends the marked segments before new
    data in the loss phase after a timeout (:meth:`on_timeout` marks what the
    timeout lost); starts a recovery (``Recovery.enter``) when
    :meth:`on_ack` reports a retransmission lost in that phase; re-arms the
    retransmission timer when it resends ``snd_una``; and, with tail loss
    probes, starts a recovery for marks that wait :meth:`reordering_window`
    outside one. Sequence numbers count segments; ``sent[seq]`` is a
    segment's latest transmission: ``(time (s), resent, delivered,
    delivered time, transmission index)``.

    Attributes:
        lost: segments marked lost and not sent again since, ascending.
        marked: segments ever marked lost (a strategy tells new marks by it).
    """

    lost: list[int]
    marked: int

    def on_sent(self, index: int, seq: int) -> None:
        """Segment ``seq`` went out as transmission number ``index``."""

    def on_ack(self, sent: dict, una: int, ackno: int, new: list[tuple[int, int]],
               board: "Scoreboard", now: float, min_rtt: float) -> bool:
        """An ACK moved the cumulative ACK from ``una`` to ``ackno`` and SACKed
        the ``new`` ranges for the first time, at ``now`` (s). Returns whether
        a retransmission was found lost."""

    def on_timeout(self, una: int, high: int, board: "Scoreboard") -> None:
        """The retransmission timer expired with ``[una, high)`` outstanding."""

    def pipe(self, una: int, high: int, board: "Scoreboard") -> int:
        """Segments in flight, by this detector's marks."""

    def reordering_window(self, min_rtt: float) -> float:
        """How long marks made outside recovery wait before they start one (s)."""


class SenderView(Protocol):
    """What a recovery strategy may read and do on the sender
    (:class:`ccsim.packet.tcp.Sender` is the one ccsim ships).

    The sender owns the recovery state (``in_recovery``, ``recover``,
    ``dupacks``): it counts duplicate ACKs, asks the strategy whether one
    starts fast retransmit (:meth:`Recovery.triggered`), enters recovery and
    calls :meth:`Recovery.enter` (``Sender.enter_recovery``, the one place a
    recovery starts), and leaves it at a timeout. A strategy ends a recovery
    by calling :meth:`exit_recovery`; it may move ``recover`` (NewReno, SACK)
    and ``snd_nxt`` (go-back-N), and it sets ``cwnd`` through ``cc``.

    Attributes:
        cc: the flow's window law (``cwnd``, ``ssthresh`` in segments).
        snd_una: oldest unacknowledged segment.
        snd_nxt: next segment to send (a strategy may move it back for
            go-back-N).
        high_tx: one past the highest segment ever sent.
        dupacks: duplicate ACKs counted since the last ACK of new data.
        in_recovery: whether the sender is in loss recovery (read only).
        end_seq: the flow sends no segment at or above this one.
        rwnd: the most segments outstanding (segments): the receiver window, or
            ten times what the path holds if that is smaller.
        scoreboard: the SACK scoreboard, for strategies with ``uses_sack``.
        detector: the strategy's :class:`LossDetector` (``Recovery.detector``),
            or ``None``.
        ack_delivered: segments the ACK being handled delivered: newly
            acknowledged plus newly SACKed, less those SACKed before.
        recover: one past the highest segment sent when the last recovery or
            timeout began; duplicate ACKs start a new recovery only when
            ``snd_una > recover`` (RFC 6582 §3.2 step 1, with ns-2's reading:
            the ACK must cover a segment sent after that event, so duplicates
            of go-back-N retransmissions cannot trigger it). Starts at -1.
        sent: per outstanding segment, its latest transmission: ``(time (s),
            resent, delivered then, delivered time then, transmission index)``.
        srtt, rttvar: RFC 6298's estimates (s); NaN before the first sample.
        loss_cwnd: whether the stack takes the window, not FlightSize, as the
            flight at a loss (``Scenario.loss_flight="cwnd"``: Linux, ns-2).
        timer_entry: whether the recovery being entered began on a timer
            (RACK's reordering timer), not on an ACK.
    """

    cc: "CongestionControl"
    snd_una: int
    snd_nxt: int
    high_tx: int
    end_seq: float
    rwnd: float
    dupacks: int
    in_recovery: bool
    recover: int
    scoreboard: "Scoreboard | None"
    detector: "LossDetector | None"
    ack_delivered: int
    sent: dict[int, tuple[float, bool, float, float, int]]
    srtt: float
    rttvar: float
    loss_cwnd: bool
    timer_entry: bool

    def now(self) -> float:
        """Simulation time (s)."""

    def signal_loss(self, kind: str) -> None:
        """Tell the window law a loss was detected (sets ``ssthresh``)."""

    def set_ssthresh(self, ssthresh: float) -> None:
        """Set ``ssthresh`` after the law's reaction, for a strategy whose
        source fixes the threshold itself (Vegas, Rate-Halving)."""

    def exit_recovery(self) -> None:
        """End the recovery (the strategy's rules say it is over)."""

    def retransmit(self, seq: int) -> None:
        """Send segment ``seq`` again, now."""

    def transmit(self, seq: int) -> None:
        """Send segment ``seq`` now; ``snd_nxt`` advances when it is new data."""

    def restart_timer(self) -> None:
        """Restart the retransmission timer (RFC 6298 §5.3)."""


class Recovery:
    """Base class of loss-recovery strategies (stateless by default).

    Attributes:
        name: registry key, as used by ``Flow(recovery=...)``.
        uses_sack: whether the receiver must send SACK blocks (the sender
            then keeps a scoreboard).
        owns_sending: whether :meth:`send` chooses what to transmit while in
            recovery (otherwise the sender sends new data while the window
            ``cwnd`` exceeds ``snd_nxt − snd_una``).
        dupthresh: duplicate ACKs that trigger fast retransmit (RFC 5681 §3.2).
        detector: the class of the :class:`LossDetector` the sender runs for
            this strategy (needs ``uses_sack``), or ``None``: e.g.
            :class:`~ccsim.recovery.rack.Rack`. Its marks are then in
            ``tcp.detector.lost``, and after a timeout the sender resends them
            before new data instead of going back to ``snd_una``.
    """

    name: ClassVar[str] = ""
    uses_sack: ClassVar[bool] = False
    detector: ClassVar["type[LossDetector] | None"] = None
    owns_sending: ClassVar[bool] = False
    dupthresh: ClassVar[int] = 3
    #: How the fluid engine (:mod:`ccsim.fluid`), which sees loss events but
    #: not segments, models this strategy. ``fluid_multiple_loss``: what more
    #: than one loss in a window costs — ``"free"`` (all repaired within the
    #: recovery's RTT: SACK-based strategies), ``"rtt_each"`` (one RTT per lost
    #: segment: NewReno's partial ACKs) or ``"halve_each"`` (Reno: recovery
    #: ends at the first partial ACK, so each further loss is a further fast
    #: retransmit and halving, one RTT apart, while the halved window still
    #: clocks out enough new segments for three duplicate ACKs — Fall & Floyd
    #: 1996 — and a retransmission timeout when it does not).
    fluid_multiple_loss: ClassVar[str] = "free"
    #: Window once fast retransmit has resent the loss: ``"ssthresh"`` (fast
    #: recovery) or ``"loss_window"`` (Tahoe: slow start from one segment).
    fluid_restart: ClassVar[str] = "ssthresh"

    def triggered(self, tcp: SenderView) -> bool:
        """Asked by the sender on each duplicate ACK outside recovery: whether
        it starts fast retransmit. Default: the ``dupthresh``-th in a row,
        beyond ``recover``."""
        return (tcp.dupacks == self.dupthresh and not tcp.in_recovery
                and tcp.snd_una > tcp.recover)

    def on_dupack(self, tcp: SenderView) -> None:
        """A duplicate ACK arrived in recovery (``tcp.dupacks`` already
        counts it)."""

    def enter(self, tcp: SenderView) -> None:
        """A recovery starts (the sender is already in it): when
        :meth:`triggered` says so, or when the strategy's :attr:`detector`
        finds a loss itself (a retransmission lost again in the loss phase
        after a timeout, or a mark its reordering timer confirms). Default:
        RFC 5681 §3.2's fast retransmit without inflation — the window law
        sets ``ssthresh``, ``snd_una`` goes again, ``cwnd = ssthresh``."""
        tcp.signal_loss("fast")
        tcp.retransmit(tcp.snd_una)
        tcp.cc.cwnd = tcp.cc.ssthresh

    def on_ack(self, tcp: SenderView, acked: int) -> None:
        """An ACK of ``acked`` new segments arrived while in recovery; the
        strategy calls ``tcp.exit_recovery()`` if it ends the recovery.

        While the sender stays in recovery it does not restart the
        retransmission timer itself: the strategy calls ``restart_timer``
        when its rules say so (RFC 6582's "Impatient" variant does once).
        """

    def send(self, tcp: SenderView) -> None:
        """Transmit what the strategy allows now (only if ``owns_sending``)."""

    def on_timeout(self, tcp: SenderView) -> None:
        """The retransmission timer expired: the sender abandons the recovery
        after this call (reset the strategy's own state here)."""
