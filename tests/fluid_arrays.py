"""Flow arrays for driving a fluid law by hand in tests, without the engine."""

from __future__ import annotations

import math

import numpy as np

from ccsim.algorithms.fluid import FlowArrays

#: A BBR flow in a 40 ms path, 50 segments in flight, 3 s into its run.
BBR_FLOW = dict(cwnd=50.0, ssthresh=math.inf, pacing=math.inf, h=0.001, now=3.0, rtt=0.05,
                base_rtt=0.04, min_rtt=0.04, srtt=0.05, rate=800.0, acked=0.0,
                delivered=5000.0, inflight=50.0, lost=0.0, lost_inflight=0.0, marked=0.0,
                mss=1448.0)


def flow_arrays(law, n: int = 1, **values) -> FlowArrays:
    """``n`` flows: the law's own state at its initial values, then ``values``
    (scalars, the same for every flow)."""
    f = FlowArrays()
    for name, value in {**law.state, **values}.items():
        setattr(f, name, np.full(n, float(value)))
    return f
