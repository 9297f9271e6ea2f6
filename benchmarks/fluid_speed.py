"""Fluid-engine speed: CPU per scenario against the packet engine, side by side.

Every ratio is CPU time (``time.process_time``) of the two engines measured
in the same process, one after the other, on the same scenarios:

1. One scenario alone: two CUBIC flows, 100 Mbit/s, 20 ms, 1 BDP, 60 s
   (the least CPU of ``--rounds`` interleaved runs of each engine).
2. The 144 ordered pairs of Esterhuizen & Krzesinski's twelve algorithms on
   the ``pairwise_matrix`` dumbbell (100 Mbit/s, 1 ms, 1000 packets, 60 s,
   the second flow at 10 s) as one fluid batch; the packet engine on a
   sample of the same pairs (``--sample``), scaled to 144.
3. A mixed batch of 48 drawn from a fixed seed: 5-200 Mbit/s, 5-300 ms,
   0.1-4 BDP, 2-8 flows of mixed laws with their own RTTs and staggered
   starts, drop-tail or RED, random loss on a third of them, 30 s; the
   packet engine on a sample (``--mixed-sample``), scaled to 48.
4. Scaling: scenario 1 with seeds 0..n-1 as one batch of 1, 10, 100, 1000.
5. A parameter sweep: 64 scenarios (scenario 1, seeds 0..63, 10 s) whose
   CUBIC flows all have Linux's ``beta``, against the same 64 with 64
   different ``beta`` values (0.5-0.9) -- one fluid batch each, interleaved
   ``--rounds`` times: the law's parameters are arrays over the batch, so
   the two should cost about the same.

Usage, from the repository root::

    python benchmarks/fluid_speed.py [--sample 12] [--mixed-sample 8] [--rounds 3]
"""

from __future__ import annotations

import argparse
import math
import platform
import random
import time
from datetime import datetime, timezone

import ccsim

TABLE_I = ["vegas", "htcp", "westwood", "illinois", "bic", "scalable", "highspeed", "yeah",
           "lp", "hybla", "reno", "cubic"]
MIXED_LAWS = ["reno", "newreno", "cubic", "bic", "htcp", "highspeed", "scalable", "hybla",
              "illinois", "vegas", "veno", "westwood", "yeah", "bbr", "sack"]


def matrix(names: list[str]) -> list[ccsim.Scenario]:
    return [ccsim.dumbbell("100Mbps", "1ms", buffer=1000, duration="60s", seed=1,
                           flows=[a, ccsim.Flow(b, start="10s")]) for a in names for b in names]


def lone(seed: int = 1) -> ccsim.Scenario:
    return ccsim.dumbbell("100Mbps", "20ms", buffer="1BDP", duration="60s", seed=seed,
                          flows=["cubic", "cubic"])


def mixed(n: int = 48, seed: int = 2029) -> list[ccsim.Scenario]:
    """``n`` scenarios of the kinds the fluid engine is used to sweep."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        rate = 10 ** rng.uniform(math.log10(5e6), math.log10(200e6))
        rtt = 10 ** rng.uniform(math.log10(0.005), math.log10(0.3))
        k = rng.randint(2, 8)
        flows = [ccsim.Flow(rng.choice(MIXED_LAWS),
                            rtt=None if rng.random() < 0.5 else rtt * rng.uniform(0.5, 3.0),
                            start=0.0 if j == 0 else round(rng.uniform(0.0, 10.0), 3))
                 for j in range(k)]
        out.append(ccsim.dumbbell(rate, rtt, buffer=f"{rng.uniform(0.1, 4.0):.2f}BDP",
                                  queue="red" if rng.random() < 0.3 else "droptail",
                                  loss=0.0 if rng.random() < 0.67 else 10 ** rng.uniform(-5, -2.5),
                                  flows=flows, duration="30s", seed=i))
    return out


def beta_sweep(betas: list[float]) -> list[ccsim.Scenario]:
    """Scenario 1 (10 s) with seeds 0..n-1, both CUBIC flows of scenario i
    with ``beta=betas[i]``."""
    return [ccsim.dumbbell("100Mbps", "20ms", buffer="1BDP", duration="10s", seed=i,
                           flows=[ccsim.Flow("cubic", params={"beta": b})] * 2)
            for i, b in enumerate(betas)]


def cpu(fn):
    start = time.process_time()
    out = fn()
    return out, time.process_time() - start


def fluid(scs, **kw):
    return ccsim.run_many(scs, mode="fluid", traces=False, **kw)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", type=int, default=12,
                        help="Table I pairs run in the packet engine (default 12)")
    parser.add_argument("--mixed-sample", type=int, default=8,
                        help="mixed scenarios run in the packet engine (default 8)")
    parser.add_argument("--rounds", type=int, default=3,
                        help="interleaved runs of the lone scenario in each engine (default 3)")
    parser.add_argument("--skip-packet", action="store_true", help="fluid figures only")
    args = parser.parse_args()
    print(f"# {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC, Python "
          f"{platform.python_version()}, {platform.machine()}, one process, CPU seconds\n")

    # 1. one scenario alone: the least of interleaved runs of each engine
    sc = lone()
    fluid([sc])  # imports and first-call costs out of the way
    f_runs, p_runs = [], []
    for _ in range(args.rounds):
        res, c = cpu(lambda: fluid([sc]))
        f_runs.append(c)
        if not args.skip_packet:
            p_runs.append(cpu(lambda: ccsim.run(sc))[1])
    f_cpu = min(f_runs)
    line = (f"1. one scenario alone (2 CUBIC, 100 Mbit/s, 20 ms, 1 BDP, 60 s): fluid "
            f"{f_cpu:.3f} s ({res[0].metrics['steps']} steps)")
    if not args.skip_packet:
        p_cpu = min(p_runs)
        line += (f", packet {p_cpu:.2f} s (least of {args.rounds} interleaved runs each): "
                 f"**{p_cpu / f_cpu:.1f}x** (target >= 10x)")
    print(line)

    # 2. the Table I batch
    scs = matrix(TABLE_I)
    res, f_cpu = cpu(lambda: fluid(scs))
    steps = sorted(r.metrics["steps"] for r in res)
    line = (f"2. Table I, {len(scs)} pairs as one batch: fluid {f_cpu:.2f} s, "
            f"{f_cpu / len(scs) * 1000:.1f} ms per scenario (steps: median {steps[len(steps) // 2]}, "
            f"max {steps[-1]})")
    if not args.skip_packet:
        sample = scs[:: max(1, len(scs) // args.sample)][: args.sample]
        _, p_cpu = cpu(lambda: [ccsim.run(s) for s in sample])
        per = p_cpu / len(sample)
        line += (f"; packet {per:.2f} s per scenario on {len(sample)} sampled pairs, so "
                 f"~{per * len(scs):.0f} s for 144: **{per * len(scs) / f_cpu:.0f}x** "
                 "(target >= 300x, goal 1000x)")
    print(line)

    # 3. the mixed batch
    scs = mixed()
    res, f_cpu = cpu(lambda: fluid(scs))
    line = f"3. mixed batch of {len(scs)}: fluid {f_cpu:.2f} s, {f_cpu / len(scs) * 1000:.0f} ms per scenario"
    if not args.skip_packet:
        sample = scs[:: max(1, len(scs) // args.mixed_sample)][: args.mixed_sample]
        _, p_cpu = cpu(lambda: [ccsim.run(s) for s in sample])
        per = p_cpu / len(sample)
        _, f_sample = cpu(lambda: fluid(sample))
        line += (f"; packet {per:.2f} s per scenario on {len(sample)} of them, so "
                 f"~{per * len(scs):.0f} s for {len(scs)}: **{per * len(scs) / f_cpu:.0f}x** "
                 f"(target >= 30x; the same {len(sample)} alone as a fluid batch: "
                 f"{p_cpu / f_sample:.0f}x)")
    print(line)

    # 4. scaling
    print("\n| scenarios in the batch | CPU | per scenario | steps per scenario |")
    print("|---|---|---|---|")
    for n in (1, 10, 100, 1000):
        batch = [lone(seed) for seed in range(n)]
        res, c = cpu(lambda batch=batch: fluid(batch))
        steps = max(r.metrics["steps"] for r in res)
        print(f"| {n} | {c:.2f} s | {c / n * 1000:.2f} ms | {steps} |", flush=True)

    # 5. a parameter sweep does not split the batch: the cost of a loop
    # iteration is the same; lower betas lose more often, so take more of them
    one = beta_sweep([717 / 1024] * 64)
    many = beta_sweep([0.5 + 0.4 * i / 63 for i in range(64)])
    runs: dict[str, list[float]] = {"one": [], "many": []}
    loops = {}
    for _ in range(args.rounds):
        for name, batch in (("one", one), ("many", many)):
            res, c = cpu(lambda batch=batch: fluid(batch))
            runs[name].append(c)
            loops[name] = max(r.metrics["steps"] for r in res)
    c_one, c_many = min(runs["one"]), min(runs["many"])
    print(f"\n5. 64 scenarios (10 s), one CUBIC beta: {c_one:.3f} s, {loops['one']} loop "
          f"iterations ({c_one / loops['one'] * 1000:.2f} ms each); 64 different betas: "
          f"{c_many:.3f} s, {loops['many']} iterations ({c_many / loops['many'] * 1000:.2f} ms "
          f"each); least of {args.rounds} interleaved runs: **{c_many / c_one:.2f}x** the CPU, "
          f"**{(c_many / loops['many']) / (c_one / loops['one']):.2f}x** per iteration")

if __name__ == "__main__":
    main()
