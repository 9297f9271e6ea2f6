"""Inputs that used to run into a raw Python error or a silent surprise now
get an error naming the field, the value and what is allowed."""

from __future__ import annotations

import pytest

import ccsim
from ccsim import Flow, Scenario, algorithms
from ccsim.algorithms.reno import Reno
from ccsim.errors import ScenarioError, ScenarioTypeError, UnitError


def test_mss_as_a_size_string_is_read_as_bytes():
    # Before: "can only concatenate str (not 'int') to str" from the packet-size sum.
    assert ccsim.dumbbell("10Mbps", "20ms", mss="1460B").mss == 1460
    assert ccsim.dumbbell("10Mbps", "20ms", mss="1.5kB").packet_size == 1540


def test_mss_that_is_not_a_size_names_the_field():
    with pytest.raises(UnitError, match="^mss='fat'"):
        ccsim.dumbbell("10Mbps", "20ms", mss="fat")
    with pytest.raises(ScenarioError, match="whole number of bytes"):
        ccsim.dumbbell("10Mbps", "20ms", mss="1460.5B")


def test_from_dict_names_an_unknown_key_and_suggests_the_near_one():
    data = ccsim.dumbbell("10Mbps", "20ms").to_dict()
    with pytest.raises(ScenarioTypeError, match="did you mean 'duration'") as err:
        Scenario.from_dict({**data, "durration": 5})
    assert err.value.field == "scenario.durration"
    # a builder keyword is not a stored field: say how to set it instead
    with pytest.raises(ScenarioTypeError, match="Scenario.replace") as err:
        Scenario.from_dict({**data, "bandwidth": 5e6})
    assert err.value.field == "scenario.bandwidth"
    flows = [{**data["flows"][0], "algorithim": "reno"}]
    with pytest.raises(ScenarioTypeError, match="did you mean 'algorithm'") as err:
        Scenario.from_dict({**data, "flows": flows})
    assert err.value.field == "flows[0].algorithim"


def test_algorithm_and_recovery_names_are_case_insensitive_and_stored_canonical():
    flow = Flow("Reno", recovery="PRR")
    assert (flow.algorithm, flow.recovery) == ("reno", "prr")
    sc = ccsim.dumbbell("10Mbps", "20ms", flows=["CUBIC", "Vegas"])
    assert sc == ccsim.dumbbell("10Mbps", "20ms", flows=["cubic", "vegas"])  # same key


def test_a_misspelt_capitalised_name_suggests_the_right_one():
    with pytest.raises(ScenarioError, match="did you mean 'cubic'"):
        Flow("Cubicc")


def test_a_user_class_may_not_silently_take_a_built_in_name(scratch_registry):
    class MyCubic(Reno):
        name = "cubic"
    with pytest.raises(ScenarioError, match="replace=True") as err:
        algorithms.register(MyCubic)
    assert err.value.field == "MyCubic.name"
    assert algorithms.get("cubic").__module__ == "ccsim.algorithms.cubic"
    algorithms.register(MyCubic, replace=True)  # on purpose
    assert algorithms.get("cubic") is MyCubic


def test_a_user_class_may_be_registered_again_under_its_own_name(scratch_registry):
    # a notebook cell re-run defines a new class object with the same name
    for _ in range(2):
        class Mine(Reno):
            name = "mine"
        algorithms.register(Mine)
        assert algorithms.get("mine") is Mine


@pytest.mark.parametrize("rate", [1e-300, 999.0, "0.5kbps"])
def test_a_rate_too_slow_to_serialise_a_packet_in_the_clock_is_refused(rate):
    with pytest.raises(ScenarioError, match="rate ≥ 1000 bit/s") as err:
        ccsim.dumbbell(rate, "20ms")
    assert err.value.field == "bandwidth"
    with pytest.raises(ScenarioError, match="rate ≥ 1000 bit/s"):
        ccsim.Link(rate=rate, delay=0.01)


def test_red_thresholds_that_the_buffer_cannot_reach_warn_that_red_never_acts():
    # RED's average queue never exceeds the physical buffer: with min_th at or above it the
    # run is drop-tail in all but name.
    with pytest.warns(UserWarning, match=r"queue\.min_th=5\.0 is not below the buffer limit=4"):
        ccsim.dumbbell("10Mbps", "20ms", queue="red", buffer=4)
    with pytest.warns(UserWarning, match="RED never drops early"):
        ccsim.RED(limit=10, min_th=12, max_th=20)


def test_red_thresholds_within_the_buffer_do_not_warn(recwarn):
    ccsim.dumbbell("10Mbps", "20ms", queue="red", buffer=30)
    assert not [w for w in recwarn if "min_th" in str(w.message)]


def test_a_preset_with_another_recovery_is_refused_naming_both():
    # "sack" means Reno's window law with SACK recovery: asking it for NewReno's
    # recovery names two recoveries; the error names both and the way to say it.
    with pytest.raises(ccsim.ScenarioError) as err:
        ccsim.Flow("sack", recovery="newreno")
    text = str(err.value)
    assert "'sack'" in text and "'newreno'" in text and "Flow('reno', recovery='newreno')" in text
    assert ccsim.Flow("sack", recovery="sack").recovery_name == "sack"  # the same: fine
    assert ccsim.Flow("ssdr", recovery="sack").recovery_name == "sack"  # a law of its own


def test_presets_are_renos_law_with_their_recovery():
    from ccsim.algorithms.reno import Reno
    for name in ("tahoe", "newreno", "sack", "fack", "rate-halving"):
        cls = ccsim.algorithms.get(name)
        assert cls.preset and cls.recovery == name and cls.__mro__[1] is Reno
        assert vars(cls).get("on_ack") is None and vars(cls).get("on_loss") is None
    assert not ccsim.algorithms.get("ssdr").preset


def test_a_segment_or_header_larger_than_an_ipv4_packet_is_refused():
    # mss=10**7 used to be accepted and deliver nothing; above 65,495 to_pcap crashed
    assert ccsim.dumbbell("10Mbps", "20ms", buffer=10, mss=65_495).mss == 65_495
    with pytest.raises(ScenarioError, match=r"^mss=65496: at most 65495 bytes"):
        ccsim.dumbbell("10Mbps", "20ms", buffer=10, mss=65_496)
    with pytest.raises(ScenarioError, match=r"^header=1000000: at most 64075 bytes"):
        ccsim.dumbbell("10Mbps", "20ms", buffer=10, header=10**6)


def test_dropping_a_segment_past_a_sized_flows_end_is_refused():
    flow = ccsim.Flow("reno", size=10 * 1460, drop_segments=(3, 10))
    with pytest.raises(ScenarioError, match=r"flows\[0\].drop_segments.*0\.\.9"):
        ccsim.dumbbell("10Mbps", "20ms", flows=[flow])
    last = ccsim.Flow("reno", size=10 * 1460, drop_segments=(3, 9))  # the tenth segment: fine
    assert ccsim.dumbbell("10Mbps", "20ms", flows=[last]).flows[0].drop_segments == (3, 9)


def test_a_segment_chosen_for_dropping_but_never_sent_is_reported():
    flow = ccsim.Flow("reno", drop_segments=(5, 10**9))
    res = ccsim.run(ccsim.dumbbell("10Mbps", "20ms", flows=[flow], duration="1s"))
    assert any("drop_segments [1000000000] were never sent" in w for w in res.warnings)
    assert not any("[5" in w for w in res.warnings)  # segment 5 was sent, and dropped


@pytest.mark.parametrize("data, message", [
    ({"links": [{"rate": 1e7}], "flows": [{"algorithm": "reno"}], "duration": 1},
     r"^links\[0\]\.delay='missing': links\[0\] needs 'rate', 'delay'"),
    ({"links": [{"rate": 1e7, "delay": 0.01}], "duration": 1},
     r"^scenario\.flows='missing'"),
    ({"links": [{"rate": 1e7, "delay": 0.01}], "flows": [{"rate": 1}], "duration": 1},
     r"^flows\[0\]\.rate=1"),
    ({"links": [{"rate": 1e7, "delay": 0.01}], "flows": [{"start": 1}], "duration": 1},
     r"^flows\[0\]\.algorithm='missing'"),
    ({"schema": 2}, r"^schema=2: 1, the layout this version of ccsim writes and reads"),
])
def test_a_stored_scenario_names_the_missing_or_wrong_key(data, message):
    # a missing key used to read `scenario="Link.__init__() missing 1 required ..."`
    with pytest.raises((ScenarioError, ScenarioTypeError), match=message) as err:
        Scenario.from_dict(data)
    assert "__init__" not in str(err.value)


@pytest.mark.parametrize("reader, text, where", [
    (Scenario.from_json, '{"links": [1,', "line 1, column 14"),
    (Scenario.from_json, "[" * 100_000, "nested too deeply"),
    (Scenario.from_json, b'\xff{"a": 1}', "byte 0: not UTF-8 text"),
    (Scenario.from_toml, "duration = \n", "TOML"),
])
def test_text_that_does_not_parse_is_a_scenario_error_saying_where(reader, text, where):
    with pytest.raises(ScenarioError, match="as Scenario.to_") as err:
        reader(text)
    assert where in str(err.value)


def test_a_min_rto_below_linuxs_floor_is_refused():
    assert ccsim.dumbbell("10Mbps", "20ms", min_rto="1us").min_rto == 1e-6
    with pytest.raises(ScenarioError, match=r"^min_rto='1ns': at least 1 µs"):
        ccsim.dumbbell("10Mbps", "20ms", min_rto="1ns")
