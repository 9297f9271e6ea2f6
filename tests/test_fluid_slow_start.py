"""Slow start behind a queue, against the packet engine.

Per ACK ``cwnd += acked`` (RFC 5681): once the bottleneck holds a queue the
ACKs come at the link's rate, so a lone window grows by ``C`` per second, not
by a doubling per RTT of its (queue-inflated) RTT; and its sender learns of
the first overflow an RTT after it happened, when its window is twice pipe
plus buffer. These tests compare the two engines on a path whose BDP (8
packets) is far below its buffer (1000), where the whole slow start runs
behind a queue (Esterhuizen & Krzesinski's Table I testbed).
"""

from __future__ import annotations

import ccsim
import numpy as np
import pytest

from ccsim.fluid.engine import FluidEngine


def _lone(law: str = "reno", duration: str = "0.4s") -> ccsim.Scenario:
    return ccsim.dumbbell("100Mbps", "1ms", buffer=1000, duration=duration, seed=1,
                          flows=[law], trace_interval=0.01)


@pytest.fixture(scope="module")
def runs():
    sc = _lone()
    return ccsim.run(sc), ccsim.run(sc, mode="fluid")


def _fluid_cwnd(sc: ccsim.Scenario, until: float) -> tuple[np.ndarray, np.ndarray]:
    """The fluid window at the end of each step up to ``until`` (s)."""
    e = FluidEngine([sc], traces=False)
    t, w = [], []
    while e._step() and e.t[0] <= until:
        t.append(float(e.t[0]))
        w.append(float(e.cwnd[0]))
    return np.array(t), np.array(w)


def test_growth_behind_a_queue_is_the_link_rate(runs):
    """From 0.05 s to 0.11 s (queue building, no loss yet) the window grows
    by the link's rate, C = 8333 segments/s, in both engines; a doubling per
    RTT of the queue-inflated RTT grew it by ``ln 2·C`` (the fluid engine
    had 6640/s)."""
    packet, _ = runs
    c = packet.series("cwnd").iloc[:, 0]
    p_rate = (c.asof(0.11) - c.asof(0.05)) / 0.06
    t, w = _fluid_cwnd(_lone(), 0.2)
    f_rate = (np.interp(0.11, t, w) - np.interp(0.05, t, w)) / 0.06
    link = 100e6 / (1500 * 8)
    assert p_rate == pytest.approx(link, rel=0.02)
    # 5 %: the window grows over a step from the step's deliveries, a ramp
    assert f_rate == pytest.approx(link, rel=0.05)


def test_first_reduction_halves_twice_pipe_and_buffer(runs):
    """The first loss is found an RTT after the queue filled: the window is
    then about 2·(C·d + B) ≈ 2017, so Reno's ssthresh is about pipe and
    buffer, 1008, in both engines (the fluid engine had 1174: it detected the
    loss a step late and grew too slowly before, then a step too long)."""
    packet, fluid = runs
    first = packet.events[packet.events.event == "recovery"].iloc[0]
    p_ssthresh = float(first.cwnd) / 2.0
    f_ssthresh = float(fluid.series("ssthresh").iloc[:, 0].dropna().replace(np.inf, np.nan)
                       .dropna().iloc[0])
    # 3 %: the packet window counts whole segments and delayed ACKs
    assert f_ssthresh == pytest.approx(p_ssthresh, rel=0.03)
    assert f_ssthresh == pytest.approx(1008.3, rel=0.03)


def test_detection_an_rtt_after_the_first_overflow():
    """The first drop is dated where the window crossed pipe and buffer within
    the step that sent it, not at the next step's start."""
    sc = _lone(duration="0.35s")
    e = FluidEngine([sc], traces=False)
    crossed = detected = None
    while e._step():
        if crossed is None and e.cwnd[0] >= e.C[0] * e.d[0] + e.B[0]:
            crossed = float(e.t[0])
        if detected is None and e.ssthresh[0] < np.inf:
            detected = float(e.t[0])
    rtt = e.d[0] + e.B[0] / e.C[0]
    # the crossing is known to a step (a quarter RTT) at most
    assert detected - crossed == pytest.approx(rtt, abs=0.25 * rtt)


def test_recovery_of_an_overshoot_lasts_while_its_holes_are_resent():
    """Reno's slow-start overshoot loses about pipe + buffer (1008) segments;
    PRR resends them at the ACK clock's rate (8333/s) behind a full queue, so
    the recovery ends about 0.12 s + an RTT after it began, as the packet
    engine's does (there 0.36 s, a resent segment lost once more, and the
    next recovery begins as it ends); the fluid engine's used to end after
    one RTT (0.12 s), its window growing again while the packet engine's was
    still repairing."""
    ev = ccsim.run(_lone(duration="0.8s")).events
    ev = ev[ev.event.isin(["recovery", "recovered"])]
    began, ended = float(ev.time.iloc[0]), float(ev.time.iloc[1])
    e = FluidEngine([_lone(duration="0.35s")], traces=False)
    while e._step() and not e.ssthresh[0] < np.inf:
        pass
    length = float(e.rec_until[0] - e.t[0])
    rtt = e.d[0] + e.B[0] / e.C[0]
    # 1012 lost of 2020 out leave 1008 in flight, at ssthresh (1010): PRR
    # resends at the delivery rate (RFC 6937's reduction bound), the 1011
    # further holes in one more RTT (0.12 s): two RTTs from the detection,
    # less the step it was found in (a quarter RTT) — where the old rule's
    # one RTT read 0.12 s. (When the fluid window was not whole segments
    # the overshoot lost 817, left more than ssthresh in flight and resent
    # at half the rate: 0.29 s.)
    assert length > 1.5 * rtt
    assert length <= ended - began + 0.25 * rtt


def test_a_recovery_resends_at_least_ssthresh_per_rtt_when_its_rate_has_fallen():
    # PRR's slow-start reduction bound (RFC 6937 §3.1): once the pipe is below ssthresh it
    # sends up to ssthresh per RTT, however little the flow delivered before. With the
    # flow's fallen rate (2.5 segments/s) 1655 holes took 650 s: Hybla behind RED stalled.
    sc = ccsim.dumbbell("10Mbps", "200ms", buffer="1BDP", flows=["hybla"], duration="1s")
    eng = FluidEngine([sc], traces=False)
    fi = np.array([0])
    eng.rate[fi], eng.tau[fi], eng.ssthresh[fi], eng.outstanding[fi] = 2.5, 0.2, 838.0, 1677.0
    lost = np.array([1655.0])
    extra = eng._resend_time(fi, lost, np.array([False]))[0]
    # (lost - 1) / (ssthresh / RTT): with 22 of 1677 left in flight, PRR is below ssthresh
    assert extra == pytest.approx((1655 - 1) / (838 / 0.2))
    assert extra < 1.0


def test_prr_proportional_phase_lasts_only_while_the_pipe_exceeds_ssthresh():
    # RFC 6937: PRR sends ssthresh/RecoverFS per delivery only while RFC 6675's
    # pipe is above ssthresh; then the slow-start reduction bound sends at the
    # delivery rate, or ssthresh per RTT. The pipe falls from RecoverFS as the
    # SACKs pass the window (the holes marked lost on the way), below ssthresh
    # after 1 - ssthresh/RecoverFS of its deliveries. A window RED emptied (242
    # of 283 lost, Westwood's ssthresh 17.9 from its fallen rate): 38.4 of the
    # 41 deliveries at the reduced rate (2.4 resends), the other 238.6 resends
    # at ssthresh/RTT: 3.1 s, where scaling the whole recovery by
    # RecoverFS/ssthresh gave 43.5 s (Westwood then sent nothing for 40 s)
    sc = ccsim.dumbbell("5Mbps", "200ms", buffer=83, flows=["westwood"], duration="1s")
    eng = FluidEngine([sc], traces=False)
    fi = np.array([0])
    eng.rate[fi], eng.tau[fi], eng.ssthresh[fi], eng.outstanding[fi] = 0.0, 0.2, 17.9, 283.0
    extra = eng._resend_time(fi, np.array([242.0]), np.array([False]))[0]
    share = 17.9 / 283.0
    slow = (1.0 - share) * (283.0 - 242.0)
    assert extra == pytest.approx((slow + 241.0 - slow * share) / (17.9 / 0.2))
    assert extra < 3.5
    # few losses: the resends all go out in the proportional phase, as before
    eng.rate[fi], eng.ssthresh[fi], eng.outstanding[fi] = 100.0, 50.0, 100.0
    extra = eng._resend_time(fi, np.array([5.0]), np.array([False]))[0]
    assert extra == pytest.approx(4.0 / 250.0 * 2.0)  # x = 50/0.2; RecoverFS/ssthresh = 2
