"""Esterhuizen & Krzesinski's pairwise matrix: every ordered pair of algorithms, one started
before the other, on a LAN-like dumbbell.

Source: A. Esterhuizen, A. E. Krzesinski, "TCP Congestion Control
Comparison", §III–IV, Table I and Figs. 1–2: two hosts send to a
third over 100 Mbit/s; the first client starts, the second follows (10 s
later in Figs. 1–2); each cell of Table I gives the average throughput of the
row's algorithm (started first) and the column's (started second), in
Mbit/s. Some pairs depend on who starts first (Illinois with BIC or YeAH).

Defaults: 100 Mbit/s, 1 ms RTT (a switched LAN), a 100-packet drop-tail
buffer, second flow 10 s after the first, 60 s in all. The paper does not
state its run length or buffer; these are the choices documented here.

Why 100 packets: the hosts sit on one network segment with no router
between them (§III), each client on its own 100 Mbit/s port, so while both
send the queue they share is the switch's output port towards the server,
not either sender's ``txqueuelen`` (1000 packets in Linux, the default here
before), and a commodity switch of the time typically buffered on the order
of 100 full-size packets per port. The measurements bear this out (docs/studies.md,
"How the agreement moves with the unstated setting"): the mean gap between
ccsim's first-flow share and Table I's falls from 26 points at 1000 packets
to 17 at 100 in the fluid engine (12 × 12) and from 27 to 19 in the packet
engine (a 5 × 5 subset), with the outcomes matching Table I as often or
more (54 % against 48 %, 44 % against 44 %). Pass ``buffer=1000`` for the
earlier setting.

What the window laws count (packet engine): the paper's kernels were of
2011 (2.6.3x–3.2), and there a law's growth counted ACKs or segments as its
own module chose, where mainline (since 3.18) counts segments for every law.
Reno's ``tcp_cong_avoid_ai(tp, tp->snd_cwnd)`` added one to its counter per
ACK (``tcp_abc`` 0, the default), and so did the laws built on it or written
the same way (Westwood+, Scalable, HighSpeed, Hybla, Vegas, YeAH's Reno mode,
TCP-LP), and slow start (``tcp_slow_start`` per ACK): under delayed ACKs they
grew half a segment per RTT. H-TCP and Illinois added the segments each ACK
acknowledged (``snd_cwnd_cnt += pkts_acked``), as did YeAH's fast (Scalable)
mode, and CUBIC and BIC scaled their
count by the measured ACK ratio (``delayed_ack`` in ``bictcp_acked``), so
these four grew per segment in congestion avoidance, all but CUBIC's
Reno-friendly estimate, which ``bictcp_update`` advanced once per ACK
(``ca->ack_cnt++``, per segment only since 4.1), and slow-started through
``tcp_slow_start``, per ACK; Scalable's per-ACK count was ``TCP_SCALABLE_AI_CNT`` 50 (100
segments since 5.7). Several counters also stepped one ACK late:
``tcp_cong_avoid_ai`` (Reno's growth, Westwood+'s, TCP-LP's, YeAH's Reno mode)
compared ``snd_cwnd_cnt`` with ``w`` before counting the ACK in hand, a segment
per ``w + 1`` ACKs, and Scalable's and YeAH's fast mode stepped once theirs
exceeded ``min(cwnd, AI_CNT)`` (``extra_ack``); BIC's and CUBIC's
``tcp_cong_avoid_ai(tp, ca->cnt)`` did too, with an integer ``cnt``, which
the recipe does not model. :data:`LINUX_2011_ACK_COUNTING` and
:data:`LINUX_2011_COUNTING_PARAMS` hold these; the recipe gives each flow
its algorithm's (``Flow.ack_counting``, ``Flow.params``), and
``ack_counting_2011=False`` runs every flow with the stack's own. The fluid
matrix runs the stack's counting, as the fluid figures in docs/studies.md were
measured.

The line the recipe draws: each congestion-control module (its constants,
clock, ACK counting and rules: TCP-LP's early congestion indication halves
``snd_cwnd`` and leaves ``ssthresh``, in 2011 as in mainline and in the
``"linux"`` profile) is the testbed's 2011 one, since the paper compares
those modules; the stack around them (loss detection, fast recovery, the
ACK that ends it) is the ``"linux"`` profile's, as for every recipe on a
Linux testbed, and ``recovery_2011=True`` gives the 2011 stack's recovery.

The first flow's own host queue is not in the recipe. Every port of the
testbed ran at 100 Mbit/s ("slightly over 100 Mbps" at most), so while the
first client is alone its bottleneck is its own NIC, and a 2011 kernel (no
TCP Small Queues, which came in 3.6) let its window fill the qdisc,
``txqueuelen`` 1000 packets, about 120 ms at 100 Mbit/s, before a local drop
cut it. Here the hosts' NICs are ten times faster and the lone flow queues at
the switch port (100 packets, 12 ms). Illinois keeps that phase for good: its
``max_rtt`` is never aged, and an early 120 ms makes the 12 ms queue of the
shared phase "low delay", α several segments per RTT and β 1/8
(docs/studies.md, "Illinois' first-mover advantage"). ``access={"rate":
"1x", "buffer": 1000, "jitter": "0.12ms"}`` runs every pair so (a host queue
of ``txqueuelen`` behind a NIC at the port's rate, one NIC packet time of
jitter); it is not the default because then the first flow's backlogged NIC
keeps the port full in the shared phase, and whether the second flow escapes
its losses and timeouts decides the pair, for every law alike: measured on
Illinois' 22 pairs, docs/studies.md.
"""

from __future__ import annotations

import time
from typing import Iterable

import numpy as np
import pandas as pd

from ..errors import ScenarioError
from ..scenario import Flow, dumbbell
from ..sweeps import sweep
from ._result import ExperimentResult

#: Esterhuizen & Krzesinski, Table I, transcribed: ``TABLE_I[first][second]`` is the
#: pair's average throughputs (first, second) in Mbit/s, Linux 2.6-era kernels on
#: a 100 Mbit/s LAN. ``highspeed`` is the paper's "HighSpeed", ``westwood`` its
#: "Westwood" (Linux's tcp_westwood, which is Westwood+).
TABLE_I: dict[str, dict[str, tuple[int, int]]] = {
    "vegas": {
        "vegas": (49, 50), "htcp": (10, 95), "westwood": (8, 95), "illinois": (6, 97),
        "bic": (13, 91), "scalable": (8, 95), "highspeed": (9, 95), "yeah": (23, 95),
        "lp": (10, 95), "hybla": (10, 94), "reno": (9, 94), "cubic": (10, 94),
    },
    "htcp": {
        "vegas": (95, 10), "htcp": (52, 52), "westwood": (19, 86), "illinois": (38, 65),
        "bic": (41, 62), "scalable": (41, 64), "highspeed": (64, 40), "yeah": (64, 40),
        "lp": (65, 38), "hybla": (66, 37), "reno": (66, 37), "cubic": (67, 37),
    },
    "westwood": {
        "vegas": (95, 8), "htcp": (86, 19), "westwood": (46, 57), "illinois": (69, 34),
        "bic": (84, 19), "scalable": (80, 23), "highspeed": (89, 15), "yeah": (89, 14),
        "lp": (90, 13), "hybla": (90, 14), "reno": (90, 13), "cubic": (91, 13),
    },
    "illinois": {
        "vegas": (97, 6), "htcp": (65, 38), "westwood": (34, 69), "illinois": (13, 89),
        "bic": (93, 10), "scalable": (88, 22), "highspeed": (94, 9), "yeah": (93, 10),
        "lp": (95, 7), "hybla": (70, 33), "reno": (95, 8), "cubic": (94, 10),
    },
    "bic": {
        "vegas": (91, 13), "htcp": (62, 41), "westwood": (19, 84), "illinois": (53, 51),
        "bic": (54, 49), "scalable": (55, 51), "highspeed": (73, 30), "yeah": (73, 30),
        "lp": (74, 29), "hybla": (75, 28), "reno": (75, 28), "cubic": (77, 26),
    },
    "scalable": {
        "vegas": (95, 8), "htcp": (62, 42), "westwood": (23, 80), "illinois": (50, 53),
        "bic": (51, 55), "scalable": (51, 52), "highspeed": (71, 32), "yeah": (72, 31),
        "lp": (76, 27), "hybla": (74, 29), "reno": (77, 26), "cubic": (77, 26),
    },
    "highspeed": {
        "vegas": (95, 9), "htcp": (40, 64), "westwood": (15, 89), "illinois": (36, 68),
        "bic": (30, 73), "scalable": (32, 71), "highspeed": (54, 50), "yeah": (58, 45),
        "lp": (61, 42), "hybla": (63, 40), "reno": (62, 40), "cubic": (64, 40),
    },
    "yeah": {
        "vegas": (95, 23), "htcp": (40, 64), "westwood": (19, 84), "illinois": (37, 67),
        "bic": (30, 73), "scalable": (31, 72), "highspeed": (45, 58), "yeah": (52, 51),
        "lp": (53, 50), "hybla": (57, 46), "reno": (54, 49), "cubic": (54, 49),
    },
    "lp": {
        "vegas": (95, 10), "htcp": (38, 65), "westwood": (13, 90), "illinois": (33, 70),
        "bic": (29, 74), "scalable": (27, 76), "highspeed": (42, 61), "yeah": (50, 53),
        "lp": (53, 50), "hybla": (54, 48), "reno": (50, 53), "cubic": (55, 47),
    },
    "hybla": {
        "vegas": (94, 10), "htcp": (37, 66), "westwood": (14, 90), "illinois": (33, 70),
        "bic": (28, 75), "scalable": (29, 74), "highspeed": (40, 63), "yeah": (46, 57),
        "lp": (48, 54), "hybla": (52, 51), "reno": (49, 54), "cubic": (53, 50),
    },
    "reno": {
        "vegas": (94, 9), "htcp": (37, 66), "westwood": (15, 89), "illinois": (31, 73),
        "bic": (28, 75), "scalable": (26, 77), "highspeed": (40, 62), "yeah": (49, 54),
        "lp": (53, 50), "hybla": (54, 49), "reno": (51, 52), "cubic": (54, 49),
    },
    "cubic": {
        "vegas": (94, 10), "htcp": (37, 67), "westwood": (13, 91), "illinois": (33, 70),
        "bic": (26, 77), "scalable": (26, 77), "highspeed": (40, 64), "yeah": (49, 54),
        "lp": (47, 55), "hybla": (50, 53), "reno": (49, 54), "cubic": (47, 55),
    },
}


#: Esterhuizen & Krzesinski's 2011 kernels: what each law's window growth
#: counted, ``"acks"`` (one per ACK: Reno's ``tcp_cong_avoid_ai`` and
#: ``tcp_slow_start`` with ``tcp_abc`` 0) or ``"acks-in-slow-start"`` (segments
#: in congestion avoidance, H-TCP's and Illinois' ``pkts_acked``, CUBIC's and
#: BIC's ACK-ratio scaling, but ``tcp_slow_start``'s one per ACK below
#: ``ssthresh``). The module docstring gives the sources.
LINUX_2011_ACK_COUNTING = {
    "reno": "acks", "westwood": "acks", "scalable": "acks", "highspeed": "acks",
    "hybla": "acks", "vegas": "acks", "lp": "acks",
    # their slow start was tcp_slow_start's, once per ACK
    "htcp": "acks-in-slow-start", "illinois": "acks-in-slow-start",
    "cubic": "acks-in-slow-start", "bic": "acks-in-slow-start",
    "yeah": "segments",  # per ACK but in its fast mode: LINUX_2011_COUNTING_PARAMS
}

#: Esterhuizen & Krzesinski's 2011 kernels, with :data:`LINUX_2011_ACK_COUNTING`
#: (packet engine, ``ack_counting_2011``): CUBIC's Reno-friendly estimate
#: counted ACKs (``bictcp_update``'s ``ca->ack_cnt++`` before 4.1) while its
#: cubic target counted segments; Scalable added one segment per
#: ``min(cwnd, 50)`` ACKs (``TCP_SCALABLE_AI_CNT`` 50, "to account for delayed
#: ack", until Linux 5.7 made it 100 and counted segments), ``a = 1/50`` per ACK;
#: YeAH stepped once per ACK in slow start and its Reno mode (``tcp_slow_start``,
#: ``tcp_cong_avoid_ai``) and added ``pkts_acked`` in its fast mode
#: (``reno_per_ack`` with segment counting). And ``tcp_cong_avoid_ai`` (Reno's
#: growth, which Westwood+, TCP-LP and YeAH's Reno mode called) compared its
#: counter with ``w`` before counting the ACK in hand, stepping on the ACK after
#: the counter reached ``w``: a segment per ``w + 1`` ACKs (mainline counts
#: first and steps after ``w``), and
#: Scalable's counter and YeAH's fast mode stepped once it *exceeded*
#: ``min(cwnd, AI_CNT)``, one ACK (segment) late alike (``extra_ack``).
LINUX_2011_COUNTING_PARAMS: dict[str, dict[str, bool | float]] = {
    "cubic": {"friendly_per_ack": True},
    "scalable": {"a": 1 / 50, "extra_ack": True},
    "yeah": {"reno_per_ack": True, "extra_ack": True},
    "reno": {"extra_ack": True}, "westwood": {"extra_ack": True}, "lp": {"extra_ack": True},
}

#: Esterhuizen & Krzesinski's 2011 kernels: window-law parameters the testbed
#: fixed and the law's own default may not. Westwood+ (``tcp_westwood.c`` of
#: 2.6.3x–3.2) read its RTT samples in whole jiffies (``now − when`` of
#: ``tcp_time_stamp``, zeros skipped), so on a 1 ms LAN its ``RTT_min`` is one
#: jiffy, ``1/CONFIG_HZ``. The paper states no kernel; the estimate is
#: ``CONFIG_HZ = 250`` (4 ms): mainline's default (``kernel/Kconfig.hz``) and
#: that of the desktop ("generic") kernels of Ubuntu and Debian of the time,
#: which the report's clients (a Python program run with ``sudo``) most likely
#: ran; 100 Hz (10 ms) was the server flavours' clock, 1000 Hz (1 ms) Fedora's
#: and RHEL 6's. docs/studies.md gives Westwood's rows at each. A flow's own
#: ``params=`` entry overrides these.
LINUX_2011_PARAMS: dict[str, dict[str, float]] = {
    "westwood": {"jiffy": 0.004},
}

#: Esterhuizen & Krzesinski's 2011 kernels: the fast-recovery window rule.
#: Linux 2.6.x–3.1 lowered ``cwnd`` by one segment per two ACKs down to the
#: module's ``min_cwnd`` (``tcp_cwnd_down``, ``tcp_cwnd_min``) and took
#: ``min(cwnd, ssthresh)`` at the end (``tcp_complete_cwr``); PRR replaced it
#: in 3.2, released in January 2012, the month of Esterhuizen's report
#: (:mod:`ccsim.recovery.linux_rate_halving`).
LINUX_2011_RECOVERY = "linux-rate-halving"

#: Esterhuizen & Krzesinski's 2011 kernels: the stack knobs of their recovery
#: that differ from mainline's. ``exit_ack``: ``tcp_ack`` called the module's
#: ``cong_avoid`` before ``tcp_fastretrans_alert``, and only outside the
#: Recovery and CWR states (``tcp_may_raise_cwnd``), so the ACK that ended a
#: recovery did not reach the law (mainline's ``tcp_cong_control`` runs after
#: ``tcp_fastretrans_alert`` has ended the recovery, so it does).
LINUX_2011_RECOVERY_KNOBS = {"exit_ack": False}


def pairwise_matrix(algorithms: Iterable[str] | None = None, *, bandwidth="100Mbps",
                    rtt="1ms", buffer=100, delay="10s", duration="60s", seed: int = 1,
                    order_threshold: float = 0.15, mode: str = "packet",
                    progress: bool = False, workers: int | None = None, executor=None,
                    store=None, ack_counting_2011: bool = True,
                    recovery_2011: bool = False, params: dict | None = None,
                    **knobs) -> ExperimentResult:
    """Run every ordered pair (``first``, ``second``) of ``algorithms``.

    Args:
        algorithms: names; default every registered algorithm.
        bandwidth, rtt, buffer: the dumbbell (strings accepted).
        delay: how long after the first flow the second starts (s).
        duration: simulated time of each run (s).
        seed: random seed of every run.
        order_threshold: a pair's result "depends on who starts first" when an
            algorithm's share of the link differs by more than this between the
            two orders.
        mode: ``"packet"`` or ``"fluid"`` (the whole matrix in one array
            program, seconds instead of minutes; its agreement with the packet
            engine is in docs/fluid.md).
        progress: show a progress bar (tqdm) on standard error.
        workers, executor, store: how the runs are spread and kept, as in
            :func:`ccsim.sweep` (default: a process per CPU, nothing stored).
        ack_counting_2011: in the packet engine, each flow counts ACKs or
            segments as its algorithm did in the paper's 2011 kernels
            (:data:`LINUX_2011_ACK_COUNTING`, :data:`LINUX_2011_COUNTING_PARAMS`;
            algorithms not in them keep the stack's); ``False``: every flow
            as the stack counts.
        recovery_2011: in the packet engine, every flow's fast recovery is
            the 2011 kernels' rate halving (:data:`LINUX_2011_RECOVERY`)
            instead of the stack's PRR, and the ACK that ends it does not
            reach the law (:data:`LINUX_2011_RECOVERY_KNOBS`; a knob passed
            here wins); ``False``: the stack's.
        params: per algorithm name, keyword arguments for its law in every
            run (``{"westwood": {"jiffy": 0.01}}`` for a ``CONFIG_HZ = 100``
            kernel's clock), over the testbed's estimated
            :data:`LINUX_2011_PARAMS` (Westwood+'s 4 ms jiffy).
        **knobs: stack knobs (and ``access``, the hosts' NICs) passed to
            :func:`ccsim.dumbbell`.

    Returns:
        An :class:`ExperimentResult` whose ``table`` has one row per ordered
        pair: ``first``, ``second``, ``first_bps``, ``second_bps`` (goodput
        over each flow's own active time, as Table I), ``first_share`` (of the
        link over the time both were active), ``error`` (the exception text if
        the run failed, else empty). ``data["matrix"]`` is Table I's layout
        ("86,19" in Mbit/s), ``data["start_order"]`` the pairs whose outcome
        depends on the order, ``data["wall_time"]`` the run time (s).
        ``paper_first_bps`` and ``paper_second_bps`` are Table I's figures for
        the pair (NaN where the paper has none) and ``data["agreement"]`` how
        often the outcome matches them (:func:`paper_agreement`).
        ``plot()`` draws the matrix as a heatmap.
    """
    from .. import algorithms as registry

    names = list(registry.names() if algorithms is None else algorithms)
    return _pairs([(a, b) for a in names for b in names], names, bandwidth=bandwidth,
                  rtt=rtt, buffer=buffer, delay=delay, duration=duration, seed=seed,
                  order_threshold=order_threshold, mode=mode, progress=progress,
                  workers=workers, executor=executor, store=store,
                  ack_counting_2011=ack_counting_2011, recovery_2011=recovery_2011,
                  params=params, **knobs)


def start_order(pairs: Iterable[tuple[str, str]] | None = None, *, bandwidth="100Mbps",
                rtt="1ms", buffer=100, delay="10s", duration="60s", seed: int = 1,
                order_threshold: float = 0.15, mode: str = "packet",
                progress: bool = False, workers: int | None = None, executor=None,
                store=None, ack_counting_2011: bool = True,
                recovery_2011: bool = False, params: dict | None = None,
                **knobs) -> ExperimentResult:
    """Each pair in both orders: does the outcome depend on who starts first?

    Esterhuizen & Krzesinski, §III–IV and Figs. 1–2: Illinois started first
    keeps a higher throughput than most variants started after it (BIC and
    YeAH among them), "with the exception of Westwood and Vegas". The default
    pairs are Illinois with each other variant of Table I. The path and the
    arguments are :func:`pairwise_matrix`'s.

    Returns:
        ``table``: one row per pair (``a``, ``b``): ``a_share_when_first``,
        ``a_share_when_second`` (a's share of the link while both run),
        ``difference``, ``depends`` (the difference exceeds
        ``order_threshold``), and the same from Table I: ``paper_difference``,
        ``paper_depends``. ``data["agreement"]``: the fraction of pairs whose
        ``depends`` matches the paper's. ``plot()`` draws both differences.
    """
    if pairs is None:
        pairs = [("illinois", b) for b in TABLE_I if b != "illinois"]
    pairs = [tuple(p) for p in pairs]
    names = list(dict.fromkeys(n for p in pairs for n in p))
    res = _pairs([o for a, b in pairs for o in ((a, b), (b, a))], names, bandwidth=bandwidth,
                 rtt=rtt, buffer=buffer, delay=delay, duration=duration, seed=seed,
                 order_threshold=order_threshold, mode=mode, progress=progress,
                 workers=workers, executor=executor, store=store,
                 ack_counting_2011=ack_counting_2011, recovery_2011=recovery_2011,
                 params=params, **knobs)
    share = {(r.first, r.second): r.first_share for r in res.table.itertuples()}
    rows = []
    for a, b in pairs:
        row = {"a": a, "b": b, "a_share_when_first": share[a, b],
               "a_share_when_second": 1.0 - share[b, a]}
        row["difference"] = row["a_share_when_first"] - row["a_share_when_second"]
        if b in TABLE_I.get(a, {}):
            (f1, s1), (f2, s2) = TABLE_I[a][b], TABLE_I[b][a]
            row["paper_difference"] = f1 / (f1 + s1) - s2 / (f2 + s2)
        else:
            row["paper_difference"] = np.nan
        rows.append(row)
    table = pd.DataFrame(rows)
    table["depends"] = table.difference.abs() > order_threshold
    table["paper_depends"] = table.paper_difference.abs() > order_threshold
    known = table.dropna(subset=["paper_difference"])
    agreement = float((known.depends == known.paper_depends).mean()) if len(known) else np.nan
    return ExperimentResult("start order (Esterhuizen & Krzesinski)", table,
                            {"agreement": agreement, "runs": res.table}, _draw_order)


def _draw_order(result: ExperimentResult):
    from ..plot import new_figure as Figure

    t = result.table
    fig = Figure(figsize=(7, 4), layout="constrained")
    ax = fig.subplots()
    x = np.arange(len(t))
    ax.bar(x - 0.2, t.difference * 100, 0.4, color="0.25", label="ccsim")
    ax.bar(x + 0.2, t.paper_difference * 100, 0.4, color="0.75", hatch="//",
           edgecolor="0.3", label="Esterhuizen & Krzesinski, Table I")
    ax.axhline(0, color="k", lw=0.8)
    ax.set_xticks(x, [f"{a} / {b}" for a, b in zip(t.a, t.b)], rotation=30, ha="right")
    ax.set_ylabel("a's share first − a's share second (points)")
    ax.legend(fontsize=8)
    ax.set_title("Does the outcome depend on who starts first?", fontsize=10)
    return fig


def _pairs(pairs, names, *, bandwidth, rtt, buffer, delay, duration, seed, order_threshold,
           mode, progress, workers, executor, store, ack_counting_2011=True,
           recovery_2011=False, params=None, **knobs) -> ExperimentResult:
    """Run the ordered ``pairs``; the table, matrix and agreement of
    :func:`pairwise_matrix`."""
    from .. import algorithms as registry

    for name in names:
        registry.get(name)  # unknown names fail here, before any run
    params = {} if params is None else params
    for name in params:
        if name not in names:
            raise ScenarioError("params", name, "one of the recipe's algorithms "
                                f"({', '.join(names)})", "a law no pair runs gets no parameters")
    old_kernel = ack_counting_2011 and mode == "packet"
    counting = LINUX_2011_ACK_COUNTING if old_kernel else {}
    counted = LINUX_2011_COUNTING_PARAMS if old_kernel else {}
    params = {name: {**LINUX_2011_PARAMS.get(name, {}), **counted.get(name, {}),
                     **params.get(name, {})} for name in names}
    # a preset names its own recovery (Reno's law with NewReno, ...): it keeps it
    old_recovery = {name: LINUX_2011_RECOVERY for name in names
                    if recovery_2011 and mode == "packet" and not registry.get(name).preset}
    if recovery_2011 and mode == "packet":
        knobs = {**LINUX_2011_RECOVERY_KNOBS, **knobs}
    scenarios = [dumbbell(bandwidth, rtt, buffer=buffer, duration=duration, seed=seed,
                          flows=[Flow(first, ack_counting=counting.get(first),
                                      recovery=old_recovery.get(first),
                                      params=dict(params.get(first, {}))),
                                 Flow(second, start=delay, ack_counting=counting.get(second),
                                      recovery=old_recovery.get(second),
                                      params=dict(params.get(second, {})))],
                          **knobs)
                 for first, second in pairs]
    started = time.perf_counter()
    runs = sweep(scenarios, mode=mode, workers=workers, executor=executor, store=store,
                 progress=progress).set_index(["base", "flow"])
    rows = []
    for i, (first, second) in enumerate(pairs):
        paper_cell = TABLE_I.get(first, {}).get(second, (np.nan, np.nan))
        rows.append({"first": first, "second": second,
                     "first_bps": runs.loc[(i, 0), "goodput_bps"],
                     "second_bps": runs.loc[(i, 1), "goodput_bps"],
                     "first_share": runs.loc[(i, 0), "share"],
                     "paper_first_bps": paper_cell[0] * 1e6,
                     "paper_second_bps": paper_cell[1] * 1e6,
                     "error": runs.loc[(i, 0), "error"]})
    table = pd.DataFrame(rows)
    data = {"matrix": _matrix(table, names), "start_order": _start_order(table, order_threshold),
            "agreement": paper_agreement(table), "wall_time": time.perf_counter() - started,
            "names": names}
    return ExperimentResult("pairwise matrix (Esterhuizen & Krzesinski, Table I)", table, data, _draw)


def outcome(first_bps, second_bps, margin: float = 0.1):
    """``"first"``, ``"second"`` or ``"shared"``: who takes more than
    ``0.5 + margin`` of the pair's combined throughput (arrays accepted)."""
    first_bps, second_bps = np.asarray(first_bps, float), np.asarray(second_bps, float)
    share = first_bps / (first_bps + second_bps)
    return np.where(share > 0.5 + margin, "first",
                    np.where(share < 0.5 - margin, "second", "shared"))


def paper_agreement(table: pd.DataFrame) -> float:
    """Fraction of the pairs Table I also has whose :func:`outcome` matches
    the paper's; NaN when there are none."""
    done = table[(table.error == "") & table.paper_first_bps.notna()]
    if done.empty:
        return float("nan")
    ours = outcome(done.first_bps, done.second_bps)
    seed = outcome(done.paper_first_bps, done.paper_second_bps)
    return float(np.mean(ours == seed))


def _matrix(table: pd.DataFrame, names: list[str]) -> pd.DataFrame:
    """Table I's layout: row started first, column second, "row / column" Mbit/s."""
    cells = {(r.first, r.second): ("failed" if r.error else
                                   f"{r.first_bps / 1e6:.0f} / {r.second_bps / 1e6:.0f}")
             for r in table.itertuples()}
    out = pd.DataFrame([[cells.get((a, b), "") for b in names] for a in names], index=names,
                       columns=names)
    out.index.name, out.columns.name = "started first", "started second"
    return out


def _start_order(table: pd.DataFrame, threshold: float) -> pd.DataFrame:
    """Pairs whose outcome depends on who starts first."""
    share = {(r.first, r.second): r.first_share for r in table.itertuples()}
    rows = []
    for (a, b), s in share.items():
        if a >= b or (b, a) not in share:
            continue
        a_first, a_second = s, 1.0 - share[b, a]  # a's share in each order
        if abs(a_first - a_second) > threshold:
            rows.append({"a": a, "b": b, "a_share_when_first": a_first,
                         "a_share_when_second": a_second,
                         "difference": a_first - a_second})
    return pd.DataFrame(rows, columns=["a", "b", "a_share_when_first",
                                       "a_share_when_second", "difference"])


def _draw(result: ExperimentResult):
    from ..plot import new_figure as Figure

    names = result.data["names"]
    t = result.table.set_index(["first", "second"])
    share = np.array([[t.loc[(a, b), "first_share"] for b in names] for a in names])
    n = len(names)
    # at least 6 x 4.5 in: with few algorithms the title and the colour bar's
    # label need the room (three made a 390 x 330 px image that cut both off)
    fig = Figure(figsize=(max(6.0, 1.6 + 0.75 * n), max(4.5, 1.2 + 0.65 * n)),
                 layout="constrained")
    ax = fig.subplots()
    image = ax.imshow(share * 100, cmap="RdBu_r", vmin=0, vmax=100)
    ax.set_xticks(range(n), names, rotation=45, ha="right")
    ax.set_yticks(range(n), names)
    ax.set_xlabel("started second")
    ax.set_ylabel("started first")
    matrix = result.data["matrix"]
    for i, a in enumerate(names):
        for j, b in enumerate(names):
            value = share[i, j]
            colour = "white" if not np.isnan(value) and abs(value - 0.5) > 0.3 else "black"
            ax.text(j, i, matrix.loc[a, b], ha="center", va="center", fontsize=7,
                    color=colour)
    fig.colorbar(image, ax=ax, label="first flow's share\nwhile both run (%)", shrink=0.8)
    ax.set_title("Every ordered pair: throughput (Mbit/s),\nfirst, second", fontsize=10)
    return fig
