"""How much different seeds change a run, with and without the start jitter
and the send overhead, for docs/guide.md ("Seeds") and docs/engine.md.

Run from the repository root (one worker by default):

    python benchmarks/seed_spread.py [--seeds 5] [--workers N] [--mode packet]

For each scenario, loss-free drop-tail dumbbells, and each setting —
nothing random (``start_jitter=0, ack_jitter=0``), the start jitter alone
(each flow opens up to one of its RTTs late), the ACK jitter alone (each
segment reaches its receiver up to one bottleneck packet time late), the
default (both), and Floyd & Jacobson's send overhead of one bottleneck packet
time (``Flow.overhead``, both jitters off) — it prints the first flow's share
over the seeds (mean, min, max, standard deviation), its mean timeouts, and
how many seeds gave distinct shares. The fluid engine has no segments to
delay: with ``--mode fluid`` only the start jitter is compared.

* guide: docs/guide.md's sweep base, Reno against CUBIC, 10 Mbit/s, 20 ms,
  one BDP, 10 s.
* two-rtts: two Reno flows of 40 and 60 ms RTT, 10 Mbit/s, one BDP, 100 s:
  the phase lock of docs/engine.md (without randomness the short flow takes
  the drops and times out every few seconds).
* competition: Zhang & Bian's Reno against Vegas, 1.5 Mbit/s, 40 ms,
  10-packet buffer, 960-byte segments, 100 s.
"""

from __future__ import annotations

import argparse
import dataclasses

import numpy as np

import ccsim

SCENARIOS = {
    "guide": ccsim.dumbbell(bandwidth="10Mbps", rtt="20ms", buffer="1BDP",
                            flows=["reno", "cubic"], duration="10s"),
    "two-rtts": ccsim.dumbbell(bandwidth="10Mbps", rtt="40ms", buffer="1BDP", duration="100s",
                               flows=["reno", ccsim.Flow("reno", rtt="60ms")]),
    "competition": ccsim.dumbbell(bandwidth="1.5Mbps", rtt="40ms", buffer=10, mss=960,
                                  flows=["reno", "vegas"], duration="100s"),
}


def settings(sc: ccsim.Scenario) -> dict[str, ccsim.Scenario]:
    """The scenario without randomness, with each jitter, both, the overhead."""
    tx = sc.packet_size * 8.0 / sc.links[sc.bottleneck].rate  # one bottleneck packet time
    over = [dataclasses.replace(f, overhead=tx) for f in sc.flows]
    return {"none": sc.replace(start_jitter=0, ack_jitter=0),
            "start jitter": sc.replace(ack_jitter=0),
            "ack jitter": sc.replace(start_jitter=0),
            "default": sc,
            "overhead": sc.replace(start_jitter=0, ack_jitter=0, flows=over)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--mode", default="packet")
    parser.add_argument("names", nargs="*", default=list(SCENARIOS))
    args = parser.parse_args()
    for name in args.names:
        cases = settings(SCENARIOS[name])
        if args.mode == "fluid":  # the fluid engine has no segments to delay
            cases = {k: v for k, v in cases.items() if k in ("none", "start jitter")}
        bases = list(cases.values())
        table = ccsim.sweep(bases, seeds=range(1, args.seeds + 1), mode=args.mode,
                            workers=args.workers, progress=False)
        first = table[table["flow"] == 0]
        for i, label in enumerate(cases):
            rows = first[first["base"] == i]
            share = rows["share"].to_numpy()
            print(f"{name:12} {label:13} share of flow 0: mean {share.mean():.3f}, "
                  f"min {share.min():.3f}, max {share.max():.3f}, sd {share.std(ddof=1):.3f}; "
                  f"timeouts {rows['timeouts'].mean():5.1f}; "
                  f"{len(np.unique(share))} distinct of {len(share)}", flush=True)


if __name__ == "__main__":
    main()
