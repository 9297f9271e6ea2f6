"""Seed 000's pairwise matrix: every ordered pair of algorithms, one started
before the other, on a LAN-like dumbbell.

Source: A. Esterhuizen, A. E. Krzesinski, "TCP Congestion Control
Comparison" (seed 000), §III–IV, Table I and Figs. 1–2: two hosts send to a
third over 100 Mbit/s; the first client starts, the second follows (10 s
later in Figs. 1–2); each cell of Table I gives the average throughput of the
row's algorithm (started first) and the column's (started second), in
Mbit/s. Some pairs depend on who starts first (Illinois with BIC or YeAH).

Defaults: 100 Mbit/s, 1 ms RTT (a switched LAN), a 1000-packet drop-tail
buffer (Linux's default ``txqueuelen``, where a LAN sender's queue builds),
second flow 10 s after the first, 60 s in all. The seed does not state its
run length or buffer; these are the choices documented here.
"""

from __future__ import annotations

import time
import traceback
from typing import Iterable

import numpy as np
import pandas as pd

from ..run import run
from ..scenario import Flow, dumbbell
from ._result import ExperimentResult


def pairwise_matrix(algorithms: Iterable[str] | None = None, *, bandwidth="100Mbps",
                    rtt="1ms", buffer=1000, delay="10s", duration="60s", seed: int = 1,
                    order_threshold: float = 0.15, progress: bool = False,
                    **knobs) -> ExperimentResult:
    """Run every ordered pair (``first``, ``second``) of ``algorithms``.

    Args:
        algorithms: names; default every registered algorithm.
        bandwidth, rtt, buffer: the dumbbell (strings accepted).
        delay: how long after the first flow the second starts (s).
        duration: simulated time of each run (s).
        seed: random seed of every run.
        order_threshold: a pair's result "depends on who starts first" when an
            algorithm's share of the link differs by more than this between the
            two orders.
        progress: show a progress bar (tqdm) on standard error.
        **knobs: stack knobs passed to :func:`ccsim.dumbbell`.

    Returns:
        An :class:`ExperimentResult` whose ``table`` has one row per ordered
        pair: ``first``, ``second``, ``first_bps``, ``second_bps`` (goodput
        over each flow's own active time, as Table I), ``first_share`` (of the
        link over the time both were active), ``error`` (the exception text if
        the run failed, else empty). ``data["matrix"]`` is Table I's layout
        ("86,19" in Mbit/s), ``data["start_order"]`` the pairs whose outcome
        depends on the order, ``data["wall_time"]`` the run time (s).
        ``plot()`` draws the matrix as a heatmap.
    """
    from .. import algorithms as registry

    names = list(registry.names() if algorithms is None else algorithms)
    for name in names:
        registry.get(name)  # unknown names fail here, before any run
    pairs = [(a, b) for a in names for b in names]
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(pairs), desc="pairwise matrix", unit="run")
    started = time.perf_counter()
    rows = []
    for first, second in pairs:
        row = {"first": first, "second": second, "first_bps": np.nan,
               "second_bps": np.nan, "first_share": np.nan, "error": ""}
        try:
            sc = dumbbell(bandwidth, rtt, buffer=buffer, duration=duration, seed=seed,
                          flows=[Flow(first), Flow(second, start=delay)], **knobs)
            res = run(sc)
            row.update(first_bps=res.summary.loc[0, "goodput_bps"],
                       second_bps=res.summary.loc[1, "goodput_bps"],
                       first_share=res.summary.loc[0, "share"])
        except Exception as exc:  # one failed run must not lose the others
            row["error"] = "".join(traceback.format_exception_only(exc)).strip()
        rows.append(row)
        if bar is not None:
            bar.update()
    if bar is not None:
        bar.close()
    table = pd.DataFrame(rows)
    data = {"matrix": _matrix(table, names), "start_order": _start_order(table, order_threshold),
            "wall_time": time.perf_counter() - started, "names": names}
    return ExperimentResult("pairwise matrix (seed 000, Table I)", table, data, _draw)


def _matrix(table: pd.DataFrame, names: list[str]) -> pd.DataFrame:
    """Table I's layout: row started first, column second, "row,column" Mbit/s."""
    cells = {(r.first, r.second): ("failed" if r.error else
                                   f"{r.first_bps / 1e6:.0f},{r.second_bps / 1e6:.0f}")
             for r in table.itertuples()}
    out = pd.DataFrame([[cells[a, b] for b in names] for a in names], index=names,
                       columns=names)
    out.index.name, out.columns.name = "started first", "started second"
    return out


def _start_order(table: pd.DataFrame, threshold: float) -> pd.DataFrame:
    """Pairs whose outcome depends on who starts first."""
    share = {(r.first, r.second): r.first_share for r in table.itertuples()}
    rows = []
    for (a, b), s in share.items():
        if a >= b or (b, a) not in share:
            continue
        a_first, a_second = s, 1.0 - share[b, a]  # a's share in each order
        if abs(a_first - a_second) > threshold:
            rows.append({"a": a, "b": b, "a_share_when_first": a_first,
                         "a_share_when_second": a_second,
                         "difference": a_first - a_second})
    return pd.DataFrame(rows, columns=["a", "b", "a_share_when_first",
                                       "a_share_when_second", "difference"])


def _draw(result: ExperimentResult):
    from ..plot import ResultFigure as Figure

    names = result.data["names"]
    t = result.table.set_index(["first", "second"])
    share = np.array([[t.loc[(a, b), "first_share"] for b in names] for a in names])
    n = len(names)
    fig = Figure(figsize=(1.0 + 0.75 * n, 0.8 + 0.65 * n), layout="constrained")
    ax = fig.subplots()
    image = ax.imshow(share * 100, cmap="RdBu_r", vmin=0, vmax=100)
    ax.set_xticks(range(n), names, rotation=45, ha="right")
    ax.set_yticks(range(n), names)
    ax.set_xlabel("started second")
    ax.set_ylabel("started first")
    matrix = result.data["matrix"]
    for i, a in enumerate(names):
        for j, b in enumerate(names):
            value = share[i, j]
            colour = "white" if not np.isnan(value) and abs(value - 0.5) > 0.3 else "black"
            ax.text(j, i, matrix.loc[a, b], ha="center", va="center", fontsize=7,
                    color=colour)
    fig.colorbar(image, ax=ax, label="first flow's share while both run (%)", shrink=0.8)
    ax.set_title("Throughput (Mbit/s, first,second) of every ordered pair", fontsize=10)
    return fig
