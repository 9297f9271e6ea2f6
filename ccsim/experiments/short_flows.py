"""Short flows behind a bulk flow: completion times by size (DCTCP's web search).

Sources: M. Alizadeh et al., "Data Center TCP (DCTCP)", SIGCOMM 2010 (the
web-search flow sizes); the "FCT over the ideal" of HPCC (Li et al., SIGCOMM
2019) and Homa (Montazeri et al., SIGCOMM 2018); fq_codel, RFC 8290. The
classic result: short flows that share a drop-tail bottleneck with a bulk
flow wait behind the queue it keeps (CUBIC's buffer-filling, BBR's startup
and probes), and a flow-queueing scheduler takes them out of that queue.
"""

from __future__ import annotations

from typing import Any, Iterable

import pandas as pd

from ..run import run
from ..scenario import Arrivals, dumbbell
from ._result import ExperimentResult

#: (label, bulk flow's algorithm, bottleneck queue): behind CUBIC, behind BBR,
#: and behind CUBIC under fq_codel.
SETTINGS = (("behind CUBIC", "cubic", "droptail"), ("behind BBR", "bbr", "droptail"),
            ("behind CUBIC, fq_codel", "cubic", "fq_codel"))


def short_flow_fct(settings: Iterable[tuple[str, str, str]] = SETTINGS, *,
                   short: str = "cubic", load: float = 0.5, sizes: Any = "websearch",
                   percentiles: Iterable[float] = (50, 99), bandwidth: Any = "10Mbps",
                   rtt: Any = "20ms", buffer: Any = "2BDP", duration: Any = "200s",
                   seed: int = 1, progress: bool = False) -> ExperimentResult:
    """Short flows of DCTCP's web-search sizes at half load beside one bulk
    flow: FCT and slowdown percentiles by size, behind CUBIC, behind BBR and
    under fq_codel (packet engine).

    Every setting runs the same arrivals (same seed, same sizes and times):
    ``short`` flows offered at ``load`` of the bottleneck, sizes from
    ``sizes`` (:class:`ccsim.Arrivals`), beside one bulk flow from t = 0.

    Args:
        settings: ``(label, bulk algorithm, queue)`` per run.
        short, load, sizes: the arriving flows.
        percentiles: of FCT and slowdown, per size bucket.
        bandwidth, rtt, buffer, duration, seed: the dumbbell. The web-search
            mean is 1.7 MB, so at 10 Mbit/s and half load about 0.37 flows
            arrive per second: 200 s gives some 70.
        progress: a progress bar per run.

    Returns:
        ``table``: one row per (setting, size bucket, percentile): ``setting``,
        ``bulk``, ``queue``, ``bucket``, ``flows``, ``finished``,
        ``percentile``, ``fct`` (s), ``slowdown`` (FCT over the ideal,
        :func:`ccsim.metrics.ideal_fct`) and ``bulk_goodput_bps``.
        ``data["results"]``: each setting's :class:`~ccsim.Result`.
        ``plot()``: :func:`ccsim.plot.plot_fct` of the settings side by side.
    """
    settings = list(settings)
    percentiles = list(percentiles)
    results, tables = {}, []
    for label, bulk, queue in settings:
        sc = dumbbell(bandwidth, rtt, buffer, queue=queue,
                      flows=[bulk, Arrivals(short, load=load, sizes=sizes)],
                      duration=duration, seed=seed, trace_interval="0.5s")
        res = run(sc, progress=progress)
        results[label] = res
        table = res.fct(percentiles)
        table.insert(0, "setting", label)
        table.insert(1, "bulk", bulk)
        table.insert(2, "queue", queue)
        table["bulk_goodput_bps"] = res.summary["lifetime_goodput_bps"][0]
        tables.append(table)

    def draw(ex: ExperimentResult):
        from ..plot import plot_fct

        fig = plot_fct(list(ex.data["results"].values()), labels=list(ex.data["results"]),
                       percentiles=percentiles)
        fig.axes[0].set_title(f"{short} flows ({sizes if isinstance(sizes, str) else 'sizes'}, "
                              f"load {load:g}) beside one bulk flow")
        return fig

    return ExperimentResult("short flows' FCT behind a bulk flow", pd.concat(
        tables, ignore_index=True), {"results": results}, draw)
