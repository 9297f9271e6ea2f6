"""Random draws for the fluid engine that do not depend on the batch.

A batch integrates many scenarios at once, yet each scenario's result must be
the one it gives alone, bit for bit. So draws come from a counter-based
generator: the uniform for (scenario seed, stream, step, flow) is a hash of
those four numbers (SplitMix64's finaliser, Steele, Lea & Flood, OOPSLA
2014), whatever else is in the batch and in whatever order it is drawn.
"""

from __future__ import annotations

import numpy as np
from scipy.special import ndtri

from ..algorithms.fluid import any_ as _any  # a.any() at a fraction of its cost

_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_S30, _S27, _S31, _S11 = (np.uint64(s) for s in (30, 27, 31, 11))

STREAMS = {"drops": 1, "losses": 2, "marks": 3, "retransmits": 4, "red": 5}
"""Independent streams: queue drops, random link losses, ECN marks,
whether a recovery's retransmissions are lost, and RED's count (the gaps
between its early drops and the flows they fall on)."""


def _mix(z: np.ndarray) -> np.ndarray:
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    return z ^ (z >> _S31)


def scenario_key(seed: int) -> np.uint64:
    """A 64-bit key for a scenario's seed (through numpy's SeedSequence)."""
    return np.random.SeedSequence(seed).generate_state(1, np.uint64)[0]


def uniforms(key: np.ndarray, stream: int, step: np.ndarray, flow: np.ndarray) -> np.ndarray:
    """Uniforms in (0, 1), one per element: a hash of the scenario's key, the
    stream, its step counter and the flow's index in the scenario."""
    return stream_uniforms(stream_key(key, stream), step, flow)


def stream_key(key: np.ndarray, stream: int) -> np.ndarray:
    """The first round of :func:`uniforms`' hash: the scenarios' keys for one
    stream (to compute once per batch)."""
    with np.errstate(over="ignore"):
        return _mix(key ^ (np.uint64(stream) * _GOLDEN))


def stream_uniforms(skey: np.ndarray, step: np.ndarray, flow: np.ndarray) -> np.ndarray:
    """:func:`uniforms` from the stream's keys (:func:`stream_key`)."""
    with np.errstate(over="ignore"):
        return stream_uniforms_unguarded(skey, step, flow)


def stream_uniforms_unguarded(skey: np.ndarray, step: np.ndarray,
                              flow: np.ndarray) -> np.ndarray:
    """:func:`stream_uniforms` for a caller whose ``np.errstate`` already
    ignores overflow (the fluid engine's loop): the hash's products wrap
    around by design, and an ``errstate`` block of its own costs more than
    the hash on a batch's small arrays."""
    z = _mix(skey ^ (step.astype(np.uint64) * _M2))
    z = _mix(z ^ (flow.astype(np.uint64) + _GOLDEN))
    return ((z >> _S11).astype(np.float64) + 0.5) * 2.0 ** -53


def poisson(mean: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Poisson counts with the given means, by inversion of the uniforms ``u``:
    exact (sequential search of the CDF) for means below 30, the normal
    approximation with continuity correction above."""
    mean = np.asarray(mean, dtype=float)
    small = mean < 30.0
    n_small = _any(small)
    if n_small == mean.size:  # (the usual case: no copies by mask)
        return _poisson_small(mean, u)
    k = np.zeros(mean.shape)
    if n_small:
        k[small] = _poisson_small(mean[small], u[small])
    big = ~small
    if _any(big):
        lam = mean[big]
        k[big] = np.maximum(np.floor(lam + np.sqrt(lam) * ndtri(u[big]) + 0.5), 0.0)
    return k


def _poisson_small(lam: np.ndarray, v: np.ndarray) -> np.ndarray:
    """:func:`poisson`'s exact counts for means ``lam`` below 30."""
    ks = np.zeros(lam.shape)
    p = np.exp(-lam)
    cdf = p  # (neither is changed in place)
    todo = v > cdf
    n = 0
    while _any(todo) and n < 200:
        n += 1
        ks += todo
        p = np.where(todo, p * lam / np.maximum(ks, 1.0), p)
        cdf = np.where(todo, cdf + p, cdf)
        todo = todo & (v > cdf)
    return ks
