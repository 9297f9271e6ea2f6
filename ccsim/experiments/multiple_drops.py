"""Fall & Floyd's multiple drops in one window, for each recovery strategy.

Source: K. Fall, S. Floyd, "Simulation-based Comparisons of Tahoe, Reno, and
SACK TCP", ACM CCR 26(3), 1996, §3–§5: a single flow whose window holds
steady, with one to four packets of one window dropped; Tahoe goes back to
slow start, Reno needs a timeout once drops pile up, NewReno repairs one
loss per RTT, SACK repairs them within about one RTT.

Two setups hold the flow's window near ``window`` segments when the drops
come, and the path has no other loss:

* ``"clamped"``: the receiver window is ``window`` segments, so the window is
  the same whichever strategy runs; segments ``first, first + spacing, ...``
  are dropped once each. The clamp also stops Reno from sending new data
  while its inflated window grows in recovery, so its two-drop case times out.
* ``"open"``: no receiver window. One earlier drop, at segment
  ``2·window − 5``, ends slow start when about ``2·window`` segments are in
  flight, so ssthresh is about ``window``; the k drops start four windows
  later, in congestion avoidance. As in the paper, Reno then recovers from
  two drops with two fast retransmits and times out from three.
"""

from __future__ import annotations

import functools
import math
from typing import Iterable

import pandas as pd

from ..packet import PacketEngine
from ..scenario import dumbbell
from ..sweeps import sweep
from ._result import ExperimentResult, flow_for

FAMILY = ("tahoe", "reno", "newreno", "sack", "fack", "rate-halving", "ssdr", "prr")


def multiple_drops(strategies: Iterable[str] = FAMILY, drops: Iterable[int] = (1, 2, 3, 4), *,
                   bandwidth="10Mbps", rtt="100ms", window: int = 20, first: int = 60,
                   spacing: int = 3, duration="5s", min_rto="1s",
                   setups: Iterable[str] = ("clamped", "open"),
                   workers: int | None = None, executor=None, store=None,
                   progress: bool = False) -> ExperimentResult:
    """Run the multiple-drop experiment.

    Args:
        strategies: family members: algorithm names (``"newreno"``, ``"sack"``,
            ...) or recovery names on Reno's law (``"prr"``).
        drops: numbers of segments dropped from one window.
        bandwidth, rtt: the path (bit/s, s; strings accepted).
        window: the flow's window (segments) when the drops come.
        first, spacing: the dropped segments are ``first + spacing·j`` in the
            clamped setup (the open one starts four windows after its
            priming drop).
        setups: ``"clamped"`` and/or ``"open"`` (see the module's docstring).
        duration: simulated time per run (s).
        min_rto: minimum RTO (s); 1 s, RFC 6298's, as in the paper's ns runs.
            The runs use ns-2's agents (``stack="ns2"``): one-way senders,
            an ACK per segment, classic recovery for ``"reno"``; the initial
            window stays 10 segments, for which the open setup's priming drop
            and its drops are placed.
        workers, executor, store, progress: as in :func:`ccsim.sweep`, which
            runs the cases with :func:`traced_run`.

    Returns:
        An :class:`ExperimentResult` whose table has one row per (setup,
        strategy, drops): ``window_at_drop`` (segments the sender may have in
        flight when the first chosen segment is sent), ``timeouts`` (the open setup's priming drop
        never causes one), ``retransmits``, ``recoveries``,
        ``recovery_time`` (s, from the first retransmission until every dropped
        segment is acknowledged), ``recovery_rtts`` (the same in RTTs) and
        ``delivered_segments``; ``plot()`` draws time–sequence plots for the
        largest number of drops, in the first setup.
    """
    setups = list(setups)
    for setup in setups:
        if setup not in ("clamped", "open"):
            raise ValueError(f"setups: {setup!r} is not allowed; use 'clamped' or 'open'")
    cases = [(setup, name, k) for setup in setups for name in strategies for k in drops]
    priming = 2 * window - 5
    scenarios, chosen = [], []
    for setup, name, k in cases:
        if setup == "clamped":
            lost, extra, rwnd = _dropped(first, spacing, k), [], window * 1460
        else:
            lost, extra, rwnd = _dropped(priming + 4 * window, spacing, k), [priming], None
        chosen.append(lost)
        scenarios.append(dumbbell(bandwidth, rtt, buffer=10 * window, duration=duration,
                                  min_rto=min_rto, rwnd=rwnd, seed=1, stack="ns2",
                                  initial_window=10,  # where the open setup's drops fall
                                  flows=[flow_for(name, drop_segments=extra + lost)]))
    runs = pd.concat([
        sweep([sc for sc, (setup, _, _) in zip(scenarios, cases) if setup == each],
              workers=workers, executor=executor, store=store, progress=progress,
              runner=_watching(first if each == "clamped" else priming + 4 * window))
        for each in setups], ignore_index=True)
    rows, traces = [], {}
    for (setup, name, k), lost, sc, row in zip(cases, chosen, scenarios, runs.itertuples()):
        if row.error:
            raise RuntimeError(f"{name} with {k} drops failed: {row.error}\n{row.traceback}")
        span = row.recovery_time
        rows.append({"setup": setup, "strategy": name, "drops": k,
                     "window_at_drop": row.window_at_drop, "timeouts": int(row.timeouts),
                     "retransmits": int(row.retransmits), "recoveries": int(row.recoveries),
                     "recovery_time": span, "recovery_rtts": span / sc.flow_rtt(0),
                     "delivered_segments": row.delivered_bytes / sc.mss})
        if setup == setups[0]:
            traces[name, k] = _frame(row.sent, lost)
    table = pd.DataFrame(rows)
    return ExperimentResult("multiple drops (Fall & Floyd 1996)", table,
                            {"traces": traces, "rtt": sc.flow_rtt(0), "setup": setups[0]},
                            _draw)


def _dropped(first: int, spacing: int, k: int) -> list[int]:
    return [first + spacing * j for j in range(k)]


def traced_run(scenario, mode: str = "packet", watch_from: int | None = None):
    """Run a one-flow scenario in the packet engine, recording its segment
    events: the result's metrics gain ``recovery_time`` (s, from the first
    retransmission of a segment ``watch_from`` or later until every dropped
    segment is acknowledged), ``window_at_drop`` (segments the sender may
    have in flight, cwnd or the receive window if smaller, when segment
    ``watch_from`` is first sent) and ``sent`` (``[time, segment,
    retransmission]`` of every transmission). ``watch_from`` defaults to the
    first dropped segment. The runner :func:`multiple_drops` gives
    :func:`ccsim.sweep`."""
    lost = sorted(scenario.flows[0].drop_segments)
    watch = lost[0] if watch_from is None else watch_from
    result = PacketEngine(scenario, events=True).run()
    ev = result.events[result.events["flow"] == 0]
    sent = ev[ev["event"].isin(["sent", "retransmitted"])]
    first = sent[sent["seq"] == watch]
    window = float(first["cwnd"].iloc[0]) if len(first) else math.nan
    resent = sent[(sent["event"] == "retransmitted") & (sent["seq"] >= watch)]
    repaired = ev[(ev["event"] == "acked") & (ev["seq"] > lost[-1])]
    result.metrics["recovery_time"] = ((float(repaired["time"].iloc[0])
                                        if len(repaired) else math.nan)
                                       - (float(resent["time"].iloc[0])
                                          if len(resent) else math.nan))
    rwnd = math.inf if scenario.rwnd is None else scenario.rwnd / scenario.mss
    result.metrics["window_at_drop"] = min(window, rwnd)
    result.metrics["sent"] = [[float(t), int(q), k == "retransmitted"]
                              for t, q, k in zip(sent["time"], sent["seq"], sent["event"])]
    return result


def _watching(segment: int):
    """:func:`traced_run` watching from ``segment``, named for the sweep's store."""
    runner = functools.partial(traced_run, watch_from=segment)
    runner.__module__ = __name__
    runner.__qualname__ = f"traced_run[watch_from={segment}]"
    return runner


def _frame(sent, lost: list[int]) -> pd.DataFrame:
    out = pd.DataFrame([tuple(s) for s in sent], columns=["time", "segment", "retransmission"])
    out["retransmission"] = out["retransmission"].astype(bool)
    out["dropped"] = out["segment"].isin(lost) & ~out.duplicated("segment")
    return out


def _draw(result: ExperimentResult):
    from ..plot import new_figure as Figure

    table = result.table
    k = table["drops"].max()
    names = list(dict.fromkeys(table["strategy"]))
    cols = min(4, len(names))
    rows = -(-len(names) // cols)
    fig = Figure(figsize=(3.2 * cols, 2.8 * rows + 0.6), layout="constrained")
    axes = fig.subplots(rows, cols, sharex=True, sharey=True, squeeze=False)
    for ax, name in zip(axes.flat, names):
        tr = result.data["traces"][name, k]
        start = tr.loc[tr["dropped"], "time"].min()
        window = tr[(tr["time"] >= start - result.data["rtt"]) &
                    (tr["time"] <= start + 12 * result.data["rtt"])]
        fresh = window[~window["retransmission"] & ~window["dropped"]]
        ax.plot(fresh["time"], fresh["segment"], ".", ms=2.5, color="0.35", label="sent")
        lost = window[window["dropped"]]
        ax.plot(lost["time"], lost["segment"], "x", ms=6, color="tab:red", label="dropped")
        again = window[window["retransmission"]]
        ax.plot(again["time"], again["segment"], "o", ms=4, mfc="none", color="tab:blue",
                label="retransmitted")
        row = table[(table["strategy"] == name) & (table["drops"] == k)].iloc[0]
        ax.set_title(f"{name}: {row.timeouts} timeout(s), "
                     f"{row.recovery_rtts:.1f} RTTs", fontsize=9)
        ax.grid(alpha=0.3)
    for ax in axes.flat[len(names):]:
        ax.set_visible(False)
    for ax in axes[-1]:
        ax.set_xlabel("time (s)")
    for ax in axes[:, 0]:
        ax.set_ylabel("segment number")
    axes.flat[0].legend(fontsize=7, loc="upper left")
    fig.suptitle(f"{k} drops from one window ({result.data['setup']} setup): "
                 "time–sequence plots", fontsize=11)
    return fig
