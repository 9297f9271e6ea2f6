"""Unresponsive UDP sources: ccsim.CBR and ccsim.OnOff."""

from __future__ import annotations

import pytest

import ccsim

PAYLOAD = 1460 / 1500  # payload share of a full packet on the wire


def test_cbr_beside_cubic_keeps_its_rate():
    """10 Mbit/s, 20 ms, 1 BDP: a 5 Mbit/s CBR source does not back off, so
    CUBIC gets at most the rest (5.3: the rest is 10 − 5·1500/1460 ≈ 4.9
    Mbit/s of wire, and CUBIC's own payload share of it is less), and the
    CBR source loses only a little to CUBIC's overshoots."""
    sc = ccsim.dumbbell("10Mbps", "20ms", "1BDP", flows=["cubic", ccsim.CBR("5Mbps")],
                        duration="30s", seed=1)
    s = ccsim.run(sc).summary
    assert list(s["algorithm"]) == ["cubic", "cbr"]
    assert s.loc[0, "goodput_bps"] <= 5.3e6
    assert s.loc[1, "goodput_bps"] >= 4.5e6
    assert s.loc[1, "retransmits"] == 0 and 0 < s.loc[1, "udp_loss"] < 0.1


def test_cbr_above_the_link_rate_fills_it_and_loses_the_rest():
    """15 Mbit/s offered to 10: what arrives is the link's payload capacity
    and the loss is the excess, 1 − 9.73 / 15 (within 1 %: the ramp of the
    first queue fill and the bins' edges)."""
    sc = ccsim.dumbbell("10Mbps", "20ms", "1BDP", flows=[ccsim.CBR("15Mbps")],
                        duration="10s", seed=1)
    s = ccsim.run(sc).summary
    capacity = 10e6 * PAYLOAD
    assert s.loc[0, "goodput_bps"] == pytest.approx(capacity, rel=0.01)
    assert s.loc[0, "udp_loss"] == pytest.approx(1 - capacity / 15e6, abs=0.01)


def test_cbr_alone_below_the_link_rate_loses_nothing():
    sc = ccsim.dumbbell("10Mbps", "20ms", "1BDP", flows=[ccsim.CBR("3Mbps")],
                        duration="10s", seed=1)
    s = ccsim.run(sc).summary
    assert s.loc[0, "udp_loss"] == 0.0
    # 0.5 %: the last packets still on the way at the end
    assert s.loc[0, "goodput_bps"] == pytest.approx(3e6, rel=0.005)


def test_on_off_sends_its_rate_for_its_on_share():
    """Exponential on/off periods of 0.5 s each, 8 Mbit/s when on, alone on
    a link that carries it: about half of 8 Mbit/s over 100 s. ±0.6 Mbit/s:
    about 100 cycles of exponential periods leave the on share a standard
    deviation near 0.035, four of them."""
    sc = ccsim.dumbbell("100Mbps", "20ms", "1BDP",
                        flows=[ccsim.OnOff("8Mbps", on="0.5s", off="0.5s")],
                        duration="100s", seed=2, trace_interval="1s")
    s = ccsim.run(sc).summary
    assert s.loc[0, "algorithm"] == "onoff"
    assert s.loc[0, "goodput_bps"] == pytest.approx(4e6, abs=0.6e6)


def test_pareto_on_off_is_seeded():
    def run(seed):
        sc = ccsim.dumbbell("100Mbps", "20ms", "1BDP", flows=[ccsim.OnOff(
            "8Mbps", on="0.2s", off="0.2s", dist="pareto", shape=1.5)],
            duration="10s", seed=seed, trace_interval="1s")
        return ccsim.run(sc).summary.loc[0, "goodput_bps"]
    assert run(1) == run(1) != run(2)


def test_sources_round_trip_and_leave_tcp_keys_alone():
    sc = ccsim.dumbbell("10Mbps", "20ms", flows=["cubic", ccsim.OnOff(
        "5Mbps", on=1, off=2, dist="pareto", shape=1.2)], duration="5s")
    assert ccsim.Scenario.from_toml(sc.to_toml()) == sc
    assert ccsim.Scenario.from_json(sc.to_json()).key == sc.key
    assert "source" not in sc.to_dict()["flows"][0]


@pytest.mark.parametrize("make, field", [
    (lambda: ccsim.CBR("-5Mbps"), "source.rate"),
    (lambda: ccsim.CBR(0), "source.rate"),
    (lambda: ccsim.OnOff("5Mbps", on=1, off=1, dist="normal"), "source.dist"),
    (lambda: ccsim.OnOff("5Mbps", on=1, off=1, dist="pareto", shape=1.0), "source.shape"),
    (lambda: ccsim.OnOff("5Mbps", on=0, off=1), "source.on"),
])
def test_bad_sources_are_refused_by_name(make, field):
    with pytest.raises(ccsim.ScenarioError) as err:
        make()
    assert err.value.field == field


def test_the_fluid_engine_refuses_a_source_by_name():
    sc = ccsim.dumbbell("10Mbps", "20ms", flows=["cubic", ccsim.CBR("5Mbps")], duration="5s")
    with pytest.raises(ccsim.ScenarioError) as err:
        ccsim.run(sc, mode="fluid")
    assert err.value.field.endswith("flows[1].source") and "mode='packet'" in str(err.value)
