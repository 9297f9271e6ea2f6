"""Rule tests for the Reno family's window law (Reno, NewReno, Tahoe) and the algorithm registry.

The three share Reno's window law; they differ only in loss recovery (tests/test_recovery.py).
Every expected value below comes from ``rfc5681_*``, a restatement of RFC 5681 §3.1 written
here independently of ccsim.algorithms.reno, or from arithmetic done by hand in the test.
"""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ccsim import algorithms, recovery
from ccsim.algorithms import Ack, CongestionControl, Loss, RttSample
from ccsim.errors import ScenarioTypeError, UnknownAlgorithmError

RENO_FAMILY = ["reno", "newreno", "tahoe"]
MSS = 1460


# -- RFC 5681 §3.1, restated (windows in segments, SMSS = 1) -----------------------------------
def rfc5681_on_ack(cwnd: float, ssthresh: float, acked: float) -> float:
    """cwnd after an ACK newly acknowledging ``acked`` segments.

    Slow start (cwnd < ssthresh): cwnd grows by the segments acknowledged, but only up to
    ssthresh; the segments left over once cwnd reaches ssthresh count in congestion
    avoidance. Congestion avoidance (cwnd >= ssthresh; RFC 5681 lets cwnd == ssthresh be
    either, ccsim picks avoidance): eq. (3), cwnd += SMSS*SMSS/cwnd per full-sized segment
    acknowledged, i.e. acked/cwnd segments.
    """
    slow_start_part = max(0.0, min(acked, ssthresh - cwnd))
    avoidance_part = acked - slow_start_part
    cwnd = cwnd + slow_start_part
    if avoidance_part > 0:
        cwnd = cwnd + avoidance_part / cwnd
    return cwnd


def rfc5681_ssthresh_after_loss(flight_size: float) -> float:
    """Eq. (4): ssthresh = max(FlightSize / 2, 2*SMSS)."""
    return max(flight_size / 2, 2)


LOSS_WINDOW = 1  # RFC 5681 §3.1: after a retransmission timeout cwnd = LW = 1 full-sized segment.


# -- helpers -----------------------------------------------------------------------------------
def make(name: str, cwnd: float = 10, ssthresh: float = math.inf) -> CongestionControl:
    cc = algorithms.get(name)()
    cc.start(10, MSS)
    cc.cwnd, cc.ssthresh = float(cwnd), float(ssthresh)
    return cc


def ack(acked: float, now: float = 1.0, inflight: float = 10.0) -> Ack:
    return Ack(now=now, acked=acked, rtt=0.05, min_rtt=0.04, srtt=0.05, inflight=inflight,
               delivered=100.0, delivery_rate=1e7)


def loss(kind: str, inflight: float, now: float = 1.0) -> Loss:
    return Loss(now=now, kind=kind, inflight=inflight, min_rtt=0.04, srtt=0.05)


family = pytest.mark.parametrize("name", RENO_FAMILY)


# -- hand-computed steps -----------------------------------------------------------------------
@family
def test_start_resets_to_initial_window(name):
    cc = algorithms.get(name)()
    cc.start(4, 1000)
    assert (cc.cwnd, cc.ssthresh, cc.mss) == (4.0, math.inf, 1000)
    assert cc.in_slow_start


@family
def test_slow_start_one_segment(name):
    cc = make(name, cwnd=10, ssthresh=math.inf)
    cc.on_ack(ack(1))
    assert cc.cwnd == 11  # 10 + 1


@family
def test_slow_start_adds_every_acked_segment(name):
    cc = make(name, cwnd=10, ssthresh=math.inf)
    cc.on_ack(ack(3))
    assert cc.cwnd == 13  # 10 + 3


@family
def test_at_ssthresh_is_congestion_avoidance(name):
    cc = make(name, cwnd=20, ssthresh=20)
    assert not cc.in_slow_start
    cc.on_ack(ack(1))
    assert cc.cwnd == 20 + 1 / 20


@family
def test_ack_crossing_ssthresh_splits(name):
    # cwnd 18, ssthresh 20, 4 segments ACKed: 2 in slow start (to 20), 2 in avoidance: 20 + 2/20.
    cc = make(name, cwnd=18, ssthresh=20)
    cc.on_ack(ack(4))
    assert cc.cwnd == 20 + 2 / 20


@family
def test_slow_start_stops_at_ssthresh(name):
    cc = make(name, cwnd=18, ssthresh=20)
    cc.on_ack(ack(2))
    assert cc.cwnd == 20  # exactly reaches ssthresh, nothing left for avoidance


@family
@pytest.mark.parametrize("w", [2, 10, 20, 100, 1000])
def test_one_rtt_of_acks_in_congestion_avoidance_adds_about_one(name, w):
    # W ACKs of one segment, each adding 1/cwnd with cwnd in [W, W + 1]: the total growth g
    # satisfies W/(W+1) <= g <= 1, so 1 - 1/W < g <= 1 (and g < 1, since cwnd > W after
    # the first ACK).
    cc = make(name, cwnd=w, ssthresh=w)
    for _ in range(w):
        cc.on_ack(ack(1))
    growth = cc.cwnd - w
    assert 1 - 1 / w < growth < 1


@family
def test_slow_start_doubles_per_rtt(name):
    # A window of W segments, each ACKed: W more segments (RFC 5681 §3.1 slow start).
    cc = make(name, cwnd=10, ssthresh=math.inf)
    for _ in range(10):
        cc.on_ack(ack(1))
    assert cc.cwnd == 20


@family
@pytest.mark.parametrize("inflight, ssthresh", [(30, 15), (3, 2), (4, 2), (5, 2.5), (1, 2),
                                               (100, 50)])
def test_ssthresh_after_fast_loss(name, inflight, ssthresh):
    cc = make(name, cwnd=40, ssthresh=math.inf)
    assert ssthresh == rfc5681_ssthresh_after_loss(inflight)
    cc.on_loss(loss("fast", inflight))
    assert cc.ssthresh == ssthresh
    # On a fast retransmit the window itself is the recovery strategy's business.
    assert cc.cwnd == 40


@family
@pytest.mark.parametrize("inflight", [30, 3, 1])
def test_timeout_sets_loss_window(name, inflight):
    cc = make(name, cwnd=40, ssthresh=100)
    cc.on_loss(loss("timeout", inflight))
    assert cc.cwnd == LOSS_WINDOW
    assert cc.ssthresh == rfc5681_ssthresh_after_loss(inflight)
    # ...and slow start follows.
    assert cc.in_slow_start


@family
def test_ssthresh_after_is_pure(name):
    cc = make(name, cwnd=40, ssthresh=64)
    assert cc.ssthresh_after(loss("fast", 30)) == 15
    assert cc.ssthresh_after(loss("timeout", 30)) == 15
    assert (cc.cwnd, cc.ssthresh) == (40, 64)


@family
def test_rtt_samples_do_not_move_the_window(name):
    # RFC 5681's law is driven by ACKs and losses only; delay plays no part.
    cc = make(name, cwnd=12, ssthresh=30)
    cc.on_rtt(RttSample(now=1.0, rtt=0.5, min_rtt=0.04, srtt=0.3, inflight=12))
    assert (cc.cwnd, cc.ssthresh) == (12, 30)


@family
def test_takes_no_parameters_but_the_2011_step(name):
    # RFC 5681's law has no tunables; the one keyword is Linux 2.6.3x-3.x's step on the
    # ACK after tcp_cong_avoid_ai's counter reached cwnd (extra_ack, off: mainline's)
    cls = algorithms.get(name)
    assert cls().params() == {"extra_ack": False}
    with pytest.raises(TypeError):
        cls(beta=0.5)


# -- property: step by step against the restatement ---------------------------------------------
events = st.lists(
    st.one_of(
        st.tuples(st.just("ack"), st.one_of(st.integers(1, 10).map(float),
                                            st.floats(0.01, 10.0))),
        st.tuples(st.sampled_from(["fast", "timeout"]), st.floats(0.0, 500.0)),
    ),
    min_size=1, max_size=200,
)


# Tolerance: the restatement splits an ACK into its slow-start and avoidance parts with its
# own arithmetic (min/max, subtraction in another order), which may round differently from
# the implementation by an ulp or so at a step where an ACK crosses ssthresh; over at most
# 200 steps that drift stays many orders of magnitude under 1e-12 relative, while any wrong
# rule (a missed split, 1/cwnd instead of acked/cwnd, a wrong halving) is off by > 1e-4.
@pytest.mark.slow
@family
@settings(max_examples=150, deadline=None)
@given(cwnd=st.floats(1.0, 200.0), ssthresh=st.one_of(st.just(math.inf), st.floats(2.0, 300.0)),
       seq=events)
def test_matches_rfc5681_step_by_step(name, cwnd, ssthresh, seq):
    cc = make(name, cwnd=cwnd, ssthresh=ssthresh)
    ref_cwnd, ref_ssthresh = cwnd, ssthresh
    for step, (kind, amount) in enumerate(seq):
        if kind == "ack":
            cc.on_ack(ack(amount, now=step))
            ref_cwnd = rfc5681_on_ack(ref_cwnd, ref_ssthresh, amount)
        else:
            cc.on_loss(loss(kind, amount, now=step))
            ref_ssthresh = rfc5681_ssthresh_after_loss(amount)
            if kind == "timeout":
                ref_cwnd = LOSS_WINDOW
        assert math.isclose(cc.cwnd, ref_cwnd, rel_tol=1e-12), (step, kind, amount)
        assert cc.ssthresh == ref_ssthresh, (step, kind, amount)


# -- registry ----------------------------------------------------------------------------------
def test_names_include_reno_family():
    names = algorithms.names()
    assert set(RENO_FAMILY) <= set(names)
    assert names == sorted(names)


@family
def test_get_returns_class_with_that_name(name):
    cls = algorithms.get(name)
    assert issubclass(cls, CongestionControl) and cls.name == name


def test_get_unknown_suggests():
    with pytest.raises(UnknownAlgorithmError) as info:
        algorithms.get("renoo")
    assert info.value.suggestion == "reno"
    assert info.value.value == "renoo"
    assert "reno" in info.value.known


def test_register_user_class(scratch_registry):
    class MyReno(algorithms.get("reno")):
        name = "myreno"

    assert algorithms.register(MyReno) is MyReno
    assert algorithms.get("myreno") is MyReno
    assert "myreno" in algorithms.names()


@pytest.mark.parametrize("thing", [object, int, "reno", algorithms.get("reno")(), None],
                         ids=["object", "int", "string", "instance", "none"])
def test_register_rejects_non_subclass(scratch_registry, thing):
    before = algorithms.names()
    with pytest.raises(ScenarioTypeError):
        algorithms.register(thing)
    assert algorithms.names() == before


@pytest.mark.parametrize("bad", ["", "My Reno", "MyReno", " reno"])
def test_register_rejects_bad_name(scratch_registry, bad):
    cls = type("Bad", (CongestionControl,), {"name": bad})
    with pytest.raises(ScenarioTypeError):
        algorithms.register(cls)


# Each algorithm's default recovery, from the sources its file cites: Reno — RFC 5681 §3.2;
# NewReno — RFC 6582; Tahoe — Jacobson 1988 (no fast recovery).
DEFAULT_RECOVERY = {"reno": "reno", "newreno": "newreno", "tahoe": "tahoe"}


@family
def test_default_recovery_is_registered(name):
    cls = algorithms.get(name)
    assert cls.recovery == DEFAULT_RECOVERY[name]
    assert recovery.get(cls.recovery).name == cls.recovery


@pytest.mark.parametrize("name", algorithms.names())
def test_every_registered_recovery_name_resolves(name):
    assert algorithms.get(name).recovery in recovery.names()
