"""The law/engine contract: every event a window law sees, described once.

A window law (:class:`~ccsim.algorithms.CongestionControl`) knows no engine.
Three routes drive it, and all three follow this module:

* the packet engine's sender (:mod:`ccsim.packet.tcp`), ACK by ACK (its
  per-ACK path inline in :mod:`ccsim.packet.fast_path`, which builds the
  events positionally, in their fields' order);
* the fluid engine's hook route (:class:`ccsim.fluid.hooks.HookLaw`), once
  per step, for a class without a fluid law of its own;
* the testing kit's state machine (:mod:`ccsim.testing`), which draws event
  streams and checks rules after each step.

The events are immutable named tuples (:class:`Ack`, :class:`Loss`,
:class:`RttSample`, :class:`EcnEcho`), their fields named and in units of
segments, seconds and bit/s. :data:`HOOKS` maps each hook's name to a
:class:`Hook`: the event type it takes, when each route calls it, and what
the law may change there; :data:`EVENTS` is the bare map hook name -> event
type, and :func:`event` builds a hook's event from named fields. The table
below is generated from :data:`HOOKS`.

What the engines read back after every hook (:data:`READ_BACK`): ``cwnd``
and ``ssthresh`` (segments) and ``pacing_rate`` (bit/s or ``None``); the
packet sender refuses a ``cwnd`` that is not finite or below one segment, or a
``ssthresh`` that is not positive (:class:`~ccsim.errors.AlgorithmStateError`).
What they read once, from the class: :data:`DECLARATIONS`.

Two moments have no hook of their own (:data:`WITHOUT_A_HOOK`):

* **Timeout.** A retransmission timeout is ``on_loss`` with
  ``Loss(kind="timeout")``; the law's default drops ``cwnd`` to its
  ``loss_window``. When the timer fires again for the same segment, the
  packet sender sets ``cwnd = loss_window`` itself and calls no hook
  (RFC 5681: ``ssthresh`` is set once per segment). The fluid engine calls
  ``on_loss("timeout")`` at each timeout and then sets ``cwnd`` to the loss
  window itself.
* **Recovery exit.** Loss recovery belongs to a recovery strategy
  (:mod:`ccsim.recovery`), not to the law: after ``on_loss(kind="fast")``
  the strategy sets ``cwnd`` during recovery and, ending it through the
  sender's ``exit_recovery``, at its end (Reno, SACK and PRR: ``cwnd =
  ssthresh``; NewReno: ``min(ssthresh, FlightSize + 1)``; Vegas: its own
  window; Vegas and Rate-Halving also set ``ssthresh`` through the sender's
  ``set_ssthresh``, as their sources do). The law hears of the end by
  ``on_ack``: under ``Scenario.exit_ack`` (the Linux stack's) that of the
  very ACK that ended the recovery, with the segments it delivered (Linux's
  ``acked_sacked``), else the next ACK's (a law with ``acks_in_recovery``
  saw every ACK anyway). The fluid engine sets ``cwnd`` as the strategy would end
  (``ssthresh``, or the loss window for a strategy that restarts from it);
  the testing kit models Reno's end, ``cwnd = ssthresh``. A law that needs
  the recovery state itself (BBR's packet conservation and its restore of the
  window on leaving) overrides ``on_recovery``, which the packet sender calls
  at each change of state (:class:`RecoveryState`); a law that sets ``cwnd``
  through recovery declares ``controls_recovery_window`` and PRR leaves the
  window to it, as Linux skips ``tcp_cwnd_reduction`` for a ``cong_control``
  module.
"""

from __future__ import annotations

from typing import Any, Literal, NamedTuple

__all__ = ["Ack", "Loss", "RttSample", "EcnEcho", "RecoveryState", "NOT_SAMPLED", "Hook", "HOOKS", "EVENTS",
           "DECLARATIONS", "READ_BACK", "WITHOUT_A_HOOK", "event"]


class _NotSampled:
    """The type of :data:`NOT_SAMPLED`: refuses to pass for a number."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "NOT_SAMPLED"

    def __reduce__(self) -> str:
        return "NOT_SAMPLED"  # pickled and copied as the one module-level instance

    def _refuse(self, *_: object) -> Any:
        raise TypeError("Ack.delivery_rate (tx_in_flight, sample_delivered) is NOT_SAMPLED: "
                        "the engines sample the delivery rate only for window laws that "
                        "read it; set the class attribute samples_delivery_rate = True on "
                        "the law")


for _name in ("__bool__", "__float__", "__int__", "__index__", "__round__", "__lt__", "__le__",
              "__gt__", "__ge__", "__add__", "__radd__", "__sub__", "__rsub__", "__mul__",
              "__rmul__", "__truediv__", "__rtruediv__", "__floordiv__", "__rfloordiv__",
              "__pow__", "__rpow__", "__neg__", "__pos__", "__abs__"):
    setattr(_NotSampled, _name, _NotSampled._refuse)
del _name

NOT_SAMPLED = _NotSampled()
""":attr:`Ack.delivery_rate` for a law that does not set
:attr:`~ccsim.algorithms.CongestionControl.samples_delivery_rate`: any use of it as a number
(a test of truth, a comparison, arithmetic) raises a ``TypeError`` that
says so, rather than passing for a rate."""


class Ack(NamedTuple):
    """An ACK that acknowledged new data, as seen by the window law.

    Event objects are immutable named tuples: the engine makes one per ACK,
    and building one costs a ninth of a frozen dataclass (0.1 against
    0.9 µs, measured on the 2-core machine kind).

    Attributes:
        now: simulation time the ACK arrived at the sender (s).
        acked: segments newly acknowledged by this ACK (> 0).
        rtt: RTT sample carried by this ACK (s), or ``None`` when Karn's rule
            excludes it (the acknowledged segment had been retransmitted).
        min_rtt: smallest RTT sample seen on the flow so far (s).
        srtt: smoothed RTT per RFC 6298 (s).
        inflight: segments still outstanding after this ACK.
        delivered: segments delivered to the receiver since the flow began.
        delivery_rate: delivery-rate sample (bit/s): what was delivered since
            the acknowledged segment was sent, over the longer of its send
            and ACK phases (Linux's ``tcp_rate.c``), or ``None`` if
            unavailable or shorter than the minimum RTT (Linux's invalid sample);
            :data:`NOT_SAMPLED` unless the law sets
            :attr:`~ccsim.algorithms.CongestionControl.samples_delivery_rate`.
        tx_in_flight: segments in flight just after the acknowledged segment
            was sent, itself included, SACKed data and data marked lost not
            counted (Linux's ``rs->tx_in_flight``, its ``tcp_packets_in_flight``
            at transmission); :data:`NOT_SAMPLED` as ``delivery_rate``.
        sample_delivered: segments delivered over the delivery-rate sample's
            interval, since the acknowledged segment was sent (Linux's
            ``rs->delivered``); ``delivered − sample_delivered`` is what had been
            delivered when it went out (``rs->prior_delivered``);
            :data:`NOT_SAMPLED` as ``delivery_rate``.
    """

    now: float
    acked: float
    rtt: float | None
    min_rtt: float
    srtt: float
    inflight: float
    delivered: float
    delivery_rate: float | None | _NotSampled
    tx_in_flight: float | _NotSampled = NOT_SAMPLED
    sample_delivered: float | _NotSampled = NOT_SAMPLED


class Loss(NamedTuple):
    """A loss the sender detected.

    Attributes:
        now: simulation time of detection (s).
        kind: ``"fast"`` (duplicate ACKs / recovery trigger) or ``"timeout"``
            (retransmission timer expired).
        inflight: the flight at the loss as the stack takes it
            (``Scenario.loss_flight``), in segments: RFC 5681's FlightSize,
            segments outstanding when the loss was detected
            (``"flight"``); a fast recovery's RFC 6675 pipe (``"pipe"``, the
            ns-3 stack's); or the window, ``min(cwnd, rwnd)`` before the law
            reacts (``"cwnd"``, the Linux and ns-2 stacks': Linux's
            ``ssthresh()`` reads ``snd_cwnd``).
        min_rtt: smallest RTT sample seen so far (s); ``inf`` before the first.
        srtt: smoothed RTT (s); ``nan`` before the first sample.
    """

    now: float
    kind: Literal["fast", "timeout"]
    inflight: float
    min_rtt: float
    srtt: float


class RttSample(NamedTuple):
    """A valid RTT measurement (Karn's rule applied).

    Attributes:
        now: simulation time of the measurement (s).
        rtt: the sample (s).
        min_rtt: smallest sample so far, this one included (s).
        srtt: smoothed RTT after this sample (s).
        inflight: segments outstanding when the sample was taken.
    """

    now: float
    rtt: float
    min_rtt: float
    srtt: float
    inflight: float


class EcnEcho(NamedTuple):
    """An ACK that echoed ECN congestion marks (CE, RFC 3168).

    ccsim's receivers echo the number of CE-marked segments each ACK covers
    (as DCTCP's receiver state machine, RFC 8257 §3.2, and Accurate ECN
    convey), rather than RFC 3168's ECE-until-CWR flag: the sender reacts at
    most once per window either way, and the count is what DCTCP needs.
    With Accurate ECN feedback (``Flow(ecn="accecn")``, RFC 9768) the count
    is what the sender decodes from the ACK's 3-bit ACE field
    (:mod:`ccsim.packet.accecn`): the newly marked segments modulo 8, or
    more when a stretch ACK may hide a wrap of the counter.

    Attributes:
        now: simulation time the ACK arrived (s).
        marked: CE-marked segments this ACK newly reports (> 0): RFC 9768's
            ``d.cep`` with Accurate ECN feedback.
        marked_total: CE-marked segments reported since the flow began.
        delivered: segments delivered since the flow began (as ``Ack``).
        inflight: segments outstanding (RFC 5681's FlightSize) when it arrived.
        min_rtt: smallest RTT sample so far (s). srtt: smoothed RTT (s).
    """

    now: float
    marked: int
    marked_total: int
    delivered: float
    inflight: float
    min_rtt: float
    srtt: float


class RecoveryState(NamedTuple):
    """The sender's loss-recovery state: Linux's congestion-avoidance states
    (``icsk_ca_state``), as a law with ``cong_control`` reads them on every
    ACK (BBR's ``bbr_set_cwnd_to_recover_or_restore``).

    Attributes:
        now: simulation time of the change (s).
        state: ``"recovery"`` (fast recovery began: Linux's ``TCP_CA_Recovery``),
            ``"loss"`` (a retransmission timeout began the loss phase:
            ``TCP_CA_Loss``) or ``"open"`` (the recovery or the loss phase
            ended: ``TCP_CA_Open``).
        pipe: segments in flight as the recovery strategy counts them (Linux's
            ``tcp_packets_in_flight``: outstanding, less SACKed and marked
            lost, plus retransmitted), before any segment the change sends;
            ``inflight`` less the duplicate ACKs for strategies without SACK.
        inflight: segments outstanding (RFC 5681's FlightSize).
        delivered: segments delivered since the flow began.
        acked: segments the ACK that caused the change delivered
            (acknowledged or SACKed; 0 when a timer caused it).
        lost: segments the loss detector (RACK) newly marked lost since the
            previous event (0 for strategies without a detector).
        change: whether the state changed (``False``: an ACK during fast
            recovery, which the sender also reports, after the law's ``on_ack``).
    """

    now: float
    state: Literal["recovery", "loss", "open"]
    pipe: float
    inflight: float
    delivered: float
    acked: float
    lost: float
    change: bool


# -- the hooks ----------------------------------------------------------------------

class Hook(NamedTuple):
    """One hook of the contract.

    Attributes:
        name: the method of :class:`~ccsim.algorithms.CongestionControl`.
        event: the event type it takes (``None``: ``start`` takes
            ``initial_window`` in segments and ``mss`` in bytes).
        packet: when the packet engine's sender calls it.
        fluid: when the fluid engine's hook route (``HookLaw``) calls it.
        testing: when the testing kit's state machine calls it.
        may_change: what the law may change there.
    """

    name: str
    event: type | None
    packet: str
    fluid: str
    testing: str
    may_change: str


HOOKS: dict[str, Hook] = {h.name: h for h in (
    Hook("start", None,
         packet="once, when the flow opens, before its first segment",
         fluid="once per flow, when it starts, with the engine's initial window",
         testing="first, with a drawn initial window and MSS",
         may_change="everything: the state of a fresh connection (the default sets cwnd to "
                    "the initial window, ssthresh to inf, mss)"),
    Hook("on_rtt", RttSample,
         packet="every valid RTT sample (Karn's rule applied), in loss recovery too, after "
                "the RFC 6298 estimator took it and before the same ACK's on_ack; only for "
                "laws that override on_rtt",
         fluid="once per step in which the flow had data acknowledged and its law sees ACKs "
               "(outside recovery, or always with acks_in_recovery), with the step's RTT, "
               "before on_ack; only for laws that override on_rtt",
         testing="before an ACK's on_ack when it carries a sample, and alone (an ACK in loss "
                 "recovery); only for laws that override on_rtt",
         may_change="the law's own state; cwnd, ssthresh and pacing_rate"),
    Hook("on_ack", Ack,
         packet="every ACK that cumulatively acknowledges new data outside loss recovery "
                "and, under Scenario.exit_ack, the one that ends a fast recovery (in it "
                "too with acks_in_recovery, after the recovery strategy acted)",
         fluid="once per step in which the flow had data acknowledged and may grow "
               "(outside recovery, or always with acks_in_recovery): one Ack for the step's "
               "segments, ln 2 of them in slow start on a link not yet full (doubling per RTT)",
         testing="single ACKs of 1-3 segments, and rounds of cwnd one-segment ACKs over one "
                 "RTT; never while cwnd exceeds the path's capacity",
         may_change="cwnd, ssthresh, pacing_rate and the law's own state"),
    Hook("on_loss", Loss,
         packet="a loss detected: kind 'fast' when a recovery starts (fast retransmit, "
                "Sender.enter_recovery: the strategy's enter calls signal_loss) and when a "
                "tail loss probe alone repaired a loss; kind 'timeout' when the "
                "retransmission timer expires (once per segment)",
         fluid="kind 'fast' when the engine detects a loss by duplicate ACKs, 'timeout' when "
               "its retransmission timer expires",
         testing="a fast loss (then cwnd = ssthresh, Reno's recovery ending) and a timeout",
         may_change="ssthresh (the default applies ssthresh_after), cwnd (the default: the "
                    "loss window on a timeout) and the law's own state"),
    Hook("on_recovery", RecoveryState,
         packet="only for laws that override on_recovery: 'recovery' at the end of "
                "Sender.enter_recovery (after the strategy's enter and its on_loss, before "
                "the window is used again), and again (change False) for every later ACK "
                "of the recovery, duplicate or not, before the sender sends; 'open' when the strategy ends the recovery "
                "(exit_recovery, before that ACK's on_ack) and when the cumulative ACK "
                "reaches the segment sent last before a timeout (the loss phase ends, "
                "before that ACK's on_ack), 'loss' after a timeout's on_loss",
         fluid="never: the fluid engine holds a flow's window through recovery (h = 0) "
               "and sets it at the end itself, so it has no recovery state per ACK to tell "
               "(a law's window in recovery, such as BBR's packet conservation, has no "
               "fluid counterpart)",
         testing="'recovery' after a fast loss's on_loss and 'open' after Reno's recovery "
                 "end (cwnd = ssthresh); 'loss' after a timeout's on_loss",
         may_change="cwnd and the law's own state (ssthresh is on_loss's)"),
    Hook("on_ce_echo", EcnEcho,
         packet="every ACK of an ECN-capable flow that echoes CE marks, in recovery too, "
                "before the same ACK's on_ecn, on_rtt and on_ack",
         fluid="every step in which an ECN-capable flow's ACKs echoed marks, before the "
               "step's on_ack; only for laws that override on_ce_echo",
         testing="an ACK that echoes marks, before its on_ecn (if any) and its on_ack",
         may_change="the law's own state (counting marks); cwnd and ssthresh are on_ecn's"),
    Hook("on_ecn", EcnEcho,
         packet="after on_ce_echo, at most once per window of data (not until the data "
                "outstanding at the last reduction is acknowledged; RFC 3168 §6.1.2), never "
                "in loss recovery or the loss phase after a timeout; never for a law with "
                "own_ecn_response (it reacts in on_ce_echo)",
         fluid="at most once per window of data outside recovery, for flows whose ACKs "
               "echoed marks in the step",
         testing="after on_ce_echo, at most once per window of data; never for a law with "
                 "own_ecn_response",
         may_change="cwnd, ssthresh and the law's own state (the default: the reduction of "
                    "a fast loss, cwnd = ssthresh)"),
)}
"""Hook name -> :class:`Hook`, in the order a flow's life meets them."""

EVENTS: dict[str, type] = {name: h.event for name, h in HOOKS.items() if h.event is not None}
"""Hook name -> the event type it takes (``start`` takes none)."""

READ_BACK: dict[str, str] = {
    "cwnd": "congestion window (segments): finite and at least one segment",
    "ssthresh": "slow-start threshold (segments): > 0, inf before the first loss",
    "pacing_rate": "bit/s at which the sender spaces full packets, or None for none",
}
"""Instance attributes the engines read after every hook, and what they must hold."""

DECLARATIONS: dict[str, str] = {
    "acks_in_recovery": "whether on_ack also sees ACKs during loss recovery",
    "controls_recovery_window": "whether the law sets cwnd in loss recovery itself "
                                "(window-setting strategies, PRR, then leave it alone)",
    "samples_delivery_rate": "whether Ack.delivery_rate is sampled (else NOT_SAMPLED)",
    "loss_window": "cwnd after a retransmission timeout (segments)",
    "min_cwnd": "the floor of cwnd the law keeps (segments), for checkers",
    "recovery": "the default loss-recovery strategy's name",
    "ecn": "whether flows are ECN-capable unless they say otherwise (True: RFC 3168 "
           "feedback; 'accecn': Accurate ECN, RFC 9768)",
    "own_ecn_response": "whether the law reacts to marks in on_ce_echo itself (the sender "
                        "then calls no on_ecn; Accurate ECN flows only)",
    "fluid": "the law's vectorised twin for the fluid engine, or None for the hook route",
}
"""Class attributes the engines read once per flow, and what they declare."""

WITHOUT_A_HOOK: dict[str, str] = {
    "timeout": "on_loss with Loss(kind='timeout'); a repeated timeout of the same segment "
               "sets cwnd = loss_window without a hook (packet engine)",
    "recovery exit": "the recovery strategy sets cwnd (Reno, SACK, PRR: ssthresh) "
                     "and calls the sender's exit_recovery; a law that overrides "
                     "on_recovery hears RecoveryState('open') there; on_ack then sees "
                     "the ACK that ended it under Scenario.exit_ack (Linux), else the "
                     "next ACK",
}
"""The moments a law might expect a hook for, and how they reach it."""


def event(hook: str, /, **fields: Any) -> tuple:
    """The event ``hook`` takes, built from named fields: ``event("on_ack",
    now=1.0, acked=1, ...)``. Raises ``KeyError`` for a hook without an event
    and ``TypeError`` for a missing or unknown field. Off the hot path: the
    packet sender builds its events positionally, in the fields' order."""
    return EVENTS[hook](**fields)


def _table() -> str:
    rows = []
    for h in HOOKS.values():
        takes = (f":class:`{h.event.__name__}` ({', '.join(h.event._fields)})"
                 if h.event is not None else "``initial_window`` (segments), ``mss`` (bytes)")
        rows.append(f"``{h.name}``\n    Takes {takes}.\n\n"
                    f"    *Packet sender:* {h.packet}.\n\n"
                    f"    *Fluid hook route:* {h.fluid}.\n\n"
                    f"    *Testing kit:* {h.testing}.\n\n"
                    f"    *May change:* {h.may_change}.\n")
    return "\nThe hooks\n---------\n\n" + "\n".join(rows)


__doc__ = (__doc__ or "") + _table()
