"""Run one scenario, or a batch, in either engine."""

from __future__ import annotations

from typing import Any, Iterable

from .errors import ScenarioError, ScenarioTypeError
from .results import Result
from .scenario import Scenario

MODES = ("packet", "fluid")
"""The engines: the SimPy packet engine and the numpy fluid engine."""


def _check(scenario: object, field: str = "scenario") -> Scenario:
    if not isinstance(scenario, Scenario):
        raise ScenarioTypeError(field, scenario,
                                "a ccsim.Scenario (from ccsim.dumbbell or ccsim.path)")
    return scenario


def _check_mode(mode: str) -> None:
    if mode not in MODES:
        raise ScenarioError("mode", mode, "one of: " + ", ".join(repr(m) for m in MODES))


def run(scenario: Scenario, mode: str = "packet", *, progress: bool = False,
        events: bool = False, processes: Iterable[Any] = (), **options: Any) -> Result:
    """Simulate ``scenario`` and return its :class:`~ccsim.results.Result`.

    Args:
        scenario: built with :func:`ccsim.dumbbell`, :func:`ccsim.path` or
            :class:`ccsim.Scenario`.
        mode: ``"packet"`` (the SimPy packet engine) or ``"fluid"`` (the
            numpy fluid engine, :mod:`ccsim.fluid`).
        progress: show a progress bar (tqdm, on standard error; a widget in
            Jupyter) in simulated seconds, so that a long run is seen to move.
        events: record every segment event in ``Result.events`` (packet
            engine only; see :mod:`ccsim.packet.events`). Off, the table
            holds only losses and timeouts, and the run is as fast as ever.
        processes: SimPy processes of one's own (packet engine): functions
            ``fn(env, net)`` returning a generator, run with the engine's
            events; ``net`` (:class:`ccsim.packet.processes.Network`) reads
            and sets links and flows (``docs/links.md``).
        **options: the fluid engine's ``step``, ``min_step`` and ``traces``
            (see :class:`ccsim.fluid.FluidEngine`).

    Same scenario and seed, same result, bit for bit, with or without the bar.
    """
    return run_many([_check(scenario)], mode, progress=progress, events=events,
                    processes=processes, **options)[0]


def run_many(scenarios: Iterable[Scenario], mode: str = "packet", *, progress: bool = False,
             events: bool = False, processes: Iterable[Any] = (),
             **options: Any) -> list[Result]:
    """Simulate a batch of scenarios; their results, in the same order.

    The packet engine runs them one after another; the fluid engine
    integrates the whole batch as one array program. Each result is the one
    :func:`run` gives for its scenario alone, bit for bit (but for
    ``metrics["wall_time"]``, which the fluid engine shares out over its batch).
    ``progress`` shows a bar per packet run, one for a fluid batch;
    ``events`` records segment events (packet engine; see :func:`run`);
    ``processes`` are started afresh in each run (see :func:`run`).
    """
    batch = [_check(sc, f"scenarios[{i}]") for i, sc in enumerate(scenarios)]
    _check_mode(mode)
    if not isinstance(progress, bool):
        raise ScenarioTypeError("progress", progress, "True or False")
    if not isinstance(events, bool):
        raise ScenarioTypeError("events", events, "True or False")
    if callable(processes) or isinstance(processes, (str, bytes)) \
            or not isinstance(processes, Iterable):
        raise ScenarioTypeError("processes", processes, "a list of functions fn(env, net)")
    processes = list(processes)
    if mode == "fluid":
        if processes:
            raise ScenarioError("processes", processes, "none in the fluid engine",
                                "a process acts on packets, links and senders; "
                                "use mode='packet'")
        if events:
            raise ScenarioError("events", events, "False in the fluid engine",
                                "it has no segments to record; run mode='packet'")
        from .fluid import FluidEngine

        return FluidEngine(batch, **options).run(progress=progress) if batch else []
    if options:
        name = sorted(options)[0]
        raise ScenarioError(name, options[name], "an option of the fluid engine only",
                            "the packet engine takes none")
    from .packet import PacketEngine

    return [PacketEngine(sc, events=events, processes=processes).run(progress=progress)
            for sc in batch]
