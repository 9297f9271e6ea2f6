"""Rule tests for TCP-Illinois (ccsim.algorithms.illinois) against Liu, Başar & Srikant,
VALUETOOLS 2006, and Linux tcp_illinois.c (win_thresh, theta).

Expected values come from independent restatements: α(da) has 1/α linear in da between d1
(1/α_max) and dm (1/α_min) — the paper's κ1/(κ2 + da) rewritten — and β(da) is the straight
line from (d2, β_min) to (d3, β_max); plus hand arithmetic.
"""


import pytest

import ccsim
from ccsim import algorithms
from ccsim.algorithms import Ack, Loss, RttSample

MSS = 1460
A_MIN, A_MAX, B_MIN, B_MAX = 0.3, 10.0, 0.125, 0.5  # paper / Linux ALPHA_*, BETA_*
BASE, DM = 0.1, 0.1  # s: base RTT and largest queueing delay used below
D1, D2, D3 = DM / 100, DM / 10, 8 * DM / 10  # Linux d1, d2, d3


def make(cwnd=100.0, ssthresh=50.0):
    cc = algorithms.get("illinois")()
    cc.start(10, MSS)
    cc.cwnd, cc.ssthresh = float(cwnd), float(ssthresh)
    return cc


def alpha_restated(da):
    if da <= D1:
        return A_MAX
    return 1.0 / (1 / A_MAX + (da - D1) / (DM - D1) * (1 / A_MIN - 1 / A_MAX))


def beta_restated(da):
    if da <= D2:
        return B_MIN
    if da >= D3:
        return B_MAX
    return B_MIN + (B_MAX - B_MIN) * (da - D2) / (D3 - D2)


def test_defaults():
    cc = algorithms.get("illinois")()
    assert cc.params() == {"alpha_min": 0.3, "alpha_max": 10.0, "beta_min": 0.125,
                           "beta_max": 0.5, "eta1": 0.01, "eta2": 0.1, "eta3": 0.8,
                           "win_thresh": 15.0, "theta": 5}
    assert (cc.name, cc.recovery) == ("illinois", "prr")


@pytest.mark.parametrize("da", [0.0, D1, 0.002, 0.01, 0.0505, 0.08, 0.099, DM])
def test_alpha_matches_restatement(da):
    assert make().alpha_for(da, DM) == pytest.approx(alpha_restated(da), rel=1e-12)


def test_alpha_hand_values():
    cc = make()
    assert cc.alpha_for(0.0, DM) == A_MAX and cc.alpha_for(D1, DM) == A_MAX
    assert cc.alpha_for(DM, DM) == pytest.approx(A_MIN, rel=1e-12)
    # da halfway from d1 to dm: 1/α = 0.1 + 0.5·(1/0.3 − 0.1) = 1.716667 → α = 0.582524.
    assert cc.alpha_for(0.0505, DM) == pytest.approx(0.582524, rel=1e-5)


@pytest.mark.parametrize("da,beta", [(0.0, 0.125), (D2, 0.125), (0.045, 0.3125),
                                     (D3, 0.5), (DM, 0.5)])
def test_beta_hand_values(da, beta):
    # 0.045 is the midpoint of [d2, d3] = [0.01, 0.08]: halfway from 1/8 to 1/2.
    assert make().beta_for(da, DM) == pytest.approx(beta, rel=1e-12)
    assert beta == pytest.approx(beta_restated(da), rel=1e-12)


def feed_round(cc, rtts, delivered, now=1.0):
    """One round: RTT samples, then the ACK that ends the round (inflight 0: every ACK ends one)."""
    for r in rtts:
        cc.on_rtt(RttSample(now, r, BASE, r, 10.0))
    cc.on_ack(Ack(now, 1.0, rtts[-1] if rtts else None, BASE, BASE, 0.0, delivered, None))


def test_round_sets_alpha_beta_from_average_delay():
    cc = make()
    feed_round(cc, [BASE, BASE + DM], 1)          # base 0.1, max 0.2: dm = 0.1; da = 0.05
    assert cc.beta == pytest.approx(beta_restated(0.05), rel=1e-9)
    assert cc.alpha == pytest.approx(alpha_restated(0.05), rel=1e-9)
    feed_round(cc, [0.18, 0.18], 2)               # da = 0.08 = d3: β_max
    assert cc.beta == pytest.approx(B_MAX, rel=1e-9)


def test_small_windows_are_reno():
    cc = make(cwnd=14, ssthresh=10)                # below win_thresh = 15
    feed_round(cc, [BASE, BASE], 1)
    assert (cc.alpha, cc.beta) == (1.0, 0.5)
    cc.cwnd = 14.0
    cc.on_ack(Ack(1.0, 1.0, BASE, BASE, BASE, 10.0, 2, None))  # mid-round ACK
    assert cc.cwnd == pytest.approx(14 + 1 / 14, rel=1e-12)


def test_alpha_returns_to_max_only_after_theta_quiet_rounds():
    cc = make()
    feed_round(cc, [BASE, BASE + DM], 1)          # high delay: α < α_max, rtt_above set
    held = cc.alpha
    assert held < A_MAX
    for k in range(2, 6):                          # theta = 5: four quiet rounds hold α
        feed_round(cc, [BASE, BASE], k)
        assert cc.alpha == held
    feed_round(cc, [BASE, BASE], 6)                # the fifth restores α_max
    assert cc.alpha == A_MAX


def test_increase_is_alpha_over_cwnd():
    cc = make(cwnd=100)
    cc.alpha = 4.0
    cc.round_end = 1e9                             # mid-round: α unchanged
    cc.on_ack(Ack(1.0, 3.0, BASE, BASE, BASE, 50.0, 10, None))
    assert cc.cwnd == pytest.approx(100 + 4 * 3 / 100, rel=1e-12)


def test_decrease_keeps_one_minus_beta_and_timeout_resets():
    cc = make(cwnd=100)
    cc.beta = B_MIN
    loss = Loss(1.0, "fast", 100.0, BASE, BASE)
    assert cc.ssthresh_after(loss) == pytest.approx(87.5, rel=1e-12)
    assert (cc.cwnd, cc.ssthresh) == (100, 50)    # pure
    cc.alpha = 7.0
    cc.on_loss(Loss(1.0, "timeout", 100.0, BASE, BASE))
    assert (cc.cwnd, cc.ssthresh, cc.alpha, cc.beta) == (1.0, 87.5, 1.0, 0.5)
    assert make(cwnd=3).ssthresh_after(loss) == 2.0



def test_delay_extremes_are_never_aged_not_even_by_a_timeout():
    """Linux keeps ``base_rtt`` and ``max_rtt`` for the connection's life:
    ``rtt_reset`` clears only the round's sum and count ("TODO: age
    max_rtt?") and ``tcp_illinois_state(TCP_CA_Loss)`` resets α, β, the
    low-delay count and the round. So one early round of 120 ms queueing
    keeps dm at 120 ms: later rounds of 6 ms queueing sit below d2 = 12 ms
    (β_min) with α from that dm, far above the α a 12 ms dm would give."""
    cc = make()
    feed_round(cc, [BASE, BASE + 0.120], 1)           # one deep queue: dm = 120 ms
    cc.on_loss(Loss(1.0, "timeout", 100.0, BASE, BASE))
    cc.cwnd = 100.0                                   # above win_thresh again
    feed_round(cc, [BASE + 0.006] * 4, 2)             # round average: da = 6 ms
    assert (cc.base_rtt, cc.max_rtt) == (BASE, pytest.approx(BASE + 0.120, rel=1e-12))
    dm, da = 0.120, 0.006
    d1 = dm / 100
    # Linux alpha(): (dm − d1)·α_max / ((dm − d1) + (da − d1)·(α_max − α_min)/α_min)
    linux_alpha = (dm - d1) * A_MAX / ((dm - d1) + (da - d1) * (A_MAX - A_MIN) / A_MIN)
    assert cc.alpha == pytest.approx(linux_alpha, rel=1e-9)   # 4.3 segments per RTT
    assert cc.beta == B_MIN                                    # da ≤ dm/10
    small = make()                                    # the same rounds, 12 ms the deepest
    feed_round(small, [BASE, BASE + 0.012], 1)
    feed_round(small, [BASE + 0.006] * 4, 2)
    assert small.alpha < 0.6 < 4.0 < cc.alpha and small.beta > 0.25

@pytest.mark.slow
def test_engine_small_buffer_keeps_utilisation_high():
    # The paper's aim: high throughput on high-BDP paths without filling the buffer — α is
    # large while the queueing delay is small and β small (1/8) when losses come at low delay.
    # 20 Mb/s, 100 ms (BDP 167 segments), buffer 0.1 BDP. Measured: Illinois 0.88, Reno 0.66;
    # the thresholds leave ~0.03 and ~0.1 for engine changes.
    def util(name):
        sc = ccsim.dumbbell("20Mbps", "100ms", buffer="0.1BDP", flows=[name], duration="40s")
        return ccsim.run(sc).metrics["utilisation"]

    ill, reno = util("illinois"), util("reno")
    assert ill > 0.85
    assert ill > reno + 0.1


@pytest.mark.slow
def test_engine_takes_more_than_reno_on_a_large_buffer():
    # Esterhuizen & Krzesinski (Linux testbed): Illinois dominates Reno. With a 2-BDP buffer α = 10 while the
    # delay is low and β = 1/8 at small delay let it outgrow Reno. Measured share 0.67 with
    # RFC 6937's PRR; 0.568 since PRR follows Linux's tcp_cwnd_reduction (the +1 only on
    # ACKs that advance snd_una: fewer segments per recovery for both flows). 0.53: still a
    # majority, a few per cent below the measurement. Esterhuizen & Krzesinski have
    # Illinois far ahead on their LAN; why ccsim's margin is smaller is open.
    # In the full Linux stack with hosts' NICs seeds 1-3 read 0.547, 0.445, 0.565: the
    # claim, a majority, as the mean over three seeds. It failed (mean 0.488) while the
    # Linux stack halved the window at a loss, and holds again since the ACK that ends a
    # recovery reaches the law (Scenario.exit_ack, 2026-11-27).
    shares = [ccsim.run(ccsim.dumbbell("10Mbps", "40ms", buffer="2BDP",
                                       flows=["reno", "illinois"], duration="60s",
                                       seed=seed)).summary.share[1] for seed in (1, 2, 3)]
    assert sum(shares) / 3 > 0.5, shares
