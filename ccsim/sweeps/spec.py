"""A sweep described in a TOML file, for ``ccsim sweep FILE``.

The file holds the base scenario at its top level, either as
:meth:`ccsim.Scenario.to_toml` writes it (it has ``[[links]]``) or as
keywords of :func:`ccsim.dumbbell`; a ``[grid]`` table (keyword → list of
values, as :func:`ccsim.sweep` takes it); and an optional ``[sweep]`` table
with ``seeds``, ``mode``, ``timeout`` and ``validate``::

    bandwidth = "10Mbps"
    rtt = "20ms"
    flows = ["reno", "cubic"]
    duration = "5s"

    [grid]
    buffer = ["0.5BDP", "2BDP"]
    loss = [0, 0.01]

    [sweep]
    seeds = [1, 2, 3]

Parsed with :mod:`tomllib`: data only, nothing evaluated.
"""

from __future__ import annotations

import dataclasses
import difflib
import inspect
import os
import tomllib
from typing import Any

from ..errors import CcsimError, ScenarioError, ScenarioTypeError
from ..scenario import Scenario, dumbbell

OPTIONS = ("seeds", "mode", "timeout", "validate")


def read_spec(path: str | os.PathLike[str]) -> dict[str, Any]:
    """``{"base": Scenario, "grid": dict, "seeds": list | None, "mode": str,
    "timeout": float | None, "validate": float | None}`` from the TOML file at
    ``path``."""
    path = os.fspath(path)
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except OSError as exc:
        raise ScenarioError("sweep file", path, "a readable TOML file",
                            exc.strerror or str(exc)) from None
    except tomllib.TOMLDecodeError as exc:
        raise ScenarioError("sweep file", path, "valid TOML", str(exc)) from None
    except UnicodeDecodeError as exc:
        raise ScenarioError("sweep file", path, "valid TOML",
                            f"byte {exc.start} is not UTF-8 text") from None
    except RecursionError:
        raise ScenarioError("sweep file", path, "valid TOML", "nested too deeply") from None
    grid = data.pop("grid", {})
    if not isinstance(grid, dict):
        raise ScenarioTypeError("grid", grid, "a [grid] table of keyword = [values]")
    options = data.pop("sweep", {})
    if not isinstance(options, dict):
        raise ScenarioTypeError("sweep", options, "a [sweep] table with " + ", ".join(OPTIONS))
    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        raise ScenarioTypeError(f"sweep.{unknown[0]}", options[unknown[0]],
                                "a [sweep] option: " + ", ".join(OPTIONS))
    if not data:
        raise ScenarioError("sweep file", path, "a base scenario at the top level",
                            "dumbbell keywords such as bandwidth = '10Mbps', or "
                            "Scenario.to_toml()'s output")
    if "links" not in data:  # dumbbell keywords: name a misspelt one before a missing one
        own = [name for name, p in inspect.signature(dumbbell).parameters.items()
               if p.kind is not p.VAR_KEYWORD]
        allowed = own + [f.name for f in dataclasses.fields(Scenario)
                         if f.name not in ("links", "topology", "bottleneck")]
        for name in data:
            if name not in allowed:
                close = difflib.get_close_matches(str(name), allowed, n=1)
                raise ScenarioTypeError(name, data[name], "a keyword of ccsim.dumbbell ("
                                        + ", ".join(dict.fromkeys(allowed)) + ")",
                                        f"did you mean {close[0]!r}?" if close else None)
    try:
        base = Scenario.from_dict(data) if "links" in data else dumbbell(**data)
    except TypeError as exc:  # a keyword dumbbell() does not take
        if isinstance(exc, CcsimError):
            raise
        raise ScenarioTypeError("sweep file", sorted(data), "keywords of ccsim.dumbbell",
                                str(exc)) from None
    return {"base": base, "grid": grid, "seeds": options.get("seeds"),
            "mode": options.get("mode", "packet"), "timeout": options.get("timeout"),
            "validate": options.get("validate")}
