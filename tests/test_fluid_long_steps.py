"""Closed forms that let the fluid engine take steps of several RTTs, against
the readable per-RTT (or per-sample) rules they integrate.

A law with ``long_steps = True`` must give over a step of ``n`` RTTs what its
rule gives applied many times over that step: BIC's growth is the integral
of the window law's :meth:`Bic.increment` (checked against a fine numerical
integration of the packet law's own method), and Westwood+'s ``k`` samples
of one rate are the two cascaded EWMAs applied ``k`` times.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ccsim.algorithms.bic import Bic, BicFluid
from ccsim.algorithms.westwood import WestwoodFluid, filter_once, filtered


def _integrate(cc: Bic, cwnd: float, rounds: float, m: int = 4000) -> float:
    """``dcwnd/dn = cc.increment(cwnd)`` over ``rounds`` RTTs by the
    midpoint rule in ``m`` steps (the packet law's rule, scalar)."""
    dn = rounds / m
    for _ in range(m):
        mid = cwnd + 0.5 * dn * cc.increment(cwnd)
        cwnd += dn * cc.increment(mid)
    return cwnd


@pytest.mark.parametrize("w_max", [0.0, 30.0, 200.0, 800.0])
@pytest.mark.parametrize("params", [{}, {"b": 2.0, "s_max": 8.0, "low_window": 40.0}])
def test_bic_step_of_many_rtts_is_the_increment_integrated(w_max, params):
    cc = Bic(**params)
    cc.w_max = w_max
    law = BicFluid(cc)
    rng = np.random.default_rng(7)
    cwnd = rng.uniform(2.0, 1200.0, 12)
    rounds = rng.uniform(0.0, 12.0, 12)
    got = law.advance(cwnd, np.full(12, w_max), rounds)
    m = 4000
    for w, n, g in zip(cwnd, rounds, got):
        want = _integrate(cc, float(w), float(n), m)
        # the midpoint rule is exact on each affine piece to ~1e-9 here; where
        # the rate jumps (at low_window from 1 to up to s_max, at W_max − b
        # from 1 to b/smooth_part) it errs by up to one step dn × the jump
        jump = cc.s_max if w < cc.low_window else 1.0
        assert g == pytest.approx(want, rel=1e-7, abs=2.0 * jump * n / m), (w, n)


def test_bic_long_step_stops_short_of_w_max():
    # the binary search approaches W_max and never passes it within the
    # search (the old step-start rate over 8 RTTs would have jumped past)
    law = BicFluid(Bic())
    w = law.advance(np.array([100.0]), np.array([140.0]), np.array([8.0]))
    # a quarter of the gap per RTT: the gap of 40 shrinks as e^(−n/4) while
    # above b = 4 segments (ln(40/4)·4 ≈ 9.2 RTTs)
    assert w[0] == pytest.approx(140.0 - 40.0 * np.exp(-2.0), rel=1e-12)


def test_bic_step_of_no_time_leaves_the_window():
    law = BicFluid(Bic())
    cwnd = np.array([5.0, 50.0, 500.0])
    assert law.advance(cwnd, np.array([0.0, 60.0, 300.0]), np.zeros(3)).tolist() == cwnd.tolist()


def test_bic_advance_splits_into_parts_exactly():
    # integrating n1 then n2 RTTs is integrating n1 + n2 (the closed form is a flow)
    law = BicFluid(Bic())
    rng = np.random.default_rng(3)
    cwnd, w_max = rng.uniform(2, 900, 200), rng.uniform(0, 900, 200)
    n1, n2 = rng.uniform(0, 6, 200), rng.uniform(0, 6, 200)
    once = law.advance(cwnd, w_max, n1 + n2)
    twice = law.advance(law.advance(cwnd, w_max, n1), w_max, n2)
    np.testing.assert_allclose(twice, once, rtol=1e-9)  # rounding of exp/log only


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
    else:  # the closed form rounds differently: relative to the values' scale
        scale = max(ns, est, sample)
        assert abs(got_ns[0] - want_ns) <= 1e-12 * scale * k
        assert abs(got_est[0] - want_est) <= 1e-12 * scale * k


def test_long_step_laws_declare_it():
    assert BicFluid.long_steps and WestwoodFluid.long_steps
