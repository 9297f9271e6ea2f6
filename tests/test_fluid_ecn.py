"""ECN in the fluid engine: marking queues (step, RED, CoDel, PIE), the
senders' reactions (RFC 3168 once per RTT; DCTCP's fluid law), against
theory and against the packet engine on the same scenarios."""

from __future__ import annotations

import math

import numpy as np
import pytest

import ccsim
from ccsim.algorithms.fluid import FluidLaw


def _dctcp(n, K=20, rtt=1e-3, duration="4s"):
    return ccsim.dumbbell(100e6, rtt, queue=ccsim.StepMark(K=K, limit=400), buffer=None,
                          flows=["dctcp"] * n, duration=duration, seed=1,
                          trace_interval=0.0005)


def _steady_queue(res, after=1.0):
    q = res.series("queue")["queue"]
    return q[q.index > after].to_numpy()


@pytest.mark.slow
@pytest.mark.parametrize("n", [1, 2])
def test_fluid_dctcp_queue_holds_the_theorys_sawtooth_around_k(n):
    # Alizadeh et al. 2010 §3.3, the sawtooth the SIGMETRICS 2011 fluid model
    # (Alizadeh, Javanmard & Prabhakar) reproduces: N synchronised flows peak at
    # W* = (C·RTT + K)/N, alpha ≈ sqrt(2/W*), each cuts D = W*·alpha/2, so the
    # queue swings by A = N·D = ½·sqrt(2N(C·RTT + K)) below Q_max = K + N (the
    # marks take an RTT to return, in which each flow adds a segment).
    # 100 Mbit/s, 1 ms: C·RTT = 8.3 packets, K = 20.
    # Top: K + 2N — the fluid engine reads the queue at the start of a step and
    # delays echoes by whole steps (a quarter RTT each), so the marks can return
    # up to half an RTT later still, and the queue rises by up to N/2 more; the
    # rest of the N is the interpolation of echoes between steps.
    # Bottom: Q_max − A − 2, the packet test's band (its 1st percentile, for
    # the cycles in which the flows' cuts coincide).
    K, bdp = 20, 100e6 * 1e-3 / (1500 * 8)
    res = ccsim.run(_dctcp(n, K), mode="fluid")
    q = _steady_queue(res)
    amplitude = 0.5 * math.sqrt(2 * n * (bdp + K))
    assert np.percentile(q, 1) >= K + n - amplitude - 2
    assert q.max() <= K + 2 * n
    # it oscillates (a queue pinned at K would pass the band): at least half
    # the theory's swing between its 1st and 99th percentiles
    assert np.percentile(q, 99) - np.percentile(q, 1) >= amplitude / 2
    assert abs(np.median(q) - K) <= 2
    assert res.metrics["utilisation"] >= 0.99
    assert res.metrics["drops"] == 0 and res.summary["timeouts"].sum() == 0
    assert res.metrics["marks"] > 0


@pytest.mark.slow
def test_fluid_dctcp_agrees_with_the_packet_engines():
    # Same scenario, both engines: two DCTCP flows behind K = 20 at 100 Mbit/s,
    # 1 ms. The queue's mean within 1.5 packets (the packet engine's backlog is
    # whole packets and leaves out the one in service: up to 1, plus half a
    # packet for the fluid sawtooth's shape, spread over an RTT rather than
    # cut at once); utilisation within 1 point (both fill the link: K is
    # above C·RTT/7, Alizadeh et al. 2010 §3.3); equal shares within 5 points.
    sc = _dctcp(2, duration="3s")
    fluid, packet = ccsim.run(sc, mode="fluid"), ccsim.run(sc)
    assert abs(_steady_queue(fluid).mean() - _steady_queue(packet).mean()) <= 1.5
    assert abs(fluid.metrics["utilisation"] - packet.metrics["utilisation"]) <= 0.01
    assert (fluid.summary["share"] - 0.5).abs().max() <= 0.05
    assert fluid.metrics["drops"] == packet.metrics["drops"] == 0


def test_dctcp_without_marks_runs_its_loss_law_in_fluid():
    # the same flows, not ECN-capable, through a drop-tail queue: no marks, and
    # DCTCP's fluid law falls back to halving on loss (Linux's Reno fallback)
    sc = ccsim.dumbbell("10Mbps", "20ms", buffer="1BDP", duration="20s", seed=1,
                        flows=[ccsim.Flow("dctcp", ecn=False), "reno"])
    res = ccsim.run(sc, mode="fluid")
    assert "marks" not in res.metrics and res.metrics["drops"] > 0
    assert abs(res.summary["share"].iloc[0] - 0.5) < 0.1  # Reno's law, Reno's share


@pytest.mark.slow
def test_an_ecn_reno_flow_behind_red_ecn_is_marked_not_dropped():
    # RED with ECN (RFC 3168 §7): the ECN-capable flow's early congestion
    # signals are marks, answered without retransmission; the other flow, not
    # ECN-capable, is dropped by the same queue. After the first slow start
    # (whose overshoot reaches the physical limit) the ECN flow has neither
    # recoveries nor timeouts, the other has many.
    red = ccsim.RED(limit=300, min_th=20, max_th=60, ecn=True, gentle=True)
    sc = ccsim.dumbbell("20Mbps", "40ms", queue=red, buffer=None, duration="30s", seed=1,
                        flows=[ccsim.Flow("reno", ecn=True), ccsim.Flow("reno", ecn=False)])
    res = ccsim.run(sc, mode="fluid")
    ev = res.events[res.events["time"] > 3.0]
    assert (ev["flow"] == 0).sum() == 0
    assert (ev[ev["flow"] == 1]["event"] == "recovery").sum() >= 10
    assert res.metrics["marks"] > 100
    # both share the link as Reno flows do (a mark halves as a loss does)
    assert abs(res.summary["share"].iloc[0] - 0.5) < 0.15


@pytest.mark.slow
@pytest.mark.parametrize("ecn", [pytest.param(False, marks=pytest.mark.xfail(
    strict=True, reason="measured 2026-11-26 with the Linux stack and the hosts' NICs: "
    "mean queueing 2.06 ms in fluid against 4.08 ms in the packet engine (2.03 ms apart, "
    "the bound is 2): fluid CoDel drops about 3 times as often (docs/fluid.md)")), True])
def test_codel_keeps_the_fluid_queueing_delay_near_its_target(ecn):
    # CoDel (RFC 8289) holds the standing queue near target (5 ms): its median
    # sojourn at or below target while the link stays busy, for drops and for
    # marks alike. 1.5 × target for the mean: the control law lets the queue
    # above target for an interval before it acts (Nichols & Jacobson 2012).
    # The packet engine, same scenario, for scale: within 2 ms of its mean.
    q = ccsim.CoDel(limit=1000, ecn=ecn)
    sc = ccsim.dumbbell("20Mbps", "40ms", queue=q, buffer=None, duration="30s", seed=1,
                        flows=[ccsim.Flow("cubic", ecn=ecn)] * 2)
    C = 20e6 / (8 * 1500)
    fluid, packet = ccsim.run(sc, mode="fluid"), ccsim.run(sc)
    delay = _steady_queue(fluid, 2.0) / C
    assert np.median(delay) <= q.target and delay.mean() <= 1.5 * q.target
    assert abs(delay.mean() - (_steady_queue(packet, 2.0) / C).mean()) <= 0.002
    assert fluid.metrics["utilisation"] > 0.9
    assert (fluid.metrics.get("marks", 0) > 0) == ecn
    assert (fluid.metrics["drops"] > 0) != ecn  # marks replace drops (no overflow here)


@pytest.mark.slow
@pytest.mark.parametrize("ecn", [False, True])
def test_pie_keeps_the_fluid_queueing_delay_near_its_target(ecn):
    # PIE (RFC 8033) steers the queue delay to target (15 ms): the mean within
    # 3 ms of it (its controller integrates the error, so it settles on the
    # target rather than below it), and close to the packet engine's.
    q = ccsim.PIE(limit=1000, ecn=ecn)
    sc = ccsim.dumbbell("20Mbps", "40ms", queue=q, buffer=None, duration="30s", seed=1,
                        flows=[ccsim.Flow("cubic", ecn=ecn)] * 2)
    C = 20e6 / (8 * 1500)
    fluid, packet = ccsim.run(sc, mode="fluid"), ccsim.run(sc)
    delay = _steady_queue(fluid, 5.0) / C
    assert abs(delay.mean() - q.target) <= 0.003
    assert abs(delay.mean() - (_steady_queue(packet, 5.0) / C).mean()) <= 0.003
    assert fluid.metrics["utilisation"] > 0.9
    assert (fluid.metrics.get("marks", 0) > 0) == ecn


@pytest.mark.slow
@pytest.mark.parametrize("name", ccsim.algorithms.names())
def test_every_registered_algorithm_runs_with_ecn_in_the_fluid_engine(name):
    # each law, ECN-capable, against an ECN Reno behind a step-marking switch:
    # sane figures, and the marks are answered (the queue stays near K, far
    # from the 200-packet limit, after the start-up)
    sc = ccsim.dumbbell("10Mbps", "20ms", queue=ccsim.StepMark(K=20, limit=200), buffer=None,
                        duration="15s", seed=2,
                        flows=[ccsim.Flow(name, start="1s",  # Accurate ECN where required
                                          ecn="accecn" if ccsim.algorithms.get(name)
                                          .own_ecn_response else True),
                               ccsim.Flow("reno", ecn=True)])
    res = ccsim.run(sc, mode="fluid")
    assert res.summary["share"].sum() == pytest.approx(1.0)
    assert res.summary[["goodput_bps", "share", "mean_rtt"]].notna().all().all()
    assert res.metrics["utilisation"] > 0.6 and res.metrics["marks"] > 0
    assert np.median(_steady_queue(res, 5.0)) < 60


@pytest.mark.slow
def test_a_users_class_hears_marks_through_its_hooks(scratch_registry):
    # the hooks route: a class without a fluid law gets on_ce_echo for each
    # step's echoes and on_ecn at most once per RTT, as from the packet sender
    seen = {"echo": 0.0, "ecn": 0}

    @ccsim.algorithms.register
    class Counting(ccsim.algorithms.get("reno")):
        name = "test-counting-ecn"
        ecn = True

        def on_ce_echo(self, echo):
            seen["echo"] += echo.marked

        def on_ecn(self, echo):
            seen["ecn"] += 1
            super().on_ecn(echo)

    assert vars(Counting).get("fluid") is None
    sc = ccsim.dumbbell("10Mbps", "20ms", queue=ccsim.StepMark(K=10, limit=200), buffer=None,
                        flows=["test-counting-ecn"], duration="10s", seed=1)
    res = ccsim.run(sc, mode="fluid")
    assert seen["ecn"] > 5 and seen["echo"] >= seen["ecn"]
    # at most one reduction per RTT (≥ 20 ms apart): 10 s hold at most 500
    assert seen["ecn"] <= 10 / 0.02
    assert res.metrics["drops"] == 0


def test_the_default_fluid_reaction_to_marks_is_a_loss_without_recovery():
    # FluidLaw.on_ecn (RFC 3168 §6.1.2): ssthresh as on a fast retransmit,
    # cwnd to it, no retransmission
    from ccsim.algorithms.fluid import FlowArrays
    from ccsim.algorithms.reno import Reno

    law = Reno.fluid(Reno())
    f = FlowArrays()
    f.cwnd, f.ssthresh = np.array([40.0, 10.0]), np.array([np.inf, 8.0])
    f.inflight = np.array([36.0, 10.0])
    m = np.array([True, False])
    law.on_ecn(f, m)
    assert f.cwnd.tolist() == [18.0, 10.0] and f.ssthresh.tolist() == [18.0, 8.0]
    assert FluidLaw.marks is False and ccsim.algorithms.get("dctcp").fluid.marks is True


@pytest.mark.slow
def test_ecn_runs_are_the_same_alone_and_in_any_batch():
    # the echo ring and the queues' models are per scenario: a scenario's
    # result does not depend on what else is in its batch, or where
    dctcp = _dctcp(2, duration="1s")
    codel = ccsim.dumbbell("20Mbps", "40ms", queue=ccsim.CoDel(limit=500, ecn=True),
                           buffer=None, duration="5s", seed=3,
                           flows=[ccsim.Flow("cubic", ecn=True), "reno"])
    pie = ccsim.dumbbell("10Mbps", "30ms", queue="pie", duration="5s", seed=4,
                         flows=["reno", ccsim.Flow("reno", ecn=True)])
    plain = ccsim.dumbbell("10Mbps", "20ms", buffer="1BDP", duration="5s", seed=5,
                           flows=["cubic", "reno"])
    red = ccsim.dumbbell("10Mbps", "20ms", queue=ccsim.RED(100, ecn=True), buffer=None,
                         duration="5s", seed=6, flows=[ccsim.Flow("reno", ecn=True), "cubic"])
    alone = [ccsim.run(sc, mode="fluid") for sc in (dctcp, codel, pie, red)]
    batch = ccsim.run_many([plain, pie, codel, red, dctcp, pie.replace(seed=9)], mode="fluid")
    for a, b in zip(alone, (batch[4], batch[2], batch[1], batch[3])):
        assert a.summary.equals(b.summary)
        assert a.metrics["marks"] == b.metrics["marks"]
        assert a.traces.equals(b.traces)


@pytest.mark.slow
@pytest.mark.xfail(strict=True, reason=(
    "measured 2026-11-27 since the fluid engine keeps whole segments in flight "
    "(floor(cwnd)): steady queue 20.0 with the fluid law, 21.1 through the hooks, 1.1 "
    "packets apart against 1.0; the hooks' cut once per RTT against floor's "
    "one-segment steps, not yet diagnosed"))
def test_dctcps_fluid_law_agrees_with_its_class_run_through_its_hooks(scratch_registry):
    # two renderings of one rule: the SIGMETRICS 2011 fluid law, and DCTCP's own
    # hooks once per step (on_ce_echo per step, alpha per window, on_ecn's cut
    # by alpha/2 at most once per RTT). Same queue within 1 packet on average
    # (the hooks cut once per RTT rather than over it), both fill the link.
    from ccsim.algorithms.dctcp import DCTCP

    ccsim.algorithms.register(type("DCTCPHooks", (DCTCP,), {"name": "dctcp-hooks"}))
    means = []
    for name in ("dctcp", "dctcp-hooks"):
        sc = ccsim.dumbbell(100e6, 1e-3, queue=ccsim.StepMark(K=20, limit=400), buffer=None,
                            flows=[name] * 2, duration="2s", seed=1, trace_interval=0.0005)
        res = ccsim.run(sc, mode="fluid")
        means.append(_steady_queue(res).mean())
        assert res.metrics["utilisation"] >= 0.99 and res.metrics["drops"] == 0
    assert abs(means[0] - means[1]) <= 1.0, means
