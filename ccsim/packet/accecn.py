"""Accurate ECN feedback (AccECN, RFC 9768) in the packet engine.

Source: B. Briscoe, M. Kühlewind, R. Scheffenegger, "More Accurate Explicit
Congestion Notification (AccECN) Feedback in TCP", RFC 9768, 2025: §3.2.2.2
(the receiver's CE packet counter ``r.cep``, initialised to 5), §2.3 and
§3.2.2.5 (the 3-bit ACE field may wrap; safety), §3.2.2.5.1 (when the
receiver ACKs: change- and increment-triggered ACKs), Appendix A.2.1 (the
sender's decoding of ACE into ``s.cep``, and its safety against ACK loss).

A flow asks for it with ``Flow(ecn="accecn")`` (TCP Prague does by
default). Classic ECN (``ecn=True``) stays RFC 3168 as ccsim models it.

* **Receiver** (:class:`AccEcnReceiver`): counts CE-marked data segments in
  ``r.cep`` (from 5) and puts ``ACE = r.cep mod 8`` on every ACK. It ACKs at
  once, whatever the delayed-ACK rule, when a CE segment arrives after a
  segment that was not CE (change-triggered) and when ``n = 2`` CE segments
  are unacknowledged (increment-triggered; RFC 9768's "SHOULD be 2" with
  unacknowledged data).
* **Sender** (:class:`AccEcnResponse`): on every ACK not superseded (its
  cumulative ACK not behind the sender's), the newly marked count is the
  least non-negative ``d.cep = (ACE − s.cep) mod 8``.
  When a cumulative ACK outside loss recovery acknowledges ``n ≥ 8``
  segments at once (ACKs lost or thinned), the counter may have wrapped,
  and the sender assumes the safest case, ``n − ((n − d.cep) mod 8)``
  (Appendix A.2.1, "dSafer"). The law then hears of ``d.cep`` marks as
  classic ECN's echo (``on_ce_echo``, :class:`~ccsim.algorithms.EcnEcho`);
  RFC 3168's once-per-window reduction (``on_ecn``) follows, unless the
  law declares ``own_ecn_response`` (it reacts in ``on_ce_echo`` itself).

Deviations: ACKs in ccsim arrive in order, so only an ACK behind the
cumulative ACK is taken as superseded; a duplicate ACK is decoded (in
ccsim it reports a segment that reached the receiver; RFC 9768 asks for
newly SACKed data or a newer timestamp). No AccECN option (byte counters) and no handshake: the ACE
field alone, as a sender without the option uses it (Appendix A.2.1). In
loss recovery and at its end the cumulative ACK also covers segments
already SACKed (their marks came with the SACKs), so the safety rule is
not applied there; RFC 9768 counts newly acknowledged bytes with SACK.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..algorithms.base import EcnEcho
from .ecn import EcnResponse
from .receiver import Receiver

if TYPE_CHECKING:
    from .tcp import Sender

DIVACE = 8
"""The ACE field's modulus: 3 bits (RFC 9768 Appendix A.2.1)."""
CEP_INIT = 5
"""``r.cep`` and ``s.cep`` at the start of a connection (RFC 9768 §3.2.2.2)."""
INCREMENT_TRIGGER = 2
"""CE segments unacknowledged that make the receiver ACK at once (RFC 9768
§3.2.2.5.1: ``n`` SHOULD be 2 when there is unacknowledged data)."""


def ace_delta(ace: int, s_cep: int) -> int:
    """Newly CE-marked packets an ACK reports: the least non-negative
    difference between its ACE field and the sender's counter ``s.cep``
    modulo 8 (RFC 9768 Appendix A.2.1)."""
    return (ace + DIVACE - s_cep % DIVACE) % DIVACE


def safer_delta(d_cep: int, newly_acked: int) -> int:
    """RFC 9768 Appendix A.2.1's ``dSafer.cep``: an ACK acknowledging
    ``newly_acked`` full segments may hide whole wraps of the ACE field;
    assume as many marks as the ACE field allows, ``n − ((n − d.cep) mod 8)``
    (``d.cep`` itself when it exceeds ``n``, the appendix's check)."""
    if newly_acked <= d_cep:
        return d_cep
    return newly_acked - (newly_acked - d_cep) % DIVACE


class AccEcnReceiver(Receiver):
    """A receiver that feeds back Accurate ECN's ACE field on every ACK.

    Attributes (beside :class:`~ccsim.packet.receiver.Receiver`'s):
        ce: ``r.cep``, CE-marked segments received plus 5 (never reset).
        last_ce: whether the previous data segment was CE-marked.
        ce_unacked: CE-marked segments since the last ACK.
    """

    __slots__ = ("last_ce", "ce_unacked")

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.ce = CEP_INIT    # nonzero: every ACK goes through _ack, and carries ACE
        self.last_ce = False
        self.ce_unacked = 0

    def receive(self, seq: int, t: float) -> None:
        """A data segment not marked CE arrives at ``t`` (s)."""
        self.last_ce = False
        Receiver.receive(self, seq, t)

    def receive_ce(self, seq: int, t: float) -> None:
        """A CE-marked data segment arrives at ``t`` (s): ``r.cep`` counts it,
        and the ACK goes at once on a change to CE or the second CE segment
        unacknowledged (RFC 9768 §3.2.2.5.1)."""
        if self.held and t >= self.held_until:  # the held ACK left before this arrived
            self._ack(self.held_until)
        self.ce += 1
        self.ce_unacked += 1
        change = not self.last_ce
        self.last_ce = True
        Receiver.receive(self, seq, t)
        if self.held and (change or self.ce_unacked >= INCREMENT_TRIGGER):
            self._ack(t)

    def _ack(self, t: float, dsack: tuple[int, int] | None = None) -> None:
        cep = self.ce
        Receiver._ack(self, t, dsack)  # sends (rcv_nxt, blocks, r.cep): ce is nonzero
        self.ce = cep                  # ... which the classic receiver resets
        self.ce_unacked = 0


class AccEcnResponse(EcnResponse):
    """A sender's Accurate ECN state: decodes the ACE field of every ACK
    into newly marked segments, then responds as :class:`EcnResponse`
    (or leaves the response to a law with ``own_ecn_response``).

    Attributes (beside :class:`EcnResponse`'s):
        s_cep: the sender's CE packet counter (RFC 9768's ``s.cep``, from 5).
        wraps_assumed: marks added by the safety rule (segments).
    """

    __slots__ = ("s_cep", "wraps_assumed")

    def __init__(self) -> None:
        super().__init__()
        self.s_cep = CEP_INIT
        self.wraps_assumed = 0

    def on_echo(self, tcp: "Sender", r_cep: int, ackno: int, now: float) -> None:
        """An ACK up to ``ackno`` arrives at ``now`` (s) with the receiver's
        counter ``r_cep``, of which only ``r_cep mod 8`` (the ACE field) is
        read; :meth:`on_ack` of the sender follows."""
        una = tcp.snd_una
        if ackno < una:
            return  # behind the cumulative ACK: superseded (Appendix A.2.1)
        d = ace_delta(r_cep % DIVACE, self.s_cep)
        newly = ackno - una
        if newly >= DIVACE and not tcp.in_recovery and una >= tcp.recover:
            safe = safer_delta(d, newly)
            self.wraps_assumed += safe - d
            d = safe
        self.s_cep += d
        if d:
            if tcp.cc.own_ecn_response:
                self.marked += d
                cc = tcp.cc
                w, s = cc.cwnd, cc.ssthresh
                cc.on_ce_echo(EcnEcho(now=now, marked=d, marked_total=self.marked,
                                      delivered=tcp.delivered,
                                      inflight=float(tcp.snd_nxt - una),
                                      min_rtt=tcp.rtt.min_rtt, srtt=tcp.rtt.srtt))
                tcp.check_law("on_ce_echo", w, s)
            else:
                EcnResponse.on_echo(self, tcp, d, ackno, now)
