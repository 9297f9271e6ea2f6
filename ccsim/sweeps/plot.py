"""A figure for a sweep: one metric against one parameter, a line per value
of another, the mean over seeds with its confidence band."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..errors import ScenarioError, ScenarioTypeError
from .table import aggregate

if TYPE_CHECKING:  # matplotlib is imported when a figure is drawn, not with ccsim
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

AXIS_LABELS: dict[str, tuple[str, float]] = {
    "goodput_bps": ("goodput (Mbit/s)", 1e-6),
    "share": ("share of the bottleneck", 1.0),
    "delivered_bytes": ("delivered (MB)", 1e-6),
    "retransmits": ("retransmissions (segments)", 1.0),
    "timeouts": ("retransmission timeouts", 1.0),
    "recoveries": ("loss recoveries", 1.0),
    "mean_rtt": ("mean RTT (ms)", 1e3),
    "base_rtt": ("base RTT (ms)", 1e3),
    "fct": ("flow completion time (s)", 1.0),
    "utilisation": ("link utilisation", 1.0),
    "jain": ("Jain's fairness index", 1.0),
    "uf": ("unfairness UF", 1.0),
    "drops": ("drops (packets)", 1.0),
    "losses": ("random losses (packets)", 1.0),
    "data_packets": ("data packets", 1.0),
    "wall_time": ("wall time (s)", 1.0),
    "bandwidth": ("bottleneck rate (Mbit/s)", 1e-6),
    "rtt": ("RTT (ms)", 1e3),
    "buffer": ("buffer (packets)", 1.0),
    "loss": ("random loss probability", 1.0),
    "duration": ("duration (s)", 1.0),
    "start": ("start (s)", 1.0),
    "end": ("end (s)", 1.0),
}
"""Axis label and scale of the sweep table's numeric columns (SI in the
table, shown as in :meth:`ccsim.Result.plot`: goodput in Mbit/s, RTT in ms).
Other columns are labelled with their name, unscaled."""


def _axis(name: str) -> tuple[str, float]:
    return AXIS_LABELS.get(name, (name, 1.0))


def _tick(value: Any) -> str:
    if isinstance(value, tuple):
        return " + ".join(map(str, value))
    return str(value)


def _check(table: Any, x: Any, y: Any, hue: Any) -> None:
    if not isinstance(table, pd.DataFrame):
        raise ScenarioTypeError("table", table, "a sweep table (a pandas DataFrame from "
                                "ccsim.sweep or ccsim.load)")
    for field, name in (("x", x), ("y", y), ("hue", hue)):
        if name is None and field == "hue":
            continue
        if not isinstance(name, str) or name not in table.columns:
            raise ScenarioError(field, name, "a column of the table: "
                                + ", ".join(map(str, table.columns)))
    if x == hue:
        raise ScenarioError("hue", hue, "a column other than x")
    if y in (x, hue) or table[y].dtype.kind not in "iuf":
        raise ScenarioError("y", y, "a numeric column, such as share, goodput_bps, "
                            "utilisation or jain")


def _one_run_per_seed(table: pd.DataFrame, x: str, hue: str | None) -> None:
    """Refuse to average rows that are not runs of one grid point over its
    seeds (another parameter varying, two flows with one label)."""
    if "seed" not in table.columns:
        return
    keys = [x] + ([hue] if hue else []) + ["seed"]
    ok = table[table["error"] == ""] if "error" in table.columns else table
    counts = ok.groupby(keys, sort=False, dropna=False).size()
    if not len(counts) or counts.max() == 1:
        return
    candidates = [c for c in list(table.attrs.get("ccsim.params", [])) + ["base", "mode", "flow"]
                  if c in ok.columns and c not in keys]
    varying = [c for c in candidates
               if (ok.groupby(keys, sort=False, dropna=False)[c]
                   .nunique(dropna=False) > 1).any()]
    raise ScenarioError(
        "plot_sweep", f"{int(counts.max())} rows per {', '.join(keys)}",
        "one row per seed at each x" + (" and hue" if hue else "") + "; these columns also "
        "vary: " + (", ".join(varying) if varying else "unknown") + " (select one value "
        "first, table[table.COLUMN == VALUE], or make it the hue)")


def plot_sweep(table: pd.DataFrame, x: str, y: str, hue: str | None = None, *,
               confidence: float = 0.95, ax: Axes | None = None,
               figsize: tuple[float, float] | None = None) -> Figure:
    """One metric of a sweep against one parameter: the mean over seeds and
    its confidence band, one line per value of ``hue``.

    The means and bands are :func:`ccsim.aggregate`'s, grouped by ``x`` and
    ``hue``: Student's t interval of the mean over the seeds (failed runs
    left out; a single run has no band). Every row of a group must be a
    different seed of one grid point: a parameter that varies but is neither
    ``x`` nor ``hue`` is an error naming it (select one of its values first).

    A numeric ``x`` is a line through the means with a shaded band; any
    other (``"1BDP"``, ``("reno", "cubic")``) is a categorical axis in the
    table's order, with a marker and an error bar per mean, the hues side by
    side. Goodput is drawn in Mbit/s, RTTs in ms (:data:`AXIS_LABELS`).

    Args:
        table: a sweep table (:func:`ccsim.sweep`, :func:`ccsim.load`).
        x: the column along the horizontal axis, e.g. ``"buffer"``.
        y: the numeric column to average, e.g. ``"share"``.
        hue: the column whose values get a line each, e.g. ``"algorithm"``
            or ``"flow"``; default one line.
        confidence: the bands' confidence level, in (0, 1).
        ax: draw into these axes instead of a new figure.
        figsize: (width, height) in inches of a new figure; default (6.4, 4.2).

    Returns:
        The :class:`matplotlib.figure.Figure`, made through pyplot like
        :meth:`ccsim.Result.plot`'s: ``plt.show()`` shows it in a script,
        in Jupyter it appears once.
    """
    _check(table, x, y, hue)
    from matplotlib.axes import Axes

    from ..plot import flow_colours, new_figure

    if ax is not None and not isinstance(ax, Axes):
        raise ScenarioTypeError("ax", ax, "a matplotlib Axes")
    _one_run_per_seed(table, x, hue)
    by = [x] + ([hue] if hue else [])
    stats = aggregate(table, by=by, values=[y], confidence=confidence)
    if ax is None:
        fig = new_figure(figsize=figsize or (6.4, 4.2), layout="constrained")
        ax = fig.add_subplot()
    else:
        fig = ax.figure
    ylabel, yscale = _axis(y)
    numeric = table[x].dtype.kind in "iuf"
    order = list(pd.unique(table[x]))
    hues = list(pd.unique(table[hue])) if hue else [None]
    colours = (flow_colours(len(hues)) if hue != "flow"
               else flow_colours(int(max(hues)) + 1))
    width = 0.6 / max(1, len(hues))
    for i, h in enumerate(hues):
        rows = stats if hue is None else stats[stats[hue] == h]
        colour = colours[int(h)] if hue == "flow" else colours[i]
        label = None if hue is None else _tick(h)
        mean = rows[y].to_numpy(dtype=float) * yscale
        low = rows[f"{y}_ci_low"].to_numpy(dtype=float) * yscale
        high = rows[f"{y}_ci_high"].to_numpy(dtype=float) * yscale
        if numeric:
            xs = rows[x].to_numpy(dtype=float)
            sort = np.argsort(xs, kind="stable")
            xs, mean, low, high = xs[sort] * _axis(x)[1], mean[sort], low[sort], high[sort]
            ax.plot(xs, mean, marker="o", markersize=4, color=colour, label=label)
            ax.fill_between(xs, low, high, color=colour, alpha=0.2, linewidth=0)
        else:
            where = {v: k for k, v in enumerate(order)}
            xs = np.array([where[v] for v in rows[x]], dtype=float)
            xs += (i - (len(hues) - 1) / 2) * width
            ax.errorbar(xs, mean, yerr=np.vstack([mean - low, high - mean]), fmt="o",
                        markersize=5, capsize=3, color=colour, label=label)
    if not numeric:
        ax.set_xticks(range(len(order)), [_tick(v) for v in order])
    ax.set_xlabel(_axis(x)[0] if numeric else x)
    ax.set_ylabel(ylabel)
    ax.grid(True, color="0.88", linewidth=0.6)
    ax.set_axisbelow(True)
    runs = stats["runs"]
    seeds = (f"{int(runs.min())}" if runs.min() == runs.max()
             else f"{int(runs.min())}–{int(runs.max())}")
    ax.set_title(f"mean over {seeds} seeds, {confidence:.0%} confidence "
                 + ("band" if numeric else "interval") + " (Student's t)", fontsize="medium")
    if hue:
        ax.legend(title=hue, fontsize="small", title_fontsize="small", frameon=False)
    return fig
