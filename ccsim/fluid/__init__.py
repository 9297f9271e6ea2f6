"""The fluid engine: scenarios as differential equations, a batch at a time.

``ccsim.run(sc, mode="fluid")`` and ``ccsim.run_many(scenarios,
mode="fluid")`` come here. See :mod:`ccsim.fluid.engine` for the model and
``docs/fluid.md`` for its assumptions and its measured agreement with the
packet engine.
"""

from .engine import MAX_STEP, MIN_STEP, STEP, FluidEngine, FluidLawError

__all__ = ["FluidEngine", "FluidLawError", "STEP", "MIN_STEP", "MAX_STEP"]
