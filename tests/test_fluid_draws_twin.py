"""The fluid engine's vectorised draws against ccsim's one SplitMix64."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from ccsim import _splitmix
from ccsim.fluid.draws import uniforms

u64 = st.integers(0, (1 << 64) - 1)


@given(u64, st.integers(1, 4), st.integers(0, 10**6), st.integers(0, 1000))
def test_fluid_uniforms_are_splitmix_finalisers_of_their_keys(key, stream, step, flow):
    mix, mask = _splitmix.mix, _splitmix.MASK
    z = mix(key ^ ((stream * _splitmix.GOLDEN) & mask))
    z = mix(z ^ ((step * _splitmix.M2) & mask))
    z = mix(z ^ ((flow + _splitmix.GOLDEN) & mask))
    want = ((z >> 11) + 0.5) * 2.0 ** -53
    got = uniforms(np.array([key], np.uint64), stream, np.array([step]), np.array([flow]))
    assert got[0] == want


def test_draw_steps_the_generator_and_stays_in_the_unit_interval():
    state, seen = _splitmix.seed_from("a", 1), set()
    for _ in range(1000):
        state, u = _splitmix.draw(state)
        assert 0.0 <= u < 1.0
        seen.add(u)
    assert len(seen) == 1000 and abs(np.mean(list(seen)) - 0.5) < 0.05  # 5 sigma is ~0.046
