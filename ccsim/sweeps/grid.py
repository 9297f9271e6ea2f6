"""A sweep's grid, expanded into scenarios before anything runs.

A grid maps keys to lists of values; the sweep runs every combination (the
product, in the grid's key order, the last key varying fastest), for every
seed. A key is one of:

* a keyword of :meth:`ccsim.Scenario.replace`: for a dumbbell that is every
  keyword of :func:`ccsim.dumbbell` (``bandwidth``, ``rtt``, ``buffer``,
  ``queue``, ``loss``, ``flows``, ``duration``, ``seed``, the stack knobs);
* ``"flows[i].FIELD"``: a field of flow ``i`` (``"flows[1].start"``,
  ``"flows[0].algorithm"``);
* a bare :class:`ccsim.Flow` field not named like a scenario keyword
  (``"algorithm"``, ``"recovery"``, ``"start"``, ``"params"``, ...): that
  field of every flow.

The sweep's size — bases × the grid's values × seeds — is worked out from
the lists' lengths before a single scenario is built; above
:data:`MAX_POINTS` (one million) the sweep is refused, with the count and
the keyword (``max_points=``) that allows it.
"""

from __future__ import annotations

import dataclasses
import difflib
import itertools
import re
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from ..errors import CcsimError, ScenarioError, ScenarioTypeError
from ..scenario import Flow, Scenario, as_flow

MAX_POINTS = 1_000_000
"""The most scenarios (bases × grid points × seeds) a sweep builds unless
given a larger ``max_points``: a million is hours of fluid runs and days of
packet runs, and its table tens of millions of rows."""

FLOW_FIELDS = tuple(f.name for f in dataclasses.fields(Flow))
_ONE_FLOW = re.compile(r"flows\[(\d+)\]\.(\w+)")


@dataclass(frozen=True)
class Point:
    """One scenario of a sweep: its position in the sweep's order, the
    scenario, and the grid values (and ``base``, the index of its base when
    the sweep was given several) that made it, as plain values."""

    position: int
    scenario: Scenario
    params: dict[str, Any]


def plain(value: Any) -> Any:
    """A grid value as the table shows it: numbers, strings, booleans and
    ``None`` as they are; a :class:`~ccsim.Flow` by its label; lists as
    tuples (hashable, so tables group by them); anything else as ``str``."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, Flow):
        return value.label
    if isinstance(value, Mapping):
        return tuple((str(k), plain(v)) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return tuple(plain(v) for v in value)
    return str(value)


def _scenario_keys(base: Scenario) -> list[str]:
    keys = [f.name for f in dataclasses.fields(base)]
    if base.topology == "dumbbell" and len(base.links) == 1:
        keys += list(Scenario.BUILDER)
    return keys


def _check_key(key: Any, bases: list[Scenario]) -> None:
    if not isinstance(key, str):
        raise ScenarioTypeError("grid", key, "keys that are strings")
    for base in bases:
        scenario_keys = _scenario_keys(base)
        if key in scenario_keys or key in FLOW_FIELDS:
            continue
        match = _ONE_FLOW.fullmatch(key)
        if match and match.group(2) in FLOW_FIELDS:
            if int(match.group(1)) < len(base.flows):
                continue
            raise ScenarioError("grid", key, f"a flow index in 0..{len(base.flows) - 1}")
        allowed = scenario_keys + list(FLOW_FIELDS) + ["flows[i].FIELD"]
        close = difflib.get_close_matches(key, allowed, n=1)
        raise ScenarioTypeError("grid", key, "a scenario keyword (" + ", ".join(allowed) + ")",
                                f"did you mean {close[0]!r}?" if close else None)


def apply(base: Scenario, changes: Mapping[str, Any]) -> Scenario:
    """``base`` with the grid values ``changes`` applied, validated."""
    scenario_keys = set(_scenario_keys(base))
    top = {k: v for k, v in changes.items() if k in scenario_keys}
    per_flow = {k: v for k, v in changes.items() if k not in scenario_keys}
    if not per_flow:
        return base.replace(**top)
    flows = top.pop("flows", base.flows)
    if isinstance(flows, (str, Flow)) or not isinstance(flows, Iterable):
        raise ScenarioTypeError("flows", flows, "a list of algorithm names or ccsim.Flow")
    flows = [as_flow(f, i) for i, f in enumerate(flows)]
    for key, value in per_flow.items():
        match = _ONE_FLOW.fullmatch(key)
        targets = [int(match.group(1))] if match else range(len(flows))
        name = match.group(2) if match else key
        for i in targets:
            if i >= len(flows):
                raise ScenarioError(key, value, f"a flow index in 0..{len(flows) - 1}")
            flows[i] = dataclasses.replace(flows[i], **{name: value})
    return base.replace(flows=flows, **top)


def _named(exc: CcsimError, field: str, value: Any) -> CcsimError:
    """``exc`` again, naming the grid key and value that caused it."""
    cls = ScenarioTypeError if isinstance(exc, TypeError) else ScenarioError
    return cls(field, value, str(exc))


def _length(options: Any) -> int | None:
    try:
        return len(options)
    except TypeError:  # a generator: only listing it tells
        return None


def _check_size(sizes: list[tuple[str, int]], max_points: int | None) -> None:
    count = 1
    for _, n in sizes:
        count *= n
    if max_points is not None and count > max_points:
        shown = " × ".join(f"{what}: {n:,}" for what, n in sizes)
        raise ScenarioError("grid", f"{shown} = {count:,} scenarios",
                            f"at most max_points={max_points:,} scenarios",
                            f"pass max_points={count} to sweep() to run them all on purpose, "
                            "or sweep fewer values")


def check_max_points(max_points: Any) -> None:
    if max_points is not None and (isinstance(max_points, bool)
                                   or not isinstance(max_points, int) or max_points < 1):
        raise ScenarioError("max_points", max_points,
                            "a whole number ≥ 1 of scenarios, or None for no limit")


def expand(base: Scenario | Iterable[Scenario], grid: Mapping[str, Iterable[Any]] | None,
           seeds: Iterable[int] | None, max_points: int | None = MAX_POINTS
           ) -> tuple[list[Point], list[str]]:
    """Every scenario of the sweep, in order, and the names of the parameter
    columns. Fails, before anything runs, on an unknown key or a value the
    scenario's builder rejects, naming the key and the value, and, before
    building any scenario, on more than ``max_points`` scenarios (bases ×
    grid points × seeds)."""
    check_max_points(max_points)
    if isinstance(base, Scenario):
        bases, several = [base], False
    else:
        bases = list(base) if isinstance(base, Iterable) and not isinstance(base, str) else None
        if not bases or not all(isinstance(b, Scenario) for b in bases):
            raise ScenarioTypeError("base", base, "a ccsim.Scenario or a non-empty list of them")
        several = True
    grid = {} if grid is None else grid
    if not isinstance(grid, Mapping):
        raise ScenarioTypeError("grid", grid, "a dict of keyword → list of values")
    sizes = [("bases", len(bases))] if several else []
    listed: dict[str, list[Any]] = {}  # generators, which only listing can count
    for key, options in grid.items():
        _check_key(key, bases)
        if isinstance(options, (str, bytes, Mapping)) or not isinstance(options, Iterable):
            raise ScenarioTypeError(f"grid[{key!r}]", options, "a list of values")
        n = _length(options)
        if n is None:
            listed[key] = list(options)
            n = len(listed[key])
        sizes.append((f"grid[{key!r}]", n))
    if seeds is not None:
        if "seed" in grid:
            raise ScenarioError("seeds", seeds, "None when the grid has a 'seed' key")
        if not isinstance(seeds, Iterable):
            seeds = [seeds]
        n = _length(seeds)
        if n is None:
            seeds = list(seeds)
            n = len(seeds)
        sizes.append(("seeds", n))
    # the size from the lists' lengths, before any list is copied or built on
    _check_size(sizes, max_points)
    values: dict[str, list[Any]] = {}
    for key, options in grid.items():
        values[key] = listed[key] if key in listed else list(options)
        if not values[key]:
            raise ScenarioError(f"grid[{key!r}]", options, "at least one value")
    if seeds is not None:
        seeds = list(seeds)
        if not seeds:
            raise ScenarioError("seeds", seeds, "at least one seed")
    # one key at a time first, so that an error names the value at fault
    for b in bases:
        for key, options in values.items():
            for value in options:
                try:
                    apply(b, {key: value})
                except CcsimError as exc:
                    raise _named(exc, f"grid[{key!r}]", value) from None
        for seed in seeds or ():
            try:
                b.replace(seed=seed)
            except CcsimError as exc:
                raise _named(exc, "seeds", seed) from None
    names = (["base"] if several else []) + list(values) + ["seed"] * ("seed" not in values)
    points = []
    for index, b in enumerate(bases):
        for combo in itertools.product(*values.values()):
            changes = dict(zip(values, combo))
            try:
                sc = apply(b, changes)
            except CcsimError as exc:
                raise _named(exc, "grid", changes) from None
            for seed in seeds if seeds is not None else [sc.seed]:
                params = ({"base": index} if several else {}) | {
                    k: plain(v) for k, v in changes.items()}
                if "seed" not in values:
                    sc = sc if sc.seed == seed else sc.replace(seed=seed)
                    params["seed"] = seed
                points.append(Point(len(points), sc, params))
    return points, names
