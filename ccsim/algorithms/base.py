"""The window law: a small class whose hooks the engines call.

An algorithm is a small class holding ``cwnd`` and ``ssthresh`` (segments,
floats) that the sender reads and that its hooks update: ``start``,
``on_ack``, ``on_rtt``, ``on_loss`` and, for flows with ECN (RFC 3168),
``on_ce_echo`` and ``on_ecn``. Which event each hook takes, with what
fields in what units, when each engine calls it, what it may change, and
how a timeout and the end of loss recovery reach a law are described once,
in :mod:`ccsim.algorithms.contract`; the events are re-exported here.

The decision itself is kept pure, as in ns-3's ``GetSsThresh``:
:meth:`~CongestionControl.ssthresh_after` returns the new ``ssthresh`` and
changes nothing; ``on_loss`` applies it. Loss *recovery* (what happens to
``cwnd`` between fast retransmit and the end of recovery) is not the
algorithm's business: it belongs to a recovery strategy
(:mod:`ccsim.recovery`), so window laws and recovery combine freely.

Algorithms know no engine: the contract's events are all they see, and the
same class runs in any engine that produces them.
"""

from __future__ import annotations

import math
from typing import Any, Callable, ClassVar

from .contract import NOT_SAMPLED, Ack, EcnEcho, Loss, RecoveryState, RttSample

__all__ = ["Ack", "Loss", "RttSample", "EcnEcho", "CongestionControl", "NOT_SAMPLED",
           "MIN_SSTHRESH"]

MIN_SSTHRESH = 2.0
"""The floor of ``ssthresh`` after a reduction (segments): RFC 5681 eq. (4),
``max(FlightSize / 2, 2·SMSS)``; window laws and fluid laws floor their
reductions with it."""


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
    #: Whether the law sets ``cwnd`` itself during loss recovery, as a Linux
    #: module with ``cong_control`` does (BBR): window-setting recovery
    #: strategies (PRR) then choose what to send but leave ``cwnd`` alone.
    controls_recovery_window: ClassVar[bool] = False
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
    #: and ``event`` the step's ``Ack``, ``Loss``, ``RttSample``, ``EcnEcho`` or
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
    #: otherwise (``Flow(ecn=...)``): off, except for laws that need marks;
    #: ``"accecn"`` for Accurate ECN feedback (RFC 9768, :mod:`ccsim.packet.accecn`).
    ecn: ClassVar[bool | str] = False
    #: Whether the law makes its own response to CE marks in
    #: :meth:`on_ce_echo` (it sees each ACK's newly marked segments and keeps
    #: its own once-per-RTT rule, as TCP Prague does): with Accurate ECN
    #: feedback the sender then never calls :meth:`on_ecn` (RFC 3168's
    #: once-per-window reduction). Such a law needs Accurate ECN: a flow of
    #: it refuses ``ecn=True`` (RFC 3168 feedback) and ``ecn=False``.
    own_ecn_response: ClassVar[bool] = False
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
        return max(loss.inflight / 2.0, MIN_SSTHRESH)

    def rate_halving_floor(self) -> float:
        """How far Linux 2.6.x–3.1's rate halving lowers ``cwnd`` in a fast
        recovery (segments; :mod:`ccsim.recovery.linux_rate_halving`): the
        module's ``min_cwnd`` op in those kernels, read by ``tcp_cwnd_min``,
        which falls back on ``ssthresh`` for a module without one (the
        default here). :class:`~ccsim.algorithms.reno.Reno` and the laws whose
        modules took ``tcp_reno_min_cwnd`` return ``ssthresh/2``."""
        return self.ssthresh

    def on_loss(self, loss: Loss) -> None:
        """Apply the law's reaction: new ``ssthresh``; on a timeout the window
        falls to the loss window (RFC 5681 §3.1: one segment)."""
        self.ssthresh = self.ssthresh_after(loss)
        if loss.kind == "timeout":
            self.cwnd = self.loss_window

    def on_recovery(self, change: RecoveryState) -> None:
        """The sender's loss-recovery state changed (fast recovery began,
        a timeout began the loss phase, or either ended). Default: ignored."""

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
        self.on_loss(Loss(now=echo.now, kind="fast", inflight=echo.inflight,
                          min_rtt=echo.min_rtt, srtt=echo.srtt))
        self.cwnd = max(self.ssthresh, self.min_cwnd)

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.params().items())
        return f"{type(self).__name__}({args})"
