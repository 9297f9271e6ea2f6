"""Loss-recovery strategies, one module each, and their registry.

A strategy combines with any window law: ``Flow("cubic", recovery="newreno")``.
"""

import importlib as _importlib
import pkgutil as _pkgutil

from .base import LossDetector, Recovery, SenderView
from .registry import get, names, register

for _mod in sorted(m.name for m in _pkgutil.iter_modules(__path__)):
    if _mod not in ("base", "registry"):
        _importlib.import_module(f"{__name__}.{_mod}")

__all__ = ["LossDetector", "Recovery", "SenderView", "get", "names", "register"]
