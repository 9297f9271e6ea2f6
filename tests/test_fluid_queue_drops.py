"""Which flows a full drop-tail queue drops in the fluid engine: whole packets,
regular for the queue, each one flow's arrival (drawn by the flows' shares)."""

import numpy as np

import ccsim
from ccsim.fluid.engine import FluidEngine


def _flows_per_event(result, rtt: float, since: float) -> float:
    """Mean number of distinct flows that enter a recovery or a timeout in
    each congestion event after ``since`` (s) (events: reductions less than
    an RTT apart)."""
    ev = result.events
    ev = ev[ev.event.isin(["recovery", "timeout"]) & (ev.time > since)].sort_values("time")
    t, f = ev.time.to_numpy(), ev.flow.to_numpy()
    sizes, i = [], 0
    while i < len(t):
        j = i
        while j + 1 < len(t) and t[j + 1] - t[i] < rtt:
            j += 1
        sizes.append(len(set(f[i:j + 1])))
        i = j + 1
    return float(np.mean(sizes))


def test_equal_flows_behind_a_full_drop_tail_queue_do_not_all_lose_in_every_event():
    """Six NewReno flows, same path, behind an 8-packet buffer: in the packet
    engine a congestion event reduces about two of them (2.1 on average,
    seeds 1-3, measured 2026-11-27), as the packets that find the queue full
    are a few flows' back-to-back arrivals. Spreading each event's drops over
    the flows in proportion to their rates, one each, reduced nearly all six
    every time (4.9) and held equal windows in lockstep, the queue empty a
    quarter of the time. Counted once all six run (from 12 s). Bound: 3.5, half-way between (independent draws of
    about six drops among six flows give four flows at most)."""
    sc = ccsim.dumbbell("10Mbps", "20ms", buffer=8, duration="30s", seed=1,
                        flows=[ccsim.Flow("newreno", start=s)
                               for s in (0.0, 6.1, 8.6, 9.5, 10.4, 10.5)])
    runs = ccsim.run_many([sc.replace(seed=s) for s in (1, 2, 3)], mode="fluid")
    rtt = float(np.mean([r.summary.mean_rtt.mean() for r in runs]))
    assert np.mean([_flows_per_event(r, rtt, since=12.0) for r in runs]) < 3.5


def _engine(flows):
    sc = ccsim.dumbbell("10Mbps", "20ms", buffer=8, duration="10s", seed=3, flows=flows)
    return FluidEngine([sc], traces=False)


def test_queue_drops_are_regular_for_the_queue_and_drawn_by_share_among_flows():
    """Expected drops of 0.3 a step, shared 1 : 3 : 0 by three flows, for 4000
    steps: the queue drops every packet its accumulated expectation passes
    (1200, one more or less for the phase), never one of a flow with no
    share, and the others in proportion to their shares (binomial, n = 1200,
    p = 1/4: standard deviation 15, so a bound of 60 is four of them)."""
    eng = _engine(["reno", "reno", "reno"])
    mean = np.zeros(eng.F)
    order = eng.order[0]
    mean[order] = [0.075, 0.225, 0.0]
    total = np.zeros(eng.F)
    for _ in range(4000):
        k = eng._queue_drops(mean)
        if k is not None:
            total += k
        eng.steps += 1
    assert abs(total.sum() - 1200) <= 1
    assert total[order[2]] == 0
    assert abs(total[order[0]] - 300) < 60


def test_a_lone_flows_queue_drops_keep_their_regular_spacing():
    """One flow: every drop is its own, one per whole packet of expected
    drops (a flow whose share is a packet per ten steps drops every tenth)."""
    eng = _engine(["reno"])
    mean = np.full(eng.F, 0.1)
    got = []
    for step in range(100):
        k = eng._queue_drops(mean)
        if k is not None:
            got.append(step)
        eng.steps += 1
    assert len(got) == 10
    assert set(np.diff(got)) == {10}
