"""The registries' scratch block: what a test or a notebook registers inside
it is gone after it, and what was there before is back."""

import pytest

import ccsim
from ccsim.algorithms import CongestionControl
from ccsim.algorithms.reno import Reno
from ccsim.algorithms import registry as algorithm_registry
from ccsim.recovery import registry as recovery_registry


def test_a_scratch_block_forgets_its_classes_and_restores_a_replaced_builtin():
    class Trial(CongestionControl):
        name = "trial"

    class NotReno(Reno):
        name = "reno"

    before = ccsim.algorithms.names()
    with algorithm_registry.REGISTRY.scratch():
        ccsim.algorithms.register(Trial)
        ccsim.algorithms.register(NotReno, replace=True)
        assert ccsim.algorithms.get("trial") is Trial
        assert ccsim.algorithms.get("reno") is NotReno
    assert ccsim.algorithms.names() == before
    assert ccsim.algorithms.get("reno") is Reno
    with pytest.raises(ccsim.UnknownAlgorithmError, match="trial"):
        ccsim.algorithms.get("trial")


def test_a_scratch_block_restores_after_an_error_too():
    class Stray(ccsim.recovery.Recovery):
        name = "stray"

    before = ccsim.recovery.names()
    with pytest.raises(RuntimeError, match="cell failed"):
        with recovery_registry.REGISTRY.scratch():
            ccsim.recovery.register(Stray)
            raise RuntimeError("cell failed")
    assert ccsim.recovery.names() == before
