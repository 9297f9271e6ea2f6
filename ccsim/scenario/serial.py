"""A scenario as data: the plain dict that JSON and TOML carry, and its key.

The dict is in base units with ``schema`` naming its layout; optional fields
added after the first stored sweeps are written only when they differ from
their default, so that a scenario that does not use them keeps the key it had
(:func:`key`, the SHA-256 of the sorted dict, is what sweep stores file
results under). :func:`from_dict` is the inverse, and refuses unknown keys by
name with the closest known one.
"""

from __future__ import annotations

import dataclasses
import difflib
import hashlib
import json
from typing import TYPE_CHECKING, Any, Mapping

from .. import algorithms
from ..errors import ScenarioError, ScenarioTypeError
from .flows import Flow
from .links import QUEUES, Link
from .stacks import STACK_KNOBS

if TYPE_CHECKING:
    from .core import Scenario

SCHEMA = 1
"""Version of the dict layout written by :meth:`Scenario.to_dict`."""


def to_dict(sc: "Scenario") -> dict[str, Any]:
    """See :meth:`Scenario.to_dict`."""
    # a schedule stands in the rate's place, jitter only when set: keys of
    # scenarios with fixed-rate links stay
    links = [{"rate": l.schedule.to_dict() if l.schedule is not None else l.rate,
              "delay": l.delay, "loss": l.loss, "queue": l.queue.to_dict(),
              **({"jitter": l.jitter} if l.jitter else {})}
             for l in sc.links]
    flows = [{**{f.name: getattr(flow, f.name) for f in dataclasses.fields(flow)
                 if (f.name != "ecn" or flow.ecn != algorithms.get(flow.algorithm).ecn)
                 and (f.name != "route" or flow.route is not None)
                 and (f.name != "overhead" or flow.overhead)
                 and (f.name != "reverse" or flow.reverse)
                 and (f.name != "ack_counting" or flow.ack_counting is not None)
                 and (f.name != "access_rate" or flow.access_rate is not None)
                 and (f.name != "access_buffer" or flow.access_buffer is not None)
                 and (f.name != "access_jitter" or flow.access_jitter)
                 and (f.name != "source" or flow.source is not None)},
              **({"source": dict(flow.source)} if flow.source is not None else {}),
              # ecn only when not the law's default, route and overhead only
              # when given, reverse only when on: keys of scenarios from
              # before them stay
              "params": dict(flow.params)} for flow in sc.flows]
    # the stack only when not "linux", the stack's knobs and the jitters only
    # when given: a scenario that names none of them has one key, whatever
    # the stacks' tables say
    scalars = {f.name: getattr(sc, f.name) for f in dataclasses.fields(sc)
               if f.name not in ("links", "flows")
               and (f.name != "stack" or sc.stack != "linux")
               and (f.name not in STACK_KNOBS + ("start_jitter", "ack_jitter")
                    or getattr(sc, f.name) is not None)}
    return {"schema": SCHEMA, **scalars, "links": links, "flows": flows}


def from_dict(cls: "type[Scenario]", data: Mapping[str, Any]) -> "Scenario":
    """See :meth:`Scenario.from_dict`; ``cls`` builds the result."""
    if not isinstance(data, Mapping):
        raise ScenarioTypeError("scenario", data, "a dict as written by Scenario.to_dict()")
    data = dict(data)
    schema = data.pop("schema", SCHEMA)
    if schema != SCHEMA:
        raise ScenarioError("schema", schema, f"{SCHEMA}, the layout this version of ccsim "
                                              "writes and reads (Scenario.to_dict())")
    required(data, ("links", "flows", "duration"), "scenario")
    known_keys(data, [f.name for f in dataclasses.fields(cls)], "scenario",
               "builder keywords such as 'bandwidth' are not stored: build with "
               "ccsim.dumbbell(...) or change one with Scenario.replace(...)")
    try:
        links = []
        for i, spec in enumerate(data.pop("links")):
            if not isinstance(spec, Mapping):
                raise ScenarioTypeError(f"links[{i}]", spec, "a dict with rate, delay, and "
                                        "optionally queue and loss")
            spec = dict(spec)
            known_keys(spec, ["rate", "delay", "queue", "loss", "jitter"], f"links[{i}]")
            required(spec, ("rate", "delay"), f"links[{i}]")
            queue = dict(spec.pop("queue", {"kind": "droptail", "limit": 1000}))
            kind = queue.pop("kind", "droptail")
            if kind not in QUEUES.names():
                raise ScenarioError("links.queue.kind", kind,
                                    ", ".join(repr(n) for n in QUEUES.names()))
            links.append(Link(queue=QUEUES.get(kind)(**queue), **spec))
        flows = []
        for i, spec in enumerate(data.pop("flows")):
            if not isinstance(spec, Mapping):
                raise ScenarioTypeError(f"flows[{i}]", spec, "a dict of Flow fields with at "
                                        "least 'algorithm'")
            known_keys(spec, [f.name for f in dataclasses.fields(Flow)], f"flows[{i}]")
            required(spec, ("algorithm",), f"flows[{i}]")
            flows.append(Flow(**spec))
        return cls(links=tuple(links), flows=tuple(flows), **data)
    except TypeError as exc:
        if isinstance(exc, ScenarioTypeError):
            raise
        raise ScenarioTypeError("scenario", type(data).__name__, "a dict as written by "
                                "Scenario.to_dict()", str(exc)) from None


def without_none(x: Any) -> Any:
    """``x`` (dicts and lists, nested) without its ``None`` values: TOML has
    no null, and a missing key reads back as the default."""
    if isinstance(x, dict):
        return {k: without_none(v) for k, v in x.items() if v is not None}
    if isinstance(x, list):
        return [without_none(v) for v in x]
    return x


def key(sc: "Scenario") -> str:
    """See :attr:`Scenario.key`."""
    text = json.dumps(sc.to_dict(), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def required(data: Mapping[str, Any], names: tuple[str, ...], where: str) -> None:
    """Refuse ``data`` without one of ``names``, naming the first missing."""
    missing = [name for name in names if name not in data]
    if missing:
        raise ScenarioTypeError(f"{where}.{missing[0]}", "missing",
                                f"{where} needs " + ", ".join(repr(n) for n in names))


def parse_error(kind: str, exc: Exception, source: str = "text") -> ScenarioError:
    """A :class:`~ccsim.ScenarioError` for JSON or TOML that does not parse:
    where (line and column, when the parser says) and what."""
    line = getattr(exc, "lineno", None)
    where = f"line {line}, column {getattr(exc, 'colno', '?')}: " if line else ""
    message = getattr(exc, "msg", None) or str(exc)
    if isinstance(exc, UnicodeDecodeError):
        where, message = f"byte {exc.start}: ", "not UTF-8 text"
    elif isinstance(exc, RecursionError):
        message = "nested too deeply"
    return ScenarioError(source, f"{kind} text", f"a scenario as {kind}, as Scenario.to_"
                         f"{kind.lower()}() writes it", where + message)


def known_keys(data: Mapping[str, Any], known: list[str], where: str,
               hint: str | None = None) -> None:
    """Refuse a key of ``data`` that is not in ``known``: the closest known
    key as the hint, else ``hint``."""
    for name in data:
        if name not in known:
            close = difflib.get_close_matches(str(name), known, n=1)
            raise ScenarioTypeError(f"{where}.{name}", data[name],
                                    f"{where} keys: " + ", ".join(known),
                                    f"did you mean {close[0]!r}?" if close else hint)
