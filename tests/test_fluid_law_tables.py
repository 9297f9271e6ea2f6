"""Fluid laws' tables of their window law's rule (HighSpeed's a(w) and b(w),
Scalable's gain and decrease) are built once per law class and parameter
values and shared: the same arrays as a fresh build, read-only, and never
shared between parameter values that differ."""

import numpy as np
import pytest

from ccsim.algorithms.highspeed import HighSpeed, HighSpeedFluid
from ccsim.algorithms.scalable import Scalable, ScalableFluid

CASES = [
    (HighSpeedFluid, HighSpeed, {}, {"rule": "rfc3649"}, ("_w", "_a", "_b")),
    (HighSpeedFluid, HighSpeed, {"rule": "rfc3649"}, {"rule": "rfc3649", "high_decrease": 0.2},
     ("_w", "_a", "_b")),
    (ScalableFluid, Scalable, {}, {"b": 0.25}, ("_w", "_gain", "_keep")),
]


@pytest.mark.parametrize("law, cls, params, other, names", CASES)
def test_shared_tables_are_a_fresh_build_bit_for_bit(law, cls, params, other, names):
    shared = law(cls(**params))
    fresh = law._tables(cls(**params))
    for name, table in zip(names, fresh):
        assert np.array_equal(getattr(shared, name), table)
    assert law(cls(**params))._w is shared._w  # built once


@pytest.mark.parametrize("law, cls, params, other, names", CASES)
def test_other_parameters_get_their_own_tables(law, cls, params, other, names):
    one, two = law(cls(**params)), law(cls(**other))
    # the rule's tables differ (a cache keyed on the class alone would share them)
    assert not np.array_equal(getattr(one, names[2]), getattr(two, names[2]))
    assert np.array_equal(getattr(two, names[2]), law._tables(cls(**other))[2])


def test_shared_tables_are_read_only():
    table = HighSpeedFluid(HighSpeed())._a
    with pytest.raises(ValueError):
        table[0] = 2.0
