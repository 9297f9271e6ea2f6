"""Rule tests for CUBIC (RFC 9438), plus one packet-engine behaviour test.

Expected values come from ``rfc9438_*`` below, a restatement of RFC 9438 §4.2–§4.7 written
here independently of ccsim.algorithms.cubic, or from arithmetic done by hand.
"""

import functools
import math

import numpy as np
import pytest

import ccsim
from ccsim import algorithms
from ccsim.algorithms import Ack, Loss

MSS = 1460
C, BETA = 0.4, 0.7  # RFC 9438 §4.2 (C) and §4.6 (β_cubic)


# -- RFC 9438, restated (windows in segments, times in s) --------------------------------------
def rfc9438_k(w_max: float, cwnd_epoch: float) -> float:
    """§4.2 eq. 2: K = cbrt((W_max − cwnd_epoch)/C)."""
    return ((w_max - cwnd_epoch) / C) ** (1 / 3)


def rfc9438_w_cubic(t: float, w_max: float, k: float) -> float:
    """§4.2 eq. 1: W_cubic(t) = C·(t − K)³ + W_max."""
    return C * (t - k) ** 3 + w_max


ALPHA_CUBIC = 3 * (1 - BETA) / (1 + BETA)  # §4.3, = 0.9/1.7


def make(cwnd=10.0, ssthresh=math.inf, **params):
    # RFC 9438's constants, which the restated rules below use (Linux's differ in the
    # fourth digit: see test_defaults_are_linux_constant_for_constant)
    params = {"c": C, "beta": BETA, **params}
    cc = algorithms.get("cubic")(**params)
    cc.start(10, MSS)
    cc.cwnd, cc.ssthresh = float(cwnd), float(ssthresh)
    return cc


def ack(now, acked=1.0, srtt=0.1):
    return Ack(now=now, acked=acked, rtt=srtt, min_rtt=srtt, srtt=srtt, inflight=10.0,
               delivered=0.0, delivery_rate=None)


def loss(now=0.0, kind="fast", inflight=100.0):
    return Loss(now=now, kind=kind, inflight=inflight, min_rtt=0.1, srtt=0.1)


def drive(cc, t_start, duration, rtt):
    """Synthetic ACK clock: every RTT, one ACK per segment of the window, spread evenly.

    Returns (times, cwnd after each round, W_est after each round).
    """
    t, times, cwnds, ests = t_start, [], [], []
    while t < t_start + duration:
        n = int(cc.cwnd)
        for i in range(n):
            cc.on_ack(ack(t + rtt * i / n, srtt=rtt))
        t += rtt
        times.append(t)
        cwnds.append(cc.cwnd)
        ests.append(cc.w_est)
    return np.array(times), np.array(cwnds), np.array(ests)


# -- defaults and the curve ---------------------------------------------------------------------
def test_defaults_are_linux_constant_for_constant():
    # tcp_cubic.c: cube_rtt_scale = bic_scale * 10 = 410 over 2^10 (BICTCP_HZ), beta = 717
    # over BICTCP_BETA_SCALE = 1024; the RFC's 0.4 and 0.7 are keywords.
    assert algorithms.get("cubic")().params() == {
        "c": 410 / 1024, "beta": 717 / 1024, "fast_convergence": True, "hystart": True,
        "hystart_variant": "linux", "hystart_detect": 3, "tcp_friendliness": True,
        "rfc9438_friendly": False, "rtt": "delay_min", "friendly_per_ack": False}
    cc = algorithms.get("cubic")()
    cc.start(10, MSS)
    cc.cwnd = 100.0
    cc.on_loss(loss())
    assert cc.ssthresh == 100.0 * 717 / 1024  # Linux: cwnd * beta / 1024


def test_rfc9438_constants_are_keywords():
    cc = make(cwnd=100.0, c=0.4, beta=0.7)
    cc.on_loss(loss())
    assert cc.ssthresh == pytest.approx(70.0, rel=1e-12)


# -- the Reno-friendly region: Linux's fixed alpha by default, RFC 9438's as an option --------
def test_linux_alpha_is_eight_over_its_integer_beta_scale():
    # tcp_cubic.c: beta_scale = 8 * (1024 + beta) / 3 / (1024 - beta) in integers; with
    # beta = 717 that is 13928 / 3 / 307 = 15, and W_est gains one segment per
    # beta_scale / 8 windows of ACKs: alpha = 8 / 15. RFC 9438: 3 * 0.3 / 1.7 = 0.529.
    assert algorithms.get("cubic")().alpha_cubic == 8 / 15
    assert algorithms.get("cubic")(rfc9438_friendly=True, beta=0.7).alpha_cubic == pytest.approx(
        0.9 / 1.7, rel=1e-12)


def test_linux_keeps_alpha_past_the_previous_window_where_the_rfc_raises_it_to_one():
    # RFC 9438 §4.3 raises alpha to 1 once W_est >= cwnd_prior; Linux never does, so on the
    # convex side RFC-CUBIC's estimate runs ahead (by up to 3.7 segments in the check that
    # found it). One window of ACKs past cwnd_prior: +8/15 (Linux) against +1 (RFC).
    for params, gain in (({}, 8 / 15), ({"rfc9438_friendly": True}, 1.0)):
        cc = make(cwnd=40.0, **params)
        cc.on_loss(loss())
        cc.cwnd = cc.ssthresh = 28.0
        cc.on_ack(ack(0.0, acked=1e-9))  # begins the epoch: W_est = 28
        cc.w_est = 45.0  # past cwnd_prior = 40
        cc.on_ack(ack(0.01, acked=cc.cwnd))
        assert cc.w_est - 45.0 == pytest.approx(gain, rel=1e-6)


def test_without_tcp_friendliness_cwnd_follows_the_cubic_curve_alone():
    # Linux's module parameter tcp_friendliness = 0: no Reno-friendly region, so in the
    # small-window, short-RTT case below cwnd stays under W_est.
    rtt = 0.02
    cc = make(cwnd=20.0, tcp_friendliness=False)
    cc.on_loss(loss())
    cc.cwnd = cc.ssthresh
    times, cwnd, est = drive(cc, 0.0, 2.0, rtt)
    assert (cwnd < est - 0.5).any()


def test_friendly_estimate_per_ack_as_linux_before_4_1():
    # Linux 2.6.3x-4.0 bictcp_update: ca->ack_cnt++ once per ACK, and W_est
    # (tcp_cwnd) gains one per cwnd/alpha ACKs, whatever each ACK acknowledged;
    # mainline counts the segments. An ACK of two segments: alpha/cwnd against
    # 2·alpha/cwnd; and the cubic target still moves per segment in both.
    per_ack, per_segment = make(cwnd=50.0, friendly_per_ack=True), make(cwnd=50.0)
    for cc in (per_ack, per_segment):
        cc.on_loss(loss())
        cc.cwnd = cc.ssthresh  # 35
        cc.on_ack(ack(now=1.0, acked=1.0))  # opens the epoch: W_est = cwnd + alpha/cwnd
    w0, c0 = per_ack.w_est, per_ack.cwnd
    assert (w0, c0) == (per_segment.w_est, per_segment.cwnd)
    for cc in (per_ack, per_segment):
        cc.on_ack(ack(now=1.01, acked=2.0))
    assert per_ack.w_est - w0 == pytest.approx((8 / 15) / c0, rel=1e-12)
    assert per_segment.w_est - w0 == pytest.approx(2 * (8 / 15) / c0, rel=1e-12)
    with pytest.raises(ccsim.errors.ScenarioError, match="friendly_per_ack"):
        ccsim.run(ccsim.dumbbell("10Mbps", "20ms", flows=[
            ccsim.Flow("cubic", params={"friendly_per_ack": True})], duration="1s"), mode="fluid")

def test_k_for_w_max_100():
    # Hand arithmetic: W_max = 100, cwnd_epoch = β·W_max = 70 → K = cbrt(30/0.4) = cbrt(75).
    cc = make()
    assert cc.k(100.0, 70.0) == pytest.approx(75 ** (1 / 3), rel=1e-12)
    assert cc.k(100.0, 70.0) == pytest.approx(4.2172, abs=1e-4)
    assert cc.k(100.0, 70.0) == pytest.approx(rfc9438_k(100, 70), rel=1e-12)


def test_w_cubic_at_zero_and_at_k():
    cc = make(cwnd=100.0, ssthresh=50.0)
    cc.on_loss(loss())
    cc.cwnd = cc.ssthresh  # what the recovery sets when it ends
    cc.on_ack(ack(now=10.0))  # first ACK after the loss starts the epoch at t0 = 10 s
    k = rfc9438_k(100, 70)
    assert cc.w_cubic(0.0) == pytest.approx(BETA * 100, rel=1e-12)
    assert cc.w_cubic(k) == pytest.approx(100.0, rel=1e-12)
    for t in (0.5, 2.0, 6.0):
        assert cc.w_cubic(t) == pytest.approx(rfc9438_w_cubic(t, 100, k), rel=1e-12)


# -- loss reaction ------------------------------------------------------------------------------
@pytest.mark.parametrize("cwnd", [100.0, 10.0, 2.5])
def test_ssthresh_after_loss(cwnd):
    cc = make(cwnd=cwnd, ssthresh=5.0)
    before = (cc.cwnd, cc.ssthresh, cc.w_max)
    got = cc.ssthresh_after(loss(inflight=cwnd / 2))  # uses cwnd, not flight size
    assert got == pytest.approx(max(BETA * cwnd, 2.0), rel=1e-12)
    assert (cc.cwnd, cc.ssthresh, cc.w_max) == before  # pure


def test_fast_convergence():
    cc = make(cwnd=100.0)
    cc.on_loss(loss())
    assert cc.w_max == 100.0  # first loss: no previous W_max
    cc.cwnd = 80.0  # next loss below the previous W_max: release bandwidth (§4.7)
    cc.on_loss(loss())
    assert cc.w_max == pytest.approx(80 * (1 + BETA) / 2, rel=1e-12)  # = 68
    cc.cwnd = 90.0  # above the (reduced) W_max of 68: plain W_max = cwnd
    cc.on_loss(loss())
    assert cc.w_max == 90.0


def test_fast_convergence_off():
    cc = make(cwnd=100.0, fast_convergence=False)
    cc.on_loss(loss())
    cc.cwnd = 80.0
    cc.on_loss(loss())
    assert cc.w_max == 80.0


def test_timeout_restarts_with_k_zero():
    # §4.8: after a timeout the next epoch has K = 0 and W_max = cwnd at its start.
    cc = make(cwnd=100.0)
    cc.on_loss(loss(kind="timeout"))
    assert cc.cwnd == 1.0 and cc.ssthresh == pytest.approx(70.0)
    cc.cwnd = cc.ssthresh
    cc.on_ack(ack(now=5.0))
    # K = 0: the cubic curve starts the epoch at W_max itself (eq. 1 at t = 0)
    assert cc.w_cubic(0.0) == cc.w_max == pytest.approx(70.0)


def test_slow_start_is_reno():
    cc = make(cwnd=10.0, ssthresh=12.0)
    cc.on_ack(ack(now=1.0, acked=1.0))
    assert cc.cwnd == 11.0  # RFC 5681 slow start: +1 per segment acked
    assert cc.epoch_start is None  # no epoch yet: still in slow start


# -- the trajectory after one loss --------------------------------------------------------------
@pytest.mark.slow
def test_trajectory_concave_plateau_convex():
    """Fixed RTT 100 ms, W_max = 1000: CUBIC region (W_cubic ≫ W_est) the whole time."""
    rtt, w_max = 0.1, 1000.0
    cc = make(cwnd=w_max)
    cc.on_loss(loss())
    cc.cwnd = cc.ssthresh  # 700
    k = rfc9438_k(w_max, BETA * w_max)  # cbrt(750) ≈ 9.09 s
    times, cwnd, est = drive(cc, 0.0, 2 * k, rtt)
    t = times - rtt  # epoch began at the first ACK, t = 0
    # follows W_cubic: cwnd after a round ends near W_cubic(t + RTT) (the target one RTT
    # ahead); 2 % covers the one-round lag of cwnd += (target − cwnd)/cwnd per ACK
    curve = rfc9438_w_cubic(t + rtt, w_max, k)
    assert np.allclose(cwnd, curve, rtol=0.02)
    d2 = np.diff(cwnd, 2)
    before, after = t[1:-1] < k - 1.0, t[1:-1] > k + 1.0  # ±1 s: away from the inflection
    assert (d2[before] < 0).all()  # concave approach
    assert (d2[after] > 0).all()  # convex probing
    near_k = np.abs(t - k) < 0.5
    assert np.allclose(cwnd[near_k], w_max, rtol=0.005)  # plateau: |C(t−K)³| ≤ 0.05 here
    assert (cwnd[t < k - 0.5] < w_max).all()
    assert (cwnd >= est - 1e-9).all()


@pytest.mark.slow
def test_trajectory_reno_friendly_region():
    """Small window, short RTT: W_cubic (14 → 20 in K ≈ 2.5 s) grows slower than W_est
    (α_cubic per 20 ms RTT ≈ 26 segments/s), so cwnd follows W_est (§4.3)."""
    rtt, w_max = 0.02, 20.0
    # RFC 9438 (rfc9438_friendly): alpha_cubic, then 1 above cwnd_prior; Linux: 8/15 throughout.
    for params, alpha, alpha_late in (({"rfc9438_friendly": True}, ALPHA_CUBIC, 1.0),
                                      ({}, 8 / 15, 8 / 15)):
        cc = make(cwnd=w_max, **params)
        cc.on_loss(loss())
        cc.cwnd = cc.ssthresh  # 14
        times, cwnd, est = drive(cc, 0.0, 10.0, rtt)
        assert (cwnd >= est - 1e-9).all()
        # First rounds: W_est grows alpha per RTT (one ACK per segment: Σ acked/cwnd ≈ 1 per
        # round), so after n rounds W_est ≈ 14 + n·alpha until it reaches cwnd_prior = 20.
        n = 5
        assert est[n - 1] == pytest.approx(14 + n * alpha, rel=0.02)  # int(cwnd) ACKs/round
        assert cwnd[n - 1] == pytest.approx(est[n - 1], rel=1e-9)
        # Above cwnd_prior: alpha_late per RTT (int(cwnd) ACKs of 1/cwnd: less 1/cwnd of it).
        late = est > 20.0 + 1
        slope = np.diff(est)[late[1:]]
        assert np.allclose(slope, alpha_late, atol=0.06)


# -- packet engine ------------------------------------------------------------------------------
@pytest.mark.slow
def test_packet_engine_cubic_shape():
    """100 Mbit/s, 50 ms, 1 BDP buffer, random loss 3e-5: losses are mostly single drops
    that fast recovery repairs, so epochs run long enough to show the curve."""
    res = ccsim.run(ccsim.dumbbell("100Mbps", "50ms", buffer="1BDP", loss=3e-5,
                                   flows=["cubic"], duration="30s"))
    cwnd = res.series("cwnd")[0]
    # Reductions: every loss sets a new ssthresh (the window itself comes down over
    # one RTT of PRR recovery, so it is not a single step).
    ssthresh = res.series("ssthresh")[0].ffill()
    falls = ssthresh.index[(ssthresh.diff().fillna(0) != 0).to_numpy()]
    later = falls[falls > 3.0]  # past slow start
    gaps = np.diff(later)
    i = int(np.argmax(gaps))
    assert gaps[i] > 5.0  # one epoch of several seconds at least
    t0, t1 = later[i], later[i + 1]
    seg = cwnd[(cwnd.index > t0 + 0.5) & (cwnd.index < t1 - 0.05)]
    w = seg.rolling(5, center=True).mean().dropna().to_numpy()  # smooth sampling jitter
    n = len(w)
    head, tail = w[: n // 5], w[-n // 10:]
    assert np.diff(head, 2).mean() < 0  # concave approach to W_max right after the loss
    assert np.diff(tail, 2).mean() > 0  # convex probing just before the next loss
    # RFC 9438 §5.1 response function with p = 3e-5 and RTT 0.05–0.1 s gives an average
    # window of 280–470 segments against a BDP of 428, so the link is not kept full: 0.6.
    goodput = res.series("goodput")[0]
    assert goodput[goodput.index > 10].mean() / 100e6 > 0.6


@functools.lru_cache(maxsize=None)
def _rtt_exponent(name: str) -> float:
    """Two flows of ``name`` with base RTTs 20 ms and 80 ms share a 20 Mbit/s
    drop-tail bottleneck with 0.3 BDP of buffer; returns k in
    throughput ratio = (RTT ratio)^k. Without the seeded jitters, which
    desynchronise the two flows' drops (with them Reno's k is 1.0-1.15 and
    CUBIC's 1.2 over three seeds): the regime under test is synchronised drops.
    Without the hosts' NICs for the same reason: interleaving the flows' bursts
    desynchronises them too (seed 1: Reno 1.58 and CUBIC 1.56 with NICs, 1.66
    and 1.22 without)."""
    sc = ccsim.dumbbell("20Mbps", "20ms", buffer="0.3BDP", duration="120s", seed=1,
                        start_jitter=0, ack_jitter=0, access=None,
                        flows=[ccsim.Flow(name, rtt="20ms"), ccsim.Flow(name, rtt="80ms")])
    g = ccsim.run(sc).summary["goodput_bps"]
    return math.log(g[0] / g[1]) / math.log(4.0)


@pytest.mark.slow
def test_rtt_unfairness_closer_to_linear_than_renos():
    # Ha, Rhee, Xu 2008 §4: CUBIC's throughput ratio grows linearly with the RTT
    # ratio, Reno's quadratically when drops are synchronised (Lakshman & Madhow
    # 1997) — the small-buffer drop-tail regime set up here. The band around 2
    # for Reno allows for desynchronised drops (0.4 either way).
    reno, cubic = _rtt_exponent("reno"), _rtt_exponent("cubic")
    assert abs(cubic - 1.0) < abs(reno - 1.0)
    assert cubic > 0  # the short-RTT flow still gets more


@pytest.mark.slow
@pytest.mark.xfail(strict=True, reason=(
    "Reno's exponent is 1.53 since the Linux stack halves the window at a loss (PRR "
    "dividing by it), below the band for synchronised drops: open"))
def test_renos_rtt_unfairness_is_near_quadratic():
    # Lakshman & Madhow 1997: with synchronised drops Reno's throughput ratio grows
    # with the square of the RTT ratio; the band allows for desynchronised drops.
    assert 1.6 < _rtt_exponent("reno") < 2.4


# -- HyStart++ (RFC 9406) ------------------------------------------------------------------------
from ccsim.algorithms.hystart import HyStartPlusPlus  # noqa: E402


def _round(hs: HyStartPlusPlus, delivered: float, rtt: float, n: int = 8, inflight: float = 8.0):
    """One round of ``n`` ACKs with RTT ``rtt``; returns the growth factors."""
    out = []
    for i in range(n):
        d = delivered + i + 1
        out.append(hs.growth(Ack(now=d, acked=1, rtt=rtt, min_rtt=rtt, srtt=rtt,
                                 inflight=inflight, delivered=d, delivery_rate=None)))
    return out, delivered + n


@pytest.mark.parametrize("base, thresh", [(0.1, 0.0125),   # 100 ms / 8
                                          (0.02, 0.004),   # clamped up to 4 ms
                                          (0.2, 0.016)])   # clamped down to 16 ms
def test_hystart_leaves_slow_start_when_rtt_rises_by_the_threshold(base, thresh):
    # RFC 9406 §4.2: RttThresh = clamp(lastRoundMinRTT / 8, 4 ms, 16 ms); once a
    # round has N_RTT_SAMPLE (8) samples, currentRoundMinRTT ≥ last + RttThresh
    # starts CSS, whose growth is divided by CSS_GROWTH_DIVISOR (4).
    below, above = HyStartPlusPlus(), HyStartPlusPlus()
    for hs, rise in ((below, thresh * 0.9), (above, thresh * 1.1)):
        growth, d = _round(hs, 0.0, base)
        assert growth == [1.0] * 8
        growth, d = _round(hs, d, base + rise)
        assert growth[:7] == [1.0] * 7  # fewer than 8 samples: no decision yet
    assert growth[7] == 0.25 and above.in_css
    assert not below.in_css


def test_hystart_css_ends_in_congestion_avoidance_or_resumes_slow_start():
    hs = HyStartPlusPlus()
    _, d = _round(hs, 0.0, 0.1)
    _, d = _round(hs, d, 0.12)          # CSS, baseline 120 ms
    assert hs.in_css
    spurious = HyStartPlusPlus()
    _, d2 = _round(spurious, 0.0, 0.1)
    _, d2 = _round(spurious, d2, 0.12)
    growth, _ = _round(spurious, d2, 0.11)  # RTT back below the baseline
    assert not spurious.in_css and growth[-1] == 1.0
    for _ in range(4):                  # CSS_ROUNDS = 5 rounds in CSS in all
        _, d = _round(hs, d, 0.12)
        assert not hs.done
    hs.growth(Ack(now=d + 1, acked=1, rtt=0.12, min_rtt=0.1, srtt=0.12, inflight=8.0,
                  delivered=d + 1, delivery_rate=None))
    assert hs.done


@pytest.mark.slow
def test_hystart_cuts_the_slow_start_overshoot():
    # 100 Mbit/s, 50 ms, 1 BDP: plain slow start overshoots BDP + buffer (856
    # packets) by a factor of two; HyStart++ leaves it as the queue builds.
    def run(hystart):
        sc = ccsim.dumbbell("100Mbps", "50ms", buffer="1BDP", duration="15s", seed=1,
                            flows=[ccsim.Flow("cubic", params={"hystart": hystart})])
        return ccsim.run(sc)

    plain, hy = run(False), run(True)
    assert hy.summary.loc[0, "retransmits"] < 0.5 * plain.summary.loc[0, "retransmits"]
    assert hy.series("cwnd")[0].max() < plain.series("cwnd")[0].max()
    assert hy.metrics["utilisation"] >= plain.metrics["utilisation"] - 0.01


# -- Linux's HyStart (tcp_cubic.c hystart_update) and delay_min --------------------------------
from ccsim.algorithms.hystart import HyStartLinux  # noqa: E402


def _train(hs, start, gap, n, rtt=0.04, min_rtt=0.04, srtt=0.04, cwnd=20.0, delivered=0.0,
           inflight=1000.0):
    """``n`` ACKs ``gap`` s apart from ``start``; returns the index of the first
    that ends slow start, or None."""
    for i in range(n):
        a = Ack(now=start + i * gap, acked=1, rtt=rtt, min_rtt=min_rtt, srtt=srtt,
                inflight=inflight, delivered=delivered + i + 1, delivery_rate=None)
        if hs.update(a, cwnd, MSS):
            return i
    return None


def test_linux_hystart_ack_train_fires_past_half_the_minimum_rtt():
    # Restated from tcp_cubic.c: ACKs <= 2 ms apart extend the train; it fires once
    # now - round_start > (delay_min + ack_delay) / 2, ack_delay = min(1 ms, 4·65536 B /
    # (2·cwnd·mss/srtt)). Here 2·20·1000/0.04 = 1e6 B/s: 0.262 s, capped to 1 ms.
    hs = HyStartLinux(detect=1)
    threshold = (0.04 + 0.001) / 2  # 20.5 ms
    first = _train(hs, 1.0, 0.001, 40)
    assert first == math.floor(threshold / 0.001) + 1 and hs.exit == "train"
    # ACKs 3 ms apart never form a train, however long the round
    assert _train(HyStartLinux(detect=1), 1.0, 0.003, 200) is None
    # the delay test alone does not look at trains
    assert _train(HyStartLinux(detect=2), 1.0, 0.001, 40) is None


@pytest.mark.parametrize("min_rtt, thresh", [(0.1, 0.0125), (0.02, 0.004), (0.2, 0.016)])
def test_linux_hystart_delay_fires_past_the_clamped_threshold(min_rtt, thresh):
    # HYSTART_MIN_SAMPLES = 8 samples are only counted; from the 9th on, the round's
    # minimum above delay_min + clamp(delay_min/8, 4 ms, 16 ms) ends slow start.
    for rise, fires in ((thresh * 0.9, False), (thresh * 1.1, True)):
        hs = HyStartLinux(detect=2)
        first = _train(hs, 1.0, 0.05, 12, rtt=min_rtt + rise, min_rtt=min_rtt)
        assert first == (8 if fires else None)
        assert hs.exit == ("delay" if fires else None)


def test_cubic_hystart_waits_for_the_low_window_and_sets_ssthresh_to_cwnd():
    cc = algorithms.get("cubic")(hystart_detect=2)
    cc.start(10, MSS)
    for i in range(30):  # RTTs far above the threshold, but cwnd below 16 at first
        cc.on_ack(Ack(now=1.0 + i, acked=1, rtt=0.2, min_rtt=0.1, srtt=0.2, inflight=100.0,
                      delivered=i + 1.0, delivery_rate=None))
        if cc.ssthresh < math.inf:
            break
    # samples counted from cwnd = 16 (i = 6): 8 counted, the 9th (cwnd 24) fires
    assert cc.ssthresh == 24.0 and i == 14
    plain = algorithms.get("cubic")(hystart=False)
    plain.start(10, MSS)
    for i in range(30):
        plain.on_ack(Ack(now=1.0 + i, acked=1, rtt=0.2, min_rtt=0.1, srtt=0.2, inflight=100.0,
                         delivered=i + 1.0, delivery_rate=None))
    assert plain.ssthresh == math.inf and plain.cwnd == 40.0


@pytest.mark.parametrize("rtt_kind", ["delay_min", "srtt"])
def test_cubic_target_reads_delay_min_as_linux(rtt_kind):
    # bictcp_update: t += delay_min, target = C·(t − K)³ + W_max; cwnd moves
    # (target − cwnd)/cwnd per segment. With srtt 0.3 s and min RTT 0.1 s the two differ.
    cc = algorithms.get("cubic")(hystart=False, rtt=rtt_kind)
    cc.start(10, MSS)
    cc.cwnd = 100.0
    cc.on_loss(loss())
    cc.cwnd = cc.ssthresh
    w_max, c = cc.w_max, cc.c
    k = ((w_max - cc.cwnd) / c) ** (1 / 3)
    cc.on_ack(Ack(now=2.0, acked=1, rtt=0.3, min_rtt=0.1, srtt=0.3, inflight=70.0,
                  delivered=1.0, delivery_rate=None))  # starts the epoch at t = 0
    before = cc.cwnd
    cc.on_ack(Ack(now=3.0, acked=1, rtt=0.3, min_rtt=0.1, srtt=0.3, inflight=70.0,
                  delivered=2.0, delivery_rate=None))
    r = 0.1 if rtt_kind == "delay_min" else 0.3
    target = min(max(c * (1.0 + r - k) ** 3 + w_max, before), 1.5 * before)
    assert cc.cwnd == pytest.approx(max(before + (target - before) / before, cc.w_est))


def test_before_a_loss_cubic_grows_at_least_five_percent_per_rtt_as_linux():
    # bictcp_update: "if (ca->last_max_cwnd == 0 && ca->cnt > 20) ca->cnt = 20": with no
    # loss yet (HyStart ended slow start), the plateau's flat curve still grows cwnd by
    # 1/20 of a segment per segment acknowledged; after a fast loss the rule is off.
    cc = algorithms.get("cubic")(hystart=False)
    cc.start(10, MSS)
    cc.cwnd, cc.ssthresh = 100.0, 100.0  # as HyStart leaves it: no loss, K = 0 at cwnd
    cc.on_ack(ack(1.0, srtt=0.1))        # begins the epoch on the plateau
    before = cc.cwnd
    cc.on_ack(ack(1.001, srtt=0.1))
    assert cc.cwnd - before == pytest.approx(1 / 20, rel=1e-9)
    cc.on_loss(loss())
    cc.cwnd = cc.ssthresh
    cc.on_ack(ack(2.0))                  # new epoch below W_max: concave, cnt from the curve
    w = cc.cwnd
    cc.on_ack(ack(2.001))
    assert cc.cwnd - w < 1 / 20 or cc.cwnd - w == pytest.approx(
        (min(cc.w_cubic(2.001 - cc.epoch_start + 0.1), 1.5 * w) - w) / w)
