"""The fluid-law contract: a window law over arrays of flows, for the fluid engine.

A window law (:class:`~ccsim.algorithms.CongestionControl`) answers one ACK at
a time. The fluid engine (:mod:`ccsim.fluid`) advances whole batches of flows
by a time step ``h`` instead, and asks each algorithm for the same law in
vectorised form: a :class:`FluidLaw`, written in the algorithm's own file
beside its window law and attached as the class attribute ``fluid``::

    class RenoFluid(FluidLaw):
        def grow(self, f):
            h_ca = f.slow_start()                # cwnd += acked, up to ssthresh
            f.cwnd += h_ca / f.rtt               # then one segment per RTT

    Reno.fluid = RenoFluid

One law instance serves every flow of a batch that runs the same algorithm;
``self.cc`` is a window-law instance built with the flows' parameters, so
constants are read from it (``self.cc.beta``) and defaults live in one place.
Where the flows' parameter values differ, ``self.cc.beta`` is a numpy array
over the group's flows (over the flows of the mask ``m`` inside
:meth:`FluidLaw.start`, :meth:`FluidLaw.on_loss` and
:meth:`FluidLaw.ssthresh_after`), so law code combines constants and state
elementwise; a parameter the law needs as one value (an ``if``, an index, a
table) goes in :attr:`FluidLaw.scalar_params`
(:mod:`ccsim.fluid.params`). A class without its own ``fluid`` (looked up on
the class itself, never inherited, since a subclass may change the rules)
still runs in the fluid engine, through its hooks (:mod:`ccsim.fluid.hooks`).

The engine owns loss detection, recovery and timeouts: it calls
:meth:`FluidLaw.on_loss` when a flow detects a loss (a reduction) and sets
``cwnd`` to the loss window after a timeout itself. Between losses it calls
:meth:`FluidLaw.grow` once per step.

Everything a law sees is in :class:`FlowArrays`: numpy arrays over the
group's flows, with the units of :mod:`ccsim.algorithms.base`'s events.

The engine calls every law with numpy's floating-point warnings off
(``np.errstate(divide="ignore", invalid="ignore", over="ignore")``): a law
may compute an expression for all its flows and keep it where it is
meaningful (``np.where``) without an ``errstate`` of its own, which costs
more per step than many laws' arithmetic.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

import numpy as np

from .base import MIN_SSTHRESH

if TYPE_CHECKING:
    from .base import CongestionControl

__all__ = ["FluidLaw", "FlowArrays", "any_", "law_tables"]

try:  # numpy's own count, without the Python wrapper of np.count_nonzero
    from numpy._core._multiarray_umath import count_nonzero as any_
except ImportError:  # pragma: no cover - another numpy layout
    any_ = np.count_nonzero
"""``any_(a)``: truthy when some element of ``a`` is nonzero, as ``a.any()``
but far cheaper on a batch's small arrays, where the fluid engine and its
laws ask it dozens of times per step: ``np.count_nonzero``'s C function
itself, at about a quarter of the cost of the Python function in front of it."""


_TABLES: dict[tuple, tuple[np.ndarray, ...]] = {}
_TABLES_KEPT = 64  # parameter sets whose tables are kept (a sweep may try many)


def law_tables(cc: "CongestionControl", build) -> tuple[np.ndarray, ...]:
    """``build(cc)``'s arrays (a fluid law's tables of its window law's
    rule over a grid of windows), made once per window-law class and
    parameter values, which are all they depend on: a batch, or a sweep of
    batches, builds them once, not once per engine. Shared and read-only."""
    key = (type(cc), build, repr(sorted(vars(cc).items())))  # (build: bound to its class)
    tables = _TABLES.get(key)
    if tables is None:
        tables = tuple(build(cc))
        for table in tables:
            table.setflags(write=False)
        if len(_TABLES) >= _TABLES_KEPT:
            _TABLES.clear()
        _TABLES[key] = tables
    return tables


class FlowArrays:
    """A group's flows as arrays, as a fluid law sees them (one entry per flow).

    Written by laws:
        cwnd: congestion window (segments).
        ssthresh: slow-start threshold (segments); ``inf`` before the first loss.
        pacing: pacing rate (segments/s); ``inf`` for none (the default).
        plus the law's own state arrays, declared in :attr:`FluidLaw.state`.

    Read by laws (set by the engine before each call):
        h: the step (s); 0 for flows that must not grow now (not started,
            finished, in loss recovery or waiting for a retransmission
            timeout). A law must leave a flow unchanged when its ``h`` is 0.
        now: time at the start of the step (s).
        rtt: current round-trip time (s): base RTT plus queueing delay.
        base_rtt: two-way propagation delay (s).
        min_rtt: smallest ``rtt`` seen since the flow started (s).
        srtt: smoothed RTT (s), an RFC 6298 average over the ACKs.
        rtt_floor: the step's smallest RTT sample (s): ``rtt`` without the
            queue that paced trains build on a link they do not fill (the
            first packet of a train finds it empty); ``None`` reads ``rtt``.
        rate: sending rate (segments/s).
        acked: segments acknowledged during the step (delivered ones).
        delivered: segments delivered since the flow started.
        inflight: segments in flight (``min(cwnd, rwnd)`` in the fluid model).
        lost: segments found lost since the flow started (cumulative, as
            ``delivered``): a loss episode's whole count is added when the
            flow detects it, before :meth:`FluidLaw.on_loss` runs.
        lost_inflight: in :meth:`FluidLaw.on_loss`, the most segments the flow
            had in flight at a moment one of the episode's losses happened
            (Linux's ``tx_in_flight`` of a lost segment; 0 elsewhere).
        marked: of the segments acknowledged during the step, those whose
            ECN congestion marks (CE, RFC 3168) the ACKs echoed (0 for flows
            that are not ECN-capable).
        mss: segment size (bytes).
        capacity: the bottleneck's rate in force (segments/s), for laws whose
            window law reacts to a queue's swing the fluid model smooths away.
        ack_segs: segments each ACK acknowledges (2 behind delayed ACKs).
        quick_left: segments the receiver still acknowledges one by one in
            Linux's quick-ACK mode (the first ``TCP_MAX_QUICKACKS`` ACKs of
            new data, at the start and after a timeout; 0 otherwise).
        delack_timeout: the receiver's delayed-ACK timer (s; 0 without
            delayed ACKs): how long an odd window's last segment waits.
        ack_wait: the bound of each segment's receiving delay (s;
            :attr:`Scenario.ack_wait`): ``rtt`` and ``base_rtt`` hold its
            mean, half of it; a flow's smallest samples have none of it.
        queued: whether the bottleneck held a queue over the step (bool):
            then the flow's ACKs come at its share of the link's rate, not
            at the rate it sent one RTT before (:meth:`ss_grown`).
        scenario: the flow's scenario's index in the batch (flows of one
            scenario share a bottleneck); read only.
        loss_until: after a retransmission timeout, the ``delivered`` count
            (segments) that ends its loss phase (Linux's ``TCP_CA_Loss``,
            left once the data out at the timeout is acknowledged; 0 when
            there is none): the flow is in it while ``delivered <
            loss_until``.
        start: when the flow opens (s; :meth:`Scenario.flow_start`, its
            start jitter included): with the law's ``seed``, a key for a
            law's random draws that neither the batch nor the step grid
            changes.

    Attributes are views into the engine's arrays: update them in place
    (``f.cwnd[...] = ...``, ``f.cwnd += ...``, ``np.maximum(..., out=f.cwnd)``),
    never rebind them.
    """

    cwnd: np.ndarray
    ssthresh: np.ndarray
    pacing: np.ndarray
    h: np.ndarray
    now: np.ndarray
    rtt: np.ndarray
    base_rtt: np.ndarray
    min_rtt: np.ndarray
    srtt: np.ndarray
    rate: np.ndarray
    acked: np.ndarray
    delivered: np.ndarray
    inflight: np.ndarray
    lost: np.ndarray
    lost_inflight: np.ndarray
    marked: np.ndarray
    mss: np.ndarray
    capacity: np.ndarray
    scenario: np.ndarray
    start: np.ndarray
    #: (set by the engine; a hand-built FlowArrays reads an empty link and
    #: one segment per ACK unless it sets them)
    queued: np.ndarray | bool = False
    ack_segs: np.ndarray | float = 1.0
    delack_timeout: np.ndarray | float = 0.0
    ack_wait: np.ndarray | float = 0.0
    quick_left: np.ndarray | float = 0.0
    loss_until: np.ndarray | float = 0.0
    rtt_floor: np.ndarray | None = None

    def ss_grown(self, gain: float | np.ndarray = 1.0,
                 h: np.ndarray | None = None) -> np.ndarray:
        """The window after this step of growth by ``gain`` per acknowledged
        segment (1: RFC 5681's slow start, ``cwnd += acked``), unbounded. On a
        link not yet full the ACKs of a round are those of the window sent
        one RTT before, so each round multiplies the window by ``1 + gain``:
        ``cwnd·(1 + gain)^(h/rtt)``. Behind a queue the ACKs come at the
        flow's share of the link's rate, whatever the window (the packet
        engine's and Linux's ``cwnd += acked`` grow a window that owns the
        link by the link's rate, not by a doubling per RTT, and not by what
        it loses past a full buffer): ``cwnd + gain·acked``. ``h``: the time
        (s) each flow grows, if not the whole step."""
        gain = np.asarray(gain, dtype=float)
        h = self.h if h is None else h
        with np.errstate(over="ignore"):
            doubling = self.cwnd * np.exp2(np.minimum(np.log2(1.0 + gain) * h / self.rtt, 60.0))
        return np.where(self.queued, self.cwnd + gain * self.acked, doubling)

    def slow_start(self, gain: float | np.ndarray = 1.0,
                   h: np.ndarray | None = None) -> np.ndarray:
        """Slow start over this step: per acknowledged segment ``cwnd +=
        gain`` (1 for RFC 5681's ``cwnd += acked``; Hybla passes ``2^ρ − 1``)
        as :meth:`ss_grown` (doubling per RTT on a link not yet full, the
        step's ACKs behind a queue), but not past ``ssthresh``.

        Returns the part of the step (s) left for congestion avoidance: ``h``
        for flows already at or above ``ssthresh``, 0 for flows still in slow
        start, and for flows that reached ``ssthresh`` during the step the time
        that remained. ``h``: the time (s) each flow grows, if not the whole
        step (0 for a flow whose law holds it this step).
        """
        cwnd, ssthresh, rtt = self.cwnd, self.ssthresh, self.rtt
        h = self.h if h is None else h
        in_ss = (cwnd < ssthresh) & (h > 0)  # (a flow held at h = 0 stays as it is)
        if not any_(in_ss):
            return h
        grown = self.ss_grown(gain, h)
        reached = grown >= ssthresh
        # the time to reach ssthresh; the rest of the step is congestion avoidance
        with np.errstate(divide="ignore", invalid="ignore"):
            left = h - np.where(self.queued, h * (ssthresh - cwnd) / (grown - cwnd),
                                rtt * np.log2(ssthresh / cwnd) / np.log2(1.0 + gain))
        h_ca = np.where(in_ss, np.where(reached, np.maximum(left, 0.0), 0.0), h)
        np.copyto(cwnd, np.where(in_ss, np.minimum(grown, ssthresh), cwnd))
        return h_ca


class FluidLaw:
    """Base class of fluid laws; see the module docstring.

    Attributes:
        paces: whether the law sets ``pacing`` at all.
        state: the law's own per-flow state: name → initial value. The engine
            creates each as a float array on the group's :class:`FlowArrays`
            and resets it to the initial value when a flow starts.
        cc: a window-law instance with the group's parameters (numeric
            parameters that differ among the flows read as arrays).
    """

    state: ClassVar[dict[str, float]] = {}
    #: Parameters the law needs as one value per law instance (flows that
    #: differ in one get separate instances); ``("*",)``: all of them. Numeric
    #: parameters not listed here may be arrays over the flows.
    scalar_params: ClassVar[tuple[str, ...]] = ()
    #: Whether the law may set ``pacing`` (the engine skips pacing otherwise).
    paces: ClassVar[bool] = False
    #: Whether :meth:`grow` is exact (a closed form) over steps of several
    #: RTTs in congestion avoidance, so that the engine may take long steps
    #: between loss events (up to its ``max_step``). Laws that sample or
    #: decide once per step keep the short steps, or at most a round's
    #: (:attr:`round_steps`).
    long_steps: ClassVar[bool] = False
    #: Whether :meth:`grow` is exact over steps of up to one RTT: the law
    #: samples or decides once per round (its rounds end on ``delivered``),
    #: so a step no longer than the round meets each decision once. On a
    #: path without random loss, RED or marking the engine takes such steps
    #: between loss events, where the other laws of the scenario allow long
    #: steps; the bounds of the long steps still apply.
    round_steps: ClassVar[bool] = False
    #: Whether a window the law left unchanged over a step stays unchanged
    #: over any longer one while the RTT and the deliveries stay as they were
    #: (an equilibrium, such as Vegas's band, with no clock of its own): a
    #: scenario whose flows all hold so, at a queue that did not move, is at
    #: a fixed point, and the engine steps it to its next event.
    holds: ClassVar[bool] = False
    #: Whether the law reacts to ECN marks itself, in :meth:`grow`, from
    #: ``marked`` (DCTCP); otherwise the engine calls :meth:`on_ecn` at most
    #: once per window of data, as the packet engine's sender does.
    marks: ClassVar[bool] = False

    def __init__(self, cc: "CongestionControl") -> None:
        self.cc = cc

    def start(self, f: FlowArrays, m: np.ndarray) -> None:
        """Flows in the mask ``m`` open now. The engine has already set
        ``cwnd`` (the initial window), ``ssthresh`` (``inf``) and the declared
        state; override to do more."""

    def grow(self, f: FlowArrays) -> None:
        """Advance ``cwnd`` (and the law's state) over one step ``f.h``."""
        raise NotImplementedError

    def ssthresh_after(self, f: FlowArrays, m: np.ndarray, kind: str) -> np.ndarray:
        """The ``ssthresh`` each flow in ``m`` sets on a loss (pure; the
        values for the flows in ``m``). Default: RFC 5681 eq. (4),
        ``max(FlightSize / 2, 2)``."""
        return np.maximum(f.inflight[m] / 2.0, MIN_SSTHRESH)

    def on_loss(self, f: FlowArrays, m: np.ndarray, kind: str) -> None:
        """Flows in ``m`` detected a loss: ``kind`` is ``"fast"`` (duplicate
        ACKs) or ``"timeout"``. Sets ``ssthresh``; the engine then sets
        ``cwnd`` as the flow's recovery strategy ends (``ssthresh`` after a
        fast recovery, the loss window after a timeout)."""
        f.ssthresh[m] = self.ssthresh_after(f, m, kind)

    def on_ecn(self, f: FlowArrays, m: np.ndarray) -> None:
        """Flows in ``m`` received ECN echoes (at most once per window, never
        in loss recovery). Default, as
        :meth:`~ccsim.algorithms.CongestionControl.on_ecn` (RFC 3168
        §6.1.2): what a loss would set, without retransmission or recovery —
        ``ssthresh`` as for a fast retransmit, and ``cwnd`` to it."""
        self.on_loss(f, m, "fast")
        f.cwnd[m] = np.maximum(f.ssthresh[m], self.cc.min_cwnd)
