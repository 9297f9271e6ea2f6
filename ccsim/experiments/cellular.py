"""Delay-based and model-based laws on a cellular-like link (Sprout's model).

Sources: K. Winstein, A. Sivaraman, H. Balakrishnan, "Stochastic Forecasts
Achieve High Throughput and Low Delay over Cellular Networks", NSDI 2013 (the
link model: deliveries a Poisson process whose rate wanders, and the
throughput-against-delay comparison that Pantheon and most congestion-control
papers since make on such traces). The trace is generated here
(:func:`ccsim.cellular_trace`), not downloaded.
"""

from __future__ import annotations

from typing import Any, Iterable

import numpy as np
import pandas as pd

from ..run import run
from ..scenario import dumbbell
from ..scenario.schedule import cellular_trace
from ._result import ExperimentResult

ALGORITHMS = ("vegas", "copa", "bbr")


def cellular_link(algorithms: Iterable[str] = ALGORITHMS, *, mean: Any = "10Mbps",
                  volatility: float = 0.5, rtt: Any = "40ms", buffer: Any = "2BDP",
                  duration: Any = "20s", seed: int = 1, progress: bool = False
                  ) -> ExperimentResult:
    """Each algorithm alone on the same synthetic cellular trace (Sprout's
    link model), its goodput against its delay (packet engine).

    Args:
        algorithms: one run each, one flow alone.
        mean, volatility: the trace (:func:`ccsim.cellular_trace`: its mean
            rate, and the spread of its log rate), as long as the run.
        rtt, buffer, duration, seed: the dumbbell; ``seed`` also generates
            the trace.
        progress: a progress bar per run.

    Returns:
        ``table``: one row per algorithm: ``algorithm``, ``goodput_bps`` (its
        lifetime goodput), ``utilisation`` (of the trace's capacity over the
        run), ``mean_rtt`` and ``p95_rtt`` (s, the sampled RTTs), ``queue``
        (mean bottleneck backlog, packets) and ``retransmits``.
        ``data["results"]``: each algorithm's :class:`~ccsim.Result`;
        ``data["trace"]``: the trace.
        ``plot()``: :func:`ccsim.plot.plot_capacity` of each run, one panel
        per algorithm, the capacity shaded under the goodput.
    """
    algorithms = list(algorithms)
    trace = cellular_trace(duration, mean, volatility=volatility, seed=seed)
    results, rows = {}, []
    for name in algorithms:
        sc = dumbbell(bandwidth=trace, rtt=rtt, buffer=buffer, flows=[name],
                      duration=duration, seed=seed)
        res = run(sc, progress=progress)
        results[name] = res
        s = res.summary
        rtts = res.series("rtt")[0].dropna()
        rows.append({"algorithm": name, "goodput_bps": s["lifetime_goodput_bps"][0],
                     "utilisation": res.metrics["utilisation"],
                     "mean_rtt": s["mean_rtt"][0],
                     "p95_rtt": float(np.percentile(rtts, 95)) if len(rtts) else np.nan,
                     "queue": float(res.series("queue")["queue"].mean()),
                     "retransmits": int(s["retransmits"][0])})

    def draw(ex: ExperimentResult):
        from ..plot import new_figure, plot_capacity

        runs = ex.data["results"]
        fig = new_figure(figsize=(9, 2.4 * len(runs)))
        axes = fig.subplots(len(runs), 1, sharex=True, squeeze=False)[:, 0]
        for ax, (name, res) in zip(axes, runs.items()):
            plot_capacity(res, smooth="200ms", ax=ax)
            row = ex.table.set_index("algorithm").loc[name]
            ax.set_title(f"{name}: {row['goodput_bps'] / 1e6:.1f} Mbit/s, "
                         f"mean RTT {row['mean_rtt'] * 1e3:.0f} ms", fontsize=9)
            ax.set_ylabel("Mbit/s")
            if ax is not axes[-1]:
                ax.set_xlabel("")
        fig.tight_layout()
        return fig

    return ExperimentResult("algorithms on a cellular-like trace", pd.DataFrame(rows),
                            {"results": results, "trace": trace}, draw)
