"""The congestion-control contract: a window law with three hooks.

An algorithm is a small class holding ``cwnd`` and ``ssthresh`` (segments,
floats) that the sender reads and that the three hooks update:

* :meth:`CongestionControl.on_ack` — new data was cumulatively acknowledged
  outside loss recovery: grow (or shrink) the window.
* :meth:`CongestionControl.on_loss` — the sender detected a loss (third
  duplicate ACK or retransmission timeout): set ``ssthresh``, and on a
  timeout the window falls to the loss window.
* :meth:`CongestionControl.on_rtt` — a valid RTT sample was taken (Karn's
  rule applied), during recovery too.

And, for flows with ECN (RFC 3168), two more:

* :meth:`CongestionControl.on_ecn` — an ACK echoed congestion marks, and the
  sender allows a reduction: at most once per window of data (RFC 3168
  §6.1.2), never during loss recovery. Default: the reduction of a loss
  without the retransmission.
* :meth:`CongestionControl.on_ce_echo` — every ACK that echoes marks, with
  their number (for laws that measure the marked fraction: DCTCP). Default:
  ignored.

The decision itself is kept pure, as in ns-3's ``GetSsThresh``:
:meth:`~CongestionControl.ssthresh_after` returns the new ``ssthresh`` and
changes nothing; ``on_loss`` applies it. Loss *recovery* (what happens to
``cwnd`` between fast retransmit and the end of recovery) is not the
algorithm's business: it belongs to a recovery strategy
(:mod:`ccsim.recovery`), so window laws and recovery combine freely.

Algorithms know no engine: the events below are all they see, and the same
class runs in any engine that produces them.
"""

from __future__ import annotations

import math
from typing import Any, Callable, ClassVar, Literal, NamedTuple

__all__ = ["Ack", "Loss", "RttSample", "EcnEcho", "CongestionControl", "NOT_SAMPLED"]


class _NotSampled:
    """The type of :data:`NOT_SAMPLED`: refuses to pass for a number."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "NOT_SAMPLED"

    def __reduce__(self) -> str:
        return "NOT_SAMPLED"  # pickled and copied as the one module-level instance

    def _refuse(self, *_: object) -> Any:
        raise TypeError("Ack.delivery_rate is NOT_SAMPLED: the engines sample the delivery "
                        "rate only for window laws that read it; set the class attribute "
                        "samples_delivery_rate = True on the law")


for _name in ("__bool__", "__float__", "__int__", "__index__", "__round__", "__lt__", "__le__",
              "__gt__", "__ge__", "__add__", "__radd__", "__sub__", "__rsub__", "__mul__",
              "__rmul__", "__truediv__", "__rtruediv__", "__floordiv__", "__rfloordiv__",
              "__pow__", "__rpow__", "__neg__", "__pos__", "__abs__"):
    setattr(_NotSampled, _name, _NotSampled._refuse)
del _name

NOT_SAMPLED = _NotSampled()
""":attr:`Ack.delivery_rate` for a law that does not set
:attr:`CongestionControl.samples_delivery_rate`: any use of it as a number
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
        delivery_rate: delivery-rate sample (bit/s) over the interval since
            the acknowledged segment was sent, or ``None`` if unavailable;
            :data:`NOT_SAMPLED` unless the law sets
            :attr:`~CongestionControl.samples_delivery_rate`.
    """

    now: float
    acked: float
    rtt: float | None
    min_rtt: float
    srtt: float
    inflight: float
    delivered: float
    delivery_rate: float | None | _NotSampled


class Loss(NamedTuple):
    """A loss the sender detected.

    Attributes:
        now: simulation time of detection (s).
        kind: ``"fast"`` (duplicate ACKs / recovery trigger) or ``"timeout"``
            (retransmission timer expired).
        inflight: segments outstanding when the loss was detected (RFC 5681's
            FlightSize, in segments).
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

    Attributes:
        now: simulation time the ACK arrived (s).
        marked: CE-marked segments this ACK newly reports (> 0).
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


class CongestionControl:
    """Base class of every window law.

    Subclasses set the class attributes ``name`` (registry key),
    ``recovery`` (name of the default loss-recovery strategy) and
    ``min_cwnd`` (the floor of the window, segments), take their tunables as
    keyword arguments stored untouched (scikit-learn style), and override
    the hooks they need.

    Attributes:
        cwnd: congestion window (segments); the engine sets the initial value
            through :meth:`start`.
        ssthresh: slow-start threshold (segments); ``inf`` until the first
            loss.
        mss: segment payload size (bytes), set by :meth:`start`, for laws that
            convert between rates and windows.
        pacing_rate: bit/s at which the sender spaces segments (each full
            packet of ``mss`` plus headers), or ``None`` for no pacing. Any law
            may set it; BBR does.
    """

    name: ClassVar[str] = ""
    recovery: ClassVar[str] = "reno"
    #: Whether the name only means another law with the recovery of the same
    #: name (:mod:`ccsim.algorithms.presets`): a flow may not ask for another.
    preset: ClassVar[bool] = False
    min_cwnd: ClassVar[float] = 1.0
    #: Window after a retransmission timeout (segments); RFC 5681 §3.1.
    loss_window: ClassVar[float] = 1.0
    #: Whether :meth:`on_ack` also sees ACKs during loss recovery (after the
    #: recovery strategy has acted). Model-based laws such as BBR need every
    #: delivery-rate sample; window laws leave recovery to the strategy.
    acks_in_recovery: ClassVar[bool] = False
    #: Whether :meth:`on_ack` reads :attr:`Ack.delivery_rate`: the engines
    #: sample the rate only for laws that do (BBR; Linux likewise hands rate
    #: samples only to a ``cong_control`` law). Others get :data:`NOT_SAMPLED`,
    #: which raises if used; computing it for every law would cost about 3 %
    #: of a packet run.
    samples_delivery_rate: ClassVar[bool] = False
    #: Valid range ``(low, high)`` of each numeric constructor keyword: a
    #: ``Flow`` refuses a value outside it (:meth:`validate_params`), and tools
    #: that draw parameters draw from it (:mod:`ccsim.testing`; a keyword left
    #: out keeps its default). Ints are drawn as ints if the default is one.
    param_space: ClassVar[dict[str, tuple[float, float]]] = {}
    #: Extra rules of this law, checked by :mod:`ccsim.testing` after every step
    #: of its event streams: pure functions ``(before, event, after) -> str |
    #: None``, ``before``/``after`` being copies of the instance's ``vars()``
    #: and ``event`` the step's ``Ack``, ``Loss``, ``RttSample`` or
    #: ``ccsim.testing.AckRound``; they return a message when the rule is broken.
    #: This and :meth:`max_growth_per_rtt` describe the law of the class that
    #: declares them: a subclass that overrides a hook (``start``, ``on_ack``,
    #: ``on_loss``, ``ssthresh_after``) without redeclaring gets the defaults.
    properties: ClassVar[tuple[Callable[..., str | None], ...]] = ()
    #: The law in vectorised form for the fluid engine: a
    #: :class:`~ccsim.algorithms.fluid.FluidLaw` subclass, declared in the
    #: algorithm's own file. Looked up on the class itself, never inherited
    #: (a subclass may change the rules); without one, the fluid engine calls
    #: this class's hooks once per step instead.
    fluid: ClassVar[type | None] = None
    #: Whether flows of this law are ECN-capable unless the flow says
    #: otherwise (``Flow(ecn=...)``): off, except for laws that need marks.
    ecn: ClassVar[bool] = False
    #: A scalable law (L4S, RFC 9331): its ECN-capable flows send ECT(1), which
    #: a dual queue (DualPI2) classifies into its low-latency queue; the others
    #: send ECT(0). Off except for laws meeting RFC 9331 §4.
    l4s: ClassVar[bool] = False

    cwnd: float
    ssthresh: float
    mss: int
    #: Pacing rate (bit/s) the sender spaces its segments at, or ``None``
    #: (the default) to send what the window allows at once, ACK-clocked.
    pacing_rate: float | None = None

    def __init__(self, **params: Any) -> None:
        if params:
            raise TypeError(
                f"{type(self).__name__} takes no parameters; got {sorted(params)}")

    @classmethod
    def validate_params(cls, params: dict[str, Any], field: str = "params") -> dict[str, Any]:
        """``params`` checked as this law's constructor keywords and normalised.

        Each name must be a keyword of the constructor; each value of its
        default's type (``bool``, ``int``, ``float`` — an ``int`` is a fine
        ``float`` — or ``str``) and, where :attr:`param_space` declares a
        range, within it. numpy scalars become Python numbers, so a scenario
        built from ``np.linspace`` serialises. Raises
        :class:`~ccsim.errors.ScenarioError` or
        :class:`~ccsim.errors.ScenarioTypeError` naming ``field.name``.
        """
        import difflib
        import inspect
        import numbers

        from ..errors import ScenarioError, ScenarioTypeError

        keywords = {name: p.default for name, p in inspect.signature(cls.__init__).parameters.items()
                    if p.kind is inspect.Parameter.KEYWORD_ONLY}
        out = {}
        for name, value in params.items():
            where = f"{field}.{name}"
            if name not in keywords:
                known = ", ".join(sorted(keywords)) or "none"
                close = difflib.get_close_matches(name, keywords, n=1)
                raise ScenarioTypeError(where, value, f"{cls.name or cls.__name__!r} takes the "
                                        f"keywords: {known}",
                                        f"did you mean {close[0]!r}?" if close else None)
            if hasattr(value, "item") and type(value).__module__ == "numpy":
                value = value.item()  # numpy scalar -> Python bool, int or float
            default = keywords[name]
            if isinstance(default, bool):
                ok, kind = isinstance(value, bool), "True or False"
            elif isinstance(default, int):
                ok, kind = isinstance(value, numbers.Integral) and not isinstance(value, bool), \
                    "an integer"
            elif isinstance(default, float):
                ok, kind = isinstance(value, numbers.Real) and not isinstance(value, bool), \
                    "a number"
                value = float(value) if ok else value
            elif isinstance(default, str):
                ok, kind = isinstance(value, str), "a string"
            else:
                ok, kind = True, ""
            if not ok:
                raise ScenarioTypeError(where, value, f"{kind} (default {default!r})")
            if name in cls.param_space and not isinstance(value, bool):
                low, high = cls.param_space[name]
                if not low <= value <= high:
                    raise ScenarioError(where, value, f"within [{low}, {high}] "
                                        f"(default {default!r})")
            out[name] = value
        return out

    def params(self) -> dict[str, Any]:
        """The constructor keywords and their current values."""
        import inspect

        sig = inspect.signature(type(self).__init__)
        return {p: getattr(self, p) for p in sig.parameters if p != "self"
                and sig.parameters[p].kind is inspect.Parameter.KEYWORD_ONLY}

    def start(self, initial_window: float, mss: int) -> None:
        """Reset to a fresh connection: ``cwnd`` = initial window (segments)."""
        self.cwnd = float(initial_window)
        self.ssthresh = math.inf
        self.mss = mss

    @property
    def in_slow_start(self) -> bool:
        """True while ``cwnd < ssthresh`` (RFC 5681 §3.1)."""
        return self.cwnd < self.ssthresh

    def slow_start(self, acked: float) -> float:
        """RFC 5681 §3.1 slow start with byte counting (RFC 3465, no limit L,
        as Linux's ``tcp_slow_start``): ``cwnd`` grows by ``acked`` segments
        but not past ``ssthresh``. Returns the acknowledged segments left over
        for congestion avoidance (0 while still in slow start)."""
        room = self.ssthresh - self.cwnd
        if room <= 0:
            return acked
        if acked <= room:
            self.cwnd += acked
            return 0.0
        self.cwnd = self.ssthresh
        return acked - room

    def max_growth_per_rtt(self, cwnd: float) -> float:
        """The most ``cwnd`` may grow (segments) over one RTT of ACKs in
        congestion avoidance, starting from ``cwnd``.

        A declaration for checkers (:mod:`ccsim.testing`), not used by engines.
        Default ``cwnd``: no faster than doubling per RTT.
        """
        return cwnd

    def max_slow_start_step(self, ack: Ack) -> float:
        """The most one ACK may grow ``cwnd`` (segments) in slow start.

        A declaration for checkers (:mod:`ccsim.testing`), not used by engines.
        Default ``ack.acked``: RFC 5681 §3.1's slow start, one segment per
        segment acknowledged. A law that grows faster (Hybla) says by how much.
        """
        return ack.acked

    # -- hooks ---------------------------------------------------------------
    def on_ack(self, ack: Ack) -> None:
        """New data acknowledged outside recovery (and in it, if
        ``acks_in_recovery``). Default: no change."""

    def on_rtt(self, sample: RttSample) -> None:
        """A valid RTT sample. Default: ignored."""

    def ssthresh_after(self, loss: Loss) -> float:
        """The ``ssthresh`` this law sets after ``loss`` (pure: changes nothing).

        Default: RFC 5681 eq. (4), ``max(FlightSize / 2, 2)`` segments.
        """
        return max(loss.inflight / 2.0, 2.0)

    def on_loss(self, loss: Loss) -> None:
        """Apply the law's reaction: new ``ssthresh``; on a timeout the window
        falls to the loss window (RFC 5681 §3.1: one segment)."""
        self.ssthresh = self.ssthresh_after(loss)
        if loss.kind == "timeout":
            self.cwnd = self.loss_window

    def on_ce_echo(self, echo: EcnEcho) -> None:
        """An ACK echoed ``echo.marked`` CE marks (every such ACK, in
        recovery too, before :meth:`on_ack` sees it). Default: ignored."""

    def on_ecn(self, echo: EcnEcho) -> None:
        """React to congestion marks: called at most once per window of data
        (RFC 3168 §6.1.2: not again until the data outstanding at the last
        reduction is acknowledged), never in loss recovery.

        Default: what a loss would set, without retransmission or recovery
        (RFC 3168 §6.1.2: "the same as ... a dropped packet"): ``ssthresh`` as
        :meth:`on_loss` sets it for a fast retransmit, and ``cwnd`` to it.
        """
        self.on_loss(Loss(echo.now, "fast", echo.inflight, echo.min_rtt, echo.srtt))
        self.cwnd = max(self.ssthresh, self.min_cwnd)

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.params().items())
        return f"{type(self).__name__}({args})"
