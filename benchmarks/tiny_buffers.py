"""Buffers of one to three packets: the packet engine with and without the
receiving delay's spread, against the fluid engine.

The packet engine delays each segment at its receiver by a uniform time up
to ``Scenario.ack_wait`` (by default one packet time at the bottleneck),
never before the segment ahead. Behind delayed ACKs that spreads the ACK
clock: a burst an ACK releases can come up to a packet time early and land
on the tail of the burst ahead of it. In a buffer of one to three packets
that tail decides whether the burst fits. ``ack_jitter=0`` switches the
spread off (ACKs exactly on the clock); the fluid engine has the delay's
mean in its RTT but not its spread. The scenarios are built for this
diagnosis, none of them in the agreement set (``agreement_set.py``).

Run from the repository root (about a minute on the 2-core machine)::

    python benchmarks/tiny_buffers.py --seeds 3 --duration 30
"""

from __future__ import annotations

import argparse

import numpy as np

import ccsim

CASES = [  # bandwidth, RTT, buffer (packets), flows
    ("5Mbps", "80ms", 3, ["newreno", "sack"]),
    ("5Mbps", "80ms", 3, ["newreno", "newreno"]),
    ("10Mbps", "100ms", 3, ["cubic", "cubic"]),
    ("10Mbps", "40ms", 2, ["newreno"]),
    ("10Mbps", "50ms", 2, ["newreno", "newreno"]),
    ("5Mbps", "20ms", 1, ["htcp"]),
    ("5Mbps", "20ms", 1, ["newreno", "newreno"]),
]


def _figures(results: list[ccsim.Result]) -> tuple[float, float, float]:
    """Mean utilisation, queue loss rate and timeouts per flow over seeds."""
    util = np.mean([r.metrics["utilisation"] for r in results])
    loss = np.mean([r.metrics["drops"] / max(r.metrics["data_packets"], 1) for r in results])
    timeouts = np.mean([r.summary["timeouts"].mean() for r in results])
    return float(util), float(loss), float(timeouts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--duration", type=float, default=30.0, help="seconds per run")
    args = parser.parse_args()
    seeds = range(1, args.seeds + 1)
    print("utilisation / loss rate / timeouts per flow, means over seeds "
          f"1-{args.seeds}, {args.duration:g} s")
    print(f"{'scenario':38s} {'packet':>22s} {'packet, ack_jitter=0':>24s} {'fluid':>22s}")
    for bw, rtt, buf, flows in CASES:
        base = [ccsim.dumbbell(bw, rtt, buffer=buf, flows=flows, duration=args.duration,
                               seed=s) for s in seeds]
        rows = (
            [ccsim.run(sc) for sc in base],
            [ccsim.run(sc.replace(ack_jitter=0.0)) for sc in base],
            ccsim.run_many(base, mode="fluid"),
        )
        cells = [f"{u:.3f} / {l:.3f} / {t:4.1f}" for u, l, t in map(_figures, rows)]
        label = f"{'+'.join(flows)}, {buf} pkts, {bw}, {rtt}"
        print(f"{label:38s} {cells[0]:>22s} {cells[1]:>24s} {cells[2]:>22s}", flush=True)


if __name__ == "__main__":
    main()
