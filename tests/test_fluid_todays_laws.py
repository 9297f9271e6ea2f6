"""Today's algorithms (BBRv3, Copa, LEDBAT++, CDG, NV) in the fluid engine,
held to its published agreement with the packet engine: the largest per-flow
share gap against Reno in a 1-BDP buffer (10 Mbit/s, 40 ms, 30 s, seed 1)
within the held-out 90th percentile of docs/fluid.md's agreement table (14.1
points when re-measured on 2026-11-27 with drop-tail overflow shared by
arrival rate). `benchmarks/todays_laws_agreement.py` measures all the
scenarios."""

from __future__ import annotations

import pytest

import ccsim

P90_SHARE_GAP = 0.141  # docs/fluid.md's held-out p90 after the arrival-rate rule (17.0 since
# the packet engine's per-ACK Hybla and HighSpeed): the stricter of the two is kept


def share_gap(name: str, other: str) -> float:
    sc = ccsim.dumbbell("10Mbps", "40ms", buffer="1BDP", flows=[name, other],
                        duration="30s", seed=1)
    packet = ccsim.run(sc).summary["share"].to_numpy()
    fluid = ccsim.run(sc, mode="fluid").summary["share"].to_numpy()
    return float(abs(packet - fluid).max())


@pytest.mark.slow
@pytest.mark.parametrize("name", ["bbr3", "copa", "ledbat", "cdg", "nv"])
def test_against_reno_the_fluid_share_is_within_the_published_agreement(name):
    assert share_gap(name, "reno") <= P90_SHARE_GAP


@pytest.mark.slow
def test_bbr3_alone_in_a_shallow_buffer_loses_little_in_the_fluid_engine_too():
    # the claim (<= 3 % lost at >= 90 % utilisation), as in the packet engine;
    # through the generic hook route (one lost segment per episode) v3 lost 9.1 %
    sc = ccsim.dumbbell("10Mbps", "40ms", buffer="0.25BDP", flows=["bbr3"], duration="30s", seed=1)
    m = ccsim.run(sc, mode="fluid").metrics
    assert m["drops"] / m["data_packets"] <= 0.03 and m["utilisation"] >= 0.90
