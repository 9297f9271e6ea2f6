"""The fluid engine's cheaper forms of numpy's own operations, against them.

The engine clips with a max/min pair and takes per-scenario maxima from its
padded scenario table instead of ``np.clip`` and ``np.maximum.at`` (both
cost several times more on a batch's small arrays, at every step): the
results must be the same bits, or a batch's results would move.
"""

from __future__ import annotations

import warnings

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

import ccsim
from ccsim.fluid.engine import FluidEngine
from ccsim.fluid.fast import clip as _clip

floats = st.floats(allow_nan=True, allow_infinity=True, width=64)


@given(st.lists(floats, min_size=1, max_size=20), st.floats(-1e6, 1e6), st.floats(0, 1e6))
def test_clip_is_np_clip_bit_for_bit(values, lo, span):
    a = np.array(values)
    hi = lo + span
    want = np.clip(a, lo, hi)
    got = _clip(a, lo, hi)
    assert got.tobytes() == want.tobytes()
    # array bounds, as the burst model passes them
    his = np.full_like(a, hi)
    assert _clip(a, 0.0, his).tobytes() == np.clip(a, 0.0, his).tobytes()


@given(st.lists(st.tuples(st.integers(0, 5), st.floats(-1e9, 1e9)), min_size=1, max_size=40),
       st.integers(1, 4))
def test_scenario_max_is_maximum_at(rows, spare):
    # scenarios of 1..n flows (every scenario has one); the values of each flow
    n_scen = max(s for s, _ in rows) + 1
    counts = [1 + sum(1 for s, _ in rows if s == k) for k in range(n_scen)]
    scs = [ccsim.dumbbell("10Mbps", "20ms", duration="1s", flows=["reno"] * c)
           for c in counts]
    e = FluidEngine(scs, traces=False)
    values = np.linspace(-5.0, 5.0, e.F) * spare
    used = [0] * n_scen
    for s, v in rows:  # each row its own flow of scenario s
        values[np.flatnonzero(e.scen == s)[used[s]]] = v
        used[s] += 1
    want = np.full(e.S, -np.inf)
    np.maximum.at(want, e.scen, values)
    assert e._scenario_max(values).tobytes() == want.tobytes()
    e.scen_table = None  # the reduceat route, for batches too ragged for a table
    assert e._scenario_max(values).tobytes() == want.tobytes()


def test_laws_without_their_own_errstate_warn_nothing_in_the_engine():
    """Laws compute for all their flows and keep what is meaningful; the engine
    runs them with numpy's floating-point warnings off (slow start's
    ``log2(ssthresh/cwnd)`` before the first loss is ``log2(inf)``)."""
    scs = [ccsim.dumbbell("20Mbps", "30ms", buffer="1BDP", duration="5s", seed=1,
                          flows=[a, ccsim.Flow(b, start="1s")])
           for a, b in (("hybla", "illinois"), ("htcp", "cubic"), ("yeah", "westwood"))]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = ccsim.run_many(scs, mode="fluid", traces=False)
    assert all(r.summary["goodput_bps"].gt(0).all() for r in res)
