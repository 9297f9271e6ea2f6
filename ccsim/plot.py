"""How a result looks: cwnd, goodput and the bottleneck queue over time.

Built on matplotlib's object-oriented API only (a :class:`~matplotlib.figure.Figure`
and its axes, never pyplot's global state), so it works headless, in scripts
that save PNGs, and in Jupyter, where the returned figure displays itself.
"""

from __future__ import annotations

import io
import math
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from .errors import ScenarioError
from .units import format_rate, format_time, parse_time

if TYPE_CHECKING:
    from .results import Result

__all__ = ["plot_result"]

DEFAULT_FIGSIZE = (9.0, 7.5)
"""Width and height (inches) of :func:`plot_result`'s figure."""

_GRID = {"color": "0.88", "linewidth": 0.6}
_QUEUE_COLOUR = "0.35"


class ResultFigure(Figure):
    """A :class:`~matplotlib.figure.Figure` that renders itself as PNG in Jupyter;
    every figure ccsim returns (results, experiments) is one.

    IPython only knows how to draw a plain ``Figure`` once pyplot's inline
    backend has been loaded; a notebook that never imports pyplot would show
    ``<Figure size ...>``. When the inline backend is active its formatter
    takes precedence, so the image is never shown twice.
    """

    def _repr_png_(self) -> bytes:
        buf = io.BytesIO()
        self.savefig(buf, format="png", bbox_inches="tight")
        return buf.getvalue()


def default_smooth(result: "Result") -> float:
    """The goodput smoothing window :func:`plot_result` uses by default (s):
    ``max(sample_interval, min(1 s, duration / 50))``."""
    sc = result.scenario
    return max(sc.sample_interval, min(1.0, sc.duration / 50.0))


def flow_colours(n: int) -> list[Any]:
    """One colour per flow: matplotlib's default cycle (C0..C9), then tab20,
    then evenly spaced viridis for crowds."""
    if n <= 10:
        return [f"C{i}" for i in range(n)]
    from matplotlib import colormaps

    if n <= 20:
        return [colormaps["tab20"](i) for i in range(n)]
    return [colormaps["viridis"](x) for x in np.linspace(0.0, 0.95, n)]


def flow_label(i: int, flow: Any) -> str:
    """Legend label: ``"0: reno"``, ``"1: vegas (from 10 s)"``."""
    label = f"{i}: {flow.label}"
    if flow.start > 0:
        label += f" (from {format_time(flow.start)})"
    return label


def describe(result: "Result") -> str:
    """One-line description of the scenario, used as the figure's title, e.g.
    ``"dumbbell · 10 Mbit/s · RTT 20 ms · droptail buffer 17 pkts · seed 1"``."""
    sc = result.scenario
    link = sc.links[sc.bottleneck]
    parts = [sc.topology if len(sc.links) == 1 else f"{sc.topology} ({len(sc.links)} links)",
             format_rate(link.rate)]
    rtts = sorted({sc.flow_rtt(i) for i in range(len(sc.flows))})
    if len(rtts) == 1:
        parts.append(f"RTT {format_time(rtts[0])}")
    else:
        parts.append(f"RTT {format_time(rtts[0])}–{format_time(rtts[-1])}")
    kind = {"droptail": "droptail", "red": "RED"}.get(link.queue.kind, link.queue.kind)
    parts.append(f"{kind} buffer {link.queue.packets(sc.packet_size)} pkts")
    if link.loss > 0:
        parts.append(f"loss {link.loss * 100:.3g}%")
    parts.append(f"seed {sc.seed}")
    if result.mode != "packet":
        parts.append(f"{result.mode} engine")
    return " · ".join(parts)


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


def plot_result(result: "Result", *, smooth: Any = None,
                figsize: tuple[float, float] | None = None) -> Figure:
    """cwnd, goodput and the bottleneck queue over time, in three stacked panels.

    1. cwnd of each flow (segments), as steps; gaps where the flow is not
       active. ssthresh is traced but not drawn.
    2. goodput of each flow (Mbit/s), a centred rolling mean over ``smooth``
       seconds; the window is named in the axis label.
    3. the bottleneck queue (packets), with the buffer limit as a dashed line.

    Each flow keeps one colour in all panels; the legend gives its index,
    algorithm and start time. The title describes the scenario.

    Args:
        result: a :class:`ccsim.Result`.
        smooth: goodput smoothing window (s, or a string such as ``"500ms"``),
            rounded to whole trace intervals and at least one. Default
            ``max(sample_interval, min(1 s, duration / 50))``: 1 s for runs of
            a minute or more, a fiftieth of shorter runs.
        figsize: (width, height) in inches; default ``(9, 7.5)``.

    Returns:
        A :class:`matplotlib.figure.Figure` (not registered with pyplot: save
        it with ``fig.savefig(...)``; in Jupyter it displays itself).
    """
    sc = result.scenario
    dt = sc.sample_interval
    n_window = _smooth_samples(default_smooth(result) if smooth is None else smooth, dt)
    window = n_window * dt
    limit = sc.links[sc.bottleneck].queue.packets(sc.packet_size)
    colours = flow_colours(len(sc.flows))
    labels = [flow_label(i, f) for i, f in enumerate(sc.flows)]

    fig = ResultFigure(figsize=DEFAULT_FIGSIZE if figsize is None else figsize,
                       layout="constrained")
    ax_cwnd, ax_good, ax_queue = fig.subplots(3, 1, sharex=True,
                                              gridspec_kw={"height_ratios": [1.2, 1.0, 0.8]})

    # (1) cwnd: steps, NaN (inactive) leaves gaps
    cwnd = result.series("cwnd")
    handles = []
    for i in range(len(sc.flows)):
        y = cwnd[i].to_numpy(dtype=float) if i in cwnd.columns else np.array([])
        t = cwnd.index.to_numpy(dtype=float) if i in cwnd.columns else np.array([])
        (line,) = ax_cwnd.step(t, y, where="post", color=colours[i], linewidth=0.9,
                               label=labels[i])
        handles.append(line)
    ax_cwnd.set_ylabel("cwnd (segments)")

    # (2) goodput: centred rolling mean, Mbit/s, drawn at bin centres
    goodput = _active_goodput(result.series("goodput"), result, dt)
    smoothed = goodput.rolling(n_window, center=True, min_periods=1).mean()
    smoothed = smoothed.where(goodput.notna())
    t_good = goodput.index.to_numpy(dtype=float) - dt / 2
    for i in range(len(sc.flows)):
        y = smoothed[i].to_numpy(dtype=float) / 1e6 if i in smoothed.columns \
            else np.full(len(t_good), math.nan)
        ax_good.plot(t_good, y, color=colours[i], linewidth=1.2, label=labels[i])
    ax_good.set_ylabel(f"goodput (Mbit/s, {format_time(window)} mean)")

    # (3) queue and its limit
    queue = result.series("queue")
    ax_queue.step(queue.index.to_numpy(dtype=float), queue["queue"].to_numpy(dtype=float),
                  where="post", color=_QUEUE_COLOUR, linewidth=0.8, label="queue")
    ax_queue.axhline(limit, color="black", linestyle="--", linewidth=1.0,
                     label=f"buffer ({limit} pkts)")
    ax_queue.set_ylabel("queue (packets)")
    ax_queue.set_ylim(0, limit * 1.45 + 1)  # headroom for the legend above the limit
    ax_queue.legend(loc="upper right", fontsize="small", ncols=2, framealpha=0.9)
    ax_queue.set_xlabel("time (s)")

    for ax in (ax_cwnd, ax_good, ax_queue):
        ax.grid(True, **_GRID)
        ax.set_axisbelow(True)
        ax.set_xlim(0, sc.duration)
        ax.set_ylim(bottom=0)
        ax.margins(x=0)
    # flows' legend just above the top panel (an axes legend, so constrained
    # layout makes room for it below the title)
    ax_cwnd.legend(handles=handles, labels=labels, loc="lower center",
                   bbox_to_anchor=(0.5, 1.0), ncols=min(len(labels), 5),
                   fontsize="small", frameon=False, borderaxespad=0.2)
    fig.suptitle(describe(result), fontsize="medium")
    return fig
