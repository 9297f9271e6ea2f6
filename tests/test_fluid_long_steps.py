"""Closed forms that let the fluid engine take steps of several RTTs, against
the readable per-sample rules they integrate: Westwood+'s ``k`` samples of
one rate are its two cascaded EWMAs applied ``k`` times.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from ccsim.algorithms.westwood import WestwoodFluid, filter_once, filtered


@given(st.floats(1.0, 1e6), st.floats(1.0, 1e6), st.floats(0.0, 1e6), st.integers(1, 40),
       st.sampled_from([1 / 8, 0.1, 0.5]))
def test_westwood_k_samples_are_the_filter_k_times(ns, est, sample, k, gain):
    want_ns, want_est = ns, est
    for _ in range(k):
        want_ns, want_est = filter_once(want_ns, want_est, sample, gain)
    got_ns, got_est = filtered(np.array([ns]), np.array([est]), np.array([sample]),
                               np.array([float(k)]), gain)
    if k == 1:  # the short step's update, bit for bit
        assert (got_ns[0], got_est[0]) == (want_ns, want_est)
    else:  # the closed form rounds differently: a few ulps of the values' scale per sample
        scale = max(ns, est, sample)
        assert abs(got_ns[0] - want_ns) <= 1e-12 * scale * k
        assert abs(got_est[0] - want_est) <= 1e-12 * scale * k


def test_westwood_closed_form_is_not_one_sample():
    # a wrong closed form that took one sample for k would fail here: after
    # 16 samples of 100 from 0 the estimate is near 100 (one sample: 1.6)
    ns, est = filtered(np.array([0.0]), np.array([0.0]), np.array([100.0]), np.array([16.0]),
                       1 / 8)
    assert ns[0] > 85.0 and est[0] > 60.0


def test_westwood_takes_long_steps():
    assert WestwoodFluid.long_steps
