"""Aggregate metrics over per-flow figures and events: Jain's index, the UF
index, utilisation, flow completion times, congestion events, and
integration of binned counts over an interval.

Pure functions on numbers, arrays and tables: both engines' results use them.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from .errors import ScenarioError


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


SIZE_BUCKETS = (0, 10_000, 100_000, 1_000_000, 10_000_000, math.inf)
"""Default edges of :func:`fct_percentiles`' size buckets (bytes): below
10 KB, 10–100 KB, 100 KB–1 MB, 1–10 MB and above, each ``(low, high]``."""


def ideal_fct(size, rate, base_rtt, mss: int = 1460, header: int = 40):
    """The completion time of a flow alone on its path, without slow start
    (s): its packets' bytes on the wire, ``ceil(size / mss) · (mss +
    header)``, at the bottleneck's ``rate`` (bit/s), plus one base RTT (s).
    ``size`` in bytes; numbers or arrays. This is the denominator of FCT
    slowdown as HPCC (Li et al., SIGCOMM 2019) and Homa (Montazeri et al.,
    SIGCOMM 2018) report it: the FCT a flow would have in an empty network."""
    packets = np.ceil(np.asarray(size, dtype=float) / mss)
    return packets * (mss + header) * 8.0 / np.asarray(rate, dtype=float) + np.asarray(
        base_rtt, dtype=float)


def fct_slowdown(summary, mss: int = 1460, header: int = 40):
    """Each flow's FCT slowdown, ``fct / ideal_fct(size, bandwidth,
    base_rtt)`` (≥ about 1; NaN for bulk and unfinished flows), from a
    summary table's ``size``, ``fct``, ``bandwidth`` and ``base_rtt``
    columns, as a pandas Series on its index. ``mss`` and ``header`` are the
    scenario's (bytes)."""
    ideal = ideal_fct(summary["size"].to_numpy(float), summary["bandwidth"].to_numpy(float),
                      summary["base_rtt"].to_numpy(float), mss, header)
    return summary["fct"] / ideal


def fct_percentiles(summary, percentiles=(50, 95, 99), buckets=SIZE_BUCKETS,
                    mss: int = 1460, header: int = 40):
    """FCT and slowdown percentiles by flow size, a tidy pandas DataFrame.

    Flows with a ``size`` fall into ``buckets`` (edges in bytes, each bucket
    ``(low, high]``); within each, the given percentiles (0–100, linear
    interpolation, as numpy's default) of the finished flows' ``fct`` (s)
    and slowdown (:func:`fct_slowdown`). Columns: ``bucket`` (a label such
    as ``"10KB-100KB"``), ``low``, ``high`` (bytes), ``flows`` (sized flows
    in the bucket), ``finished`` (of them, the ones whose percentiles these
    are: a flow unfinished at the end has no FCT, so a bucket with many
    unfinished flows reads better than it is), ``percentile``, ``fct``,
    ``slowdown``. Empty buckets are left out.
    """
    import pandas as pd

    from .units import format_size

    edges = [float(b) for b in buckets]
    if len(edges) < 2 or any(b <= a for a, b in zip(edges, edges[1:])):
        raise ScenarioError("buckets", tuple(buckets), "increasing edges in bytes, two or more")
    pct = [float(p) for p in percentiles]
    if any(not 0.0 <= p <= 100.0 for p in pct):
        raise ScenarioError("percentiles", tuple(percentiles), "numbers from 0 to 100")
    sized = summary[summary["size"].notna()]
    slow = fct_slowdown(sized, mss, header)
    rows = []
    for low, high in zip(edges, edges[1:]):
        inside = (sized["size"] > low) & (sized["size"] <= high)
        if not inside.any():
            continue
        done = inside & sized["finished"].astype(bool)
        label = (f"<={format_size(high)}" if low <= 0 else
                 f">{format_size(low)}" if math.isinf(high) else
                 f"{format_size(low)}-{format_size(high)}")
        fct = sized.loc[done, "fct"].to_numpy(float)
        sd = slow[done].to_numpy(float)
        for p in pct:
            rows.append({"bucket": label, "low": low, "high": high,
                         "flows": int(inside.sum()), "finished": int(done.sum()),
                         "percentile": p,
                         "fct": float(np.percentile(fct, p)) if len(fct) else math.nan,
                         "slowdown": float(np.percentile(sd, p)) if len(sd) else math.nan})
    return pd.DataFrame(rows, columns=["bucket", "low", "high", "flows", "finished",
                                       "percentile", "fct", "slowdown"])


REDUCTIONS = ("recovery", "timeout")
"""The :attr:`Result.events <ccsim.Result.events>` that reduce a window."""


def congestion_events(events, window: float, since: float = 0.0):
    """Group a run's window reductions into congestion events.

    A congestion event is a run of reductions (``recovery`` and ``timeout``
    rows of :attr:`ccsim.Result.events`) of any flows, each within
    ``window`` (s) of the run's first: with ``window`` one RTT at a full
    queue (two-way propagation plus the buffer's delay at the link's rate),
    the reductions one overflow of the queue causes. Reductions before
    ``since`` (s) are left out (slow starts, say).

    Returns a pandas DataFrame, one row per event in time order: ``time``
    (s, its first reduction), ``reductions``, ``flows`` (a sorted tuple of
    the flows it reduced) and ``n_flows``. How many flows an event reduces
    says how synchronised they are: ``n_flows`` equal to the number of flows
    in every row is full synchronisation.
    """
    import pandas as pd

    if not window > 0:
        raise ScenarioError("window", window, "a duration in seconds above 0")
    red = events[(events["time"] >= since) & events["event"].isin(REDUCTIONS)]
    groups: list[list] = []  # [first time, reductions, flows]
    for t, flow in zip(red["time"].to_numpy(float), red["flow"].to_numpy()):
        if groups and t - groups[-1][0] < window:
            groups[-1][1] += 1
            groups[-1][2].add(int(flow))
        else:
            groups.append([float(t), 1, {int(flow)}])
    return pd.DataFrame({"time": [g[0] for g in groups],
                         "reductions": [g[1] for g in groups],
                         "flows": [tuple(sorted(g[2])) for g in groups],
                         "n_flows": [len(g[2]) for g in groups]},
                        columns=["time", "reductions", "flows", "n_flows"])
