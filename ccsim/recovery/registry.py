"""The recovery registry: names → strategy classes."""

from __future__ import annotations

from ..errors import ScenarioTypeError, UnknownAlgorithmError
from .base import Recovery

_REGISTRY: dict[str, type[Recovery]] = {}


def register(cls: type[Recovery]) -> type[Recovery]:
    """Register a :class:`Recovery` subclass under ``cls.name`` (a decorator)."""
    if not (isinstance(cls, type) and issubclass(cls, Recovery)) or not cls.name:
        raise ScenarioTypeError("recovery", cls,
                                "a subclass of ccsim.recovery.Recovery with a name")
    _REGISTRY[cls.name] = cls
    return cls


def names() -> list[str]:
    """Registered recovery strategy names, sorted."""
    return sorted(_REGISTRY)


def get(name: str) -> type[Recovery]:
    """The strategy class registered as ``name``."""
    try:
        return _REGISTRY[name]
    except (KeyError, TypeError):
        raise UnknownAlgorithmError("recovery", name, names()) from None
