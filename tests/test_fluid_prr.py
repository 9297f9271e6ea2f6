"""The fluid engine's PRR recovery (RFC 6937 §3, Linux's ``tcp_cwnd_reduction``):
below ``ssthresh`` it keeps the pipe the losses left, regrows it by one segment
per hole resent only in rounds that lose nothing, and leaves with ``ssthresh``;
RFC 6675's SACK recovery refills to ``ssthresh`` at once."""

import numpy as np
import pytest

import ccsim
from ccsim.fluid.engine import FluidEngine


def _overshoot(recovery: str) -> FluidEngine:
    """A Hybla flow's slow start (its window grows 2^ρ − 1 per ACK at 200 ms)
    overshoots into RED at 10 Mbit/s and loses most of a window, stepped to the
    detection of those losses."""
    sc = ccsim.dumbbell("10Mbps", "200ms", buffer=167, queue="red", duration=6.0, seed=1,
                        flows=[ccsim.Flow("hybla", recovery=recovery)])
    e = FluidEngine([sc])
    while e._step() and e.recoveries[0] == 0:
        pass
    assert e.recoveries[0] == 1 and e.timeouts[0] == 0
    return e


def test_a_prr_recovery_keeps_the_pipe_its_losses_left():
    e = _overshoot("prr")
    pipe, ssthresh = float(e.prr_pipe[0]), float(e.ssthresh[0])
    # most of the window was lost: what is left in flight is far below ssthresh
    assert 1.0 < pipe < ssthresh / 4
    assert e._window()[0] == pytest.approx(pipe)
    assert e.outstanding[0] < ssthresh / 4  # and the flow sends no more than that
    assert e.prr_holes[0] > 10 * pipe  # many rounds of the pipe to resend them all


def test_an_rfc6675_recovery_refills_to_ssthresh():
    e = _overshoot("sack")  # the same losses (see above), but RFC 6675's window
    assert e._window()[0] == pytest.approx(min(e.ssthresh[0], e.path_cap[0]))


@pytest.mark.parametrize("p_lost", [0.0, 0.05])
def test_the_prr_pipe_regrows_one_per_hole_only_in_rounds_without_loss(p_lost):
    """A step resends ``h · pipe/τ`` holes; the pipe grows by as many times the
    chance ``(1 − p)^pipe`` that a round of it loses nothing (Linux adds the
    "+1" only on an ACK that advances ``snd.una`` and marks nothing lost)."""
    e = _overshoot("prr")
    pipe, holes = float(e.prr_pipe[0]), float(e.prr_holes[0])
    tf, tau = e.t[e.scen].copy(), e.tau.copy()
    hf = np.full(e.F, 0.01)
    e.p_lost[:] = p_lost
    e._prr_step(tf, hf, tau)
    resent = 0.01 * pipe / tau[0]
    assert e.prr_holes[0] == pytest.approx(holes - resent)
    assert e.prr_pipe[0] == pytest.approx(pipe + resent * (1.0 - p_lost) ** pipe)
    if p_lost:
        assert e.prr_pipe[0] - pipe < 0.05 * resent


def test_a_prr_recovery_ends_with_its_holes_and_leaves_with_ssthresh():
    e = _overshoot("prr")
    t0, ssthresh = float(e.t[0]), float(e.ssthresh[0])
    while e._step() and e.t[0] < e.rec_until[0] and e.recoveries[0] == 1:
        pass
    if e.recoveries[0] == 1 and e.timeouts[0] == 0:
        assert e.prr_holes[0] <= 0  # ended by resending the last hole
        assert e.t[0] > t0
        assert e._window()[0] == pytest.approx(min(e.cwnd[0], e.path_cap[0]))
        assert e.cwnd[0] == pytest.approx(ssthresh)
