"""How far a fluid sweep agrees with the packet engine, measured on its own
scenarios: the pairs that ``sweep(..., mode="fluid", validate=...)`` (or
``mode="both"``) ran in both engines."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import ScenarioError

__all__ = ["agreement", "GAPS"]

GAPS = {
    "share": "points",
    "goodput": "% of packet",
    "utilisation": "points",
    "loss rate": "points",
}
"""The metrics :func:`agreement` compares, with the unit of their gaps."""


SEEDS = ("each", "mean")


def agreement(table: pd.DataFrame, seeds: str = "each") -> pd.DataFrame:
    """The gap between the fluid and the packet engine over the scenarios a
    sweep ran in both, per metric.

    Per scenario (both runs without error): ``share`` — the largest gap of a
    flow's share, in points (0.52 against 0.47 is 5 points); ``goodput`` —
    the largest gap of a flow's goodput, in % of its packet-engine goodput;
    ``utilisation`` — in points; ``loss rate`` — queue drops and random
    losses per data packet sent, in points.

    One run of either engine moves by a few points between seeds, so a gap
    per scenario includes that noise. docs/fluid.md publishes the gap between
    each engine's mean over seeds; ``seeds="mean"`` measures that on a sweep
    with several seeds per grid point.

    Args:
        table: a sweep table with rows of both modes
            (:func:`ccsim.sweep` with ``validate=`` or ``mode="both"``).
        seeds: ``"each"`` — a gap per scenario (grid point and seed);
            ``"mean"`` — a gap per grid point (the table's
            ``attrs["ccsim.params"]``) between each engine's means over the
            seeds run in both: each flow's share and goodput, the
            utilisation and the loss rate are averaged first.

    Returns:
        One row per metric (index ``metric``): ``unit``, ``scenarios`` (how
        many pairs measured it), ``median``, ``p90`` (90th percentile,
        linear interpolation) and ``worst`` gap, and ``worst_scenario`` (the
        ``scenario`` column of the pair with the worst gap; with
        ``seeds="mean"``, the grid point's first scenario).
    """
    gaps = scenario_gaps(table, seeds)
    rows = []
    for metric, unit in GAPS.items():
        g = gaps[metric].dropna()
        if len(g):
            rows.append({"metric": metric, "unit": unit, "scenarios": len(g),
                         "median": float(g.median()), "p90": float(np.percentile(g, 90)),
                         "worst": float(g.max()), "worst_scenario": g.idxmax()})
        else:
            rows.append({"metric": metric, "unit": unit, "scenarios": 0, "median": np.nan,
                         "p90": np.nan, "worst": np.nan, "worst_scenario": None})
    return pd.DataFrame(rows).set_index("metric")


def scenario_gaps(table: pd.DataFrame, seeds: str = "each") -> pd.DataFrame:
    """Each validated scenario's gaps (index: its ``scenario`` position;
    columns: :data:`GAPS`), as :func:`agreement` defines them; with
    ``seeds="mean"``, each grid point's (index: its first scenario)."""
    if seeds not in SEEDS:
        raise ScenarioError("seeds", seeds, "'each' (a gap per scenario) or 'mean' (per grid "
                            "point, between the engines' means over its seeds)")
    needed = ["scenario", "mode", "flow", "share", "goodput_bps", "utilisation", "drops",
              "losses", "data_packets"]
    missing = [c for c in needed if c not in table.columns]
    if missing:
        raise ScenarioError("table", f"a table without {missing[0]!r}",
                            "a sweep table (ccsim.sweep, ccsim.load)")
    ok = table[table["error"] == ""] if "error" in table.columns else table
    ok = ok.assign(loss_rate=((ok["drops"] + ok["losses"]) / ok["data_packets"])
                   .where(ok["data_packets"] > 0))
    if seeds == "mean":
        ok = _means_over_seeds(ok, table)
    fluid = ok[ok["mode"] == "fluid"].set_index(["scenario", "flow"])
    packet = ok[ok["mode"] == "packet"].set_index(["scenario", "flow"])
    both = pd.merge(fluid, packet, how="inner", left_index=True, right_index=True,
                    suffixes=("_f", "_p"))
    if both.empty:
        raise ScenarioError("table", f"a table of {len(table)} rows without a scenario run "
                            "in both engines",
                            "a sweep run with mode='fluid', validate=FRACTION (or mode='both')")
    share = (both["share_f"] - both["share_p"]).abs().groupby(level="scenario").max() * 100
    rel = (both["goodput_bps_f"] - both["goodput_bps_p"]).abs() / both["goodput_bps_p"]
    rel = rel.where(both["goodput_bps_p"] > 0)
    goodput = rel.groupby(level="scenario").max() * 100
    first = both.groupby(level="scenario", sort=True).first()
    return pd.DataFrame({
        "share": share,
        "goodput": goodput,
        "utilisation": (first["utilisation_f"] - first["utilisation_p"]).abs() * 100,
        "loss rate": (first["loss_rate_f"] - first["loss_rate_p"]).abs() * 100,
    })


def _means_over_seeds(ok: pd.DataFrame, table: pd.DataFrame) -> pd.DataFrame:
    """Per grid point, engine and flow, the means over the seeds that ran in
    both engines; ``scenario`` becomes the point's first scenario."""
    if "ccsim.params" not in table.attrs:
        raise ScenarioError("table", "a table without attrs['ccsim.params']",
                            "a sweep table (ccsim.sweep, ccsim.load), which names its grid")
    point = list(table.attrs["ccsim.params"])
    ok = ok.assign(point=ok.groupby(point, sort=False, dropna=False).ngroup()
                   if point else 0)
    modes = ok.groupby("scenario")["mode"].nunique()
    ok = ok[ok["scenario"].isin(modes.index[modes == 2])]  # paired runs only
    values = ["share", "goodput_bps", "utilisation", "loss_rate"]
    means = ok.groupby(["point", "mode", "flow"], sort=True)[values].mean()
    first = ok.groupby("point")["scenario"].min()
    means = means.reset_index()
    means["scenario"] = first.reindex(means["point"]).to_numpy()
    return means
