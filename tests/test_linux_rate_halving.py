"""Linux 2.6.x–3.1's fast-recovery window rule (``tcp_cwnd_down``), the 2011
kernels' predecessor of PRR.

What the source says, restated independently of ccsim.recovery
(``net/ipv4/tcp_input.c`` of those kernels):

* entering a recovery sets ``ssthresh`` from the module and zeroes
  ``snd_cwnd_cnt``; ``cwnd`` is not cut at once;
* on each ACK in recovery that acknowledges or SACKs data, ``decr =
  snd_cwnd_cnt + 1; snd_cwnd_cnt = decr & 1; decr >>= 1``: every second such
  ACK takes one segment off ``cwnd`` while ``cwnd > tcp_cwnd_min`` (the
  module's ``min_cwnd`` op: ``tcp_reno_min_cwnd`` = ``ssthresh/2`` for Reno,
  Scalable, HighSpeed, Illinois, YeAH...; ``ssthresh`` for BIC, CUBIC and
  H-TCP, which had none); then ``cwnd = min(cwnd, packets_in_flight + 1)``;
* leaving, ``tcp_complete_cwr`` sets ``cwnd = min(cwnd, ssthresh)``.

So over a recovery of one loss (about one window of ACKs, each SACKing one
segment), the window falls to about half of where the loss found it, or to
``ssthresh`` if that is the floor and higher.
"""

from __future__ import annotations

import ccsim
from ccsim.algorithms import get as get_law
from ccsim.packet import PacketEngine
from ccsim.recovery.linux_rate_halving import LinuxRateHalvingRecovery

RTT = 0.1


def one_loss(algorithm: str):
    """One flow, segment 400 dropped in congestion avoidance (a loss at
    segment 100 first ends slow start with ssthresh near 50), no buffer
    overflow in 6 s on a 10 Mbit/s path with a 1000-packet buffer; each
    recovery's window at entry, ``ssthresh``, and window on leaving."""
    flow = ccsim.Flow(algorithm, recovery="linux-rate-halving", drop_segments=[100, 400])
    engine = PacketEngine(ccsim.dumbbell("10Mbps", RTT, buffer=1000, flows=[flow],
                                         duration="6s", seed=1))
    rec = engine.senders[0].recovery
    marks: list[dict] = []
    enter, leave = rec.enter, rec.leave

    def spy_enter(tcp):
        marks.append({"entry_cwnd": tcp.cc.cwnd})
        enter(tcp)
        marks[-1]["ssthresh"] = tcp.cc.ssthresh

    def spy_leave(tcp):
        leave(tcp)
        marks[-1]["exit_cwnd"] = tcp.cc.cwnd

    rec.enter, rec.leave = spy_enter, spy_leave
    row = engine.run().summary.iloc[0]
    assert row.timeouts == 0 and row.recoveries == 2, row
    return marks[-1]  # the recovery in congestion avoidance


def test_reno_halves_over_the_recovery():
    m = one_loss("reno")
    assert abs(m["ssthresh"] - m["entry_cwnd"] / 2) <= 0.5  # tcp_reno_ssthresh
    # one segment off per two ACKs over about a window of ACKs: about half the
    # window; tcp_complete_cwr then caps it at ssthresh. 1.5 segments: the ACKs
    # that arrived before the entry (DupThresh) take none off, the clamp to
    # pipe + 1 can take one more.
    assert m["ssthresh"] - 1.5 <= m["exit_cwnd"] <= m["ssthresh"], m


def test_scalable_undershoots_its_ssthresh_to_about_half():
    m = one_loss("scalable")
    assert m["ssthresh"] >= 0.85 * m["entry_cwnd"]  # Scalable keeps 7/8
    # tcp_reno_min_cwnd's floor (ssthresh/2 ~ 0.44 of the window) lets the
    # halving run its course: about half the window, far below ssthresh (PRR
    # would leave exactly ssthresh). 0.1 of the window: the DupThresh ACKs
    # before the entry and the pipe + 1 clamp (a segment or two at ~50).
    assert abs(m["exit_cwnd"] / m["entry_cwnd"] - 0.5) <= 0.1, m


def test_bic_stops_at_its_ssthresh():
    m = one_loss("bic")
    assert abs(m["ssthresh"] - 0.8 * m["entry_cwnd"]) <= 0.5  # beta 819/1024
    # no min_cwnd op in tcp_bic.c: the floor is ssthresh itself. The halving
    # stops there (a segment below at most: the last decrement starts above
    # it); the pipe + 1 clamp can take one more.
    assert m["ssthresh"] - 2.0 <= m["exit_cwnd"] <= m["ssthresh"], m


class View:
    """The few sender fields ``cwnd_down`` reads: the law, and a pipe."""

    def __init__(self, law, pipe: float) -> None:
        self.cc, self.flight = law, pipe


def test_one_segment_off_per_two_acks_down_to_the_floor():
    rec = LinuxRateHalvingRecovery()
    rec.pipe = lambda tcp: tcp.flight  # in flight, as the test sets it
    law = get_law("reno")()
    law.start(10.0, 1460)
    law.cwnd, law.ssthresh = 40.0, 20.0  # floor ssthresh/2 = 10
    view = View(law, pipe=100.0)  # a pipe that never binds
    seen = []
    for _ in range(64):
        rec.cwnd_down(view)
        seen.append(law.cwnd)
    # ACK 1: counter 1, nothing off; ACK 2: one off; ... until cwnd reaches 10
    assert seen[:6] == [40.0, 39.0, 39.0, 38.0, 38.0, 37.0]
    assert min(seen) == 10.0 and seen[-1] == 10.0
    # and the window never exceeds what is in flight plus one
    view.flight = 5.0
    rec.cwnd_down(view)
    assert law.cwnd == 6.0


def test_floor_of_each_2011_module():
    """``tcp_cwnd_min`` of the 2011 modules: ``ssthresh/2`` with
    ``tcp_reno_min_cwnd``, ``ssthresh`` without a ``min_cwnd`` op."""
    for name, share in {"reno": 0.5, "scalable": 0.5, "highspeed": 0.5, "illinois": 0.5,
                        "yeah": 0.5, "hybla": 0.5, "vegas": 0.5, "lp": 0.5,
                        "bic": 1.0, "cubic": 1.0, "htcp": 1.0, "westwood": 1.0}.items():
        law = get_law(name)()
        law.start(10.0, 1460)
        law.ssthresh = 40.0
        assert law.rate_halving_floor() == 40.0 * share, name
