"""How a result looks: cwnd, goodput and the bottleneck queue over time.

Every figure ccsim draws is made through pyplot (:func:`new_figure`), so it
behaves like any matplotlib figure: ``plt.show()`` shows it in a script,
``fig.savefig(...)`` saves it, and in Jupyter it appears once, whether the
cell ends with ``res.plot()``, ``res.plot();`` or ``fig = res.plot()``.
Flow ``i`` has the same colour (:func:`flow_colours`) in every plot.
"""

from __future__ import annotations

import io
import math
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.axes import Axes

from .errors import ScenarioError
from .units import format_time, parse_time

if TYPE_CHECKING:
    from .results import Result

__all__ = ["plot_result", "plot_fct", "flow_colours", "new_figure", "PANELS"]

PANELS = ("cwnd", "ssthresh", "rtt", "goodput", "queue", "inflight")
"""Panels :func:`plot_result` can draw, top to bottom in the order asked for.
``inflight`` only when the result traces it."""
DEFAULT_PANELS = ("cwnd", "goodput", "queue")
STACK_FROM = 5
"""From this many flows the goodput panel is a stacked area (who holds what
part of the link) instead of one line per flow."""

DEFAULT_FIGSIZE = (9.0, 7.5)
"""Width and height (inches) of :func:`plot_result`'s figure."""

_GRID = {"color": "0.88", "linewidth": 0.6}
_QUEUE_COLOUR = "0.35"
_CAPACITY_COLOUR = "0.85"


_NON_INTERACTIVE = {"agg", "cairo", "pdf", "pgf", "ps", "svg", "template"}


class ResultFigure(Figure):
    """The :class:`~matplotlib.figure.Figure` every ccsim plot is: made by
    pyplot (:func:`new_figure`), so ``plt.show()``, ``fig.show()`` and
    ``savefig`` work as for any figure, and shown once in Jupyter.

    Jupyter's inline backend shows every open pyplot figure at the end of a
    cell; a figure that is also the cell's value would appear twice. When IPython
    displays a ccsim figure (as a cell's value or through ``display``) it
    sends the image and closes the figure in pyplot, so the end-of-cell
    flush does not send it again. Under an interactive backend (ipympl, Qt)
    the figure's own window or widget shows it and display does nothing.
    """

    def _repr_png_(self) -> bytes:
        buf = io.BytesIO()
        self.savefig(buf, format="png", bbox_inches="tight")
        return buf.getvalue()

    def _ipython_display_(self) -> None:
        import matplotlib
        import matplotlib.pyplot as plt
        from IPython.display import Image, display

        managed = self.canvas.manager is not None and plt.fignum_exists(self.number)
        backend = matplotlib.get_backend().lower()
        if managed and "inline" not in backend and backend not in _NON_INTERACTIVE:
            return  # an interactive backend's window or widget shows it
        display(Image(data=self._repr_png_(), format="png"))
        if managed:
            plt.close(self)


def new_figure(**kwargs: Any) -> ResultFigure:
    """A pyplot-managed :class:`ResultFigure` (``plt.figure(FigureClass=
    ResultFigure, **kwargs)``); what every ccsim plot draws on."""
    import matplotlib.pyplot as plt

    return plt.figure(FigureClass=ResultFigure, **kwargs)


def default_smooth(result: "Result") -> float:
    """The goodput smoothing window :func:`plot_result` uses by default (s):
    ``max(sample_interval, min(1 s, duration / 50))``."""
    sc = result.scenario
    return max(sc.sample_interval, min(1.0, sc.duration / 50.0))


def flow_colours(n: int) -> list[Any]:
    """One colour per flow, flow ``i`` always the same: tab10 (matplotlib's
    C0..C9) for the first ten flows, then tab20's lighter shades, then
    evenly spaced viridis. Use it in your own plots to agree with
    :meth:`ccsim.Result.plot`: ``flow_colours(2)[1]`` is flow 1's colour."""
    from matplotlib import colormaps

    tab10, tab20 = colormaps["tab10"], colormaps["tab20"]
    out: list[Any] = []
    for i in range(n):
        if i < 10:
            out.append(tab10(i))
        elif i < 20:
            out.append(tab20(2 * (i - 10) + 1))  # the light shade of C(i-10)
        else:
            out.append(colormaps["viridis"]((i - 20) * 0.618034 % 0.95))
    return out


def flow_label(i: int, flow: Any) -> str:
    """Legend label: ``"0: reno"``, ``"1: vegas (from 10 s)"``."""
    label = f"{i}: {flow.label}"
    if flow.start > 0:
        label += f" (from {format_time(flow.start)})"
    return label


def describe(result: "Result") -> str:
    """One-line description of the scenario, the figure's title; see
    :meth:`ccsim.Result.describe`."""
    return result.describe()


def _smooth_samples(smooth: Any, dt: float) -> int:
    """Smoothing window (seconds or a time string) → whole trace intervals."""
    seconds = parse_time(smooth, "smooth")
    if seconds < dt * (1 - 1e-9):
        raise ScenarioError("smooth", smooth,
                            f"a time ≥ the trace interval ({format_time(dt)})")
    return max(1, int(round(seconds / dt)))


def _active_goodput(goodput: pd.DataFrame, result: "Result", dt: float) -> pd.DataFrame:
    """Goodput with NaN in bins outside each flow's [start, end): a flow not
    yet started (or finished) leaves a gap rather than a line at zero.
    The bin labelled ``t`` covers ``[t − dt, t)``."""
    t = goodput.index.to_numpy(dtype=float)
    out = goodput.copy()
    for i, flow in enumerate(result.scenario.flows):
        if i not in out.columns:
            continue
        end = float(result.summary["end"].iloc[i])
        inactive = (t <= flow.start + dt / 2) | (t - dt >= end - dt / 2)
        out.loc[inactive, i] = np.nan
    return out


def _panel_names(result: "Result", panels: Any) -> list[str]:
    if panels is None:
        return list(DEFAULT_PANELS)
    names = [panels] if isinstance(panels, str) else list(panels)
    traced = set(result.traces["variable"].unique()) if len(result.traces) else set()
    if not names:
        raise ScenarioError("panels", panels, "one or more of " + ", ".join(PANELS))
    for name in names:
        if name not in PANELS:
            raise ScenarioError("panels", name, "one of " + ", ".join(PANELS))
        if name == "inflight" and "inflight" not in traced:
            raise ScenarioError("panels", name, "a traced variable; this result traces "
                                + ", ".join(v for v in PANELS if v in traced))
    if len(set(names)) != len(names):
        raise ScenarioError("panels", panels, "each panel at most once")
    return names


def _flow_list(result: "Result", flows: Any) -> list[int]:
    n = len(result.scenario.flows)
    if flows is None:
        return list(range(n))
    chosen = [flows] if isinstance(flows, (int, np.integer)) else list(flows)
    for f in chosen:
        if isinstance(f, bool) or not isinstance(f, (int, np.integer)) or not 0 <= f < n:
            raise ScenarioError("flows", f, f"flow indices 0..{n - 1}")
    if not chosen:
        raise ScenarioError("flows", flows, f"one or more flow indices 0..{n - 1}")
    return [int(f) for f in chosen]


def _window(result: "Result", start: Any, end: Any) -> tuple[float, float]:
    duration = result.scenario.duration
    t0 = 0.0 if start is None else parse_time(start, "start")
    t1 = duration if end is None else parse_time(end, "end")
    if not 0 <= t0 < duration:
        raise ScenarioError("start", start, f"a time in [0, {format_time(duration)})")
    if not t0 < t1 <= duration:
        raise ScenarioError("end", end,
                            f"a time in ({format_time(t0)}, {format_time(duration)}]")
    return t0, t1


def _target_axes(names: list[str], ax: Any, fig: Any, figsize: Any) -> tuple[Figure, list[Axes]]:
    if ax is not None and fig is not None:
        raise ScenarioError("ax", "given with fig", "either ax= or fig=, not both")
    if ax is not None:
        axes = [ax] if isinstance(ax, Axes) else list(np.ravel(ax))
        if len(axes) != len(names) or not all(isinstance(a, Axes) for a in axes):
            raise ScenarioError("ax", f"{len(axes)} axes",
                                f"{len(names)} matplotlib Axes, one per panel ({', '.join(names)})")
        return axes[0].figure, axes
    if fig is None:
        size = figsize if figsize is not None else \
            (DEFAULT_FIGSIZE[0], 1.2 + 2.1 * len(names)) if names != list(DEFAULT_PANELS) \
            else DEFAULT_FIGSIZE
        fig = new_figure(figsize=size, layout="constrained")
    elif not isinstance(fig, Figure):
        raise ScenarioError("fig", type(fig).__name__, "a matplotlib Figure")
    ratios = [{"cwnd": 1.2, "queue": 0.8}.get(n, 1.0) for n in names]
    axes = fig.subplots(len(names), 1, sharex=True, squeeze=False,
                        gridspec_kw={"height_ratios": ratios})[:, 0]
    return fig, list(axes)


def plot_result(result: "Result", *, panels: Any = None, flows: Any = None,
                start: Any = None, end: Any = None, smooth: Any = None,
                ax: Any = None, fig: Any = None, marks: bool = True,
                figsize: tuple[float, float] | None = None) -> Figure:
    """A result's time series in stacked panels sharing the time axis.

    Panels (``panels=``, top to bottom in the order given):

    * ``cwnd`` (segments), steps, gaps where a flow is not active; loss
      recoveries (``v``) and timeouts (``x``) from :attr:`Result.events`
      marked on each flow's curve.
    * ``ssthresh`` (segments; not drawn while still infinite).
    * ``rtt`` (latest RTT sample, ms).
    * ``goodput`` (Mbit/s), a centred rolling mean over ``smooth``, the
      window named in the axis label, the link rate as a dotted line (a
      rate that changes: its capacity shaded under the lines, smoothed alike). In-order
      delivery can exceed the link briefly (a retransmission that fills a hole
      releases everything buffered behind it); the mean smooths those bursts.
      With 5 flows or more, a stacked area: the top edge is the total.
    * ``queue`` (bottleneck backlog, packets) with the buffer as a dashed line.
    * ``inflight`` (segments), when the result traces it.

    Flow ``i`` has colour ``flow_colours(n)[i]`` in every panel and every
    ccsim plot; the legend gives its index, algorithm and start time. The
    title describes the scenario.

    Args:
        result: a :class:`ccsim.Result`.
        panels: a panel name or a list of them; default
            ``["cwnd", "goodput", "queue"]``.
        flows: flow indices to draw (default all); colours stay the flows' own.
        start, end: the time window to show (s or strings such as ``"10s"``);
            default the whole run.
        smooth: goodput smoothing window (s, or a string such as ``"500ms"``),
            rounded to whole trace intervals and at least one. Default
            ``max(sample_interval, min(1 s, duration / 50))``.
        ax: draw into these axes instead (one per panel, a single Axes for
            one panel); no title or figure legend is added.
        fig: draw into this (empty) figure instead of a new one.
        marks: mark recoveries and timeouts on the cwnd panel.
        figsize: (width, height) in inches of a new figure; default ``(9, 7.5)``
            for the three default panels.

    Returns:
        The :class:`matplotlib.figure.Figure`, managed by pyplot like any
        other: ``plt.show()`` shows it, ``fig.savefig(...)`` saves it; in
        Jupyter it appears once.
    """
    sc = result.scenario
    dt = sc.sample_interval
    names = _panel_names(result, panels)
    chosen = _flow_list(result, flows)
    t0, t1 = _window(result, start, end)
    n_window = _smooth_samples(default_smooth(result) if smooth is None else smooth, dt)
    own_figure = ax is None
    figure, axes = _target_axes(names, ax, fig, figsize)
    colours = flow_colours(len(sc.flows))
    labels = {i: flow_label(i, sc.flows[i]) for i in chosen}
    handles = {}
    draw = {"cwnd": _draw_cwnd, "ssthresh": _draw_ssthresh, "rtt": _draw_rtt,
            "goodput": _draw_goodput, "queue": _draw_queue, "inflight": _draw_inflight}
    for name, a in zip(names, axes):
        drawn = draw[name](a, result, chosen, colours, labels,
                           n_window=n_window, marks=marks, window=(t0, t1))
        for i, h in (drawn or {}).items():
            handles.setdefault(i, h)
    for a in axes:
        a.grid(True, **_GRID)
        a.set_axisbelow(True)
        a.set_xlim(t0, t1)
        a.set_ylim(bottom=0)
        a.margins(x=0)
    axes[-1].set_xlabel("time (s)")
    legend_handles = [handles[i] for i in chosen if i in handles]
    legend_labels = [labels[i] for i in chosen if i in handles]
    if own_figure:
        if marks and "cwnd" in names and len(result.events):
            seen = set(result.events["event"])  # only the marks the run has
            for handle, kind, label in zip(_mark_handles(), ("recovery", "timeout"),
                                           ("loss recovery", "timeout")):
                if kind in seen:
                    legend_handles.append(handle)
                    legend_labels.append(label)
        if legend_labels:  # none when the panels drawn show no flow (the queue alone)
            axes[0].legend(handles=legend_handles, labels=legend_labels, loc="lower center",
                           bbox_to_anchor=(0.5, 1.0), ncols=min(len(legend_labels), 5),
                           fontsize="small", frameon=False, borderaxespad=0.2)
        figure.suptitle(describe(result), fontsize="medium")
    return figure


_MARKS = {"recovery": {"marker": "v", "s": 18}, "timeout": {"marker": "X", "s": 40}}


def _mark_handles() -> list[Any]:
    from matplotlib.lines import Line2D

    return [Line2D([], [], color="0.3", marker="v", linestyle="none", markersize=5),
            Line2D([], [], color="0.3", marker="X", linestyle="none", markersize=7)]


def _per_flow(result: "Result", variable: str, window: tuple[float, float]) -> pd.DataFrame:
    """The variable's wide table over the time window (one sample either side,
    so steps reach the edges; the y axis then scales to what is shown)."""
    if not (result.traces["variable"] == variable).any():
        return pd.DataFrame()
    return _clip(result.series(variable), window, result.scenario.sample_interval)


def _clip(table: pd.DataFrame, window: tuple[float, float], dt: float) -> pd.DataFrame:
    t = table.index.to_numpy(dtype=float)
    return table[(t >= window[0] - dt * 1.5) & (t <= window[1] + dt * 1.5)]


def _lines(ax: Axes, table: pd.DataFrame, chosen, colours, labels, *, scale: float = 1.0,
           step: bool = True) -> dict[int, Any]:
    handles = {}
    for i in chosen:
        if i in table.columns:
            t = table.index.to_numpy(dtype=float)
            y = table[i].to_numpy(dtype=float) * scale
        else:
            t, y = np.array([]), np.array([])
        kw = {"color": colours[i], "linewidth": 0.9, "label": labels[i]}
        (line,) = ax.step(t, y, where="post", **kw) if step else ax.plot(t, y, **kw)
        handles[i] = line
    return handles


def _draw_cwnd(ax, result, chosen, colours, labels, *, marks, window, **_):
    cwnd = _per_flow(result, "cwnd", window)
    handles = _lines(ax, cwnd, chosen, colours, labels)
    ax.set_ylabel("cwnd (segments)")
    events = result.events
    if marks and len(events) and len(cwnd):
        t = cwnd.index.to_numpy(dtype=float)
        for kind, style in _MARKS.items():
            for i in chosen:
                rows = events[(events["event"] == kind) & (events["flow"] == i)
                              & (events["time"] >= window[0]) & (events["time"] <= window[1])]
                if not len(rows) or i not in cwnd.columns:
                    continue
                when = rows["time"].to_numpy(dtype=float)
                # the window just before the reaction: the last sample at or before it
                k = np.clip(np.searchsorted(t, when, side="right") - 1, 0, len(t) - 1)
                y = cwnd[i].to_numpy(dtype=float)[k]
                size = style["s"] * (0.5 if len(result.scenario.flows) >= STACK_FROM else 1.0)
                ax.scatter(when, y, color=colours[i], edgecolors="black", linewidths=0.4,
                           zorder=3, label=f"_{kind} {i}", marker=style["marker"], s=size)
    return handles


def _draw_ssthresh(ax, result, chosen, colours, labels, *, window, **_):
    table = _per_flow(result, "ssthresh", window)
    table = table.where(np.isfinite(table)) if len(table) else table
    ax.set_ylabel("ssthresh (segments)")
    return _lines(ax, table, chosen, colours, labels)


def _draw_rtt(ax, result, chosen, colours, labels, *, window, **_):
    ax.set_ylabel("RTT (ms)")
    return _lines(ax, _per_flow(result, "rtt", window), chosen, colours, labels, scale=1e3)


def _draw_inflight(ax, result, chosen, colours, labels, *, window, **_):
    ax.set_ylabel("in flight (segments)")
    return _lines(ax, _per_flow(result, "inflight", window), chosen, colours, labels)


def _draw_goodput(ax, result, chosen, colours, labels, *, n_window, window, **_):
    sc = result.scenario
    dt = sc.sample_interval
    goodput = _active_goodput(result.series("goodput"), result, dt)
    smoothed = goodput.rolling(n_window, center=True, min_periods=1).mean()
    smoothed = smoothed.where(goodput.notna())
    goodput = _clip(goodput, window, dt)  # smoothed over the whole run, then cut
    smoothed = _clip(smoothed, window, dt)
    t = goodput.index.to_numpy(dtype=float) - dt / 2  # drawn at bin centres
    handles = {}
    rate = sc.links[sc.bottleneck].rate / 1e6
    if len(sc.flows) >= STACK_FROM:
        ys = [smoothed[i].to_numpy(dtype=float) / 1e6 if i in smoothed.columns
              else np.full(len(t), math.nan) for i in chosen]
        polys = ax.stackplot(t, np.nan_to_num(np.array(ys)) if ys else np.zeros((0, len(t))),
                             colors=[colours[i] for i in chosen], linewidth=0,
                             labels=[labels[i] for i in chosen])
        handles = dict(zip(chosen, polys))
        ax.set_ylabel(f"goodput, stacked\n(Mbit/s, {format_time(n_window * dt)} mean)")
    else:
        for i in chosen:
            y = smoothed[i].to_numpy(dtype=float) / 1e6 if i in smoothed.columns \
                else np.full(len(t), math.nan)
            (handles[i],) = ax.plot(t, y, color=colours[i], linewidth=1.2, label=labels[i])
        ax.set_ylabel(f"goodput (Mbit/s, {format_time(n_window * dt)} mean)")
    link = sc.links[sc.bottleneck]
    if link.schedule is None:
        ax.axhline(rate, color="0.3", linestyle=":", linewidth=0.9, label="_link rate")
    else:  # a rate that changes: its capacity, shaded under the flows' goodput
        edges = goodput.index.to_numpy(dtype=float)
        cap = pd.Series([link.schedule.capacity(b - dt, b) / dt for b in edges], index=edges)
        cap = cap.rolling(n_window, center=True, min_periods=1).mean()
        area = ax.fill_between(t, cap.to_numpy() / 1e6, step="mid", color=_CAPACITY_COLOUR,
                               linewidth=0, zorder=0)
        # an artist of its own: a legend drawn later on these axes keeps it
        ax.add_artist(ax.legend([area], ["link capacity"], loc="upper right",
                                fontsize="small", frameon=False))
    return handles


def plot_capacity(result: "Result", *, flows: Any = None, start: Any = None, end: Any = None,
                  smooth: Any = None, ax: Any = None,
                  figsize: tuple[float, float] | None = (9, 3.5)) -> Figure:
    """The flows' goodput over the bottleneck's capacity: for a link whose
    rate changes (a Mahimahi trace or steps, :class:`ccsim.RateSchedule`)
    the capacity, averaged over the same ``smooth`` window as the goodput,
    is the shaded area under the flows' lines (a fixed rate, a dotted line).

    Arguments as :func:`plot_result` (its ``goodput`` panel alone).
    """
    return plot_result(result, panels="goodput", flows=flows, start=start, end=end,
                       smooth=smooth, ax=ax, figsize=figsize)


def _draw_queue(ax, result, chosen, colours, labels, *, window, **_):
    sc = result.scenario
    limit = sc.links[sc.bottleneck].queue.packets(sc.packet_size)
    queue = _clip(result.series("queue"), window, sc.sample_interval)
    two_way = "reverse_queue" in set(map(str, result.traces["variable"].unique()))
    ax.step(queue.index.to_numpy(dtype=float), queue["queue"].to_numpy(dtype=float),
            where="post", color=_QUEUE_COLOUR, linewidth=0.8,
            label="queue, forward side" if two_way else "queue")
    if two_way:  # traffic both ways: the bottleneck's other side too
        back = _clip(result.series("reverse_queue"), window, sc.sample_interval)
        ax.step(back.index.to_numpy(dtype=float), back["reverse_queue"].to_numpy(dtype=float),
                where="post", color="black", linewidth=0.8, linestyle=":",
                label="reverse side")
    ax.axhline(limit, color="black", linestyle="--", linewidth=1.0,
               label=f"buffer ({limit} pkts)")
    ax.set_ylabel("queue (packets)")
    ax.set_ylim(0, limit * 1.45 + 1)  # headroom for the legend above the limit
    ax.legend(loc="upper right", fontsize="small", ncols=2, framealpha=0.9)
    return {}


def plot_fct(results: Any, *, percentiles: Any = (50, 99), labels: Any = None,
             ax: Any = None, figsize: Any = (8.0, 4.5)) -> Figure:
    """FCT slowdown by flow size: for each size bucket one bar per result
    and percentile (:meth:`ccsim.Result.fct`), on a log scale, with the
    count of finished flows over each group. ``results``: one
    :class:`~ccsim.Result` or a list, compared side by side; ``labels``:
    one per result (default: each result's flows' algorithms). Returns the
    figure (on ``ax`` if given)."""
    many = list(results) if isinstance(results, (list, tuple)) else [results]
    if not many or not all(hasattr(r, "fct") and hasattr(r, "scenario") for r in many):
        raise ScenarioError("results", results, "a ccsim.Result or a list of them")
    if labels is None:
        labels = ["+".join(sorted(set(r.summary.loc[r.summary["size"].notna(), "algorithm"])))
                  + f" ({r.scenario.links[r.scenario.bottleneck].queue.kind})" for r in many]
    labels = list(labels)
    if len(labels) != len(many):
        raise ScenarioError("labels", labels, f"one label per result, {len(many)}")
    tables = [r.fct(percentiles) for r in many]
    buckets = list(dict.fromkeys(b for t in tables for b in t["bucket"]))
    if not buckets:
        raise ScenarioError("results", results, "results with sized flows (ccsim.Arrivals or "
                            "Flow(size=...))")
    if ax is None:
        fig = new_figure(figsize=figsize)
        ax = fig.add_subplot()
    else:
        fig = ax.figure
    pct = [float(p) for p in percentiles]
    n_bars = len(many) * len(pct)
    width = 0.8 / n_bars
    colours = flow_colours(len(many))
    x = np.arange(len(buckets))
    for k, (table, label) in enumerate(zip(tables, labels)):
        for j, p in enumerate(pct):
            rows = table[table["percentile"] == p].set_index("bucket").reindex(buckets)
            offset = (k * len(pct) + j - (n_bars - 1) / 2.0) * width
            ax.bar(x + offset, rows["slowdown"].to_numpy(float), width,
                   color=colours[k], alpha=1.0 if j == 0 else 0.45,
                   edgecolor=colours[k], label=f"{label} p{p:g}")
            if j == 0:
                for xi, n in zip(x + offset, rows["finished"]):
                    if not pd.isna(n):
                        ax.annotate(f"{int(n)}", (xi, 1.0), xytext=(0, 2),
                                    textcoords="offset points", ha="center", fontsize=7,
                                    color="0.3")
    ax.set_yscale("log")
    low, high = ax.get_ylim()
    # from below the ideal (1), where the counts stand, to room above the bars
    # for the legend
    ax.set_ylim(min(low, 0.6), high * 4.0)
    ax.axhline(1.0, color="0.5", linewidth=0.8)
    ax.set_xticks(x, buckets)
    ax.set_xlabel("flow size (finished flows counted at the foot of each bar)")
    ax.set_ylabel("FCT slowdown (FCT / ideal)")
    ax.grid(axis="y", which="both", **_GRID)
    ax.legend(fontsize=8, ncols=max(1, len(many)), loc="upper left")
    ax.set_title(describe(many[0]) if len(many) == 1 else "FCT slowdown by flow size",
                 fontsize=9)
    return fig
