"""Congestion-control algorithms: one module per algorithm, and the registry.

Every module in this package other than ``base``, ``contract``, ``fluid``
(the contracts) and ``registry`` defines one window law and registers it
(or helps one: ``hystart``, ``presets``); importing the package imports
them all, so a new algorithm is one new file.
"""

import importlib as _importlib
import pkgutil as _pkgutil

from . import contract
from .base import (NOT_SAMPLED, Ack, CongestionControl, EcnEcho, Loss, RecoveryState,
                   RttSample)
from .fluid import FlowArrays, FluidLaw
from .registry import get, names, register

for _mod in sorted(m.name for m in _pkgutil.iter_modules(__path__)):
    if _mod not in ("base", "contract", "fluid", "registry"):
        _importlib.import_module(f"{__name__}.{_mod}")

__all__ = ["Ack", "NOT_SAMPLED", "CongestionControl", "EcnEcho", "Loss", "RecoveryState",
           "RttSample", "FluidLaw",
           "FlowArrays", "contract", "get", "names", "register"]
