"""The fluid engine at windows of a few segments, against the packet engine.

On a slow link a few segments fill the path, and what the packet engine's
path does to each packet is a sizeable part of the RTT: every link's
transmission time (store and forward; 8 ms per packet at 1.5 Mbit/s), the
receiving delay (``Scenario.ack_wait``), and delayed ACKs, whose pairs and
40 ms timer slow the ACK clock of a window that does not fill the link
(RFC 1122 §4.2.3.2, RFC 5681 §4.2). With random loss, Linux's RACK (RFC 8985
§6.2) resends a lost retransmission within the recovery where RFC 6675's SACK
recovery needs the timer. Zhang & Bian's 1.5 Mbit/s, 50 ms path, 10-packet
buffer, is the reference; each packet run takes a fraction of a second.
"""

import numpy as np
import pytest

import ccsim
from ccsim.fluid.bottleneck import _train_tail


def _path(**kw):
    return ccsim.dumbbell("1.5Mbps", "50ms", buffer=10, **kw)


def _util(sc, mode):
    return ccsim.run(sc, mode=mode).metrics["utilisation"]


@pytest.mark.slow
@pytest.mark.parametrize("window", [1, 2, 3, 5])
@pytest.mark.parametrize("delayed_ack", [False, True])
def test_a_window_limited_flow_sends_at_the_packet_engines_rate(window, delayed_ack):
    """A receiver window of ``window`` segments below the path's 7 keeps the
    link idle part of each RTT, so the rate is the window over the ACK
    clock's round: 5 % apart at most. Without the packet times and the
    receiving delay in its RTT the fluid flow sent 6-16 % faster; without the
    held ACKs, 11-22 % faster with delayed ACKs. (The packet engine's odd
    windows sometimes pair their last segment with the next train: measured
    3.4 % slower than the fluid rule at 5 segments.)"""
    sc = _path(duration="10s", seed=1, flows=["reno"], rwnd=window * 1460,
               delayed_ack=delayed_ack)
    packet, fluid = _util(sc, "packet"), _util(sc, "fluid")
    assert abs(fluid / packet - 1.0) < 0.05, (packet, fluid)


@pytest.mark.slow
def test_reno_alone_at_five_percent_loss_within_the_packet_engines_seed_spread():
    """Padhye et al. 1998's regime: windows of 4-7 segments, a loss every few
    RTTs. Means over seeds 1-3 within 8 % (the packet engine's own seeds spread
    by ±8 % here); the fluid model read 0.73 against 0.54 before its RTT had
    the path's packet times and its ACK clock the delayed ACKs, and 0.584
    against 0.520 (12 % high) while its windows grew a segment per RTT where
    delayed ACKs stretch the round of ACKs that grows them (a loss cycle 0.36 s
    long against the packet engine's 0.43 s); 0.539 since (4 % high)."""
    seeds = (1, 2, 3)
    runs = {mode: [_util(_path(loss=0.05, duration="30s", seed=s, flows=["reno"]), mode)
                   for s in seeds] for mode in ("packet", "fluid")}
    packet, fluid = (sum(runs[m]) / len(seeds) for m in ("packet", "fluid"))
    assert abs(fluid / packet - 1.0) < 0.08, runs


@pytest.mark.slow
def test_rack_resends_a_lost_retransmission_without_the_timer():
    """At 5 % loss about one fast retransmission in twenty is lost again.
    Under Linux's PRR with RACK the packet engine resends it within the
    recovery (0-1 timeouts per 30 s); under RFC 6675's SACK recovery only the
    timer repairs it (6-11). The fluid engine keeps the difference: fewer
    than half of SACK's timeouts under RACK, where it had 6-11 for both."""
    def timeouts(recovery):
        return sum(int(ccsim.run(_path(loss=0.05, duration="30s", seed=s,
                                       flows=[ccsim.Flow("reno", recovery=recovery)]),
                                 mode="fluid").summary.timeouts.iloc[0])
                   for s in (1, 2, 3))

    rack, sack = timeouts("prr"), timeouts("sack")
    assert sack >= 6, sack  # lost retransmissions still cost the timer without RACK
    assert rack < sack / 2, (rack, sack)


def test_a_held_ack_clock_slows_a_windows_growth():
    """RFC 5681 §3.1: a window grows per acknowledged segment, so where delayed
    ACKs hold a flow's ACK clock to ``hold`` of ``window/RTT``, a step's growth
    is its law's over ``hold`` of the step: in congestion avoidance the
    growth times ``hold``, in slow start the multiplication to the power
    ``hold``. A paced law (BBR) sets its window from its estimates and is left
    alone. Without the rule the fluid Reno at 5 % loss grew a segment per RTT
    where the packet engine's round is longer (12 % high, above)."""
    import numpy as np

    from ccsim.fluid.engine import FluidEngine

    e = FluidEngine([_path(duration="1s", seed=1, flows=["reno", "reno", "bbr"])],
                    traces=False)
    paced = ~e.ack_clocked
    assert paced.sum() == 1  # the BBR flow
    reno = np.flatnonzero(e.ack_clocked)
    e.hold[:] = 0.8
    e.ssthresh[reno] = [2.0, 100.0]            # congestion avoidance, slow start
    e.ssthresh[paced] = 2.0
    before = np.full(3, 4.0)
    cwnd = before.copy()
    cwnd[reno] = [4.5, 8.0]                    # half a segment; a doubling
    cwnd[paced] = 4.5
    grown = cwnd - before
    e._held_growth(cwnd, grown)
    assert cwnd[reno] == pytest.approx([4.0 + 0.5 * 0.8, 4.0 * 2.0 ** 0.8])
    assert grown[reno] == pytest.approx(cwnd[reno] - 4.0)
    assert cwnd[paced] == [4.5]


def _three_packets(seed, **kw):
    """NewReno and SACK behind a 3-packet buffer at 5 Mbit/s, 80 ms: a path
    of 33 packets whose windows never fill it in the packet engine."""
    return ccsim.dumbbell("5Mbps", "80ms", buffer=3, flows=["newreno", "sack"],
                          duration="15s", seed=seed, **kw)


@pytest.mark.slow
def test_the_receiving_delays_spread_loses_packets_behind_three_packets():
    """The packet engine delays each segment at its receiver by a uniform
    time up to ``ack_wait`` (one packet time here), so behind delayed ACKs a
    burst comes up to a packet time early and meets the tail of the one
    ahead: with two flows a growth segment then finds four packets in a
    3-packet buffer, and the windows stop well short of pipe and buffer.
    Without the spread (``ack_jitter=0``) they fill them, as the fluid
    flows do. Measured 0.54 against 0.73 (seeds 1-3); a tenth is about half
    the difference, clear of the seeds' spread (±0.03). This is the
    mechanism the fluid model's burst rule does not have (docs/fluid.md,
    *Buffers of one to three packets*)."""
    seeds = (1, 2)
    spread = sum(_util(_three_packets(s), "packet") for s in seeds) / len(seeds)
    exact = sum(_util(_three_packets(s, ack_jitter=0.0), "packet") for s in seeds) / len(seeds)
    assert exact - spread > 0.10, (spread, exact)


@pytest.mark.slow
@pytest.mark.xfail(strict=False, reason=(
    "the fluid burst rule has a flow's own last burst and growth ahead of a "
    "burst, not other flows' trains abutting it (docs/fluid.md, Buffers of "
    "one to three packets); fluid 0.78 against packet 0.59 (seeds 1–2, 15 s)"))
def test_the_fluid_engine_loses_as_the_packet_engine_behind_three_packets():
    """Utilisation within 5 points of the packet engine's (seeds 1-2; the
    packet engine's seeds spread by about 3 points here)."""
    seeds = (1, 2)
    packet = sum(_util(_three_packets(s), "packet") for s in seeds) / len(seeds)
    fluid = sum(_util(_three_packets(s), "fluid") for s in seeds) / len(seeds)
    assert abs(fluid - packet) < 0.05, (packet, fluid)


def _two_packets(seed, **kw):
    """NewReno alone behind a 2-packet buffer at 10 Mbit/s, 40 ms (a path of
    33 packets): its growth segments meet the buffer long before the path."""
    return ccsim.dumbbell("10Mbps", "40ms", buffer=2, flows=["newreno"], duration="30s",
                          seed=seed, **kw)


@pytest.mark.slow
def test_a_burst_on_a_link_not_yet_full_meets_its_own_clock():
    """An ACK-clocked burst comes as the burst ahead of it leaves the server,
    not at random phase: without the receiving delay's spread
    (``ack_jitter=0``) a growth segment and its pair, three packets, fit
    two packets of buffer and the one in service, and the lone flow fills
    the path as in the packet engine (0.735 in both seeds). While the fluid
    engine took the server as busy for the link's load it lost a segment
    per growth in that share and read 0.19. The tolerance, 5 points, is
    the fluid flows' whole-segment sawtooth against the packet engine's
    (measured 0.757 against 0.735). With the spread each ACK can come
    early onto the tail of its flow's last burst: the packet engine reads
    0.15 and the fluid one must stay lossy, under half its figure without
    the spread (0.15)."""
    packet = _util(_two_packets(1, ack_jitter=0.0), "packet")
    exact = _util(_two_packets(1, ack_jitter=0.0), "fluid")
    assert abs(exact - packet) < 0.05, (packet, exact)
    spread = _util(_two_packets(1), "fluid")
    assert spread < 0.5 * exact, (spread, exact)


@pytest.mark.slow
def test_a_lone_flows_round_carries_its_growth_and_starts_after_its_gap():
    """On a link not yet full a flow's round is one train clocked by the
    link: a growth segment shifts the bursts behind it a packet later until
    the round's idle gap, and the round's first burst follows that gap, with
    no tail of its own ahead. Behind 2 packets (NewReno, 10 Mbit/s, 40 ms)
    the carried packet costs losses: packet 0.142, fluid 0.158 (0.203 before,
    which counted neither; 0.150 before a drop with too few segments of its
    train behind it was found a round late); behind 1 packet (H-TCP, 5
    Mbit/s, 20 ms, about one burst a round) most bursts follow the gap:
    packet 0.200, fluid 0.189 (0.145 before either rule, 0.178 before the
    second). Tolerances: 2 points behind 2 packets (the packet
    engine's seeds 1-3 spread by 0.8); 3.5 behind 1 packet, where the fluid
    burst rule's mean of the receiving delay's spread (``C·ack_wait/6``)
    stands for a whole packet met half the time (measured 2.2 points off,
    1.1 since the later round)."""
    two = _two_packets(1)
    assert abs(_util(two, "fluid") - _util(two, "packet")) < 0.02
    one = ccsim.dumbbell("5Mbps", "20ms", buffer=1, flows=["htcp"], duration="30s", seed=1)
    assert abs(_util(one, "fluid") - _util(one, "packet")) < 0.035


def test_the_train_tail_is_the_mean_over_the_growth_segments_ahead():
    """``_train_tail`` restates ``E[clip(rise + K − room, 0, b)]`` with ``K``
    uniform on 0..n (n whole; a fractional n weights its two neighbours), in
    closed form: against the sum over K, and with no growth ahead (n = 0)
    the lone burst's ``clip(rise − room, 0, b)``."""
    rng = np.random.default_rng(7)
    b = rng.integers(1, 6, 400).astype(float)
    rise = b - rng.integers(0, 2, 400) * (b > 1)      # a NIC may drain one
    room = rng.uniform(0.2, 6.0, 400)
    n = rng.integers(0, 9, 400).astype(float)

    def brute(n):
        return np.array([np.mean([min(max(r + k - m, 0.0), bb) for k in range(int(j) + 1)])
                         for r, bb, m, j in zip(rise, b, room, n)])

    assert _train_tail(rise, b, room, n) == pytest.approx(brute(n), abs=1e-12)
    assert _train_tail(rise, b, room, 0.0 * n) == pytest.approx(
        np.clip(rise - room, 0.0, b), abs=1e-12)
    assert _train_tail(rise, b, room, n + 0.25) == pytest.approx(
        0.75 * brute(n) + 0.25 * brute(n + 1.0), abs=1e-12)


@pytest.mark.slow
def test_a_drop_with_too_few_segments_behind_it_in_its_train_is_found_a_round_later():
    """A lone BIC behind 1 packet at 5 Mbit/s, 100 ms: a window of 2-5
    segments crosses the idle link as one train a round, and its growth
    segment, the tail of a three-segment burst, is dropped with fewer than
    three segments of its round behind it. The duplicate ACKs wait for the
    next round (RFC 5681 §3.2, limited transmit RFC 3042): found two RTTs
    after the drop, and the window grows meanwhile, so the next round's
    growth segment is lost too and repaired in the same recovery. Packet
    engine, seeds 1-3: 1.67-1.70 drops per recovery, utilisation 0.055-0.057.
    The fluid engine found every drop one RTT later and froze the window
    until then: 1.21-1.22 drops per recovery, utilisation 0.040; now 1.44-1.45
    and 0.048-0.049. Bounds: at least 1.35 drops per recovery (halfway from
    the old figure to the packet engine's), and utilisation within 1 point
    of the packet engine's (it was 1.5 off; 0.7 now: the fluid window still
    grows on pairs of segments, where the packet engine's grows also on the
    single duplicate ACKs of the wait, whose bursts fit)."""
    sc = ccsim.dumbbell("5Mbps", "100ms", buffer=1, flows=["bic"], duration="30s", seed=1)
    packet, fluid = (ccsim.run(sc, mode=m) for m in ("packet", "fluid"))
    per = fluid.metrics["drops"] / (fluid.summary.recoveries.sum() + fluid.summary.timeouts.sum())
    assert per >= 1.35, per
    assert abs(fluid.metrics["utilisation"] - packet.metrics["utilisation"]) < 0.01


def test_a_drop_found_a_round_late_is_found_alike_beside_random_loss():
    """The detection time of a drop (and the end of its window's pause) is
    the same sum whether the batch also carries random loss or not: a lone
    NewReno behind 2 packets (10 Mbit/s, 50 ms; drops found a round late)
    alone and beside a lossy scenario, bit for bit. (While the two cases
    added the later round in a different order, seed 2 read 0.1228 alone
    and 0.1210 in the batch.)"""
    sc = ccsim.dumbbell("10Mbps", "50ms", buffer=2, flows=["newreno"], duration="10s", seed=2)
    lossy = ccsim.dumbbell("10Mbps", "10ms", buffer=5, loss=0.02, flows=["reno", "reno"],
                           duration="10s", seed=2)
    alone = ccsim.run_many([sc], mode="fluid", traces=False)[0]
    beside = ccsim.run_many([sc, lossy], mode="fluid", traces=False)[0]
    assert alone.metrics["utilisation"] == beside.metrics["utilisation"]
    assert alone.metrics["drops"] == beside.metrics["drops"]
    assert alone.summary.recoveries.tolist() == beside.summary.recoveries.tolist()
