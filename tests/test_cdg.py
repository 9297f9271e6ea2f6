"""Rule tests for CDG (ccsim.algorithms.cdg) against Hayes & Armitage, IFIP Networking 2011,
and Linux net/ipv4/tcp_cdg.c.

Expected values are restated by hand: the paper's backoff probability 1 − e^(−ḡ/G) with ḡ
the gradient averaged over the window, in Linux's form 1 − exp(−Σg[µs]·42/10⁶); the window
sum of per-round gradients telescopes to rtt_now − rtt_(window rounds ago); a backoff keeps
724/1024 of the window; a loss keeps max(2, min(shadow/2, W), W/2).

The random draw is pinned by replacing the module's ``draw`` with one that returns a chosen
``u``: the law backs off exactly when ``u`` is below the probability.
"""

import math

import pytest

import ccsim
from ccsim import algorithms
from ccsim.algorithms import Ack, Loss, cdg
from ccsim.testing import check_algorithm
from fluid_arrays import flow_arrays

MSS = 1000
BASE = 0.1  # s


def make(cwnd=50.0, ssthresh=40.0, **params):
    cc = algorithms.get("cdg")(**params)
    cc.start(10, MSS)
    cc.cwnd, cc.ssthresh, cc.shadow = float(cwnd), float(ssthresh), float(cwnd)
    return cc


class Rounds:
    """Rounds of ACKs of one segment each; each round's ACKs carry one RTT."""

    def __init__(self, cc):
        self.cc, self.t, self.delivered = cc, 0.0, 0.0

    def round(self, rtt, acks=10, outstanding=None):
        # by default a round ends with the first ACK of the next (Linux: the first ACK
        # beyond snd_nxt at the round's start), so CDG's rounds are these
        outstanding = acks - 1.0 if outstanding is None else outstanding
        for _ in range(acks):
            self.t += rtt / acks
            self.delivered += 1.0
            self.cc.on_ack(Ack(now=self.t, acked=1.0, rtt=rtt, min_rtt=BASE, srtt=rtt,
                               inflight=outstanding, delivered=self.delivered,
                               delivery_rate=None))


@pytest.fixture
def pinned(monkeypatch):
    """Set ``pinned.u`` to fix the backoff's draw."""
    class Pin:
        u = 0.5
    pin = Pin()
    monkeypatch.setattr(cdg, "draw", lambda state: (state, pin.u))
    return pin


def probability_restated(grad_s):
    return 1.0 - math.exp(-grad_s * 1e6 * 42 / 1e6)


def test_defaults_are_linux_module_parameters():
    cc = algorithms.get("cdg")()
    assert cc.params() == {"window": 8, "backoff_beta": int(0.7071 * 1024),
                           "backoff_factor": 42, "hystart_detect": 3, "use_ineff": 5,
                           "use_shadow": True, "use_tolerance": False, "seed": 0}
    assert (cc.name, cc.recovery) == ("cdg", "prr")


def test_window_must_be_a_power_of_two():
    with pytest.raises(ccsim.errors.ScenarioError, match="window=6.*power of two"):
        ccsim.Flow("cdg", params={"window": 6})


@pytest.mark.parametrize("grad", [1e-4, 1e-3, 5e-3])
def test_probability_is_the_papers_with_linux_scale(grad):
    # backoff_factor = 1000/(G·window) with G = 3: 1 − e^(−ḡ_ms/3), ḡ = Σg/window
    assert cdg.backoff_probability(grad, 42) == pytest.approx(probability_restated(grad))
    assert probability_restated(grad) == pytest.approx(1 - math.exp(-(grad * 1e3 / 8) / 3),
                                                       rel=0.01)


def _rising(cc, pinned, u, rounds, step):
    """Rounds with the RTT rising by ``step`` each; the draw fixed at ``u``."""
    pinned.u = u
    feed = Rounds(cc)
    for k in range(rounds):
        feed.round(BASE + k * step)
    return feed


@pytest.mark.parametrize("rounds", [3, 5, 9, 12])
def test_backoff_exactly_below_the_probability_of_the_window_sum(pinned, rounds):
    step = 1e-3
    # gradients begin with the second round; until the window (8) fills, the sum is
    # extrapolated to 8 rounds: grad = 8·step either way once each round rises by step
    grad = 8 * step
    p = probability_restated(grad)
    cc = make(cwnd=50.0, ssthresh=40.0, hystart_detect=0)
    _rising(cc, pinned, p + 1e-9, rounds, step)
    assert cc.backoffs == 0
    cc = make(cwnd=50.0, ssthresh=40.0, hystart_detect=0)
    _rising(cc, pinned, p - 1e-9, rounds, step)
    assert cc.backoffs >= 1


def test_backoff_keeps_724_of_1024_and_waits_a_round(pinned):
    cc = make(cwnd=100.0, ssthresh=40.0, hystart_detect=0)
    pinned.u = 0.0
    feed = Rounds(cc)
    feed.round(BASE)
    feed.round(BASE + 1e-3, acks=1, outstanding=9.0)  # the first gradient: a backoff
    assert cc.backoffs == 1
    assert cc.cwnd == cc.ssthresh == (100 * 724) >> 10
    held = cc.cwnd
    feed.round(BASE, acks=8)          # the data outstanding at the backoff: no growth
    assert cc.cwnd == held
    feed.round(BASE, acks=2)          # acknowledged: growth resumes
    assert cc.cwnd > held


def test_ineffectual_backoffs_stop_after_use_ineff(pinned):
    cc = make(cwnd=200.0, ssthresh=40.0, hystart_detect=0)
    pinned.u = 0.0
    feed = Rounds(cc)
    rtt = BASE
    for _ in range(40):               # the delay only rises: no backoff seems to work
        rtt += 1e-3
        feed.round(rtt, outstanding=5.0)
    assert cc.backoffs == 5           # use_ineff = 5
    for _ in range(3):                # the delay falls by more than 32 µs: they may resume
        rtt -= 5e-3
        feed.round(rtt, outstanding=5.0)
    for _ in range(10):
        rtt += 1e-3
        feed.round(rtt, outstanding=5.0)
    assert cc.backoffs > 5


@pytest.mark.parametrize("use_shadow, expected", [(True, 50.0), (False, 35.0)])
def test_loss_after_a_backoff_keeps_half_the_shadow_window(pinned, use_shadow, expected):
    cc = make(cwnd=100.0, ssthresh=40.0, hystart_detect=0, use_shadow=use_shadow)
    pinned.u = 0.0
    feed = Rounds(cc)
    feed.round(BASE)
    feed.round(BASE + 1e-3, acks=1, outstanding=9.0)  # backoff: shadow 100, cwnd 70
    assert cc.backoffs == 1 and cc.cwnd == (100 * 724) >> 10 == 70 and math.floor(cc.shadow) == 100
    pinned.u = 1.0                    # no more backoffs
    feed.round(BASE, acks=9)          # the backoff's round is acknowledged: it is over
    assert not cc.backing_off and math.floor(cc.cwnd) == 70
    cc.on_loss(Loss(now=feed.t, kind="fast", inflight=72.0, min_rtt=BASE, srtt=BASE))
    # max(2, min(shadow/2, W), W/2) = max(2, 50, 35); without the shadow window W/2
    assert cc.ssthresh == expected


def test_loss_during_a_backoff_keeps_beta(pinned):
    cc = make(cwnd=100.0, ssthresh=40.0, hystart_detect=0)
    pinned.u = 0.0
    feed = Rounds(cc)
    feed.round(BASE)
    feed.round(BASE + 1e-3, acks=1, outstanding=9.0)
    assert cc.backoffs == 1
    cc.on_loss(Loss(now=feed.t, kind="fast", inflight=70.0, min_rtt=BASE, srtt=BASE))
    assert cc.ssthresh == (70 * 724) >> 10 == 49


def test_hystart_delay_ends_slow_start(pinned):
    pinned.u = 1.0
    cc = make(cwnd=10.0, ssthresh=math.inf, hystart_detect=2)
    feed = Rounds(cc)
    feed.round(BASE, acks=10)
    feed.round(BASE * 9 / 8 * 0.99, acks=10)  # below 9/8 of the smallest: slow start goes on
    assert cc.ssthresh == math.inf
    feed.round(BASE * 9 / 8 * 1.01, acks=10)  # above, after 8 ACKs of the round
    assert cc.ssthresh < math.inf and cc.ssthresh == math.floor(cc.ssthresh)


@pytest.mark.slow
def test_check_algorithm():
    check_algorithm(algorithms.get("cdg"), max_examples=60)
    check_algorithm(algorithms.get("cdg"), max_examples=20, params={"window": 1})


def _run(flows, buffer, duration, mode="packet", seed=1):
    # an ACK per segment, as the bounds below were derived (with the Linux stack's delayed
    # ACKs CDG alone used 0.833 of the link, seed 1)
    sc = ccsim.dumbbell(bandwidth="10Mbps", rtt="40ms", buffer=buffer, flows=flows,
                        duration=duration, seed=seed, delayed_ack=False)
    return ccsim.run(sc, mode=mode)


def _mean_queue(res, t0, t1):
    q = res.series("queue")
    return float(q[(q.index >= t0) & (q.index < t1)].mean().iloc[0])


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["packet", "fluid"])
def test_alone_keeps_a_small_queue_at_high_utilisation(mode):
    # Hayes & Armitage §5: CDG keeps the queueing delay low where loss-based TCP fills the
    # buffer. A queue rising a packet (1.2 ms) per round gives a window sum near 10 ms and
    # P(backoff) ≈ 1/3 per round: a backoff comes within a few packets of queue. Each cuts
    # the window to 0.71 of BDP + queue, below the BDP, so the link idles for part of the
    # climb back: utilisation stays above 0.85 but short of Reno's full link.
    res = _run(["cdg"], "4BDP", "30s", mode=mode)
    assert res.metrics["utilisation"] >= 0.85
    assert _mean_queue(res, 5.0, 30.0) <= 6.0
    assert res.summary["retransmits"].sum() == 0


def test_loses_share_to_cubic():
    # Backoffs on CUBIC's rising queue cost CDG share; the ineffectual-backoff cap (5 in a
    # row) and the shadow window keep it from starving (the paper's coexistence measures).
    # Measured 0.19-0.23 over seeds 1-3: the bounds leave about twice the spread each side.
    res = _run(["cdg", "cubic"], "1BDP", "60s")
    assert 0.05 < res.summary["share"].iloc[0] < 0.4


@pytest.mark.parametrize("mode", ["packet", "fluid"])
def test_keeps_backing_off_against_reno(mode):
    # A backoff against Reno does not shrink the queue, but Reno's losses do: the first round
    # after a loss's recovery measures that fall (against the round under way at the loss,
    # Linux's CA_EVENT_COMPLETE_CWR) and resets the ineffectual-backoff count, so CDG keeps
    # backing off and holds a small share. Measured 0.16 in the packet engine, 0.18 in the
    # fluid one (seeds 1-3: 0.175-0.181); a fluid law that forgot the round under way at a
    # loss stopped after five backoffs and took Reno's half (0.45).
    res = _run(["cdg", "reno"], "1BDP", "30s", mode=mode)
    assert res.summary["share"].iloc[0] < 0.3


def test_same_scenario_same_result_and_seed_matters():
    a = _run(["cdg", "cdg"], "2BDP", "10s")
    b = _run(["cdg", "cdg"], "2BDP", "10s")
    assert a.summary.equals(b.summary)
    sc = ccsim.dumbbell(bandwidth="10Mbps", rtt="40ms", buffer="2BDP", duration="10s", seed=1,
                        flows=[ccsim.Flow("cdg", params={"seed": 7}), "cdg"])
    c = ccsim.run(sc)
    assert not a.summary["goodput_bps"].equals(c.summary["goodput_bps"])


# -- the fluid law's draws -------------------------------------------------------------------
def _fluid_flows(n, ack_segs):
    import numpy as np
    law = algorithms.get("cdg").fluid(algorithms.get("cdg")())
    f = flow_arrays(law, n, cwnd=40.0, ack_segs=ack_segs)
    f.start = np.arange(n) * 1e-3  # distinct openings: distinct draws
    return law, f


def test_fluid_backoffs_come_at_exponential_thresholds_of_summed_hazard():
    # Linux draws once per round and backs off when u < 1 − exp(−H): the first round where
    # the hazards H summed since the last backoff pass an exponential variable of mean 1.
    # Over 4000 flows the thresholds' mean is within 3 standard errors (3/√4000) of 1 and
    # the share below H = 0.2 within 3 binomial standard errors of 1 − e^(−0.2) (a fluid
    # law that backs off at the mean, threshold 1, has none below).
    import numpy as np
    law, f = _fluid_flows(4000, 2.0)
    law._draw_thresholds(f, np.ones(4000, bool))
    assert abs(f.threshold.mean() - 1.0) <= 3 / math.sqrt(4000)
    p = 1 - math.exp(-0.2)
    assert abs((f.threshold < 0.2).mean() - p) <= 3 * math.sqrt(p * (1 - p) / 4000)
    first = f.threshold.copy()
    law._draw_thresholds(f, np.ones(4000, bool))  # the next backoff's: a fresh draw
    assert not np.array_equal(first, f.threshold)
    again, g = _fluid_flows(4000, 2.0)  # the same flows: the same draws
    again._draw_thresholds(g, np.ones(4000, bool))
    assert np.array_equal(first, g.threshold)


def test_fluid_cwr_round_sees_the_drained_queue_only_behind_delayed_acks():
    # The ACK that ends a backoff's CWR round is the post-pause data's only when the
    # round's last segment is the odd one of a delayed-ACK pair: one time in two (4000
    # flows, 3 binomial standard errors); never with an ACK per segment.
    import numpy as np
    law, f = _fluid_flows(4000, 2.0)
    law._draw_parity(f, np.ones(4000, bool))
    assert abs(f.cwr_drained.mean() - 0.5) <= 3 * math.sqrt(0.25 / 4000)
    law, f = _fluid_flows(4000, 1.0)
    law._draw_parity(f, np.ones(4000, bool))
    assert f.cwr_drained.max() == 0.0


@pytest.mark.slow
@pytest.mark.parametrize("delayed_ack", [True, False])
def test_fluid_alone_in_a_deep_buffer_within_the_published_agreement(delayed_ack):
    # Alone in 4 BDP the packet engine's CDG fills 0.85 of the link behind delayed ACKs
    # (seeds 1-3: 0.83-0.88; its CWR rounds end on the post-pause data's ACK one time in
    # two, so the window's sum of minima keeps the rise and backoffs come in runs) and 0.94
    # without. The fluid law's mean over the same seeds is held within the fluid engine's
    # published held-out 90th percentile of the utilisation gap (docs/fluid.md: 4.6
    # points). Backing off at the mean threshold with the round before the backoff
    # standing for the CWR round, the fluid read 0.92 behind delayed ACKs.
    def mean_util(mode):
        return sum(ccsim.run(ccsim.dumbbell(bandwidth="10Mbps", rtt="40ms", buffer="4BDP",
                                            flows=["cdg"], duration="30s", seed=s,
                                            delayed_ack=delayed_ack), mode=mode)
                   .metrics["utilisation"] for s in (1, 2, 3)) / 3
    assert abs(mean_util("fluid") - mean_util("packet")) <= 0.046


def test_fluid_draws_do_not_depend_on_the_batch():
    # the backoffs' draws are keyed by the law's seed and the flow's opening time (its start
    # jitter included), not by the flow's place in a batch or the step it opened in
    sc = ccsim.dumbbell(bandwidth="10Mbps", rtt="40ms", buffer="4BDP", flows=["cdg", "cdg"],
                        duration="10s", seed=3)
    other = ccsim.dumbbell(bandwidth="20Mbps", rtt="20ms", buffer="1BDP",
                           flows=["cubic", "cdg"], duration="10s", seed=5)
    alone = ccsim.run(sc, mode="fluid").summary
    assert alone.equals(ccsim.run_many([other, sc], mode="fluid")[1].summary)
