"""Throughput and utilisation under random link errors (Lai & Yao; Zhang & Bian).

Sources: Y.-C. Lai, C.-L. Yao, "TCP congestion control algorithms and a
performance comparison" , §4.1 and Fig. 5: mean throughput of each
algorithm as the link error rate rises, with the rank order "Vegas >
Pseudo-Rate ≈ Rate-Halving > SSDR ≈ FACK ≈ SACK > NewReno > Reno" and gaps
that widen with the error rate; H. Zhang, Z. Bian, "Evaluation of Different
TCP Congestion Control Algorithms": bandwidth utilisation of Reno,
SACK and Vegas at 1 % and 5 % loss.

Neither paper gives its whole topology; the defaults here are a dumbbell with
the papers' packet sizes (512 bytes in Lai & Yao, 1000 in Zhang & Bian's ns-2
setting) on 1.5 Mbit/s: 40 ms for Lai & Yao (about 15 of its packets in
flight), and a 7.5-packet bandwidth-delay product for Zhang & Bian, the scale
at which their Reno figure (88 % at 1 % loss) follows from the square-root law.
"""

from __future__ import annotations

from typing import Iterable

import numpy as np
import pandas as pd

from ..scenario import dumbbell
from ..sweeps import sweep
from ._result import ExperimentResult, flow_for

LAI_YAO_FAMILY = ("reno", "newreno", "sack", "fack", "rate-halving", "ssdr")

#: Lai & Yao, §4.1 and Fig. 5: "Vegas > Pseudo-Rate ≈ Rate-halving > SSDR ≈ FACK ≈
#: SACK > NewReno > Reno", as tiers from best to worst (≈ shares a tier).
LAI_YAO_FIG_5_ORDER = (("vegas",), ("pseudo-rate", "rate-halving"), ("ssdr", "fack", "sack"),
                       ("newreno",), ("reno",))

ZHANG_BIAN_UTILISATION = {("reno", 0.01): 0.883, ("sack", 0.01): 0.902, ("vegas", 0.01): 0.985,
                        ("reno", 0.05): 0.345, ("sack", 0.05): 0.427, ("vegas", 0.05): 0.750}
"""Zhang & Bian's table, "Effective Resource Utilization (1/2)", as fractions."""


def _runs(algorithms, rates, seeds, n_flows, *, workers=None, executor=None, store=None,
          progress=False, **path) -> pd.DataFrame:
    """One row per run (algorithm, rate, seed) with the flows' mean goodput and
    timeouts, the run's utilisation and its error text ("" if it ran)."""
    labels, scenarios = [], []
    for name in algorithms:
        for p in rates:
            for seed in seeds:
                labels.append((name, p, seed))
                scenarios.append(dumbbell(loss=p, seed=seed, flows=[flow_for(name)] * n_flows,
                                          **path))
    table = sweep(scenarios, workers=workers, executor=executor, store=store,
                  progress=progress)
    runs = table.groupby("base", sort=True).agg(
        goodput_bps=("goodput_bps", "mean"), timeouts=("timeouts", "mean"),
        utilisation=("utilisation", "first"), error=("error", "first"))
    runs.insert(0, "algorithm", [a for a, _, _ in labels])
    runs.insert(1, "rate", [p for _, p, _ in labels])
    runs.insert(2, "seed", [s for _, _, s in labels])
    return runs.reset_index(drop=True)


def link_errors(algorithms: Iterable[str] = LAI_YAO_FAMILY + ("vegas", "pseudo-rate"),
                rates: Iterable[float] = (0.0, 0.01, 0.02, 0.03, 0.04, 0.05), *,
                seeds: Iterable[int] = (1, 2, 3), n_flows: int = 1, bandwidth="1.5Mbps",
                rtt="40ms", buffer="1BDP", mss: int = 472, duration="100s",
                stack: str = "ns2", workers: int | None = None, executor=None, store=None,
                progress: bool = False) -> ExperimentResult:
    """Mean throughput of each algorithm as the link error rate rises.

    Args:
        algorithms: family members (algorithm names, or recovery names on
            Reno's law such as ``"prr"``).
        rates: link error rates (probability a data packet is lost).
        seeds: one run per seed; the table averages them.
        n_flows: flows of the same algorithm sharing the link in each run.
        bandwidth, rtt, buffer, mss, duration: the dumbbell; ``mss`` 472 makes
            Lai & Yao's 512-byte packets.
        stack: the TCP stack (``Scenario.stack``); ``"ns2"``, the simulator
            Lai & Yao ran.
        workers, executor, store, progress: how the runs are spread, kept and
            shown, as in :func:`ccsim.sweep`.

    Returns:
        One row per (algorithm, error rate), with ``goodput_bps`` (mean over
        seeds and flows), ``std_bps`` (across seeds), ``rank`` (1 = highest
        goodput at that error rate), ``timeouts`` (mean per flow), ``failed``
        (runs that raised, left out of the means; their errors are in
        ``data["runs"]``). ``data["ordering"]`` is, per error rate, the
        fraction of pairs in different tiers of Lai & Yao's rank order
        (:data:`LAI_YAO_FIG_5_ORDER`) that ccsim orders the same way
        (:func:`order_agreement`). ``plot()`` draws goodput against error rate.
    """
    runs = _runs(algorithms, rates, seeds, n_flows, bandwidth=bandwidth, rtt=rtt,
                 buffer=buffer, mss=mss, duration=duration, stack=stack, workers=workers,
                 executor=executor, store=store, progress=progress)
    runs = runs.rename(columns={"rate": "error_rate"}).drop(columns="utilisation")
    table = (runs.groupby(["algorithm", "error_rate"], sort=False)
             .agg(goodput_bps=("goodput_bps", "mean"), std_bps=("goodput_bps", "std"),
                  timeouts=("timeouts", "mean"),
                  failed=("error", lambda e: int((e != "").sum()))).reset_index())
    table["rank"] = (table.groupby("error_rate")["goodput_bps"]
                     .rank(ascending=False, method="min").astype(int))
    return ExperimentResult("throughput under link errors (Lai & Yao, Fig. 5)", table,
                            {"runs": runs, "ordering": order_agreement(table)}, _draw_errors)


def order_agreement(table: pd.DataFrame, order=LAI_YAO_FIG_5_ORDER) -> pd.Series:
    """Per error rate, the fraction of algorithm pairs from different tiers of
    ``order`` (best first) whose goodputs in ``table`` are ordered the same way;
    NaN where no two of ``table``'s algorithms are in different tiers."""
    tier = {name: i for i, names in enumerate(order) for name in names}
    out = {}
    for rate, rows in table.groupby("error_rate"):
        g = rows.set_index("algorithm")["goodput_bps"]
        pairs = [(a, b) for a in g.index for b in g.index
                 if a in tier and b in tier and tier[a] < tier[b]]
        out[rate] = np.mean([g[a] > g[b] for a, b in pairs]) if pairs else np.nan
    return pd.Series(out, name="ordering", dtype=float).rename_axis("error_rate")


def _draw_errors(result: ExperimentResult):
    from ..plot import new_figure as Figure

    fig = Figure(figsize=(7, 4.5), layout="constrained")
    ax = fig.subplots()
    # a marker and a dash pattern per algorithm as well as a colour: readable in
    # black and white, as the paper's figure is
    styles = zip("osD^vx+*<>ph", ("-", "--", ":", "-.") * 3)
    for (name, rows), (marker, dashes) in zip(result.table.groupby("algorithm", sort=False),
                                              styles):
        ax.errorbar(rows["error_rate"] * 100, rows["goodput_bps"] / 1e3,
                    yerr=rows["std_bps"].fillna(0) / 1e3, marker=marker, ms=5, capsize=2,
                    linestyle=dashes, mfc="none", label=name)
    ax.set_xlabel("link error rate (%)")
    ax.set_ylabel("mean goodput (kbit/s)")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.legend(title="algorithm", fontsize=8)
    ax.set_title("Mean throughput under random link errors")
    return fig


def utilisation_under_loss(algorithms: Iterable[str] = ("reno", "sack", "vegas"),
                           losses: Iterable[float] = (0.01, 0.05), *,
                           seeds: Iterable[int] = (1, 2, 3), bandwidth="1.5Mbps",
                           rtt="40ms", buffer="1BDP", mss: int = 960,
                           duration="100s", stack: str = "ns2", workers: int | None = None,
                           executor=None, store=None,
                           progress: bool = False) -> ExperimentResult:
    """Zhang & Bian's utilisation table: one flow per run, random loss on the link.

    The slides give no topology for this table. The default, 1.5 Mbit/s and
    40 ms with 1000-byte packets, is a 7.5-packet bandwidth-delay product:
    there ccsim's Reno and SACK come within a few points of the paper at both
    losses, where a 15-packet one (80 ms) reads 13-24 points below it; the
    square-root law puts Reno's 88 % at 1 % loss at about this scale.

    Algorithms not registered (Vegas, until it lands) are skipped. ``mss`` 960
    makes 1000-byte packets (ns-2's default ``packetSize_``); ``stack``
    ``"ns2"``, the simulator Zhang & Bian ran (``Scenario.stack``). ``workers``,
    ``executor``, ``store`` and ``progress`` are :func:`ccsim.sweep`'s.

    Returns:
        One row per (algorithm, loss), with ``utilisation`` (mean over seeds of
        the runs that did not raise) and ``paper_utilisation`` (the paper's figure, NaN
        where it has none). ``plot()`` draws both as grouped bars.
    """
    from .. import algorithms as registry

    present = [a for a in algorithms if a in registry.names() or a == "prr"]
    runs = _runs(present, losses, seeds, 1, bandwidth=bandwidth, rtt=rtt, buffer=buffer,
                 mss=mss, duration=duration, stack=stack, workers=workers, executor=executor,
                 store=store,
                 progress=progress).rename(columns={"rate": "loss"})
    table = runs.groupby(["algorithm", "loss"], sort=False)["utilisation"].mean().reset_index()
    table["paper_utilisation"] = [ZHANG_BIAN_UTILISATION.get((a, p), np.nan)
                         for a, p in zip(table["algorithm"], table["loss"])]
    return ExperimentResult("utilisation under random loss (Zhang & Bian)", table, {"runs": runs},
                            _draw_utilisation)


def _draw_utilisation(result: ExperimentResult):
    from ..plot import new_figure as Figure

    table = result.table
    fig = Figure(figsize=(7, 4.2), layout="constrained")
    ax = fig.subplots()
    labels = [f"{a}\n{p:.0%} loss" for a, p in zip(table["algorithm"], table["loss"])]
    x = np.arange(len(table))
    ax.bar(x - 0.2, table["utilisation"] * 100, 0.4, label="ccsim", color="0.25")
    ax.bar(x + 0.2, table["paper_utilisation"] * 100, 0.4, label="Zhang & Bian (ns-2)",
           color="0.75", hatch="//", edgecolor="0.3")
    ax.set_xticks(x, labels, fontsize=8)
    ax.set_ylabel("bottleneck utilisation (%)")
    ax.set_ylim(0, 105)
    ax.grid(axis="y", alpha=0.3)
    ax.legend()
    ax.set_title("Utilisation under random loss")
    return fig
