"""A hypothesis state machine that drives a window law through realistic
events, checks the rules after every step, and turns the minimal failure into
a replay script.

Event semantics are the packet engine's, as the contract states them
(:mod:`ccsim.algorithms.contract`, whose hooks this machine drives all):
``start`` first; ``on_ack`` only outside recovery, with ``acked ≥ 1``, ``now``
non-decreasing and the RTT sample (if any) handed to ``on_rtt`` just before;
a fast loss (the third duplicate ACK — earlier duplicates reach no hook) is
``on_loss`` followed, when recovery ends, by ``cwnd = ssthresh`` (what
:mod:`ccsim.recovery.reno` does; other recovery strategies are not modelled);
a timeout is ``on_loss`` (which drops ``cwnd`` to the loss window); an ACK
that echoes CE marks is ``on_ce_echo``, then ``on_ecn`` at most once per
window of data, then the ACK's own hooks. ACKs stop
while ``cwnd`` exceeds the path's capacity (BDP + buffer): a drop-tail
bottleneck would be dropping, so only losses, RTT samples, idle periods and
RTT steps can follow.
"""

from __future__ import annotations

import math
from typing import Any, Callable, ClassVar

from hypothesis import HealthCheck, Verbosity
from hypothesis import settings as _settings
from hypothesis import strategies as st
from hypothesis.stateful import (RuleBasedStateMachine, initialize, precondition, rule,
                                 run_state_machine_as_test)

from ..algorithms import registry
from ..algorithms.base import CongestionControl
from ..algorithms.contract import Ack, Loss, RttSample, event
from . import strategies
from .model import AckRound, Path, Sender, declared, same_state, snapshot
from .rules import BUILTIN, COMMON

__all__ = ["AlgorithmMachine", "make_machine", "check_algorithm", "CheckFailure"]

MAX_ROUND = 1000  # ACKs in one round at most (the path holds ≤ 400 segments anyway)


class CheckFailure(AssertionError):
    """A window law broke a rule. The message names the rule and carries a
    minimal replay script (also in :attr:`replay`).

    Attributes:
        algorithm: the class checked.
        rule: the rule's name (a key of ``ccsim.testing.rules.COMMON``,
            one of ``BUILTIN``, or ``"<Class>: <property>"``).
        detail: what the rule saw.
        replay: a runnable Python script reproducing the failing step.
        before, event, after: state snapshots around the failing step, and its
            event.
    """

    def __init__(self, algorithm: type, rule: str, detail: str, replay: str,
                 before: dict | None = None, event: Any = None, after: dict | None = None,
                 check: Callable | None = None) -> None:
        self.algorithm, self.rule, self.detail, self.replay = algorithm, rule, detail, replay
        self.before, self.event, self.after, self._check = before, event, after, check
        super().__init__(f"{algorithm.__name__} broke the rule {rule!r}: {detail}\n\n"
                         f"Minimal replay:\n\n{replay}")

    def recheck(self, algo: CongestionControl) -> str | None:
        """Evaluate the broken rule again on ``algo`` (e.g. the ``algo`` a replay
        left behind) as the state after the failing step; the message if
        broken. ``None`` for rules that cannot be re-evaluated (a hook raised)."""
        if self._check is None:
            return None
        return self._check(algo, self.before, self.event, snapshot(algo))


def _class_ref(cls: type) -> tuple[str, str]:
    """(how the replay gets the class, the expression naming it)."""
    if registry.REGISTRY.holds(cls):
        return "import ccsim.algorithms", f"ccsim.algorithms.get({cls.name!r})"
    if cls.__module__ != "__main__" and "<locals>" not in cls.__qualname__ \
            and "." not in cls.__qualname__:
        return f"from {cls.__module__} import {cls.__qualname__}", cls.__qualname__
    return (f"# {cls.__qualname__} is defined in {cls.__module__}: run this where it is "
            f"in scope", cls.__qualname__)


class AlgorithmMachine(RuleBasedStateMachine):
    """Drives ``algorithm`` through events; subclass it with
    :func:`make_machine` rather than directly."""

    algorithm: ClassVar[type[CongestionControl]] = CongestionControl
    params_strategy: ClassVar[st.SearchStrategy[dict]] = st.just({})
    checks: ClassVar[dict[str, Callable]] = {}  # name -> fn(algo, before, event, after)
    check_purity: ClassVar[bool] = True
    check_raises: ClassVar[bool] = True

    def __init__(self) -> None:
        super().__init__()
        self.algo: CongestionControl | None = None
        self.lines: list[str] = []

    # -- bookkeeping -------------------------------------------------------------
    @property
    def wants_rtt(self) -> bool:
        """The engine calls ``on_rtt`` only for laws that override it."""
        return type(self.algo).on_rtt is not CongestionControl.on_rtt

    def _fail(self, rule: str, detail: str, before=None, event=None, after=None,
              check=None) -> None:
        imp, ref = _class_ref(self.algorithm)
        head = [f"# ccsim.testing replay: {self.algorithm.__qualname__} breaks {rule!r}",
                "from math import inf, nan",
                "from ccsim.algorithms import (NOT_SAMPLED, Ack, EcnEcho, Loss, RecoveryState,\n"
                "                              RttSample)", imp]
        tail = [f"# broken rule: {rule}"] + [f"#   {line}" for line in detail.splitlines()]
        replay = "\n".join(head + [self.lines[0].replace("{cls}", ref)] + self.lines[1:] + tail)
        raise CheckFailure(self.algorithm, rule, detail, replay, before, event, after, check)

    def _call(self, fn: Callable, *args) -> None:
        try:
            fn(*args)
        except Exception as exc:  # noqa: BLE001 — any exception breaks the rule
            if not self.check_raises:
                raise
            self._fail("hooks do not raise", f"{type(exc).__name__}: {exc}")

    def _check(self, before: dict, event: Any) -> None:
        after = snapshot(self.algo)
        for name, fn in self.checks.items():
            msg = fn(self.algo, before, event, after)
            if msg is not None:
                self._fail(name, msg, before, event, after, fn)

    def _ack(self, sample: RttSample | None, ack: Ack) -> None:
        if sample is not None and self.wants_rtt:
            self.lines.append(f"algo.on_rtt({sample!r})")
            self._call(self.algo.on_rtt, sample)
        self.lines.append(f"algo.on_ack({ack!r})")
        self._call(self.algo.on_ack, ack)

    # -- the rules ----------------------------------------------------------------
    @initialize(data=st.data(), path=strategies.paths(), iw=strategies.initial_windows())
    def start(self, data, path: Path, iw: int) -> None:
        params = data.draw(self.params_strategy, label="params")
        self.path = path
        self.sender = Sender(path, samples_rate=self.algorithm.samples_delivery_rate)
        self.cwr_end = 0.0  # no ECN reduction until delivered reaches this (RFC 3168)
        args = ", ".join(f"{k}={v!r}" for k, v in params.items())
        self.lines.append(f"algo = {{cls}}({args})")
        self.lines.append(f"algo.start({iw!r}, {path.mss!r})")
        try:
            self.algo = self.algorithm(**params)
            self.algo.start(iw, path.mss)
        except Exception as exc:  # noqa: BLE001
            self.algo = None
            self._fail("hooks do not raise", f"{type(exc).__name__}: {exc}")
        self._check(snapshot(self.algo), None)

    def _acking(self) -> bool:
        return self.algo.cwnd <= self.path.capacity

    @precondition(_acking)
    @rule(acked=st.integers(1, 3), jitter=st.floats(1.0, 1.5), karn=st.booleans())
    def ack(self, acked: int, jitter: float, karn: bool) -> None:
        """One cumulative ACK of 1–3 segments (delayed or stretch ACKs)."""
        cwnd = self.algo.cwnd
        inflight = max(math.floor(cwnd), acked)
        path_rtt = self.path.rtt(inflight)
        rtt = None if karn and self.sender.retransmitted else path_rtt * jitter
        sample, ack = self.sender.ack(acked, inflight, rtt, path_rtt / max(cwnd, 1.0))
        before = snapshot(self.algo)
        self._ack(sample, ack)
        self._check(before, ack)

    @precondition(_acking)
    @rule()
    def ack_round(self) -> None:
        """One RTT of ACKs: ``floor(cwnd)`` ACKs of one segment each, ``now``
        advancing by one RTT over the round."""
        n = min(max(math.floor(self.algo.cwnd), 1), MAX_ROUND)
        rtt = self.path.rtt(n)
        before = snapshot(self.algo)
        acks = []
        algo, sender = self.algo, self.sender
        wants_rtt = self.wants_rtt
        for _ in range(n):
            sample, ack = sender.ack(1, max(math.floor(algo.cwnd), 1), rtt, rtt / n)
            acks.append(ack)
            try:
                if wants_rtt:
                    algo.on_rtt(sample)
                algo.on_ack(ack)
            except Exception as exc:  # noqa: BLE001
                if not self.check_raises:
                    raise
                self.lines += _round_lines(acks, wants_rtt)  # up to the ACK that failed
                self._fail("hooks do not raise", f"{type(exc).__name__}: {exc}")
        self.lines += _round_lines(acks, wants_rtt)
        self._check(before, AckRound(tuple(acks), rtt))

    @precondition(_acking)
    @rule(acked=st.integers(1, 3), marked=st.integers(1, 3), react=st.booleans())
    def marked_ack(self, acked: int, marked: int, react: bool) -> None:
        """An ACK of ``acked`` segments that echoes CE marks on up to as many
        (an ECN-capable flow behind a marking queue): ``on_ce_echo``, then
        ``on_ecn`` if ``react`` and the data outstanding at the last reduction
        has been delivered (RFC 3168 §6.1.2) and the law does not respond
        itself (``own_ecn_response``), then the ACK's ``on_rtt`` and
        ``on_ack``. Two steps for the rules: the echo, then the ACK."""
        cwnd = self.algo.cwnd
        inflight = max(math.floor(cwnd), acked)
        path_rtt = self.path.rtt(inflight)
        echo = self.sender.echo(min(marked, acked), inflight, path_rtt / max(cwnd, 1.0))
        before = snapshot(self.algo)
        self.lines.append(f"algo.on_ce_echo({echo!r})")
        self._call(self.algo.on_ce_echo, echo)
        if react and echo.delivered >= self.cwr_end and not self.algo.own_ecn_response:
            self.lines.append(f"algo.on_ecn({echo!r})")
            self._call(self.algo.on_ecn, echo)
            self.cwr_end = echo.delivered + inflight
        self._check(before, echo)
        sample, ack = self.sender.ack(acked, inflight, path_rtt, 0.0)
        before = snapshot(self.algo)
        self._ack(sample, ack)
        self._check(before, ack)

    @precondition(lambda self: self.algo.cwnd >= 4)
    @rule(frac=st.floats(0.0, 1.0))
    def fast_loss(self, frac: float) -> None:
        """Third duplicate ACK: ``on_loss("fast")``, then recovery ends with
        ``cwnd = ssthresh`` (Reno recovery)."""
        top = math.floor(self.algo.cwnd)
        inflight = 4 + round(frac * (top - 4))
        loss = self.sender.loss("fast", inflight, self.path.rtt(inflight) / top)
        self._loss(loss)

    @rule(frac=st.floats(0.0, 1.0))
    def timeout(self, frac: float) -> None:
        """The retransmission timer expires (RTO ≥ 200 ms; 1 s before any sample)."""
        inflight = max(1, round(frac * math.floor(self.algo.cwnd)))
        srtt = self.sender.srtt
        rto = max(0.2, 2.0 * srtt) if math.isfinite(srtt) else 1.0
        self._loss(self.sender.loss("timeout", inflight, rto))

    def _loss(self, loss: Loss) -> None:
        before = snapshot(self.algo)
        if self.check_purity:
            try:
                self.algo.ssthresh_after(loss)
            except Exception as exc:  # noqa: BLE001
                self.lines.append(f"algo.ssthresh_after({loss!r})")
                self._fail("hooks do not raise", f"{type(exc).__name__}: {exc}")
            if not same_state(before, snapshot(self.algo)):
                self.lines.append(f"algo.ssthresh_after({loss!r})  # must change nothing")
                changed = sorted(k for k, v in snapshot(self.algo).items()
                                 if not same_state({k: v}, {k: before.get(k)}))
                self._fail("ssthresh_after is pure",
                           f"ssthresh_after changed the state: {', '.join(changed)}")
        self.lines.append(f"algo.on_loss({loss!r})")
        self._call(self.algo.on_loss, loss)
        if loss.kind == "fast":
            self._recovery("recovery", loss)
            self.lines.append("algo.cwnd = algo.ssthresh  # recovery ends (ccsim.recovery.reno)")
            self.algo.cwnd = self.algo.ssthresh
        else:
            self._recovery("loss", loss)
        self._check(before, loss)
        if loss.kind == "fast":
            # after the loss's rules: leaving recovery may restore a saved window (BBR)
            self._recovery("open", loss)

    def _recovery(self, state: str, loss: Loss) -> None:
        """Tell the law of the recovery state (``on_recovery``), as the packet
        sender does: one segment of the flight lost, the rest in flight."""
        change = event("on_recovery", now=loss.now, state=state,
                       pipe=max(loss.inflight - 1.0, 0.0), inflight=loss.inflight,
                       delivered=self.sender.delivered, acked=0.0, lost=1.0, change=True)
        self.lines.append(f"algo.on_recovery({change!r})")
        self._call(self.algo.on_recovery, change)

    @precondition(lambda self: self.wants_rtt)
    @rule(jitter=st.floats(1.0, 1.5))
    def rtt_sample(self, jitter: float) -> None:
        """An RTT sample with no ``on_ack`` (an ACK during loss recovery)."""
        inflight = max(math.floor(self.algo.cwnd), 1)
        rtt = self.path.rtt(inflight) * jitter
        sample = self.sender.rtt_sample(rtt, inflight, rtt / inflight)
        before = snapshot(self.algo)
        self.lines.append(f"algo.on_rtt({sample!r})")
        self._call(self.algo.on_rtt, sample)
        self._check(before, sample)

    @rule(seconds=st.floats(0.1, 60.0))
    def idle(self, seconds: float) -> None:
        """Nothing to send for a while."""
        self.sender.now += seconds
        self.lines.append(f"# idle for {seconds!r} s")

    @rule(factor=st.floats(0.25, 4.0))
    def rtt_step(self, factor: float) -> None:
        """The path's base RTT steps up or down (a route change)."""
        self.path.base_rtt = min(max(self.path.base_rtt * factor, 1e-4), 2.0)
        self.lines.append(f"# base RTT steps to {self.path.base_rtt!r} s")


def _round_lines(acks: list[Ack], wants_rtt: bool) -> list[str]:
    """A round of ACKs as a loop: fields constant over the round written once,
    the others as a list of tuples (the engine's order: ``on_rtt`` first)."""
    names = list(Ack._fields)
    varying = [k for k in names if len({repr(getattr(a, k)) for a in acks}) > 1]
    if len(acks) <= 2 or not varying:
        lines = []
        for a in acks:
            if wants_rtt:
                lines.append(f"algo.on_rtt(RttSample(now={a.now!r}, rtt={a.rtt!r}, "
                             f"min_rtt={a.min_rtt!r}, srtt={a.srtt!r}, inflight={a.inflight!r}))")
            lines.append(f"algo.on_ack({a!r})")
        return [f"# one RTT of {len(acks)} ACKs"] + lines
    rows = [f"({', '.join(repr(getattr(a, k)) for k in varying)}{',' if len(varying) == 1 else ''})"
            for a in acks]
    def arg(k):
        return k if k in varying else repr(getattr(acks[0], k))
    out = [f"# one RTT of {len(acks)} ACKs",
           f"for {', '.join(varying)} in ["]
    out += [f"        {', '.join(rows[i:i + 3])}," for i in range(0, len(rows), 3)]
    out.append("]:")
    if wants_rtt:
        out.append(f"    algo.on_rtt(RttSample(now={arg('now')}, rtt={arg('rtt')}, "
                   f"min_rtt={arg('min_rtt')}, srtt={arg('srtt')}, inflight={arg('inflight')}))")
    out.append("    algo.on_ack(Ack(" + ", ".join(f"{k}={arg(k)}" for k in names) + "))")
    return out


def _property_check(prop: Callable) -> Callable:
    def check(algo, before, event, after):
        try:
            return prop(before, event, after)
        except Exception as exc:  # noqa: BLE001 — say which rule could not be evaluated
            return f"the property itself raised {type(exc).__name__}: {exc}"
    check.__name__ = getattr(prop, "__name__", "property")
    return check


def make_machine(cls: type[CongestionControl], *, params: dict | st.SearchStrategy | None = None,
                 properties: tuple[Callable, ...] = (), skip: tuple[str, ...] = ()
                 ) -> type[AlgorithmMachine]:
    """A state machine for ``cls`` (use ``.TestCase`` for unittest/pytest).

    Args:
        params: constructor keywords — a dict (fixed), a strategy of dicts, or
            ``None`` to draw them from ``cls.param_space``.
        properties: extra rules ``(before, event, after) -> str | None``,
            checked with those ``cls`` declares.
        skip: names of common rules to leave out (``rules.COMMON`` keys or
            ``rules.BUILTIN``), where the algorithm documents why.
    """
    if not (isinstance(cls, type) and issubclass(cls, CongestionControl)):
        raise TypeError(f"check a CongestionControl subclass, not {cls!r}")
    unknown = set(skip) - set(COMMON) - set(BUILTIN)
    if unknown:
        raise ValueError(f"skip: unknown rule(s) {sorted(unknown)}; "
                         f"known: {sorted(COMMON) + list(BUILTIN)}")
    if params is None:
        strategy = strategies.params(cls)
    elif isinstance(params, st.SearchStrategy):
        strategy = params
    else:
        strategy = st.just(dict(params))
    checks = {name: fn for name, fn in COMMON.items() if name not in skip}
    for prop in tuple(declared(cls, "properties")) + tuple(properties):
        name = getattr(prop, "__name__", repr(prop)).strip("_")
        checks[f"{cls.__qualname__}: {name}"] = _property_check(prop)
    return type(f"{cls.__name__}Machine", (AlgorithmMachine,), {
        "algorithm": cls, "params_strategy": strategy, "checks": checks,
        "check_purity": "ssthresh_after is pure" not in skip,
        "check_raises": "hooks do not raise" not in skip,
        "__module__": __name__,
    })


def check_algorithm(cls: type[CongestionControl], *, params: dict | st.SearchStrategy | None = None,
                    max_examples: int | None = None, properties: tuple[Callable, ...] = (),
                    skip: tuple[str, ...] = (), settings: _settings | None = None) -> None:
    """Run the common suite (and ``cls``'s declared properties, and
    ``properties``) over realistic event streams, like scikit-learn's
    ``check_estimator``.

    Returns ``None`` when every rule held; raises :class:`CheckFailure` (an
    ``AssertionError``) with a minimal replay script otherwise. The number of
    examples comes from the current hypothesis profile unless
    ``max_examples`` is given; ``settings`` (a ``hypothesis.settings``)
    replaces that profile as the base. ``params`` and ``skip`` as in
    :func:`make_machine`.
    """
    machine = make_machine(cls, params=params, properties=properties, skip=skip)
    overrides: dict[str, Any] = dict(
        deadline=None, report_multiple_bugs=False, verbosity=Verbosity.quiet,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                               HealthCheck.filter_too_much])
    if max_examples is not None:
        overrides["max_examples"] = max_examples
    try:
        base = settings if settings is not None else _settings.default
        run_state_machine_as_test(machine, settings=_settings(base, **overrides))
    except CheckFailure as failure:
        raise CheckFailure(failure.algorithm, failure.rule, failure.detail, failure.replay,
                           failure.before, failure.event, failure.after,
                           failure._check) from None
