"""Kwon's delay × queue × loss grid: Reno, CUBIC, BBR and Vegas through one bottleneck.

Source: R. Kwon, "Comparison of TCP Congestion Control Algorithms" (CSE310
project, Stony Brook University Korea; Mininet, Linux TCP, iperf3 for 10 s):
two hosts and four routers with the bottleneck at router 1, delay 10 or
100 ms, queue 1000 or 5 packets, loss 0 or 2 %. The poster reports its
findings as statements, not numbers; :data:`KWON_FINDINGS` lists them and
:func:`delay_queue_loss` checks each one.

What the poster omits, and ccsim's choice: the bottleneck rate (10 Mbit/s,
Mininet's usual ``TCLink`` setting in such projects), where the delay sits
(ccsim takes it as the path's round-trip propagation delay: netem on one
router interface delays one direction only), and what "in competition" means
with two hosts (ccsim runs the four algorithms together, one flow each, as a
second table). Runs last 10 s, as the iperf3 runs; three seeds.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable

import pandas as pd

from ..scenario import dumbbell
from ..sweeps import sweep
from ._result import ExperimentResult

KWON_ALGORITHMS = ("reno", "cubic", "bbr", "vegas")

#: The poster's findings, as statements ccsim can check (name → text).
KWON_FINDINGS = {
    "vegas_low_at_10ms": "When the delay is 10ms, all algorithms except Vegas showed high "
                         "throughput.",
    "similar_at_100ms": "At a delay of 100ms, BBR, Cubic and Reno generally exhibited "
                        "similar performance.",
    "bigger_queue_more": "Generally, higher throughput was observed when the queue size was "
                         "1000 compared to a size of 5.",
    "bbr_best_big_queue": "BBR performed better than other algorithms in high queue size,",
    "bbr_worse_small_queue": "but worse in low size.",
    "bbr_cubic_best_no_loss": "At a packet loss rate of 0%, both BBR and Cubic showed "
                              "superior throughput",
    "bbr_keeps_at_loss": "At a packet loss rate of 2%, BBR maintained high throughput",
    "vegas_always_lowest": "Vegas, on the other hand, consistently exhibited lower throughput "
                           "compared to other algorithms.",
    "loss_lowers_all": "Overall, performance has slightly decreased for every algorithm.",
}


def delay_queue_loss(algorithms: Iterable[str] = KWON_ALGORITHMS, *,
                     delays: Iterable = ("10ms", "100ms"), queues: Iterable[int] = (5, 1000),
                     losses: Iterable[float] = (0.0, 0.02), bandwidth="10Mbps",
                     duration="10s", seeds: Iterable[int] = (1, 2, 3),
                     competition: bool = True, mode: str = "packet",
                     workers: int | None = None, executor=None, store=None,
                     progress: bool = False) -> ExperimentResult:
    """Each algorithm alone, and all together, in every (delay, queue, loss) cell.

    Returns:
        ``table``: rows per (algorithm, delay, queue, loss) of the runs
        alone, ``goodput_bps`` (mean over seeds). ``data["competition"]``:
        the same cells with the algorithms together, each one's ``share``.
        ``data["findings"]``: one row per :data:`KWON_FINDINGS` statement
        with ``reproduced`` (bool; NaN when an algorithm it names is not
        run). ``plot()`` draws throughput per cell, grouped as the poster's
        "sorted by delay / queue / loss" panels.
    """
    from .. import units

    algorithms = list(algorithms)
    cells = list(itertools.product(delays, queues, losses))
    rows, scenarios = [], []
    groups = [[a] for a in algorithms] + ([algorithms] if competition else [])
    for flows in groups:
        for (delay, queue, loss), seed in itertools.product(cells, seeds):
            rows.append({"together": len(flows) > 1, "delay": units.parse_time(delay, "delays"),
                         "queue": queue, "loss": loss, "seed": seed})
            scenarios.append(dumbbell(bandwidth, delay, buffer=queue, loss=loss, flows=flows,
                                      duration=duration, seed=seed))
    runs = sweep(scenarios, mode=mode, workers=workers, executor=executor, store=store,
                 progress=progress)
    # this recipe's own labels (the queue as given, ...) replace the sweep's
    meta = pd.DataFrame(rows)
    runs = runs.drop(columns=[c for c in meta if c in runs]).join(meta, on="base")
    keys = ["algorithm", "delay", "queue", "loss"]
    alone = runs[~runs.together].groupby(keys, sort=False).agg(
        goodput_bps=("goodput_bps", "mean"), timeouts=("timeouts", "mean")).reset_index()
    together = runs[runs.together].groupby(keys, sort=False).agg(
        share=("share", "mean"), goodput_bps=("goodput_bps", "mean")).reset_index()
    return ExperimentResult("delay × queue × loss (Kwon)", alone,
                            {"competition": together, "findings": findings(alone)}, _draw)


def findings(alone: pd.DataFrame) -> pd.DataFrame:
    """Check each of :data:`KWON_FINDINGS` against the runs alone (a table as
    :func:`delay_queue_loss` returns)."""
    names = set(alone.algorithm)

    def mean(by):  # algorithm × level of ``by`` → mean goodput
        return alone.groupby(["algorithm", by])["goodput_bps"].mean().unstack()

    d, q, p = mean("delay"), mean("queue"), mean("loss")
    small, big = min(q.columns), max(q.columns)
    short, long_ = min(d.columns), max(d.columns)
    no_loss, loss = min(p.columns), max(p.columns)
    others = [a for a in ("reno", "cubic") if a in names]
    cell_min = alone.loc[alone.groupby(["delay", "queue", "loss"])["goodput_bps"].idxmin()]
    checks = {}
    if {"vegas", "reno", "cubic", "bbr"} <= names:
        loss_based = d.loc[["reno", "cubic", "bbr"]]
        checks["vegas_low_at_10ms"] = d.loc["vegas", short] < 0.8 * loss_based[short].min()
        checks["similar_at_100ms"] = loss_based[long_].max() < 1.25 * loss_based[long_].min()
        checks["bbr_best_big_queue"] = q.loc["bbr", big] >= q.drop(index="bbr")[big].max()
        checks["bbr_worse_small_queue"] = q.loc["bbr", small] < q.loc[others, small].min()
        top2 = set(p[no_loss].nlargest(2).index)
        checks["bbr_cubic_best_no_loss"] = top2 == {"bbr", "cubic"}
        checks["bbr_keeps_at_loss"] = (p.loc["bbr", loss] >= 0.8 * p.loc["bbr", no_loss]
                                       and p[loss].idxmax() == "bbr")
        checks["vegas_always_lowest"] = bool((cell_min.algorithm == "vegas").all())
    checks["bigger_queue_more"] = bool((q[big] > q[small]).mean() > 0.5)
    checks["loss_lowers_all"] = bool((p[loss] < p[no_loss]).all())
    return pd.DataFrame([{"finding": k, "statement": text,
                          "reproduced": checks.get(k, float("nan"))}
                         for k, text in KWON_FINDINGS.items()])


def _draw(result):
    from ..plot import new_figure as Figure

    t = result.table.copy()
    t["cell"] = [f"{d * 1e3:.0f} ms\nq {q}\n{p:.0%}" for d, q, p in
                 zip(t.delay, t.queue, t.loss)]
    table = t.pivot_table(index="cell", columns="algorithm", values="goodput_bps",
                          sort=False) / 1e6
    fig = Figure(figsize=(9, 4.2), layout="constrained")
    ax = fig.subplots()
    width = 0.8 / table.shape[1]
    shades = ["0.1", "0.4", "0.65", "0.9"]
    hatches = ["", "//", "..", "xx"]
    for i, name in enumerate(table.columns):
        ax.bar([x + i * width for x in range(len(table))], table[name], width,
               label=name, color=shades[i % 4], hatch=hatches[i % 4], edgecolor="k", lw=0.5)
    ax.set_xticks([x + 0.4 - width / 2 for x in range(len(table))], table.index, fontsize=7)
    ax.set_ylim(0, 1.2 * table.to_numpy().max())
    ax.set_ylabel("throughput alone (Mbit/s)")
    ax.set_xlabel("delay, queue (packets), loss")
    ax.legend(fontsize=8, ncol=4)
    ax.set_title(result.name)
    return fig
