"""From records to tables: the sweep's table, its per-scenario view, and
means with confidence intervals over seeds."""

from __future__ import annotations

import json
import math
import warnings
from typing import Any, Iterable, Sequence

import numpy as np
import pandas as pd
from scipy import stats

from ..errors import IdenticalSeedsWarning, ScenarioError
from ..results import SCENARIO_COLUMNS, SIZE_COLUMNS, SUMMARY_COLUMNS, scenario_columns
from ..scenario import Scenario
from .work import loads

METRICS = ("utilisation", "jain", "uf", "interval_start", "interval_end", "drops", "losses",
           "data_packets")
"""The metric columns every sweep table has, in order (NaN where a run has none)."""

PER_FLOW = ("flow",) + SUMMARY_COLUMNS + SIZE_COLUMNS
VALUES = ("goodput_bps", "share", "retransmits", "timeouts", "mean_rtt", "utilisation",
          "jain", "uf")
"""What :func:`aggregate` averages unless told otherwise."""


def tuples(x: Any) -> Any:
    """JSON's lists back to the tuples the grid's values were (hashable)."""
    return tuple(tuples(v) for v in x) if isinstance(x, list) else x


def assemble(points: Sequence[tuple[int, str, dict[str, Any], dict[str, Any]]],
             names: list[str], engines: list[tuple[str, str]],
             records: dict[tuple[str, str], str]) -> pd.DataFrame:
    """The sweep table, one row per flow per scenario and engine, in the
    sweep's order whatever order the records came in.

    Args:
        points: ``(position, key, scenario dict, params)`` per scenario.
        names: parameter column names.
        engines: ``(mode, engine label)`` pairs, in the order to show them.
        records: ``(key, engine label) → record`` (JSON text, or the decoded
            dict); scenarios without one (not finished) are left out.
    """
    decoded: dict[tuple[str, str], dict[str, Any]] = {}
    rows, extra = [], {}
    for position, key, scenario, params in points:
        described = None
        for mode, engine in engines:
            text = records.get((key, engine))
            if text is None:
                continue
            rec = text if isinstance(text, dict) else (
                decoded.get((key, engine)) or decoded.setdefault((key, engine), loads(text)))
            metrics = dict(rec["metrics"])
            start, end = metrics.pop("interval", (math.nan, math.nan))
            metrics.update(interval_start=start, interval_end=end)
            for name in metrics:
                if name not in METRICS:
                    extra[name] = None
            flows = rec["rows"] or [
                {"flow": i, "algorithm": f["algorithm"], "recovery": f.get("recovery"),
                 "start": f.get("start", 0.0)} for i, f in enumerate(scenario["flows"])]
            if described is None:
                described = _described(scenario)
            # the grid's values as given win over the scenario's SI values
            head = {"scenario": position, "key": key, **described, **params,
                    "seed": params.get("seed", scenario["seed"]), "mode": mode}
            tail = {"fluid_warning": "; ".join(rec.get("warnings", ())),
                    "error": rec["error"], "traceback": rec["traceback"],
                    "wall_time": rec["wall_time"]}
            for flow in flows:
                flow = {k: v for k, v in flow.items() if k not in SCENARIO_COLUMNS}
                rows.append({**head, **flow, **metrics, **tail})
    # a bare flow field in the grid ("algorithm", "start") is the summary's column
    shown = [n for n in names if n != "seed" and n not in PER_FLOW]
    fixed = [c for c in SCENARIO_COLUMNS if c not in shown and c != "seed"]
    columns = (["scenario", "key"] + shown + fixed + ["seed", "mode"]
               + list(PER_FLOW) + list(METRICS) + sorted(extra)
               + ["fluid_warning", "error", "traceback", "wall_time"])
    table = pd.DataFrame(rows, columns=columns)
    for name in shown:
        table[name] = table[name].map(tuples)
    table.attrs["ccsim.params"] = [n for n in names if n != "seed"]
    return table


def _described(scenario: dict[str, Any]) -> dict[str, Any]:
    """The scenario's :data:`~ccsim.results.SCENARIO_COLUMNS` from its dict."""
    try:
        return scenario_columns(Scenario.from_dict(scenario))
    except Exception:  # noqa: BLE001 - a record of a scenario this version cannot read
        return {c: math.nan for c in SCENARIO_COLUMNS}


def per_scenario(table: pd.DataFrame) -> pd.DataFrame:
    """One row per scenario (and engine): the sweep table without its
    per-flow columns (``flow`` and the summary's)."""
    out = table.drop_duplicates(["scenario", "mode"])
    out = out.drop(columns=[c for c in PER_FLOW if c in out.columns]).reset_index(drop=True)
    out.attrs = dict(table.attrs)
    return out


def aggregate(table: pd.DataFrame, by: Iterable[str] | None = None,
              values: Iterable[str] | None = None, confidence: float = 0.95) -> pd.DataFrame:
    """Mean of each of ``values`` over the seeds, with a confidence interval.

    The interval is Student's t interval of the mean of independent runs:
    ``mean ± t(1 − α/2, n − 1) · s / √n``, with ``s`` the sample standard
    deviation (``ddof=1``) of the ``n`` runs that produced the value (failed
    runs are left out), ``α = 1 − confidence``, and ``t`` from
    ``scipy.stats.t.ppf``. With a single run the interval is NaN.

    A group whose runs (two seeds or more) all gave the same value of every
    one of ``values`` raises an :class:`~ccsim.errors.IdenticalSeedsWarning`
    naming it: its interval is zero wide only because nothing in those runs
    depended on the seed (``start_jitter=0, ack_jitter=0`` with no random
    loss, RED or ``Flow.overhead``), which says nothing of how certain the
    mean is.

    Args:
        table: a sweep table (:func:`ccsim.sweep`, :func:`ccsim.load`).
        by: columns to group by; default the grid's parameters, ``mode`` and
            ``flow``: one row per flow of each grid point, over its seeds.
        values: numeric columns to average; default goodput, share,
            retransmissions, timeouts, mean RTT, utilisation, Jain's index and
            UF (those present).
        confidence: the interval's confidence level, in (0, 1).

    Returns:
        ``by``'s columns, then ``runs`` (successful runs in the group), then
        per value ``NAME`` (the mean), ``NAME_ci_low`` and ``NAME_ci_high``.
    """
    if not 0 < confidence < 1:
        raise ScenarioError("confidence", confidence, "a level in (0, 1), such as 0.95")
    by = list(table.attrs.get("ccsim.params", []) + ["mode", "flow"] if by is None else by)
    values = [v for v in (VALUES if values is None else values)
              if values is not None or v in table.columns]
    for name in by + values:
        if name not in table.columns:
            raise ScenarioError("aggregate", name, "a column of the table: "
                                + ", ".join(map(str, table.columns)))
    ok = table[table["error"] == ""] if "error" in table.columns else table
    groups = ok.groupby(by, sort=False, dropna=False)[values]
    mean, std, n = groups.mean(), groups.std(ddof=1), groups.count()
    t = stats.t.ppf((1 + confidence) / 2, n - 1)
    half = t * std / np.sqrt(n)
    out = pd.DataFrame(index=mean.index)
    out["runs"] = ok.groupby(by, sort=False, dropna=False).size()
    for v in values:
        out[v] = mean[v]
        out[f"{v}_ci_low"] = mean[v] - half[v]
        out[f"{v}_ci_high"] = mean[v] + half[v]
    _warn_identical(ok, by, values)
    return out.reset_index()


def _warn_identical(ok: pd.DataFrame, by: list[str], values: list[str]) -> None:
    """Warn of the groups whose seeds all gave the same numbers."""
    if not values or ok.empty:
        return
    grouped = ok.groupby(by, sort=False, dropna=False)
    spread = grouped[values].max() - grouped[values].min()  # NaN: no value in the group
    if "seed" in ok.columns and "seed" not in by:
        seeds = grouped["seed"].nunique()
    else:
        seeds = grouped.size()
    same = (spread.isna() | (spread == 0)).all(axis=1) & (spread == 0).any(axis=1)
    same &= seeds.reindex(spread.index) >= 2
    if not same.any():
        return
    names = [", ".join(f"{k}={v!r}" for k, v in zip(by, key if isinstance(key, tuple)
                                                    else (key,)))
             for key in spread.index[same.to_numpy()]]
    more = f" (and {len(names) - 3} more groups)" if len(names) > 3 else ""
    counts = seeds.reindex(spread.index)[same.to_numpy()]
    warnings.warn(
        f"ccsim.aggregate: every seed of the group {names[0]} ({int(counts.iloc[0])} seeds)"
        + (f", and of {'; '.join(names[1:3])}{more}," if len(names) > 1 else "")
        + " gave identical numbers, so the interval is zero wide because nothing in "
        "these runs depended on the seed, not because the mean is certain; were they run "
        "with start_jitter=0 and ack_jitter=0? The default jitters, random loss, RED or "
        "Flow(overhead=...) make seeds differ", IdenticalSeedsWarning, stacklevel=3)


def dump_params(params: dict[str, Any]) -> str:
    return json.dumps(params, allow_nan=True)
