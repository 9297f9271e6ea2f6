"""Identical flows at a full drop-tail queue: how many of them each congestion
event reduces, in the packet engine and in the fluid engine.

A congestion event is a run of window reductions (fast recoveries and
timeouts, :attr:`ccsim.Result.events`) of any of the flows, each within one
full-queue RTT (two-way propagation plus the buffer's delay at the link's
rate) of the run's first: the reductions one overflow of the queue causes
(:func:`ccsim.metrics.congestion_events`).
Per engine, means over seeds, counted from two seconds after the last flow
opens (past the slow starts):

* ``util``: utilisation of the bottleneck;
* ``events/s``: congestion events per second;
* ``flows/ev``: flows reduced per event, and ``all``: the share of events
  that reduce every flow (full synchronisation);
* ``drops/red``: queue drops per reduction: how many of its packets a flow
  loses in one event (a NewReno flow repairs them in one recovery, one RTT
  per hole);
* ``TO``: timeouts per run (all flows).

The fluid engine shares an overflow among the flows by their arrival rates
and turns each flow's share into whole drops at its own regular phase
(``FluidEngine._queue_drops``), so identical flows each lose about one packet
per event and all of them reduce (lockstep); the packet engine's drops fall
on the flows whose packets meet the full queue, about one and a half per flow
hit, and spare the rest. The scenarios are built for this diagnosis: the
first four share their path with two held-out rows of the agreement set (six
and three staggered NewReno flows, 10 Mbit/s, 20 ms, 8 packets).

Run from the repository root (about a minute on the 2-core machine)::

    python benchmarks/synchronisation.py --seeds 3 --duration 30
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

import ccsim
from ccsim.metrics import congestion_events

CASES = [  # flows, bandwidth (bit/s), RTT (s), buffer (packets)
    (2, 10e6, 0.02, 8), (4, 10e6, 0.02, 8), (6, 10e6, 0.02, 8), (8, 10e6, 0.02, 8),
    (2, 20e6, 0.04, 67), (4, 20e6, 0.04, 67),
]
STAGGER = 0.5  # s between the flows' starts
SETTLE = 2.0   # s after the last start before counting
PACKET_BITS = 1500 * 8


def scenario(n: int, bw: float, rtt: float, buf: int, duration: float,
             seed: int) -> ccsim.Scenario:
    """``n`` NewReno flows opening ``STAGGER`` apart on a drop-tail dumbbell."""
    return ccsim.dumbbell(bandwidth=bw, rtt=rtt, buffer=buf, duration=duration, seed=seed,
                          flows=[ccsim.Flow("newreno", start=STAGGER * i) for i in range(n)])


def figures(res: ccsim.Result, n: int, since: float, window: float) -> dict[str, float]:
    """One run's figures (see the module's docstring)."""
    hit = congestion_events(res.events, window, since)["n_flows"].to_list()
    s = res.summary
    reductions = float(s["recoveries"].sum() + s["timeouts"].sum())
    return {
        "util": res.metrics["utilisation"],
        "events/s": len(hit) / (res.scenario.duration - since),
        "flows/ev": float(np.mean(hit)) if hit else float("nan"),
        "all": float(np.mean([h == n for h in hit])) if hit else float("nan"),
        "drops/red": res.metrics["drops"] / reductions if reductions else float("nan"),
        "TO": float(s["timeouts"].sum()),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--duration", type=float, default=30.0, help="seconds per run")
    args = parser.parse_args()
    seeds = range(1, args.seeds + 1)
    print(f"means over seeds 1-{args.seeds}, {args.duration:g} s; "
          "util / events/s / flows/ev / all / drops/red / TO")
    for n, bw, rtt, buf in CASES:
        since = STAGGER * (n - 1) + SETTLE
        window = rtt + buf * PACKET_BITS / bw  # one RTT at a full queue (s)
        scs = [scenario(n, bw, rtt, buf, args.duration, s) for s in seeds]
        label = f"{n} newreno, {bw / 1e6:g} Mbps, {rtt * 1e3:g} ms, {buf} pkts"
        for mode, results in (("packet", [ccsim.run(sc) for sc in scs]),
                              ("fluid", ccsim.run_many(scs, mode="fluid", traces=True))):
            rows = pd.DataFrame([figures(r, n, since, window) for r in results]).mean()
            print(f"{label:36s} {mode:6s} {rows['util']:.3f} {rows['events/s']:5.2f} "
                  f"{rows['flows/ev']:4.2f} {rows['all']:4.2f} {rows['drops/red']:4.2f} "
                  f"{rows['TO']:5.1f}", flush=True)


if __name__ == "__main__":
    main()
