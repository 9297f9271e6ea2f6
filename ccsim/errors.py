"""Exceptions raised by ccsim.

Every error names the offending field, its value and what is allowed, e.g.
``link.rate='fast': a rate such as '100Mbps' ...``.
"""

from __future__ import annotations

import difflib


class CcsimError(Exception):
    """Base class of every error raised by ccsim."""


class _FieldError(CcsimError):
    """An error about one input field; ``.field``, ``.value``, ``.allowed``
    and ``.hint`` hold the parts of the message."""

    field: str
    value: object
    allowed: str
    hint: str | None

    def __init__(self, field: str, value: object, allowed: str, hint: str | None = None) -> None:
        self.field, self.value, self.allowed, self.hint = field, value, allowed, hint
        super().__init__(f"{field}={value!r}: {allowed}" + (f" ({hint})" if hint else ""))

    def __reduce__(self) -> tuple[type, tuple[object, ...]]:
        return type(self), (self.field, self.value, self.allowed, self.hint)


class ScenarioError(_FieldError, ValueError):
    """A scenario value is out of range or otherwise invalid."""


class UnitError(ScenarioError):
    """A quantity string with an unparseable or wrong-dimension unit (e.g. a time given as a rate)."""


class UnknownAlgorithmError(ScenarioError):
    """An algorithm name that is not registered; ``.suggestion`` is the closest known name or None."""

    def __init__(self, field: str, value: object, known: list[str]) -> None:
        self.known = sorted(known)
        close = difflib.get_close_matches(str(value).lower(), self.known, n=1, cutoff=0.6)
        self.suggestion: str | None = close[0] if close else None
        hint = f"did you mean {self.suggestion!r}?" if self.suggestion else None
        super().__init__(field, value, "must be one of: " + ", ".join(self.known), hint)

    def __reduce__(self) -> tuple[type, tuple[object, ...]]:
        return type(self), (self.field, self.value, self.known)


def packet_only(field: str, value: object, allowed: str, why: str) -> ScenarioError:
    """The fluid engine's refusal of a setting only the packet engine models:
    ``allowed`` there, because ``why``."""
    return ScenarioError(field, value, f"{allowed} in the fluid engine",
                         f"{why}; use mode='packet'")


class ScenarioTypeError(_FieldError, TypeError):
    """A scenario value has the wrong type (e.g. a bool or None where a quantity is expected)."""


class AlgorithmStateError(CcsimError):
    """A window law left a value the sender cannot use (a window that is not
    finite or below one segment, a negative pacing rate, ...).

    ``.algorithm``, ``.hook``, ``.time`` (s), ``.variable`` and ``.value``
    hold the parts of the message.
    """

    def __init__(self, algorithm: str, hook: str | None, time: float, variable: str,
                 value: object, allowed: str) -> None:
        self.algorithm, self.hook, self.time = algorithm, hook, time
        self.variable, self.value, self.allowed = variable, value, allowed
        where = f"in {hook}()" if hook else "in one of its hooks"
        super().__init__(f"algorithm {algorithm!r} set {variable}={value!r} {where} "
                         f"at t={time:.6f} s: {allowed}")

    def __reduce__(self) -> tuple[type, tuple[object, ...]]:
        return type(self), (self.algorithm, self.hook, self.time, self.variable, self.value,
                            self.allowed)


class AlgorithmError(CcsimError):
    """A window law raised an exception of its own (say ``ZeroDivisionError``
    in ``on_ack``); the original is chained as ``__cause__``.

    ``.algorithm``, ``.flow`` (which flow, e.g. ``"flow 1"``), ``.hook`` and
    ``.time`` (simulated s, ``nan`` when unknown) hold the parts of the message.
    """

    def __init__(self, algorithm: str, flow: str, hook: str, time: float, error: str) -> None:
        self.algorithm, self.flow, self.hook, self.time, self.error = (
            algorithm, flow, hook, time, error)
        super().__init__(f"algorithm {algorithm!r} raised {error} in {hook}() "
                         f"({flow}, t={time:.6f} s)")

    def __reduce__(self) -> tuple[type, tuple[object, ...]]:
        return type(self), (self.algorithm, self.flow, self.hook, self.time, self.error)


def _method_name(cls: type, code: object) -> str:
    """The name ``cls`` knows the function of ``code`` by (a hook may be
    defined under another name and assigned), else the code's own name."""
    for klass in cls.__mro__:
        for name, value in vars(klass).items():
            if getattr(value, "__code__", None) is code:
                return name
    return getattr(code, "co_name", "?")


def law_failure(exc: BaseException, laws: dict[int, tuple[str, str]],
                now: float) -> AlgorithmError | None:
    """The :class:`AlgorithmError` for ``exc`` if it was raised inside one of
    ``laws`` (``id(law)`` → (algorithm, flow)), else None.

    The hook is the outermost frame of the traceback whose ``self`` is a law
    (what the engine called); the time is its event's ``now`` when the hook
    got one, else ``now`` (the engine's clock, s).
    """
    tb = exc.__traceback__
    while tb is not None:
        frame = tb.tb_frame
        owner = frame.f_locals.get("self")
        if owner is not None and id(owner) in laws:
            algorithm, flow = laws[id(owner)]
            names = frame.f_code.co_varnames
            event = frame.f_locals.get(names[1]) if frame.f_code.co_argcount > 1 else None
            at = getattr(event, "now", now)
            return AlgorithmError(algorithm, flow, _method_name(type(owner), frame.f_code),
                                  float(at) if isinstance(at, (int, float)) else now,
                                  f"{type(exc).__name__}: {exc}")
        tb = tb.tb_next
    return None


class IdenticalSeedsWarning(UserWarning):
    """:func:`ccsim.aggregate` found a group whose seeds all gave the same
    numbers: its interval is zero wide because nothing in the runs depended
    on the seed, not because the result is certain."""
