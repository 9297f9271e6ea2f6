"""Rule tests for the loss-recovery strategies (Tahoe, Reno, NewReno), driven through a fake sender.

The expected behaviour is restated below from the sources, independently of ccsim.recovery:

RFC 5681 §3.2 (fast retransmit / fast recovery, Reno):
  1-2. On the first and second duplicate ACK: nothing changes in the window (limited
       transmit aside, which is the sender's business).
  2.   On the third duplicate ACK: ssthresh = max(FlightSize / 2, 2*SMSS) (eq. 4).
  3.   Retransmit the first unacknowledged segment; cwnd = ssthresh + 3*SMSS.
  4.   Each further duplicate ACK: cwnd += SMSS.
  6.   On the next ACK acknowledging new data: cwnd = ssthresh ("deflating" the window);
       Reno does this even if the ACK is partial, and recovery ends.

RFC 6582 §3.2 (NewReno):
  1.   Enter fast retransmit only if the cumulative ACK covers more than ``recover``.
  2.   On entering: recover = highest sequence number transmitted; as RFC 5681 steps 2-3.
  4.   Further duplicate ACKs: cwnd += SMSS.
  5.   Partial ACK (new data acked, but not through recover): retransmit the first
       unacknowledged segment, deflate cwnd by the amount acked, add back one SMSS if at
       least one SMSS was acked, stay in fast recovery; reset the retransmission timer on the
       first partial ACK only.
  6.   Full ACK: cwnd = min(ssthresh, max(FlightSize, SMSS) + SMSS) (option 1); exit.

Tahoe (Jacobson 1988; Fall & Floyd 1996 §2): on the third duplicate ACK ssthresh is set as
above, cwnd = one segment and sending restarts at the first unacknowledged segment
(go-back-N); there is no fast recovery.

Sequence numbers count segments and ``high_tx`` is one past the highest segment sent. Where
exactly "covers more than recover" falls (``snd_una >= recover`` as a byte-for-byte reading of
the RFC, or ``snd_una > recover`` as ns-2 reads it) is the library's documented choice
(ccsim.recovery.SenderView); the tests below check the two unambiguous sides only.
"""

import math
from dataclasses import dataclass, field

import pytest

from ccsim import algorithms, recovery
from ccsim.algorithms import CongestionControl, Loss
from ccsim.errors import UnknownAlgorithmError

DUPTHRESH = 3  # RFC 5681 §3.2: "three duplicate ACKs"
MSS = 1460


def rfc_ssthresh(flight: float) -> float:
    """RFC 5681 eq. (4), in segments."""
    return max(flight / 2, 2)


@dataclass
class FakeSender:
    """Just enough of a sender for a recovery strategy (ccsim.recovery.SenderView)."""

    cc: CongestionControl
    snd_una: int = 100
    snd_nxt: int = 120
    high_tx: int = 120
    dupacks: int = 0
    in_recovery: bool = False
    recover: int = 0
    retransmitted: list = field(default_factory=list)
    timer_restarts: int = 0
    losses: list = field(default_factory=list)

    def signal_loss(self, kind: str) -> None:
        self.losses.append(kind)
        self.cc.on_loss(Loss(now=1.0, kind=kind, inflight=self.snd_nxt - self.snd_una,
                             min_rtt=0.04, srtt=0.05))

    def retransmit(self, seq: int) -> None:
        self.retransmitted.append(seq)

    def restart_timer(self) -> None:
        self.timer_restarts += 1

    def exit_recovery(self) -> None:
        self.in_recovery = False

    def set_ssthresh(self, ssthresh: float) -> None:
        self.cc.ssthresh = ssthresh

    # driving helpers: the sender's side of the protocol, restated from
    # ccsim.recovery.SenderView (the sender owns the recovery state)
    def dupack(self, strategy) -> None:
        self.dupacks += 1
        if self.in_recovery:
            strategy.on_dupack(self)
        elif strategy.triggered(self):
            self.in_recovery = True  # fast retransmit: the sender enters, the strategy acts
            strategy.enter(self)

    def timeout(self, strategy) -> None:
        strategy.on_timeout(self)
        self.in_recovery, self.dupacks, self.recover = False, 0, self.high_tx

    def new_ack(self, strategy, ackno: int) -> None:
        acked = ackno - self.snd_una
        assert acked > 0
        self.snd_una = ackno
        self.dupacks = 0
        if self.in_recovery:
            strategy.on_ack(self, acked)


def sender(cwnd: float = 20, snd_una: int = 100, snd_nxt: int = 120, **kw) -> FakeSender:
    cc = algorithms.get("reno")()
    cc.start(10, MSS)
    cc.cwnd = float(cwnd)
    return FakeSender(cc=cc, snd_una=snd_una, snd_nxt=snd_nxt, high_tx=snd_nxt, **kw)


def strategy(name: str):
    return recovery.get(name)()


ALL = ["tahoe", "reno", "newreno"]
FAST_RECOVERY = ["reno", "newreno"]


# -- all strategies -----------------------------------------------------------------------------
@pytest.mark.parametrize("name", ALL)
def test_nothing_on_first_two_dupacks(name):
    s, tcp = strategy(name), sender()
    for _ in range(DUPTHRESH - 1):
        tcp.dupack(s)
        assert tcp.retransmitted == [] and tcp.losses == []
        assert (tcp.cc.cwnd, tcp.cc.ssthresh) == (20, math.inf)
        assert not tcp.in_recovery
        assert (tcp.snd_nxt, tcp.recover) == (120, 0)


@pytest.mark.parametrize("name", ALL)
def test_no_trigger_before_recover(name):
    # After a timeout the sender sets recover = high_tx; duplicate ACKs for data sent before
    # it (snd_una < recover) must not start a fast retransmit (RFC 6582 §3.2 step 1).
    s, tcp = strategy(name), sender(recover=130)
    for _ in range(DUPTHRESH + 2):
        tcp.dupack(s)
    assert tcp.retransmitted == [] and tcp.losses == []
    assert (tcp.cc.cwnd, tcp.cc.ssthresh) == (20, math.inf)
    assert not tcp.in_recovery
    assert (tcp.snd_nxt, tcp.recover) == (120, 130)


@pytest.mark.parametrize("name", ALL)
def test_trigger_once_snd_una_is_past_recover(name):
    s, tcp = strategy(name), sender(recover=95)  # snd_una = 100: well past recover
    for _ in range(DUPTHRESH):
        tcp.dupack(s)
    assert tcp.losses == ["fast"]
    assert tcp.cc.ssthresh == rfc_ssthresh(20)


@pytest.mark.parametrize("name", ALL)
def test_a_new_episode_after_a_timeout(name):
    # The sender leaves recovery at a timeout; the strategy's on_timeout must leave
    # it ready for the next loss: three duplicates beyond recover start one.
    s, tcp = strategy(name), sender()
    for _ in range(DUPTHRESH):
        tcp.dupack(s)
    tcp.timeout(s)
    tcp.snd_nxt = tcp.high_tx = 130
    tcp.new_ack(s, 121)
    for _ in range(DUPTHRESH):
        tcp.dupack(s)
    assert tcp.losses == ["fast", "fast"]
    if name == "tahoe":  # no recovery state: it goes back to the hole instead
        assert not tcp.in_recovery and tcp.snd_nxt == 121
    else:
        assert tcp.in_recovery and tcp.retransmitted[-1] == 121


@pytest.mark.parametrize("name", ALL)
def test_dupthresh_and_sack(name):
    cls = recovery.get(name)
    assert cls.dupthresh == DUPTHRESH
    assert cls.uses_sack is False  # none of the three reads SACK blocks
    assert cls.name == name


# -- Reno (RFC 5681 §3.2) ------------------------------------------------------------------------
@pytest.mark.parametrize("name", FAST_RECOVERY)
@pytest.mark.parametrize("flight", [20, 7, 3, 1])
def test_fast_retransmit_entry(name, flight):
    s, tcp = strategy(name), sender(cwnd=max(flight, 2), snd_una=100, snd_nxt=100 + flight)
    for _ in range(DUPTHRESH):
        tcp.dupack(s)
    assert tcp.losses == ["fast"]
    assert tcp.retransmitted == [100]
    assert tcp.cc.ssthresh == rfc_ssthresh(flight)
    assert tcp.cc.cwnd == rfc_ssthresh(flight) + DUPTHRESH
    assert tcp.in_recovery


@pytest.mark.parametrize("name", FAST_RECOVERY)
def test_inflation_per_further_dupack(name):
    s, tcp = strategy(name), sender()
    for _ in range(DUPTHRESH):
        tcp.dupack(s)
    entry = rfc_ssthresh(20) + DUPTHRESH  # 13
    for extra in range(1, 6):
        tcp.dupack(s)
        assert tcp.cc.cwnd == entry + extra
    assert tcp.retransmitted == [100]  # no further retransmissions
    assert tcp.losses == ["fast"]      # and no second halving


@pytest.mark.parametrize("ackno", [110, 120], ids=["partial", "full"])
def test_reno_first_new_ack_deflates_and_exits(ackno):
    s, tcp = strategy("reno"), sender()
    for _ in range(DUPTHRESH + 4):
        tcp.dupack(s)
    tcp.new_ack(s, ackno)
    assert tcp.cc.cwnd == tcp.cc.ssthresh == rfc_ssthresh(20)
    assert not tcp.in_recovery
    assert tcp.retransmitted == [100]  # Reno does not retransmit on a partial ACK


def test_reno_second_loss_after_partial_ack_halves_again():
    # Fall & Floyd 1996: with two losses in a window Reno leaves recovery on the partial
    # ACK and a second set of three duplicate ACKs halves ssthresh again.
    s, tcp = strategy("reno"), sender(cwnd=40, snd_nxt=140)
    for _ in range(DUPTHRESH):
        tcp.dupack(s)
    assert tcp.cc.ssthresh == rfc_ssthresh(40)  # 20
    tcp.new_ack(s, 110)
    for _ in range(DUPTHRESH):
        tcp.dupack(s)
    assert tcp.retransmitted == [100, 110]
    assert tcp.cc.ssthresh == rfc_ssthresh(140 - 110)  # 15
    assert tcp.in_recovery


# -- NewReno (RFC 6582 §3.2) -----------------------------------------------------------------------
def _newreno_in_recovery(cwnd=20, snd_nxt=120, extra_dupacks=2):
    s, tcp = strategy("newreno"), sender(cwnd=cwnd, snd_nxt=snd_nxt)
    for _ in range(DUPTHRESH + extra_dupacks):
        tcp.dupack(s)
    return s, tcp


def test_newreno_entry_sets_recover():
    s, tcp = _newreno_in_recovery(extra_dupacks=0)
    assert tcp.recover == tcp.high_tx == 120
    assert tcp.retransmitted == [100]
    assert tcp.cc.cwnd == rfc_ssthresh(20) + DUPTHRESH
    assert tcp.in_recovery


def test_newreno_partial_acks():
    s, tcp = _newreno_in_recovery(extra_dupacks=2)
    cwnd = rfc_ssthresh(20) + DUPTHRESH + 2  # 15 after two more dupacks
    assert tcp.cc.cwnd == cwnd

    # First partial ACK: 5 segments acked, still below recover = 120.
    tcp.new_ack(s, 105)
    cwnd = cwnd - 5 + 1  # deflate by the amount acked, add back one segment
    assert tcp.retransmitted == [100, 105]
    assert tcp.cc.cwnd == cwnd
    assert tcp.in_recovery
    assert tcp.timer_restarts == 1

    # A dupack in between inflates as before.
    tcp.dupack(s)
    cwnd += 1
    assert tcp.cc.cwnd == cwnd

    # Second partial ACK: retransmit the next hole, but the timer is reset only on the first.
    tcp.new_ack(s, 112)
    cwnd = cwnd - 7 + 1
    assert tcp.retransmitted == [100, 105, 112]
    assert tcp.cc.cwnd == cwnd
    assert tcp.in_recovery
    assert tcp.timer_restarts == 1
    assert tcp.losses == ["fast"]  # one halving for the whole episode
    assert tcp.cc.ssthresh == rfc_ssthresh(20)


@pytest.mark.parametrize("snd_nxt_at_ack, flight", [(120, 0), (125, 5), (140, 20)])
def test_newreno_full_ack(snd_nxt_at_ack, flight):
    s, tcp = _newreno_in_recovery()
    tcp.new_ack(s, 108)  # partial first
    # New data sent during recovery moves snd_nxt (and high_tx) past recover.
    tcp.snd_nxt = tcp.high_tx = snd_nxt_at_ack
    tcp.new_ack(s, 120)  # everything up to recover: a full ACK
    ssthresh = rfc_ssthresh(20)
    assert tcp.snd_nxt - tcp.snd_una == flight
    assert tcp.cc.cwnd == min(ssthresh, max(flight, 1) + 1)
    assert not tcp.in_recovery
    assert tcp.retransmitted == [100, 108]  # nothing retransmitted on the full ACK


def test_newreno_full_ack_without_partial():
    s, tcp = _newreno_in_recovery()
    tcp.snd_nxt = tcp.high_tx = 130
    tcp.new_ack(s, 125)  # beyond recover = 120
    assert tcp.cc.cwnd == min(rfc_ssthresh(20), max(130 - 125, 1) + 1)
    assert not tcp.in_recovery and tcp.timer_restarts == 0


def test_newreno_timer_reset_is_per_episode():
    # "the first partial ACK that arrives during fast recovery": each episode has its own.
    s, tcp = _newreno_in_recovery()
    tcp.new_ack(s, 105)
    # New data went out during recovery; the full ACK covers some of it.
    tcp.snd_nxt = tcp.high_tx = 150
    tcp.new_ack(s, 125)
    assert tcp.timer_restarts == 1 and not tcp.in_recovery
    # A second episode, for a loss after the first recover point (snd_una 125 > recover 120).
    for _ in range(DUPTHRESH):
        tcp.dupack(s)
    assert tcp.in_recovery and tcp.recover == 150
    assert tcp.retransmitted == [100, 105, 125]
    tcp.new_ack(s, 130)
    assert tcp.timer_restarts == 2


def test_newreno_no_new_episode_before_recover():
    # After a partial ACK ends Reno's recovery, NewReno stays in it: further dupacks inflate
    # instead of halving ssthresh a second time.
    s, tcp = _newreno_in_recovery(cwnd=40, snd_nxt=140, extra_dupacks=0)
    tcp.new_ack(s, 110)
    for _ in range(DUPTHRESH):
        tcp.dupack(s)
    assert tcp.losses == ["fast"]
    assert tcp.cc.ssthresh == rfc_ssthresh(40)


# -- Tahoe -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("flight", [20, 3])
def test_tahoe_third_dupack(flight):
    s, tcp = strategy("tahoe"), sender(cwnd=max(flight, 2), snd_nxt=100 + flight)
    for _ in range(DUPTHRESH):
        tcp.dupack(s)
    assert tcp.losses == ["fast"]
    assert tcp.cc.ssthresh == rfc_ssthresh(flight)
    assert tcp.cc.cwnd == 1  # one segment
    assert tcp.snd_nxt == tcp.snd_una == 100  # go-back-N from the hole
    assert tcp.recover == 100 + flight  # high_tx at the time of the loss
    assert not tcp.in_recovery


def test_tahoe_no_inflation():
    s, tcp = strategy("tahoe"), sender()
    for _ in range(DUPTHRESH + 5):
        tcp.dupack(s)
    assert tcp.cc.cwnd == 1
    assert tcp.losses == ["fast"]
    assert not tcp.in_recovery


def test_tahoe_go_back_n_dupacks_do_not_retrigger():
    # After the go-back-N restart, duplicates of the old window arrive while snd_una < recover.
    s, tcp = strategy("tahoe"), sender()
    for _ in range(DUPTHRESH):
        tcp.dupack(s)
    tcp.snd_una = 105  # some of the resent segments acknowledged
    tcp.snd_nxt = 107
    tcp.dupacks = 0
    for _ in range(DUPTHRESH):
        tcp.dupack(s)
    assert tcp.losses == ["fast"]
    assert tcp.snd_nxt == 107


# -- registry ----------------------------------------------------------------------------------------
def test_recovery_names():
    assert {"tahoe", "reno", "newreno"} <= set(recovery.names())
    assert recovery.names() == sorted(recovery.names())


def test_recovery_get_unknown():
    with pytest.raises(UnknownAlgorithmError) as info:
        recovery.get("renoo")
    assert info.value.field == "recovery" and info.value.suggestion == "reno"


@pytest.mark.parametrize("name", ALL)
def test_recovery_get_fresh_instances(name):
    cls = recovery.get(name)
    assert isinstance(cls(), recovery.Recovery)
    assert cls() is not cls()
