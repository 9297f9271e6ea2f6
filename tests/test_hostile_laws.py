"""The engine survives any window law: what a hook leaves is checked, and a
window far beyond the path costs no more than the path allows.

Every run here is under a wall-clock alarm, so a regression that hangs the
engine fails the test instead of stalling the suite.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ccsim
from ccsim.algorithms import CongestionControl, register
from ccsim.algorithms.reno import Reno
from ccsim.errors import AlgorithmStateError, ScenarioError, law_failure
from wall import wall_limit

WALL_LIMIT = 20  # s; each run below takes well under a second when the engine is sound


def _law(name: str, **overrides):
    """A Reno whose hooks then apply ``overrides``: hook name -> (attribute, value)."""
    def make(hook):
        def method(self, event):
            getattr(Reno, hook)(self, event)
            attr, value = overrides[hook]
            setattr(self, attr, value)
        return method
    body = {"name": name, "properties": ()}
    for hook in overrides:
        if hook == "start":
            def start(self, initial_window, mss, _o=overrides["start"]):
                Reno.start(self, initial_window, mss)
                setattr(self, *_o)
            body["start"] = start
        else:
            body[hook] = make(hook)
    cls = type(f"Hostile_{name.replace('-', '_')}", (Reno,), body)
    return register(cls)


def _run(algorithm, **knobs):
    sc = ccsim.dumbbell("10Mbps", "20ms", flows=[algorithm], duration="3s", **knobs)
    with wall_limit(WALL_LIMIT):
        return ccsim.run(sc)


CASES = {
    "hostile-inf-cwnd": ("on_ack", ("cwnd", math.inf), "cwnd"),
    "hostile-nan-cwnd": ("on_ack", ("cwnd", math.nan), "cwnd"),
    "hostile-zero-cwnd": ("on_loss", ("cwnd", 0.0), "cwnd"),
    "hostile-tiny-start": ("start", ("cwnd", 0.001), "cwnd"),
    "hostile-nan-ssthresh": ("on_loss", ("ssthresh", math.nan), "ssthresh"),
    "hostile-negative-ssthresh": ("on_ack", ("ssthresh", -3.0), "ssthresh"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_window_law_that_leaves_an_unusable_value_gets_a_clear_error(name, scratch_registry):
    hook, override, variable = CASES[name]
    _law(name, **{hook: override})
    with pytest.raises(AlgorithmStateError) as err:
        _run(name)
    e = err.value
    assert (e.algorithm, e.hook, e.variable) == (name, hook, variable)
    message = str(e)
    assert name in message and f"{hook}()" in message and variable in message
    assert e.time >= 0.0


def test_a_negative_pacing_rate_is_refused_before_the_clock_runs_backwards(scratch_registry):
    _law("hostile-negative-pacing", on_ack=("pacing_rate", -1e6))
    with pytest.raises(AlgorithmStateError, match="pacing_rate=-1000000.0") as err:
        _run("hostile-negative-pacing")
    assert err.value.variable == "pacing_rate"


def test_a_huge_finite_window_is_sent_as_the_path_allows(scratch_registry):
    """A law asking for 1e12 segments: without a bound the sender would try to
    put them all in flight from one ACK (a hang, then gigabytes)."""
    _law("hostile-huge-window", on_ack=("cwnd", 1e12))
    res = _run("hostile-huge-window")
    assert res.metrics["utilisation"] <= 1.0
    assert res.summary["goodput_bps"].iloc[0] <= 10e6
    # 3 s at 10 Mbit/s is 2,500 packets of 1,500 bytes; the excess above the
    # path's capacity can only be drops, bounded by the cap of 10 x (BDP + buffer)
    # once at the start and once after each loss event (a recovery or a timeout),
    # when the law sets its huge window again.
    sc = ccsim.dumbbell("10Mbps", "20ms", flows=["reno"], duration="3s")
    cap = 10 * (sc.bdp_packets(0) + sc.links[0].queue.packets(sc.packet_size))
    row = res.summary.iloc[0]
    assert res.metrics["data_packets"] <= 2600 + (1 + row.recoveries + row.timeouts) * cap


def test_an_initial_window_of_a_billion_segments_does_not_hang():
    res = _run("reno", initial_window=1e9)
    assert 0.0 < res.metrics["utilisation"] <= 1.0


def test_an_initial_window_under_one_segment_is_refused_by_the_scenario():
    with pytest.raises(ScenarioError, match="initial_window"):
        ccsim.dumbbell("10Mbps", "20ms", flows=["reno"], initial_window=0.001)


def test_checks_do_not_blame_a_law_for_what_it_did_not_change():
    """PRR may hold cwnd below one segment in recovery; a law that reads ACKs
    in recovery (acks_in_recovery) and leaves cwnd alone is not at fault."""
    res = _run("bbr", loss=0.02)
    assert res.summary["goodput_bps"].iloc[0] > 0


HOSTILE_VALUES = st.sampled_from([math.nan, math.inf, -math.inf, 0.0, -1.0, 0.5, 1e-300,
                                  1.0, 2.0, 1e6, 1e15])


def _usable(attr: str, value: float) -> bool:
    """What a sender can work with: a window of at least one segment, a
    positive threshold, a finite pacing rate of at least one 1500-byte packet
    per max_rto (60 s by default: 200 bit/s; 0 or None: unpaced)."""
    if attr == "cwnd":
        return 1.0 <= value < math.inf
    if attr == "ssthresh":
        return value > 0.0
    return value == 0.0 or 1500 * 8 / 60.0 <= value < math.inf


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                  HealthCheck.function_scoped_fixture])
@given(hook=st.sampled_from(["on_ack", "on_loss", "on_rtt", "start"]),
       attr=st.sampled_from(["cwnd", "ssthresh", "pacing_rate"]),
       value=HOSTILE_VALUES, after=st.integers(0, 50))
def test_any_hostile_law_gets_a_clear_error_or_a_sane_result_never_a_hang(
        scratch_registry, hook, attr, value, after):
    """A law that, from its ``after``-th call of ``hook`` on, sets ``attr`` to
    ``value``: an unusable value is refused with AlgorithmStateError; a usable
    one finishes within the wall limit with physical numbers."""
    calls = {"n": 0, "first": None}

    def poison(self, now):
        calls["n"] += 1
        if calls["n"] > after:
            setattr(self, attr, value)
            if calls["first"] is None:
                calls["first"] = now

    class Hostile(Reno):
        name = "hostile-generated"
        properties = ()

        def start(self, initial_window, mss):
            super().start(initial_window, mss)
            if hook == "start":
                poison(self, 0.0)

        def on_ack(self, ack):
            super().on_ack(ack)
            if hook == "on_ack":
                poison(self, ack.now)

        def on_loss(self, loss):
            super().on_loss(loss)
            if hook == "on_loss":
                poison(self, loss.now)

        def on_rtt(self, sample):
            if hook == "on_rtt":
                poison(self, sample.now)

    register(Hostile)
    try:
        res = _run("hostile-generated", loss=0.01)
    except AlgorithmStateError as e:
        assert e.algorithm == "hostile-generated" and e.variable == attr
        assert not _usable(attr, value)
        return
    # Poison applied well before the end (3 s) must have been seen: a paced
    # segment or a changed window comes within a few RTTs of 20 ms.
    if calls["first"] is not None and calls["first"] < 2.0:
        assert _usable(attr, value), f"{attr}={value!r} from t={calls['first']} went unnoticed"
    assert 0.0 <= res.metrics["utilisation"] <= 1.0
    assert (res.summary["goodput_bps"] <= 10e6).all()
    assert not res.summary[["goodput_bps", "share"]].isna().any().any()


def test_the_base_class_declares_what_the_checks_rely_on():
    assert CongestionControl.pacing_rate is None


def _crashing_law(name: str, hook: str, after: float):
    """A Reno whose ``hook`` divides by zero once the event's time passes
    ``after`` (s), through a helper method (not the hook itself)."""
    def method(self, event):
        getattr(Reno, hook)(self, event)
        if event.now > after:
            self._helper()

    def _helper(self):
        return 1 / 0

    return register(type(f"Crashing_{hook}", (Reno,),
                         {"name": name, "properties": (), hook: method, "_helper": _helper}))


@pytest.mark.parametrize("mode", ["packet", "fluid"])
@pytest.mark.parametrize("hook", ["on_ack", "on_loss"])
def test_a_window_laws_own_exception_says_whose_where_and_when(scratch_registry, hook, mode):
    _crashing_law("crashy", hook, after=0.5)
    sc = ccsim.dumbbell("10Mbps", "20ms", buffer=10, flows=["reno", "crashy"], duration="5s")
    with wall_limit(WALL_LIMIT), pytest.raises(ccsim.errors.AlgorithmError) as err:
        ccsim.run(sc, mode=mode)
    e = err.value
    # the hook the engine called, not the helper that raised; the flow that
    # runs the law; a time from the simulation, after the law began to fail
    assert (e.algorithm, e.flow, e.hook) == ("crashy", "flow 1", hook)
    assert 0.5 < e.time <= 5.0
    assert isinstance(e.__cause__, ZeroDivisionError)
    assert "ZeroDivisionError" in str(e) and f"{hook}()" in str(e) and "flow 1" in str(e)


def test_an_exception_outside_every_law_is_not_blamed_on_one():
    # an engine bug (no law's frame in the traceback) surfaces as it is
    law = Reno()

    class Engine:
        def step(self):
            law.start(10, 1460)  # a law called before, and returned
            raise RuntimeError("engine bug")
    try:
        Engine().step()
    except RuntimeError as exc:
        assert law_failure(exc, {id(law): ("reno", "flow 0")}, 1.0) is None
        assert law_failure(exc, {}, 1.0) is None


def test_a_pacing_rate_too_slow_to_send_before_the_timer_is_refused(scratch_registry):
    # pacing_rate=1e-300 used to stall the flow silently: one packet per 1e304 s
    _law("hostile-crawling-pacing", on_ack=("pacing_rate", 1e-300))
    with pytest.raises(AlgorithmStateError, match=r"pacing_rate=1e-300.*at least 200 bit/s"):
        _run("hostile-crawling-pacing")
    # one packet per 60 s (max_rto) is the slowest that still paces
    _law("slow-but-alive-pacing", on_ack=("pacing_rate", 1500 * 8 / 60.0))
    _run("slow-but-alive-pacing")
