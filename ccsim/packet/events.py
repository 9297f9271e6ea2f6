"""Segment events of a packet run: what was sent, dropped, delivered and
acknowledged, and when recovery began and ended.

Recording is off by default and then costs nothing: with
``ccsim.run(sc, events=True)`` the engine wraps the callables its senders,
links and receivers already call each other through (a flow's transmit
function, the receiver's ACK delivery, the retransmission timer), so the
per-packet path is unchanged when no one records. Losses and timeouts are
logged by every sender anyway (a handful per run), so ``Result.events``
always holds those rows, which is what plots mark.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Callable

import pandas as pd

if TYPE_CHECKING:
    from .clock import Clock
    from .link import LinkState
    from .tcp import Sender

EVENT_COLUMNS = ("time", "flow", "event", "seq", "cwnd", "ssthresh", "link", "reason",
                 "sack")
"""``time`` (s); ``flow`` (index); ``event`` (one of :data:`EVENTS`); ``seq``
(segment number; for ``acked``, the ACK number: the next segment expected);
``cwnd``, ``ssthresh`` (the sender's, segments, at the event; NaN for events
away from the sender); ``link`` (index in the path of the link that dropped a
packet; -1 for a chosen drop; <NA> otherwise); ``reason`` (why a packet was
dropped: ``"overflow"``, the discipline's kind (``"red"``, ``"codel"``, ...), ``"error"`` for a random link error, or
``"chosen"`` for the scenario's ``drop_segments``); ``sack`` (an ACK's SACK
blocks, ``((start, end), ...)`` in segments, end exclusive)."""

EVENTS = ("sent", "retransmitted", "forwarded", "dropped", "delivered", "acked", "recovery",
          "recovered", "timeout", "ack dropped")
"""``sent``/``retransmitted``: a segment leaves the sender. ``forwarded``:
it has been sent on over link ``link`` (time: the end of its serialisation
there, before the link's propagation delay). ``dropped``: a
link's queue or a link error lost it (time: its arrival at that link).
``delivered``: it reached the receiver. ``acked``: an ACK reached the
sender. ``recovery``: a loss was detected by duplicate ACKs (or SACK, or
RACK) and recovery began. ``recovered``: recovery ended. ``timeout``: the
retransmission timer expired. ``ack dropped``: with traffic both ways, a
link's queue dropped one of the flow's ACKs (``seq``: its ACK number;
``link`` and ``reason`` as for ``dropped``; the time of its arrival there).
Rows recorded ahead of the clock (drops and
deliveries are computed when a packet is sent) are sorted into time order."""

Row = tuple


class EventLog:
    """The rows of one run's events, gathered by the wrappers below."""

    def __init__(self) -> None:
        self.rows: list[Row] = []

    def transmit(self, flow: int, sender_of: Callable[[], "Sender"],
                 transmit: Callable[[int, float], None]) -> Callable[[int, float], None]:
        """``transmit`` that records each segment sent (``sender_of()``: the
        flow's sender, built after its transmit function)."""
        rows = self.rows

        def recorded(seq: int, now: float) -> None:
            sender = sender_of()
            kind = "retransmitted" if sender.sent[seq][1] else "sent"
            rows.append((now, flow, kind, seq, sender.cc.cwnd, sender.cc.ssthresh,
                         None, None, None))
            transmit(seq, now)
        return recorded

    def drop(self, flow: int, seq: int, t: float, link: int, reason: str) -> None:
        self.rows.append((t, flow, "dropped", seq, math.nan, math.nan, link, reason, None))

    def ack_drop(self, flow: int, ack: int, t: float, link: int, reason: str) -> None:
        self.rows.append((t, flow, "ack dropped", ack, math.nan, math.nan, link, reason, None))

    def forward(self, flow: int, seq: int, t: float, link: int) -> None:
        self.rows.append((t, flow, "forwarded", seq, math.nan, math.nan, link, None, None))

    def deliver(self, flow: int, receive: Callable[[int, float], None]
                ) -> Callable[[int, float], None]:
        """``receive`` that records each segment reaching the receiver."""
        rows = self.rows

        def recorded(seq: int, t: float) -> None:
            rows.append((t, flow, "delivered", seq, math.nan, math.nan, None, None, None))
            receive(seq, t)
        return recorded

    def ack(self, flow: int, sender: "Sender", clock: "Clock") -> Callable[[tuple], None]:
        """The sender's ``on_ack`` that records each ACK and the end of a
        recovery it brings."""
        rows, on_ack = self.rows, sender.on_ack

        def recorded(ack: tuple) -> None:
            cc = sender.cc
            rows.append((clock.now, flow, "acked", ack[0], cc.cwnd, cc.ssthresh, None, None,
                         ack[1]))
            was = sender.in_recovery
            on_ack(ack)
            if was and not sender.in_recovery:
                rows.append((clock.now, flow, "recovered", sender.snd_una, cc.cwnd,
                             cc.ssthresh, None, None, None))
        return recorded

    def table(self, senders: list["Sender"]) -> pd.DataFrame:
        """Every row, with each sender's loss log, in time order (ties in the
        order recorded)."""
        return events_table(self.rows + congestion_rows(senders))


def congestion_rows(senders: list["Sender"]) -> list[Row]:
    """The ``recovery`` and ``timeout`` rows every sender logs."""
    return [(t, i, kind, seq, cwnd, ssthresh, None, None, None)
            for i, s in enumerate(senders) for t, kind, seq, cwnd, ssthresh in s.loss_log]


def events_table(rows: list[Row]) -> pd.DataFrame:
    """Rows as the tidy table of :data:`EVENT_COLUMNS`, sorted by time."""
    df = pd.DataFrame(rows, columns=list(EVENT_COLUMNS))
    df = df.sort_values("time", kind="stable", ignore_index=True)
    df["time"] = df["time"].astype(float)
    df["flow"] = df["flow"].astype("int64")
    df["event"] = pd.Categorical(df["event"], categories=list(EVENTS))
    df["seq"] = df["seq"].astype("Int64")
    df["cwnd"] = df["cwnd"].astype(float)
    df["ssthresh"] = df["ssthresh"].astype(float)
    df["link"] = df["link"].astype("Int64")
    df["reason"] = df["reason"].astype("string")
    return df


def drop_reason(link: "LinkState", drops_before: int) -> str:
    """Why ``link`` just lost a packet: its queue (the discipline's own drop,
    named by its kind — ``"red"``, ``"codel"``, ... — or overflow) or a random
    link error."""
    if link.drops == drops_before:
        return "error"
    return queue_drop_reason(link)


def queue_drop_reason(link: "LinkState") -> str:
    """Why ``link``'s queue just dropped a packet: its discipline's own drop,
    named by its kind (``"red"``, ``"codel"``, ...), or overflow."""
    return link.kind if link.last_drop_early else "overflow"
