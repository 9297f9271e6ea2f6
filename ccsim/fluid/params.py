"""Window-law parameters over a group of flows, for the fluid engine.

Flows of one algorithm share one fluid-law instance whatever their parameter
values (a sweep over CUBIC's ``beta`` is one group, not one per value). The
law reads its constants from ``self.cc``; for a group whose flows differ in
some parameters, ``self.cc`` is a :class:`ParamView`: a parameter the flows
agree on reads as the window law's own value, one they differ in as a numpy
array over the group's flows (over the flows of the mask ``m`` during
:meth:`~ccsim.algorithms.fluid.FluidLaw.start` and
:meth:`~ccsim.algorithms.fluid.FluidLaw.on_loss`, which work on ``f.x[m]``).

Every value is computed by the window law's own code for each distinct
parameter set (a property such as CUBIC's ``alpha_cubic`` included) and only
then spread over the flows, so a flow sees bit for bit the numbers it sees
alone. Methods run with the view as ``self`` (elementwise arithmetic on the
arrays). A parameter the law needs as one value (Python control flow,
indices, tables built from it) is listed in the law's
:attr:`~ccsim.algorithms.fluid.FluidLaw.scalar_params`; flows differing in
it, or in a parameter that is not a number (a flag, a rule's name), get
separate law instances.
"""

from __future__ import annotations

import inspect
import types
from numbers import Real
from typing import Any, Sequence

import numpy as np

__all__ = ["ParamView", "split_names"]


def _numeric(v: Any) -> bool:
    return isinstance(v, Real) and not isinstance(v, (bool, np.bool_))


def split_names(instances: Sequence[Any], scalar_params: Sequence[str]) -> list[str]:
    """Parameters (instance attributes) that must be equal within a group:
    those that differ among ``instances`` and are not plain numbers, or are
    listed in ``scalar_params`` (``"*"``: every differing one)."""
    names: set[str] = set()
    for cc in instances:
        names.update(vars(cc))
    out = []
    for name in sorted(names):
        values = [vars(cc).get(name, _MISSING) for cc in instances]
        first = values[0]
        if all(_same(v, first) for v in values):
            continue
        if "*" in scalar_params or name in scalar_params or not all(map(_numeric, values)):
            out.append(name)
    return out


_MISSING = object()


def _same(a: Any, b: Any) -> bool:
    try:
        return type(a) is type(b) and bool(a == b)
    except Exception:  # an attribute whose == is not a truth value
        return a is b


class ParamView:
    """A window law's attributes for flows with differing parameter values.

    Args:
        instances: one window-law instance per distinct parameter set.
        index: for each flow of the group (in slice order), the position of
            its instance in ``instances``.
    """

    def __init__(self, instances: Sequence[Any], index: np.ndarray) -> None:
        self.__dict__["_instances"] = list(instances)
        self.__dict__["_index"] = np.asarray(index, dtype=np.int64)
        self.__dict__["_spread"] = set()  # names whose values are arrays over the flows

    def masked(self, m: np.ndarray) -> "ParamView":
        """The same parameters over the flows of the mask ``m`` only (values
        taken from this view's, computed once for the whole group)."""
        view = ParamView(self._instances, self._index[m])
        view.__dict__["_parent"] = (self, m)
        return view

    def __getattr__(self, name: str) -> Any:
        parent = self.__dict__.get("_parent")
        if parent is not None:  # the group's value, over the masked flows
            view, m = parent
            value = getattr(view, name)
            if isinstance(value, types.MethodType) and value.__self__ is view:
                value = types.MethodType(value.__func__, self)
            elif name in view._spread:
                value = value[m]
                self._spread.add(name)
            self.__dict__[name] = value
            return value
        first = self._instances[0]
        attr = inspect.getattr_static(type(first), name, None)
        if isinstance(attr, types.FunctionType):  # a method: runs on the arrays
            value: Any = types.MethodType(attr, self)
        elif isinstance(attr, (staticmethod, classmethod)):
            value = getattr(first, name)
        else:
            values = [getattr(cc, name) for cc in self._instances]
            if all(_same(v, values[0]) for v in values):
                value = values[0]
            elif all(map(_numeric, values)):
                value = np.array(values)[self._index]
                self._spread.add(name)
            else:
                raise AttributeError(
                    f"{type(first).__name__}.{name} differs among flows sharing a fluid law "
                    f"and is not a number ({values[0]!r}, ...): list it in the law's "
                    "scalar_params")
        self.__dict__[name] = value  # computed once
        return value

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"a fluid law's parameters are read-only (set {name!r})")
