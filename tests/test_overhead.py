"""A flow's random send overhead (ns-2's ``overhead_``), the remedy Floyd &
Jacobson (1992) give for phase effects in deterministic simulations."""

from __future__ import annotations

import numpy as np
import pytest

import ccsim
from tests.test_golden import fingerprint

RATE = 10e6


def _two_rtts(overhead, seed=1, duration="100s"):
    # Two loss-free drop-tail Reno flows, 40 and 60 ms: the short one should get
    # more (RTT bias), but without randomness the pair locks into a pattern in
    # which the short one takes the drops and times out again and again. The
    # scenario's own jitters are off: the overhead alone is under test here
    # (tests/test_seeds_matter.py has the jitters on the same pair).
    # In ns-2's stack (an ACK per segment, classic Reno), where Floyd & Jacobson's
    # lock and ns-2's overhead_ live.
    return ccsim.dumbbell("10Mbps", "40ms", buffer="1BDP", duration=duration, seed=seed,
                          start_jitter=0, ack_jitter=0, stack="ns2",
                          flows=[ccsim.Flow("reno", overhead=overhead),
                                 ccsim.Flow("reno", rtt="60ms", overhead=overhead)])


@pytest.mark.slow
@pytest.mark.xfail(strict=True, reason=(
    "one free seed gives the short flow 0.500 of the link, below the RTT bias's 0.52-0.75 "
    "band; not the exit ACK's doing (measured 2026-11-27, seeds 1-5): one 100-s run's share "
    "spreads with the seed, 0.549, 0.500, 0.590, 0.588, 0.604 with ns-2's exit ACK and "
    "0.586, 0.567, 0.560, 0.493, 0.530 without it, so a band per run fails at some seed "
    "either way: open (a claim on the mean over seeds would be a different test)"))
def test_overhead_breaks_the_phase_lock():
    tx = 1500 * 8 / RATE  # one packet time at the bottleneck: Floyd & Jacobson's size
    locked = [ccsim.run(_two_rtts(0.0, seed)).summary for seed in (1, 2)]
    free = [ccsim.run(_two_rtts(tx, seed)).summary for seed in (1, 2)]
    share = lambda s: s.goodput_bps[0] / s.goodput_bps.sum()  # noqa: E731
    # Without overhead nothing is random: every seed gives the same locked run,
    # the short flow below half and timing out far more than the long one.
    assert share(locked[0]) == share(locked[1])
    assert share(locked[0]) < 0.45 and locked[0].timeouts[0] > 3 * locked[0].timeouts[1]
    # With it the seeds differ and the short flow gets the larger share, as the
    # RTT bias of Reno says (throughput ∝ 1/RTT^k with k between 1 and 2: a share of
    # 0.6 to 0.69 at an RTT ratio of 1.5; the band leaves room for 100 s runs).
    assert share(free[0]) != share(free[1])
    for s in free:
        assert 0.52 < share(s) < 0.75
        assert s.timeouts[0] < locked[0].timeouts[0] / 3


def test_packets_wait_up_to_the_overhead_in_order():
    # A lone flow far below the link's rate (its window held by the receiver). A
    # packet that finds the link idle (its serialisation ends more than a packet
    # time after the one before's) ends it one packet time after it reached the
    # link, which is its sending time plus its wait plus the NIC's packet time (the
    # NIC idle too: a packet it held would reach the link less than a packet time
    # behind the one before, and find it busy). The waits fill [0, overhead]
    # (uniform: mean about half of it), and no packet overtakes another.
    overhead = 0.005
    sc = ccsim.dumbbell("10Mbps", "40ms", buffer=100, duration="5s", seed=3, rwnd=4 * 1460,
                        flows=[ccsim.Flow("reno", overhead=overhead)],
                        stack="ns2")  # ns-2's overhead_, an ACK per segment
    ev = ccsim.run(sc, events=True).events
    sent = ev[ev.event == "sent"].set_index("seq")["time"]
    left = ev[ev.event == "forwarded"].set_index("seq")["time"]
    tx = sc.packet_size * 8 / RATE
    left = left.sort_index()
    idle = left.diff() > tx + 1e-9
    nic = sc.packet_size * 8 / sc.flows[0].access_rate
    wait = (left - tx - nic - sent.loc[left.index])[idle].to_numpy()
    assert len(wait) > 300
    assert wait.min() >= -1e-12
    # the most a packet waits: its own draw, or the one before it still waiting
    assert wait.max() <= overhead + 1e-12
    # uniform draws have mean overhead/2; waiting behind another only adds.
    # 5 standard errors of the mean (overhead / sqrt(12 n)) as the margin.
    assert wait.mean() >= overhead / 2 - 5 * overhead / np.sqrt(12 * len(wait))
    assert np.all(np.diff(left.sort_index().to_numpy()) > 0)  # in sequence order


def test_deterministic_and_off_by_default():
    sc = _two_rtts(0.0012, duration="5s")
    assert fingerprint(ccsim.run(sc)) == fingerprint(ccsim.run(sc))
    assert "overhead" not in ccsim.dumbbell("10Mbps", "40ms", flows=["reno"]).to_dict()["flows"][0]
    again = ccsim.Scenario.from_dict(sc.to_dict())
    assert again == sc and again.flows[0].overhead == 0.0012


def test_bad_overhead_and_the_fluid_engine():
    with pytest.raises(ccsim.ScenarioError, match="flow.overhead"):
        ccsim.Flow("reno", overhead=-0.001)
    with pytest.raises(ccsim.ScenarioError, match=r"flows\[0\]\.overhead"):
        ccsim.run(_two_rtts(0.001, duration="1s"), mode="fluid")
