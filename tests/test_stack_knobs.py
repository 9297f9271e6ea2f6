"""Stack knobs: ACK counting and RTT-sample granularity."""

from __future__ import annotations


import pytest

import ccsim
from ccsim.packet import PacketEngine
from ccsim.errors import ScenarioError


def mathis_goodput(delayed: bool, counting: str) -> float:
    # Reno with 1 % random loss, 40 ms: Mathis et al. 1997 give
    # rate = MSS/RTT · sqrt(3/(2b)/p), b segments per ACK: about 3.6 Mbit/s without delayed
    # ACKs (b = 1), below the 10 Mbit/s link so the loss law, not the link, sets it.
    sc = ccsim.dumbbell("10Mbps", "40ms", loss=0.01, buffer=200, duration="60s",
                        flows=["reno"], seed=3, delayed_ack=delayed, ack_counting=counting)
    return PacketEngine(sc).run().summary.iloc[0].goodput_bps


@pytest.mark.slow
def test_mathis_delayed_ack_constant_only_with_per_ack_counting():
    # Growth per ACK (ns-2, ns-3): delayed ACKs halve the growth, and Mathis' constant
    # falls from sqrt(3/2) to sqrt(3/4), a ratio sqrt(1/2) = 0.71. Counting segments
    # (RFC 3465, Linux) the window grows by acked segments, so delayed ACKs change little.
    # Bands: one 60 s run per point is ~2,000 losses, whose rate estimate is good to a few
    # per cent; the bands separate 0.71 from 1 with room for that noise and for timeouts.
    acks = mathis_goodput(True, "acks") / mathis_goodput(False, "acks")
    segments = mathis_goodput(True, "segments") / mathis_goodput(False, "segments")
    assert 0.6 <= acks <= 0.8, acks
    assert segments >= 0.88, segments


def test_ack_counting_is_validated():
    with pytest.raises(ScenarioError, match="ack_counting"):
        ccsim.dumbbell("10Mbps", "10ms", duration="1s", flows=["reno"], ack_counting="bytes")


def min_rtt(granularity) -> float:
    sc = ccsim.dumbbell("10Mbps", "0.5ms", duration="0.5s", flows=["reno"], buffer=20,
                        rtt_granularity=granularity)
    engine = PacketEngine(sc)
    engine.run()
    return engine.senders[0].rtt.min_rtt


def test_rtt_granularity_measures_in_clock_ticks():
    # A 1 ms path (plus serialisation at the link and both hosts' NICs, and up to a packet
    # time of ACK jitter): exact by default; with a 4 ms jiffy clock a sample
    # is the difference of two tick counts, never below one tick (Linux counts a
    # zero-jiffy sample as one), so the smallest sample is exactly one tick.
    exact = min_rtt(0)
    tx, nic = 1500 * 8 / 10e6, 1500 * 8 / 100e6
    assert 0.001 + tx + 2 * nic <= exact < 0.001 + 2 * tx + 2 * nic
    assert min_rtt("4ms") == pytest.approx(0.004)
    assert min_rtt("1ms") in (pytest.approx(0.001), pytest.approx(0.002))


def test_rtt_granularity_is_validated():
    with pytest.raises(ScenarioError, match="rtt_granularity"):
        ccsim.dumbbell("10Mbps", "10ms", duration="1s", flows=["reno"], rtt_granularity="-1ms")


def dupack_sends(limited: bool) -> list[int]:
    # Segment 30 dropped in a 10-segment-window flow: new segments sent on each
    # duplicate ACK of 30 (read from the event trace: the sends an ACK causes
    # follow its row, at its time).
    sc = ccsim.dumbbell("10Mbps", "20ms", duration="1s", buffer=100, limited_transmit=limited,
                        flows=[ccsim.Flow("reno", drop_segments=(30,))], seed=1)
    ev = ccsim.run(sc, events=True).events
    ev = ev[ev["event"].isin(["acked", "sent"])]
    sends, acks_of_30 = [], 0
    for kind, seq in zip(ev["event"], ev["seq"]):
        if kind == "acked":
            if seq == 30:
                acks_of_30 += 1
                if acks_of_30 > 1:  # the first ACK of 30 is not a duplicate
                    sends.append(0)
            elif acks_of_30:
                break
        elif sends and kind == "sent":
            sends[-1] += 1
    return sends


def test_limited_transmit_sends_one_new_segment_per_early_duplicate():
    # RFC 3042 §2: the first and second duplicate ACK each send one new segment.
    # Without it, the window (not yet inflated) sends nothing on them.
    lt, plain = dupack_sends(True), dupack_sends(False)
    assert lt[:2] == [1, 1], lt
    assert plain[:2] == [0, 0], plain


# -- Tail Loss Probe (RFC 8985 §7) ----------------------------------------------------------
def _tail(tlp: bool, drop=(97, 98, 99)) -> ccsim.Result:
    # 100 segments, the last three lost: no segment follows them to raise duplicate ACKs.
    # Exact timing (the seeded jitters off): the tests read the timers to the microsecond
    sc = ccsim.dumbbell("10Mbps", "40ms", buffer=100, duration="3s", seed=1,
                        tail_loss_probe=tlp, start_jitter=0, ack_jitter=0,
                        flows=[ccsim.Flow("cubic", size=100 * 1460, drop_segments=drop)])
    return ccsim.run(sc, events=True)


def test_a_tail_loss_waits_for_the_timer_without_a_probe():
    res = _tail(False)
    assert res.summary["timeouts"][0] == 1


def test_a_tail_loss_probe_repairs_the_tail_before_the_timer():
    plain, probed = _tail(False), _tail(True)
    assert probed.summary["timeouts"][0] == 0
    ev = probed.events
    again = ev[ev["event"] == "retransmitted"]
    # nothing new to send: the probe is the last segment again; its SACK shows 97 and 98
    # lost (RACK), and fast recovery resends them
    assert list(again["seq"]) == [99, 97, 98]
    last_ack = ev[(ev["event"] == "acked") & (ev["time"] < again["time"].iloc[0])]["time"].max()
    # RFC 8985 §7.2: PTO = 2·SRTT from the last ACK (three segments in flight: no
    # delayed-ACK allowance); SRTT lies between the 40 ms base RTT and 70 ms of queue.
    pto = float(again["time"].iloc[0]) - last_ack
    assert 2 * 0.040 <= pto <= 2 * 0.070, pto
    assert probed.summary["recoveries"][0] == 1
    # RACK's reordering timer (RFC 8985 §6.3): the probe's SACK marks 97 and 98 lost,
    # and recovery starts a quarter of min_rtt later (40 ms + 1.2 ms serialisation at the
    # link and 0.12 ms at each host's NIC)
    sack_at = ev[(ev["event"] == "acked") & ev["sack"].map(bool)]["time"].iloc[0]
    began = ev[ev["event"] == "recovery"]["time"].iloc[0]
    assert began - sack_at == pytest.approx((0.040 + 1500 * 8 / 10e6 + 2 * 1500 * 8 / 100e6)
                                            / 4, rel=1e-6)
    assert probed.summary["fct"][0] < plain.summary["fct"][0]


def test_one_segment_in_flight_probes_at_the_rto_instead_of_timing_out():
    # RFC 8985 §7.2 and Linux's tcp_schedule_loss_probe: with one segment in flight the PTO
    # allows min_rto (200 ms) for a delayed ACK, which puts it past this flow's RTO; the
    # probe is then armed for the RTO's time (min(PTO, time to the RTO)) and goes instead
    # of the timeout: the last segment again, which repairs the loss. (ccsim used to arm
    # the RTO itself: a timeout, cwnd 1.)
    res = _tail(True, drop=(99,))
    assert res.summary["timeouts"][0] == 0
    ev = res.events
    again = ev[ev["event"] == "retransmitted"]
    assert list(again["seq"]) == [99]
    # at the RTO's time: min_rto (200 ms) dominates SRTT + 4·RTTVAR on this path
    last_ack = ev[(ev["event"] == "acked") & (ev["time"] < again["time"].iloc[0])]["time"].max()
    assert float(again["time"].iloc[0]) - last_ack == pytest.approx(0.2, rel=1e-9)


def _probing_sender(rwnd):
    """A CUBIC + PRR sender with TLP whose first window is ACKed after 50 ms
    (SRTT 50 ms) and whose later segments are all lost; what it sends."""
    from ccsim.algorithms.cubic import Cubic
    from ccsim.packet.clock import Clock
    from ccsim.packet.tcp import Sender
    from ccsim.recovery.prr import PrrRecovery

    clock, sent = Clock(), []
    s = Sender(Cubic(), PrrRecovery(), clock=clock, transmit=lambda q, t: sent.append((t, q)),
               initial_window=4, mss=1460, rwnd=rwnd, min_rto=0.3, initial_rto=1.0,
               max_rto=60.0, end_seq=1000, tail_loss_probe=True)
    clock.schedule(0.0, lambda _: s.start(), None)
    for k in range(1, 5):
        clock.schedule(0.05, s.on_ack, (k, ()))
    return clock, s, sent


def test_a_probe_sends_new_data_when_there_is_some():
    # The probe goes out as the next new segment, beyond cwnd (Linux's
    # tcp_send_loss_probe), once; then the RTO.
    clock, s, sent = _probing_sender(1000.0)
    clock.run(until=2.0)
    burst = [q for t, q in sent if t == 0.05]
    probe = next((t, q) for t, q in sent if t > 0.05)
    assert probe[1] == burst[-1] + 1
    # PTO = 2·SRTT + 2 ms after the last ACK (Linux's TCP_TIMEOUT_MIN_US: four in flight)
    assert probe[0] == pytest.approx(0.05 + 2 * 0.05 + 0.002)
    assert s.tlp.probes == 1 and s.timeouts >= 1


@pytest.mark.parametrize("blocks,probe", [((), True), (((6, 7),), False)])
def test_no_probe_is_scheduled_in_disorder(blocks, probe):
    # Linux's tcp_schedule_loss_probe schedules a probe only in the Open and CWR states;
    # in Disorder (outside recovery, something SACKed or marked lost: tcp_left_out) the
    # RTO is armed instead. At 0.06 s an ACK of segment 4 arrives, with or without a SACK
    # of segment 6 (one SACK, below DupThresh: no recovery; RACK's reordering timer waits
    # a quarter of min_rtt, 12.5 ms).
    clock, s, sent = _probing_sender(1000.0)
    clock.schedule(0.06, s.on_ack, (5, blocks))
    clock.run(until=0.061)
    assert not s.in_recovery
    assert s.tlp.armed is probe
    # Open: PTO = 2·SRTT + 2 ms (several in flight), SRTT 50 ms then one 10 ms sample
    # (segment 4 went at 0.05 s; RFC 6298: 7/8·50 + 1/8·10); Disorder: the RTO
    srtt = 0.875 * 0.05 + 0.125 * 0.01
    span = 2 * srtt + 0.002 if probe else s.rtt.rto
    assert s.timer.deadline == pytest.approx(0.06 + span, rel=1e-12)


@pytest.mark.parametrize("dsack,reduced", [(False, True), (True, False)])
def test_a_probe_that_repaired_nothing_reduces_nothing(dsack, reduced):
    # RFC 8985 §7.4: the probe resent the last segment (the receive window of 4 lets
    # no new data out).
    # If the ACK that covers it reports it as a duplicate (D-SACK), the original had
    # arrived and there was no loss; otherwise the probe repaired a tail loss, and the
    # window is reduced once (Linux: CWR, then cwnd = ssthresh).
    clock, s, sent = _probing_sender(4.0)  # 4 + 4 segments, the second four unacknowledged
    clock.run(until=0.16)
    assert s.tlp.probes == 1 and sent[-1][1] == 7  # the last segment again
    grown = s.cc.cwnd + 4  # slow start: the ACK of four segments adds four
    clock.schedule(0.17, s.on_ack, (8, ((7, 8),) if dsack else ()))
    clock.run(until=0.18)
    assert (s.recoveries == 1) is reduced
    assert s.cc.cwnd == (grown * s.cc.beta if reduced else grown)


def test_duplicate_segments_are_reported_as_dsack():
    from ccsim.packet.clock import Clock
    from ccsim.packet.receiver import Receiver

    clock = Clock()
    rx = Receiver(sack=True, dsack=True, delayed_ack=False, ack_delay=0.04, back=0.0,
                  clock=clock, deliver_ack=None, n_bins=1, bin_width=1.0)
    for seq in (0, 1, 3, 1, 3):
        rx.receive(seq, 0.0)
    acks = [e[3] for e in sorted(clock.heap, key=lambda e: e[1])]
    # RFC 2883: the duplicate's block first, below the cumulative ACK (1) or inside a SACK
    # block (3); then the ordinary SACK blocks
    assert acks[3] == (2, ((1, 2), (3, 4)))
    assert acks[4] == (2, ((3, 4), (3, 4)))
