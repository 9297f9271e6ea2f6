"""SimPy processes of one's own (``ccsim.run(sc, processes=[...])``)."""

from __future__ import annotations

import numpy as np
import pytest

import ccsim
from ccsim.errors import ScenarioError, ScenarioTypeError


def test_a_link_that_fails_for_two_seconds_and_comes_back():
    sc = ccsim.dumbbell("10Mbps", "20ms", flows=["cubic"], duration="16s")

    def outage(env, net):
        yield env.timeout(10.0)
        net.link().loss = 1.0  # down: every packet on the wire lost
        yield env.timeout(2.0)
        net.link().loss = 0.0

    g = ccsim.run(sc, processes=[outage]).series("goodput")[0]
    before = g[(g.index > 8) & (g.index <= 10)].mean()
    during = g[(g.index > 10.1) & (g.index <= 12)].mean()  # 0.1 s: what was in flight
    after = g[(g.index > 14) & (g.index <= 16)].mean()
    assert before > 8e6
    assert during == 0.0
    assert after > 0.5 * before  # CUBIC comes back after its timeouts
    # without the process, no gap: the outage is the process's doing
    plain = ccsim.run(sc).series("goodput")[0]
    assert plain[(plain.index > 10.1) & (plain.index <= 12)].mean() > 8e6


def test_a_flow_started_when_another_finishes():
    flows = [ccsim.Flow("reno", size="500KB"), ccsim.Flow("reno", start="0.01s")]
    sc = ccsim.dumbbell("10Mbps", "20ms", flows=flows, duration="5s")
    seen = {}

    def relay(env, net):
        net.flow(1).hold()
        yield net.flow(0).finished()
        seen["finished"] = env.now
        net.flow(1).start()

    r = ccsim.run(sc, processes=[relay])
    done = r.summary.end[0]  # when flow 0's last byte was acknowledged
    assert done <= seen["finished"] <= done + 0.001 + 1e-9  # the 1 ms poll
    g = r.series("goodput")[1]
    assert g[g.index <= seen["finished"]].sum() == 0.0  # held until then
    assert r.summary.lifetime_goodput_bps[1] > 0  # (the two never overlap: no shared interval)


def test_a_sampler_records_a_statistic_every_rtt_and_changes_nothing():
    sc = ccsim.dumbbell("10Mbps", "40ms", flows=["cubic", "bbr"], duration="5s")
    rows = []

    def sampler(env, net):
        while True:
            flows = net.flows
            rows.append((env.now, net.link().backlog, flows[0].cwnd, flows[1].delivered))
            yield env.timeout(flows[0].rtt)

    r = ccsim.run(sc, processes=[sampler])
    times = np.array([t for t, *_ in rows])
    gaps = np.diff(times)
    assert len(rows) > 50
    assert gaps.min() >= 0.04 - 1e-9  # an RTT is at least the base RTT
    assert max(b for _, b, _, _ in rows) > 0  # it saw the queue
    assert np.all(np.diff([d for *_, d in rows]) >= 0)  # delivered only grows
    # watching is free of side effects: the same result bit for bit
    plain = ccsim.run(sc)
    assert r.summary.goodput_bps.tolist() == plain.summary.goodput_bps.tolist()


def test_a_rate_set_by_a_process_applies_to_packets_from_then_on():
    sc = ccsim.dumbbell("10Mbps", "20ms", flows=["cubic"], duration="6s")

    def slow_down(env, net):
        yield env.timeout(3.0)
        assert net.link().rate == pytest.approx(10e6)
        net.link().rate = 2e6

    g = ccsim.run(sc, processes=[slow_down]).series("goodput")[0]
    # at most 2 Mbit/s over 4-6 s, plus what crossed the link before 4 s and
    # reached the receiver after (held behind a hole, or in the pipe): a pipe
    # and a buffer of segments at most
    edge = (sc.bdp_packets() + sc.links[0].queue.limit) * sc.mss * 8 / 2.0
    assert g[(g.index > 4) & (g.index <= 6)].mean() <= 2e6 * 1.01 + edge  # 1 %: bins' edges


def test_bad_processes_and_settings_are_refused():
    sc = ccsim.dumbbell("10Mbps", "20ms", flows=["reno"], duration="1s")
    with pytest.raises(ScenarioError, match="fluid"):
        ccsim.run(sc, "fluid", processes=[lambda env, net: iter(())])
    with pytest.raises(ScenarioTypeError, match="generator"):
        ccsim.run(sc, processes=[lambda env, net: None])
    with pytest.raises(ScenarioTypeError, match="list"):
        ccsim.run(sc, processes=lambda env, net: None)

    def shorten(env, net):
        yield env.timeout(0.1)
        net.link().delay = 0.001

    with pytest.raises(ScenarioError, match="delay"):
        ccsim.run(sc, processes=[shorten])


def test_a_udp_source_has_no_tcp_handles():
    sc = ccsim.dumbbell("10Mbps", "20ms", flows=["reno", ccsim.CBR("2Mbps")], duration="1s")

    def probe(env, net):
        yield env.timeout(0.5)
        print(net.flow(1).cwnd)

    with pytest.raises(ScenarioError, match="TCP flow"):
        ccsim.run(sc, processes=[probe])


def _relay_new_flow(seen):
    """A process that starts a brand-new BBR flow when flow 0 finishes."""
    def relay(env, net):
        yield net.flow(0).finished()
        seen["at"] = env.now
        seen["index"] = net.add_flow(ccsim.Flow("bbr", size="500KB")).index
    return relay


def test_a_brand_new_flow_added_when_another_finishes_is_its_declared_twin():
    sc = ccsim.dumbbell("10Mbps", "20ms", flows=[ccsim.Flow("cubic", size="300KB")],
                        duration="3s", seed=3)
    seen = {}
    r = ccsim.run(sc, processes=[_relay_new_flow(seen)])
    assert seen["index"] == 1
    assert r.summary.end[0] <= seen["at"] <= r.summary.end[0] + 0.001 + 1e-9  # the 1 ms poll
    assert list(r.summary.algorithm) == ["cubic", "bbr"]
    assert r.summary.finished[1] and r.summary["size"][1] == 500_000
    assert r.series("goodput")[1][lambda g: g.index < seen["at"]].sum() == 0.0
    # the run is the one of the scenario with the flow declared to start then,
    # bit for bit: summary, traces and the result's scenario
    twin = sc.replace(flows=list(sc.flows) + [ccsim.Flow("bbr", size="500KB", start=seen["at"])])
    declared = ccsim.run(twin)
    assert r.scenario == twin
    assert r.summary.drop(columns="fct").equals(declared.summary.drop(columns="fct"))
    assert r.summary.fct.equals(declared.summary.fct)
    assert r.traces.equals(declared.traces)
    # same seed, same result; another seed, another
    again = ccsim.run(sc, processes=[_relay_new_flow({})])
    assert r.summary.equals(again.summary) and r.traces.equals(again.traces)


def test_a_udp_source_added_mid_run_takes_its_share():
    sc = ccsim.dumbbell("10Mbps", "20ms", flows=["cubic"], duration="4s")

    def cross(env, net):
        yield env.timeout(1.0)
        net.add_flow(ccsim.CBR("5Mbps"), at=1.5)

    r = ccsim.run(sc, processes=[cross])
    g = r.series("goodput")
    assert g[1][g[1].index < 1.5].sum() == 0.0  # nothing before its time
    late = g.index > 2.5
    assert g[1][late].mean() > 4.5e6 and g[0][late].mean() < 5.5e6


def test_flows_that_cannot_be_added_are_refused():
    sc = ccsim.dumbbell("10Mbps", "20ms", flows=["reno"], duration="1s")

    def adding(flow, **kw):
        def fn(env, net):
            yield env.timeout(0.2)
            net.add_flow(flow, **kw)
        return fn

    for flow, kw, field in [(ccsim.Flow("reno", start=0.5), {}, "start"),
                            (ccsim.Flow("reno"), {"at": 0.1}, "at"),
                            (ccsim.Flow("reno"), {"at": 1.0}, "at"),
                            (ccsim.Flow("reno", reverse=True), {}, "reverse")]:
        with pytest.raises(ScenarioError, match=field):
            ccsim.run(sc, processes=[adding(flow, **kw)])
    with pytest.raises(ScenarioTypeError, match="ccsim.Flow"):
        ccsim.run(sc, processes=[adding("reno")])


def test_an_added_flow_is_its_declared_twin_with_events_and_two_way_traffic():
    """The event log and the two-way paths (ACKs queued behind data) take an
    added flow as a declared one: same events, same summary."""
    sc = ccsim.dumbbell("10Mbps", "20ms", flows=[ccsim.Flow("cubic", size="300KB")],
                        duration="2s", seed=3)
    r = ccsim.run(sc, processes=[_relay_new_flow({})], events=True)
    twin = ccsim.run(r.scenario, events=True)
    assert set(r.events["flow"]) == {0, 1}
    assert r.events.equals(twin.events) and r.summary.equals(twin.summary)

    both = ccsim.dumbbell("10Mbps", "20ms", flows=["cubic", ccsim.Flow("reno", reverse=True)],
                          duration="2s")

    def add(env, net):
        yield env.timeout(0.5)
        net.add_flow(ccsim.Flow("bbr", reverse=True))

    r = ccsim.run(both, processes=[add])
    assert r.summary["start"][2] == 0.5 and r.summary["lifetime_goodput_bps"][2] > 0
    assert ccsim.run(r.scenario).summary.equals(r.summary)
