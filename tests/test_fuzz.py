"""Random small scenarios through the packet engine: whatever the rates,
delays, buffers, queues, loss, algorithms and recoveries, a run ends (within
a wall-clock limit), raises nothing, and reports physical numbers.

The "ci" hypothesis profile draws the same examples every run; the
"thorough" profile (CCSIM_HYPOTHESIS_PROFILE=thorough) explores afresh.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from test_flight_size import recording_losses
from wall import wall_limit

import ccsim
from ccsim import algorithms, recovery
from ccsim.packet import PacketEngine

WALL_LIMIT = 30  # s per run; the largest drawn here takes well under 2 s


@st.composite
def scenarios(draw):
    n = draw(st.integers(1, 3))
    names = [draw(st.sampled_from(algorithms.names())) for _ in range(n)]
    flows = [ccsim.Flow(name,  # a preset (sack, tahoe, ...) takes no other recovery
                        recovery=(None if algorithms.get(name).preset else
                                  draw(st.sampled_from([None, *recovery.names()]))),
                        start=draw(st.sampled_from([0.0, 0.3, 1.0])),
                        rtt=draw(st.sampled_from([None, 0.08, 0.25])))
             for name in names]
    queue = draw(st.sampled_from(["droptail", "red"]))
    buffer = draw(st.sampled_from([3, 20, 100] if queue == "droptail" else [30, 60]))
    return ccsim.dumbbell(bandwidth=draw(st.sampled_from(["1Mbps", "5Mbps", "20Mbps"])),
                          rtt=draw(st.sampled_from(["5ms", "40ms", "150ms"])),
                          buffer=buffer, queue=queue,
                          loss=draw(st.sampled_from([0.0, 0.01, 0.05])),
                          flows=flows, duration=draw(st.sampled_from(["2s", "4s"])),
                          delayed_ack=draw(st.booleans()), seed=draw(st.integers(0, 9)))


@pytest.mark.slow
@settings(max_examples=100, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(sc=scenarios())
def test_any_small_scenario_ends_with_physical_numbers(sc):
    losses = []
    with wall_limit(WALL_LIMIT):
        res = PacketEngine(sc, sender_class=recording_losses(losses)).run()
    flights = [inflight for _, inflight in losses]
    s, m = res.summary, res.metrics
    capacity = sc.links[0].rate
    assert not s[["goodput_bps", "delivered_bytes", "retransmits", "timeouts"]].isna().any().any()
    assert (s["goodput_bps"] >= 0).all() and (s["goodput_bps"] <= capacity * (1 + 1e-9)).all()
    if s["share"].notna().all():
        assert math.isclose(s["share"].sum(), 1.0, rel_tol=1e-9)
    assert 0.0 <= m["utilisation"] <= 1.0 + 1e-9 or math.isnan(m["utilisation"])
    assert all(f >= 0 for f in flights)  # FlightSize is never negative
    cwnd = res.traces.loc[res.traces["variable"] == "cwnd", "value"].to_numpy(float)
    cwnd = cwnd[~np.isnan(cwnd)]  # NaN: a flow not started yet, or done
    assert (cwnd >= 1.0).all() and np.isfinite(cwnd).all()


@st.composite
def two_way_scenarios(draw):
    """A scenario of :func:`scenarios` with some of its flows (at least one)
    sending the other way."""
    sc = draw(scenarios())
    flip = draw(st.lists(st.booleans(), min_size=len(sc.flows), max_size=len(sc.flows))
                .filter(any))
    return sc.replace(flows=[dataclasses.replace(f, reverse=r) for f, r in zip(sc.flows, flip)])


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sc=two_way_scenarios())
def test_any_small_two_way_scenario_ends_with_physical_numbers(sc):
    # traffic both ways: ACKs in the queues, some dropped; every run still ends,
    # and no side of the link carries more than its rate or queues beyond its buffer
    with wall_limit(WALL_LIMIT):
        engine = PacketEngine(sc)
        res = engine.run()
    s, m = res.summary, res.metrics
    capacity, limit = sc.links[0].rate, engine.links[0].limit
    assert not s[["goodput_bps", "delivered_bytes", "retransmits", "timeouts"]].isna().any().any()
    assert (s["goodput_bps"] >= 0).all() and (s["goodput_bps"] <= capacity * (1 + 1e-9)).all()
    for name in ("utilisation", "reverse_utilisation"):
        assert 0.0 <= m[name] <= 1.0 + 1e-9 or math.isnan(m[name]), name
    assert m["ack_drops"] >= 0
    assert engine.queue.max() <= limit and engine.reverse_queue.max() <= limit
