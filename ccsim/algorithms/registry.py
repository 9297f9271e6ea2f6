"""The algorithm registry: names → classes.

``register`` is the only way in; built-in algorithms register themselves when
:mod:`ccsim.algorithms` is imported, users' classes when they call it.
"""

from __future__ import annotations

from ..errors import ScenarioTypeError, UnknownAlgorithmError
from .base import CongestionControl

_REGISTRY: dict[str, type[CongestionControl]] = {}


def register(cls: type[CongestionControl]) -> type[CongestionControl]:
    """Register a :class:`CongestionControl` subclass under ``cls.name``.

    Usable as a class decorator. Registering another class under a name that
    is taken replaces it (so a notebook cell can be re-run).
    """
    if not (isinstance(cls, type) and issubclass(cls, CongestionControl)):
        raise ScenarioTypeError("algorithm", cls,
                                "a subclass of ccsim.algorithms.CongestionControl")
    name = cls.name
    if not isinstance(name, str) or not name or name != name.strip().lower():
        raise ScenarioTypeError(f"{cls.__name__}.name", name,
                                "a non-empty lower-case string without spaces")
    _REGISTRY[name] = cls
    return cls


def names() -> list[str]:
    """Registered algorithm names, sorted."""
    return sorted(_REGISTRY)


def get(name: str) -> type[CongestionControl]:
    """The class registered as ``name``; unknown names list the known ones."""
    try:
        return _REGISTRY[name]
    except (KeyError, TypeError):
        raise UnknownAlgorithmError("algorithm", name, names()) from None
