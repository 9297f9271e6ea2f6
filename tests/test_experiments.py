"""The experiment recipes against the papers they reproduce."""

from __future__ import annotations

import pytest

import ccsim.experiments as ex


@pytest.fixture(scope="module")
def drops():
    return ex.multiple_drops()


def _row(table, strategy, k):
    return table[(table.strategy == strategy) & (table.drops == k)].iloc[0]


@pytest.mark.slow
def test_multiple_drops_outcomes(drops):
    # Fall & Floyd 1996 §3–§5, per strategy, for 1 to 4 drops from one window.
    t = drops.table
    assert set(t.strategy) == set(ex.multiple_drops.__globals__["FAMILY"])
    for k in range(1, 5):
        assert _row(t, "tahoe", k).timeouts == 0           # slow start instead
        assert _row(t, "reno", k).timeouts == (0 if k == 1 else 1)
        newreno = _row(t, "newreno", k)
        assert newreno.timeouts == 0 and newreno.retransmits == k
        # one hole per RTT: the last is acknowledged k RTTs after the first resend;
        # the bound adds the queueing of a 20-segment window (20 × 1.2 ms).
        assert k <= newreno.recovery_rtts <= k + 0.25
        for sack_based in ("sack", "fack", "rate-halving", "prr"):
            row = _row(t, sack_based, k)
            assert row.timeouts == 0 and row.recoveries == 1
            # All holes are resent in the first RTT of recovery, as soon as pipe
            # allows: acknowledged within 2 RTTs whatever k is.
            assert row.recovery_rtts < 2.0
            if k >= 3:
                assert row.recovery_rtts < newreno.recovery_rtts


@pytest.mark.slow
def test_multiple_drops_plot(drops):
    fig = drops.plot()
    axes = [ax for ax in fig.axes if ax.get_visible()]
    assert len(axes) == len(set(drops.table.strategy))
    assert all("timeout" in ax.get_title() for ax in axes)
    assert axes[-1].get_xlabel() == "time (s)"


@pytest.mark.slow
@pytest.mark.xfail(strict=True, reason=(
    "NewReno ahead of SACK at 3 % (490 against 474 kbit/s) and of SACK and SSDR at 5 % "
    "(323 against 305 and 315). ns-2's exit ACK does it (measured 2026-11-27, 20 seeds of "
    "100 s, before the NewReno exit window): with it NewReno leads SACK in 20 of 20 seeds "
    "at 3 and 5 % (+2.0 %, +4.1 %), without it trails at 1 and 3 % (-1.3 %) and ties at "
    "5 %; SACK is the same both ways. The rule is ns-2's (tcp-newreno.cc opens on that ACK, "
    "tcp-sack1.cc does not), and ns-2's other NewReno rules widen the gap or leave it (10 "
    "seeds): its exit window (exit_recovery_fix_ 0, now modelled) to 3.5 and 6.7 %, the "
    "pre-2003 partial ACKs (partial_window_deflation_ 0, newreno_changes1_ 0) 1.8 and "
    "4.5 %, a whole-number ssthresh_ 4.5 and 5.5 %; ns-2's Sack1 pipe_ and hole rules move "
    "SACK by under 1 % (docs/studies.md): open"))
def test_link_errors_rank_order_matches_lai_and_yao():
    # In ns-2's stack, whose slowdown halves the window: at 5 % loss SACK 305 kbit/s,
    # NewReno 304 (SACK was 293 when the stack halved FlightSize), then NewReno 316 with
    # ns-2's exit ACK and 323 with its exit window (the xfail's reason).
    # Lai & Yao §4.1: "Rate-Halving > SSDR ≈ FACK ≈ SACK > NewReno > Reno" (Vegas
    # and Pseudo-Rate are not built yet), and the gaps widen with the error rate.
    res = ex.link_errors(rates=(0.01, 0.03, 0.05), duration="60s")
    g = res.table.pivot(index="algorithm", columns="error_rate", values="goodput_bps")
    for p in g.columns:
        col = g[p]
        middle = col[["ssdr", "fack", "sack"]]
        assert col["rate-halving"] > middle.max()
        assert middle.min() > col["newreno"] > col["reno"]
        # "≈": the middle group within 10% of each other (three seeds of 60 s
        # each leave a few percent of noise; the paper reports them as equal).
        assert middle.max() / middle.min() < 1.10
    ratio = g.loc["reno"] / g.loc["rate-halving"]
    assert ratio.iloc[-1] < ratio.iloc[0]  # the gap widens as errors rise
    assert (res.table.groupby("error_rate")["rank"].min() == 1).all()
    fig = res.plot()
    assert fig.axes[0].get_xlabel() == "link error rate (%)"


@pytest.mark.slow
def test_utilisation_under_loss_orders_sack_above_reno():
    # Zhang & Bian: SACK uses the link better than Reno at 1% and 5% loss; 5% is far
    # worse than 1% for both.
    res = ex.utilisation_under_loss(algorithms=("reno", "sack"), duration="60s")
    u = res.table.set_index(["algorithm", "loss"])["utilisation"]
    for p in (0.01, 0.05):
        assert u["sack", p] > u["reno", p]
    for a in ("reno", "sack"):
        assert u[a, 0.05] < 0.6 * u[a, 0.01]
    assert res.table["paper_utilisation"].notna().all()  # the paper's figures ride along


@pytest.mark.slow
@pytest.mark.xfail(strict=True, reason=(
    "in ns-2's stack Tahoe's window when the open setup's drops come is 19.0 segments, "
    "below the band's 20 (the others 23.1): the setup is placed for growth per segment"))
def test_multiple_drops_without_the_receive_window_clamp(drops):
    # Fall & Floyd 1996 §4: Reno recovers from two drops in one window with two
    # fast retransmits (no timeout) and needs the retransmit timer from three;
    # with the receive window clamping it, ccsim's Reno times out from two.
    t = drops.table
    open_ = t[t.setup == "open"]
    assert _row(open_, "reno", 2).timeouts == 0
    assert _row(open_, "reno", 2).recoveries == 3  # the priming drop, then two halvings
    assert _row(open_, "reno", 3).timeouts == 1
    assert _row(t[t.setup == "clamped"], "reno", 2).timeouts == 1
    for k in range(1, 5):
        assert _row(open_, "newreno", k).timeouts == 0
        assert _row(open_, "sack", k).recovery_rtts < 2.0
    # both setups hold the window near 20 segments when the drops come
    assert (t.loc[t.setup == "clamped", "window_at_drop"] == 20).all()
    assert open_.window_at_drop.between(20, 26).all()  # ssthresh ~20, then +1 per RTT
