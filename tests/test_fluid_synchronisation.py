"""Identical flows at a full drop-tail queue: how many of them one congestion
event reduces, in the fluid engine against the packet engine.

A congestion event is a run of window reductions (fast recoveries and
timeouts) of any flow within one full-queue RTT of the run's first
(``benchmarks/synchronisation.py`` measures the same for 2–8 flows). Six
NewReno flows share 10 Mbit/s, 20 ms and 8 packets of buffer: the path of a
held-out row of the agreement set, about four packets of pipe and buffer
per flow.
"""

import numpy as np
import pytest

import ccsim
from ccsim.metrics import congestion_events

RTT, BUFFER, RATE = 0.02, 8, 10e6
WINDOW = RTT + BUFFER * 1500 * 8 / RATE  # one RTT at a full queue (s)
SINCE = 4.5  # s: two seconds after the last of the staggered starts


def _flows_per_event(mode: str, seed: int) -> tuple[float, float]:
    """Mean flows reduced per congestion event, and the share of events that
    reduce all six."""
    sc = ccsim.dumbbell(RATE, RTT, buffer=BUFFER, duration=20, seed=seed,
                        flows=[ccsim.Flow("newreno", start=0.5 * i) for i in range(6)])
    res = ccsim.run(sc, mode=mode, **({"traces": True} if mode == "fluid" else {}))
    hit = congestion_events(res.events, WINDOW, since=SINCE)["n_flows"].to_numpy()
    return float(hit.mean()), float(np.mean(hit == 6))


def test_the_packet_engine_reduces_a_few_of_six_identical_flows_per_event():
    # the reference the fluid rule below is measured against: measured 2.1-2.3
    # flows per event (seeds 1-5), under 1 % of events reducing all six; a
    # queue that dropped a packet of every flow per overflow would read 6
    for seed in (1, 2):
        flows, every = _flows_per_event("packet", seed)
        assert flows < 3.0
        assert every < 0.1


@pytest.mark.xfail(strict=True, reason=(
    "measured 2026-11-27: the fluid engine turns each flow's share of an overflow "
    "into whole drops at the flow's own regular phase, so six identical flows each "
    "lose about one packet per event: 4.5-5.4 flows reduced per event, 42-76 % of "
    "events reducing all six (seeds 1-5; packet engine 2.1-2.3 and under 1 %); drawing the drops' owners at "
    "random matches the events but moves two-flow rows (benchmarks/README.md, "
    "synchronisation.py)"))
def test_the_fluid_engine_reduces_about_as_many_identical_flows_per_event():
    # within one flow of the packet engine's mean on the same seed (its seeds
    # spread by about 0.15 flows), and full synchronisation rare as there
    for seed in (1, 2):
        packet, _ = _flows_per_event("packet", seed)
        fluid, every = _flows_per_event("fluid", seed)
        assert abs(fluid - packet) < 1.0
        assert every < 0.1
