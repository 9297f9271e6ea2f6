"""Packet-engine speed on the benchmark dumbbell: two flows, 100 Mbit/s,
20 ms, 1-BDP drop-tail, 60 s simulated (about 500,000 data packets).

Every measurement runs in a fresh subprocess, so two ccsim trees can be
compared on a shared, noisy machine: the rounds interleave them (A, B, A, B,
...) and the figure quoted is the ratio of their medians. Reports wall and
CPU time, data packets per CPU-second, events per data packet (SimPy's, and
those on the engine's own heap where it has one) and peak memory. Run from the repository root:

    python benchmarks/packet_engine.py                      # this tree
    python benchmarks/packet_engine.py --algorithm cubic    # SACK + PRR
    python benchmarks/packet_engine.py --compare ../main    # this tree / another

``--compare PATH`` takes another checkout's root (its ``ccsim`` package is
imported from there); the ratio printed is PATH's median CPU time over this
tree's, so above 1 means this tree is faster.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]

# Runs inside the subprocess: one scenario, one JSON line out.
_WORKER = r"""
import json, resource, sys, time
import simpy
import ccsim

events = 0
_step = simpy.Environment.step
def counting_step(self):
    global events
    events += 1
    return _step(self)
simpy.Environment.step = counting_step if sys.argv[2] == "count" else _step
from ccsim.packet import PacketEngine

spec = json.loads(sys.argv[1])  # a scenario's JSON, or dumbbell()'s keywords
sc = ccsim.Scenario.from_dict(spec) if "schema" in spec else ccsim.dumbbell(**spec)
wall0, cpu0 = time.perf_counter(), time.process_time()
engine = PacketEngine(sc)
res = engine.run()
wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
clock = getattr(engine, "clock", None)  # the engine's own event heap, where it has one
print(json.dumps({"wall": wall, "cpu": cpu, "packets": int(res.metrics["data_packets"]),
                  "events": events,
                  "heap_events": clock.scheduled() if clock is not None else 0,
                  "recovery": sc.flows[0].recovery_name,
                  "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "ccsim": ccsim.__file__}))
"""


def scenario(algorithm: str, duration: str) -> str:
    """The benchmark dumbbell as ``dumbbell()``'s keywords in JSON: each tree
    builds it itself, so a tree whose scenarios have fewer knobs reads it too."""
    return json.dumps({"bandwidth": "100Mbps", "rtt": "20ms", "buffer": "1BDP",
                       "flows": [algorithm, algorithm], "duration": duration, "seed": 1})


def measure(tree: Path, scenario_json: str, count_events: bool) -> dict:
    """One run of a scenario (JSON) with ``tree``'s ccsim, in a subprocess."""
    env = dict(os.environ, PYTHONPATH=str(tree))
    out = subprocess.run([sys.executable, "-c", _WORKER, scenario_json,
                          "count" if count_events else "plain"],
                         env=env, cwd=tree, check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def describe(label: str, runs: list[dict], events: dict) -> str:
    cpu = statistics.median(r["cpu"] for r in runs)
    wall = statistics.median(r["wall"] for r in runs)
    packets = runs[0]["packets"]
    return (f"{label:>6}: median CPU {cpu:6.2f} s, wall {wall:6.2f} s, "
            f"{packets / cpu:9,.0f} data packets per CPU-second, "
            f"{events['events'] / packets:.3f} SimPy and "
            f"{events['heap_events'] / packets:.3f} heap events per data packet, "
            f"peak {max(r['rss_mb'] for r in runs):.0f} MB  ({runs[0]['ccsim']})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds (median)")
    parser.add_argument("--algorithm", default="reno",
                        help="both flows' algorithm (default reno; cubic: SACK + PRR; bbr: paced)")
    parser.add_argument("--duration", default="60s", help="simulated time (default 60s)")
    parser.add_argument("--compare", type=Path, metavar="PATH",
                        help="another checkout's root, run in alternation with this tree")
    args = parser.parse_args()
    trees = {"this": HERE}
    if args.compare is not None:
        if not (args.compare / "ccsim" / "__init__.py").exists():
            parser.error(f"--compare {args.compare}: no ccsim package there")
        trees["ref"] = args.compare.resolve()
    print(f"two {args.algorithm} flows, 100 Mbit/s, 20 ms, 1 BDP, {args.duration}; "
          f"python {platform.python_version()} on {platform.machine()}, "
          f"{os.cpu_count()} CPUs, {args.rounds} interleaved rounds")
    # The event count comes from one extra run per tree: counting costs time.
    sc = scenario(args.algorithm, args.duration)
    events = {name: measure(tree, sc, True) for name, tree in trees.items()}
    runs: dict[str, list[dict]] = {name: [] for name in trees}
    for _ in range(args.rounds):
        for name, tree in trees.items():
            runs[name].append(measure(tree, sc, False))
    for name in trees:
        print(describe(name, runs[name], events[name]))
    if "ref" in trees:
        ratio = (statistics.median(r["cpu"] for r in runs["ref"])
                 / statistics.median(r["cpu"] for r in runs["this"]))
        same = runs["ref"][0]["packets"] == runs["this"][0]["packets"]
        print(f"speed-up, ref CPU / this CPU (medians): {ratio:.2f}x"
              + ("" if same else "  (NB: the trees simulated different packet counts)"))


if __name__ == "__main__":
    main()
