"""A fluid sweep that measures its own accuracy: ``validate=`` runs a seeded
share of its scenarios in the packet engine too, ``ccsim.agreement`` turns the
pairs into gaps, and weak regimes carry a warning."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import ccsim
from ccsim.cli import main
from ccsim.errors import ScenarioError
from ccsim.sweeps.sweep import validated

BASE = ccsim.dumbbell("10Mbps", "20ms", buffer="1BDP", flows=["reno", "cubic"],
                      duration="2s", seed=1)
GRID = {"buffer": [2, "1BDP", "2BDP", "4BDP"], "rtt": ["10ms", "30ms"]}


def _sweep(grid=GRID, **kw):
    return ccsim.sweep(BASE, grid, mode="fluid", workers=1, progress=False, **kw)


@pytest.mark.slow
def test_validate_runs_a_seeded_share_in_the_packet_engine_as_paired_rows():
    table = _sweep(validate=0.25)
    fluid, packet = table[table["mode"] == "fluid"], table[table["mode"] == "packet"]
    assert fluid["scenario"].nunique() == 8
    assert packet["scenario"].nunique() == 2  # ceil(0.25 · 8)
    # paired: the packet rows repeat their fluid twins' key and parameters
    cols = ["scenario", "key", "buffer", "rtt", "seed", "flow", "algorithm"]
    twins = fluid[fluid["key"].isin(packet["key"])][cols].reset_index(drop=True)
    assert twins.equals(packet[cols].reset_index(drop=True))
    # the same sweep validates the same scenarios, in whatever order its grid comes
    again = _sweep({"rtt": GRID["rtt"][::-1], "buffer": GRID["buffer"][::-1]}, validate=0.25)
    assert set(again[again["mode"] == "packet"]["key"]) == set(packet["key"])


def test_the_choice_is_random_over_the_sweep_and_sized_by_the_fraction():
    keys = [f"k{i}" for i in range(200)]
    chosen = validated(keys, 0.1)
    assert len(chosen) == 20 and validated(keys[::-1], 0.1) == chosen
    assert len(validated(keys, 1.0)) == 200 and len(validated(keys[:3], 0.01)) == 1
    # not the first (or last) in any order: spread over the sweep
    assert chosen != set(sorted(keys)[:20]) and chosen != set(sorted(keys)[-20:])
    # another sweep (one more scenario) draws afresh: most of the choice changes
    assert len(validated(keys + ["k200"], 0.1) & chosen) < 15


@pytest.mark.parametrize("value", [0, -0.1, 1.5, math.nan, True, "0.1"])
def test_a_bad_fraction_is_refused_naming_validate(value):
    with pytest.raises(ScenarioError, match=r"validate=.*fraction of the scenarios in \(0, 1\]"):
        _sweep(validate=value)


@pytest.mark.parametrize("mode", ["packet", "both"])
def test_validate_needs_the_fluid_mode(mode):
    with pytest.raises(ScenarioError, match=r"validate=0\.5.*unless mode='fluid'"):
        ccsim.sweep(BASE, GRID, mode=mode, validate=0.5, workers=1, progress=False)


def _table(pairs):
    """A sweep table by hand: per scenario, (fluid, packet) tuples of
    (shares, goodputs, utilisation, drops, losses, data packets)."""
    rows = []
    for s, runs in enumerate(pairs):
        for mode, run in zip(("fluid", "packet"), runs):
            if run is None:
                continue
            shares, goodputs, util, drops, losses, sent = run
            for flow, (share, goodput) in enumerate(zip(shares, goodputs)):
                rows.append({"scenario": s, "key": f"k{s}", "mode": mode, "flow": flow,
                             "share": share, "goodput_bps": goodput, "utilisation": util,
                             "drops": drops, "losses": losses, "data_packets": sent,
                             "error": ""})
    return pd.DataFrame(rows)


def test_agreement_reports_median_p90_and_worst_gap_per_metric():
    table = _table([
        # share gaps 10 and 10 points (max 10); goodput 25 % and 20 %; util 1 pt; loss 1 pt
        (([0.6, 0.4], [6e6, 4e6], 0.99, 10, 0, 1000),
         ([0.5, 0.5], [4.8e6, 5e6], 1.00, 0, 0, 1000)),
        # share 2 points, goodput 0 / 4 %, util 0, loss 0.5 point
        (([0.51, 0.49], [5e6, 4.8e6], 0.9, 5, 5, 1000), ([0.49, 0.51], [5e6, 5e6], 0.9, 5, 0,
                                                         1000)),
        # share 0, goodput 0, util 5 points, loss 0
        (([1.0], [1e6], 0.95, 0, 0, 100), ([1.0], [1e6], 1.0, 0, 0, 100)),
        # fluid only: not validated
        (([0.9, 0.1], [1, 1], 1.0, 0, 0, 1), None),
    ])
    got = ccsim.agreement(table)
    assert list(got.index) == ["share", "goodput", "utilisation", "loss rate"]
    assert (got["scenarios"] == 3).all()
    expect = {"share": [10, 2, 0], "goodput": [25, 4, 0], "utilisation": [1, 0, 5],
              "loss rate": [1, 0.5, 0]}
    for metric, gaps in expect.items():
        row = got.loc[metric]
        assert row["median"] == pytest.approx(np.median(gaps))
        assert row["p90"] == pytest.approx(np.percentile(gaps, 90))
        assert row["worst"] == pytest.approx(max(gaps))
        assert row["worst_scenario"] == int(np.argmax(gaps))


def test_agreement_leaves_out_failed_runs_and_needs_pairs():
    table = _table([(([0.5, 0.5], [1, 1], 1.0, 0, 0, 10), ([0.4, 0.6], [1, 1], 1.0, 0, 0, 10)),
                    (([0.5, 0.5], [1, 1], 1.0, 0, 0, 10), ([0.0, 1.0], [1, 1], 1.0, 0, 0, 10))])
    table.loc[(table["scenario"] == 1) & (table["mode"] == "packet"), "error"] = "boom"
    assert ccsim.agreement(table).loc["share", "scenarios"] == 1
    assert ccsim.agreement(table).loc["share", "worst"] == pytest.approx(10)
    with pytest.raises(ScenarioError, match="both engines"):
        ccsim.agreement(table[table["mode"] == "fluid"])


def _seeded(runs):
    """A sweep table by hand over a grid of ``buffer``: runs are (buffer, seed,
    mode, shares, utilisation, drops, sent); a scenario is a (buffer, seed)."""
    rows = []
    for buffer, seed, mode, shares, util, drops, sent in runs:
        rows += [{"scenario": (buffer, seed), "buffer": buffer, "seed": seed, "mode": mode,
                  "flow": f, "share": share, "goodput_bps": share * 1e7, "utilisation": util,
                  "drops": drops, "losses": 0, "data_packets": sent, "error": ""}
                 for f, share in enumerate(shares)]
    table = pd.DataFrame(rows)
    positions = {k: i for i, k in enumerate(dict.fromkeys(table["scenario"]))}
    table["scenario"] = table["scenario"].map(positions)
    table.attrs["ccsim.params"] = ["buffer"]
    return table


def test_agreement_over_seeds_compares_each_engines_mean_per_grid_point():
    table = _seeded([
        # buffer 10: seed 1 and 2 swap the fluid shares; the packet engine splits evenly
        (10, 1, "fluid", [0.6, 0.4], 0.9, 10, 1000), (10, 1, "packet", [0.5, 0.5], 1.0, 0, 1000),
        (10, 2, "fluid", [0.4, 0.6], 0.9, 30, 1000), (10, 2, "packet", [0.5, 0.5], 1.0, 0, 1000),
        # a seed run in fluid alone is no part of the mean
        (10, 3, "fluid", [1.0, 0.0], 0.1, 0, 1000),
        # buffer 20: one seed, 0.7 against 0.5
        (20, 1, "fluid", [0.7, 0.3], 1.0, 0, 1000), (20, 1, "packet", [0.5, 0.5], 1.0, 0, 1000),
    ])
    each = ccsim.agreement(table)
    assert each.loc["share", "scenarios"] == 3 and each.loc["share", "median"] == \
        pytest.approx(10)
    mean = ccsim.agreement(table, seeds="mean")
    assert mean.loc["share", "scenarios"] == 2
    # buffer 10: fluid means 0.5/0.5 (no gap); buffer 20: 20 points
    assert mean.loc["share", "median"] == pytest.approx(10)
    assert mean.loc["share", "worst"] == pytest.approx(20)
    assert mean.loc["share", "worst_scenario"] == 3  # (buffer 20, seed 1), the fourth
    # utilisation 10 points at buffer 10 (0.9 against 1.0), 0 at 20; loss 2 points (mean
    # of 1 % and 3 %) against 0
    assert mean.loc["utilisation", "worst"] == pytest.approx(10)
    assert mean.loc["loss rate", "worst"] == pytest.approx(2)


def test_agreement_over_seeds_needs_a_sweep_table_and_a_known_mode():
    table = _seeded([(10, 1, "fluid", [1.0], 1.0, 0, 10), (10, 1, "packet", [1.0], 1.0, 0, 10)])
    with pytest.raises(ScenarioError, match=r"seeds='all'.*'each'.*'mean'"):
        ccsim.agreement(table, seeds="all")
    table.attrs.clear()
    with pytest.raises(ScenarioError, match=r"attrs\['ccsim.params'\]"):
        ccsim.agreement(table, seeds="mean")
    assert ccsim.agreement(table).loc["share", "worst"] == 0  # per scenario needs no grid


@pytest.mark.slow
def test_a_sweeps_agreement_is_its_own_pairs_gaps():
    table = _sweep(validate=0.5)
    got = ccsim.agreement(table)
    assert got.loc["share", "scenarios"] == 4
    f = table[table["mode"] == "fluid"].set_index(["key", "flow"])["share"]
    p = table[table["mode"] == "packet"].set_index(["key", "flow"])["share"]
    gaps = (f.reindex(p.index) - p).abs().groupby(level="key").max() * 100
    assert got.loc["share", "worst"] == pytest.approx(gaps.max())
    assert got.loc["share", "median"] == pytest.approx(gaps.median())


@pytest.mark.slow
def test_weak_regimes_carry_a_warning_in_the_result_and_the_table():
    tiny = BASE.replace(buffer=2)
    assert any("buffer of 2 packets" in w for w in ccsim.run(tiny, mode="fluid").warnings)
    assert ccsim.run(BASE, mode="fluid").warnings == []  # 1 BDP: 16 packets, 2 flows
    assert ccsim.run(tiny).warnings == []  # the packet engine has nothing to warn about
    crowd = BASE.replace(flows=["reno"] * 20)  # 17 + 16 packets among 20 flows
    assert any("per flow" in w for w in ccsim.run(crowd, mode="fluid").warnings)
    table = _sweep(validate=0.5)
    fluid = table[table["mode"] == "fluid"]
    weak = fluid["buffer"].map(lambda b: b == 2)
    assert (fluid.loc[weak, "fluid_warning"].str.contains("buffer of 2 packets")).all()
    assert (fluid.loc[~weak, "fluid_warning"] == "").all()
    assert (table[table["mode"] == "packet"]["fluid_warning"] == "").all()


@pytest.mark.slow
def test_the_cli_prints_the_agreement_when_validating(tmp_path, capsys):
    spec = tmp_path / "sweep.toml"
    spec.write_text('bandwidth = "10Mbps"\nrtt = "20ms"\nflows = ["reno", "cubic"]\n'
                    'duration = "2s"\n\n[grid]\nbuffer = [2, "1BDP", "2BDP"]\n\n'
                    '[sweep]\nmode = "fluid"\nvalidate = 0.5\n')
    assert main(["sweep", str(spec), "--workers", "1", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "agreement with the packet engine on 2 validated scenarios" in out
    for metric in ("share", "goodput", "utilisation", "loss rate"):
        assert f"  {metric}" in out
    assert main(["sweep", str(spec), "--workers", "1", "--no-progress", "--mode",
                 "fluid", "--validate", "1"]) == 0
    assert "on 3 validated scenarios" in capsys.readouterr().out
