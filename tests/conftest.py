"""Shared test setup: hypothesis profiles, a headless matplotlib, and a
scratch algorithm registry.

Profiles: "ci" (the default) keeps the whole suite fast and draws the same
examples on every run; "thorough" runs many more, fresh each time, for local
bug hunting:

    CCSIM_HYPOTHESIS_PROFILE=thorough python -m pytest tests/test_testing_kit.py
"""

import os

import matplotlib
import pytest
from hypothesis import settings

from ccsim.algorithms import registry as algorithm_registry

matplotlib.use("Agg")

# CI draws the same examples every run (derandomize): a landing must not hang on
# luck; "thorough" explores afresh each time.
settings.register_profile("ci", max_examples=30, deadline=None, derandomize=True)
settings.register_profile("thorough", max_examples=2000, deadline=None)
settings.load_profile(os.environ.get("CCSIM_HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture
def scratch_registry():
    """Let a test register algorithms without leaving them behind for others."""
    with algorithm_registry.REGISTRY.scratch():
        yield


@pytest.fixture
def scratch_recovery_registry():
    """The same for loss-recovery strategies."""
    from ccsim.recovery import registry as recovery_registry

    with recovery_registry.REGISTRY.scratch():
        yield


@pytest.fixture(autouse=True)
def _close_figures():
    """ccsim's figures are pyplot's: close them after each test, as a script's
    plt.show() would, so that a suite of plots does not pile them up."""
    yield
    import matplotlib.pyplot as plt

    plt.close("all")
