"""The fluid engine draws a step's random counts together (a PIE queue's
drops, random link losses; RED's drops follow its count instead): each count
must be the one its mean and uniform give alone, whatever else is drawn with
it."""

from __future__ import annotations

import numpy as np

import ccsim
from ccsim.fluid import draws
from ccsim.fluid.engine import FluidEngine


def test_poisson_counts_do_not_depend_on_the_other_means():
    rng = np.random.default_rng(7)
    small = rng.uniform(0.0, 29.0, 400)
    u = rng.uniform(0.0, 1.0, 401)
    alone = draws.poisson(small, u[:400])          # every mean below 30
    mixed = draws.poisson(np.r_[small, 45.0], u)   # one above: the masked route
    assert np.array_equal(alone, mixed[:400])
    assert np.array_equal(alone, [draws.poisson(np.array([m]), np.array([v]))[0]
                                  for m, v in zip(small, u)])
    # and the counts are Poisson: mean and variance near the means' sum (5 sigma)
    assert abs(alone.sum() - small.sum()) < 5 * np.sqrt(small.sum())


def test_requests_drawn_together_are_the_requests_drawn_alone():
    scs = [ccsim.dumbbell("10Mbps", "20ms", buffer="1BDP", queue="red", loss=0.01, seed=s,
                          duration="2s", flows=["reno", "cubic", "reno"]) for s in (1, 2)]
    e = FluidEngine(scs, traces=False)
    e.steps[:] = [17, 4]
    drops = np.array([0.5, 0.0, 2.0, 0.1, 0.0, 3.0])
    losses = np.array([0.0, 0.2, 0.0, 1.5, 0.7, 0.0])
    together = e._draw((drops, "drops"), (losses, "losses"), (np.zeros(6), "marks"))
    assert together[2] is None
    for (mean, stream), k in zip([(drops, "drops"), (losses, "losses")], together):
        alone, = e._draw((mean, stream))
        assert np.array_equal(k, alone)
        assert np.all(k[mean == 0] == 0)
    # the streams are independent: the same means give other counts in another stream
    other, = e._draw((drops * 0 + 3.0, "losses"))
    again, = e._draw((drops * 0 + 3.0, "drops"))
    assert not np.array_equal(other, again)
