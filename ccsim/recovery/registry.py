"""The recovery registry: names → strategy classes."""

from __future__ import annotations

from .._registry import Registry
from ..errors import ScenarioTypeError
from .base import Recovery

def _check(cls: type[Recovery]) -> None:
    """A strategy's declared needs must hold together: RACK marks losses from
    SACK information, so ``rack = True`` needs ``uses_sack = True``."""
    if cls.rack and not cls.uses_sack:
        raise ScenarioTypeError(f"{cls.__name__}.rack", cls.rack,
                                "False, or uses_sack = True as well: RACK marks losses "
                                "from SACK information")


REGISTRY: Registry[type[Recovery]] = Registry(Recovery, "recovery", _check)

register = REGISTRY.register
names = REGISTRY.names
get = REGISTRY.get
