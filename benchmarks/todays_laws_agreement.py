"""Packet vs fluid agreement of the algorithms of today (BBRv3, Copa,
LEDBAT++, CDG, NV) on scenarios fixed before any tuning: 10 Mbit/s, 40 ms.
Per scenario: the largest per-flow share gap (points; in brackets each
flow's share, packet:fluid), each engine's utilisation, queue drop rate
(bottleneck drops / data packets) and random loss rate (the link's random
losses / data packets); per law the median and worst share gap over the scenarios
of two flows. With ``--seeds N`` each engine's
figures are means over seeds 1..N, as ``fluid_agreement.py`` measures the
fluid engine's published agreement (``--seeds 1``: seed 1 alone).

    PYTHONPATH=. python benchmarks/todays_laws_agreement.py [--duration 30] [--only bbr3]
        [--seeds 5] [--workers 1] [--store PATH]

The packet runs are cached in a SQLite sweep store (``--store``, gitignored;
default ``benchmarks/todays_laws-<hash>.sqlite``, the hash of ccsim's sources
outside the fluid engine as in ``fluid_agreement.py``), so a rerun after a
change to a fluid law costs the fluid runs alone.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import ccsim  # noqa: E402
from fluid_agreement import HERE, packet_fingerprint  # noqa: E402

SCENARIOS = {
    "bbr3": [("alone", "0.25BDP", ["bbr3"], 0.0), ("alone", "1BDP", ["bbr3"], 0.0),
             ("alone", "4BDP", ["bbr3"], 0.0), ("vs cubic", "0.25BDP", ["bbr3", "cubic"], 0.0),
             ("vs cubic", "1BDP", ["bbr3", "cubic"], 0.0),
             ("vs cubic", "4BDP", ["bbr3", "cubic"], 0.0),
             ("alone, loss 1%", "1BDP", ["bbr3"], 0.01)],
}
for _name in ("copa", "ledbat", "cdg", "nv"):
    SCENARIOS[_name] = [("alone", "4BDP", [_name], 0.0), ("vs reno", "1BDP", [_name, "reno"], 0.0),
                        ("vs cubic", "4BDP", [_name, "cubic"], 0.0),
                        ("two, loss 1%", "1BDP", [_name, _name], 0.01)]


def scenario(buffer: str, flows: list[str], loss: float, duration: float) -> ccsim.Scenario:
    return ccsim.dumbbell("10Mbps", "40ms", buffer=buffer, flows=flows, loss=loss,
                          duration=f"{duration}s", seed=1)


def packet_means(cases: list[ccsim.Scenario], seeds: list[int], workers: int,
                 store: str) -> list[tuple[np.ndarray, float, float, float]]:
    """Per case: the packet engine's per-flow shares, utilisation and loss
    and random loss rates, each a mean over ``seeds`` (runs cached in ``store``)."""
    df = ccsim.sweep(cases, seeds=seeds, mode="packet", workers=workers, store=store,
                     progress=False)
    if df["error"].fillna("").astype(bool).any():
        bad = df[df["error"].fillna("").astype(bool)].iloc[0]
        raise RuntimeError(f"packet run failed: case {bad['base']}, seed {bad['seed']}: "
                           f"{bad['error']}")
    out = []
    for i in range(len(cases)):
        rows = df[df["base"] == i]
        shares = rows.pivot_table(index="seed", columns="flow", values="share").mean(axis=0)
        runs = rows.groupby("seed").first()
        out.append((shares.to_numpy(), float(runs["utilisation"].mean()),
                    float((runs["drops"] / runs["data_packets"].clip(lower=1)).mean()),
                    float((runs["losses"] / runs["data_packets"].clip(lower=1)).mean())))
    return out


def fluid_means(cases: list[ccsim.Scenario], seeds: list[int]
                ) -> list[tuple[np.ndarray, float, float, float]]:
    """As :func:`packet_means`, in the fluid engine (one batch)."""
    results = ccsim.run_many([sc.replace(seed=s) for sc in cases for s in seeds],
                             mode="fluid", traces=False)
    out = []
    for i in range(len(cases)):
        runs = results[i * len(seeds):(i + 1) * len(seeds)]
        out.append((np.mean([r.summary["share"].to_numpy() for r in runs], axis=0),
                    float(np.mean([r.metrics["utilisation"] for r in runs])),
                    float(np.mean([r.metrics["drops"] / max(r.metrics["data_packets"], 1)
                                   for r in runs])),
                    float(np.mean([r.metrics["losses"] / max(r.metrics["data_packets"], 1)
                                   for r in runs]))))
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--duration", default=30.0, type=float)
    ap.add_argument("--only", default=None, choices=sorted(SCENARIOS))
    ap.add_argument("--seeds", default=1, type=int,
                    help="seeds 1..N; each engine's figures are means over them")
    ap.add_argument("--workers", default=1, type=int, help="processes for packet runs")
    ap.add_argument("--store", default=os.path.join(
        HERE, f"todays_laws-{packet_fingerprint()}.sqlite"), help="SQLite cache of packet runs")
    args = ap.parse_args()
    if args.seeds < 1:
        ap.error(f"--seeds {args.seeds}: a count of seeds >= 1")
    seeds = list(range(1, args.seeds + 1))
    print(f"seeds {seeds[0]}-{seeds[-1]}, {args.duration:g} s; share gaps in points\n")
    for law, rows in SCENARIOS.items():
        if args.only and law != args.only:
            continue
        cases = [scenario(buffer, flows, loss, args.duration) for _, buffer, flows, loss in rows]
        packet = packet_means(cases, seeds, args.workers, args.store)
        fluid = fluid_means(cases, seeds)
        gaps = []  # rows with two flows or more (one flow's share is 1 in both engines)
        print(f"## {law}")
        print("| scenario | buffer | share gap (shares) | util packet / fluid | "
              "drops packet / fluid | random loss packet / fluid |")
        print("|---|---|---|---|---|---|")
        for (label, buffer, _, _), (sp, up, lp, rp), (sf, uf, lf, rf) in zip(rows, packet,
                                                                             fluid):
            gap = float(np.abs(sp - sf).max()) * 100
            if len(sp) > 1:
                gaps.append(gap)
            shares = " / ".join(f"{a:.2f}:{b:.2f}" for a, b in zip(sp, sf))
            print(f"| {label} | {buffer} | {gap:.1f} ({shares}) | {up:.3f} / {uf:.3f} | "
                  f"{lp:.2%} / {lf:.2%} | {rp:.2%} / {rf:.2%} |", flush=True)
        print(f"share gap over the {len(gaps)} rows of two flows: median "
              f"{statistics.median(gaps):.1f}, worst {max(gaps):.1f}\n", flush=True)


if __name__ == "__main__":
    main()
