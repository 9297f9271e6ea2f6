"""Pacing: a law that sets ``pacing_rate`` gets its segments spaced at it."""

from __future__ import annotations

import numpy as np
import pytest

import ccsim
from ccsim.algorithms import CongestionControl
from ccsim.algorithms import registry as algorithm_registry


@pytest.fixture()
def paced(scratch_registry):
    @algorithm_registry.register
    class FixedRate(CongestionControl):
        """A large window, paced at a fixed rate."""

        name = "fixed-rate"

        def __init__(self, *, rate: float = 2e6):
            self.rate = rate

        def start(self, initial_window, mss):
            super().start(1000.0, mss)
            self.pacing_rate = self.rate

    return FixedRate


def test_paced_flow_sends_at_its_rate(paced):
    rate = 2e6
    sc = ccsim.dumbbell("10Mbps", "40ms", buffer=100, duration="10s",
                        flows=[ccsim.Flow("fixed-rate", params={"rate": rate})])
    res = ccsim.run(sc, events=True)
    times = res.events.loc[res.events["event"] == "sent", "time"]
    # Segments leave exactly one packet time at the pacing rate apart.
    gaps = np.diff(times)
    assert gaps == pytest.approx(np.full(len(gaps), sc.packet_size * 8 / rate))
    # Goodput is the pacing rate less the headers' share (over the 10 s the flow
    # ran, less the first RTT before any segment is delivered).
    expected = rate * sc.mss / sc.packet_size * (10 - 0.04) / 10
    assert res.summary.loc[0, "goodput_bps"] == pytest.approx(expected, rel=0.01)
    # Below the link rate, so nothing queues and nothing is lost.
    assert res.series("queue")["queue"].max() <= 1
    assert res.metrics["drops"] == 0


def test_unpaced_window_goes_at_once(paced):
    # The same window without pacing: sent back to back, it fills the buffer.
    paced.start = lambda self, iw, mss: CongestionControl.start(self, 1000.0, mss)
    res = ccsim.run(ccsim.dumbbell("10Mbps", "40ms", buffer=100, duration="2s",
                                   flows=["fixed-rate"]))
    assert res.metrics["drops"] > 0
