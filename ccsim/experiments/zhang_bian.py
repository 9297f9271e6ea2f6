"""Zhang & Bian: RTT bias, DropTail against RED, and Reno/SACK/Vegas competition.

Source: H. Zhang, Z. Bian, "Evaluation of Different TCP Congestion Control
Algorithms" (SFU, 2002; ns-2, slides). The slides show figures, not their
settings, apart from "buffer size = 10, long delay = 58 ms" and the
competition's packet counts. ccsim's choices, shared by the three recipes:
ns-2's agents (``stack="ns2"``), 1.5 Mbit/s, 1000-byte packets (ns-2's
default), a short flow of 40 ms RTT
(the utilisation recipe's 7.5-packet bandwidth-delay product), a long flow
whose one-way delay is 58 ms longer (156 ms RTT), a 10-packet drop-tail
buffer, 100 s, three seeds.

Each flow starts at a random time in its first second, drawn from the run's
seed. In :func:`rtt_bias` and :func:`queue_fairness`, whose flows differ only
in their RTTs, and in :func:`competition`, each flow's segments also wait a
random time up to one bottleneck packet time before they leave (``Flow.overhead``, ns-2's
``overhead_``). Without it two loss-free drop-tail flows lock into a phase
pattern (Floyd & Jacobson, "On traffic phase effects in packet-switched
gateways", 1992): with RTTs of 40 and 60 ms the short flow timed out 134
times in 100 s and got 15 % of the link, the same for every seed, and the
throughput ratio swung by a factor of ten between neighbouring RTT ratios;
a random start alone does not break every lock.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

import numpy as np
import pandas as pd

from ..scenario import Flow, dumbbell
from ..sweeps import sweep
from ._result import ExperimentResult

#: Zhang & Bian, "Competition Between Different Versions TCP": packets sent and
#: retransmitted by each flow of a pair, ``(first, second)`` as
#: ``((retransmits, packets), (retransmits, packets))``.
ZHANG_BIAN_COMPETITION = {("reno", "vegas"): ((145, 13170), (0, 5723)),
                          ("sack", "vegas"): ((142, 13208), (0, 5682))}

_PATH = {"bandwidth": "1.5Mbps", "rtt": "40ms", "buffer": 10, "mss": 960,
         "duration": "100s", "stack": "ns2"}  # ns-2's agents, which the slides ran


def _run(rows, seeds, mode, path, workers, executor, store, progress,
         overhead: float | None = 0.0) -> pd.DataFrame:
    """Each (labels, flows) once per seed, every flow starting at a random time
    in [0, 1) s drawn from the seed; one row per flow with the labels.
    ``overhead``: each flow's (s); ``None``: one bottleneck packet time in
    the packet engine, none in the fluid engine."""
    labels, scenarios = [], []
    for label, flows, extra in rows:
        for seed in seeds:
            starts = np.random.default_rng(seed).uniform(0.0, 1.0, len(flows))
            # each seed's draw on the row's own start times (not the last seed's)
            started = [dataclasses.replace(f, start=f.start + t) for f, t in zip(flows, starts)]
            labels.append({**label, "seed": seed})
            sc = dumbbell(flows=started, seed=seed, **{**_PATH, **path, **extra})
            wait = overhead
            if wait is None:
                wait = (sc.packet_size * 8.0 / sc.links[sc.bottleneck].rate
                        if mode == "packet" else 0.0)
            if wait:
                sc = sc.replace(flows=[dataclasses.replace(f, overhead=wait)
                                       for f in sc.flows])
            scenarios.append(sc)
    runs = sweep(scenarios, mode=mode, workers=workers, executor=executor, store=store,
                 progress=progress)
    meta = pd.DataFrame(labels)
    return runs.drop(columns=[c for c in meta if c in runs]).join(meta, on="base")


def rtt_bias(algorithms: Iterable[str] = ("reno", "sack", "vegas"),
             ratios: Iterable[float] = (1, 1.5, 2, 3, 4), *, seeds: Iterable[int] = (1, 2, 3),
             overhead: float | None = None, mode: str = "packet", workers: int | None = None,
             executor=None, store=None, progress: bool = False, **path) -> ExperimentResult:
    """Two flows of one algorithm, one ``ratio`` times the other's RTT.

    Args:
        ratios: the long flow's RTT over the short one's (``rtt``, 40 ms).
        overhead: each flow's random send overhead (s, ``Flow.overhead``);
            ``None``: one bottleneck packet time in the packet engine.
        mode, workers, executor, store, progress: as in :func:`ccsim.sweep`.
        **path: overrides of the dumbbell (``bandwidth``, ``rtt``, ``buffer``,
            ``mss``, ``duration``).

    Returns:
        One row per (algorithm, ratio), with ``throughput_ratio`` (short flow's
        goodput over the long one's, mean over seeds). ``data["exponent"]``:
        per algorithm, the fitted k of throughput ratio = RTT ratio ** k
        (least squares in log-log; 0 is no bias, 1 the square-root law's
        bias, 2 that of flows losing in step). ``plot()`` draws both on log axes.
    """
    from .. import units

    short = units.parse_time(path.get("rtt", _PATH["rtt"]), "rtt")
    rows = [({"algorithm": a, "ratio": r}, [Flow(a), Flow(a, rtt=short * r)], {})
            for a in algorithms for r in ratios]
    flows = _run(rows, seeds, mode, path, workers, executor, store, progress, overhead)
    per_run = flows.pivot_table(index=["algorithm", "ratio", "seed"], columns="flow",
                                values="goodput_bps", sort=False)
    per_run["throughput_ratio"] = per_run[0] / per_run[1]
    table = (per_run.groupby(["algorithm", "ratio"], sort=False)["throughput_ratio"].mean()
             .reset_index())
    exponent = {a: float(np.polyfit(np.log(g.ratio), np.log(g.throughput_ratio), 1)[0])
                for a, g in table.groupby("algorithm", sort=False)}
    return ExperimentResult("RTT bias (Zhang & Bian)", table, {"exponent": exponent},
                            _draw_bias)


def _plain():
    """Tick labels as plain numbers (2, not 2×10⁰) on log axes."""
    from matplotlib.ticker import FormatStrFormatter

    return FormatStrFormatter("%g")


def _draw_bias(result):
    from ..plot import new_figure as Figure

    fig = Figure(figsize=(6, 4.2), layout="constrained")
    ax = fig.subplots()
    for (name, rows), marker in zip(result.table.groupby("algorithm", sort=False), "osd^v"):
        k = result.data["exponent"][name]
        ax.plot(rows.ratio, rows.throughput_ratio, marker=marker, color="k",
                ls="-" if marker == "o" else "--", label=f"{name} (k = {k:.2f})")
    ax.set_xscale("log")
    ax.set_yscale("log")
    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_formatter(_plain())
        axis.set_minor_formatter(_plain())
    ax.set_xlabel("RTT ratio, long flow / short flow")
    ax.set_ylabel("throughput ratio, short flow / long flow")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8)
    ax.set_title("Bias against the long-delay flow")
    return fig


def queue_fairness(algorithm: str = "reno", buffers: Iterable[int] = (5, 10, 20, 40, 80), *,
                   queues: Iterable[str] = ("droptail", "red"), long_rtt="156ms",
                   seeds: Iterable[int] = (1, 2, 3), overhead: float | None = None,
                   mode: str = "packet", workers: int | None = None, executor=None,
                   store=None, progress: bool = False, **path) -> ExperimentResult:
    """A short and a long flow through DropTail or RED, as the buffer grows.

    RED uses ccsim's defaults for its thresholds (Floyd & Jacobson's usual
    fractions of the buffer); the slides do not give theirs. ``overhead``: as
    in :func:`rtt_bias`.

    Returns:
        One row per (queue, buffer), with ``jain`` (Jain's index of the two flows'
        goodputs), ``long_share`` (the long flow's share), ``utilisation``;
        means over seeds. ``plot()`` draws Jain's index against the buffer,
        both queues on one plot.
    """
    rows = [({"queue": q, "buffer": b}, [Flow(algorithm), Flow(algorithm, rtt=long_rtt)],
             {"queue": q, "buffer": b}) for q in queues for b in buffers]
    flows = _run(rows, seeds, mode, path, workers, executor, store, progress, overhead)
    flows = flows[flows.flow == 1]
    table = (flows.groupby(["queue", "buffer"], sort=False)
             .agg(jain=("jain", "mean"), long_share=("share", "mean"),
                  utilisation=("utilisation", "mean")).reset_index())
    return ExperimentResult(f"{algorithm}: fairness against buffer size (Zhang & Bian)", table,
                            {}, _draw_queues)


def _draw_queues(result):
    from ..plot import new_figure as Figure

    fig = Figure(figsize=(6, 4.2), layout="constrained")
    ax = fig.subplots()
    for (queue, rows), style in zip(result.table.groupby("queue", sort=False),
                                    ("o-", "s--", "^:")):
        ax.plot(rows.buffer, rows.jain, style, color="k", label=queue)
    ax.set_xlabel("buffer (packets)")
    ax.set_ylabel("Jain's fairness index")
    ax.set_ylim(0.5, 1.02)
    ax.grid(alpha=0.3)
    ax.legend()
    ax.set_title(result.name, fontsize=10)
    return fig


def competition(pairs: Iterable[tuple[str, str]] = (("reno", "sack"), ("reno", "vegas"),
                                                     ("sack", "vegas")), *,
                buffers: Iterable[int] = (3, 5, 10, 20, 50, 100),
                seeds: Iterable[int] = (1, 2, 3), overhead: float | None = None,
                mode: str = "packet", workers: int | None = None, executor=None, store=None,
                progress: bool = False, **path) -> ExperimentResult:
    """Two flows of different algorithms, same RTT, started together, for
    each buffer size (packets). ``overhead``: each flow's random send
    overhead (s, ``Flow.overhead``, ns-2's ``overhead_``); ``None``, one
    bottleneck packet time, as in :func:`rtt_bias`: two flows of one RTT
    lock into a phase pattern as readily as two of different RTTs.

    The slides conclude that "Vegas does not receive a fair share of
    bandwidth in the presence of Reno and SACK unless the buffer size are
    extremely small", and give packet counts for one buffer, taken here as
    their stated 10 packets.

    Returns:
        One row per (pair, buffer), with ``first_share`` (the first algorithm's share
        of the link), ``first_retransmits`` and ``second_retransmits`` (per
        run), and the paper's ``paper_first_share`` (from its packet counts,
        at 10 packets; NaN elsewhere). ``plot()`` draws the first algorithm's
        share against the buffer, one line per pair, the paper's as points.
    """
    pairs = [tuple(p) for p in pairs]
    rows = [({"first": a, "second": b, "buffer": q}, [Flow(a), Flow(b)], {"buffer": q})
            for a, b in pairs for q in buffers]
    flows = _run(rows, seeds, mode, path, workers, executor, store, progress, overhead)
    keys = ["first", "second", "buffer"]
    first, second = flows[flows.flow == 0], flows[flows.flow == 1]
    table = first.groupby(keys, sort=False).agg(
        first_share=("share", "mean"), first_retransmits=("retransmits", "mean")).reset_index()
    table["second_retransmits"] = second.groupby(keys, sort=False)[
        "retransmits"].mean().to_numpy()
    paper = [ZHANG_BIAN_COMPETITION.get((a, b)) if q == 10 else None
             for a, b, q in zip(table["first"], table["second"], table["buffer"])]
    table["paper_first_share"] = [p[0][1] / (p[0][1] + p[1][1]) if p else np.nan
                                  for p in paper]
    return ExperimentResult("Reno, SACK and Vegas in competition (Zhang & Bian)", table, {},
                            _draw_competition)


def _draw_competition(result):
    from ..plot import new_figure as Figure

    fig = Figure(figsize=(6.5, 4.2), layout="constrained")
    ax = fig.subplots()
    groups = result.table.groupby(["first", "second"], sort=False)
    n = groups.ngroups
    for k, (((a, b), rows), style) in enumerate(zip(groups, ("o-", "s--", "^:", "d-."))):
        ax.plot(rows.buffer, rows.first_share * 100, style, color="k", label=f"{a} vs {b}")
        known = rows.dropna(subset=["paper_first_share"])
        if len(known):
            # side by side, a few per cent apart on the log axis: the paper's
            # figures for two pairs can be the same (70 % at 10 packets)
            dodge = 1.0 + 0.07 * (k - (n - 1) / 2)
            ax.plot(known.buffer * dodge, known.paper_first_share * 100, style[0], ms=11,
                    mfc="none", color="0.4", label=f"{a} vs {b}, Zhang & Bian (ns-2)")
    ax.axhline(50, color="k", lw=0.8)
    ax.set_xscale("log")
    ax.set_xticks(sorted(result.table.buffer.unique()))  # every buffer run, labelled
    from matplotlib.ticker import NullLocator

    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_major_formatter(_plain())
    ax.set_xlabel("buffer (packets)")
    ax.set_ylabel("first algorithm's share of the link (%)")
    ax.set_ylim(0, 100)
    ax.legend(fontsize=7)
    ax.set_title(result.name, fontsize=10)
    return fig
