"""Two-way traffic: flows sending right to left (``Flow(reverse=True)``), so
every flow's ACKs queue with the other direction's data."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import ccsim
from ccsim import Flow
from ccsim.packet import PacketEngine
from tests.test_golden import fingerprint

RATE, BUFFER = 10e6, 30  # bit/s; packets (under 1 BDP of 20 ms: losses come often)


def _dumbbell(flows, **kw):
    kw = {"duration": "20s", "seed": 1, **kw}
    return ccsim.dumbbell(RATE, "20ms", buffer=BUFFER, flows=flows, **kw)


def _ack_gaps(res, flow: int = 0) -> np.ndarray:
    """Inter-arrival times of flow ``flow``'s ACKs at its sender (s)."""
    ev = res.events
    return np.diff(ev[(ev["event"] == "acked") & (ev["flow"] == flow)]["time"].to_numpy())


@pytest.mark.slow
def test_ack_compression_appears_with_reverse_traffic():
    # One way, ACKs leave the receiver spaced by the bottleneck's packet time (data
    # departs it back to back at best) and nothing queues them on the way back, so
    # none arrives sooner after the previous one than that. Both ways, ACKs wait
    # behind the reverse flow's data and leave that queue back to back, 40 bytes
    # apart: compressed (Zhang, Shenker & Clark 1991). The 0.99 leaves room for the
    # rounding of departure times (relative 1e-16), nothing else: one way must have
    # no gap below it. Compression comes in episodes (when the reverse queue holds
    # data ahead of a train of ACKs), so a fifth of the gaps is asked, not most.
    # No ACK jitter: by up to a packet time at the receiver, it would bring ACKs
    # closer than that one way too.
    packet_time = 1500 * 8 / RATE
    ack_time = 40 * 8 / RATE
    one_way = _ack_gaps(ccsim.run(_dumbbell(["reno"], ack_jitter=0), events=True))
    two_way = _ack_gaps(ccsim.run(_dumbbell(["reno", Flow("reno", reverse=True)],
                                            ack_jitter=0), events=True))
    assert len(one_way) > 1000 and len(two_way) > 1000
    assert (one_way < 0.99 * packet_time).sum() == 0
    assert (two_way < 0.99 * packet_time).mean() > 0.2
    # compressed to the ACK's own serialisation, never below it (a FIFO link sends
    # no faster than its rate)
    assert two_way.min() == pytest.approx(ack_time, rel=1e-6)


def _mirror(scenario: ccsim.Scenario) -> ccsim.Scenario:
    """The same scenario seen from the other end: the chain in reverse order,
    every flow in the other direction (routes mirrored too)."""
    n = len(scenario.links)
    flows = [dataclasses.replace(f, reverse=not f.reverse,
                                 route=None if f.route is None
                                 else (n - 1 - f.route[1], n - 1 - f.route[0]))
             for f in scenario.flows]
    return dataclasses.replace(scenario, links=scenario.links[::-1], flows=tuple(flows),
                               bottleneck=n - 1 - scenario.bottleneck)


@pytest.mark.slow
@pytest.mark.parametrize("scenario", [
    _dumbbell(["cubic"], duration="10s"),
    ccsim.path([{"rate": "100Mbps", "delay": "2ms"},
                {"rate": "10Mbps", "delay": "8ms", "buffer": 20}],
               flows=["reno", Flow("reno", route=(1, 1), start="1s")], duration="10s"),
], ids=["dumbbell", "path-with-route"])
def test_a_mirrored_scenario_gives_the_same_results(scenario):
    # A reverse flow over the mirrored chain meets the same links in the same order as
    # the forward flow, and the ACKs of both meet the same (empty) other sides: bit for
    # bit, when ACKs take the queues in both runs. The one-way run takes the reverse
    # path as propagation alone (no 40-byte serialisation of ACKs), so it differs by
    # 32 microseconds per ACK hop and is not compared bit for bit. Drop-tail and no
    # random loss: the reverse sides draw from seeds of their own.
    forward = PacketEngine(scenario, two_way=True).run()
    mirrored = PacketEngine(_mirror(scenario)).run()
    assert mirrored.scenario.two_way
    columns = ["goodput_bps", "delivered_bytes", "retransmits", "timeouts", "mean_rtt"]
    assert forward.summary[columns].equals(mirrored.summary[columns])
    assert forward.metrics["utilisation"] == mirrored.metrics["reverse_utilisation"]
    for name in ("cwnd", "rtt", "goodput"):
        a = forward.traces[forward.traces["variable"] == name]["value"].to_numpy()
        b = mirrored.traces[mirrored.traces["variable"] == name]["value"].to_numpy()
        assert np.array_equal(a, b, equal_nan=True), name
    # and the one-way run is close: 40 bytes of serialisation per ACK hop add 32
    # microseconds to RTTs of 20 ms and more (under 0.2 %), which shifts the windows'
    # sawtooth a little; 2 % of goodput is ten times that. Without the jitters: with
    # them, 32 microseconds move every later random wait to another segment, and
    # the two runs are two draws of the scenario, not one run shifted a little. And an
    # ACK per segment: with delayed ACKs (the Linux stack's) 32 microseconds decide which
    # ACK a timer holds, and the path with a route moved by 3.8 %. Only the dumbbell:
    # on the path with a route the 20-packet buffer's drops then fall on other segments
    # (its flows' goodputs 4.47 and 5.27 Mbit/s one way, 3.55 and 6.20 mirrored, since
    # the Linux stack halves the window at a loss), two draws rather than one run shifted
    if any(f.route is not None for f in scenario.flows):
        return
    exact = {"start_jitter": 0, "ack_jitter": 0, "delayed_ack": False}
    one_way = ccsim.run(scenario.replace(**exact))
    mirrored = PacketEngine(_mirror(scenario.replace(**exact))).run()
    assert one_way.summary["goodput_bps"].to_numpy() == pytest.approx(
        mirrored.summary["goodput_bps"].to_numpy(), rel=0.02)


def test_a_one_way_run_is_unchanged_by_the_two_way_machinery():
    # Nothing of it runs one way: the golden results (tests/test_golden.py) guard
    # this bit for bit; here, that a one-way scenario is not taken as two-way.
    sc = _dumbbell(["reno", "reno"], duration="5s")
    engine = PacketEngine(sc)
    assert not engine.two_way and not engine.hop_by_hop and engine.reverse_queue is None
    assert "ack_drops" not in engine.run().metrics


@pytest.mark.slow
def test_reverse_traffic_lowers_the_forward_flows_utilisation():
    # Zhang, Shenker & Clark (1991): with traffic both ways, ACK compression makes the
    # forward flow's sending bursty and its losses come in clusters, and the link is
    # used less. The reverse flow's ACKs also take forward capacity, but only 40 bytes
    # per 1,540-byte data packet (2.6 % at most), so the fall asked for, 5 points of
    # utilisation, is more than ACK bytes alone can explain.
    one = ccsim.run(_dumbbell(["reno"], duration="60s"))
    two = ccsim.run(_dumbbell(["reno", Flow("reno", reverse=True)], duration="60s"))
    assert two.metrics["utilisation"] < one.metrics["utilisation"] - 0.05
    assert two.summary["goodput_bps"][0] < one.summary["goodput_bps"][0]


def test_acks_dropped_by_a_tiny_reverse_queue_are_survived():
    # Two packets of buffer each way: each flow's data fills the queue the other's
    # ACKs must cross, and some ACKs are dropped. (The flows' RTTs differ: with equal
    # ones, ACKs reach each queue in step with its departures and almost never find
    # it full — a phase effect, Floyd & Jacobson 1992.) Cumulative ACKs repair the
    # loss: the sized flow finishes and the bulk flow keeps delivering.
    sc = ccsim.dumbbell(RATE, "20ms", buffer=2, duration="20s", seed=3,
                        flows=[Flow("reno", rtt="30ms", size="2MB"),
                               Flow("reno", reverse=True)])
    res = ccsim.run(sc, events=True)
    ev = res.events
    ack_drops = ev[ev["event"] == "ack dropped"]
    assert res.metrics["ack_drops"] == len(ack_drops) > 0
    assert set(ack_drops["reason"]) == {"overflow"}
    assert set(ack_drops["link"]) == {0}
    assert set(ack_drops["flow"]) == {0, 1}  # both ways
    assert res.summary["fct"][0] > 0  # finished (NaN otherwise)
    # the bulk flow keeps a fair part of its side of the link (a stalled flow would
    # deliver next to nothing): a tenth, whatever the tiny buffer costs it
    assert res.summary["goodput_bps"][1] > 0.1 * RATE


def test_a_two_way_run_writes_the_senders_pcap_but_no_links(tmp_path):
    # the senders' view holds each flow's data as sent and its ACKs as they arrive,
    # whatever they met on the way; a capture at a link would need the ACKs'
    # passage there, which the events do not record
    sc = _dumbbell(["reno", Flow("reno", reverse=True)], duration="2s")
    res = ccsim.run(sc, events=True)
    ev = res.events
    sent = ev["event"].isin(["sent", "retransmitted", "acked"]).sum()
    assert res.to_pcap(tmp_path / "senders.pcap") == sent
    with pytest.raises(ccsim.ScenarioError, match="link.*both ways"):
        res.to_pcap(tmp_path / "link.pcap", link=0)
    # the data of the reverse flow is forwarded over the reverse side of link 0
    forwarded = ev[ev["event"] == "forwarded"]
    assert set(forwarded["flow"]) == {0, 1} and set(forwarded["link"]) == {0}


def test_reverse_is_validated_by_name():
    for bad in ("yes", 1, None):
        with pytest.raises(ccsim.ScenarioTypeError, match="flow.reverse"):
            Flow("reno", reverse=bad)


def test_a_two_way_scenario_cannot_be_run_one_way():
    sc = _dumbbell(["reno", Flow("reno", reverse=True)], duration="5s")
    with pytest.raises(ccsim.ScenarioError, match="two_way"):
        PacketEngine(sc, two_way=False)


def test_the_fluid_engine_refuses_reverse_flows():
    sc = _dumbbell(["reno", Flow("reno", reverse=True)], duration="5s")
    with pytest.raises(ccsim.ScenarioError, match=r"flows\[1\]\.reverse"):
        ccsim.run(sc, mode="fluid")


def test_reverse_round_trips_and_leaves_one_way_keys_alone():
    one_way = ccsim.dumbbell("10Mbps", "20ms", flows=["reno", "cubic"], duration="10s",
                             seed=1, access=None)
    assert not one_way.two_way
    assert all("reverse" not in f for f in one_way.to_dict()["flows"])
    # the key this scenario had before flows had a direction (and since the stack
    # profiles, which took the stack's knobs out of a default scenario's dict; its hosts
    # without NICs, as they were then)
    assert one_way.key == "4577251d3fadaeff"
    two_way = one_way.replace(flows=["reno", Flow("cubic", reverse=True, route=(0, 0))])
    assert two_way.two_way and two_way.flows[1].reverse
    assert ccsim.Scenario.from_json(two_way.to_json()) == two_way
    assert ccsim.Scenario.from_toml(two_way.to_toml()) == two_way
    assert two_way.key != one_way.key
    assert "reverse" not in two_way.to_dict()["flows"][0]
    # plots' legends and sweep tables tell the directions apart
    assert [f.label for f in two_way.flows] == ["reno", "cubic (reverse)"]


def test_two_way_runs_are_deterministic():
    sc = _dumbbell(["cubic", Flow("reno", reverse=True, start="0.5s")], duration="5s",
                   queue="red", loss=0.001)
    assert fingerprint(ccsim.run(sc)) == fingerprint(ccsim.run(sc))


@pytest.mark.slow
def test_reverse_cross_flows_cross_only_their_own_links_reverse_side():
    # The parking lot with its cross flows reversed: each one's data is dropped only
    # at its own link (the event trace names it). The long flow no longer shares its
    # data's queues with them, so it gets more than in the one-way parking lot; but
    # its ACKs queue behind their data, so it gets less than alone on the chain.
    kw = {"bandwidth": "10Mbps", "rtt": "20ms", "buffer": 20, "duration": "20s"}
    two = ccsim.run(ccsim.parking_lot(2, cross=Flow("reno", reverse=True), **kw),
                    events=True)
    one = ccsim.run(ccsim.parking_lot(2, **kw))
    alone = ccsim.run(ccsim.parking_lot(2, **kw).replace(flows=["reno"]))
    assert list(two.summary["base_rtt"]) == pytest.approx([0.04, 0.02, 0.02])
    ev = two.events
    dropped = ev[(ev["event"] == "dropped") & (ev["flow"] > 0)]
    assert len(dropped) > 0 and (dropped["link"] == dropped["flow"] - 1).all()
    long = two.summary["goodput_bps"][0]
    assert one.summary["goodput_bps"][0] < long < alone.summary["goodput_bps"][0]


def test_a_reverse_flows_rows_name_the_links_right_to_left():
    # over a chain of two, a reverse flow's segment is forwarded by link 1 first,
    # then link 0, and its drops are at the slow link 1, the one it enters first
    sc = ccsim.path([{"rate": "100Mbps", "delay": "2ms"},
                     {"rate": "10Mbps", "delay": "8ms", "buffer": 10}],
                    flows=[Flow("reno", reverse=True)], duration="3s")
    assert sc.bottleneck == 1
    ev = ccsim.run(sc, events=True).events
    forwarded = ev[(ev["event"] == "forwarded") & (ev["seq"] == 0)]
    assert list(forwarded["link"]) == [1, 0]
    assert set(ev[ev["event"] == "dropped"]["link"]) == {1}


def test_the_reverse_sides_queue_is_traced_and_plotted():
    # A lone reverse flow fills the bottleneck's reverse side, while its forward
    # side holds only that flow's ACKs, 40 bytes each against 1500: they leave
    # faster than the data that clocks them arrives, so barely one waits at a time.
    res = ccsim.run(_dumbbell([Flow("reno", reverse=True)]))
    back, forward = res.series("reverse_queue")["reverse_queue"], res.series("queue")["queue"]
    assert len(back) == len(forward) and back.max() >= BUFFER - 1
    assert forward.max() <= 1
    ax = res.plot(panels=["queue"]).axes[0]
    assert {"queue, forward side", "reverse side"} <= {line.get_label() for line in ax.lines}
    one_way = ccsim.run(_dumbbell(["reno"], duration="2s"))
    with pytest.raises(ccsim.ScenarioError, match="reverse_queue"):
        one_way.series("reverse_queue")
    assert "queue" in {line.get_label() for line in one_way.plot(panels=["queue"]).axes[0].lines}


def test_shares_and_fairness_are_taken_within_a_direction():
    # Each direction has its own side of the link, so a flow's share is of its
    # direction's goodput, and Jain's index and UF compare flows going one way:
    # two forward Reno flows split the forward side, the lone reverse flow has
    # all of its own side. Each flow opens at its start exactly (start_jitter=0), so
    # that the interval all flows share is each one's own.
    res = ccsim.run(_dumbbell(["reno", Flow("reno", rtt="40ms"), Flow("cubic", reverse=True)],
                              start_jitter=0))
    share = res.summary["share"]
    assert share[0] + share[1] == pytest.approx(1.0) and share[2] == 1.0
    assert share[0] > share[1]  # the shorter RTT
    goodput = res.summary["goodput_bps"]
    forward = goodput[[0, 1]].to_numpy()
    # every flow runs the whole 20 s, so the interval Jain's index is taken over is
    # each flow's own: equal up to float rounding
    assert res.metrics["jain"] == pytest.approx(forward.sum() ** 2 / (2 * (forward ** 2).sum()),
                                                rel=1e-9)
    assert res.metrics["reverse_jain"] == 1.0 and "reverse_uf" not in res.metrics
    assert "uf" in res.metrics  # two RTTs forward
    assert "reverse_jain" not in ccsim.run(_dumbbell(["reno"], duration="2s")).metrics
