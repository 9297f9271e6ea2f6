"""Algorithm keywords are checked when the Flow is built, and numpy numbers
are normalised at the boundary, so a sweep over np.linspace serialises."""

from __future__ import annotations

import inspect
import json

import numpy as np
import pytest

import ccsim
from ccsim import Flow, algorithms
from ccsim.errors import ScenarioError, ScenarioTypeError

WITH_RANGES = [n for n in algorithms.names() if algorithms.get(n).param_space]


def defaults(name):
    sig = inspect.signature(algorithms.get(name).__init__)
    return {k: p.default for k, p in sig.parameters.items()
            if p.kind is inspect.Parameter.KEYWORD_ONLY}


@pytest.mark.parametrize("name", algorithms.names())
def test_every_law_accepts_its_own_defaults_spelled_out(name):
    flow = Flow(name, params=defaults(name))
    assert dict(flow.params) == defaults(name)


@pytest.mark.parametrize("name", WITH_RANGES)
def test_a_value_outside_the_declared_range_is_refused_naming_the_keyword(name):
    cls = algorithms.get(name)
    key, (low, high) = next(iter(cls.param_space.items()))
    too_big = high * 2 + 1
    if isinstance(defaults(name)[key], int):
        too_big = int(too_big)
    with pytest.raises(ScenarioError) as err:
        Flow(name, params={key: too_big})
    assert err.value.field == f"flow.params.{key}"
    assert str(low) in str(err.value) and str(high) in str(err.value)


@pytest.mark.parametrize("name", [n for n in algorithms.names() if defaults(n)])
def test_a_value_of_the_wrong_type_is_refused_naming_the_keyword(name):
    key = sorted(defaults(name))[0]
    with pytest.raises(ScenarioTypeError) as err:
        Flow(name, params={key: "x"})
    assert err.value.field == f"flow.params.{key}"


def test_cubic_beta_five_is_refused_before_anything_runs():
    # Before, beta=5.0 ran and retransmitted 42 % of the packets; "x" failed mid-run.
    with pytest.raises(ScenarioError, match=r"flow\.params\.beta=5\.0: within \[0\.5, 0\.95\]"):
        Flow("cubic", params={"beta": 5.0})
    with pytest.raises(ScenarioTypeError, match=r"flow\.params\.beta='x': a number"):
        Flow("cubic", params={"beta": "x"})


def test_an_unknown_keyword_gets_the_list_and_a_suggestion():
    with pytest.raises(ScenarioTypeError, match="did you mean 'beta'") as err:
        Flow("cubic", params={"betta": 0.6})
    assert "fast_convergence" in str(err.value)


def test_bool_and_int_keywords_are_not_confused_with_numbers():
    with pytest.raises(ScenarioTypeError, match="True or False"):
        Flow("cubic", params={"hystart": 1})
    with pytest.raises(ScenarioTypeError, match="an integer"):
        Flow("illinois", params={"theta": 2.5})
    assert dict(Flow("cubic", params={"c": 1}).params)["c"] == 1.0  # an int is a fine float


# -- numpy numbers -------------------------------------------------------------------------
@pytest.mark.parametrize("np_type", [np.float64, np.float32, np.int64, np.int32])
def test_numpy_numbers_anywhere_serialise(np_type):
    sc = ccsim.dumbbell(np_type(10_000_000), np.float64(0.02), buffer=np.int64(50),
                        loss=np.float64(0.001), duration=np.int64(2), seed=np.int64(3),
                        mss=np.int64(1000), initial_window=np.int32(4),
                        flows=[Flow("cubic", start=np.float64(0.5), size=np.int64(10**6),
                                    rtt=np.float32(0.03), params={"c": np_type(1)}),
                               Flow("vegas", params={"alpha": np_type(2)})])
    for _, value in sc.flows[0].params + sc.flows[1].params:
        assert type(value) in (float, int, bool)
    json.loads(sc.to_json())
    assert ccsim.Scenario.from_toml(sc.to_toml()).key == sc.key
    res = ccsim.run(sc)
    json.loads(res.to_pandas().to_json())


def test_numpy_bool_keyword_becomes_a_python_bool():
    flow = Flow("cubic", params={"hystart": np.bool_(True)})
    assert dict(flow.params)["hystart"] is True
