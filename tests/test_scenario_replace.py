"""Scenario.replace with dumbbell()'s keywords: the grid's way to vary a built scenario."""

from __future__ import annotations

import pytest

import ccsim
from ccsim import RED, Flow, dumbbell


def test_replacing_nothing_rebuilds_the_same_scenario():
    for sc in (dumbbell("10Mbps", "20ms", buffer="64KB", flows=["reno", Flow("cubic", rtt="0.1")],
                        loss=0.01, duration="5s", seed=3, mss=1000, sack=True),
               dumbbell("10Mbps", "20ms", queue=RED(limit=30, min_th=3, max_th=9))):
        again = sc.replace(bandwidth=sc.links[0].rate)
        assert again == sc and again.key == sc.key


def test_builder_keywords_build_what_dumbbell_builds():
    sc = dumbbell("10Mbps", "20ms", buffer="1BDP", flows=["reno", "cubic"], duration="5s")
    assert sc.replace(rtt="40ms", buffer="1BDP", loss=0.01) == dumbbell(
        "10Mbps", "40ms", buffer="1BDP", loss=0.01, flows=["reno", "cubic"], duration="5s")
    assert sc.replace(bandwidth="20Mbps", queue="red", buffer=50) == dumbbell(
        "20Mbps", "20ms", buffer=50, queue="red", flows=["reno", "cubic"], duration="5s")


def test_a_buffer_not_given_keeps_its_packets():
    sc = dumbbell("10Mbps", "20ms", buffer="1BDP")          # 1 BDP = 17 packets here
    assert sc.links[0].queue.limit == 17
    assert sc.replace(rtt="80ms").links[0].queue.limit == 17  # not 4 BDP's worth
    assert sc.replace(rtt="80ms", buffer="1BDP").links[0].queue.limit == 67
    assert sc.replace(queue="red").links[0].queue == RED(limit=17)


def test_red_keeps_its_parameters_when_its_buffer_changes():
    sc = dumbbell("10Mbps", "20ms", queue=RED(limit=30, min_th=3, max_th=9, gentle=True))
    assert sc.replace(buffer=60).links[0].queue == RED(limit=60, min_th=3, max_th=9,
                                                        gentle=True)


def test_flows_at_the_path_rtt_follow_a_new_rtt():
    sc = dumbbell("10Mbps", "20ms", flows=["reno", Flow("cubic", rtt="100ms")])
    new = sc.replace(rtt="40ms")
    assert [new.flow_rtt(i) for i in range(2)] == [0.04, 0.1]


def test_errors_name_the_keyword():
    sc = dumbbell("10Mbps", "20ms")
    with pytest.raises(ccsim.ScenarioTypeError, match="bufer.*did you mean 'buffer'"):
        sc.replace(bufer=3)
    with pytest.raises(ccsim.ScenarioError, match="buffer='-1BDP'"):
        sc.replace(buffer="-1BDP")
    with pytest.raises(ccsim.UnitError, match="bandwidth='fast'"):
        sc.replace(bandwidth="fast")
    with pytest.raises(ccsim.ScenarioTypeError, match="links"):
        sc.replace(links=sc.links, rtt="5ms")
    multi_hop = ccsim.path([{"rate": "10Mbps", "delay": "5ms"}])
    with pytest.raises(ccsim.ScenarioTypeError, match="rtt='3ms': a keyword of Scenario.replace"):
        multi_hop.replace(rtt="3ms")
    assert multi_hop.replace(seed=4).seed == 4  # fields still replace as before


def test_builder_keywords_replace_on_a_built_scenario_with_strings():
    sc = dumbbell(bandwidth="10Mbps", rtt="20ms", buffer="1BDP",
                  flows=["reno", Flow("vegas", start="10s")], duration="60s", seed=1)
    wider = sc.replace(buffer="2BDP")
    assert wider.links[0].queue.limit == 33 and wider.flows == sc.flows
    assert sc.replace(duration="30s", seed=7).duration == 30.0
    with pytest.raises(ccsim.ScenarioError, match=r"flows\[1\].start"):
        sc.replace(duration="5s")  # the late starter would never start


def test_results_carry_the_scenario_so_runs_stack():
    import pandas as pd

    from ccsim.results import SCENARIO_COLUMNS

    base = dumbbell(bandwidth="10Mbps", rtt="20ms", buffer="1BDP", flows=["reno", "cubic"],
                    duration="2s", seed=1)
    runs = [ccsim.run(base.replace(buffer=b, loss=p), mode="fluid")
            for b, p in (("1BDP", 0.0), ("2BDP", 0.01))]
    table = pd.concat([r.to_pandas() for r in runs], ignore_index=True)
    assert list(table.columns[2:9]) == list(SCENARIO_COLUMNS)
    assert list(table["buffer"]) == [17, 17, 33, 33]
    assert list(table["loss"]) == [0.0, 0.0, 0.01, 0.01]
    assert set(table["bandwidth"]) == {10e6} and set(table["rtt"]) == {0.02}
    assert set(table["queue"]) == {"droptail"} and set(table["duration"]) == {2.0}
    assert list(runs[1].summary["buffer"]) == [33, 33]
    # a sweep has the same columns; a varied one keeps the grid's labels
    swept = ccsim.sweep(base, grid={"buffer": ["1BDP", "2BDP"]}, mode="fluid", progress=False)
    assert set(SCENARIO_COLUMNS) <= set(swept.columns)
    assert list(swept["buffer"]) == ["1BDP", "1BDP", "2BDP", "2BDP"]
    assert set(swept["bandwidth"]) == {10e6} and set(swept["queue"]) == {"droptail"}
