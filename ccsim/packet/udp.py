"""Unresponsive UDP sources and their receivers (:func:`ccsim.CBR`,
:func:`ccsim.OnOff`).

A source puts packets on the flow's path with the same transmit function a
TCP sender uses, one clock event per packet, at its own pace: no ACKs, no
retransmissions, no window. Its receiver counts what arrives, in trace bins
(goodput), whatever the order.
"""

from __future__ import annotations

import math
import random
from typing import Callable

from .bins import TimeBins


class _NoRtt:
    """What the engine reads of a TCP sender's RTT estimator: nothing measured."""

    rtt_sum = 0.0
    rtt_count = 0


class UdpReceiver:
    """Counts arriving packets per trace bin (:attr:`deliveries`) and in all
    (:attr:`received`)."""

    def __init__(self, n_bins: int, bin_width: float) -> None:
        self.deliveries = TimeBins(n_bins + 1, bin_width)
        self.received = 0

    def receive(self, seq: int, t: float) -> None:
        """Packet ``seq`` arrives at ``t`` (s)."""
        self.received += 1
        self.deliveries.at(t, 1)

    receive_ce = receive  # a CE mark means nothing to an unresponsive source


class UdpSource:
    """Sends a packet every ``gap`` seconds, during on periods.

    ``source`` is the flow's description (:func:`ccsim.CBR`,
    :func:`ccsim.OnOff`), ``packet_payload`` the payload bytes of a packet,
    ``seed`` the flow's own stream (the on/off periods). The attributes the
    engine reads of a TCP sender are here too, with nothing counted
    (``started`` stays False, so no window is traced).
    """

    started = False
    done_at = None
    retransmits = timeouts = recoveries = 0
    loss_log: list = []
    rtt = _NoRtt()

    def __init__(self, source: dict, packet_payload: int, transmit: Callable, clock, seed: int,
                 stop: float) -> None:
        self.gap = packet_payload * 8.0 / source["rate"]
        self.transmit, self.clock, self.stop_at = transmit, clock, stop
        self.kind = source["kind"]
        self.transmissions = 0
        if self.kind == "onoff":
            draw = random.Random(seed).random
            on, off, dist, shape = source["on"], source["off"], source["dist"], source["shape"]
            if dist == "exponential":
                self.period = lambda mean: -mean * math.log1p(-draw())
            else:  # Pareto of tail index shape and the given mean: scale mean·(shape-1)/shape
                self.period = lambda mean: (mean * (shape - 1.0) / shape
                                            / (1.0 - draw()) ** (1.0 / shape))
            self.on, self.off = on, off
        self.on_until = math.inf

    def start(self) -> None:
        """Begin sending (an on period, for an on/off source)."""
        now = self.clock.now
        if self.kind == "onoff":
            self.on_until = now + self.period(self.on)
        self.send(now)

    def send(self, t: float) -> None:
        """Send one packet at ``t`` (s) and schedule the next."""
        if t >= self.stop_at:
            return
        if t >= self.on_until:  # the on period is over: silence, then the next
            start = self.on_until + self.period(self.off)
            self.on_until = start + self.period(self.on)
            self.clock.schedule(start, self.send, start)
            return
        self.transmit(self.transmissions, t)
        self.transmissions += 1
        self.clock.schedule(t + self.gap, self.send, t + self.gap)
