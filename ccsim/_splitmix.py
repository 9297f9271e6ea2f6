"""SplitMix64 (Steele, Lea & Flood, "Fast splittable pseudorandom number
generators", OOPSLA 2014): the one definition of ccsim's small, stateless
random draws.

A draw that must not depend on what else runs — a flow's start jitter, a
window law's coin, the fluid engine's batch of scenarios — is a hash of
integers through SplitMix64's finaliser (:func:`mix`). The fluid engine runs
the same finaliser vectorised over numpy arrays (:mod:`ccsim.fluid.draws`);
a test holds the two to each other.
"""

from __future__ import annotations

import hashlib

MASK = (1 << 64) - 1
GOLDEN = 0x9E3779B97F4A7C15
"""SplitMix64's increment: 2**64 divided by the golden ratio."""
M1 = 0xBF58476D1CE4E5B9
M2 = 0x94D049BB133111EB


def mix(z: int) -> int:
    """SplitMix64's finaliser of the 64-bit ``z``."""
    z = ((z ^ (z >> 30)) * M1) & MASK
    z = ((z ^ (z >> 27)) * M2) & MASK
    return z ^ (z >> 31)


def draw(state: int) -> tuple[int, float]:
    """One generator step: ``(next state, u)`` with ``u`` uniform in [0, 1).
    The state is a plain int, so an object holding it compares by value."""
    state = (state + GOLDEN) & MASK
    return state, (mix(state) >> 11) / float(1 << 53)


def seed_from(*parts: object) -> int:
    """A 64-bit state from ``parts`` (their ``repr``s, hashed with SHA-256):
    the same parts give the same state in any process."""
    text = ":".join(repr(p) for p in parts).encode()
    return int.from_bytes(hashlib.sha256(text).digest()[:8], "little")


def uniform(seed: int, stream: int, i: int) -> float:
    """A uniform in [0, 1) that depends only on ``(seed, stream, i)``."""
    z = mix((seed * GOLDEN) & MASK)
    z = mix(z ^ ((stream * M2) & MASK))
    z = mix(z ^ ((i + GOLDEN) & MASK))
    return (z >> 11) * 2.0 ** -53
