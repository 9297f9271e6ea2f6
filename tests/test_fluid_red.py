"""RED's average queue in the fluid engine, against the packet engine's.

RED updates its average at each arrival (Floyd & Jacobson 1993), so it sees
the queue that slow start's trains build on a link that is not yet full,
where the fluid queue is empty: each round's window crosses the bottleneck as
a train spaced by the link, and its ACKs release twice as much.
"""

from __future__ import annotations

import ccsim
import numpy as np
import pytest

from ccsim.fluid.engine import FluidEngine
from ccsim.queues import red as red_queue

# 100 Mbit/s and 100 ms: a BDP of 833 packets, so slow start runs six rounds
# before the link fills; thresholds above any train, so that nothing is
# dropped and both engines' windows double undisturbed
_SLOW_START = ccsim.dumbbell("100Mbps", "100ms", flows=["reno"], duration="0.7s", seed=1,
                             queue=ccsim.RED(3000, min_th=1000, max_th=2000))


def _packet_red_averages(sc) -> np.ndarray:
    """(time, RED's average) at each arrival of ``sc`` in the packet engine."""
    seen = []
    early = red_queue._REDState._early

    def recording(state, t, waiting):
        out = early(state, t, waiting)
        seen.append((t, state.avg))
        return out

    mp = pytest.MonkeyPatch()
    mp.setattr(red_queue._REDState, "_early", recording)
    try:
        ccsim.run(sc)
    finally:
        mp.undo()
    return np.array(seen)


@pytest.fixture(scope="module")
def averages():
    """(time, RED's average) at each arrival in the packet engine, and at the
    end of each fluid step with the fluid queue and window."""
    e = FluidEngine([_SLOW_START], traces=False)
    fluid = []
    while e._step():
        fluid.append((float(e.t[0]), float(e.avg[0]), float(e.q[0]), float(e.cwnd[0])))
    return _packet_red_averages(_SLOW_START), np.array(fluid)


def test_red_average_sees_slow_start_trains_before_the_link_fills(averages):
    packet, fluid = averages
    # between trains, at the end of rounds 4-6 (windows of about 80, 160 and
    # 320 segments: the packet average is flat there, having moved as its
    # train passed), while the fluid queue is still empty
    for t in (0.45, 0.55, 0.65):
        p = packet[np.searchsorted(packet[:, 0], t) - 1, 1]
        j = np.searchsorted(fluid[:, 0], t) - 1
        f, q, w = fluid[j, 1:]
        assert q == 0.0 and w < 833  # the link is not full: no fluid queue
        assert p > 2.0  # the trains raise RED's average in the packet engine
        # the packet windows double in whole rounds, the fluid one within
        # them, so their averages agree to within that rounding, not exactly
        # (measured 2026-11-27: 3.2/3.2, 12.1/12.8, 43.5/51.0; 0 in each
        # before RED's average saw the trains)
        assert p / 1.5 < f < p * 1.5, (t, p, f)


def test_a_nic_as_slow_as_the_link_sends_no_train():
    # behind a NIC no faster than the bottleneck a round arrives no faster
    # than it drains: no train rises above the packet in service, and until
    # the window fills the link RED sees no queue (without the NIC's cap the
    # average reaches 4.2 packets by then)
    sc = ccsim.dumbbell("10Mbps", "100ms", flows=[ccsim.Flow("reno", access_rate="10Mbps")],
                        duration="0.5s", seed=1, queue=ccsim.RED(100))
    e = FluidEngine([sc], traces=False)
    while e._step() and e.q[0] == 0.0:
        assert e.avg[0] == 0.0
    assert e.cwnd[0] > 80  # slow start ran until the window filled the link


def test_red_average_never_passes_the_buffer():
    # Hybla's slow start at 200 ms (2^8 segments per ACK) sends trains far
    # longer than the buffer: what does not fit is dropped, so RED's arrivals
    # see at most a full buffer, as in the packet engine (without that bound
    # the fluid average reached 2,178 packets behind this 83-packet buffer
    # and dropped every arrival for six seconds)
    sc = ccsim.dumbbell("5Mbps", "200ms", buffer=83, queue="red", flows=["hybla", "hybla"],
                        duration="3s", seed=1)
    e = FluidEngine([sc], traces=False)
    top = 0.0
    while e._step():
        top = max(top, float(e.avg[0]))
    assert 15.0 < top <= 83.0  # above max_th (the overshoot is cut), within the buffer


def _linux_idle(avg: float, w: float, C: float, idle_from: float, arrivals: np.ndarray,
                until: float) -> float:
    """Linux's RED at an empty queue that drops every arrival, restated: each
    arrival decays ``avg ← (1 − w)^m avg`` with ``m`` the packet times since
    the idle period began, then ends it (``red_end_of_idle_period``); the
    dequeue that finds the queue empty after the drop begins the next. The
    average an arrival at ``until`` would see."""
    for t in [*arrivals, until]:
        avg *= (1.0 - w) ** (C * (t - idle_from))
        idle_from = t
    return avg


def test_red_average_decays_by_the_elapsed_idle_time_while_an_empty_queue_drops_all():
    # after a slow start's overshoot the average is above max_th (every arrival
    # dropped) and the queue has drained: as in Linux (and the packet engine),
    # the drops do not compound the decay, whatever the arrivals' spacing
    sc = ccsim.dumbbell("5Mbps", "200ms", buffer=83, queue="red", flows=["reno"], duration="1s")
    e = FluidEngine([sc], traces=False)
    C, w = float(e.C[0]), float(e.red_w[0])
    t0, h, rate, steps = 1.0, 0.005, 400.0, 10  # 400 packets/s offered, 10 steps of 5 ms
    e.t[0], e.q[0], e.avg[0], e.red_p_last[0] = t0, 0.0, 30.0, 1.0
    for k in range(steps):
        e.t[0] = t0 + k * h
        e._red_probability(np.array([h]), np.array([rate * h]))
    rng = np.random.default_rng(1)
    times = np.sort(rng.uniform(t0, t0 + steps * h, 2 * steps))  # the same number of arrivals
    expected = _linux_idle(30.0, w, C, t0, times, t0 + steps * h)
    assert expected > 27.0  # 20.4 had each drop decayed by the whole idle time so far
    # exact up to float rounding: both decay by the 50 ms of idle time
    assert e.avg[0] == pytest.approx(expected, rel=1e-9)


def test_red_drops_a_slow_start_windows_growth_too():
    # a slow start's ACKs release two segments each: arrivals twice the
    # departures. With RED's average above max_th the packet engine drops all
    # of them and the queue drains at the link's rate; the fluid dropped only
    # the ACK clock's share (its rate, the departures) and its queue held
    sc = ccsim.dumbbell("10Mbps", "100ms", buffer=200, queue="red", flows=["reno"],
                        duration="2s", seed=1)
    e = FluidEngine([sc], traces=False)
    while e._step() and not (e.q[0] > 40.0 and e.cwnd[0] < e.ssthresh[0]):
        pass
    assert e.q[0] > 40.0 and e.cwnd[0] < e.ssthresh[0] and e.growth[0] > 0
    e.avg[0] = 2.0 * e.red_max[0]  # every arrival selected from now on
    q, h = float(e.q[0]), float(e.step * (e.d_min[0] + e.q[0] / e.C[0]))
    e._step()
    # nothing enters, the link serves C·h: the queue falls by about that much
    # (within a tenth: the step's length is the engine's, close to the estimate)
    assert float(e.q[0]) < q - 0.9 * float(e.C[0]) * h


def test_red_counts_no_growth_for_a_finished_scenario_in_a_batch():
    # a scenario that has reached its end (step 0) while a batch-mate still
    # runs sends nothing: its last step's window growth must not arrive at
    # RED again at every step of the others (drops and packets counted after
    # the end made its metrics depend on the batch)
    tiny = ccsim.dumbbell(bandwidth=1e6, rtt=0.002, buffer=2, flows=["bbr"], duration=2.0,
                          seed=0)
    red = ccsim.dumbbell(bandwidth=1e6, rtt=0.002, buffer=300, queue="red",
                         flows=["bbr", "bbr", "bic"], duration=2.0, seed=0)
    alone = ccsim.run(red, mode="fluid")
    batched = ccsim.run_many([tiny, red], mode="fluid")[-1]
    for key in ("data_packets", "drops", "utilisation"):
        assert batched.metrics[key] == alone.metrics[key]


def _peak_averages(sc) -> tuple[float, float]:
    """RED's highest average queue in the packet engine (at any arrival) and
    in the fluid engine (at the end of any step)."""
    e = FluidEngine([sc], traces=False)
    top = 0.0
    while e._step():
        top = max(top, float(e.avg[0]))
    return float(_packet_red_averages(sc)[:, 1].max()), top


def test_red_average_stops_rising_once_red_drops_the_trains():
    # two slow starts overshoot an 83-packet RED queue: its average passes
    # max_th and every arrival is dropped. The windows still grow for an RTT
    # (their ACKs still come), but what RED drops never queues: in the packet
    # engine the average turns as the queue drains (peak 22 packets); the
    # fluid average climbed on to 29 on trains it counted as queued
    sc = ccsim.dumbbell("10Mbps", "100ms", buffer=83, queue="red", flows=["yeah", "cubic"],
                        duration="1.5s", seed=5)
    packet, fluid = _peak_averages(sc)
    assert packet > 15.0 and fluid > 15.0  # both pass max_th
    # a quarter: the packet windows double in whole rounds, the fluid ones
    # within them, so the peaks differ by that rounding (measured 2026-11-27:
    # packet 21.8, fluid 21.1; 29.2 before the trains counted RED's drops)
    assert fluid < 1.25 * packet, (packet, fluid)


def test_red_trains_count_only_what_red_lets_into_the_queue():
    # Floyd & Jacobson's RED drops a selected arrival on arrival: a slow
    # start's round of W + g segments raises the queue by what RED lets in
    # less what the link serves meanwhile, (W + g)(1 − p) − W, none once
    # RED drops a share g/(W + g) of it (in slow start, about a half) or more
    sc = ccsim.dumbbell("100Mbps", "100ms", flows=["reno"], duration="0.7s", seed=1,
                        queue=ccsim.RED(3000, min_th=1000, max_th=2000))
    e = FluidEngine([sc], traces=False)
    while e._step() and float(e.t[0]) < 0.45:
        pass
    assert e.q[0] == 0.0 and e.growth[0] > 0  # slow start, the link not yet full
    extra = {}
    for p in (0.0, 0.25, 0.75, 1.0):
        e.red_p_last[0] = p
        extra[p] = float(e._red_trains()[0][0])
    assert extra[0.0] > extra[0.25] > 0.0
    assert extra[0.75] == 0.0 and extra[1.0] == 0.0


def test_red_spaces_its_early_drops_by_its_count():
    # Floyd & Jacobson 1993, §7: an arrival is dropped with probability
    # p_b/(1 − count·p_b), so at a steady p_b the gaps between drops are
    # uniform on 1..1/p_b arrivals (mean (1 + 1/p_b)/2, the effective
    # probability 2 p_b/(1 + p_b)), never longer; Poisson drops' gaps are
    # geometric, and one in e² exceeds 1/p_b
    sc = ccsim.dumbbell("10Mbps", "40ms", buffer=100, queue="red", flows=["reno"],
                        duration="1s", seed=3)
    e = FluidEngine([sc], traces=False)
    pb, per_step = 0.02, 0.37  # p_b, and arrivals per step (packets)
    p = 2.0 * pb / (1.0 + pb)
    e.red_pb[0] = pb
    at = []
    for i in range(40_000):
        e.steps[0] = i
        k = e._red_spaced(np.array([p * per_step]), np.array([p]))
        if k is not None:
            at.extend([i * per_step] * int(k[0]))
    gaps = np.diff(at)
    assert len(gaps) > 500
    # the mean within 6 % (about 700 gaps of spread (1/p_b)/√12 each: 4 standard errors)
    assert gaps.mean() == pytest.approx(0.5 * (1.0 + 1.0 / pb), rel=0.06)
    # never past 1/p_b (but for the step's granularity), and uniform's spread,
    # a coefficient of variation near 0.58 (a geometric one: near 1)
    assert gaps.max() <= 1.0 / pb + per_step
    assert gaps.std() / gaps.mean() == pytest.approx(1.0 / np.sqrt(3.0), abs=0.08)


@pytest.mark.slow
def test_red_desynchronises_like_flows_as_the_packet_engine():
    # eight Reno flows behind RED (the held-out row of the agreement set): the
    # packet engine's early drops, spaced by RED's count, reduce the flows one
    # or two at a time; Poisson drops clustered them (gaps between the flows'
    # reductions: coefficient of variation 1.49 against the packet's 1.02,
    # seeds 1-5), and the synchronised halvings emptied the queue (utilisation
    # 0.909 against 0.947)
    def cv_and_util(mode: str, seed: int) -> tuple[float, float]:
        sc = ccsim.dumbbell("20Mbps", "40ms", buffer=200, queue="red", duration=20,
                            seed=seed, flows=["reno"] * 8)
        res = ccsim.run(sc, mode=mode)
        ev = res.events
        t = np.sort(ev[(ev["time"] > 5) & ev["event"].isin(["recovery", "timeout"])]["time"])
        gaps = np.diff(t)
        return float(gaps.std() / gaps.mean()), float(res.metrics["utilisation"])

    utils = []
    for seed in (1, 2):
        cv_p, util_p = cv_and_util("packet", seed)
        cv_f, util_f = cv_and_util("fluid", seed)
        # within 0.15: about twice the packet seeds' own spread (0.99-1.12, seeds 1-3)
        assert cv_f == pytest.approx(cv_p, abs=0.15)
        utils.append((util_p, util_f))
    # the two seeds' mean utilisation within 2.5 points (measured: fluid 2.1
    # points high; with Poisson drops 3.1 low, 3.8 on the agreement set's 30 s)
    util_p, util_f = np.mean(utils, axis=0)
    assert util_f == pytest.approx(util_p, abs=0.025)
