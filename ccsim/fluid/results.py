"""A fluid run's arrays → the same :class:`~ccsim.Result` the packet engine returns.

One assembly for the whole batch: the metrics of every scenario are
computed at once, and each result's tables (summary, traces, events) are
built from the batch's arrays the first time they are read — a pandas
frame per scenario costs milliseconds, more than a scenario's whole run in
a large batch. A :class:`FluidResult` is a :class:`~ccsim.Result` (its
tables are properties), and pickles as a plain one.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..results import (TRACE_VARIABLES, Result, events_table, shares_and_metrics, summary_frame,
                       tidy_traces)
from .regimes import weak_regimes

if TYPE_CHECKING:
    from .engine import FluidEngine


FLUID_FCT = ("sized flows: no fct in the fluid engine (its slow start ends short flows "
             "early, below their ideal completion time); run mode='packet' for "
             "completion times")


class FluidResult(Result):
    """A :class:`~ccsim.Result` of a fluid batch whose tables are built on
    first use from the batch's arrays (then kept)."""

    def __init__(self, e: "FluidEngine | None" = None, s: int = 0,
                 metrics: dict[str, Any] | None = None, share: np.ndarray | None = None,
                 shared: np.ndarray | None = None, **fields: Any) -> None:
        self._tables: dict[str, pd.DataFrame] = {}
        self._source: tuple[Any, int, np.ndarray, np.ndarray] | None = None
        if e is None:  # a Result's own fields (dataclasses.replace)
            Result.__init__(self, metrics=metrics, **fields)
            return
        self.scenario = e.scenarios[s]
        self.mode = "fluid"
        self.metrics = metrics
        self.warnings = weak_regimes(self.scenario)
        if any(flow.size is not None for flow in self.scenario.flows):
            self.warnings.append(FLUID_FCT)
        self._source = (e, s, share, shared)

    @property
    def built(self) -> tuple[str, ...]:
        """The tables assembled so far (``"summary"``, ``"traces"``,
        ``"events"``), in the order first read: none until one is."""
        return tuple(self._tables)

    def _table(self, name: str) -> pd.DataFrame:
        if name not in self._tables:
            e, s, share, shared = self._source
            idx = e.order[s]
            self._tables[name] = (_summary(e, s, idx, share, shared, self.metrics["interval"])
                                  if name == "summary" else
                                  _traces(e, s, idx) if name == "traces" else _events(e, idx))
            if len(self._tables) == 3:
                self._source = None  # everything built: let the batch go
        return self._tables[name]

    def _setter(name: str):  # noqa: N805 - builds the properties below
        def get(self) -> pd.DataFrame:
            return self._table(name)

        def put(self, value: pd.DataFrame) -> None:
            self._tables[name] = value

        return property(get, put)

    summary = _setter("summary")
    traces = _setter("traces")
    events = _setter("events")
    del _setter

    def __reduce__(self):
        return (Result, (self.scenario, self.mode, self.summary, self.metrics, self.traces,
                         self.events, self.warnings))


def assemble_batch(e: "FluidEngine", wall_time: float) -> list[Result]:
    """The results of every scenario of the batch ``e``, in order.

    Goodput and shares come from the cumulative deliveries at exact instants
    (each flow's end; the start and end of the interval in which all flows
    were active), not from the trace bins, so they are the same with or
    without traces. ``retransmits`` counts the segments lost and resent;
    ``recoveries`` and ``timeouts`` the model's loss reactions.
    """
    out: list[Result] = []
    bits = (e.D_t1 - e.D_t0) * e.mss * 8.0   # bits per flow over [t0, t1]
    link_bits = (e.dep_t1 - e.dep_t0) * np.array([sc.packet_size for sc in e.scenarios]) * 8.0
    drops, losses = e.drops.astype(np.int64).tolist(), e.losses.astype(np.int64).tolist()
    sent, steps = np.round(e.sent).astype(np.int64).tolist(), e.steps.tolist()
    t0s, t1s = e.t0.tolist(), e.t1.tolist()
    for s, sc in enumerate(e.scenarios):
        share, metrics = shares_and_metrics(sc, bits[e.order[s]], float(link_bits[s]),
                                            t0s[s], t1s[s])
        metrics.update({"drops": drops[s], "losses": losses[s], "data_packets": sent[s],
                        "steps": steps[s], "batch": e.S, "wall_time": wall_time})
        if any(flow.ecn for flow in sc.flows):  # CE marks, as the packet engine reports them
            metrics["marks"] = int(round(float(e.marks[s])))
        out.append(FluidResult(e, s, metrics, share, bits[e.order[s]]))
    return out


def _summary(e: "FluidEngine", s: int, idx: np.ndarray, share: np.ndarray, shared: np.ndarray,
             interval: tuple[float, float]) -> pd.DataFrame:
    """Scenario ``s``'s summary table (flows ``idx`` of the batch)."""
    sc = e.scenarios[s]
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
            "algorithm": flow.algorithm, "recovery": sc.flow_stack(int(e.jidx[i])).recovery, "start": flow.start,
            "end": end, "base_rtt": sc.flow_rtt(int(e.jidx[i])),
            "lifetime_goodput_bps": delivered_bytes * 8.0 / span if span > 0 else math.nan,
            "delivered_bytes": delivered_bytes,
            "retransmits": int(e.retransmits[i]), "timeouts": int(e.timeouts[i]),
            "recoveries": int(e.recoveries[i]),
            "mean_rtt": float(e.rtt_sum[i] / e.ack_sum[i]) if e.ack_sum[i] > 0 else math.nan,
            # no completion time: the fluid slow start acknowledges data from
            # the first instant (no first RTT) and keeps a whole window in
            # flight to the last byte, so sized flows end early, short ones
            # below their ideal FCT (docs/workloads.md); the packet engine's
            "fct": math.nan,
            "finished": flow.size is not None and not math.isnan(done),
        })
    return summary_frame(sc, rows, share, shared, *interval)


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
    return tidy_traces(times, dt, {"cwnd": e.tr_cwnd[idx, :n].T,
                                   "ssthresh": e.tr_ssthresh[idx, :n].T,
                                   "rtt": e.tr_rtt[idx, :n].T, "goodput": goodput},
                       e.tr_queue[s, :n])
