"""The connection handshake (``Scenario.handshake``): SYN across the flow's
links, SYN-ACK back, the first window one RTT after the start, the SYN's
RTT as the estimator's first sample, a dropped SYN sent again."""

from __future__ import annotations

import pytest

import ccsim
from ccsim.packet.engine import PacketEngine

RATE = 10e6
SYN_TIME = 40 * 8 / RATE  # a SYN is ``header`` (40) bytes at the 10 Mbit/s bottleneck


def _first_sends(sc):
    ev = ccsim.run(sc, events=True).events
    sent = ev[ev["event"] == "sent"]
    return [float(sent[sent["flow"] == f]["time"].min()) for f in range(len(sc.flows))]


def _together(n, **knobs):
    return ccsim.dumbbell("10Mbps", "50ms", buffer=100, duration="0.3s", start_jitter=0,
                          flows=["reno"] * n, **knobs)


def test_flows_opened_together_send_one_syn_time_apart():
    # Their SYNs reach the bottleneck together and leave it one SYN time apart; each
    # SYN-ACK comes back one base RTT after its SYN left, and the first window follows.
    sc = _together(3, handshake=True)
    first = _first_sends(sc)
    assert first[0] == pytest.approx(sc.flow_rtt(0) + SYN_TIME, rel=1e-9)
    assert [b - a for a, b in zip(first, first[1:])] == pytest.approx([SYN_TIME] * 2, rel=1e-6)
    # without it (Linux's profile, for now) every flow sends at its start
    assert _first_sends(_together(3)) == [0.0, 0.0, 0.0]


def test_the_ns3_profile_opens_with_a_handshake():
    assert _first_sends(_together(1, stack="ns3"))[0] > 0.05  # one RTT (50 ms) late
    assert _first_sends(_together(1, stack="ns2"))[0] == 0.0


def test_the_syn_rtt_is_the_first_sample():
    # ns-3's DoForwardUp runs EstimateRtt on the SYN-ACK; Linux's tcp_ack on the
    # SYN-ACK samples the SYN (tcp_clean_rtx_queue): SRTT = that RTT, RTTVAR half of it.
    sc = _together(1, handshake=True)
    engine = PacketEngine(sc)
    s = engine.senders[0]
    rtt = sc.flow_rtt(0) + SYN_TIME
    engine.clock.run(until=rtt - 1e-6)
    assert not s.started and s.rtt.rtt_count == 0
    engine.clock.run(until=rtt + 1e-6)
    assert s.started and s.rtt.rtt_count == 1
    assert s.rtt.srtt == pytest.approx(rtt, rel=1e-9)
    assert s.rtt.rttvar == pytest.approx(rtt / 2, rel=1e-9)


def test_a_dropped_syn_is_sent_again_after_the_initial_rto_without_a_sample():
    # A UDP source at twice the bottleneck's rate keeps its 5-packet queue full until
    # 0.5 s: the SYN sent at 0.1 s is dropped, sent again initial_rto (1 s, ns-3's and
    # Linux's connection timer) later, and that one goes through. Karn: a SYN sent
    # again gives no sample.
    sc = ccsim.dumbbell("10Mbps", "50ms", buffer=5, duration="1.5s", start_jitter=0,
                        handshake=True,
                        flows=[ccsim.CBR("20Mbps", stop=0.5), ccsim.Flow("reno", start=0.1)])
    engine = PacketEngine(sc)
    s = engine.senders[1]
    engine.clock.run(until=1.1 + sc.flow_rtt(1) - 1e-6)
    assert not s.started
    engine.clock.run(until=1.1 + sc.flow_rtt(1) + SYN_TIME + 1e-6)
    assert s.started and s.rtt.rtt_count == 0


def test_the_fluid_engine_refuses_a_handshake_by_name():
    sc = _together(1, handshake=True)
    with pytest.raises(ccsim.errors.ScenarioError, match="handshake"):
        ccsim.run(sc, mode="fluid")


def test_handshake_must_be_a_bool():
    with pytest.raises(ccsim.errors.ScenarioTypeError, match="handshake"):
        _together(1, handshake="yes")


@pytest.mark.parametrize("kind", ["two-way", "fq_codel"])
def test_the_syn_crosses_reverse_queues_and_schedulers_too(kind):
    # Two ways, the SYN-ACK is an ACK through the reverse queues; behind a scheduler the
    # SYN is one of its packets. Either way the flows still open one SYN time apart (the
    # bottleneck serialises the SYNs; nothing else is queued yet).
    if kind == "two-way":
        sc = _together(2, handshake=True).replace(
            flows=(ccsim.Flow("reno"), ccsim.Flow("reno", reverse=True)))
        first = _first_sends(sc)
        # opposite directions, no shared queue: both one RTT late, plus the SYN's time
        # forward and the SYN-ACK's (an ACK's ``header`` bytes) back
        assert first == pytest.approx([sc.flow_rtt(0) + 2 * SYN_TIME] * 2, rel=1e-9)
    else:
        sc = ccsim.dumbbell("10Mbps", "50ms", queue="fq_codel", buffer=50, duration="0.3s",
                            start_jitter=0, flows=["reno"] * 2, handshake=True)
        first = _first_sends(sc)
        assert first[0] == pytest.approx(sc.flow_rtt(0) + SYN_TIME, rel=1e-9)
        assert first[1] - first[0] == pytest.approx(SYN_TIME, rel=1e-6)
