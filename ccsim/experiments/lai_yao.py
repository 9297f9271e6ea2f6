"""Lai & Yao's Tables 2–4: fairness across RTTs, a new arrival, and sharing with Reno.

Source: Y.-C. Lai, C.-L. Yao, "TCP congestion control algorithms and a
performance comparison", §4.2–4.4. ns-2, 512-byte packets, the family Reno,
NewReno, SACK, FACK, Rate-Halving, SSDR, Vegas and Pseudo-Rate.

* Table 2 (:func:`unfairness`): n connections, half "short" (0.4 ms from the
  source to router A and from router B to the destination) and half "long"
  (40 ms each), 50 s; the unfairness index UF.
* Table 3 (:func:`new_arrival`): n connections from the start, one more at
  10 s; mean throughput of the new and the old ones over 10–50 s.
* Table 4 (:func:`reno_interop`): n/2 Reno connections and n/2 of another
  algorithm; mean throughput of each side.

The paper's Fig. 4 (the network model) is not in its text, so the bottleneck
is not stated. Its tables add up to about 16,400 packets in 50 s (Table 2,
n = 2), 1.34 Mbit/s of 512-byte packets: a T1. ccsim therefore uses the
1.5 Mbit/s bottleneck of :func:`~ccsim.experiments.link_errors`, a 20 ms
one-way bottleneck delay (so a short connection's RTT is 41.6 ms, close to
that recipe's 40 ms), a one-BDP drop-tail buffer (about 15 packets) and
three seeds (with no random loss the runs are deterministic, so the seeds
matter only where a scenario adds randomness). The paper's throughputs are counts whose unit it does not
state; ccsim compares unit-free figures: shares, ratios, UF, the winner.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd

from ..metrics import unfairness as uf_index
from ..scenario import Flow, dumbbell
from ..sweeps import sweep
from ._result import ExperimentResult
from .pairwise import outcome

LAI_YAO_FAMILY = ("reno", "newreno", "sack", "fack", "rate-halving", "ssdr", "vegas",
                  "pseudo-rate")

#: Lai & Yao, Table 2, transcribed: ``[algorithm][n]`` is (short, long, UF %),
#: the mean throughput of a short and of a long connection and the UF index.
LAI_YAO_TABLE_2: dict[str, dict[int, tuple[float, float, float]]] = {
    "reno": {2: (15649, 695, 182.99), 4: (8139.0, 330.5, 184.39)},
    "newreno": {2: (16335, 289, 193.04), 4: (8315.5, 284.5, 186.76)},
    "sack": {2: (15271, 1838, 157.02), 4: (8245.5, 472.0, 178.34)},
    "fack": {2: (14823, 1995, 152.55), 4: (7868.5, 724.0, 166.29)},
    "rate-halving": {2: (15484, 1973, 154.79), 4: (8336.5, 621.5, 172.24)},
    "ssdr": {2: (15640, 824, 179.98), 4: (8579.0, 340.0, 184.75)},
    "vegas": {2: (14427, 3212, 127.16), 4: (5163.5, 3828.5, 29.69)},
    "pseudo-rate": {2: (10229, 7688, 28.36), 4: (4990.5, 4074.5, 20.20)},
}

#: Lai & Yao, Table 3, transcribed: ``[algorithm][n]`` is (new, old), the mean
#: throughput over 10–50 s of the connection arriving at 10 s and of the n old ones.
LAI_YAO_TABLE_3: dict[str, dict[int, tuple[float, float]]] = {
    "reno": {1: (6322, 7113.5), 2: (4196, 4772.00), 3: (3174, 3587.00)},
    "newreno": {1: (6839, 7132.5), 2: (4678, 4780.66), 3: (3521, 3571.75)},
    "sack": {1: (6669, 7110.0), 2: (4347, 4739.66), 3: (3244, 3543.00)},
    "fack": {1: (6899, 7140.0), 2: (4463, 4762.00), 3: (3302, 3569.75)},
    "rate-halving": {1: (6500, 7200.5), 2: (4430, 4818.66), 3: (3308, 3627.25)},
    "ssdr": {1: (5137, 7324.0), 2: (4414, 4876.66), 3: (3732, 3666.75)},
    "vegas": {1: (5597, 7324.0), 2: (5171, 4882.33), 3: (3864, 3661.25)},
    "pseudo-rate": {1: (8309, 7324.0), 2: (6317, 4882.33), 3: (4816, 3661.75)},
}

#: Lai & Yao, Table 4, transcribed: ``[algorithm][n]`` is (Reno, other), the mean
#: throughput of the n/2 Reno connections and of the n/2 others.
LAI_YAO_TABLE_4: dict[str, dict[int, tuple[float, float]]] = {
    "newreno": {2: (8663, 8257), 4: (4181.0, 4469.5)},
    "sack": {2: (6517, 11043), 4: (3969.0, 4838.5)},
    "fack": {2: (7088, 10593), 4: (3757.5, 5139.5)},
    "rate-halving": {2: (7665, 10033), 4: (3605.5, 5322.0)},
    "ssdr": {2: (5868, 11721), 4: (3414.0, 5592.5)},
    "vegas": {2: (12468, 5348), 4: (5696.5, 2982.0)},
    "pseudo-rate": {2: (12943, 4745), 4: (5123.5, 3889.0)},
}

_PATH = {"bandwidth": "1.5Mbps", "rtt": "41.6ms", "buffer": "1BDP", "mss": 472,
         "stack": "ns2"}  # ns-2's agents, which Lai & Yao ran (Scenario.stack)


def _flows(rows, seeds, mode, path, duration, workers, executor, store, progress,
           runner=None):
    """Run ``rows`` (labels, flows) once per seed; one row per flow with the
    labels, ``seed``, ``goodput_bps``, ``share``, ``base_rtt`` and ``error``."""
    labels, scenarios = [], []
    for label, flows in rows:
        for seed in seeds:
            labels.append({**label, "seed": seed})
            scenarios.append(dumbbell(flows=flows, duration=duration, seed=seed, **path))
    runs = sweep(scenarios, mode=mode, workers=workers, executor=executor, store=store,
                 progress=progress, runner=runner)
    meta = pd.DataFrame(labels)
    keep = ["base", "flow", "goodput_bps", "share", "base_rtt", "error"]
    out = runs[keep + (["catch_up"] if "catch_up" in runs else [])].join(meta, on="base")
    failed = out.groupby("base")["error"].transform(lambda e: (e != "").any())
    out.attrs["failed"] = int(out.loc[failed, "base"].nunique())
    return out[~failed]


def _beside_paper(table: pd.DataFrame, paper: dict, columns: list[str]) -> None:
    """Add the paper's pair of figures for each (algorithm, n) row as ``columns``
    (NaN where the paper gives none)."""
    rows = [paper.get(a, {}).get(n, (np.nan,) * 2) for a, n in zip(table.algorithm, table.n)]
    table[columns] = pd.DataFrame(rows, index=table.index)


def _agreement(ours_a, ours_b, paper_a, paper_b) -> float:
    """Fraction of rows where the same side wins (:func:`outcome`, 10 % margin)."""
    return float(np.mean(outcome(ours_a, ours_b) == outcome(paper_a, paper_b)))


def unfairness(algorithms: Iterable[str] = LAI_YAO_FAMILY, ns: Iterable[int] = (2, 4), *,
               seeds: Iterable[int] = (1, 2, 3), short_rtt="41.6ms", long_rtt="201.6ms",
               duration="50s", mode: str = "packet", workers: int | None = None,
               executor=None, store=None, progress: bool = False,
               **path) -> ExperimentResult:
    """Lai & Yao, Table 2: half the connections short, half long; the UF index.

    Args:
        algorithms: every connection of a run uses the same one.
        ns: connections per run (even; half short, half long).
        short_rtt, long_rtt: two-way propagation delays. The paper's access
            links are 0.4 ms and 40 ms each way, so the long RTT is the short
            one plus 158.4 ms.
        duration: 50 s, as the paper.
        mode, workers, executor, store, progress: as in :func:`ccsim.sweep`.
        **path: overrides of the dumbbell (``bandwidth``, ``buffer``, ``mss``).

    Returns:
        One row per (algorithm, n), with ``short_bps``, ``long_bps`` (mean per
        connection, over seeds), ``uf`` (%), and the paper's ``paper_short``,
        ``paper_long``, ``paper_uf``. ``data["agreement"]``: ``biased`` (the
        fraction of rows where the long connections get less, as in every row
        of the paper), ``uf_rank`` (Spearman correlation of UF with the
        paper's across algorithms, per n). ``plot()`` draws UF beside the
        paper's, algorithms in the paper's order.
    """
    from .. import units

    ns = list(ns)
    for n in ns:
        if n < 2 or n % 2:
            raise ValueError(f"ns: {n!r} is not allowed; use even numbers of connections >= 2")
    short, long_ = units.parse_time(short_rtt, "short_rtt"), units.parse_time(long_rtt, "long_rtt")
    rows = [({"algorithm": a, "n": n},
             [Flow(a, rtt=short if i % 2 == 0 else long_) for i in range(n)])
            for a in algorithms for n in ns]
    flows = _flows(rows, seeds, mode, {**_PATH, "rtt": short_rtt, **path}, duration,
                   workers, executor, store, progress)
    flows["long"] = flows["base_rtt"] > (short + long_) / 2
    per_run = flows.groupby(["algorithm", "n", "seed"], sort=False).apply(
        lambda r: pd.Series({"short_bps": r.goodput_bps[~r.long].mean(),
                             "long_bps": r.goodput_bps[r.long].mean(),
                             "uf": uf_index(r.goodput_bps, r.base_rtt)}),
        include_groups=False)
    table = per_run.groupby(["algorithm", "n"], sort=False).mean().reset_index()
    paper = [LAI_YAO_TABLE_2.get(a, {}).get(n, (np.nan,) * 3)
             for a, n in zip(table.algorithm, table.n)]
    table[["paper_short", "paper_long", "paper_uf"]] = pd.DataFrame(paper, index=table.index)
    known = table.dropna(subset=["paper_uf"])
    agreement = {"biased": float(np.mean(known.long_bps < known.short_bps)),
                 "uf_rank": {n: float(g.uf.corr(g.paper_uf, method="spearman"))
                             for n, g in known.groupby("n")}}
    return ExperimentResult("unfairness across RTTs (Lai & Yao, Table 2)", table,
                            {"agreement": agreement, "failed": flows.attrs["failed"]},
                            _draw_uf)


def new_arrival(algorithms: Iterable[str] = LAI_YAO_FAMILY, ns: Iterable[int] = (1, 2, 3), *,
                seeds: Iterable[int] = (1, 2, 3), arrival="10s", duration="50s",
                mode: str = "packet", workers: int | None = None, executor=None, store=None,
                progress: bool = False, **path) -> ExperimentResult:
    """Lai & Yao, Table 3: n connections, and one more arriving at ``arrival``.

    Args:
        algorithms: every connection of a run uses the same one.
        ns: old connections per run.
        arrival: when the new connection opens (10 s in the paper).
        duration: 50 s; the means are over ``arrival``–``duration``, as the paper's.
        mode, workers, executor, store, progress: as in :func:`ccsim.sweep`.
        **path: overrides of the dumbbell (``bandwidth``, ``rtt``, ``buffer``, ``mss``).

    Returns:
        One row per (algorithm, n), with ``new_share`` and ``old_share`` (the new
        connection's and an old one's mean share of the link while all run),
        ``new_over_old`` (their ratio; 1 is an even split), ``catch_up_s``
        (the transient: seconds from the arrival until the new connection's
        throughput over a 1 s window first reaches 80 % of an old one's mean;
        NaN if it never does; the paper times the transient only in words)
        and the paper's
        ``paper_new``, ``paper_old``, ``paper_new_over_old``.
        ``data["agreement"]`` is the fraction of rows where the same side gets
        more (a 10 % margin, :func:`~ccsim.experiments.pairwise.outcome`).
    """
    rows = [({"algorithm": a, "n": n}, [Flow(a)] * n + [Flow(a, start=arrival)])
            for a in algorithms for n in ns]
    flows = _flows(rows, seeds, mode, {**_PATH, **path}, duration, workers, executor,
                   store, progress, runner=arrival_run)
    flows["new"] = flows["flow"] == flows["n"]
    per_run = flows.groupby(["algorithm", "n", "seed"], sort=False).apply(
        lambda r: pd.Series({"new_share": r.share[r.new].mean(),
                             "old_share": r.share[~r.new].mean(),
                             "catch_up_s": r.catch_up.iloc[0]}), include_groups=False)
    table = per_run.groupby(["algorithm", "n"], sort=False).mean().reset_index()
    table["new_over_old"] = table.new_share / table.old_share
    _beside_paper(table, LAI_YAO_TABLE_3, ["paper_new", "paper_old"])
    table["paper_new_over_old"] = table.paper_new / table.paper_old
    known = table.dropna(subset=["paper_new"])
    agreement = _agreement(known.new_share, known.old_share, known.paper_new, known.paper_old)
    return ExperimentResult("a new arrival (Lai & Yao, Table 3)", table,
                            {"agreement": agreement, "failed": flows.attrs["failed"]},
                            _ratio_drawer("new_over_old", "paper_new_over_old",
                                          "new / old connection's throughput"))


def arrival_run(scenario, mode: str = "packet"):
    """:func:`ccsim.run`, adding ``catch_up`` to the metrics: seconds from the
    last flow's start until its goodput over a 1 s window first reaches 80 % of
    the other flows' mean over the same window (NaN if it never does). The
    runner :func:`new_arrival` gives :func:`ccsim.sweep`."""
    from ..run import run

    result = run(scenario, mode=mode)
    arrival = scenario.flows[-1].start
    goodput = result.traces.query("variable == 'goodput'").pivot(
        index="time", columns="flow", values="value")
    after = goodput[goodput.index >= arrival]
    window = after.groupby(((after.index - arrival) // 1.0).astype(int)).mean()
    new, old = window.iloc[:, -1], window.iloc[:, :-1].mean(axis=1)
    caught = new[new >= 0.8 * old].index
    result.metrics["catch_up"] = float(caught[0] + 1.0) if len(caught) else float("nan")
    return result


def reno_interop(algorithms: Iterable[str] = LAI_YAO_FAMILY[1:], ns: Iterable[int] = (2, 4), *,
                 seeds: Iterable[int] = (1, 2, 3), duration="50s", mode: str = "packet",
                 workers: int | None = None, executor=None, store=None,
                 progress: bool = False, **path) -> ExperimentResult:
    """Lai & Yao, Table 4: n/2 Reno connections share the link with n/2 of another.

    The paper does not give this run's length; ccsim uses its other tables'
    50 s. Flows alternate (Reno, other, Reno, ...), all starting at 0.

    Returns:
        One row per (algorithm, n), with ``reno_share`` and ``other_share`` (per
        connection), ``other_over_reno`` and the paper's ``paper_reno``,
        ``paper_other``, ``paper_other_over_reno``. ``data["agreement"]`` is
        the fraction of rows with the same winner (10 % margin).
    """
    ns = list(ns)
    for n in ns:
        if n < 2 or n % 2:
            raise ValueError(f"ns: {n!r} is not allowed; use even numbers of connections >= 2")
    rows = [({"algorithm": a, "n": n}, [Flow("reno"), Flow(a)] * (n // 2))
            for a in algorithms for n in ns]
    flows = _flows(rows, seeds, mode, {**_PATH, **path}, duration, workers, executor,
                   store, progress)
    flows["reno"] = flows["flow"] % 2 == 0
    per_run = flows.groupby(["algorithm", "n", "seed"], sort=False).apply(
        lambda r: pd.Series({"reno_share": r.share[r.reno].mean(),
                             "other_share": r.share[~r.reno].mean()}), include_groups=False)
    table = per_run.groupby(["algorithm", "n"], sort=False).mean().reset_index()
    table["other_over_reno"] = table.other_share / table.reno_share
    _beside_paper(table, LAI_YAO_TABLE_4, ["paper_reno", "paper_other"])
    table["paper_other_over_reno"] = table.paper_other / table.paper_reno
    known = table.dropna(subset=["paper_reno"])
    agreement = _agreement(known.other_share, known.reno_share, known.paper_other,
                           known.paper_reno)
    return ExperimentResult("interoperation with Reno (Lai & Yao, Table 4)", table,
                            {"agreement": agreement, "failed": flows.attrs["failed"]},
                            _ratio_drawer("other_over_reno", "paper_other_over_reno",
                                          "algorithm's throughput / Reno's"))


def _bars(result, ours, paper, ylabel, even=False):
    """Grouped bars, ccsim beside the paper, one panel per n."""
    from ..plot import new_figure as Figure

    table = result.table
    groups = list(table.groupby("n"))
    fig = Figure(figsize=(7.5, 2.6 * len(groups) + 0.6), layout="constrained")
    axes = np.atleast_1d(fig.subplots(len(groups), 1, sharex=True))
    for ax, (n, rows) in zip(axes, groups):
        x = np.arange(len(rows))
        ax.bar(x - 0.2, rows[ours], 0.4, label="ccsim", color="0.25")
        ax.bar(x + 0.2, rows[paper], 0.4, label="Lai & Yao (ns-2)", color="0.75",
               hatch="//", edgecolor="0.3")
        if even:
            ax.axhline(1, color="k", lw=0.8)  # an even split
        ax.set_xticks(x, rows["algorithm"], rotation=30, ha="right")
        ax.set_ylabel(ylabel)
        ax.set_title(f"n = {n}", fontsize=9)
        ax.grid(axis="y", alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.suptitle(result.name)
    return fig


def _draw_uf(result):
    return _bars(result, "uf", "paper_uf", "UF (%)")


def _ratio_drawer(ours, paper, ylabel):
    return lambda result: _bars(result, ours, paper, ylabel, even=True)
