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


def agreement(table: pd.DataFrame) -> pd.DataFrame:
    """The gap between the fluid and the packet engine over the scenarios a
    sweep ran in both, per metric.

    Per scenario (both runs without error): ``share`` — the largest gap of a
    flow's share, in points (0.52 against 0.47 is 5 points); ``goodput`` —
    the largest gap of a flow's goodput, in % of its packet-engine goodput;
    ``utilisation`` — in points; ``loss rate`` — queue drops and random
    losses per data packet sent, in points.

    Args:
        table: a sweep table with rows of both modes
            (:func:`ccsim.sweep` with ``validate=`` or ``mode="both"``).

    Returns:
        One row per metric (index ``metric``): ``unit``, ``scenarios`` (how
        many pairs measured it), ``median``, ``p90`` (90th percentile,
        linear interpolation) and ``worst`` gap, and ``worst_scenario`` (the
        ``scenario`` column of the pair with the worst gap).
    """
    gaps = scenario_gaps(table)
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


def scenario_gaps(table: pd.DataFrame) -> pd.DataFrame:
    """Each validated scenario's gaps (index: its ``scenario`` position;
    columns: :data:`GAPS`), as :func:`agreement` defines them."""
    needed = ["scenario", "mode", "flow", "share", "goodput_bps", "utilisation", "drops",
              "losses", "data_packets"]
    missing = [c for c in needed if c not in table.columns]
    if missing:
        raise ScenarioError("table", f"a table without {missing[0]!r}",
                            "a sweep table (ccsim.sweep, ccsim.load)")
    ok = table[table["error"] == ""] if "error" in table.columns else table
    fluid = ok[ok["mode"] == "fluid"].set_index(["scenario", "flow"])
    packet = ok[ok["mode"] == "packet"].set_index(["scenario", "flow"])
    both = pd.merge(fluid, packet, how="inner", left_index=True, right_index=True,
                    suffixes=("_f", "_p"))
    if both.empty:
        raise ScenarioError("table", f"a table of {len(table)} rows without a scenario run "
                            "in both engines",
                            "a sweep run with mode='fluid', validate=FRACTION (or mode='both')")
    by = both.groupby(level="scenario", sort=True)
    share = (both["share_f"] - both["share_p"]).abs().groupby(level="scenario").max() * 100
    rel = (both["goodput_bps_f"] - both["goodput_bps_p"]).abs() / both["goodput_bps_p"]
    rel = rel.where(both["goodput_bps_p"] > 0)
    goodput = rel.groupby(level="scenario").max() * 100
    first = by.first()

    def loss_rate(s: str) -> pd.Series:
        sent = first[f"data_packets_{s}"]
        return ((first[f"drops_{s}"] + first[f"losses_{s}"]) / sent).where(sent > 0)

    return pd.DataFrame({
        "share": share,
        "goodput": goodput,
        "utilisation": (first["utilisation_f"] - first["utilisation_p"]).abs() * 100,
        "loss rate": (loss_rate("f") - loss_rate("p")).abs() * 100,
    })
