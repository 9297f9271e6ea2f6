"""Packet-engine speed: two Reno flows, 100 Mbit/s, 20 ms, 1 BDP drop-tail,
60 s simulated (issue 2's benchmark).

Prints wall time, data packets simulated per wall-second and peak memory
(the process's maximum resident set size). Run from the repository root:

    python benchmarks/packet_engine.py [--repeat N]
"""

from __future__ import annotations

import argparse
import platform
import resource
import time

import ccsim


def scenario(algorithm: str = "reno") -> ccsim.Scenario:
    return ccsim.dumbbell(bandwidth="100Mbps", rtt="20ms", buffer="1BDP",
                          flows=[algorithm, algorithm], duration="60s", seed=1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs; the best is reported")
    parser.add_argument("--algorithm", default="reno",
                        help="the flows' algorithm (default reno; cubic exercises SACK + PRR)")
    args = parser.parse_args()
    sc = scenario(args.algorithm)
    best = None
    for _ in range(args.repeat):
        start = time.perf_counter()
        res = ccsim.run(sc)
        wall = time.perf_counter() - start
        if best is None or wall < best[0]:
            best = (wall, res)
    wall, res = best
    packets = res.metrics["data_packets"]
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    print(f"two {args.algorithm} flows ({sc.flows[0].recovery_name} recovery); "
          f"python {platform.python_version()} on {platform.machine()}, best of {args.repeat}")
    print(f"wall time           {wall:8.2f} s   (run() including result assembly)")
    print(f"data packets        {packets:8d}")
    print(f"packets per second  {packets / wall:8.0f}   (target ≥ 150,000)")
    print(f"peak memory         {peak_mb:8.0f} MB  (target < 500 MB)")
    print(f"utilisation         {res.metrics['utilisation']:8.3f}")


if __name__ == "__main__":
    main()
