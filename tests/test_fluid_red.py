"""RED's average queue in the fluid engine, against the packet engine's.

RED updates its average at each arrival (Floyd & Jacobson 1993), so it sees
the queue that slow start's trains build on a link that is not yet full,
where the fluid queue is empty: each round's window crosses the bottleneck as
a train spaced by the link, and its ACKs release twice as much.
"""

from __future__ import annotations

import ccsim
import numpy as np
import pytest

from ccsim.fluid.engine import FluidEngine
from ccsim.queues import red as red_queue

# 100 Mbit/s and 100 ms: a BDP of 833 packets, so slow start runs six rounds
# before the link fills; thresholds above any train, so that nothing is
# dropped and both engines' windows double undisturbed
_SLOW_START = ccsim.dumbbell("100Mbps", "100ms", flows=["reno"], duration="0.7s", seed=1,
                             queue=ccsim.RED(3000, min_th=1000, max_th=2000))


@pytest.fixture(scope="module")
def averages():
    """(time, RED's average) at each arrival in the packet engine, and at the
    end of each fluid step with the fluid queue and window."""
    seen = []
    early = red_queue._REDState._early

    def recording(state, t, waiting):
        out = early(state, t, waiting)
        seen.append((t, state.avg))
        return out

    mp = pytest.MonkeyPatch()
    mp.setattr(red_queue._REDState, "_early", recording)
    try:
        ccsim.run(_SLOW_START)
    finally:
        mp.undo()
    e = FluidEngine([_SLOW_START], traces=False)
    fluid = []
    while e._step():
        fluid.append((float(e.t[0]), float(e.avg[0]), float(e.q[0]), float(e.cwnd[0])))
    return np.array(seen), np.array(fluid)


def test_red_average_sees_slow_start_trains_before_the_link_fills(averages):
    packet, fluid = averages
    # between trains, at the end of rounds 4-6 (windows of about 80, 160 and
    # 320 segments: the packet average is flat there, having moved as its
    # train passed), while the fluid queue is still empty
    for t in (0.45, 0.55, 0.65):
        p = packet[np.searchsorted(packet[:, 0], t) - 1, 1]
        j = np.searchsorted(fluid[:, 0], t) - 1
        f, q, w = fluid[j, 1:]
        assert q == 0.0 and w < 833  # the link is not full: no fluid queue
        assert p > 2.0  # the trains raise RED's average in the packet engine
        # the packet windows double in whole rounds, the fluid one within
        # them, so their averages agree to within that rounding, not exactly
        # (measured 2026-11-27: 3.2/3.2, 12.1/12.8, 43.5/51.0; 0 in each
        # before RED's average saw the trains)
        assert p / 1.5 < f < p * 1.5, (t, p, f)


def test_a_nic_as_slow_as_the_link_sends_no_train():
    # behind a NIC no faster than the bottleneck a round arrives no faster
    # than it drains: no train rises above the packet in service, and until
    # the window fills the link RED sees no queue (without the NIC's cap the
    # average reaches 4.2 packets by then)
    sc = ccsim.dumbbell("10Mbps", "100ms", flows=[ccsim.Flow("reno", access_rate="10Mbps")],
                        duration="0.5s", seed=1, queue=ccsim.RED(100))
    e = FluidEngine([sc], traces=False)
    while e._step() and e.q[0] == 0.0:
        assert e.avg[0] == 0.0
    assert e.cwnd[0] > 80  # slow start ran until the window filled the link
