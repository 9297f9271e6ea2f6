"""Cost per flow of ccsim.Arrivals in the packet engine.

N short CUBIC flows (lognormal sizes, mean about 49 kB) arriving at load 0.5
on a 100 Mbit/s, 20 ms dumbbell, against the same payload carried by ONE
sized CUBIC flow over the same duration: the difference of their CPU times,
divided by N, is what a flow costs beyond its packets. Both are measured
interleaved, round by round, in this process (the machine is shared and
noisy: quote the ratio and the per-flow figure, not absolute speeds).

    python benchmarks/arrivals.py                 # 10,000 flows, 3 rounds
    python benchmarks/arrivals.py --flows 2000 --rounds 5
"""

from __future__ import annotations

import argparse
import statistics
import time

import scipy.stats as st

import ccsim

SIZES = st.lognorm(s=1.0, scale=30_000)  # mean 30 kB · e^0.5 ≈ 49.5 kB


def scenarios(n: int) -> tuple[ccsim.Scenario, ccsim.Scenario, float]:
    rate = 100e6
    per_second = 0.5 * rate / (8 * SIZES.mean())
    duration = n / per_second
    interval = duration / 100
    t = time.process_time()
    many = ccsim.dumbbell(rate, "20ms", "1BDP", flows=[ccsim.Arrivals("cubic", load=0.5,
                                                                     sizes=SIZES)],
                          duration=duration, seed=1, trace_interval=interval)
    build = time.process_time() - t
    total = sum(f.size for f in many.flows)
    one = ccsim.dumbbell(rate, "20ms", "1BDP", flows=[ccsim.Flow("cubic", size=total)],
                         duration=duration * 3, seed=1, trace_interval=interval * 3)
    return many, one, build


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--flows", type=int, default=10_000)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    many, one, build = scenarios(args.flows)
    n = len(many.flows)
    t_many, t_one = [], []
    for _ in range(args.rounds):
        for scenario, times in ((many, t_many), (one, t_one)):
            t = time.process_time()
            res = ccsim.run(scenario)
            times.append(time.process_time() - t)
            if scenario is many:
                packets_many = res.metrics["data_packets"]
                finished = int(res.summary["finished"].sum())
            else:
                packets_one = res.metrics["data_packets"]
    a, b = statistics.median(t_many), statistics.median(t_one)
    print(f"{n} flows arriving ({finished} finished), {packets_many} data packets: "
          f"median CPU {a:.2f} s; building the scenario {build:.2f} s")
    print(f"one flow of the same payload, {packets_one} data packets: median CPU {b:.2f} s")
    print(f"ratio {a / b:.2f}; per flow beyond its packets "
          f"{(a - b * packets_many / packets_one) / n * 1e6:.0f} µs "
          f"(+ {build / n * 1e6:.0f} µs to build); per flow all in {(a + build) / n * 1e6:.0f} µs")


if __name__ == "__main__":
    main()
