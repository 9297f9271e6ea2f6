"""A name → class registry, shared by window laws and recovery strategies."""

from __future__ import annotations

import contextlib
from typing import Callable, Generic, Iterator, TypeVar

from .errors import ScenarioError, ScenarioTypeError, UnknownAlgorithmError

T = TypeVar("T", bound=type)


_DECORATE = object()  # ``@register(replace=True)``: no class yet, return a decorator


class Registry(Generic[T]):
    """Classes derived from ``base``, registered under their ``name``.

    ``field`` names the input that selects one (``"algorithm"``,
    ``"recovery"``), for error messages.
    """

    def __init__(self, base: T, field: str, check: "Callable[[T], None] | None" = None) -> None:
        self.base = base
        self.field = field
        self.check = check  # raises for a class its base's contract refuses
        self._classes: dict[str, T] = {}

    def register(self, cls: T = _DECORATE, *, replace: bool = False) -> T:  # type: ignore[assignment]
        """Register ``cls`` under ``cls.name``; usable as a class decorator
        (``@register`` or ``@register(replace=True)``).

        A class registered again under its own name replaces the earlier one
        (so a notebook cell can be re-run). A name that a built-in holds is
        refused unless ``replace=True``: silently swapping ``"cubic"`` for a
        user's class would change every scenario that names it.
        """
        if cls is _DECORATE:
            return lambda c: self.register(c, replace=replace)  # type: ignore[return-value]
        if not (isinstance(cls, type) and issubclass(cls, self.base)):
            raise ScenarioTypeError(self.field, cls,
                                    f"a subclass of {self.base.__module__}.{self.base.__name__}")
        name = cls.name
        if not isinstance(name, str) or not name or name != name.strip().lower():
            raise ScenarioTypeError(f"{cls.__name__}.name", name,
                                    "a non-empty lower-case string without spaces")
        if self.check is not None:
            self.check(cls)
        held = self._classes.get(name)
        if (held is not None and held is not cls and not replace
                and held.__module__.startswith("ccsim.")
                and not cls.__module__.startswith("ccsim.")):
            raise ScenarioError(f"{cls.__name__}.name", name,
                                f"a name that no built-in {self.field} holds",
                                "choose another name, or pass replace=True to "
                                "replace the built-in on purpose")
        self._classes[name] = cls
        return cls

    def names(self) -> list[str]:
        """Registered names, sorted."""
        return sorted(self._classes)

    def get(self, name: str) -> T:
        """The class registered as ``name``, in any case (``"Reno"`` is
        ``"reno"``); unknown names list the known ones."""
        try:
            return self._classes[name.lower() if isinstance(name, str) else name]
        except (KeyError, TypeError):
            raise UnknownAlgorithmError(self.field, name, self.names()) from None

    @contextlib.contextmanager
    def scratch(self) -> Iterator["Registry[T]"]:
        """A ``with`` block whose registrations do not outlive it: classes
        registered (or replaced) inside are forgotten when it ends, however
        it ends, and what was registered before is back. For tests, and for
        trying a class without leaving it behind::

            with ccsim.algorithms.registry.REGISTRY.scratch():
                ccsim.algorithms.register(MyLaw)
                ...
        """
        saved = dict(self._classes)
        try:
            yield self
        finally:
            self._classes.clear()
            self._classes.update(saved)

    def holds(self, cls: type) -> bool:
        """Whether ``cls`` itself is what its name is registered as."""
        return self._classes.get(getattr(cls, "name", None)) is cls
