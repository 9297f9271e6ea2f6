"""Fluid laws of the delay- and rate-based window laws: Veno, Westwood+, TCP-LP,
YeAH, Pseudo-Rate and BBR v1.

Three kinds of check per law: (1) the vectorised law against the same class
run through its hooks by the fluid engine (a subclass with no ``fluid``);
(2) what the law is for (a behaviour or a closed form); (3) the packet
engine on one scenario, against Reno on 10 Mb/s, 40 ms, a 1-BDP buffer.
Tolerances are the measured gaps with a margin, and each says why there is
a gap at all.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import ccsim
from ccsim.algorithms.bbr import Bbr
from ccsim.algorithms.fluid import FlowArrays
from ccsim.algorithms.veno import Veno
from ccsim.algorithms.westwood import Westwood

LAWS = ["veno", "westwood", "lp", "yeah", "pseudo-rate", "bbr"]
C = 10e6 / (8 * 1500)          # 10 Mb/s in packets/s
BDP = C * 0.040                # packets at 40 ms


def _vs_reno(algo: str, mode: str, rtt: str = "40ms", seed: int = 1, *,
             knobs: dict | None = None, **params):
    # an ACK per segment: the fluid model has no ACK clock, so delayed ACKs (the
    # Linux stack's) are a difference of the packet engine's alone
    sc = ccsim.dumbbell("10Mbps", rtt, buffer="1BDP", duration="30s", seed=seed,
                        flows=[ccsim.Flow(algo, params=params), "reno"],
                        **{"delayed_ack": False, **(knobs or {})})
    return ccsim.run(sc, mode=mode)


def _hooked(name: str):
    cls = ccsim.algorithms.get(name)
    hooked = type(f"{cls.__name__}Hooks", (cls,), {"name": f"{name}-hooks"})
    ccsim.algorithms.register(hooked)
    assert vars(hooked).get("fluid") is None
    return hooked


def _queue(res, after: float = 5.0) -> np.ndarray:
    tr = res.traces
    return tr[(tr.variable == "queue") & (tr.time > after)].value.to_numpy()


@pytest.mark.parametrize("name", LAWS)
def test_each_law_has_its_own_fluid_law(name):
    cls = ccsim.algorithms.get(name)
    law = vars(cls).get("fluid")
    assert law is not None and law.__name__ == f"{cls.__name__}Fluid"


# -- (1) the fluid law against the class's own hooks ------------------------------------
# Measured shares against Reno (fluid law / hook route, 10 Mb/s, 40 ms, 1 BDP,
# 30 s): Veno 0.396/0.373, Westwood+ 0.474/0.490, LP 0.087/0.069, YeAH
# 0.523/0.504, Pseudo-Rate 0.161/0.125. Both renderings step once per
# fluid step; they differ where the law aggregates per-ACK rules over a step
# and the hook route hands one Ack per step: slow start (ln 2 of the ACKs,
# first order), LP's and YeAH's per-sample filters and sample counts (one
# sample per step in the hook route), and round and cycle ends, where the
# hook route's ``Ack.inflight`` is what is left after the whole step's ACKs
# (rounds of 1 − h/RTT; Pseudo-Rate's cycle measures less than a window).
# Tolerance 5 points (largest measured gap 3.6, Pseudo-Rate's cycles).
@pytest.mark.parametrize("name", ["veno", "westwood", "lp", "yeah", "pseudo-rate"])
@pytest.mark.slow
def test_fluid_law_agrees_with_the_hook_route(name, scratch_registry):
    _hooked(name)
    # "lp-hooks" is not "lp" to the Linux stack, which sets Linux's timestamp offset and
    # rule at an indication for "lp" only: both on the paper's clocks and rule
    params = {"clock_offset": 0.0, "eci_ssthresh": True} if name == "lp" else {}
    law = _vs_reno(name, "fluid", **params).summary["share"][0]
    hooks = _vs_reno(f"{name}-hooks", "fluid", **params).summary["share"][0]
    assert abs(law - hooks) < 0.05, (law, hooks)


@pytest.mark.slow
def test_bbr_fluid_law_agrees_with_the_hook_route(scratch_registry):
    """BBR alone, 4-BDP buffer (the window, not the buffer, limits it).

    Measured: goodput 9.71 / 9.51 Mb/s, mean RTT 49.4 / 47.2 ms; within 4 %
    and 10 % (the law leaves ``cwnd`` alone in held steps, the hooks adjust
    it; the hook route's rounds are shorter).
    """

    class BbrHooks(Bbr):  # the same class without its fluid law: the hook route
        name = "bbr-hooks"

    ccsim.algorithms.register(BbrHooks)
    out = []
    for algo in ("bbr", "bbr-hooks"):
        sc = ccsim.dumbbell("10Mbps", "40ms", buffer="4BDP", duration="30s", seed=1,
                            flows=[algo])
        s = ccsim.run(sc, mode="fluid").summary
        out.append((s["goodput_bps"][0], s["mean_rtt"][0]))
    (g0, r0), (g1, r1) = out
    assert abs(g0 / g1 - 1) < 0.04, out
    assert abs(r0 / r1 - 1) < 0.10, out


# -- (2) what each law is for ---------------------------------------------------------------
def _arrays(n: int, **values) -> FlowArrays:
    f = FlowArrays()
    base = dict(cwnd=20.0, ssthresh=math.inf, pacing=math.inf, h=0.01, now=0.0, rtt=0.04,
                base_rtt=0.04, min_rtt=0.04, srtt=0.04, rate=0.0, acked=0.0, delivered=0.0,
                inflight=20.0, mss=1448.0)
    base.update(values)
    for k, v in base.items():
        setattr(f, k, np.full(n, float(v)) if np.isscalar(v) else np.asarray(v, float))
    return f


def _with_state(law, f: FlowArrays) -> FlowArrays:
    for k, v in law.state.items():
        setattr(f, k, np.full(f.cwnd.size, float(v)))
    law.start(f, np.ones(f.cwnd.size, bool))
    return f


def test_veno_cuts_by_a_fifth_on_random_loss_and_halves_on_congestive():
    """Fu & Liew: N = cwnd(1 − BaseRTT/RTT) < β → ssthresh = 4/5 cwnd, else 1/2.
    Flows: no queue (N = 0), N = 2 < 3, N = 25 ≥ 3, and no RTT sample yet
    (random, as Linux's diff starts at 0)."""
    law = Veno.fluid(Veno())
    f = _arrays(4, cwnd=[50, 50, 50, 50], rtt=[0.04, 0.04 * 50 / 48, 0.08, 0.04],
                min_rtt=[0.04, 0.04, 0.04, math.inf])
    m = np.ones(4, bool)
    law.on_loss(f, m, "fast")
    assert f.ssthresh.tolist() == pytest.approx([40.0, 40.0, 25.0, 40.0])


@pytest.mark.slow
def test_veno_keeps_more_window_than_reno_under_random_loss():
    """1 % random loss, 10 Mb/s, 40 ms: windows stay below the BDP, so the
    backlog is small and Veno takes losses as random (a 1/5 cut). AIMD with
    a cut ``b`` averages ``√((2 − b)/(2 b p))``: √(4.5/p) vs Reno's √(1.5/p),
    √3 ≈ 1.73 times the window. Measured: 5.38 vs 3.17 Mb/s (1.70; packet
    engine 5.91 vs 3.32, 1.78). Between 1.4 and 2.1 (timeouts and the
    window cap at the BDP lower it, the buffer raises it)."""
    gp = {}
    for algo in ("veno", "reno"):
        sc = ccsim.dumbbell("10Mbps", "40ms", buffer="1BDP", duration="30s", seed=1,
                            loss=0.01, flows=[algo])
        gp[algo] = ccsim.run(sc, mode="fluid").summary["goodput_bps"][0]
    assert 1.4 < gp["veno"] / gp["reno"] < 2.1, gp


def test_westwood_sets_ssthresh_to_its_bandwidth_times_min_rtt():
    """A steady delivery rate R for two seconds: BWE converges to R, and a
    loss sets ssthresh = max(BWE·RTT_min, 2) (at most cwnd after a fast
    loss), RTT_min the smallest RTT so far in whole 4 ms jiffies, rounded up;
    after a timeout the next step's RTT is the new minimum (Linux)."""
    cc = Westwood()
    law = Westwood.fluid(cc)
    R = 500.0  # segments/s
    f = _with_state(law, _arrays(2, cwnd=[30.0, 10.0], min_rtt=0.03, rtt=0.03))
    for k in range(200):
        f.now[:] = k * 0.01
        f.rtt[:] = 0.03 if k == 50 else 0.05  # one step at 30 ms: 8 jiffies, 32 ms
        f.acked[:] = R * 0.01
        f.delivered += R * 0.01
        law.grow(f)
    assert f.bw_est == pytest.approx(R, rel=1e-3)
    f.cwnd[:] = [30.0, 10.0]
    law.on_loss(f, np.ones(2, bool), "fast")
    assert f.ssthresh.tolist() == pytest.approx([R * 0.032, 10.0], rel=1e-3)
    law.on_loss(f, np.ones(2, bool), "timeout")
    assert f.ssthresh.tolist() == pytest.approx([R * 0.032] * 2, rel=1e-3)
    f.now[:], f.rtt[:] = 2.0, 0.05  # 12.5 jiffies: 13, 52 ms
    law.grow(f)
    f.cwnd[:] = [100.0, 10.0]
    law.on_loss(f, np.ones(2, bool), "fast")
    assert f.ssthresh.tolist() == pytest.approx([R * 0.052, 10.0], rel=1e-3)


def test_westwood_rtt_min_is_the_smallest_sample_not_the_mean():
    """A flow's smallest RTT sample is a segment's acknowledged at once: the
    step's RTT less the mean receiving delay (half its bound). 5 Mb/s, 200 ms
    and 50 Mb/s NICs: 200.48 ms of propagation and NICs, 2.4 ms at the link,
    a receiving delay of up to 2.4 ms; the mean RTT, 204.08 ms, reads 208 ms
    in whole 4-ms jiffies, the smallest sample, 202.88 ms, 204 ms."""
    law = Westwood.fluid(Westwood())
    f = _with_state(law, _arrays(1, rtt=0.20408, min_rtt=0.20408, acked=5.0,
                                 delivered=5.0))
    f.ack_wait = np.array([0.0024])
    law.grow(f)
    assert f.rtt_min[0] == pytest.approx(0.204, abs=1e-9)
    f.ack_wait = 0.0  # a receiver that answers at once: the mean RTT is the smallest
    law.on_loss(f, np.ones(1, bool), "timeout")  # RTT_min afresh from the next step
    f.delivered += 5.0
    law.grow(f)
    assert f.rtt_min[0] == pytest.approx(0.208, abs=1e-9)


def test_westwood_rtt_min_as_the_packet_engines():
    """Two Westwood+ flows, 5 Mb/s, 200 ms, 1 % random loss (the agreement
    set's path): the packet engine's smallest sample reads 204 ms in jiffies,
    and so does the fluid's RTT_min (it read the mean RTT's 208 ms)."""
    sc = ccsim.dumbbell("5Mbps", "200ms", buffer="1BDP", duration="3s", seed=1,
                        flows=["westwood", "westwood"], loss=0.01)
    seen = {}
    for mode in ("packet", "fluid"):
        law = Westwood.fluid if mode == "fluid" else Westwood
        hook = "ssthresh_after"
        original = getattr(law, hook)

        def spy(self, *args, _original=original, _mode=mode):
            rtt = self.rtt_min if _mode == "packet" else args[0].rtt_min[args[1]]
            seen.setdefault(_mode, []).extend(np.atleast_1d(rtt).tolist())
            return _original(self, *args)

        setattr(law, hook, spy)
        try:
            ccsim.run(sc, mode=mode)
        finally:
            setattr(law, hook, original)
    assert seen["packet"] and seen["fluid"]
    # the smallest over the run's losses (an early one, or one after a
    # timeout's reset, may come before the smallest sample)
    assert min(seen["packet"]) == pytest.approx(0.204, abs=1e-9), seen["packet"]
    assert min(seen["fluid"]) == pytest.approx(0.204, abs=1e-9), seen["fluid"]


def test_westwood_alone_sets_ssthresh_to_the_bdp():
    """Alone on 10 Mb/s, 40 ms: the link is saturated, BWE ≈ C and RTT_min
    the path's smallest RTT, so every ssthresh after the first (slow start's
    losses come before an estimate) is C × RTT_min; within 5 % (the filter's
    lag). RTT_min is 40 ms plus the link's packet time (the smallest sample
    has no receiving delay), which Westwood+ reads in whole 4-ms jiffies:
    44 ms, 36.7 segments
    (measured 35.2–36.7; packet engine 33.7–34.3, its delivery-rate
    estimate a few percent below C)."""
    sc = ccsim.dumbbell("10Mbps", "40ms", buffer="1BDP", duration="30s", seed=1,
                        flows=["westwood"], access=None)
    tr = ccsim.run(sc, mode="fluid").traces
    ss = tr[(tr.variable == "ssthresh") & (tr.time > 5)].value.to_numpy()
    assert np.isfinite(ss).all()
    # RTT_min: propagation and the link's packet time (41.2 ms), in whole
    # 4-ms jiffies rounded up: 44 ms
    rtt_min = math.ceil((0.040 + 1 / C) / 0.004) * 0.004
    assert np.abs(ss / (C * rtt_min) - 1).max() < 0.05, np.unique(ss.round(1))


@pytest.mark.slow
def test_lp_yields_to_reno_and_uses_an_empty_link():
    """TCP-LP backs off at the first sign of queueing: against Reno it keeps
    under 15 % (measured 8.7 %; packet engine 5.2 %), alone it still fills
    most of the link (measured 85 %; packet 84 %). The paper's LP: its clocks
    and its rule at an indication (the Linux stack's timestamp offset makes
    LP run as Reno after its first indication, and the stack gives Linux's
    rule, the window alone: tests/test_lp.py)."""
    paper = {"clock_offset": 0.0, "eci_ssthresh": True}
    assert _vs_reno("lp", "fluid", **paper).summary["share"][0] < 0.15
    sc = ccsim.dumbbell("10Mbps", "40ms", buffer="1BDP", duration="30s", seed=1,
                        flows=[ccsim.Flow("lp", params=paper)])
    assert ccsim.run(sc, mode="fluid").metrics["utilisation"] > 0.75


@pytest.mark.slow
def test_yeah_decongestion_holds_the_queue_at_alpha_then_reno_count_lets_it_grow():
    """What the window law does on a deep buffer (20 Mb/s, 40 ms, 4 BDP = 267
    packets): fast mode ends at queue delay base/phy (5 ms, 12 packets);
    in slow mode precautionary decongestion cuts whenever the flow's backlog
    passes alpha = 80, so for seconds 3–6 the queue stays near alpha (fluid
    max 92, packet 80: within 20 %); but its floor ``reno_count`` rises by
    one segment per slow round, so the queue then climbs (mean 250 by 30 s;
    packet 243) without a loss: same trajectory within 10 %."""
    res = {}
    for mode in ("fluid", "packet"):
        sc = ccsim.dumbbell("20Mbps", "40ms", buffer="4BDP", duration="30s", seed=1,
                            flows=["yeah"])
        r = ccsim.run(sc, mode=mode)
        tr = r.traces
        q = tr[tr.variable == "queue"]
        res[mode] = (q[(q.time > 3) & (q.time < 6)].value.max(), q[q.time > 27].value.mean())
    early, late = res["fluid"]
    assert early < 1.2 * 80.0, res
    assert late > 2 * 80.0, res
    assert abs(late / res["packet"][1] - 1) < 0.10, res


def test_yeah_grows_on_acks_alone_and_in_a_batch_alike():
    """A YeAH flow that lost its whole window to RED (every arrival dropped
    after a slow-start overshoot) gets no ACKs and does not grow. Its
    growth once ran for every flow of the law's group as soon as any one
    of them, in any scenario of the batch, had ACKs: seed 1 gave 702 drops
    alone and 628 in a batch with seeds 2-5."""
    sc = ccsim.dumbbell("10Mbps", "100ms", buffer=83, queue="red", duration="30s", seed=5,
                        flows=["yeah", "cubic"])
    batched = ccsim.run_many([sc.replace(seed=s) for s in range(1, 6)], mode="fluid",
                             traces=False)
    for s, res in zip(range(1, 6), batched):
        alone = ccsim.run(sc.replace(seed=s), mode="fluid", traces=False)
        for key in ("drops", "data_packets", "utilisation"):
            assert res.metrics[key] == alone.metrics[key], (s, key)


def test_pseudo_rate_alone_keeps_its_queue_target():
    """The bound ``base_rtt·μ + queue`` is a Vegas-like target of ``queue`` =
    3 segments: alone on a deep buffer the flow fills the link with 1.7
    segments queued in the packet engine (95 % of the link), which sends
    whole segments, floor(cwnd), and measures μ from them. The fluid engine
    kept 3.0 queued when fractions of a segment were in flight; 1.35 since
    it keeps whole segments. Half a segment either side of the packet
    engine's, the band the test had around the law's target."""
    sc = ccsim.dumbbell("10Mbps", "40ms", buffer="4BDP", duration="30s", seed=1,
                        flows=["pseudo-rate"])
    r = ccsim.run(sc, mode="fluid")
    assert r.metrics["utilisation"] > 0.93
    assert _queue(r).mean() == pytest.approx(1.7, abs=0.5)


@pytest.mark.slow
def test_bbr_window_is_two_bdp_and_bounds_the_queue():
    """Alone on a 4-BDP buffer: cwnd = 2·BDP + 3 (cwnd_gain, the send-quantum
    allowance), so the queue never exceeds 1 BDP + 3 however deep the buffer,
    and the link stays full. Measured: cwnd 73.1 (2·34.9 + 3 = 72.8), queue
    max 36.3, goodput 9.49 Mb/s. (Packet engine: 9.31 Mb/s, queue max 9 — the fluid
    gain-1.25 phase builds its queue an RTT/h times too fast; see the
    engine issues in the packet comparison below.)"""
    sc = ccsim.dumbbell("10Mbps", "40ms", buffer="4BDP", duration="30s", seed=1, flows=["bbr"])
    r = ccsim.run(sc, mode="fluid")
    tr = r.traces
    cwnd = tr[(tr.variable == "cwnd") & (tr.time > 5)].value.to_numpy()
    # the BDP it measures: its min RTT has the packet's times at the NICs and
    # the link and half the receiving delay beside the 40 ms (41.9 ms)
    bdp = C * (0.040 + 2 * 8 * sc.packet_size / sc.flows[0].access_rate + 1 / C
               + sc.ack_wait / 2)
    assert np.median(cwnd) == pytest.approx(2 * bdp + 3, rel=0.02)
    assert _queue(r).max() <= bdp + 3 + 0.5
    # the link full but for ProbeRTT: 200 ms at 4 segments every 10 s, its
    # ACKs delayed there (2-3 %); 95 % of the payload rate (packet engine: 95.7 %)
    assert r.summary["goodput_bps"][0] > 0.95 * 10e6 * sc.mss / sc.packet_size


@pytest.mark.slow
def test_bbr_holds_its_rate_under_random_loss_where_reno_collapses():
    """2 % random loss (Kwon et al.'s finding): BBR does not reduce on loss and
    keeps pacing at its measured bandwidth; Reno's window collapses to
    √(1.5/p) ≈ 9 segments. Measured: BBR 7.69 Mb/s, Reno 2.07 (packet
    engine 5.35 and 1.90). BBR above half the link and 3 times Reno."""
    gp = {}
    for algo in ("bbr", "reno"):
        sc = ccsim.dumbbell("10Mbps", "40ms", buffer="1BDP", duration="30s", seed=1,
                            loss=0.02, flows=[algo])
        gp[algo] = ccsim.run(sc, mode="fluid").summary["goodput_bps"][0]
    assert gp["bbr"] > 5e6 and gp["bbr"] > 3 * gp["reno"], gp


# -- (3) the packet engine ------------------------------------------------------------------
# Against Reno, 10 Mb/s, 40 ms, 1 BDP, 30 s (the packet engine is the same for
# every seed here: no random loss). Measured share (fluid / packet):
# Westwood+ 0.474/0.480 (exact RTTs), LP 0.087/0.052, YeAH 0.523/0.538, Pseudo-Rate
# 0.161/0.129. The fluid engine's own gap against the packet engine is a
# median 3.7 points (its loss allocation, docs/fluid.md); 5 points each.
# Westwood+ reads RTTs in whole 4 ms jiffies by default; here exactly (jiffy=0):
# the fluid engine's RTT has no serialisation time (40.0 ms at an empty queue,
# where a packet's sample is 41.2 ms), and rounding up to jiffies turns that
# 1.2 ms into 4 ms (40 ms stays 40, 41.2 becomes 44), a 10 % larger ssthresh in
# the packet engine only. (A strict xfail until drop-tail overflow was shared
# by arrival rate, 2026-11-27.)
@pytest.mark.slow
@pytest.mark.parametrize("name,params", [
    ("westwood", {"jiffy": 0.0}), ("lp", {}), ("lp", {"clock_offset": 0.0}),
    ("lp", {"clock_offset": 0.0, "eci_ssthresh": True}), ("yeah", {}), ("pseudo-rate", {}),
    ("westwood", {}),
])
def test_share_against_reno_matches_the_packet_engine(name, params):
    # the seeded jitters off: the 0.05 was set on one draw of this scenario (exact
    # phases); with the default jitters Westwood+ measured 0.470 vs 0.526
    exact = {"start_jitter": 0, "ack_jitter": 0}
    fluid = _vs_reno(name, "fluid", knobs=exact, **params).summary["share"][0]
    packet = _vs_reno(name, "packet", knobs=exact, **params).summary["share"][0]
    assert abs(fluid - packet) < 0.05, (fluid, packet)


def test_veno_share_against_reno_matches_the_packet_engine():
    # Means over seeds 1-5: one packet run's Veno share moves by 0.39-0.47 with the
    # seed (the Linux stack's exit ACK took seed 1 from 0.42 to 0.39), a standard
    # deviation of about 0.035, so the 5-seed mean's standard error is about 0.016
    # and 0.04 is 2.5 of them.
    seeds = range(1, 6)
    fluid = np.mean([_vs_reno("veno", "fluid", seed=s).summary["share"][0] for s in seeds])
    packet = np.mean([_vs_reno("veno", "packet", seed=s).summary["share"][0] for s in seeds])
    assert abs(fluid - packet) < 0.04, (fluid, packet)


@pytest.mark.slow
def test_bbr_share_against_reno_matches_the_packet_engine():
    # BBR against Reno, 10 Mbit/s, 40 ms, 1 BDP: 0.889 (fluid) vs 0.875 (packet), with
    # Linux's fixed-point gains (739/256, 88/256). This was a strict xfail at 0.89 vs 0.66
    # with the exact 2/ln 2 and ln 2/2: the packet outcome is bistable in the gains (a
    # 0.05 % change moves it 22 points; the fluid model does not move), so this agreement
    # holds for Linux's constants and is a check that they stay in force.
    fluid = _vs_reno("bbr", "fluid").summary
    packet = _vs_reno("bbr", "packet").summary
    assert (fluid["goodput_bps"] >= 0).all()
    assert abs(fluid["share"][0] - packet["share"][0]) < 0.10


@pytest.mark.slow
def test_bbr_alone_matches_the_packet_engine_goodput():
    """BBR alone, 1 BDP: goodput 9.55 vs 9.32 Mb/s (within 5 %: the fluid
    link has no idle gaps); mean RTT 46 vs 43 ms (within 15 %: the fluid
    model's gain phases build their queue within a step)."""
    out = []
    for mode in ("fluid", "packet"):
        sc = ccsim.dumbbell("10Mbps", "40ms", buffer="1BDP", duration="30s", seed=1,
                            flows=["bbr"])
        summary = ccsim.run(sc, mode=mode).summary
        out.append((summary["goodput_bps"][0], summary["mean_rtt"][0]))
    (good_f, rtt_f), (good_p, rtt_p) = out
    assert abs(good_f / good_p - 1) < 0.05, out
    assert abs(rtt_f / rtt_p - 1) < 0.15, out
