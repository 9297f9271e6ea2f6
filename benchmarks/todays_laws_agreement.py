"""Packet vs fluid agreement of the algorithms of today (BBRv3, Copa,
LEDBAT++, CDG, NV) on scenarios fixed before any tuning: 10 Mbit/s, 40 ms,
seed 1. Per scenario: the largest per-flow share gap, the utilisation gap
and each engine's loss rate (drops / data packets).

    PYTHONPATH=. python benchmarks/todays_laws_agreement.py [--duration 30] [--only bbr3]
"""

from __future__ import annotations

import argparse
import statistics

import ccsim

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


def measure(res):
    m = res.metrics
    return res.summary["share"].to_numpy(), m["utilisation"], m["drops"] / max(m["data_packets"], 1)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--duration", default=30.0, type=float)
    ap.add_argument("--only", default=None)
    args = ap.parse_args()
    for law, rows in SCENARIOS.items():
        if args.only and law != args.only:
            continue
        gaps = []
        print(f"## {law}")
        print("| scenario | buffer | share gap | util packet / fluid | loss packet / fluid |")
        print("|---|---|---|---|---|")
        for label, buffer, flows, loss in rows:
            sc = ccsim.dumbbell("10Mbps", "40ms", buffer=buffer, flows=flows, loss=loss,
                                duration=f"{args.duration}s", seed=1)
            sp, up, lp = measure(ccsim.run(sc))
            sf, uf, lf = measure(ccsim.run(sc, mode="fluid", traces=False))
            gap = float(abs(sp - sf).max())
            gaps.append(gap)
            print(f"| {label} | {buffer} | {gap:.3f} | {up:.3f} / {uf:.3f} | {lp:.2%} / {lf:.2%} |",
                  flush=True)
        print(f"share gap median {statistics.median(gaps):.3f}, worst {max(gaps):.3f}\n", flush=True)


if __name__ == "__main__":
    main()
