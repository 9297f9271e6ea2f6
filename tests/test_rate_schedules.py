"""Links whose rate changes (steps, Mahimahi traces) and the jitter element."""

from __future__ import annotations

import json
import math
import random

import numpy as np
import pytest

import ccsim
from ccsim.errors import ScenarioError, ScenarioTypeError
from ccsim.packet.link import LinkState
from ccsim.scenario.schedule import OpportunityWire, RateSchedule, StepWire, write_mahimahi


def step_trace(path, rates=((10e6, 5000), (2e6, 5000))):
    """A Mahimahi trace of piecewise-constant rates ((bit/s, ms) pairs): each
    millisecond holds the whole 1,500-byte opportunities its rate has
    accumulated by then."""
    ops, acc, ms = [], 0.0, 0
    for rate, length in rates:
        for _ in range(length):
            ms += 1
            acc += rate / 8.0 / 1500 / 1000.0
            while acc >= 1.0 - 1e-9:
                ops.append(ms)
                acc -= 1.0
    write_mahimahi(path, ops)
    return path


# -- Mahimahi's delivery opportunities, packet by packet ----------------------------

def test_a_packet_uses_the_first_opportunity_after_it_arrives_and_the_trace_repeats():
    wire = OpportunityWire(RateSchedule.mahimahi([1, 1, 3, 10]))  # period 10 ms
    assert [wire.send(0.0, 1500) for _ in range(3)] == [0.001, 0.001, 0.003]
    assert wire.send(0.0005, 1500) == 0.010
    # the trace ends: it repeats with its last timestamp as the period
    assert wire.send(0.0005, 1500) == pytest.approx(0.011)
    # a packet arriving at an opportunity's very instant cannot use it (Mahimahi
    # burns the opportunities due up to now before it enqueues)
    assert wire.send(0.013, 1500) == pytest.approx(0.020)


def test_packets_span_opportunities_and_bytes_no_packet_uses_are_lost():
    wire = OpportunityWire(RateSchedule.mahimahi([1, 1, 3, 10]))
    assert wire.send(0.0, 1000) == 0.001     # 500 bytes of the first left
    assert wire.send(0.0005, 1000) == 0.001  # queued by then: 500 there, 500 of the second
    # the queue was empty when the second opportunity came: its 1000 bytes left are lost
    assert wire.send(0.002, 1000) == 0.003
    assert wire.send(0.0025, 2500) == 0.011  # 500 of the third, 1500 at 10 ms, 500 at 11 ms


def test_steps_serialise_a_packet_across_a_change_of_rate():
    wire = StepWire(RateSchedule.steps([(0, 8000), (1, 16000)]))
    # 12,000 bits: 8,000 in the first second, the other 4,000 at 16 kbit/s
    assert wire.send(0.0, 1500) == pytest.approx(1.25)
    wire = StepWire(RateSchedule.steps([(0, 8000), (1, 0), (2, 8000)]))
    # 4,000 bits before the link goes down for a second, the other 8,000 after
    assert wire.send(0.5, 1500) == pytest.approx(3.0)


def test_the_nominal_rate_and_capacity():
    s = RateSchedule.steps([(0, "10Mbps"), (5, "2Mbps")])
    assert s.rate == 10e6  # the mean up to the last change
    assert s.capacity(0.0, 10.0) == pytest.approx(10e6 * 5 + 2e6 * 5)
    t = RateSchedule.mahimahi([1, 2, 3, 4])  # 4 opportunities in 4 ms: 12 Mbit/s
    assert t.rate == pytest.approx(12e6)
    assert t.capacity(0.0, 1.0) == pytest.approx(12e6)


# -- the behaviour the feature exists for -------------------------------------------

@pytest.mark.parametrize("mode", ["packet", "fluid"])
def test_cubic_follows_a_trace_from_10_to_2_mbit_s(tmp_path, mode):
    """A Mahimahi trace of 10 Mbit/s for 5 s then 2 Mbit/s for 5 s under one
    CUBIC flow (20 ms): the flow fills the link in the first half and cannot
    exceed it in the second (2.1: one trace bin of slack for the packets the
    queue holds as the rate drops)."""
    trace = ccsim.read_mahimahi(step_trace(tmp_path / "step.trace"))
    sc = ccsim.dumbbell(bandwidth=trace, rtt="20ms", flows=["cubic"], duration="10s")
    g = ccsim.run(sc, mode).series("goodput")[0]
    assert g[(g.index > 1) & (g.index <= 5)].mean() >= 8e6
    assert g[(g.index > 6) & (g.index <= 10)].mean() <= 2.1e6
    assert 0.0 < ccsim.run(sc, mode).summary.goodput_bps[0] <= trace.capacity(0, 10) / 10


def test_a_list_of_steps_is_a_bandwidth_and_the_packet_engine_keeps_to_it():
    sc = ccsim.dumbbell(bandwidth=[(0, "10Mbps"), (2, "1Mbps"), (4, "10Mbps")], rtt="20ms",
                        flows=["reno"], duration="6s")
    g = ccsim.run(sc).series("goodput")[0]
    low = g[(g.index > 2.2) & (g.index <= 4)].mean()
    assert low <= 1e6 * 1.05  # one bin of the queue's drain beyond the rate
    assert g[(g.index > 5) & (g.index <= 6)].mean() > 2e6  # the rate came back (Reno regrows)
    assert ccsim.run(sc).metrics["utilisation"] <= 1.0


# -- as data ------------------------------------------------------------------------

def test_schedules_round_trip_and_fixed_rate_scenarios_keep_their_keys(tmp_path):
    plain = ccsim.dumbbell("10Mbps", "20ms", flows=["reno"])
    assert "jitter" not in plain.to_dict()["links"][0]
    assert isinstance(plain.to_dict()["links"][0]["rate"], float)
    trace = ccsim.read_mahimahi(step_trace(tmp_path / "t.trace", ((5e6, 40),)))
    for bw in (trace, [(0, "10Mbps"), (5, "2Mbps")]):
        sc = ccsim.dumbbell(bw, "20ms", flows=["reno"], jitter="3ms")
        assert ccsim.Scenario.from_json(sc.to_json()) == sc
        assert ccsim.Scenario.from_toml(sc.to_toml()) == sc
        assert ccsim.Scenario.from_dict(json.loads(json.dumps(sc.to_dict()))).key == sc.key
        assert sc.key != plain.key


# -- bad input ----------------------------------------------------------------------

@pytest.mark.parametrize("lines, line, fragment", [
    (["1", "2", "x3"], 3, "whole number"),
    (["1", "5", "4"], 3, "non-decreasing"),
    (["-1", "5"], 1, "≥ 0"),
    (["0", "0"], 2, "last time > 0"),
])
def test_a_malformed_trace_is_refused_naming_file_and_line(tmp_path, lines, line, fragment):
    path = tmp_path / "bad.trace"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ScenarioError, match=fragment) as err:
        ccsim.read_mahimahi(path)
    assert err.value.field.endswith(f"bad.trace:{line}")


@pytest.mark.parametrize("steps, field", [
    ([(0, "10Mbps"), (5, "-2Mbps")], "rate[1].rate"),
    ([(0, "10Mbps"), (5, "2Mbps"), (5, "1Mbps")], "rate[2].time"),
    ([(1, "10Mbps")], "rate[0].time"),
    ([(0, "10Mbps"), (5, 0)], "rate[1].rate"),  # down for ever
])
def test_bad_steps_are_refused_by_field(steps, field):
    with pytest.raises(ScenarioError) as err:
        ccsim.Link(rate=steps, delay="10ms")
    assert err.value.field == "link." + field
    with pytest.raises(ScenarioTypeError):
        ccsim.Link(rate=[("10Mbps",)], delay="10ms")


def test_the_fluid_engine_refuses_what_it_cannot_represent():
    down = ccsim.dumbbell([(0, "10Mbps"), (1, 0), (2, "10Mbps")], "20ms", flows=["reno"],
                          duration="3s")
    with pytest.raises(ScenarioError, match="rates are all > 0"):
        ccsim.run(down, "fluid")
    ccsim.run(down, "packet")  # the packet engine holds packets while the link is down
    with pytest.raises(ScenarioError, match="jitter"):
        ccsim.run(ccsim.dumbbell("10Mbps", "20ms", flows=["reno"], jitter="5ms",
                                 duration="1s"), "fluid")
    with pytest.raises(ScenarioError, match="droptail"):
        ccsim.run(ccsim.dumbbell([(0, "10Mbps"), (1, "5Mbps")], "20ms", queue="codel",
                                 flows=["reno"], duration="2s"), "fluid")


# -- the jitter element -------------------------------------------------------------

def test_jitter_delays_each_packet_by_at_most_its_bound_and_keeps_order():
    link = ccsim.Link(rate="10Mbps", delay="5ms")
    plain = LinkState(link, 1500, (1, 2), 10, 0.1)
    jittered = LinkState(ccsim.Link(rate="10Mbps", delay="5ms", jitter="20ms"), 1500, (1, 2),
                         10, 0.1, jitter_seed=7)
    rng = random.Random(3)
    t, extra, last = 0.0, [], -1.0
    for _ in range(2000):
        t += rng.expovariate(900.0)  # about 1.1 Mbit/s of 1,500-byte packets... busy at times
        a, b = plain.forward(t), jittered.forward(t)
        assert b >= last  # no packet overtakes the one before
        last = b
        extra.append(b - a)
    extra = np.array(extra)
    assert extra.min() >= 0.0 and extra.max() <= 0.020 + 1e-12
    assert extra.mean() > 0.005  # the delay is there, not 0


@pytest.mark.slow
def test_jitter_starves_a_delay_based_flow():
    """Arun et al., "Starvation in End-to-End Congestion Control" (SIGCOMM
    2022): a delay-convergent algorithm maps the delay it measures to a rate,
    and its equilibria for different rates lie within a small range of delays,
    δ. When non-congestive delay variation on a flow's path exceeds about 2δ,
    the algorithm cannot tell it from queueing: two flows can converge to
    rates arbitrarily far apart, one of them starving.

    Two TCP Vegas flows share a 10 Mbit/s bottleneck (20 ms RTT); one path
    has a jitter element before it. Vegas holds α = 2 to β = 4 packets per
    flow in the queue, so its equilibrium queueing delays for two flows span
    about 4 packets' time (δ ≈ 5 ms at 10 Mbit/s). Without jitter the two
    share the link (the jittered path's share ≥ 0.35, averaged over start
    jitters); with 100 ms of jitter (≫ 2δ) that flow's mistaken delay
    signal collapses its share below 0.2."""
    def share(jitter: float, seed: int) -> float:
        links = [ccsim.Link(rate="100Mbps", delay="1ms", jitter=jitter),
                 {"rate": "10Mbps", "delay": "9ms", "buffer": 200}]
        flows = [ccsim.Flow("vegas", route=(0, 1)), ccsim.Flow("vegas", route=(1, 1), rtt=0.02)]
        sc = ccsim.path(links, flows=flows, duration="20s", bottleneck=1, seed=seed)
        g = ccsim.run(sc).summary.goodput_bps
        return g[0] / (g[0] + g[1])

    seeds = (0, 1, 2)
    assert np.mean([share(0.0, s) for s in seeds]) >= 0.35
    assert np.mean([share(0.1, s) for s in seeds]) < 0.2
    assert math.isfinite(share(0.1, 0))


# -- the generated cellular trace and its plot --------------------------------------

def test_the_cellular_trace_is_seeded_and_near_its_mean():
    a = ccsim.cellular_trace("30s", "10Mbps", seed=3)
    assert a == ccsim.cellular_trace("30s", "10Mbps", seed=3)
    assert a != ccsim.cellular_trace("30s", "10Mbps", seed=4)
    assert a.period == pytest.approx(30.0)
    # one trace's mean wanders with its excursions (log-sd 0.5, 1 s memory, 30 s):
    # within 30 % of the expected rate; a volatility of 0 is a Poisson link
    assert 7e6 < a.rate < 13e6
    flat = ccsim.cellular_trace("30s", "10Mbps", volatility=0.0, seed=3)
    assert flat.rate == pytest.approx(10e6, rel=0.02)  # Poisson: 25,000 draws, sd 0.6 %
    def per_second(trace):  # 1-s means: Poisson noise averaged out, the walk kept
        return np.array([trace.capacity(k, k + 1) for k in range(30)])
    assert per_second(a).std() > 3 * per_second(flat).std()  # it does wander
    with pytest.raises(ScenarioError, match="volatility"):
        ccsim.cellular_trace("1s", "10Mbps", volatility=-1)


def test_the_capacity_is_shaded_under_the_goodput(tmp_path):
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib.collections import PolyCollection

    from ccsim.plot import plot_capacity

    trace = ccsim.read_mahimahi(step_trace(tmp_path / "step.trace"))
    res = ccsim.run(ccsim.dumbbell(trace, "20ms", flows=["cubic"], duration="10s"))
    fig = plot_capacity(res, smooth="100ms")
    ax = fig.axes[0]
    areas = [c for c in ax.collections if isinstance(c, PolyCollection)]
    assert len(areas) == 1
    heights = areas[0].get_paths()[0].vertices[:, 1]
    assert heights.max() == pytest.approx(10.0, rel=0.02)  # Mbit/s, the first half
    assert np.isclose(heights[heights > 0], 2.0, rtol=0.02).any()  # and the second
    assert "link capacity" in [t.get_text() for leg in ax.artists + [ax.get_legend()]
                               if leg is not None for t in leg.get_texts()]
    fig.savefig(tmp_path / "capacity.png")


@pytest.mark.parametrize("queue, flows", [
    ("codel", ["cubic"]),                                        # a discipline's verdicts
    ("droptail", ["cubic", ccsim.Flow("reno", reverse=True)]),   # ACKs through the wire
])
def test_a_trace_link_serves_aqms_and_two_way_traffic_within_its_capacity(tmp_path, queue,
                                                                          flows):
    trace = ccsim.read_mahimahi(step_trace(tmp_path / "s.trace", ((8e6, 2000), (3e6, 2000))))
    sc = ccsim.dumbbell(trace, "20ms", queue=queue, flows=flows, duration="4s")
    res = ccsim.run(sc)
    forward = [i for i, f in enumerate(sc.flows) if not f.reverse]
    carried = res.summary.goodput_bps[forward].sum() * 4.0
    assert 0.5 * trace.capacity(0, 4) < carried <= trace.capacity(0, 4)
    assert res.metrics["utilisation"] <= 1.0


def test_replace_keeps_a_schedule_and_jitter():
    sc = ccsim.dumbbell([(0, "10Mbps"), (5, "2Mbps")], "20ms", flows=["reno"], jitter="2ms")
    moved = sc.replace(rtt="40ms")
    assert moved.links[0].schedule == sc.links[0].schedule
    assert moved.links[0].jitter == 0.002
    assert sc.replace(jitter=0).links[0].jitter == 0.0
    assert sc.replace(bandwidth="5Mbps").links[0].schedule is None


def test_a_scheduler_on_a_link_whose_rate_changes_is_refused_by_name():
    sc = ccsim.dumbbell([(0, "10Mbps"), (1, "5Mbps")], "20ms", queue="fq_codel",
                        flows=["reno"], duration="2s")
    with pytest.raises(ScenarioError, match="schedulers serve fixed-rate links"):
        ccsim.run(sc)


def test_a_fluid_batch_gives_a_scheduled_scenario_its_result_alone():
    steps = ccsim.dumbbell([(0, "10Mbps"), (2, "3Mbps")], "20ms", flows=["cubic"],
                           duration="4s")
    plain = ccsim.dumbbell("10Mbps", "30ms", flows=["reno", "cubic"], duration="4s")
    batch = ccsim.run_many([plain, steps], "fluid")
    for sc, res in zip([plain, steps], batch):
        alone = ccsim.run(sc, "fluid")
        assert res.summary.goodput_bps.tolist() == alone.summary.goodput_bps.tolist()
        assert res.traces["value"].equals(alone.traces["value"])


def test_the_fluid_view_of_a_trace_with_gaps_has_no_zero_rate():
    """Windows without an opportunity join the next: a trace that goes quiet
    (an outage of 450 ms) keeps its opportunities' bits and has no rate 0,
    so the fluid engine takes it; a low-rate cellular trace too."""
    ms = list(range(1, 51)) + list(range(500, 511))
    t = RateSchedule.mahimahi(ms)
    assert min(t.rates) > 0
    assert t.capacity(0, t.period) == pytest.approx(len(ms) * 1500 * 8)
    # the empty windows from 60 ms join the one at 500 ms (its 10 opportunities;
    # the 11th, at 510 ms, closes the period and opens the next)
    assert t.rate_at(0.2) == pytest.approx(10 * 1500 * 8 / (0.51 - 0.06))
    low = ccsim.cellular_trace("5s", "1Mbps", seed=2)
    sc = ccsim.dumbbell(low, "40ms", flows=["cubic"], duration="5s")
    assert 0 < ccsim.run(sc, "fluid").summary.goodput_bps[0] <= low.capacity(0, 5) / 5


def test_a_downstream_trace_link_gives_the_same_run_told_ahead_or_hop_by_hop():
    """The whole-chain shortcut tells a downstream link of each packet as it
    enters the first; a trace's wire must give the departures the
    hop-by-hop path (one event per hop, packets in time order) gives."""
    from ccsim.packet import PacketEngine

    links = [{"rate": "50Mbps", "delay": "2ms", "jitter": "1ms"},
             {"rate": ccsim.cellular_trace("3s", "8Mbps", seed=5), "delay": "8ms",
              "buffer": 30}]
    sc = ccsim.path(links, flows=["cubic", "reno"], duration="3s", bottleneck=1)
    ahead = PacketEngine(sc).run()
    hops = PacketEngine(sc, hop_by_hop=True).run()
    assert ahead.summary.goodput_bps.tolist() == hops.summary.goodput_bps.tolist()
    assert ahead.traces["value"].equals(hops.traces["value"])
