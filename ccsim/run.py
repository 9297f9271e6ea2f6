"""Run one scenario in either engine."""

from __future__ import annotations

from .errors import ScenarioError, ScenarioTypeError
from .results import Result
from .scenario import Scenario

MODES = ("packet",)
"""Engines available; the fluid engine joins when it lands."""


def run(scenario: Scenario, mode: str = "packet") -> Result:
    """Simulate ``scenario`` and return its :class:`~ccsim.results.Result`.

    Args:
        scenario: built with :func:`ccsim.dumbbell`, :func:`ccsim.path` or
            :class:`ccsim.Scenario`.
        mode: ``"packet"`` (the SimPy packet engine).

    Same scenario and seed, same result, bit for bit.
    """
    if not isinstance(scenario, Scenario):
        raise ScenarioTypeError("scenario", scenario,
                                "a ccsim.Scenario (from ccsim.dumbbell or ccsim.path)")
    if mode not in MODES:
        raise ScenarioError("mode", mode, "one of: " + ", ".join(repr(m) for m in MODES),
                            "the fluid engine is not built yet" if mode == "fluid" else None)
    from .packet import PacketEngine

    return PacketEngine(scenario).run()
