"""ECN (RFC 3168) and DCTCP (RFC 8257): marking queues, the receiver's echo,
the sender's once-per-window reaction, and DCTCP's law against its theory."""

from __future__ import annotations

import math

import numpy as np
import pytest
import ccsim
from ccsim.algorithms import Ack, EcnEcho
from ccsim.algorithms.dctcp import DCTCP
from ccsim.algorithms.reno import Reno
from ccsim.packet.clock import Clock
from ccsim.packet.receiver import Receiver
from ccsim.packet.tcp import Sender
from ccsim.recovery.reno import RenoRecovery


def _sender(clock, sent):
    s = Sender(Reno(), RenoRecovery(), clock=clock,
               transmit=lambda seq, now: sent.append(seq),
               initial_window=10, mss=1460, rwnd=math.inf, min_rto=0.2, initial_rto=1.0,
               max_rto=60.0, end_seq=math.inf)
    s.start()
    return s


def test_sender_reduces_at_most_once_per_window_of_marked_acks():
    # RFC 3168 §6.1.2: on an ECN echo, halve (RFC 5681 eq. 4 from the flight) with
    # no retransmission, and not again until the data outstanding at that
    # reduction (below high_tx then) is acknowledged.
    clock, sent = Clock(), []
    s = _sender(clock, sent)
    assert sent == list(range(10))
    s.on_ack_ce((1, (), 1))  # marked: reduce, flight 10 -> ssthresh 5, cwnd 5
    # (then the ACK's own growth in congestion avoidance: + 1/cwnd)
    assert s.ecn.reductions == 1 and s.cc.ssthresh == 5.0 and s.cc.cwnd == 5.0 + 1 / 5.0
    high = s.ecn.cwr_high
    assert high == 10 and s.retransmits == 0
    for ackno in range(2, high):  # every ACK marked, none past the window
        s.on_ack_ce((ackno, (), 1))
        assert s.ecn.reductions == 1
    assert s.cc.cwnd > 5.0  # congestion avoidance went on (Reno's +1/cwnd)
    flight = s.snd_nxt - s.snd_una
    w = s.cc.cwnd
    s.on_ack_ce((high, (), 2))  # the window of the first reduction is acknowledged
    assert s.ecn.reductions == 2 and s.cc.ssthresh == max(flight / 2.0, 2.0)
    assert s.cc.cwnd == pytest.approx(s.cc.ssthresh + 1 / s.cc.ssthresh) and s.cc.cwnd < w
    assert s.retransmits == 0 and s.ecn.marked == 1 + 8 + 2


def test_no_reaction_to_marks_during_loss_recovery():
    clock, sent = Clock(), []
    s = _sender(clock, sent)
    s.on_ack((1, ()))
    for _ in range(3):
        s.on_ack((1, ()))  # third duplicate: fast retransmit, recovery
    assert s.in_recovery
    ssthresh = s.cc.ssthresh
    s.on_ack_ce((1, (), 1))
    assert s.ecn.reductions == 0 and s.cc.ssthresh == ssthresh


def test_receiver_echoes_the_marked_segments_each_ack_covers():
    clock, acks = Clock(), []
    r = Receiver(sack=False, delayed_ack=True, ack_delay=0.04, back=0.0, clock=clock,
                 deliver_ack=acks.append, n_bins=1, bin_width=1.0)
    r.deliver_ce = acks.append
    r.receive(0, 0.0)
    r.receive_ce(1, 0.001)   # one ACK covers 0 and 1, one of them marked
    r.receive_ce(2, 0.002)
    r.receive_ce(3, 0.003)   # the next covers 2 and 3, both marked
    r.receive(4, 0.004)
    r.receive(5, 0.005)      # unmarked
    r.receive(6, 0.010)
    clock.run(until=0.09)    # the ACK held for 6 leaves at 0.05
    r.receive_ce(7, 0.100)
    clock.run(until=0.2)     # 7's delayed ACK carries its mark
    assert acks == [(2, (), 1), (4, (), 2), (6, ()), (7, ()), (8, (), 1)]


@pytest.mark.slow
@pytest.mark.parametrize("queue", [ccsim.StepMark(K=5, limit=200),
                                   ccsim.RED(limit=200, ecn=True),
                                   ccsim.CoDel(limit=200, ecn=True),
                                   # PIE drops ECN-capable packets too once p > 10 %: 455
                                   # of the ECN flow's against 463 of the plain flow's (seed 1;
                                   # 567 against 489 when the ECN reaction halved FlightSize,
                                   # before the Linux stack's took the window)
                                   ccsim.PIE(limit=200, ecn=True)])
def test_marks_for_ecn_capable_flows_drops_for_the_others(queue):
    def run(ecn):
        # an ACK per segment (with the Linux stack's delayed ACKs the echoes come later;
        # PIE then drops 457 of the ECN flow's packets against 477, seed 1: docs/stack.md)
        sc = ccsim.dumbbell("20Mbps", "20ms", queue=queue, buffer=None, duration="20s",
                            flows=[ccsim.Flow("reno", ecn=ecn, start=0.0)], seed=1,
                            delayed_ack=False)
        return ccsim.run(sc).metrics
    plain, capable = run(False), run(True)
    assert plain["drops"] > 0 and "marks" not in plain  # nothing marked: no marks column
    # marked instead of dropped once running (the drops left are slow start's
    # overshoot into the full buffer)
    assert capable["marks"] > 0 and capable["drops"] < plain["drops"]


def test_a_non_ecn_flow_through_a_marking_queue_is_dropped_not_marked():
    sc = ccsim.dumbbell("20Mbps", "20ms", queue=ccsim.StepMark(K=5, limit=200), buffer=None,
                        flows=["dctcp", ccsim.Flow("reno", start=1.0)], duration="5s", seed=1)
    engine = ccsim.packet.PacketEngine(sc)
    engine.run()
    dctcp, reno = engine.senders
    assert dctcp.ecn.marked > 0 and reno.ecn.marked == 0 and reno.retransmits > 0
    assert dctcp.retransmits == 0


def test_default_ecn_reaction_is_a_losss_window_without_recovery():
    # CongestionControl.on_ecn: ssthresh as on_loss sets it for a fast
    # retransmit, cwnd = ssthresh (RFC 3168 §6.1.2).
    cc = ccsim.algorithms.get("cubic")()
    cc.start(10, 1460)
    cc.cwnd = 40.0
    ref = ccsim.algorithms.get("cubic")()
    ref.start(10, 1460)
    ref.cwnd = 40.0
    from ccsim.algorithms import Loss
    ref.on_loss(Loss(1.0, "fast", 40.0, 0.02, 0.02))
    cc.on_ecn(EcnEcho(1.0, 1, 1, 100.0, 40.0, 0.02, 0.02))
    assert cc.ssthresh == ref.ssthresh and cc.cwnd == ref.ssthresh == 40.0 * 717 / 1024


@pytest.mark.parametrize("loss_flight", ["cwnd", "flight"])
def test_the_default_ecn_reaction_halves_the_stacks_flight_at_a_loss(loss_flight):
    # Linux's tcp_enter_cwr calls ssthresh() on snd_cwnd (tcp_init_cwnd_reduction):
    # with loss_flight="cwnd" (the Linux stack's) Reno's reaction halves the
    # window; with "flight" it halves FlightSize, whole segments sent and not
    # acknowledged, which misses the window's fraction.
    sc = ccsim.dumbbell("20Mbps", "20ms", queue=ccsim.StepMark(K=5, limit=200), buffer=None,
                        flows=[ccsim.Flow("reno", ecn=True)], duration="3s", seed=1,
                        loss_flight=loss_flight)
    engine = ccsim.packet.PacketEngine(sc)
    sender = engine.senders[0]
    seen, original = [], sender.cc.on_ecn

    def spy(echo):
        before = (sender.cc.cwnd, float(sender.snd_nxt - sender.snd_una))
        original(echo)
        seen.append((*before, sender.cc.ssthresh))

    sender.cc.on_ecn = spy
    engine.run()
    assert len(seen) > 3 and sender.retransmits == 0
    fractional = [s for s in seen if s[0] != s[1]]
    assert fractional  # the window has a fraction FlightSize has not
    for cwnd, flight, ssthresh in seen:
        assert ssthresh == max((cwnd if loss_flight == "cwnd" else flight) / 2, 2.0)


# -- DCTCP -----------------------------------------------------------------------------
def test_dctcp_alpha_follows_the_ewma_once_per_window():
    # RFC 8257 §3.3: at the end of each window of data, alpha = (1 − g) alpha + g F,
    # F the fraction of its segments marked; on marks, cwnd = cwnd (1 − alpha/2).
    g = 1.0 / 16.0
    cc = DCTCP()
    cc.start(10, 1460)
    assert cc.alpha == 1.0  # Linux's dctcp_alpha_on_init: 1024/1024
    cc.on_ack(Ack(0.0, 1, 0.01, 0.01, 0.01, 10.0, 0.0, None))  # closes the empty first window
    alpha = 1.0 - g
    assert cc.alpha == pytest.approx(alpha)
    marks = [0, 3, 10, 0, 5, 1]
    for j, m in enumerate(marks, start=1):  # windows of 10 segments, two ACKs each
        cc.on_ce_echo(EcnEcho(0.0, m, 0, 0.0, 10.0, 0.01, 0.01)) if m else None
        cc.on_ack(Ack(0.0, 5, 0.01, 0.01, 0.01, 15.0, 10.0 * j - 5, None))
        assert cc.window_end == 10.0 * j
        assert cc.alpha == pytest.approx(alpha, rel=1e-12)  # mid-window: unchanged
        cc.on_ack(Ack(0.0, 5, 0.01, 0.01, 0.01, 10.0, 10.0 * j, None))
        alpha = (1 - g) * alpha + g * m / 10.0
        assert cc.alpha == pytest.approx(alpha, rel=1e-12)
    w = cc.cwnd
    cc.on_ecn(EcnEcho(0.0, 1, 1, 60.0, 10.0, 0.01, 0.01))
    assert cc.cwnd == cc.ssthresh == pytest.approx(max(w * (1 - alpha / 2), 2.0))


def _dctcp_queue(n, K, rtt, duration="5s"):
    # an ACK per segment, as the analysis has it (Linux's DCTCP receiver ACKs at once on each
    # change of CE state, which ccsim's delayed ACKs do not model)
    sc = ccsim.dumbbell(100e6, rtt, queue=ccsim.StepMark(K=K, limit=400), buffer=None,
                        flows=["dctcp"] * n, duration=duration, seed=1, trace_interval=0.0005,
                        delayed_ack=False)
    r = ccsim.run(sc)
    s = r.series("queue")
    g = r.series("goodput")
    steady = float(g[g.index > 1.0].sum(axis=1).mean()) / 100e6 * 1500 / 1460  # of the link
    return s["queue"].to_numpy()[s.index.to_numpy() > 1.0], steady, r


@pytest.mark.parametrize("n", [1, 2])
def test_dctcp_queue_holds_the_theorys_sawtooth_around_k(n):
    # Alizadeh et al. 2010 §3.3 (N synchronised flows, window W* = (C·RTT + K)/N at
    # the peak): alpha ≈ sqrt(2/W*), each flow cuts D = W*·alpha/2 ≈ sqrt(W*/2)
    # per period, so the queue swings by A = N·D = ½·sqrt(2N(C·RTT + K)) below
    # Q_max = K + N (the marks take one RTT, in which each flow adds a packet).
    # 100 Mbit/s, 1 ms: C·RTT = 8.3 packets, K = 20. Band: [Q_max − A − 2, Q_max + 1]
    # packets — 1 because ccsim's backlog leaves out the packet in service, 1 for
    # whole packets against the analysis's fluid sawtooth; 1st percentile for the
    # low end (rare cycles where the flows' cuts coincide).
    K, bdp = 20, 100e6 * 1e-3 / (1500 * 8)
    q, steady, r = _dctcp_queue(n, K, 1e-3)
    q_max = K + n
    amplitude = 0.5 * math.sqrt(2 * n * (bdp + K))
    assert np.percentile(q, 1) >= q_max - amplitude - 2
    assert q.max() <= q_max + 1
    assert abs(np.median(q) - K) <= 2
    assert r.metrics["drops"] == 0 and r.summary["timeouts"].sum() == 0


def test_dctcp_fills_the_link_when_k_exceeds_a_seventh_of_the_bdp():
    # Alizadeh et al. 2010 §3.3: Q_min > 0, hence full utilisation, for
    # K > C·RTT/7 (here C·RTT/7 = 9.5 packets at 100 Mbit/s, 8 ms). K = 20
    # fills the link (≥ 99 %, sampled after the first second); K = 1 leaves it
    # idle at each cut (measured 97 %).
    _, full, _ = _dctcp_queue(1, 20, 8e-3, "4s")
    _, short, _ = _dctcp_queue(1, 1, 8e-3, "4s")
    assert full >= 0.99 and short < 0.985
