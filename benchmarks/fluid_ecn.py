"""ECN in the fluid engine against the packet engine: DCTCP behind a
step-marking switch, ECN CUBIC behind CoDel, PIE and RED. Prints one line per
scenario and engine (the queue after the start-up). docs/fluid.md quotes it.

    python benchmarks/fluid_ecn.py
"""

from __future__ import annotations

import numpy as np

import ccsim


def _queue(res, after):
    q = res.series("queue")["queue"]
    return q[q.index > after].to_numpy()


def main() -> None:
    for n in (1, 2, 4):
        sc = ccsim.dumbbell(100e6, 1e-3, queue=ccsim.StepMark(K=20, limit=400), buffer=None,
                            flows=["dctcp"] * n, duration="4s", seed=1,
                            trace_interval=0.0005)
        for mode in ("packet", "fluid"):
            r = ccsim.run(sc, mode=mode)
            q = _queue(r, 1.0)
            print(f"{n} DCTCP, K=20, 100 Mbit/s, 1 ms, {mode}: queue mean {q.mean():.1f}, "
                  f"1st-99th pct {np.percentile(q, 1):.1f}-{np.percentile(q, 99):.1f} pkts, "
                  f"utilisation {r.metrics['utilisation']:.3f}, drops {r.metrics['drops']}, "
                  f"marks {r.metrics['marks']}")
    C = 20e6 / (8 * 1500)
    for queue in (ccsim.CoDel(limit=1000, ecn=True), ccsim.PIE(limit=1000, ecn=True),
                  ccsim.RED(limit=300, min_th=20, max_th=60, ecn=True, gentle=True)):
        sc = ccsim.dumbbell("20Mbps", "40ms", queue=queue, buffer=None, duration="30s", seed=1,
                            flows=[ccsim.Flow("cubic", ecn=True)] * 2)
        for mode in ("packet", "fluid"):
            r = ccsim.run(sc, mode=mode)
            d = _queue(r, 5.0) / C * 1e3
            print(f"2 ECN CUBIC, {queue.kind}, 20 Mbit/s, 40 ms, {mode}: delay mean "
                  f"{d.mean():.1f} ms, median {np.median(d):.1f} ms, utilisation "
                  f"{r.metrics['utilisation']:.3f}, drops {r.metrics['drops']}, "
                  f"marks {r.metrics['marks']}")


if __name__ == "__main__":
    main()
