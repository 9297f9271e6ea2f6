"""Seeds that matter: each flow opens at a random time up to one of its RTTs
after its start (``Scenario.start_jitter``), drawn from the seed, so that a
loss-free drop-tail run is not the same for every seed; ``start_jitter=0``
switches it off for studies of one phase, and ``ccsim.aggregate`` warns of a
group whose seeds all gave the same numbers."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest

import ccsim
from ccsim.errors import IdenticalSeedsWarning
from tests.test_golden import fingerprint


def _pair(seed: int = 1, **knobs) -> ccsim.Scenario:
    # Two Reno flows through a loss-free drop-tail bottleneck: nothing random
    # but the start jitter (no random loss, no RED, no overhead)
    return ccsim.dumbbell("10Mbps", "20ms", buffer="1BDP", flows=["reno", "reno"],
                          duration="5s", seed=seed, **knobs)


def _unlimited_by_the_link(seed: int = 1, **knobs) -> ccsim.Scenario:
    # Two windows held by the receiver below what the path holds: no queue drop
    # in either engine, so the fluid engine's drop draws play no part either
    return ccsim.dumbbell("10Mbps", "20ms", buffer=100, flows=["reno", "cubic"],
                          duration="3s", seed=seed, rwnd=20 * 1460, **knobs)


def test_three_seeds_of_a_loss_free_drop_tail_run_differ_in_the_packet_engine():
    runs = [ccsim.run(_pair(seed)) for seed in (1, 2, 3)]
    assert all(r.metrics["losses"] == 0 for r in runs)  # loss-free: drops only
    goodput = [r.summary.goodput_bps[0] for r in runs]
    assert len(set(goodput)) == 3
    # with the jitter off, the three are one run
    off = [ccsim.run(_pair(seed, start_jitter=0)) for seed in (1, 2, 3)]
    assert fingerprint(off[0]) == fingerprint(off[1]) == fingerprint(off[2])


def test_three_seeds_differ_in_the_fluid_engine_even_without_drops():
    runs = ccsim.run_many([_unlimited_by_the_link(seed) for seed in (1, 2, 3)], mode="fluid")
    assert all(r.metrics["drops"] == 0 for r in runs)
    goodput = [r.summary.goodput_bps[0] for r in runs]
    assert len(set(goodput)) == 3
    off = ccsim.run_many([_unlimited_by_the_link(seed, start_jitter=0) for seed in (1, 2, 3)],
                         mode="fluid")
    assert fingerprint(off[0]) == fingerprint(off[1]) == fingerprint(off[2])


def test_both_engines_open_each_flow_at_the_same_jittered_time():
    sc = _unlimited_by_the_link(7)
    starts = [sc.flow_start(i) for i in range(2)]
    for mode in ("packet", "fluid"):
        res = ccsim.run(sc, mode=mode)
        assert list(res.summary.start) == starts
        assert res.metrics["interval"][0] == max(starts)  # all flows active from the last
        # nothing is sent before a flow opens: its trace is empty until then
        tr = res.traces[(res.traces.variable == "cwnd") & (res.traces.flow == 0)]
        first = tr.dropna(subset=["value"]).time.min()
        assert first >= starts[0] - sc.sample_interval


def test_flow_start_is_within_one_rtt_and_depends_on_seed_and_index_only():
    flows = ["reno", ccsim.Flow("reno", rtt="80ms"), ccsim.Flow("cubic", start="2s")]
    sc = ccsim.dumbbell("10Mbps", "20ms", flows=flows, duration="10s", seed=5)
    for i, flow in enumerate(sc.flows):
        assert flow.start < sc.flow_start(i) < flow.start + sc.flow_rtt(i)
    # another flow added, or the engine's choice, does not move the others' draws
    more = sc.replace(flows=list(sc.flows) + ["vegas"])
    assert [more.flow_start(i) for i in range(3)] == [sc.flow_start(i) for i in range(3)]
    # a longer bound scales the same draw
    wide = sc.replace(start_jitter="1s")
    u = [(sc.flow_start(i) - f.start) / sc.flow_rtt(i) for i, f in enumerate(sc.flows)]
    assert [(wide.flow_start(i) - f.start) for i, f in enumerate(sc.flows)] == \
        pytest.approx(u, rel=1e-12)
    # over many seeds the draws fill [0, 1) evenly: mean 1/2 within 5 standard
    # errors (1 / sqrt(12 n)), and spread over the whole range
    draws = np.array([(sc.replace(seed=s).flow_start(0)) / sc.flow_rtt(0)
                      for s in range(2000)])
    assert abs(draws.mean() - 0.5) < 5 / math.sqrt(12 * len(draws))
    assert draws.min() < 0.01 and draws.max() > 0.99
    assert sc.replace(start_jitter=0).flow_start(2) == 2.0


def test_the_default_jitter_never_reaches_a_flows_stop_or_the_end():
    # a flow with less time left than its RTT opens before its stop, and
    # one near the end before the end
    sc = ccsim.dumbbell("10Mbps", "200ms", duration="10s", seed=3,
                        flows=[ccsim.Flow("reno", start="1s", stop="1.01s"),
                               ccsim.Flow("reno", start="9.995s")])
    assert 1.0 <= sc.flow_start(0) < 1.01
    assert 9.995 <= sc.flow_start(1) < 10.0
    res = ccsim.run(sc)
    assert list(res.summary.start) == [sc.flow_start(0), sc.flow_start(1)]


def test_round_trip_and_keys():
    default = _pair()
    assert "start_jitter" not in default.to_dict()  # the default adds no key
    assert default.key == _pair(start_jitter=None).key
    keys = {default.key}
    for value, seconds in ((0, 0.0), ("5ms", 0.005), (0.25, 0.25)):
        sc = _pair(start_jitter=value)
        assert sc.start_jitter == seconds
        assert sc.to_dict()["start_jitter"] == seconds
        for again in (ccsim.Scenario.from_dict(sc.to_dict()),
                      ccsim.Scenario.from_json(sc.to_json()),
                      ccsim.Scenario.from_toml(sc.to_toml())):
            assert again == sc and again.key == sc.key
        keys.add(sc.key)
        assert default.replace(start_jitter=value) == sc
    assert len(keys) == 4
    back = ccsim.Scenario.from_toml(default.to_toml())
    assert back == default and back.start_jitter is None
    # a dumbbell keyword survives a builder replace
    assert _pair(start_jitter=0).replace(bandwidth="20Mbps").start_jitter == 0.0


@pytest.mark.parametrize("value, match", [(-0.001, "start_jitter"), (math.nan, "start_jitter"),
                                          ("fast", "start_jitter"), ("5Mbps", "time unit"),
                                          (math.inf, "start_jitter")])
def test_bad_values(value, match):
    with pytest.raises(ccsim.ScenarioError, match=match):
        _pair(start_jitter=value)


def test_a_jitter_past_a_flows_time_is_refused_naming_the_flow():
    with pytest.raises(ccsim.ScenarioError, match=r"start_jitter.*flows\[1\]") as err:
        ccsim.dumbbell("10Mbps", "20ms", duration="10s", start_jitter="1s",
                       flows=["reno", ccsim.Flow("reno", start="5s", stop="5.5s")])
    assert "0.5 s" in str(err.value)
    with pytest.raises(ccsim.ScenarioError, match=r"flows\[0\].*end"):
        ccsim.dumbbell("10Mbps", "20ms", duration="10s", start_jitter="10s", flows=["reno"])


def test_fluid_results_do_not_depend_on_the_batch():
    scs = [_pair(seed) for seed in (1, 2, 3)]
    alone = ccsim.run(scs[1], mode="fluid")
    batch = ccsim.run_many([_unlimited_by_the_link(4)] + scs, mode="fluid")
    one, other = fingerprint(batch[2]), fingerprint(alone)
    assert one["metrics"].pop("batch") == 4 and other["metrics"].pop("batch") == 1
    assert one == other


# -- the aggregate warning -----------------------------------------------------------
def _table(values_by_seed: dict[str, list[float]]) -> pd.DataFrame:
    rows = []
    for group, values in values_by_seed.items():
        for seed, v in enumerate(values):
            rows.append({"buffer": group, "mode": "packet", "flow": 0, "seed": seed,
                         "goodput_bps": v, "share": 0.5, "error": ""})
    table = pd.DataFrame(rows)
    table.attrs["ccsim.params"] = ["buffer"]
    return table


def test_aggregate_warns_naming_a_group_whose_seeds_all_agree():
    table = _table({"1BDP": [5e6, 5e6, 5e6], "4BDP": [5e6, 5.1e6, 4.9e6]})
    with pytest.warns(IdenticalSeedsWarning, match=r"buffer='1BDP'.*3 seeds.*start_jitter=0") \
            as caught:
        out = ccsim.aggregate(table)
    assert len(caught) == 1 and "4BDP" not in str(caught[0].message)
    assert out.goodput_bps_ci_low[0] == out.goodput_bps[0]  # the zero-wide interval


@pytest.mark.parametrize("table", [
    _table({"1BDP": [5e6, 5.1e6, 5e6]}),            # the seeds differ in one value
    _table({"1BDP": [5e6]}),                         # one seed: no interval at all
    _table({"1BDP": [5e6, 5e6]}).assign(seed=3),     # the same seed twice
])
def test_aggregate_is_quiet_when_the_seeds_differ_or_are_one(table):
    with warnings.catch_warnings():
        warnings.simplefilter("error", IdenticalSeedsWarning)
        ccsim.aggregate(table)


def test_aggregate_of_a_real_sweep_warns_only_with_the_jitter_off():
    base = _pair()
    grid = {"start_jitter": [0, None]}
    table = ccsim.sweep(base, grid=grid, seeds=range(3), mode="packet", workers=1,
                        progress=False)
    with pytest.warns(IdenticalSeedsWarning, match=r"start_jitter=0") as caught:
        ccsim.aggregate(table)
    text = str(caught[0].message)
    # both flows of the grid point without jitter, not those of the default
    assert "start_jitter=0.0, mode='packet', flow=0" in text
    assert "start_jitter=0.0, mode='packet', flow=1" in text and "nan" not in text
    with warnings.catch_warnings():
        warnings.simplefilter("error", IdenticalSeedsWarning)
        ccsim.aggregate(table[table.start_jitter.isna()])
