"""The recovery registry: names → strategy classes."""

from __future__ import annotations

from .._registry import Registry
from ..errors import ScenarioTypeError
from .base import Recovery

def _check(cls: type[Recovery]) -> None:
    """A strategy's declared needs must hold together: a loss detector marks
    losses from SACK information, so ``detector`` needs ``uses_sack = True``."""
    if cls.detector is not None and not cls.uses_sack:
        raise ScenarioTypeError(f"{cls.__name__}.detector", cls.detector.__name__,
                                "None, or uses_sack = True as well: a loss detector marks "
                                "losses from SACK information")


REGISTRY: Registry[type[Recovery]] = Registry(Recovery, "recovery", _check)

register = REGISTRY.register
names = REGISTRY.names
get = REGISTRY.get
