"""The host queue in front of a sender's NIC (``Flow.access_buffer``,
``access={"rate": ..., "buffer": ...}``): bounded, its overflow a local
congestion signal (a 2011 Linux kernel's ``tcp_enter_cwr`` on a full qdisc),
its waiting part of the RTT the sender measures."""

from __future__ import annotations

import pytest

import ccsim
from ccsim import Flow, ScenarioError, ScenarioTypeError
from ccsim.packet import PacketEngine
from ccsim.packet.tcp import Sender

EXACT = {"start_jitter": 0, "ack_jitter": 0}  # the timing exactly as given


def burst(initial_window, buffer):
    """One Reno flow whose first window goes at once into a host queue of
    ``buffer`` packets behind a NIC at the bottleneck's rate, its receiver
    window that first window (so that no later burst can fill the queue:
    the path holds 16.7 packets); its sender after 0.2 s."""
    sc = ccsim.dumbbell("10Mbps", "20ms", buffer=100, duration="0.2s",
                        access={"rate": "1x", "buffer": buffer}, flows=["reno"],
                        initial_window=initial_window, rwnd=initial_window * 1460, **EXACT)
    engine = PacketEngine(sc)
    res = engine.run()
    return engine.senders[0], res


def test_a_burst_the_host_queue_holds_is_no_signal_one_more_is():
    # the queue holds `buffer` waiting and the one the NIC sends: a burst of
    # buffer + 1 fits, buffer + 2 finds it full (an off-by-one either way fails)
    fits, _ = burst(11, 10)
    assert fits.local_reductions == 0 and fits.cc.ssthresh == float("inf")
    over, res = burst(12, 10)
    assert over.local_reductions == 1  # once per window, however many found it full
    # the window is cut as a fast loss would cut it (Reno: half of the 12 in flight,
    # PRR's law rule), and nothing is lost or resent: the refused segment waited
    assert over.cc.ssthresh == 6.0
    assert over.cc.cwnd >= over.cc.ssthresh
    assert (over.retransmits, over.timeouts, over.recoveries) == (0, 0, 0)
    assert res.metrics["drops"] == 0
    # the whole burst was delivered, the refused segment with it
    assert over.snd_una > 12


def test_an_unbounded_host_queue_gives_no_signal():
    sc = ccsim.dumbbell("10Mbps", "20ms", buffer=100, duration="0.2s", access="1x",
                        flows=["reno"], initial_window=40, **EXACT)
    engine = PacketEngine(sc)
    engine.run()
    assert engine.senders[0].local_reductions == 0
    assert engine.senders[0].cc.ssthresh == float("inf")


def test_the_rtt_includes_the_host_queue_and_the_bottleneck_stays_empty():
    # a lone flow behind a NIC at the bottleneck's rate queues at its own host,
    # not at the bottleneck: Illinois' largest RTT sample is the base RTT plus
    # the host queue's waiting (buffer packet times), and the bottleneck's
    # backlog stays at most one packet (arrivals exactly at its drain rate)
    buffer = 50
    sc = ccsim.dumbbell("10Mbps", "10ms", buffer=200, duration="6s",
                        access={"rate": "1x", "buffer": buffer}, flows=["illinois"], **EXACT)
    engine = PacketEngine(sc)
    res = engine.run()
    tx = sc.packet_size * 8.0 / 1e7
    cc = engine.senders[0].cc
    assert engine.senders[0].local_reductions >= 1
    # base: 10 ms, the bottleneck's and the NIC's packet times, and one more when
    # the least sample is a segment that followed another out of the NIC
    assert 0.01 + 2 * tx - 1e-12 <= cc.base_rtt <= 0.01 + 3 * tx + 1e-12
    # the host queue's wait is in the samples: up to `buffer` waiting and one in
    # service ahead of a segment, and the few that one ACK releases in slow start
    # (4 with delayed ACKs) handed over at the instant the queue was found full
    # (the sender hears of it after that send), each its own NIC packet time
    assert 0.01 + (buffer - 1) * tx < cc.max_rtt <= 0.01 + (buffer + 6) * tx
    assert engine.queue.max() <= 1  # sampled every trace interval
    assert res.metrics["drops"] == 0
    # an unbounded host queue: the same flow's RTT grows past that, never signalled
    unbounded = PacketEngine(sc.replace(access="1x"))
    unbounded.run()
    assert unbounded.senders[0].cc.max_rtt > 0.01 + 2 * buffer * tx


def test_the_reference_sender_agrees_bit_for_bit():
    sc = ccsim.dumbbell("100Mbps", "1ms", buffer=100, duration="3s", seed=2,
                        access={"rate": "1x", "buffer": 200},
                        flows=["illinois", Flow("bic", start=1.0)])
    fast = PacketEngine(sc).run()
    reference = PacketEngine(sc, sender_class=Sender).run()
    assert fast.summary.equals(reference.summary)
    assert fast.traces.equals(reference.traces)


def test_deterministic_across_runs_and_workers():
    scs = [ccsim.dumbbell("100Mbps", "1ms", buffer=100, duration="2s", seed=s,
                          access={"rate": "1x", "buffer": 300},
                          flows=["reno", Flow("cubic", start=0.5)]) for s in (1, 2)]
    one = ccsim.sweep(scs, workers=1)
    two = ccsim.sweep(scs, workers=2)  # a real process pool
    cols = ["goodput_bps", "retransmits", "timeouts", "mean_rtt"]
    assert one[cols].equals(two[cols])
    assert ccsim.run(scs[0]).summary.equals(ccsim.run(scs[0]).summary)


def test_the_host_queue_travels_with_the_scenario():
    sc = ccsim.dumbbell("10Mbps", "20ms", flows=["reno", "cubic"],
                        access=[{"rate": "1x", "buffer": 1000}, "10x"])
    assert [f.access_buffer for f in sc.flows] == [1000, None]
    assert [f.access_rate for f in sc.flows] == [1e7, 1e8]
    back = ccsim.Scenario.from_dict(sc.to_dict())
    assert back == sc
    # a scenario without one serialises as before: no new key
    assert "access_buffer" not in ccsim.dumbbell("10Mbps", "20ms").to_dict()["flows"][0]
    # re-built at a new bandwidth, the default NIC follows it with its queue kept
    wider = ccsim.dumbbell("10Mbps", "20ms", access={"rate": "10x", "buffer": 7}).replace(
        bandwidth="20Mbps")
    assert [(f.access_rate, f.access_buffer) for f in wider.flows] == [(2e8, 7)] * 2
    # a flow's own queue stays
    own = ccsim.dumbbell("10Mbps", "20ms", access="1x",
                         flows=[Flow("reno", access_rate="10Mbps", access_buffer=5)])
    assert own.flows[0].access_buffer == 5


@pytest.mark.parametrize("buffer", [0, -3, 1.5, True, "1000", float("inf"), float("nan")])
def test_a_bad_host_queue_is_refused_by_name(buffer):
    with pytest.raises(ScenarioError, match=r"access\.buffer=.*whole number of packets"):
        ccsim.dumbbell("10Mbps", "20ms", access={"rate": "1x", "buffer": buffer})
    with pytest.raises(ScenarioError, match=r"flow\.access_buffer=.*whole number of packets"):
        Flow("reno", access_rate="10Mbps", access_buffer=buffer)


def test_a_host_queue_needs_a_nic():
    with pytest.raises(ScenarioError, match=r"access\.buffer=10: None for infinitely fast"):
        ccsim.dumbbell("10Mbps", "20ms", access={"rate": None, "buffer": 10})
    with pytest.raises(ScenarioError, match=r"flow\.access_buffer=10: None for a host without"):
        Flow("reno", access_buffer=10)
    with pytest.raises(ScenarioTypeError, match="access keys: rate, delay, buffer, jitter"):
        ccsim.dumbbell("10Mbps", "20ms", access={"rate": "1x", "queue": 10})


def test_the_fluid_engine_refuses_a_host_queue():
    sc = ccsim.dumbbell("10Mbps", "20ms", duration="1s", access={"rate": "1x", "buffer": 10})
    with pytest.raises(ScenarioError, match=r"flows\[0\]\.access_buffer=10: None .* fluid"):
        ccsim.run(sc, mode="fluid")


def test_the_nic_jitter_delays_each_packet_by_its_draw_none_overtaking():
    # the NIC's rule at the packet level: a packet leaves the NIC one packet
    # time (1 s here) after the one before, reaches the link its draw times the
    # jitter later, and never before the packet ahead of it
    from ccsim.packet.clock import Clock
    from ccsim.packet.engine import _nic_transmit

    clock = Clock()
    clock.schedule(100.0, lambda _: None, None)  # a later event: hand packets over at once
    arrived = []
    draws = iter([0.9, 0.1, 0.5, 0.0])
    transmit = _nic_transmit(clock, lambda seq, t: arrived.append((seq, t)), 1.0, 0.25, 0.0,
                             None, True, jitter=2.0, jitter_draw=lambda: next(draws))
    for seq in range(4):
        transmit(seq, 0.0)  # a burst: the NIC sends them at 1, 2, 3, 4 s
    # 1 + 0.25 + 1.8; 2.25 + 0.2 is earlier, so behind it; 3.25 + 1.0; 4.25 + 0
    assert arrived == [(0, 3.05), (1, 3.05), (2, 4.25), (3, 4.25)]


def phase_pair(jitter, seed=1):
    """Reno then Reno, each behind a NIC at the bottleneck's rate with a
    100-packet host queue, the second 2 s after the first: the second's
    share while both run."""
    sc = ccsim.dumbbell("10Mbps", "2ms", buffer=20, duration="14s", seed=seed,
                        access={"rate": "1x", "buffer": 100, "jitter": jitter},
                        flows=["reno", Flow("reno", start=2.0)])
    return ccsim.run(sc).summary.share.iloc[1]


def test_a_nic_at_the_links_exact_rate_locks_in_phase_and_jitter_breaks_it():
    # the first flow's backlogged NIC feeds the bottleneck exactly at its rate:
    # with exact timing each of its packets arrives as a departure frees a slot
    # and takes it, and the second flow's find the queue full (Floyd & Jacobson's
    # phase effect); one NIC packet time of jitter lets the second flow share
    tx = 1500 * 8 / 10e6
    assert phase_pair(0.0) < 0.02
    assert phase_pair(tx) > 0.3


def test_nic_jitter_is_seeded_and_validated():
    sc = ccsim.dumbbell("10Mbps", "20ms", access={"rate": "1x", "jitter": "0.1ms"})
    assert [f.access_jitter for f in sc.flows] == [1e-4, 1e-4]
    assert ccsim.Scenario.from_dict(sc.to_dict()) == sc
    assert "access_jitter" not in ccsim.dumbbell("10Mbps", "20ms").to_dict()["flows"][0]
    short = sc.replace(duration="1s")
    assert ccsim.run(short).summary.equals(ccsim.run(short).summary)
    assert not ccsim.run(short).summary.equals(ccsim.run(short.replace(seed=5)).summary)
    for bad in (-1e-3, float("inf"), float("nan")):
        with pytest.raises(ScenarioError, match=r"access\.jitter="):
            ccsim.dumbbell("10Mbps", "20ms", access={"rate": "1x", "jitter": bad})
    with pytest.raises(ScenarioError, match=r"access\.jitter=0\.001: 0 for infinitely fast"):
        ccsim.dumbbell("10Mbps", "20ms", access={"rate": None, "jitter": "1ms"})
    with pytest.raises(ScenarioError, match=r"flow\.access_jitter=.*0 for a host without"):
        Flow("reno", access_jitter="1ms")
    with pytest.raises(ScenarioError, match=r"flows\[0\]\.access_jitter=.* fluid"):
        ccsim.run(sc.replace(duration="1s"), mode="fluid")


def test_one_local_reduction_per_window_and_none_in_recovery():
    # tcp_enter_cwr acts only from the Open or Disorder state: once per window of
    # data (the CWR state ECN echoes share) and not in loss recovery
    sc = ccsim.dumbbell("10Mbps", "20ms", access={"rate": "1x", "buffer": 100},
                        flows=["reno"], initial_window=10, **EXACT)
    sender = PacketEngine(sc).senders[0]
    sender.start()  # the first window goes out; nothing is acknowledged yet
    sender.local_congestion()
    assert sender.local_reductions == 1 and sender.cc.cwnd == sender.cc.ssthresh == 5.0
    sender.local_congestion()  # the same window: no second reduction
    assert sender.local_reductions == 1 and sender.cc.cwnd == 5.0
    sender.ecn.cwr_high = 0  # as if that window had been acknowledged
    sender.in_recovery = True
    sender.local_congestion()
    assert sender.local_reductions == 1 and sender.cc.cwnd == 5.0
    sender.in_recovery = False
    sender.local_congestion()
    assert sender.local_reductions == 2 and sender.cc.cwnd < 5.0
