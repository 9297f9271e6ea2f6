"""Fluid-engine speed: the Table I matrix, and the cost per scenario as a batch grows.

1. The 144 ordered pairs of Esterhuizen & Krzesinski's twelve algorithms on
   the `pairwise_matrix` dumbbell (100 Mbit/s, 1 ms, 1000 packets, 60 s, the
   second flow at 10 s), as one fluid batch on one core; the packet engine on
   a sample of the same pairs in the same process, for the ratio.
2. A 10 Mbit/s, 20 ms, two-flow dumbbell (Reno and CUBIC) at 1, 10, 100 and
   1000 scenarios per batch (seeds 0..n-1): wall time per scenario.

Usage, from the repository root::

    python benchmarks/fluid_speed.py [--sample 12] [--write docs/fluid.md]
"""

from __future__ import annotations

import argparse
import platform
import re
import time
from datetime import date

import ccsim

TABLE_I = ["vegas", "htcp", "westwood", "illinois", "bic", "scalable", "highspeed", "yeah",
           "lp", "hybla", "reno", "cubic"]


def matrix(names: list[str]) -> list[ccsim.Scenario]:
    return [ccsim.dumbbell("100Mbps", "1ms", buffer=1000, duration="60s", seed=1,
                           flows=[a, ccsim.Flow(b, start="10s")]) for a in names for b in names]


def timed(fn):
    start, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - start, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", type=int, default=12,
                        help="pairs run in the packet engine for the ratio (default 12)")
    parser.add_argument("--write", metavar="FILE", help="replace the speed block in FILE")
    args = parser.parse_args()
    lines = []

    scs = matrix(TABLE_I)
    _, wall, cpu = timed(lambda: ccsim.run_many(scs, mode="fluid", traces=False))
    sample = scs[:: max(1, len(scs) // args.sample)][: args.sample]
    _, p_wall, p_cpu = timed(lambda: [ccsim.run(sc) for sc in sample])
    per_packet = p_wall / len(sample)
    lines.append(f"- Table I matrix, {len(scs)} scenarios in one fluid batch: "
                 f"**{wall:.1f} s** wall ({cpu:.1f} s CPU), {wall / len(scs) * 1000:.0f} ms "
                 "per scenario (target: under 5 s).")
    lines.append(f"- The packet engine on {len(sample)} of the same pairs: {per_packet:.2f} s "
                 f"per scenario, so about {per_packet * len(scs):.0f} s for the matrix: the "
                 f"fluid batch is **{per_packet * len(scs) / wall:.0f}×** faster "
                 "(target ≥ 100×, goal 1000×).")

    rows = ["| scenarios in the batch | wall time | per scenario | steps per scenario |",
            "|---|---|---|---|"]
    for n in (1, 10, 100, 1000):
        batch = [ccsim.dumbbell("10Mbps", "20ms", buffer="1BDP", duration="60s", seed=s,
                                flows=["reno", "cubic"]) for s in range(n)]
        res, wall, _ = timed(lambda batch=batch: ccsim.run_many(batch, mode="fluid", traces=False))
        steps = max(r.metrics["steps"] for r in res)
        rows.append(f"| {n} | {wall:.2f} s | {wall / n * 1000:.1f} ms | {steps} |")
    one = ccsim.dumbbell("10Mbps", "20ms", buffer="1BDP", duration="60s", seed=0,
                         flows=["reno", "cubic"])
    _, p_wall, _ = timed(lambda: ccsim.run(one))
    rows.append(f"| packet engine, 1 | {p_wall:.2f} s | {p_wall * 1000:.0f} ms | — |")

    head = (f"Measured {date.today().isoformat()} on the 2-core CI machine kind (Python "
            f"{platform.python_version()}, one process): `python benchmarks/fluid_speed.py`.")
    block = head + "\n\n" + "\n".join(lines) + "\n\n" + "\n".join(rows) + "\n"
    print(block)
    if args.write:
        text = open(args.write, encoding="utf-8").read()
        text = re.sub(r"(<!-- speed:start -->\n).*?(<!-- speed:end -->)",
                      lambda m: m.group(1) + block + m.group(2), text, flags=re.S)
        open(args.write, "w", encoding="utf-8").write(text)


if __name__ == "__main__":
    main()
