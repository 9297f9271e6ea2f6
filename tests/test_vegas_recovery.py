"""Vegas' own retransmission mechanisms (Brakmo & Peterson 1995 §3.1).

Restated from the paper: a duplicate ACK resends the first unacknowledged segment at
once when it has been out longer than the fine-grained timeout; the first ACKs of new
data after a retransmission check the next one the same way; the window is decreased
(to 3/4 in the x-kernel and ns-2 code) only when the lost segment was sent after the
last decrease.
"""

from __future__ import annotations

import math

import ccsim
from ccsim.algorithms import Loss


class View:
    """A sender with segments 100..119 outstanding, all sent at t = 0; srtt 100 ms,
    rttvar 10 ms: fine-grained timeout (0.1 + 0.02)·17/16 = 0.1275 s."""

    def __init__(self, now: float) -> None:
        self.cc = ccsim.algorithms.get("reno")()
        self.cc.start(10, 1460)
        self.cc.cwnd = 20.0
        self.snd_una, self.snd_nxt, self.high_tx = 100, 120, 120
        self.dupacks, self.in_recovery, self.recover = 0, False, -1
        self.rwnd, self.end_seq = math.inf, math.inf
        self.srtt, self.rttvar = 0.1, 0.01
        self.sent = {seq: (0.0, False, 0, 0.0, seq) for seq in range(100, 120)}
        self.t = now
        self.resent: list[int] = []
        self.losses = 0

    def now(self) -> float:
        return self.t

    def signal_loss(self, kind):
        self.losses += 1
        self.cc.on_loss(Loss(self.t, kind, 20.0, 0.1, 0.1))

    def retransmit(self, seq):
        self.resent.append(seq)
        self.sent[seq] = (self.t, True, 0, 0.0, 999)

    def restart_timer(self):
        pass

    def exit_recovery(self):
        self.in_recovery = False

    def set_ssthresh(self, ssthresh):
        self.cc.ssthresh = ssthresh


def dupack(strategy, tcp):
    """A duplicate ACK as the sender hands it over: it owns the recovery state,
    asks the strategy outside recovery whether to start one, tells it inside."""
    tcp.dupacks += 1
    if tcp.in_recovery:
        strategy.on_dupack(tcp)
    elif strategy.triggered(tcp):
        tcp.in_recovery = True
        strategy.enter(tcp)


def test_first_duplicate_resends_an_expired_segment_and_cuts_to_three_quarters():
    strategy, tcp = ccsim.recovery.get("vegas")(), View(now=0.2)
    dupack(strategy, tcp)
    assert tcp.resent == [100] and tcp.in_recovery
    assert tcp.cc.ssthresh == 15  # 20 - 20/4
    assert tcp.cc.cwnd == 16      # inflated by the one duplicate


def test_first_duplicate_waits_while_the_segment_is_young():
    strategy, tcp = ccsim.recovery.get("vegas")(), View(now=0.1)
    dupack(strategy, tcp)
    dupack(strategy, tcp)
    assert tcp.resent == [] and not tcp.in_recovery
    dupack(strategy, tcp)  # the third retransmits regardless, as Reno
    assert tcp.resent == [100]


def test_the_first_ack_after_a_retransmission_resends_the_next_expired_segment():
    strategy, tcp = ccsim.recovery.get("vegas")(), View(now=0.2)
    dupack(strategy, tcp)
    tcp.t = 0.25
    tcp.snd_una, tcp.dupacks = 101, 0  # 100 arrived; 101 was lost too
    strategy.on_ack(tcp, 1)
    assert tcp.resent == [100, 101]
    assert tcp.losses == 1 and tcp.cc.cwnd == 15  # no second decrease


def test_no_decrease_for_a_segment_sent_before_the_last_decrease():
    strategy, tcp = ccsim.recovery.get("vegas")(), View(now=0.2)
    dupack(strategy, tcp)
    tcp.snd_una, tcp.dupacks = 101, 0
    strategy.worried = 0
    strategy.on_ack(tcp, 1)
    assert not tcp.in_recovery
    tcp.t = 0.3
    dupack(strategy, tcp)  # 101, sent at 0 before the decrease at 0.2, expired
    assert tcp.resent[-1] == 101 and tcp.losses == 1 and tcp.cc.ssthresh == 15


def test_vegas_and_pseudo_rate_use_vegas_recovery_by_default():
    for name in ("vegas", "pseudo-rate"):
        assert ccsim.algorithms.get(name).recovery == "vegas"
