"""The algorithm registry: names → window-law classes.

``register`` is the only way in; built-in algorithms register themselves when
:mod:`ccsim.algorithms` is imported, users' classes when they call it.
"""

from __future__ import annotations

from .._registry import Registry
from .base import CongestionControl

REGISTRY: Registry[type[CongestionControl]] = Registry(CongestionControl, "algorithm")

register = REGISTRY.register
names = REGISTRY.names
get = REGISTRY.get
