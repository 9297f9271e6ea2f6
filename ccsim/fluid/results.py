"""A fluid run's arrays → the same :class:`~ccsim.Result` the packet engine returns."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from .regimes import weak_regimes
from ..results import TRACE_VARIABLES, Result, _tidy, events_table, summarise

if TYPE_CHECKING:
    from .engine import FluidEngine


def assemble(e: "FluidEngine", s: int, wall_time: float) -> Result:
    """The result of scenario ``s`` of the batch ``e``.

    Goodput and shares come from the cumulative deliveries at exact instants
    (each flow's end; the start and end of the interval in which all flows
    were active), not from the trace bins, so they are the same with or
    without traces. ``retransmits`` counts the segments lost and resent;
    ``recoveries`` and ``timeouts`` the model's loss reactions.
    """
    sc = e.scenarios[s]
    idx = e.order[s]
    t0, t1 = float(e.t0[s]), float(e.t1[s])
    rows = []
    for i, flow in zip(idx, sc.flows):
        start = float(e.start[i])  # its start jitter included (Scenario.flow_start)
        end = float(e.end_time[i]) if not math.isnan(e.end_time[i]) else \
            min(sc.duration, math.inf if flow.stop is None else flow.stop)
        delivered_bytes = float(e.delivered[i]) * sc.mss
        if flow.size is not None:
            delivered_bytes = min(delivered_bytes, flow.size)
        span = end - start
        done = e.done_at[i]
        rows.append({
            "algorithm": flow.algorithm, "recovery": flow.recovery_name, "start": start,
            "end": end, "base_rtt": sc.flow_rtt(int(e.jidx[i])),
            "goodput_bps": delivered_bytes * 8.0 / span if span > 0 else math.nan,
            "delivered_bytes": delivered_bytes,
            "retransmits": int(e.retransmits[i]), "timeouts": int(e.timeouts[i]),
            "recoveries": int(e.recoveries[i]),
            "mean_rtt": float(e.rtt_sum[i] / e.ack_sum[i]) if e.ack_sum[i] > 0 else math.nan,
            "fct": float(done - start) if flow.size is not None and not math.isnan(done)
            else math.nan,
        })
    shared = (e.D_t1[idx] - e.D_t0[idx]) * sc.mss * 8.0  # bits per flow over [t0, t1]
    link_bits = float(e.dep_t1[s] - e.dep_t0[s]) * sc.packet_size * 8.0
    summary, metrics = summarise(sc, rows, shared, link_bits, t0, t1)
    metrics.update({"drops": int(e.drops[s]), "losses": int(e.losses[s]),
                    "data_packets": int(round(e.sent[s])), "steps": int(e.steps[s]),
                    "batch": e.S, "wall_time": wall_time})
    if any(flow.ecn for flow in sc.flows):  # CE marks, as the packet engine reports them
        metrics["marks"] = int(round(float(e.marks[s])))
    return Result(scenario=sc, mode="fluid", summary=summary, metrics=metrics,
                  traces=_traces(e, s, idx), events=_events(e, idx),
                  warnings=weak_regimes(sc))


def _events(e: "FluidEngine", idx: np.ndarray):
    """Scenario ``s``'s recoveries and timeouts (flows ``idx`` of the batch)."""
    where = {int(g): j for j, g in enumerate(idx)}
    per_flow: list[list[tuple[float, str]]] = [[] for _ in idx]
    for times, flows, name in e.loss_events:
        for t, g in zip(times.tolist(), flows.tolist()):
            j = where.get(g)
            if j is not None:
                per_flow[j].append((t, name))
    return events_table(per_flow)


def _traces(e: "FluidEngine", s: int, idx: np.ndarray) -> pd.DataFrame:
    sc = e.scenarios[s]
    if not e.traces:
        return pd.DataFrame({"time": pd.Series(dtype=float),
                             "flow": pd.Series(dtype="Int64"),
                             "variable": pd.Categorical([], categories=list(TRACE_VARIABLES)),
                             "value": pd.Series(dtype=float)})
    n = int(e.n_bins[s])
    dt = sc.sample_interval
    times = np.arange(n) * dt
    edges = e.tr_delivered[idx, :n + 1].copy()
    edges[:, n] = e.delivered[idx]  # the last edge: everything, at the end of the run
    goodput = np.diff(edges, axis=1).T * sc.mss * 8.0 / dt  # bit/s in each bin
    return _tidy(times, dt, {"cwnd": e.tr_cwnd[idx, :n].T, "ssthresh": e.tr_ssthresh[idx, :n].T,
                             "rtt": e.tr_rtt[idx, :n].T, "goodput": goodput},
                 e.tr_queue[s, :n])
