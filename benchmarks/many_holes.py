"""SACK recovery with many holes and large windows: the cost per data packet
as the holes grow, against a reference checkout run in alternation.

One CUBIC flow (SACK + PRR, or plain SACK recovery) on a 100 Mbit/s, 1 ms
path; the buffer sets the window (100 to 3000 packets). Without random loss
the first slow start overshoots the buffer and loses about half a window in
one go: hundreds to thousands of holes at once (the column gives the
scoreboard's largest number of SACK blocks); 1 % random loss keeps windows
small, with a hole or two at a time. Each run is a fresh subprocess
(``packet_engine.measure``); the figure is median CPU microseconds per data
packet. Run from the repository root:

    python benchmarks/many_holes.py [--compare ../main] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

import ccsim
from packet_engine import HERE, measure

GRID = [(buffer, loss) for buffer in (100, 1000, 3000) for loss in (0.0, 0.01)]


def max_holes(scenario_json: str) -> int:  # dumbbell()'s keywords, as JSON
    """The most SACK blocks the flow's scoreboard held at once (this tree)."""
    from ccsim.recovery.scoreboard import Scoreboard

    most = 0
    update = Scoreboard.update

    def counting(self, *args, **kwargs):
        nonlocal most
        out = update(self, *args, **kwargs)
        most = max(most, len(self.blocks))
        return out
    Scoreboard.update = counting
    try:
        ccsim.run(ccsim.dumbbell(**json.loads(scenario_json)))
    finally:
        Scoreboard.update = update
    return most


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--recovery", default="sack", help="sack or prr (default sack)")
    parser.add_argument("--duration", default="10s")
    parser.add_argument("--compare", type=Path, metavar="PATH")
    args = parser.parse_args()
    trees = {"this": HERE} | ({"ref": args.compare.resolve()} if args.compare else {})
    print(f"CUBIC with {args.recovery} recovery, 100 Mbit/s, 1 ms, {args.duration}; "
          f"µs of CPU per data packet, median of {args.rounds}")
    print(f"{'buffer':>7} {'loss':>6} {'most holes':>13} " + " ".join(f"{t:>8}" for t in trees))
    for buffer, loss in GRID:
        # dumbbell()'s keywords, so that another tree builds the scenario itself
        sc = json.dumps({"bandwidth": "100Mbps", "rtt": "1ms", "buffer": buffer, "loss": loss,
                         "seed": 1, "duration": args.duration,
                         "flows": [{"algorithm": "cubic", "recovery": args.recovery}]})
        cost = {}
        for name, tree in trees.items():
            runs = [measure(tree, sc, False) for _ in range(args.rounds)]
            cost[name] = statistics.median(r["cpu"] / r["packets"] * 1e6 for r in runs)
        print(f"{buffer:>7} {loss:>6} {max_holes(sc):>13} "
              + " ".join(f"{cost[t]:>8.2f}" for t in trees))


if __name__ == "__main__":
    main()
