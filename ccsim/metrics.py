"""Aggregate metrics over per-flow figures: Jain's index, the UF index,
utilisation, and integration of binned counts over an interval.

Pure functions on numbers and arrays: both engines' results use them.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np


def jain(x: Sequence[float]) -> float:
    """Jain's fairness index ``(Σx)² / (n·Σx²)``: 1 when all equal, 1/n when
    one takes everything (Jain, Chiu, Hawe, DEC-TR-301, 1984). NaN if all
    are zero or there are none."""
    x = np.asarray(x, dtype=float)
    if x.size == 0 or not np.any(x):
        return math.nan
    return float(x.sum() ** 2 / (x.size * np.square(x).sum()))


def unfairness(throughput: Sequence[float], rtt: Sequence[float]) -> float:
    """Lai & Yao's UF index (§4.2), in percent:
    ``|mean(long) − mean(short)| / mean(all) · 100``, where the short flows
    have the smallest base RTT and the long ones the largest. NaN unless the
    flows have at least two distinct base RTTs."""
    thr = np.asarray(throughput, dtype=float)
    rtt = np.asarray(rtt, dtype=float)
    lo, hi = rtt.min(), rtt.max()
    if not hi > lo * (1 + 1e-9) or thr.mean() == 0:
        return math.nan
    short, long_ = thr[rtt <= lo * (1 + 1e-9)], thr[rtt >= hi * (1 - 1e-9)]
    return float(abs(long_.mean() - short.mean()) / thr.mean() * 100.0)


def integrate_bins(bins: np.ndarray, width: float, start: float, end: float) -> np.ndarray:
    """Total of per-bin counts over ``[start, end)`` (s), along axis 0.

    Bin ``k`` holds what happened in ``[k·width, (k+1)·width)``; bins cut by
    the interval's ends count in proportion to their overlap (counts are taken
    as spread evenly within a bin).

    The sum is exactly rounded (:func:`math.fsum`), so the result is the
    same on every machine: a BLAS dot product's rounding depends on the
    library numpy was built with.
    """
    bins = np.asarray(bins, dtype=float)
    n = bins.shape[0]
    edges = np.arange(n + 1) * width
    overlap = np.clip(np.minimum(edges[1:], end) - np.maximum(edges[:-1], start), 0.0, None)
    terms = (overlap / width).reshape((n,) + (1,) * (bins.ndim - 1)) * bins
    if bins.ndim == 1:
        return np.float64(math.fsum(terms))
    columns = terms.reshape(n, -1).T
    return np.array([math.fsum(c) for c in columns]).reshape(bins.shape[1:])
