"""Tests for ccsim.scenario: validation, unit resolution, round trips, stable key, immutability."""

import dataclasses
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ccsim
from ccsim import RED, DropTail, Flow, Link, Scenario, dumbbell, path
from ccsim.errors import (CcsimError, ScenarioError, ScenarioTypeError, UnitError,
                          UnknownAlgorithmError)

# Packet on the wire with the default stack: RFC 879/894 MSS of 1460 bytes + 40 bytes of
# IPv4 and TCP headers = a 1500-byte Ethernet MTU.
MSS, HEADER = 1460, 40
PACKET = MSS + HEADER

# RED defaults: Floyd & Jacobson, "Random Early Detection Gateways for Congestion
# Avoidance", IEEE/ACM ToN 1(4), 1993, §6 (the simulations of Fig. 5):
# min_th = 5 packets, max_th = 15 packets, w_q = 0.002, max_p = 1/50.
RED_MIN_TH = 5
RED_MAX_TH = 15
RED_W_Q = 0.002
RED_MAX_P = 1 / 50


# -- validation ------------------------------------------------------------------------
def _five_link_path(**kw):
    """Kwon et al.'s shape: host - R1 - R2 - R3 - R4 - host, the bottleneck at R1, i.e. the
    second of five links is the slowest."""
    links = [
        {"rate": "1Gbps", "delay": "1ms"},
        {"rate": "10Mbps", "delay": "10ms", "buffer": 5, "loss": 0.02},
        {"rate": "1Gbps", "delay": "1ms"},
        {"rate": "1Gbps", "delay": "1ms", "queue": "red", "buffer": 100},
        {"rate": "1Gbps", "delay": "1ms"},
    ]
    return path(links, **{"flows": ["reno", Flow("newreno", start="1s")],
                          "duration": "10s", "seed": 2, **kw})


NAN = float("nan")

# (builder, exception class, a substring of .field, the value the error must name —
# as given, or in base units when the library had already converted it).
BAD = [
    pytest.param(lambda: dumbbell(0, "20ms"), ScenarioError, "bandwidth", (0,),
                 id="bandwidth-zero"),
    pytest.param(lambda: dumbbell("-10Mbps", "20ms"), ScenarioError, "bandwidth",
                 ("-10Mbps", -1e7), id="bandwidth-negative"),
    pytest.param(lambda: dumbbell(NAN, "20ms"), ScenarioError, "bandwidth", (NAN,),
                 id="bandwidth-nan"),
    pytest.param(lambda: dumbbell("10Mbps", 0), ScenarioError, "rtt", (0,), id="rtt-zero"),
    pytest.param(lambda: dumbbell("10Mbps", "-20ms"), ScenarioError, "rtt", ("-20ms", -0.02),
                 id="rtt-negative"),
    pytest.param(lambda: dumbbell("10Mbps", NAN), ScenarioError, "rtt", (NAN,), id="rtt-nan"),
    pytest.param(lambda: Link("10Mbps", "-1ms"), ScenarioError, "delay", ("-1ms", -0.001),
                 id="link-delay-negative"),
    pytest.param(lambda: path([{"rate": "10Mbps", "delay": -0.001}]), ScenarioError, "delay",
                 (-0.001,), id="path-link-delay-negative"),
    pytest.param(lambda: dumbbell("10Mbps", "20ms", loss=NAN), ScenarioError, "loss", (NAN,),
                 id="loss-nan"),
    pytest.param(lambda: dumbbell("10Mbps", "20ms", loss=1.0), ScenarioError, "loss", (1.0,),
                 id="loss-one"),
    pytest.param(lambda: dumbbell("10Mbps", "20ms", loss=-0.1), ScenarioError, "loss", (-0.1,),
                 id="loss-negative"),
    pytest.param(lambda: dumbbell("10Mbps", "20ms", loss=1.5), ScenarioError, "loss", (1.5,),
                 id="loss-above-one"),
    pytest.param(lambda: Link("10Mbps", "1ms", loss=1.0), ScenarioError, "loss", (1.0,),
                 id="link-loss-one"),
    pytest.param(lambda: dumbbell("10Mbps", "20ms", buffer=0), ScenarioError, "buffer", (0,),
                 id="buffer-zero"),
    # 100 kbit/s x 20 ms = 2000 bits = 1/6 of a 1500-byte packet; 1% of that rounds to 0.
    pytest.param(lambda: dumbbell("100kbps", "20ms", buffer="0.01BDP"), ScenarioError, "buffer",
                 ("0.01BDP",), id="buffer-bdp-below-one-packet"),
    pytest.param(lambda: dumbbell("10Mbps", "20ms", buffer="100B"), ScenarioError, "buffer",
                 ("100B",), id="buffer-bytes-below-one-packet"),
    pytest.param(lambda: dumbbell("10Mbps", "10 parsecs"), UnitError, "rtt", ("10 parsecs",),
                 id="unit-parsecs"),
    pytest.param(lambda: dumbbell("fast", "20ms"), UnitError, "bandwidth", ("fast",),
                 id="unit-fast"),
    pytest.param(lambda: dumbbell("10Mbps", "20ms", flows=["renoo"]), UnknownAlgorithmError,
                 "algorithm", ("renoo",), id="algorithm-unknown"),
    pytest.param(lambda: Flow("reno", recovery="nosuchrecovery"), UnknownAlgorithmError,
                 "recovery", ("nosuchrecovery",), id="recovery-unknown"),
    pytest.param(lambda: dumbbell("10Mbps", "20ms", flows=[Flow("reno", start="60s")],
                                  duration="60s"),
                 ScenarioError, "start", ("60s", 60.0), id="start-at-end"),
    pytest.param(lambda: dumbbell("10Mbps", "20ms", flows=[Flow("reno", start=61)],
                                  duration=60),
                 ScenarioError, "start", (61,), id="start-after-end"),
    pytest.param(lambda: Flow("reno", start=5, stop=5), ScenarioError, "stop", (5,),
                 id="stop-equals-start"),
    pytest.param(lambda: Flow("reno", start=5, stop=3), ScenarioError, "stop", (3,),
                 id="stop-before-start"),
    pytest.param(lambda: Flow("reno", size=0), ScenarioError, "size", (0,), id="size-zero"),
    pytest.param(lambda: Flow("reno", size="-1MB"), ScenarioError, "size", ("-1MB", -1e6),
                 id="size-negative"),
    pytest.param(lambda: path([{"rate": "10Mbps", "delay": "10ms"}],
                              flows=[Flow("reno", rtt="5ms")]),
                 ScenarioError, "rtt", ("5ms", 0.005), id="flow-rtt-below-path"),
    pytest.param(lambda: dumbbell("10Mbps", "20ms", msss=1000), ScenarioTypeError, "msss",
                 (1000,), id="unknown-knob"),
    pytest.param(lambda: Flow("reno", params={"beta": 0.5}), ScenarioTypeError, "params.beta",
                 (0.5,), id="params-reno-takes-none"),
    pytest.param(lambda: dumbbell("10Mbps", "20ms", flows="reno"), ScenarioTypeError, "flows",
                 ("reno",), id="flows-bare-string"),
    # -1 is an integer of the wrong value (ValueError); 1.5 and "1" are the wrong type.
    pytest.param(lambda: dumbbell("10Mbps", "20ms", seed=-1), ScenarioError, "seed", (-1,),
                 id="seed-negative"),
    pytest.param(lambda: dumbbell("10Mbps", "20ms", seed=1.5), ScenarioTypeError, "seed", (1.5,),
                 id="seed-float"),
    pytest.param(lambda: dumbbell("10Mbps", "20ms", seed="1"), ScenarioTypeError, "seed", ("1",),
                 id="seed-string"),
    pytest.param(lambda: dumbbell("10Mbps", "20ms", delayed_ack="yes"), ScenarioTypeError,
                 "delayed_ack", ("yes",), id="delayed-ack-string"),
    pytest.param(lambda: dumbbell("10Mbps", "20ms", queue=DropTail(10), buffer=10),
                 ScenarioError, "buffer", (10,), id="queue-object-and-buffer"),
    pytest.param(lambda: RED(100, min_th=10, max_th=10), ScenarioError, "max_th", (10,),
                 id="red-max-th-equal"),
    pytest.param(lambda: RED(100, min_th=10, max_th=5), ScenarioError, "max_th", (5,),
                 id="red-max-th-below"),
    pytest.param(lambda: dumbbell("10Mbps", "20ms", duration="10s", trace_interval="11s"),
                 ScenarioError, "trace_interval", ("11s", 11.0), id="trace-interval-too-long"),
    pytest.param(lambda: dumbbell("10Mbps", "20ms", rwnd=MSS - 1), ScenarioError, "rwnd",
                 (MSS - 1,), id="rwnd-below-one-segment"),
    pytest.param(lambda: dumbbell("10Mbps", "20ms", rwnd="1KB"), ScenarioError, "rwnd",
                 ("1KB", 1000.0), id="rwnd-string-below-one-segment"),
]


def _same(a, b):
    """Equal values, NaN equal to NaN (the NaN cases must name the NaN)."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b


@pytest.mark.parametrize("build, cls, field, values", BAD)
def test_bad_input_raises_naming_field_and_value(build, cls, field, values):
    with pytest.raises(cls) as info:
        build()
    err = info.value
    assert isinstance(err, CcsimError)
    # The contract: ValueError for bad values, TypeError for bad types.
    assert isinstance(err, ValueError) == issubclass(cls, ScenarioError)
    assert isinstance(err, TypeError) == issubclass(cls, ScenarioTypeError)
    assert field in err.field
    assert any(_same(err.value, v) for v in values), (err.value, values)
    message = str(err)
    assert err.field in message and repr(err.value) in message
    assert err.allowed and err.allowed in message


def test_unknown_algorithm_suggests_closest():
    with pytest.raises(UnknownAlgorithmError) as info:
        dumbbell("10Mbps", "20ms", flows=["renoo"])
    assert info.value.suggestion == "reno"
    assert "'reno'" in str(info.value)
    assert set(info.value.known) >= {"reno", "newreno", "tahoe"}


def test_default_trace_interval_does_not_reject_a_short_duration():
    # A user who did not set trace_interval must not get an error about it for a
    # valid, short duration: the automatic period is at most duration / 100.
    sc = dumbbell("10Mbps", "1ms", duration="5ms")
    assert sc.trace_interval is None
    assert sc.sample_interval == pytest.approx(0.005 / 100)


# -- units resolved ------------------------------------------------------------------------
@pytest.mark.parametrize("bandwidth, rtt, buffer, bps, seconds, multiple", [
    ("10Mbps", "20ms", "1BDP", 10e6, 0.02, 1),
    ("100Mbps", "20ms", "1BDP", 100e6, 0.02, 1),
    ("1Gbps", "100ms", "0.5BDP", 1e9, 0.1, 0.5),
    ("5Mbps", "60ms", "2 bdp", 5e6, 0.06, 2),
])
def test_buffer_bdp_resolved_to_packets(bandwidth, rtt, buffer, bps, seconds, multiple):
    q = dumbbell(bandwidth, rtt, buffer=buffer).links[0].queue
    # BDP = rate x RTT in bits / bits per 1500-byte packet (payload + headers on the wire).
    expected = round(multiple * bps * seconds / (8 * PACKET))
    assert isinstance(q, DropTail)
    assert (q.limit, q.unit) == (expected, "packets")
    assert q.packets(PACKET) == expected


def test_buffer_bdp_uses_the_packet_size_knobs():
    q = dumbbell("100Mbps", "20ms", buffer="1BDP", mss=1000, header=52).links[0].queue
    assert q.limit == round(100e6 * 0.02 / (8 * (1000 + 52)))


def test_default_buffer_is_one_bdp():
    assert dumbbell("10Mbps", "20ms").links[0].queue == dumbbell(
        "10Mbps", "20ms", buffer="1BDP").links[0].queue


def test_buffer_in_packets_and_bytes():
    q = dumbbell("10Mbps", "20ms", buffer=50).links[0].queue
    assert isinstance(q, DropTail) and (q.limit, q.unit) == (50, "packets")
    q = dumbbell("10Mbps", "20ms", buffer="64KB").links[0].queue
    # "KB" is decimal kilo in networking practice: 64 x 1000 bytes.
    assert isinstance(q, DropTail) and (q.limit, q.unit) == (64 * 1000, "bytes")
    assert q.packets(PACKET) == (64 * 1000) // PACKET


def test_red_paper_defaults():
    q = dumbbell("10Mbps", "20ms", queue="red").links[0].queue
    assert isinstance(q, RED)
    assert q.min_th == RED_MIN_TH and q.max_th == RED_MAX_TH
    assert q.weight == RED_W_Q and q.max_p == RED_MAX_P
    assert q.gentle is False
    assert q.limit == round(10e6 * 0.02 / (8 * PACKET))


def test_units_in_base_units():
    sc = dumbbell("10Mbps", "20ms", loss=0.01, duration="2min", min_rto="300ms")
    assert sc.links[0].rate == 10 * 10**6
    assert sc.duration == 2 * 60
    assert sc.min_rto == 300 / 1000
    assert sc.links[0].loss == 0.01


# -- per-flow RTT ----------------------------------------------------------------------------
def test_per_flow_rtt_in_dumbbell():
    sc = dumbbell("10Mbps", "100ms", flows=[Flow("reno", rtt="20ms"), Flow("reno", rtt="100ms")])
    # Bottleneck one-way delay is half the smallest flow RTT.
    assert sc.links[0].delay == pytest.approx(0.020 / 2, rel=1e-15)  # ms -> s scaling: 1 ulp
    assert sc.flow_rtt(0) == pytest.approx(0.020, rel=1e-15)
    assert sc.flow_rtt(1) == pytest.approx(0.1, rel=1e-15)


def test_flows_without_rtt_take_dumbbell_rtt():
    sc = dumbbell("10Mbps", "50ms", flows=[Flow("reno", rtt="20ms"), "reno"])
    assert sc.links[0].delay == pytest.approx(0.010, rel=1e-15)  # ms -> s scaling: 1 ulp
    assert sc.flow_rtt(1) == pytest.approx(0.050, rel=1e-15)
    plain = dumbbell("10Mbps", "50ms", flows=["reno", "reno"])
    assert plain.links[0].delay == pytest.approx(0.025, rel=1e-15)
    assert [plain.flow_rtt(i) for i in range(2)] == pytest.approx([0.05, 0.05], rel=1e-15)


def test_path_bottleneck_is_slowest_link():
    sc = _five_link_path()
    assert len(sc.links) == 5 and sc.bottleneck == 1
    assert sc.path_rtt == pytest.approx(2 * (0.001 * 4 + 0.010), rel=1e-12)  # sum of 5 floats
    assert sc.links[1].queue == DropTail(5) and sc.links[1].loss == 0.02
    assert isinstance(sc.links[3].queue, RED) and sc.links[3].queue.limit == 100


# -- round trips -------------------------------------------------------------------------------
def _rich_dumbbell():
    return dumbbell(
        "10Mbps", "20ms", buffer=30, queue="red", loss=0.01, duration="30s", seed=7,
        flows=[Flow("reno", start="1s", stop="20s", rtt="40ms", recovery="newreno"),
               Flow("newreno", start="2s", size="1MB"),
               Flow("tahoe", rtt="20ms")],
        mss=1000, delayed_ack=True, sack=True, rwnd="64KB", trace_interval="50ms")


ROUND_TRIP = [
    pytest.param(_rich_dumbbell, id="dumbbell-red"),
    pytest.param(_five_link_path, id="path-five-links"),
]


@pytest.mark.parametrize("build", ROUND_TRIP)
def test_round_trips(build):
    sc = build()
    copies = {
        "dict": Scenario.from_dict(sc.to_dict()),
        "json": Scenario.from_json(sc.to_json()),
        "toml": Scenario.from_toml(sc.to_toml()),
    }
    for how, copy in copies.items():
        assert copy == sc, how
        assert copy.key == sc.key, how
        assert copy.to_dict() == sc.to_dict(), how


def test_round_trip_preserves_set_fields():
    sc = Scenario.from_toml(_rich_dumbbell().to_toml())
    assert isinstance(sc.links[0].queue, RED)
    f0, f1 = sc.flows[0], sc.flows[1]
    # "40ms" is scaled ms -> s by one float multiplication: within 1 ulp of 0.04.
    assert (f0.start, f0.stop, f0.recovery) == (1.0, 20.0, "newreno")
    assert f0.rtt == pytest.approx(0.04, rel=1e-15)
    assert f1.size == 10**6 and f1.stop is None
    assert (sc.mss, sc.delayed_ack, sc.sack, sc.rwnd) == (1000, True, True, 64 * 1000)


@settings(max_examples=60, deadline=None)
@given(
    bandwidth=st.floats(1e5, 1e10),
    rtt=st.floats(1e-4, 1.0),
    loss=st.floats(0.0, 0.5),
    buffer=st.integers(1, 10_000),
    queue=st.sampled_from(["droptail", "red"]),
    duration=st.floats(0.1, 1000.0),
    seed=st.integers(0, 2**32),
    data=st.data(),
)
def test_random_dumbbells_round_trip(bandwidth, rtt, loss, buffer, queue, duration, seed, data):
    n = data.draw(st.integers(1, 4))
    flows = [Flow(data.draw(st.sampled_from(["reno", "newreno", "tahoe"])),
                  start=data.draw(st.floats(0.0, duration, exclude_max=True)))
             for _ in range(n)]
    sc = dumbbell(bandwidth, rtt, buffer=buffer, queue=queue, loss=loss, flows=flows,
                  duration=duration, seed=seed)
    for copy in (Scenario.from_json(sc.to_json()), Scenario.from_toml(sc.to_toml())):
        assert copy == sc
        assert copy.key == sc.key


# -- stable hash -----------------------------------------------------------------------------
_BUILD = ('ccsim.dumbbell("10Mbps", "20ms", buffer=20, queue="red", loss=0.01, seed=3, '
          'flows=["reno", ccsim.Flow("newreno", start="5s", rtt="40ms")], duration="30s")')


@pytest.mark.slow
def test_key_stable_across_processes():
    sc = eval(_BUILD, {"ccsim": ccsim})
    root = Path(ccsim.__file__).resolve().parent.parent
    env = {**os.environ, "PYTHONPATH": str(root), "PYTHONHASHSEED": "12345"}
    out = subprocess.run([sys.executable, "-c", f"import ccsim; print({_BUILD}.key)"],
                         env=env, capture_output=True, text=True, check=True, cwd=root)
    assert out.stdout.strip() == sc.key
    assert len(sc.key) == 16 and int(sc.key, 16) >= 0


def test_key_changes_with_any_field():
    def build(**kw):
        args = {"bandwidth": "10Mbps", "rtt": "20ms", "buffer": 20, "seed": 1,
                "duration": "30s", "flows": ["reno", Flow("reno", start="1s")], **kw}
        return dumbbell(**args)

    base = build()
    variants = {
        "seed": build(seed=2),
        "duration": build(duration="31s"),
        "knob-mss": build(mss=1000),
        "knob-initial_window": build(initial_window=4),
        "knob-delayed_ack": build(delayed_ack=True),
        "flow-start": build(flows=["reno", Flow("reno", start="2s")]),
        "flow-algorithm": build(flows=["reno", Flow("newreno", start="1s")]),
        "buffer": build(buffer=21),
        "queue": build(queue="red"),
        "loss": build(loss=0.001),
        "bandwidth": build(bandwidth="11Mbps"),
    }
    assert build().key == base.key
    for what, sc in variants.items():
        assert sc != base, what
        assert sc.key != base.key, what
    assert len({sc.key for sc in variants.values()}) == len(variants)


# -- immutability ------------------------------------------------------------------------------
def test_frozen():
    sc = _rich_dumbbell()
    with pytest.raises(dataclasses.FrozenInstanceError):
        sc.seed = 2
    with pytest.raises(dataclasses.FrozenInstanceError):
        sc.flows[0].start = 3.0
    with pytest.raises(dataclasses.FrozenInstanceError):
        sc.links[0].rate = 1.0
    with pytest.raises(dataclasses.FrozenInstanceError):
        sc.links[0].queue.limit = 1
    assert isinstance(sc.links, tuple) and isinstance(sc.flows, tuple)


def test_replace_validates():
    sc = _rich_dumbbell()
    other = sc.replace(seed=2)
    assert other.seed == 2 and sc.seed == 7
    assert dataclasses.replace(other, seed=7) == sc
    with pytest.raises(ScenarioError) as info:
        sc.replace(duration=-1)
    assert info.value.field == "duration"
    with pytest.raises(ScenarioError) as info:
        sc.replace(seed=-1)
    assert info.value.field == "seed"


def test_replace_duration_matches_building_with_it():
    # The automatic sampling period is max(0.01, duration / 10_000) (at most
    # duration / 100); a scenario that never set it should, after
    # replace(duration=...), be the one built with that duration, not keep the old
    # duration's period.
    sc = dumbbell("10Mbps", "20ms", duration="60s")
    assert sc.replace(duration=2000) == dumbbell("10Mbps", "20ms", duration=2000)
    assert sc.replace(duration=2000).sample_interval == max(0.01, 2000 / 10_000)
    assert sc.sample_interval == 0.01


# -- traces too large to assemble are refused before the run -------------------------------------
def test_a_trace_interval_that_would_need_gigabytes_is_refused_with_the_figure_and_the_fix():
    # 1 µs over 60 s: 60 million samples of 5 rows (4 per flow, 1 queue) = 300 million rows.
    # Before, the run died with a raw MemoryError allocating the first 458 MiB array.
    with pytest.raises(ScenarioError) as err:
        ccsim.dumbbell("10Mbps", "20ms", flows=["reno"], duration="60s", trace_interval="1us")
    message = str(err.value)
    assert err.value.field == "trace_interval"
    assert "300,000,000 rows" in message and "GiB" in message
    # the fix it names must itself be accepted: 20 million rows / 5 per sample over 60 s = 15 µs
    assert "trace_interval ≥ 1.5e-05 s" in message
    ccsim.dumbbell("10Mbps", "20ms", flows=["reno"], duration="60s", trace_interval=1.5e-5)


def test_a_fine_but_affordable_trace_interval_is_accepted():
    sc = ccsim.dumbbell("10Mbps", "20ms", flows=["reno", "cubic"], duration="60s",
                        trace_interval="1ms")  # 60,000 samples x 9 rows
    assert sc.trace_interval == 0.001


def test_a_knob_added_later_leaves_keys_of_scenarios_without_it_alone():
    # tail_loss_probe joined the scenario after stored sweeps existed: written only
    # when on, so a scenario that does not use it keeps the key it had before.
    sc = ccsim.dumbbell("10Mbps", "20ms", flows=["reno", "cubic"], duration="5s", seed=3)
    assert "tail_loss_probe" not in sc.to_dict()
    on = sc.replace(tail_loss_probe=True)
    assert on.to_dict()["tail_loss_probe"] is True and on.key != sc.key
    assert ccsim.Scenario.from_dict(on.to_dict()) == on
    assert ccsim.Scenario.from_dict(sc.to_dict()) == sc
