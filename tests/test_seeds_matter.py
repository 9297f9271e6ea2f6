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
from ccsim.fluid.engine import FluidEngine
from ccsim import IdenticalSeedsWarning
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
    off = [ccsim.run(_pair(seed, start_jitter=0, ack_jitter=0)) for seed in (1, 2, 3)]
    assert fingerprint(off[0]) == fingerprint(off[1]) == fingerprint(off[2])


def _two_rtts(seed: int, **knobs) -> ccsim.Scenario:
    # Floyd & Jacobson's phase lock: two loss-free drop-tail Reno flows of 40
    # and 60 ms. Without randomness the short one takes the drops and times out
    # again and again, the same for every seed (tests/test_overhead.py)
    # again and again, the same for every seed (tests/test_overhead.py); in ns-2's
    # stack (an ACK per segment, classic Reno), where the lock was found
    return ccsim.dumbbell("10Mbps", "40ms", buffer="1BDP", duration="100s", seed=seed,
                          flows=["reno", ccsim.Flow("reno", rtt="60ms")], stack="ns2", **knobs)


@pytest.mark.slow
def test_the_default_breaks_the_phase_lock():
    share = lambda s: s.goodput_bps[0] / s.goodput_bps.sum()  # noqa: E731
    locked = ccsim.run(_two_rtts(1, start_jitter=0, ack_jitter=0)).summary
    assert share(locked) < 0.45 and locked.timeouts[0] > 3 * locked.timeouts[1]
    # a random start alone picks another phase of the lock, not a free run
    started = ccsim.run(_two_rtts(1, ack_jitter=0)).summary
    assert share(started) < 0.45
    # the default: the short flow gets the larger share, as Reno's RTT bias says
    # (throughput ∝ 1/RTT^k, k between 1 and 2: 0.6 to 0.69 at an RTT ratio of
    # 1.5; the band leaves room for 100-s runs), and times out far less
    free = [ccsim.run(_two_rtts(seed)).summary for seed in (1, 2)]
    assert share(free[0]) != share(free[1])
    for s in free:
        assert 0.52 < share(s) < 0.75
        assert s.timeouts[0] < locked.timeouts[0] / 3


def test_the_ack_jitter_alone_makes_seeds_differ():
    runs = [ccsim.run(_pair(seed, start_jitter=0)) for seed in (1, 2, 3)]
    assert len({r.summary.goodput_bps[0] for r in runs}) == 3
    assert all(r.metrics["interval"][0] == 0.0 for r in runs)  # both opened at 0


@pytest.mark.parametrize("path", ["one link", "two links"])
def test_segments_reach_the_receiver_up_to_the_ack_jitter_late_in_order(path):
    # A lone flow far below the link's rate (its window held by the receiver):
    # each segment's delivery is its departure from the last link plus the
    # propagation delay (and the receiver's NIC's packet time, where the host has
    # one) plus a wait in [0, ack_jitter], larger only when it
    # queues behind the one before; and no segment overtakes another. Two
    # links take the engine's general path, one link its inline one.
    wait = 0.004
    if path == "one link":
        sc = ccsim.dumbbell("10Mbps", "40ms", buffer=100, duration="5s", seed=3,
                            rwnd=4 * 1460, ack_jitter=wait, flows=["reno"])
    else:
        sc = ccsim.path([{"rate": "100Mbps", "delay": "5ms"},
                         {"rate": "10Mbps", "delay": "15ms", "buffer": 100}],
                        flows=["reno"], duration="5s", seed=3, rwnd=4 * 1460,
                        ack_jitter=wait)
    ev = ccsim.run(sc, events=True).events
    last_link = len(sc.links) - 1
    left = ev[(ev.event == "forwarded") & (ev.link == last_link)].set_index("seq")["time"]
    got = ev[ev.event == "delivered"].set_index("seq")["time"]
    assert len(got) > 300 and got.index.is_unique
    nic = 0.0 if sc.flows[0].access_rate is None else sc.packet_size * 8 / sc.flows[0].access_rate
    late = (got - sc.links[-1].delay - nic - left.loc[got.index]).to_numpy()
    assert late.min() >= -1e-12
    alone = late[np.r_[True, np.diff(got.to_numpy()) > wait]]  # none just before it
    assert alone.max() <= wait + 1e-12
    # uniform draws have mean wait/2: within 5 standard errors (wait / sqrt(12 n))
    assert abs(alone.mean() - wait / 2) < 5 * wait / np.sqrt(12 * len(alone))
    assert np.all(np.diff(got.sort_index().to_numpy()) >= 0)  # in sequence order


def test_the_default_ack_jitter_is_one_bottleneck_packet_time():
    sc = ccsim.path([{"rate": "100Mbps", "delay": "5ms"},
                     {"rate": "10Mbps", "delay": "15ms", "buffer": 100}], flows=["reno"],
                    duration="1s", mss=1000)
    assert sc.ack_wait == 1040 * 8 / 10e6
    assert sc.replace(ack_jitter="1ms").ack_wait == 0.001
    assert sc.replace(ack_jitter=0).ack_wait == 0.0


def test_the_fluid_engine_takes_the_ack_jitter_as_its_mean_delay():
    # no segments to hold one by one: each flow's delay grows by the draws' mean, half the bound
    sc = _pair(4)
    none = FluidEngine([sc.replace(ack_jitter=0)]).d
    some = FluidEngine([sc.replace(ack_jitter="3ms")]).d
    assert np.allclose(some - none, 0.0015, rtol=0, atol=1e-15)


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
        assert list(res.summary.start) == [0.0, 0.0]  # as given, the same for every seed
        assert res.metrics["interval"][0] == max(starts)  # all flows active from the last
        # lifetime goodput is taken over each flow's own time, from its opening
        span = res.summary.end - np.array(starts)
        assert np.allclose(res.summary.lifetime_goodput_bps,
                           res.summary.delivered_bytes * 8 / span, rtol=1e-12)
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
    ev = ccsim.run(sc, events=True).events
    first = ev[ev.event == "sent"].groupby("flow").time.min()
    assert list(first) == [sc.flow_start(0), sc.flow_start(1)]  # each sent when it opened


@pytest.mark.parametrize("knob", ["start_jitter", "ack_jitter"])
def test_round_trip_and_keys(knob):
    default = _pair()
    assert knob not in default.to_dict()  # the default adds no key
    assert default.key == _pair(**{knob: None}).key
    keys = {default.key}
    for value, seconds in ((0, 0.0), ("5ms", 0.005), (0.25, 0.25)):
        sc = _pair(**{knob: value})
        assert getattr(sc, knob) == seconds
        assert sc.to_dict()[knob] == seconds
        for again in (ccsim.Scenario.from_dict(sc.to_dict()),
                      ccsim.Scenario.from_json(sc.to_json()),
                      ccsim.Scenario.from_toml(sc.to_toml())):
            assert again == sc and again.key == sc.key
        keys.add(sc.key)
        assert default.replace(**{knob: value}) == sc
    assert len(keys) == 4
    back = ccsim.Scenario.from_toml(default.to_toml())
    assert back == default and getattr(back, knob) is None
    # a dumbbell keyword survives a builder replace
    assert getattr(_pair(**{knob: 0}).replace(bandwidth="20Mbps"), knob) == 0.0


@pytest.mark.parametrize("value, match", [(-0.001, "start_jitter"), (math.nan, "start_jitter"),
                                          ("fast", "start_jitter"), ("5Mbps", "time unit"),
                                          (math.inf, "start_jitter")])
@pytest.mark.parametrize("knob", ["start_jitter", "ack_jitter"])
def test_bad_values(knob, value, match):
    with pytest.raises(ccsim.ScenarioError, match=match.replace("start_jitter", knob)):
        _pair(**{knob: value})
    with pytest.raises(ccsim.ScenarioTypeError, match=knob):  # a time, not a switch
        _pair(**{knob: True})


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
    with pytest.warns(IdenticalSeedsWarning,
                      match=r"buffer='1BDP'.*3 seeds.*start_jitter=0 and ack_jitter=0") \
            as caught:
        out = ccsim.aggregate(table)
    assert len(caught) == 1 and "4BDP" not in str(caught[0].message)
    assert caught[0].filename == __file__  # it points at the caller's line
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


@pytest.mark.slow
def test_aggregate_of_a_real_sweep_warns_only_with_the_jitter_off():
    base = _pair()
    grid = {"start_jitter": [0, None], "ack_jitter": [0, None]}
    table = ccsim.sweep(base, grid=grid, seeds=range(3), mode="packet", workers=1,
                        progress=False)
    with pytest.warns(IdenticalSeedsWarning, match=r"start_jitter=0") as caught:
        ccsim.aggregate(table)
    text = str(caught[0].message)
    # both flows of the grid point without either jitter, and no other's
    assert "start_jitter=0.0, ack_jitter=0.0, mode='packet', flow=0" in text
    assert "start_jitter=0.0, ack_jitter=0.0, mode='packet', flow=1" in text
    assert "nan" not in text
    with warnings.catch_warnings():
        warnings.simplefilter("error", IdenticalSeedsWarning)
        ccsim.aggregate(table[table.start_jitter.isna() | table.ack_jitter.isna()])
