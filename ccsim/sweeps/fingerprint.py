"""The model fingerprint: what a stored result is reused under.

A result in a sweep store is reused only when the code that would make it
again is the code that made it. That code is

* ccsim's own: the SHA-256 of the bytes of every ``.py`` file of the
  installed ``ccsim`` package (read once per process, about 10 ms), so any
  edit to ccsim, released or not, changes it — ccsim's version string does
  not take part;
* the user's: for each class a scenario uses that is not ccsim's own (a
  window law, recovery strategy or queue discipline registered from a
  notebook or a script, or one that replaced a built-in), the source text of
  every function defined in the class and in its non-ccsim base classes, and
  its plain class attributes (numbers, strings, tuples, ...), read with
  :func:`inspect.getsource`; and the source of a sweep's ``runner``.

Where the source of a function cannot be read (a class built with ``exec``),
its bytecode and constants stand in, with a :class:`FingerprintWarning`
saying so. What a user's class calls outside itself (a helper function, a
module constant) is not part of its fingerprint: put what a law depends on
inside the class, or change its name, to be sure its results are re-run.
The flows' parameters are part of the scenario's own key already.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import pathlib
import types
import warnings
from typing import Any, Callable

from ..scenario import Scenario


class FingerprintWarning(UserWarning):
    """A user's class or function whose source cannot be read is fingerprinted
    by its bytecode instead."""


NOT_USED = {"packet": "fluid/"}
"""Per engine, the part of ccsim's source its results cannot depend on: the
packet engine never imports the fluid engine (:mod:`ccsim.fluid`), so an edit
there re-runs fluid results only. A sweep's own ``runner`` may call anything:
its results depend on all of ccsim."""


@functools.cache
def ccsim_source(without: str = "") -> str:
    """SHA-256 (hex) of ccsim's own source: every ``.py`` file of the package
    (but those under ``without``, a folder such as ``"fluid/"``), with its
    path, in sorted order. Computed once per process."""
    root = pathlib.Path(__file__).resolve().parents[1]
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        name = path.relative_to(root).as_posix()
        if without and name.startswith(without):
            continue
        digest.update(name.encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def _ours(obj: Any) -> bool:
    module = getattr(obj, "__module__", None) or ""
    return module == "ccsim" or module.startswith("ccsim.") or module == "builtins"


def _plain(value: Any) -> bool:
    if value is None or isinstance(value, (bool, int, float, complex, str, bytes)):
        return True
    if isinstance(value, (tuple, list, frozenset, set)):
        return all(_plain(v) for v in value)
    if isinstance(value, dict):
        return all(_plain(k) and _plain(v) for k, v in value.items())
    return False


def _code(code: types.CodeType) -> str:
    """A code object's bytecode, names and constants (nested code included)."""
    consts = [_code(c) if isinstance(c, types.CodeType) else repr(c) for c in code.co_consts]
    return f"{code.co_code.hex()}|{code.co_names}|{code.co_varnames}|{consts}"


def _function(func: Callable[..., Any], owner: str) -> str:
    try:
        return inspect.getsource(func)
    except (OSError, TypeError):
        code = getattr(func, "__code__", None)
        warnings.warn(f"{owner}: the source of {getattr(func, '__qualname__', func)!r} cannot "
                      "be read; stored results are keyed by its bytecode instead",
                      FingerprintWarning, stacklevel=4)
        return _code(code) if code is not None else repr(func)


def _class(cls: type) -> str:
    parts = []
    for klass in cls.__mro__:
        if _ours(klass):
            continue
        name = f"{klass.__module__}.{klass.__qualname__}"
        parts.append(name)
        for attr, value in sorted(vars(klass).items()):
            if attr in ("__dict__", "__weakref__", "__module__", "__qualname__", "__doc__"):
                continue
            if isinstance(value, (staticmethod, classmethod)):
                value = value.__func__
            if isinstance(value, property):
                funcs = [f for f in (value.fget, value.fset, value.fdel) if f is not None]
                parts.append(attr + "=" + "".join(_function(f, name) for f in funcs))
            elif inspect.isfunction(value):
                parts.append(attr + "=" + _function(value, name))
            elif _plain(value):
                parts.append(f"{attr}={value!r}")
            else:  # an object whose repr may hold its address: its type only
                parts.append(f"{attr}:{type(value).__module__}.{type(value).__qualname__}")
    return "\n".join(parts)


def classes(scenario: Scenario) -> tuple[type, ...]:
    """The users' classes ``scenario`` runs: window laws, recovery strategies
    and queue disciplines that are not ccsim's own."""
    from .. import algorithms, recovery

    found: dict[type, None] = {}
    for i, flow in enumerate(scenario.flows):
        found[algorithms.get(flow.algorithm)] = None
        found[recovery.get(scenario.flow_stack(i).recovery)] = None
    for link in scenario.links:
        found[type(link.queue)] = None
    return tuple(c for c in found if not all(_ours(k) for k in c.__mro__))


class Fingerprints:
    """Model fingerprints of a sweep's scenarios, with the users' classes'
    digests computed once per class (a grid repeats the same few)."""

    def __init__(self, runner: Callable[..., Any] | None = None) -> None:
        self.runner = runner
        self._runner = ""
        if runner is not None and not _ours(runner):
            self._runner = "\nrunner:" + _function(runner, "runner")
        self._by_classes: dict[tuple[str, tuple[type, ...]], str] = {}
        self._digests: dict[type, str] = {}

    def _digest(self, cls: type) -> str:
        found = self._digests.get(cls)
        if found is None:
            found = self._digests[cls] = hashlib.sha256(_class(cls).encode()).hexdigest()
        return found

    def of(self, scenario: Scenario, mode: str = "packet") -> str:
        """The model fingerprint (16 hex digits) of ``scenario``'s results in
        engine ``mode``."""
        used = classes(scenario)
        found = self._by_classes.get((mode, used))
        if found is None:
            without = "" if self.runner is not None else NOT_USED.get(mode, "")
            text = ("ccsim:" + ccsim_source(without) + self._runner
                    + "".join("\n" + self._digest(c) for c in used))
            found = self._by_classes[mode, used] = hashlib.sha256(text.encode()).hexdigest()[:16]
        return found
