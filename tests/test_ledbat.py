"""LEDBAT++ (draft-irtf-iccrg-ledbat-plus-plus) and RFC 6817's LEDBAT: the
rules against a restatement of the sources, and the behaviour they claim."""

from __future__ import annotations


import pytest
from hypothesis import Phase, settings

import ccsim
from ccsim.algorithms import NOT_SAMPLED, Ack, Loss, RttSample
from ccsim.algorithms.ledbat import Ledbat
from ccsim.errors import ScenarioError, ScenarioTypeError
from ccsim.testing import check_algorithm

BASE = 0.040  # s


def feed(cc, now, rtt, acked=1.0, srtt=None):
    """One ACK carrying an RTT sample, as the sender delivers it."""
    srtt = rtt if srtt is None else srtt
    cc.on_rtt(RttSample(now, rtt, BASE, srtt, cc.cwnd))
    cc.on_ack(Ack(now, acked, rtt, BASE, srtt, cc.cwnd - acked, 0.0, NOT_SAMPLED))


def in_avoidance(cwnd=20.0, **params):
    """A LEDBAT++ flow whose initial slow start ended at ``cwnd`` by delay
    (four samples 50 ms above the base: more than 3/4 of the 60 ms target)."""
    cc = Ledbat(slowdowns=False, **params)
    cc.start(cwnd, 1500)
    feed(cc, 0.0, BASE, acked=1e-9)
    for i in range(4):
        feed(cc, 0.01 * (i + 1), BASE + 0.050, acked=1e-9)
    assert cc.ssthresh == pytest.approx(cwnd) and not cc.in_slow_start
    for i in range(4):  # back to no queueing delay
        feed(cc, 0.1 + 0.01 * i, BASE, acked=1e-9)
    return cc


# -- the draft's rules ------------------------------------------------------------------
# Restated from the draft: GAIN = 1 / min(16, ceil(2·TARGET / base_delay)), TARGET 60 ms.
@pytest.mark.parametrize("base, divisor", [(0.005, 16), (0.007, 16), (0.010, 12), (0.030, 4),
                                           (0.035, 4), (0.040, 3), (0.060, 2), (0.120, 1),
                                           (0.500, 1)])
def test_below_target_the_window_grows_by_the_drafts_gain_per_rtt(base, divisor):
    global BASE
    old, BASE = BASE, base
    try:
        cc = Ledbat(slowdowns=False)
        cc.start(10.0, 1500)
        feed(cc, 0.0, base)
        cc.ssthresh = cc.cwnd  # congestion avoidance from here
        before = cc.cwnd
        feed(cc, 0.01, base + 0.010, acked=2.0)  # 10 ms queued: below the target
    finally:
        BASE = old
    assert cc.cwnd - before == pytest.approx(2.0 / divisor / before, rel=1e-12)


@pytest.mark.parametrize("queued", [0.070, 0.090, 0.150, 0.400])
def test_above_target_the_decrease_is_proportional_to_the_window_and_at_most_half(queued):
    cc = in_avoidance()
    w, t, gain = cc.cwnd, 0.060, 1.0 / 3.0
    for i in range(4):  # fill the current-delay filter with the new delay
        feed(cc, 1.0 + 0.001 * i, BASE + queued, acked=1e-9)
    w = cc.cwnd
    feed(cc, 1.1, BASE + queued, acked=1.0)
    per_rtt = max(gain - 1.0 * w * (queued / t - 1.0), -w / 2.0)  # the draft, C = 1
    assert cc.cwnd - w == pytest.approx(per_rtt / w, rel=1e-9)


def test_the_decrease_constant_scales_the_decrease():
    cc = in_avoidance(decrease_constant=0.5)
    for i in range(4):
        feed(cc, 1.0 + 0.001 * i, BASE + 0.070, acked=1e-9)
    w = cc.cwnd
    feed(cc, 1.1, BASE + 0.070)
    assert cc.cwnd - w == pytest.approx((1 / 3 - 0.5 * w * (0.070 / 0.060 - 1)) / w, rel=1e-9)


def test_the_decrease_stops_at_two_segments():
    cc = in_avoidance(cwnd=3.0)
    for i in range(40):
        feed(cc, 1.0 + 0.01 * i, BASE + 0.400, acked=1.0)
    assert cc.cwnd == 2.0


def test_slow_start_grows_by_the_gain_and_ends_past_three_quarters_of_the_target():
    cc = Ledbat(slowdowns=False)
    cc.start(10.0, 1500)
    feed(cc, 0.0, BASE)
    assert cc.cwnd == pytest.approx(10.0 + 1.0 / 3.0)  # GAIN per segment acknowledged
    for i in range(4):  # 44 ms queued: below 3/4 · 60 ms = 45 ms, slow start goes on
        feed(cc, 0.01 * (i + 1), BASE + 0.044)
    assert cc.in_slow_start and cc.cwnd == pytest.approx(10.0 + 5.0 / 3.0)
    w = cc.cwnd
    feed(cc, 0.1, BASE + 0.046)  # one sample over: the filter still holds 44 ms
    assert cc.in_slow_start
    for i in range(3):
        feed(cc, 0.11 + 0.01 * i, BASE + 0.046)
    assert not cc.in_slow_start
    assert cc.ssthresh == pytest.approx(w + 3.0 / 3.0)  # the exiting ACK does not grow


def test_a_slowdown_holds_two_segments_for_two_rtts_and_the_next_comes_nine_durations_later():
    srtt = 0.1
    cc = Ledbat()
    cc.start(30.0, 1500)
    feed(cc, 0.0, BASE, srtt=srtt)
    for i in range(4):
        feed(cc, 0.5 + 0.01 * i, BASE + 0.050, srtt=srtt)  # initial slow start ends at 0.53 s
    assert not cc.in_slow_start
    feed(cc, 0.72, BASE, srtt=srtt, acked=1e-9)  # before 0.53 + 2 RTTs: no slowdown yet
    assert cc.cwnd > 2.0
    w = cc.cwnd
    feed(cc, 0.73, BASE, srtt=srtt, acked=1e-9)  # due: ssthresh = cwnd, cwnd = 2
    assert cc.cwnd == 2.0 and cc.ssthresh == w
    feed(cc, 0.92, BASE, srtt=srtt)  # frozen for two RTTs: 0.73 … 0.93
    assert cc.cwnd == 2.0
    now = 0.93
    while cc.in_slow_start:  # then slow start with the gain back to ssthresh
        before = cc.cwnd
        feed(cc, now, BASE, srtt=srtt)
        assert cc.cwnd == pytest.approx(min(before + 1.0 / 3.0, w))
        now += 0.01
    ended = now - 0.01
    due = ended + 9.0 * (ended - 0.73)  # nine times the slowdown's duration later
    feed(cc, due - 0.005, BASE, srtt=srtt, acked=1e-9)
    assert cc.cwnd > 2.0
    feed(cc, due + 0.005, BASE, srtt=srtt, acked=1e-9)
    assert cc.cwnd == 2.0


def test_a_loss_halves_the_window_ends_the_initial_slow_start_and_schedules_a_slowdown():
    cc = Ledbat()
    cc.start(24.0, 1500)
    feed(cc, 0.0, BASE, acked=1e-9, srtt=0.1)
    loss = Loss(0.1, "fast", 24.0, BASE, 0.1)
    assert cc.ssthresh_after(loss) == pytest.approx(12.0)  # RFC 6817: max(cwnd/2, MIN_CWND)
    cc.on_loss(loss)
    cc.cwnd = cc.ssthresh  # the recovery's end
    feed(cc, 0.2, BASE, srtt=0.1)  # avoidance's gain/cwnd, no slow start
    assert cc.cwnd == pytest.approx(cc.ssthresh + 1.0 / 3.0 / cc.ssthresh)
    feed(cc, 0.39, BASE, srtt=0.1, acked=1e-9)
    assert cc.cwnd > 2.0
    feed(cc, 0.41, BASE, srtt=0.1, acked=1e-9)  # two RTTs after slow start ended
    assert cc.cwnd == 2.0


# -- RFC 6817's estimates ----------------------------------------------------------------
def test_base_delay_is_the_minimum_of_ten_per_minute_minima():
    cc = Ledbat()
    cc.start(10.0, 1500)
    cc.on_rtt(RttSample(0.0, 0.040, 0.040, 0.040, 10.0))
    for minute in range(1, 10):
        cc.on_rtt(RttSample(60.0 * minute + 1.0, 0.050, 0.040, 0.05, 10.0))
    assert cc.base_delay == 0.040  # minutes 0 … 9: ten entries
    cc.on_rtt(RttSample(599.9, 0.045, 0.040, 0.05, 10.0))  # minute 9's minimum falls to 45 ms
    assert cc.base_delay == 0.040
    cc.on_rtt(RttSample(600.0, 0.050, 0.040, 0.05, 10.0))  # minute 10: minute 0 falls out
    assert cc.base_delay == 0.045


def test_current_delay_is_the_minimum_of_the_last_four_samples():
    cc = Ledbat()
    cc.start(10.0, 1500)
    for i, rtt in enumerate([0.050, 0.100, 0.100, 0.100]):
        cc.on_rtt(RttSample(0.01 * i, rtt, 0.05, 0.1, 10.0))
    assert cc.current_delay == 0.050
    cc.on_rtt(RttSample(0.05, 0.100, 0.05, 0.1, 10.0))
    assert cc.current_delay == 0.100


# -- RFC 6817 ------------------------------------------------------------------------------
@pytest.mark.parametrize("queued", [0.0, 0.030, 0.100, 0.250])
def test_rfc6817_moves_the_window_by_the_off_target_fraction(queued):
    cc = Ledbat(variant="rfc6817")
    cc.start(10.0, 1500)
    feed(cc, 0.0, BASE)  # q = 0: grows by GAIN · 1 · acked/cwnd, no slow start
    assert cc.cwnd == pytest.approx(10.1)
    for i in range(4):
        cc.on_rtt(RttSample(0.01 * (i + 1), BASE + queued, BASE, BASE, 10.0))
    w = cc.cwnd
    cc.on_ack(Ack(0.1, 1.0, BASE + queued, BASE, BASE, w, 0.0, NOT_SAMPLED))
    off_target = (0.100 - queued) / 0.100  # TARGET = 100 ms, GAIN = 1
    assert cc.cwnd == pytest.approx(max(w + off_target / w, 2.0))


def test_rfc6817_caps_the_window_at_flight_size_plus_one():
    cc = Ledbat(variant="rfc6817")
    cc.start(10.0, 1500)
    cc.on_rtt(RttSample(0.0, BASE, BASE, BASE, 3.0))
    cc.on_ack(Ack(0.0, 1.0, BASE, BASE, BASE, 3.0, 0.0, NOT_SAMPLED))  # FlightSize was 4
    assert cc.cwnd == 5.0


# -- parameters -------------------------------------------------------------------------------
def test_defaults_follow_the_variant():
    assert Ledbat().target_delay == 0.060
    assert Ledbat(variant="rfc6817").target_delay == 0.100
    assert Ledbat(target=0.025).target_delay == 0.025


@pytest.mark.parametrize("params, field, allowed", [
    ({"variant": "ledbat++"}, "variant", "'plusplus'"),
    ({"variant": "rfc6817", "target": 0.15}, "target", "0.1"),
    ({"target": 0.0}, "target", "(0, 1.0]"),
])
def test_bad_parameters_are_refused_naming_field_value_and_what_is_allowed(params, field,
                                                                           allowed):
    with pytest.raises(ScenarioError) as err:
        ccsim.Flow("ledbat", params=params)
    assert err.value.field == field and allowed in str(err.value)
    assert repr(params[field]) in str(err.value)


def test_a_target_that_is_not_a_number_is_refused():
    with pytest.raises(ScenarioTypeError, match="target"):
        ccsim.Flow("ledbat", params={"target": "60ms"})


@pytest.mark.slow
@pytest.mark.parametrize("params", [{}, {"variant": "rfc6817"}, {"slowdowns": False}])
def test_the_conformance_suite_passes(params):
    check_algorithm(Ledbat, params=params)


def test_the_conformance_suite_catches_an_uncapped_decrease():
    class Uncapped(Ledbat):
        name = "ledbat-uncapped"
        properties = Ledbat.properties  # the rule the draft states, declared anew

        def on_ack(self, ack):
            super().on_ack(ack)
            if not self.in_slow_start and self.queue_delay > self.target_delay:
                self.cwnd = max(self.cwnd - ack.acked, 2.0)  # a segment per segment: too fast

    with pytest.raises(Exception, match="half a segment"):
        check_algorithm(Uncapped, params={"slowdowns": False, "target": 0.001},
                        settings=settings(max_examples=100, deadline=None,  # no shrinking:
                                          phases=(Phase.generate,)))  # the failure is enough


# -- behaviour (10 Mbit/s, 40 ms) ---------------------------------------------------------------
def share(params, buffer, mode="packet", seed=1, duration="20s", other="reno"):
    sc = ccsim.dumbbell("10Mbps", "40ms", buffer=buffer, duration=duration, seed=seed,
                        flows=[ccsim.Flow("ledbat", params=params), other])
    return ccsim.run(sc, mode=mode).summary["share"][0]


@pytest.mark.parametrize("mode", ["packet", "fluid"])
@pytest.mark.parametrize("other", ["reno", "cubic"])
@pytest.mark.parametrize("buffer", ["2BDP", "4BDP"])
def test_ledbat_plus_plus_yields_where_the_buffer_can_hold_its_target(buffer, other, mode):
    """The draft's yield needs a queue above its 60 ms target: a 2-BDP buffer
    holds 80 ms, a 4-BDP one 160 ms. Reno or CUBIC fills it, LEDBAT++ sees the
    delay pass the target and backs off to at most 20 % of the link (measured
    over seeds 1-4: 0.06-0.14 at 2 BDP in the packet engine, 0.08-0.11 in the
    fluid one; 0.02-0.06 at 4 BDP). In a 1-BDP buffer it cannot: see below."""
    assert share({}, buffer, mode, other=other) <= 0.20


class _QueueDelayProbe(Ledbat):
    """LEDBAT++ recording the queueing delay it steers by, ACK by ACK."""
    name = "ledbat-queue-probe"
    seen: list[float] = []

    def on_ack(self, ack):
        super().on_ack(ack)
        if self.current_delays:
            type(self).seen.append(self.queue_delay)


@pytest.mark.parametrize("stack", [{}, {"delayed_ack": False}], ids=["linux", "no-delack"])
def test_in_a_one_bdp_buffer_the_queue_never_reaches_the_target(stack, scratch_registry):
    """Why the draft's LEDBAT++ cannot keep to 20 % against Reno in a 1-BDP
    buffer at 40 ms: the buffer holds 33 packets, 40 ms of queue, below
    both the slow-start exit (3/4 of 60 ms = 45 ms) and the 60 ms target.
    LEDBAT++ measures at most those 40 ms (asserted: every delay rule of the
    draft stays idle), so it is a loss-driven AIMD flow growing a third of a
    segment per RTT (gain 1/⌈120/40⌉) against Reno's one, halving on loss as
    Reno does. Unsynchronised AIMD flows with one decrease share as the square
    roots of their increases, √(1/3)/(1 + √(1/3)) = 0.37 (measured 0.25-0.35
    over seeds 1-3, against Reno or CUBIC): below Reno's half, above the
    20 % a buffer deeper than the target gives. RFC 6817's LEDBAT, gain 1,
    is Reno there (measured 0.53). Delayed ACKs are not the cause: the ACK
    wait in a sample is filtered out by the minimum of four, and without
    them the share is the same (0.25-0.29 over seeds 1-3)."""
    ccsim.algorithms.register(_QueueDelayProbe)
    _QueueDelayProbe.seen = []
    sc = ccsim.dumbbell("10Mbps", "40ms", buffer="1BDP", duration="20s", seed=1,
                        flows=["ledbat-queue-probe", "reno"], **stack)
    plusplus = ccsim.run(sc).summary["share"][0]
    # 40 ms of buffer, plus up to a packet's serialisation (1.2 ms) of timing
    assert 0.030 < max(_QueueDelayProbe.seen) < 0.75 * 0.060
    assert 0.20 < plusplus < 0.45
    assert plusplus < share({"variant": "rfc6817"}, "1BDP")


@pytest.mark.parametrize("other", ["reno", "cubic"])
def test_a_target_below_the_buffers_delay_yields_in_a_one_bdp_buffer(other):
    """The rule that decides is the target against the buffer's delay, not
    the buffer's size: with a 25 ms target, which a 40 ms queue exceeds,
    LEDBAT++ yields in the same 1-BDP buffer (measured 0.07-0.11 over seeds
    1-4) where it takes 0.25-0.35 with the draft's 60 ms."""
    assert share({"target": 0.025}, "1BDP", other=other) <= 0.20


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["packet", "fluid"])
def test_alone_it_keeps_the_queueing_delay_near_the_target_and_the_link_busy(mode):
    """Alone in a 4-BDP buffer the queueing delay settles about the 60 ms
    target (the filter's minimum of four samples and the per-RTT steps put it
    within ±50 %), and the slowdowns' cost is about a tenth of the time
    (the draft), so utilisation stays above 85 %."""
    sc = ccsim.dumbbell("10Mbps", "40ms", buffer="4BDP", duration="30s", seed=1,
                        flows=["ledbat"])
    res = ccsim.run(sc, mode=mode)
    queue = res.series("queue")["queue"]
    delay = queue[queue.index > 5].mean() * 1500 * 8 / 10e6
    assert 0.030 <= delay <= 0.090
    assert res.metrics["utilisation"] >= 0.85


def test_slowdowns_take_the_latecomers_advantage_away():
    """The draft's cure for the latecomer's advantage (RFC 6817's known
    flaw): a flow that starts into another's 60 ms queue takes it for base
    delay and pushes the first flow out (the latecomer's share of the 30 s
    they share: 0.97 without slowdowns, measured over seeds 1-3). The
    slowdowns drain the queue, both measure the true base delay, and the
    shares even out (0.44-0.54 measured); the bounds are Jain-like: the
    latecomer takes neither more than 70 % nor less than 30 %."""
    def latecomer(slowdowns):
        sc = ccsim.dumbbell("10Mbps", "40ms", buffer="4BDP", duration="40s", seed=1,
                            flows=[ccsim.Flow("ledbat", params={"slowdowns": slowdowns}),
                                   ccsim.Flow("ledbat", start="10s",
                                              params={"slowdowns": slowdowns})])
        return ccsim.run(sc).summary["share"][1]
    assert latecomer(False) > 0.8
    assert 0.3 <= latecomer(True) <= 0.7


@pytest.mark.slow
def test_the_fluid_law_agrees_with_the_class_run_through_its_hooks(scratch_registry):
    """The fluid law and the window law's own hooks, once per step, are two
    renderings of one rule: against Reno they give shares within 8 points,
    as tests/test_fluid.py asks of the other laws (measured 0.316 and 0.289
    at 1 BDP, 0.020 and 0.019 at 4 BDP)."""
    hooked = type("LedbatHooks", (Ledbat,), {"name": "ledbat-hooks"})
    ccsim.algorithms.register(hooked)
    for buffer in ("1BDP", "4BDP"):
        shares = [ccsim.run(ccsim.dumbbell("10Mbps", "40ms", buffer=buffer, duration="60s",
                                           seed=1, flows=[algo, "reno"]),
                            mode="fluid").summary["share"][0]
                  for algo in ("ledbat", "ledbat-hooks")]
        assert abs(shares[0] - shares[1]) < 0.08, (buffer, shares)
