"""How each study's agreement with its paper moves with a setting the paper
leaves unstated, for docs/studies.md ("how the agreement moves with the
unstated setting").

Run: nice python benchmarks/studies_sensitivity.py [--workers N] [STUDY ...]
(every study when none is given; one worker by default). Each study runs its
recipe once per value of the open setting, the recipe's other defaults kept,
and prints one line per value with the recipe's own agreement measure.

* kwon: the bottleneck rate (the poster gives none; default 10 Mbit/s) →
  statements of the nine reproduced.
* lai-yao-buffer, lai-yao-rate: the bottleneck buffer (default one BDP) and
  rate (default 1.5 Mbit/s; the tables add up to about 1.34 Mbit/s, so only
  rates above it are plausible) → Fig. 5's order, Table 2's UF rank
  correlations, Tables 3 and 4's same-side fractions.
* zhang-bian-utilisation, zhang-bian-competition: the path's round trip
  (the slides state none; default 40 ms, a 7.5-packet BDP at 1.5 Mbit/s) →
  gap to the utilisation table in points; Vegas' share at the slides'
  10-packet buffer against their 30 %.
* matrix-fluid, matrix-packet, start-order: the buffer (Esterhuizen &
  Krzesinski state none; default 100 packets, a switch port's; 1000 is
  Linux's txqueuelen, the default before these runs) →
  outcomes matching Table I and the mean gap of the first flow's share in
  points; the packet engine on a five-algorithm subset, the full 12 × 12 in
  the fluid engine.
"""

import argparse
import time

import numpy as np
import pandas as pd

from ccsim import experiments as ex
from ccsim.experiments.pairwise import TABLE_I


def kwon(workers):
    for rate in ("1Mbps", "10Mbps", "100Mbps"):
        res = ex.delay_queue_loss(bandwidth=rate, competition=False, workers=workers)
        f = res.data["findings"].set_index("finding")["reproduced"]
        yield {"bandwidth": rate, "reproduced": f"{int(f.sum())} of {len(f)}",
               "which": ", ".join(f.index[f.astype(bool)])}


def _lai_yao(workers, **path):
    fig5 = ex.link_errors(workers=workers, **path).data["ordering"]
    t2 = ex.unfairness(workers=workers, **path).data["agreement"]
    t3 = ex.new_arrival(workers=workers, **path).data["agreement"]
    t4 = ex.reno_interop(workers=workers, **path).data["agreement"]
    return {"fig5_order_1-5%": round(float(fig5.drop(0.0, errors="ignore").mean()), 3),
            "t2_biased": round(t2["biased"], 3),
            "t2_uf_rank_n2": round(t2["uf_rank"][2], 2), "t2_uf_rank_n4": round(t2["uf_rank"][4], 2),
            "t3_same_side": f"{round(t3 * 24)} of 24", "t4_same_winner": f"{round(t4 * 14)} of 14"}


def lai_yao_buffer(workers):
    for buffer in ("0.5BDP", "1BDP", "2BDP", 50):  # 50 packets: ns-2's default queue limit
        yield {"buffer": buffer, **_lai_yao(workers, buffer=buffer)}


def lai_yao_rate(workers):
    for rate in ("1.5Mbps", "3Mbps"):
        yield {"bandwidth": rate, **_lai_yao(workers, bandwidth=rate)}


def zhang_bian_utilisation(workers):
    for rtt in ("20ms", "40ms", "80ms", "160ms"):
        t = ex.utilisation_under_loss(rtt=rtt, workers=workers).table
        gap = (t.utilisation - t.paper_utilisation).abs() * 100
        u = t.set_index(["algorithm", "loss"]).utilisation
        order = all(u["vegas", p] > u["sack", p] > u["reno", p] for p in (0.01, 0.05))
        yield {"rtt": rtt, "bdp_packets": round(1.5e6 * float(rtt[:-2]) / 1e3 / 8000, 2),
               "mean_gap_points": round(gap.mean(), 1), "max_gap_points": round(gap.max(), 1),
               "vegas>sack>reno": order}


def zhang_bian_competition(workers):
    pairs = (("reno", "vegas"), ("sack", "vegas"))
    for rtt in ("20ms", "40ms", "80ms"):
        t = ex.competition(pairs, buffers=(3, 10, 100), rtt=rtt, workers=workers).table
        share = t.set_index(["first", "buffer"]).first_share
        yield {"rtt": rtt, "reno_at_10": round(share["reno", 10], 3),
               "sack_at_10": round(share["sack", 10], 3), "paper_at_10": 0.697,
               "reno_at_3": round(share["reno", 3], 3), "reno_at_100": round(share["reno", 100], 3)}


def _gap(table):
    """Mean |first flow's share − Table I's| over the pairs Table I has, in points."""
    t = table.dropna(subset=["paper_first_bps"])
    ours = t.first_bps / (t.first_bps + t.second_bps)
    paper = t.paper_first_bps / (t.paper_first_bps + t.paper_second_bps)
    return round(float((ours - paper).abs().mean() * 100), 1)


def matrix_fluid(workers):
    for buffer in (1000, 100, 20):
        res = ex.pairwise_matrix(list(TABLE_I), buffer=buffer, mode="fluid", workers=workers)
        yield {"buffer": buffer, "outcomes_agree": f"{res.data['agreement']:.0%}",
               "mean_gap_points": _gap(res.table)}


SUBSET = ["reno", "cubic", "illinois", "westwood", "vegas"]


def matrix_packet(workers):
    for buffer in (1000, 100, 20):
        res = ex.pairwise_matrix(SUBSET, buffer=buffer, workers=workers)
        yield {"buffer": buffer, "pairs": len(res.table),
               "outcomes_agree": f"{res.data['agreement']:.0%}",
               "mean_gap_points": _gap(res.table)}


def start_order(workers):
    for mode in ("fluid", "packet"):
        for buffer in (1000, 100, 20):
            res = ex.start_order(buffer=buffer, mode=mode, workers=workers)
            t = res.table
            yield {"mode": mode, "buffer": buffer,
                   "classified_as_paper": f"{int((t.depends == t.paper_depends).sum())} of {len(t)}",
                   "depends": ", ".join(t.b[t.depends])}


STUDIES = {f.__name__.replace("_", "-"): f for f in (
    kwon, lai_yao_buffer, lai_yao_rate, zhang_bian_utilisation, zhang_bian_competition,
    matrix_fluid, matrix_packet, start_order)}

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("studies", nargs="*", metavar="STUDY",
                        help=f"any of {', '.join(STUDIES)} (default: all)")
    parser.add_argument("--workers", type=int, default=1, help="processes per recipe (default 1)")
    args = parser.parse_args()
    unknown = [s for s in args.studies if s not in STUDIES]
    if unknown:
        parser.error(f"unknown study {unknown[0]!r}; choose from {', '.join(STUDIES)}")
    pd.set_option("display.width", 200)
    pd.set_option("display.max_colwidth", 120)
    np.seterr(all="ignore")
    for name in args.studies or STUDIES:
        started = time.perf_counter()
        rows = pd.DataFrame(list(STUDIES[name](args.workers)))
        print(f"## {name} ({time.perf_counter() - started:.0f} s)")
        print(rows.to_string(index=False))
        print(flush=True)
