"""Schedulers against a FIFO at full length: Reno, CUBIC and BBR sharing a
10 Mbit/s, 40 ms bottleneck for 60 s behind a 1-BDP drop-tail queue, FQ-CoDel
(RFC 8290, Linux's defaults), FQ (Linux's sch_fq) and DualPI2 (RFC 9332, Linux's defaults), over
a few seeds; then an ECT(1) DCTCP flow (standing in for TCP Prague) beside
CUBIC through DualPI2. Prints Jain's index, utilisation, each flow's share
and mean RTT (results, not speed: benchmarks/packet_engine.py measures that).
benchmarks/README.md quotes it; tests/test_schedulers.py checks the
fairness at 20 s.

    python benchmarks/schedulers.py [--duration 60s] [--seeds 1 2 3]
"""

from __future__ import annotations

import argparse

import ccsim

QUEUES = {
    "droptail 1BDP": lambda: ccsim.queues.DropTail(33),
    "fq_codel": ccsim.FqCodel,
    "fq": ccsim.FQ,
    "dualpi2": ccsim.DualPI2,
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--duration", default="60s")
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    ap.add_argument("--l4s-only", action="store_true", help="only the DualPI2 L4S runs")
    args = ap.parse_args()
    flows = ["reno", "cubic", "bbr"]
    for label, make in ({} if args.l4s_only else QUEUES).items():
        for seed in args.seeds:
            sc = ccsim.dumbbell("10Mbps", "40ms", queue=make(), buffer=None, flows=flows,
                                duration=args.duration, seed=seed)
            r = ccsim.run(sc)
            s = r.summary
            print(f"{label:14} seed {seed}: Jain {r.metrics['jain']:.3f}, utilisation "
                  f"{r.metrics['utilisation']:.3f}, shares "
                  + "/".join(f"{x:.2f}" for x in s["share"])
                  + ", mean RTT (ms) " + "/".join(f"{x * 1e3:.0f}" for x in s["mean_rtt"]))
    # L4S beside classic through DualPI2, DCTCP standing in for TCP Prague
    # (a scalable law sending ECT(1)); Prague's RTT independence is not DCTCP's
    l4s = type("L4SDCTCP", (ccsim.algorithms.get("dctcp"),),
               {"name": "dctcp-ect1", "l4s": True, "__module__": __name__})
    ccsim.algorithms.register(l4s)
    for seed in args.seeds:
        for step in (0, 2):  # Linux's min_qlen_step, and sparing a lone packet
            sc = ccsim.dumbbell("10Mbps", "40ms", queue=ccsim.DualPI2(min_qlen_step=step),
                                buffer=None, flows=["dctcp-ect1", "cubic"], duration=args.duration,
                                seed=seed)
            r = ccsim.run(sc)
            s = r.summary
            print(f"dualpi2 min_qlen_step={step}, ECT(1) DCTCP + CUBIC, seed {seed}: shares "
                  + "/".join(f"{x:.2f}" for x in s["share"]) + ", queueing delay (ms) "
                  + "/".join(f"{x * 1e3:.1f}" for x in s["mean_rtt"] - s["base_rtt"])
                  + f", utilisation {r.metrics['utilisation']:.3f}, marks {r.metrics['marks']}, "
                  f"drops {r.metrics['drops']}")


if __name__ == "__main__":
    main()
