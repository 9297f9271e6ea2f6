"""Packet-engine behaviour against theory and published results."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import ccsim
from ccsim.packet import PacketEngine


# -- Mathis et al. 1997: the square-root law --------------------------------------
# BW = (MSS / RTT) · C / sqrt(p): the mean window is C / sqrt(p) segments.
# C = sqrt(3/2) ≈ 1.22 for periodic loss; Mathis et al. (CCR 27(3), §3) measured
# up to 1.31 with random loss, where the sawtooth's amplitude varies.
C_PERIODIC = math.sqrt(1.5)
C_RANDOM = 1.31


def _mean_cwnd_under_loss(p: float, algorithm: str = "reno") -> float:
    # 1 Gbit/s is far above the flow's rate at these p, and the buffer is
    # never reached after slow start: the RTT stays the 50 ms propagation.
    sc = ccsim.dumbbell("1Gbps", "50ms", buffer=5000, loss=p, flows=[algorithm],
                        duration=300 if p < 0.005 else 120, seed=7)
    res = ccsim.run(sc)
    cwnd = res.series("cwnd")[0]
    return float(cwnd[cwnd.index >= 10.0].mean())  # past slow start's overshoot


@pytest.mark.parametrize("algorithm", ["reno", "newreno"])
@pytest.mark.slow
def test_square_root_law(algorithm):
    ps = np.array([0.001, 0.003, 0.01])
    w = np.array([_mean_cwnd_under_loss(p, algorithm) for p in ps])
    constant = w * np.sqrt(ps)
    # Band: the theoretical range [1.22, 1.31], widened by 10% for the finite
    # runs (a few hundred loss epochs each: the mean window's standard error
    # is a few percent) and the windows' inflation during fast recovery.
    assert np.all(constant > C_PERIODIC * 0.9), constant
    assert np.all(constant < C_RANDOM * 1.1), constant
    slope = np.polyfit(np.log(ps), np.log(w), 1)[0]
    assert slope == pytest.approx(-0.5, abs=0.06), slope  # the law's exponent


# -- convergence ------------------------------------------------------------------
def test_two_reno_flows_converge():
    sc = ccsim.dumbbell("10Mbps", "20ms", buffer="1BDP",
                        flows=["reno", ccsim.Flow("reno", start="10s")],
                        duration="60s", seed=1)
    res = ccsim.run(sc)
    # from when the second flow opens: its start plus its start jitter
    assert res.metrics["interval"] == (sc.flow_start(1), 60.0) and sc.flow_start(1) > 10.0
    assert res.metrics["jain"] >= 0.95
    assert res.metrics["utilisation"] > 0.95  # 1 BDP of buffer keeps the link busy
    assert res.summary["share"].sum() == pytest.approx(1.0)


def test_reno_flows_with_different_rtts_favour_the_short_one():
    # Lai & Yao §4.2: "all TCP algorithms have a bias against long connections".
    sc = ccsim.dumbbell("10Mbps", "20ms", flows=[ccsim.Flow("reno", rtt="20ms"),
                                                  ccsim.Flow("reno", rtt="200ms")],
                        duration="60s", seed=1)
    res = ccsim.run(sc)
    short, long_ = res.summary["goodput_bps"]
    assert short > 2 * long_
    # UF as Lai & Yao define it, recomputed here from the summary's goodput.
    uf = abs(long_ - short) / ((long_ + short) / 2) * 100
    assert res.metrics["uf"] == pytest.approx(uf, rel=0.02)  # measured over 0–60 s vs per-flow span: same here


# -- Fall & Floyd 1996: several drops from one window -----------------------------
RTT = 0.1


def _drops(algorithm: str, k: int) -> tuple[pd.Series, list[float], ccsim.Result]:
    """One flow whose window is held at 20 segments by the receiver window,
    with k segments of one window dropped (every third from segment 60): Fall
    & Floyd's experiment, in the ns agents' stack they ran it in (classic
    recovery, an ACK per segment)."""
    sc = ccsim.dumbbell("10Mbps", RTT, buffer=200,
                        flows=[ccsim.Flow(algorithm, drop_segments=[60 + 3 * j for j in range(k)])],
                        duration="5s", min_rto=1.0, rwnd=20 * 1460, seed=1, stack="ns2")
    res = ccsim.run(sc, events=True)
    resent = list(res.events.loc[res.events["event"] == "retransmitted", "time"])
    return res.summary.iloc[0], resent, res


@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_tahoe_slow_starts_after_drops(k):
    row, _, res = _drops("tahoe", k)
    assert row.timeouts == 0 and row.recoveries == 1
    cwnd = res.series("cwnd")[0]
    assert cwnd[cwnd.index > 0.3].min() == 1.0  # back to one segment


@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_reno_times_out_once_drops_pile_up(k):
    row, _, _ = _drops("reno", k)
    assert row.recoveries == 1
    if k == 1:
        assert row.timeouts == 0 and row.retransmits == 1
    else:  # the partial ACK ends recovery and too few duplicates are left
        assert row.timeouts >= 1


@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_newreno_repairs_one_loss_per_rtt_without_timeout(k):
    row, resent, _ = _drops("newreno", k)
    assert row.timeouts == 0 and row.recoveries == 1
    assert row.retransmits == k
    # Each partial ACK comes back one round trip after the retransmission it
    # acknowledges. RTT = 100 ms of propagation plus at most 20 queued
    # packets × 1.2 ms, hence the band.
    gaps = np.diff(resent)
    assert np.all((gaps > RTT) & (gaps < RTT + 20 * 0.0012 + 0.002)), gaps


# -- sized flows --------------------------------------------------------------------
def test_sized_flow_completes_in_slow_start_rounds():
    size = 1_000_000
    # every segment acknowledged: the last ACK is not held by the delayed-ACK timer
    sc = ccsim.dumbbell("1Gbps", "50ms", buffer=1000,
                        flows=[ccsim.Flow("reno", size=size)], duration="5s", delayed_ack=False)
    row = ccsim.run(sc).summary.iloc[0]
    segments = math.ceil(size / 1460)
    # Slow start from 10 segments doubles each round: after r rounds
    # 10·(2^r − 1) segments are sent; the last segment is ACKed r RTTs in.
    rounds = math.ceil(math.log2(segments / 10 + 1))
    tx = 1500 * 8 / 1e9
    assert rounds * 0.05 <= row.fct <= rounds * 0.05 + segments * tx
    assert row.lifetime_goodput_bps == pytest.approx(size * 8 / row.fct)
    assert row.delivered_bytes == size
    assert row.end == pytest.approx(sc.flow_start(0) + row.fct)  # fct: from its opening


def test_stopped_flow_ends_at_its_stop_time():
    sc = ccsim.dumbbell("10Mbps", "20ms", flows=[ccsim.Flow("reno", stop="5s"), "reno"],
                        duration="10s")
    res = ccsim.run(sc)
    assert res.summary["end"].tolist() == [5.0, 10.0]
    assert res.metrics["interval"] == (max(sc.flow_start(0), sc.flow_start(1)), 5.0)
    cwnd = res.series("cwnd")[0]
    assert cwnd[cwnd.index > 6].isna().all()  # no trace once the flow is done


# -- queues ---------------------------------------------------------------------------
@pytest.mark.slow
def test_red_keeps_the_average_queue_between_its_thresholds():
    red = ccsim.RED(limit=300)  # thresholds 5 and 15 packets (the paper's)
    common = dict(bandwidth="10Mbps", rtt="40ms", flows=["reno"] * 4, duration="40s", seed=2)
    with_red = ccsim.run(ccsim.dumbbell(queue=red, **common))
    droptail = ccsim.run(ccsim.dumbbell(buffer=300, **common))
    q_red = with_red.series("queue")["queue"]
    q_dt = droptail.series("queue")["queue"]
    assert q_red[q_red.index > 5].mean() < red.max_th  # early drops hold it down
    assert q_dt[q_dt.index > 5].mean() > 5 * red.max_th  # drop-tail fills its 300
    assert with_red.metrics["utilisation"] > 0.9


def test_droptail_in_bytes_matches_packets():
    # 17 packets of 1500 bytes = 25500 bytes: the same queue, the same run.
    common = dict(bandwidth="10Mbps", rtt="20ms", flows=["reno", "reno"], duration="10s")
    in_packets = ccsim.run(ccsim.dumbbell(buffer=17, **common))
    in_bytes = ccsim.run(ccsim.dumbbell(buffer="25500B", **common))
    pd.testing.assert_frame_equal(in_packets.summary, in_bytes.summary)


def test_queue_never_exceeds_the_buffer():
    res = ccsim.run(ccsim.dumbbell("10Mbps", "20ms", buffer=17, flows=["reno"] * 3,
                                   duration="20s"))
    assert res.series("queue")["queue"].max() <= 17
    assert res.metrics["drops"] > 0


def test_random_loss_rate_is_the_configured_probability():
    p = 0.02
    res = ccsim.run(ccsim.dumbbell("10Mbps", "20ms", loss=p, flows=["reno"],
                                   duration="60s", seed=4))
    n = res.metrics["data_packets"] - res.metrics["drops"]
    # Binomial: the observed rate is within 4 standard deviations of p.
    assert abs(res.metrics["losses"] / n - p) < 4 * math.sqrt(p * (1 - p) / n)


def test_multi_hop_path_bottleneck_at_the_slowest_link():
    # Kwon et al.: two hosts through four routers, the bottleneck at the first router.
    sc = ccsim.path([dict(rate="1Gbps", delay="1ms"),
                     dict(rate="10Mbps", delay="5ms", buffer=20),
                     dict(rate="1Gbps", delay="1ms"),
                     dict(rate="1Gbps", delay="1ms"),
                     dict(rate="1Gbps", delay="1ms")],
                    flows=["reno"], duration="20s")
    assert sc.bottleneck == 1 and sc.path_rtt == pytest.approx(0.018)
    res = ccsim.run(sc)
    assert res.metrics["utilisation"] > 0.9
    assert res.series("queue")["queue"].max() <= 20
    assert res.summary.loc[0, "mean_rtt"] >= 0.018


# -- determinism ------------------------------------------------------------------------
def _lossy(seed: int) -> ccsim.Scenario:
    return ccsim.dumbbell("10Mbps", "30ms", queue="red", loss=0.01, seed=seed,
                          flows=["reno", ccsim.Flow("newreno", start="2s", rtt="60ms")],
                          duration="20s")


def test_same_seed_same_result_bit_for_bit():
    a, b = ccsim.run(_lossy(3)), ccsim.run(_lossy(3))
    pd.testing.assert_frame_equal(a.summary, b.summary, check_exact=True)
    pd.testing.assert_frame_equal(a.traces, b.traces, check_exact=True)
    strip = lambda m: {k: v for k, v in m.items() if k != "wall_time"}
    assert strip(a.metrics) == strip(b.metrics)


def test_different_seeds_differ_under_random_loss():
    a, b = ccsim.run(_lossy(3)), ccsim.run(_lossy(4))
    assert a.metrics["losses"] != b.metrics["losses"] or \
        not a.summary["goodput_bps"].equals(b.summary["goodput_bps"])


# -- results -------------------------------------------------------------------------------
def test_summary_and_traces_have_the_contract_columns():
    res = ccsim.run(ccsim.dumbbell("10Mbps", "20ms", flows=["reno"], duration="2s"))
    for column in ("algorithm", "goodput_bps", "share", "retransmits", "timeouts"):
        assert column in res.summary.columns
    for name in ("utilisation", "jain"):
        assert name in res.metrics
    assert list(res.traces.columns) == ["time", "flow", "variable", "value"]
    assert set(res.traces["variable"]) == {"cwnd", "ssthresh", "rtt", "goodput", "queue"}
    # goodput integrates back to the delivered bytes
    goodput = res.series("goodput")[0]
    delivered = goodput.sum() * res.scenario.sample_interval / 8
    assert delivered == pytest.approx(res.summary.loc[0, "delivered_bytes"])
    rows = res.to_pandas()
    assert rows.loc[0, "scenario"] == res.scenario.key


def test_unknown_mode_is_refused_naming_the_engines():
    sc = ccsim.dumbbell("10Mbps", "20ms", duration="1s")
    with pytest.raises(ccsim.ScenarioError, match="mode='hybrid'.*'packet', 'fluid'"):
        ccsim.run(sc, mode="hybrid")


def test_utilisation_never_exceeds_one_on_a_short_interval_of_a_slow_link():
    # A packet whose transmission straddles the measurement interval's start used to count
    # whole in it: on 1 Mbit/s (12 ms a packet) over a 1 s interval that read 1.008. Each bin
    # now holds only the part of a transmission that falls in it, so the link's busy time in
    # an interval is at most the interval (1e-12: float rounding of the shares).
    sc = ccsim.dumbbell("1Mbps", "150ms", buffer=100, duration="2s",
                        flows=["reno", ccsim.Flow("cubic", start=1.0)])
    res = ccsim.run(sc)
    assert res.metrics["interval"] == (sc.flow_start(1), 2.0)
    assert 0.95 < res.metrics["utilisation"] <= 1.0 + 1e-12


def test_a_simpy_process_of_ones_own_runs_in_turn_with_the_engine():
    # SimPy is the outer loop: a process added to engine.env wakes at its time and
    # finds every engine event due before it done (checked against the event trace).
    import ccsim

    sc = ccsim.dumbbell("10Mbps", "20ms", flows=["reno"], duration="2s")
    engine = PacketEngine(sc, events=True)
    seen = []

    def watcher(env):
        yield env.timeout(1.0)
        seen.append((env.now, engine.now, engine.senders[0].snd_una))

    engine.env.process(watcher(engine.env))
    res = engine.run()
    ev = res.events
    acked_before = ev[(ev["event"] == "acked") & (ev["time"] < 1.0)]["seq"].max()
    assert seen == [(1.0, 1.0, acked_before)]
