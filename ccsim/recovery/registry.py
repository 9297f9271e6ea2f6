"""The recovery registry: names → strategy classes."""

from __future__ import annotations

from .._registry import Registry
from .base import Recovery

REGISTRY: Registry[type[Recovery]] = Registry(Recovery, "recovery")

register = REGISTRY.register
names = REGISTRY.names
get = REGISTRY.get
