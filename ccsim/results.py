"""What a run returns: per-flow summary, aggregate metrics, time series.

:class:`Result` is the same type for both engines. Its measurement interval
is the time in which every flow was active (from the last start to the first
end); ``goodput_bps``, ``share``, Jain's index, UF and utilisation are taken
over it, so goodputs add up and shares are their ratios.
``lifetime_goodput_bps`` is each flow's own average over its life.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from . import metrics as _m
from .scenario import Scenario

if TYPE_CHECKING:
    import matplotlib.figure

SUMMARY_COLUMNS = ("algorithm", "recovery", "start", "end", "base_rtt", "goodput_bps",
                   "share", "lifetime_goodput_bps", "delivered_bytes", "retransmits",
                   "timeouts", "recoveries", "mean_rtt", "fct")
SIZE_COLUMNS = ("size", "finished", "udp_loss")
"""Per flow, after :data:`SUMMARY_COLUMNS`: ``size`` (bytes; NaN for a bulk
flow) and ``finished`` (its last byte acknowledged before the end; always
``False`` for a bulk flow); ``udp_loss``: for a UDP source (:func:`ccsim.CBR`,
:func:`ccsim.OnOff`), the fraction of its packets that did not arrive, else NaN."""
SCENARIO_COLUMNS = ("bandwidth", "rtt", "buffer", "queue", "loss", "duration", "seed")
"""The scenario's parameters, on every row of :attr:`Result.summary`,
:meth:`Result.to_pandas` and sweep tables, so that runs stack into one table:
``bandwidth`` (the bottleneck's rate, bit/s), ``rtt`` (the path's two-way
propagation delay, s), ``buffer`` (the bottleneck's buffer, packets),
``queue`` (its discipline: ``"droptail"``, ``"red"``, ...), ``loss`` (random
loss probability along the path), ``duration`` (s) and ``seed``."""
TRACE_VARIABLES = ("cwnd", "ssthresh", "rtt", "goodput", "queue")
EVENT_COLUMNS = ("time", "flow", "event")
"""The columns every :attr:`Result.events` table has (engines may add more)."""
EVENT_KINDS = ("recovery", "timeout")
"""Event names the plots mark: ``"recovery"`` (a loss detected, fast
recovery entered) and ``"timeout"`` (the retransmission timer fired)."""


@dataclass
class Result:
    """The outcome of one run.

    Attributes:
        scenario: what was simulated.
        mode: ``"packet"`` or ``"fluid"``.
        summary: one row per flow (index ``flow``), columns:
            ``algorithm``, ``recovery``; ``start``, ``end`` (s; ``start`` as
            given, ``end`` the completion, stop or the duration); ``base_rtt``
            (two-way propagation delay, s); ``goodput_bps`` (payload delivered
            in order over the measurement interval, bit/s) and ``share`` (of
            all flows' goodput over it), so that goodputs add up to what the
            link carried and shares are their ratios;
            ``lifetime_goodput_bps`` (payload delivered in order between the
            flow's opening, ``start`` plus its start jitter
            (:meth:`Scenario.flow_start`), and its end, bit/s: what a flow
            alone for part of the run averaged); ``delivered_bytes``;
            ``retransmits`` (segments sent again); ``timeouts``;
            ``recoveries`` (fast retransmits); ``mean_rtt`` (mean RTT sample,
            s); ``fct`` (flow completion time of sized flows from their
            opening, s, else NaN); ``size`` (bytes, NaN for a bulk flow) and
            ``finished`` (``True`` once a sized flow's last byte is
            acknowledged; ``False`` for one unfinished at the end, whose
            ``fct`` is NaN, and for bulk flows);
            then the scenario's parameters (:data:`SCENARIO_COLUMNS`:
            ``bandwidth``, ``rtt``, ``buffer``, ``queue``, ``loss``,
            ``duration``, ``seed``), the same on every row.
        metrics: ``utilisation`` (fraction of the bottleneck's capacity used
            by data packets over the measurement interval), ``jain`` (Jain's
            index of the flows' goodput over it), ``uf`` (Lai & Yao's
            unfairness index, %, only when flows differ in base RTT),
            ``interval`` (start, end; s), ``drops`` (queue drops at the
            bottleneck), ``losses`` (random losses), ``data_packets`` (data
            packets sent), ``wall_time`` (s). With traffic both ways (a
            reverse flow), ``utilisation``, ``drops`` and the ``queue`` trace
            are the bottleneck's left-to-right side, ``reverse_utilisation``
            the other side's, and ``ack_drops`` counts ACKs dropped by any
            queue; each flow's ``share`` is of its own direction's goodput,
            ``jain`` and ``uf`` compare the left-to-right flows and
            ``reverse_jain`` (``reverse_uf``) the others.
        traces: tidy time series, columns ``time`` (s), ``flow`` (index;
            <NA> for the queue), ``variable`` and ``value``. Variables:
            ``cwnd``, ``ssthresh`` (segments), ``rtt`` (latest sample, s),
            ``goodput`` (bit/s over the trace interval ending at ``time``),
            ``queue`` (bottleneck backlog, packets); with traffic both ways
            also ``reverse_queue`` (the bottleneck's reverse side, packets).
        events: what happened when, one row per event, sorted by time:
            ``time`` (s), ``flow`` (index), ``event`` (name). ``"recovery"``:
            a loss was detected and the flow entered loss recovery;
            ``"timeout"``: its retransmission timer fired. Engines may add
            further event names and columns; an engine that records none
            gives an empty table with these three columns. The fluid engine
            records them when it keeps traces (``traces=True``); the packet
            engine always, and with ``ccsim.run(sc, events=True)`` every
            segment sent, dropped, delivered and acknowledged too (columns
            :data:`ccsim.packet.events.EVENT_COLUMNS`).
        warnings: sentences on how far to trust the result; empty by
            default. The fluid engine adds one for each regime in which
            docs/fluid.md documents its model as weak (a buffer of a few
            packets, a few packets of pipe and buffer per flow, heavy random
            loss: :func:`ccsim.fluid.regimes.weak_regimes`).
    """

    scenario: Scenario
    mode: str
    summary: pd.DataFrame
    metrics: dict[str, Any]
    traces: pd.DataFrame = field(repr=False)
    events: pd.DataFrame = field(repr=False, default_factory=lambda: empty_events())
    warnings: list[str] = field(default_factory=list)

    def to_pandas(self) -> pd.DataFrame:
        """One row per flow, a table that stacks across runs
        (``pd.concat([r.to_pandas() for r in results])``): ``scenario``
        (its key), ``mode``, the scenario's parameters
        (:data:`SCENARIO_COLUMNS`, SI units), ``flow`` and the summary's
        columns, then the run's ``utilisation``, ``jain`` and ``uf``."""
        summary = self.summary.reset_index()
        out = summary[list(SCENARIO_COLUMNS)].copy()
        out.insert(0, "scenario", self.scenario.key)
        out.insert(1, "mode", self.mode)
        rest = summary.drop(columns=list(SCENARIO_COLUMNS))
        out = pd.concat([out, rest], axis=1)
        for name in ("utilisation", "jain", "uf"):
            out[name] = self.metrics.get(name, math.nan)
        return out

    def series(self, variable: str) -> pd.DataFrame:
        """One traced variable as a wide table: index ``time``, a column per
        flow (a link's variable, such as the queue: a single column named
        after it). Besides :data:`TRACE_VARIABLES`, any variable an engine
        adds to :attr:`traces` (the packet engine's ``reverse_queue`` with
        traffic both ways)."""
        known = list(TRACE_VARIABLES) + sorted(
            set(map(str, self.traces["variable"].unique())) - set(TRACE_VARIABLES))
        if variable not in known:
            from .errors import ScenarioError

            raise ScenarioError("variable", variable, "one of " + ", ".join(known))
        rows = self.traces[self.traces["variable"] == variable]
        if rows["flow"].isna().all() and len(rows):  # the link's, not the flows'
            return rows.set_index("time")[["value"]].rename(columns={"value": variable})
        return rows.pivot(index="time", columns="flow", values="value")

    def to_pcap(self, path: Any, flows: Any = None, link: Any = None) -> int:
        """Write the run's data segments and ACKs to a pcap file (Wireshark,
        tshark, tcptrace): as each sender sees them, or with ``link`` (a link
        index, or ``"bottleneck"``) as they pass that link's queue.
        ``flows``: indices to keep. Needs a packet run with ``events=True``.
        Returns the packet count. See :mod:`ccsim.pcap` for what the
        headers hold."""
        from .errors import ScenarioError
        from .pcap import write_pcap

        if self.mode != "packet":
            raise ScenarioError("mode", self.mode, "'packet', run with events=True",
                                "the fluid engine has no segments")
        if link is None:
            return write_pcap(self.events, path, self.scenario.mss, flows)
        sc = self.scenario
        if sc.two_way:  # its ACKs' passage is not recorded, and not the propagation delay
            raise ScenarioError("link", link, "None (the senders' view) for a run with "
                                "traffic both ways",
                                "ACKs queue on their way back, so the events do not say when "
                                "they pass a link")
        if isinstance(link, str) and link == "bottleneck":
            link = sc.bottleneck
        if isinstance(link, bool) or not isinstance(link, (int, np.integer)) \
                or not 0 <= link < len(sc.links):
            raise ScenarioError("link", link, f"a link index in 0..{len(sc.links) - 1}, "
                                "'bottleneck', or None for the senders' view")
        lead = {}  # flow -> time from the link's queue side back to the sender (s)
        for i in range(len(sc.flows)):
            first, last = sc.flows[i].route or (0, len(sc.links) - 1)
            if first <= link <= last:
                before = max(sc.flow_rtt(i) - sc.route_rtt(i), 0.0) / 4.0  # as the engine
                lead[i] = before + sum(sc.links[j].delay for j in range(first, link))
        return write_pcap(self.events, path, sc.mss, flows, int(link), lead)

    def plot(self, **kwargs: Any) -> "matplotlib.figure.Figure":
        """cwnd, goodput and queue over time (or the ``panels`` asked for),
        losses and timeouts marked; a pyplot figure. Keywords: ``panels``,
        ``flows``, ``start``, ``end``, ``smooth``, ``ax``, ``fig``, ``marks``,
        ``figsize``; see :func:`ccsim.plot.plot_result`."""
        from .plot import plot_result

        return plot_result(self, **kwargs)

    def fct(self, percentiles: Any = (50, 95, 99), buckets: Any = None) -> pd.DataFrame:
        """FCT and FCT-slowdown percentiles by flow size, a tidy table: see
        :func:`ccsim.metrics.fct_percentiles` (its columns, the ideal FCT
        that slowdown divides by, the default size buckets). Packet runs
        only: the fluid engine gives no completion times."""
        from .errors import ScenarioError

        sc = self.scenario
        if self.mode != "packet" and any(f.size is not None for f in sc.flows):
            raise ScenarioError("mode", self.mode, "'packet' for flow completion times",
                                "the fluid slow start ends short flows early, below their "
                                "ideal FCT, so the fluid engine reports none")
        return _m.fct_percentiles(self.summary, percentiles,
                                  _m.SIZE_BUCKETS if buckets is None else buckets,
                                  mss=sc.mss, header=sc.header)

    def plot_fct(self, **kwargs: Any) -> "matplotlib.figure.Figure":
        """FCT slowdown by flow size: percentile bars per size bucket; see
        :func:`ccsim.plot.plot_fct`."""
        from .plot import plot_fct

        return plot_fct(self, **kwargs)

    def describe(self) -> str:
        """The scenario in one line, e.g. ``"dumbbell · 10 Mbit/s · RTT 20 ms ·
        droptail buffer 17 pkts · seed 1"`` (plus the engine when it is
        the fluid one); the title of :meth:`plot`."""
        return describe(self)

    def __repr__(self) -> str:
        flows = ", ".join(
            f"{r.algorithm} {_fmt(r.goodput_bps / 1e6, '.3g')} Mbit/s"
            for r in self.summary.itertuples())
        return f"<ccsim.Result {self.mode}: {self.describe()}; {flows}>"

    def table(self) -> str:
        """The summary as text in the units people read (goodput in Mbit/s,
        share in %, RTT in ms), one line per flow, without the columns every
        row shares: what ``print(res)`` shows under the scenario's line.
        :attr:`summary` itself stays in SI units with every column."""
        return display_summary(self).to_string(na_rep="–")

    def _figures(self) -> str:
        """Utilisation, Jain's index (and UF) over the measurement interval."""
        m = self.metrics
        t0, t1 = m.get("interval", (math.nan, math.nan))
        figures = [f"utilisation {_fmt(m.get('utilisation', math.nan) * 100, '.1f')}%",
                   f"Jain's index {_fmt(m.get('jain', math.nan), '.3f')}"]
        if "uf" in m:
            figures.append(f"UF {_fmt(m['uf'], '.1f')}%")
        return f"over {_fmt(t0, '.3g')}–{_fmt(t1, '.3g')} s: " + ", ".join(figures)

    def __str__(self) -> str:
        return (f"ccsim {self.mode} run: {self.describe()}\n{self._figures()}\n"
                f"{self.table()}")

    def _repr_html_(self) -> str:
        """The summary in the units people read (Mbit/s, %, ms) under a line
        describing the scenario; :attr:`summary` itself stays in SI units."""
        import html

        return (f"<p><b>ccsim {html.escape(self.mode)} run</b>: "
                f"{html.escape(self.describe())}<br>{html.escape(self._figures())}</p>"
                + display_summary(self).to_html(na_rep="–", escape=True))


def _fmt(value: Any, spec: str) -> str:
    try:
        return "–" if value is None or math.isnan(value) else format(value, spec)
    except TypeError:
        return str(value)


DISPLAY_COLUMNS = {
    "algorithm": ("algorithm", None, None), "recovery": ("recovery", None, None),
    "start": ("start (s)", 1.0, 3), "goodput_bps": ("goodput (Mbit/s)", 1e-6, 3),
    "share": ("share (%)", 100.0, 1), "retransmits": ("retransmits", None, None),
    "timeouts": ("timeouts", None, None), "recoveries": ("recoveries", None, None),
    "mean_rtt": ("mean RTT (ms)", 1e3, 1), "fct": ("completion (s)", 1.0, 3),
}
"""Summary column → (heading, scale, decimals) of the readable table."""


def display_summary(result: "Result") -> pd.DataFrame:
    """:attr:`Result.summary` for reading: goodput in Mbit/s, share in %,
    RTT in ms, rounded, without the columns every row shares; a completion
    time only when a flow has one."""
    s = result.summary
    out = pd.DataFrame(index=s.index)
    for column, (heading, scale, decimals) in DISPLAY_COLUMNS.items():
        if column == "fct" and s[column].isna().all():
            continue
        if column == "recovery" and (s["recovery"] == s["algorithm"]).all():
            continue
        out[heading] = s[column] if scale is None else (s[column] * scale).round(decimals)
    return out


def describe(result: "Result") -> str:
    """See :meth:`Result.describe`."""
    from .units import format_rate, format_time

    sc = result.scenario
    link = sc.links[sc.bottleneck]
    parts = [sc.topology if len(sc.links) == 1 else f"{sc.topology} ({len(sc.links)} links)",
             format_rate(link.rate)]
    rtts = sorted({sc.flow_rtt(i) for i in range(len(sc.flows))})
    if len(rtts) == 1:
        parts.append(f"RTT {format_time(rtts[0])}")
    else:
        parts.append(f"RTT {format_time(rtts[0])}–{format_time(rtts[-1])}")
    kind = {"droptail": "droptail", "red": "RED"}.get(link.queue.kind, link.queue.kind)
    parts.append(f"{kind} buffer {link.queue.packets(sc.packet_size)} pkts")
    if link.loss > 0:
        parts.append(f"loss {link.loss * 100:.3g}%")
    parts.append(f"seed {sc.seed}")
    if result.mode != "packet":
        parts.append(f"{result.mode} engine")
    return " · ".join(parts)


def build(scenario: Scenario, mode: str, *, times: np.ndarray, cwnd: np.ndarray,
          ssthresh: np.ndarray, rtt: np.ndarray, queue: np.ndarray,
          delivered: np.ndarray, departures: np.ndarray, flows: list[dict[str, Any]],
          extra: dict[str, Any],
          events: pd.DataFrame | list[list[tuple[float, str]]] | None = None) -> Result:
    """Assemble a :class:`Result` from an engine's raw output.

    Args:
        times: sample times (s), ``n`` of them, ``sample_interval`` apart.
        cwnd, ssthresh, rtt: ``(n, flows)`` samples (NaN where inactive).
        queue: ``(n,)`` bottleneck backlog (packets).
        delivered: ``(n, flows)`` segments delivered in order per bin.
        departures: ``(n,)`` data packets leaving the bottleneck per bin.
        flows: per flow ``end`` (s), ``retransmits``, ``timeouts``,
            ``recoveries``, ``rtt_sum`` (s), ``rtt_count``, ``done_at`` (s or
            None).
        extra: engine figures merged into ``metrics``.
        events: optional: the run's event table, or per flow a list of
            ``(time, event)`` pairs (s, name; e.g. ``(3.2, "recovery")``), in
            any order (see :func:`events_table`).
    """
    sc = scenario
    dt = sc.sample_interval
    n_flows = len(sc.flows)
    starts = np.array([sc.flow_start(i) for i in range(n_flows)])  # start jitter included
    ends = np.array([f["end"] for f in flows])
    t0, t1 = float(starts.max()), float(ends.min())
    bits = sc.mss * 8.0  # payload bits per segment
    rows = []
    for i, (flow, raw) in enumerate(zip(sc.flows, flows)):
        start = float(starts[i])
        seg = float(_m.integrate_bins(delivered[:, i], dt, start, raw["end"]))
        delivered_bytes = seg * sc.mss
        if flow.size is not None:
            # all a sized flow delivered, not the bins' share of [start, end):
            # a short flow lives inside a bin or two, which the proportional
            # cut of integrate_bins would count only in part
            delivered_bytes = min(math.fsum(delivered[:, i]) * sc.mss, flow.size)
        fct = raw["done_at"] - start if raw["done_at"] is not None and flow.size else math.nan
        span = raw["end"] - start
        rows.append({
            "algorithm": flow.algorithm,
            "recovery": sc.flow_stack(i).recovery,
            "start": flow.start,  # as given: the grid's value, the same for every seed
            "end": raw["end"],
            "base_rtt": sc.flow_rtt(i),
            "lifetime_goodput_bps": delivered_bytes * 8.0 / span if span > 0 else math.nan,
            "delivered_bytes": delivered_bytes,
            "retransmits": raw["retransmits"],
            "timeouts": raw["timeouts"],
            "recoveries": raw["recoveries"],
            "mean_rtt": raw["rtt_sum"] / raw["rtt_count"] if raw["rtt_count"] else math.nan,
            "fct": fct,
            "finished": not math.isnan(fct),
            # a UDP source: the fraction of its packets that did not arrive
            "udp_loss": (1.0 - raw["udp"][1] / raw["udp"][0] if raw.get("udp") and raw["udp"][0]
                         else math.nan),
        })
    if t1 > t0:
        shared = _m.integrate_bins(delivered, dt, t0, t1) * bits  # bits per flow
        link_bits = float(_m.integrate_bins(departures, dt, t0, t1)) * sc.packet_size * 8.0
    else:
        shared, link_bits = np.zeros(n_flows), 0.0
    summary, metrics = summarise(sc, rows, shared, link_bits, t0, t1)
    metrics.update(extra)
    goodput = delivered * bits / dt  # bit/s in each bin
    traces = tidy_traces(times, dt, {"cwnd": cwnd, "ssthresh": ssthresh, "rtt": rtt,
                                     "goodput": goodput}, queue)
    return Result(scenario=sc, mode=mode, summary=summary, metrics=metrics, traces=traces,
                  events=(events if isinstance(events, pd.DataFrame)
                          else events_table(events)))


def empty_events() -> pd.DataFrame:
    """An events table with no rows: columns ``time``, ``flow``, ``event``."""
    return pd.DataFrame({"time": pd.Series(dtype=float), "flow": pd.Series(dtype="int64"),
                         "event": pd.Series(dtype=object)})


def events_table(per_flow: list[list[tuple[float, str]]] | None) -> pd.DataFrame:
    """Per-flow ``(time, event)`` lists → the tidy :attr:`Result.events` table
    (``time``, ``flow``, ``event``), sorted by time then flow; ``None`` or
    no events give an empty table with those columns."""
    if not per_flow:
        return empty_events()
    rows = [(float(t), i, str(name)) for i, evs in enumerate(per_flow) for t, name in evs]
    if not rows:
        return empty_events()
    out = pd.DataFrame(rows, columns=list(EVENT_COLUMNS)).astype({"flow": "int64"})
    return out.sort_values(["time", "flow"], kind="stable").reset_index(drop=True)


def summarise(sc: Scenario, rows: list[dict[str, Any]], shared: np.ndarray, link_bits: float,
              t0: float, t1: float) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The summary table and the aggregate metrics, either engine.

    Args:
        rows: per flow, every summary column but ``share`` and ``goodput_bps``.
        shared: bits each flow delivered over the interval ``[t0, t1]`` (s)
            in which all flows were active.
        link_bits: bits of data packets through the bottleneck over it.
    """
    share, metrics = shares_and_metrics(sc, shared, link_bits, t0, t1)
    return summary_frame(sc, rows, share, shared, t0, t1), metrics


def shares_and_metrics(sc: Scenario, shared: np.ndarray, link_bits: float, t0: float,
                       t1: float) -> tuple[np.ndarray, dict[str, Any]]:
    """Each flow's ``share`` and the aggregate metrics (see :func:`summarise`)."""
    n_flows = len(sc.flows)
    # with traffic both ways each direction shares its own side of the links:
    # shares, Jain's index and UF are taken within a direction
    reverse = np.array([f.reverse for f in sc.flows], dtype=bool)
    share = np.full(n_flows, math.nan)
    fairness = {}  # direction -> (jain, uf)
    if t1 > t0:
        link = sc.links[sc.bottleneck]
        # a rate that changes: what the link could carry over the interval
        capacity = (link.schedule.capacity(t0, t1) if link.schedule is not None
                    else link.rate * (t1 - t0))
        utilisation = link_bits / capacity
        for side in (False, True):
            members = np.flatnonzero(reverse == side)
            if not len(members):
                continue
            mine = shared[members]
            if mine.sum() > 0:
                share[members] = mine / mine.sum()
            fairness[side] = (_m.jain(mine), _m.unfairness(
                mine / (t1 - t0), [sc.flow_rtt(int(i)) for i in members]))
    else:
        utilisation = math.nan
    jain, uf = fairness.get(False, (math.nan, math.nan))
    metrics: dict[str, Any] = {"utilisation": utilisation, "jain": jain}
    if not math.isnan(uf):
        metrics["uf"] = uf
    if reverse.any():
        metrics["reverse_jain"], reverse_uf = fairness.get(True, (math.nan, math.nan))
        if not math.isnan(reverse_uf):
            metrics["reverse_uf"] = reverse_uf
    metrics["interval"] = (t0, t1)
    return share, metrics


def summary_frame(sc: Scenario, rows: list[dict[str, Any]], share: np.ndarray,
                  shared: np.ndarray, t0: float, t1: float) -> pd.DataFrame:
    """The summary table: ``rows`` (every column but ``share``,
    ``goodput_bps``, ``size`` and, for flows other than UDP sources,
    ``udp_loss``) with the flows' shares and goodputs over the measurement
    interval ``[t0, t1]`` (s; ``shared``: bits each flow delivered over it)
    and the scenario's parameters."""
    params = scenario_columns(sc)
    span = t1 - t0
    for flow, row, s, bits in zip(sc.flows, rows, share, shared):
        row["share"] = float(s)
        row["goodput_bps"] = float(bits) / span if span > 0 else math.nan
        row["size"] = math.nan if flow.size is None else float(flow.size)
        row.setdefault("udp_loss", math.nan)
        if flow.source is not None:
            row["algorithm"] = row["recovery"] = flow.label  # "cbr" or "onoff"
        row.update(params)
    summary = pd.DataFrame(rows, columns=list(SUMMARY_COLUMNS) + list(SIZE_COLUMNS)
                           + list(SCENARIO_COLUMNS))
    summary.index.name = "flow"
    return summary


def scenario_columns(sc: Scenario) -> dict[str, Any]:
    """The values of :data:`SCENARIO_COLUMNS` for ``sc`` (SI units)."""
    link = sc.links[sc.bottleneck]
    lossy = [l.loss for l in sc.links if l.loss > 0]
    # one lossy link (a dumbbell): its probability exactly as given
    loss = lossy[0] if len(lossy) == 1 else 1.0 - math.prod(1.0 - p for p in lossy)
    return {"bandwidth": float(link.rate), "rtt": float(sc.path_rtt),
            "buffer": int(link.queue.packets(sc.packet_size)), "queue": link.queue.kind,
            "loss": float(loss),
            "duration": float(sc.duration), "seed": sc.seed}


def add_link_trace(traces: pd.DataFrame, variable: str, times: np.ndarray,
                   values: np.ndarray) -> pd.DataFrame:
    """``traces`` with a link's variable (no flow) sampled at ``times`` added."""
    kinds = traces["variable"].cat.add_categories([variable])
    rows = pd.DataFrame({"time": times, "flow": pd.array([pd.NA] * len(times), dtype="Int64"),
                         "variable": pd.Categorical([variable] * len(times),
                                                    categories=kinds.cat.categories),
                         "value": np.asarray(values, dtype=float)})
    return pd.concat([traces.assign(variable=kinds), rows], ignore_index=True)


def tidy_traces(times: np.ndarray, dt: float, per_flow: dict[str, np.ndarray],
                queue: np.ndarray) -> pd.DataFrame:
    """:attr:`Result.traces` from arrays, for both engines: ``per_flow`` maps a
    variable of :data:`TRACE_VARIABLES` to a (samples × flows) array sampled
    at ``times`` (s; ``"goodput"`` at the end of each ``dt``-second bin
    instead), ``queue`` is the bottleneck's, one per sample. Returns the
    long table (time, flow, variable, value), the queue's rows with flow NA."""
    frames = []
    for name, arr in per_flow.items():
        n, k = arr.shape
        # goodput belongs to the end of its bin: (k+1)·dt, computed as the
        # sample times are so that the two line up exactly
        t = (np.arange(1, len(times) + 1) * dt) if name == "goodput" else times
        frames.append(pd.DataFrame({
            "time": np.repeat(t, k),
            "flow": pd.array(np.tile(np.arange(k), n), dtype="Int64"),
            "variable": name,
            "value": arr.reshape(-1).astype(float),
        }))
    frames.append(pd.DataFrame({"time": times, "flow": pd.array([pd.NA] * len(times), dtype="Int64"),
                                "variable": "queue", "value": queue.astype(float)}))
    out = pd.concat(frames, ignore_index=True)
    out["variable"] = pd.Categorical(out["variable"], categories=list(TRACE_VARIABLES))
    return out
