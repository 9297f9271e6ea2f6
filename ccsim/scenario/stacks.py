"""Stack profiles: which TCP stack surrounds the window laws.

ccsim's results are compared with three worlds, and each runs the same
window law inside a different stack: Linux testbeds, ns-3 and the ns-2
studies. A profile (``Scenario.stack``) is one table of settings, each
with its source, applied to every flow; a knob given explicitly (a
:class:`~ccsim.Scenario` field, a :class:`~ccsim.Flow` field or a law
parameter in ``Flow.params``) overrides the profile's value.

* ``"linux"`` (the default): current mainline Linux for every flow,
  recovery included (``net/ipv4/tcp_input.c``, ``tcp_output.c``,
  ``tcp_timer.c``, ``include/net/tcp.h`` and the sysctls' defaults).
* ``"ns3"``: ns-3 3.44 as shipped (``src/internet/model/tcp-socket.cc``,
  ``tcp-socket-base.cc``, ``tcp-l4-protocol.cc`` and each class's
  ``tcp-*.cc`` attribute defaults).
* ``"ns2"``: the ns-2 ``Agent/TCP`` one-way agents the classic studies ran
  (``tcl/lib/ns-default.tcl``, ``tcp-vegas.cc``).

:func:`resolve` applies a profile to one flow; :data:`STACKS` is the table
that docs/stack.md renders.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

STACK_KNOBS = ("initial_window", "min_rto", "initial_rto", "delayed_ack", "delayed_ack_timeout",
               "quick_ack", "sack", "ack_counting", "limited_transmit", "tail_loss_probe",
               "law_rtt", "handshake", "loss_flight", "reduction_window", "exit_ack")
"""The :class:`~ccsim.Scenario` knobs whose default (``None``) is the stack's."""


@dataclass(frozen=True)
class Setting:
    """One setting of a profile: its value and where the value comes from."""

    value: Any
    source: str


@dataclass(frozen=True)
class Profile:
    """A named TCP stack.

    Attributes:
        name: ``"linux"``, ``"ns3"`` or ``"ns2"``.
        title: what it is, for docs.
        knobs: a value for each of :data:`STACK_KNOBS`.
        recovery: per algorithm name, the recovery strategy its flows run when
            ``Flow.recovery`` is not given (others: the algorithm's own). The
            ``"reno"`` entry also serves every other law that declares Reno's
            recovery (``recovery = "reno"``, the base class's default), so a
            user's own law runs in the stack's recovery as Reno does.
        ack_counting: per algorithm name, its ``ack_counting`` where it differs
            from ``knobs["ack_counting"]``.
        params: per algorithm name, law parameters that differ from the
            law's own defaults.
        exit_ack: per recovery strategy name, its ``exit_ack`` where it
            differs from ``knobs["exit_ack"]`` (ns-2's agents differ).
        recovery_params: per recovery strategy name, keyword arguments of
            the strategy that differ from its own defaults.
    """

    name: str
    title: str
    knobs: Mapping[str, Setting]
    recovery: Mapping[str, Setting] = field(default_factory=dict)
    ack_counting: Mapping[str, Setting] = field(default_factory=dict)
    params: Mapping[str, Mapping[str, Setting]] = field(default_factory=dict)
    exit_ack: Mapping[str, Setting] = field(default_factory=dict)
    recovery_params: Mapping[str, Mapping[str, Setting]] = field(default_factory=dict)


_LINUX_RACK = ("Linux runs every window law (except those with their own `cong_control`, "
               "BBR) inside SACK + PRR + RACK-TLP recovery (`tcp_input.c`: "
               "`tcp_fastretrans_alert`, `tcp_cwnd_reduction`; `net.ipv4.tcp_recovery=1`)")

LINUX = Profile(
    name="linux",
    title="current mainline Linux",
    knobs={
        "initial_window": Setting(10.0, "`TCP_INIT_CWND` 10 (include/net/tcp.h; RFC 6928)"),
        "min_rto": Setting(0.2, "`TCP_RTO_MIN` = HZ/5, 200 ms (include/net/tcp.h)"),
        "initial_rto": Setting(1.0, "`TCP_TIMEOUT_INIT` 1 s (include/net/tcp.h; RFC 6298)"),
        "delayed_ack": Setting(True, "delayed ACKs: `__tcp_ack_snd_check` ACKs every second "
                                     "full segment, else on the delayed-ACK timer"),
        "delayed_ack_timeout": Setting(0.04, "`TCP_DELACK_MIN` = HZ/25, 40 ms "
                                             "(include/net/tcp.h)"),
        "quick_ack": Setting(True, "quick-ACK mode: `tcp_incr_quickack(sk, TCP_MAX_QUICKACKS)` "
                                   "on the first data segment and after a silence longer than "
                                   "the RTO (`tcp_event_data_recv`): 16 ACKs of new data sent "
                                   "at once"),
        "sack": Setting(True, "`net.ipv4.tcp_sack` = 1"),
        "ack_counting": Setting("segments", "appropriate byte counting: `tcp_cong_avoid` is "
                                            "handed the segments acknowledged (RFC 3465)"),
        "limited_transmit": Setting(True, "built in: duplicates and SACKed segments leave "
                                          "`tcp_packets_in_flight` in the Disorder state "
                                          "(RFC 3042's effect)"),
        "tail_loss_probe": Setting(True, "`net.ipv4.tcp_early_retrans` = 3: RACK-TLP "
                                         "(`tcp_schedule_loss_probe`, RFC 8985)"),
        "law_rtt": Setting("sample", "`tcp_ack` hands `pkts_acked` each ACK's own RTT sample "
                                     "(`ack_sample.rtt_us`)"),
        "handshake": Setting(False, "Linux opens with SYN and SYN-ACK (`tcp_connect`, "
                                    "`tcp_rcv_synsent_state_process`); the profile starts a "
                                    "flow on an established connection, as iperf3 starts its "
                                    "test clock once its streams have connected (the Linux "
                                    "testbeds ccsim reproduces measured so); `handshake=True` "
                                    "puts the setup's round trip into the flow and its "
                                    "completion time"),
        "loss_flight": Setting("cwnd", "every module's `ssthresh()` reads `tcp_snd_cwnd(tp)`: "
                                       "`tcp_reno_ssthresh` is `max(snd_cwnd >> 1, 2)` "
                                       "(tcp_cong.c; Vegas, Hybla, TCP-LP and Westwood+ use "
                                       "it), `hstcp_ssthresh`, `tcp_scalable_ssthresh` and "
                                       "CUBIC's, BIC's, H-TCP's, Illinois', Veno's, YeAH's "
                                       "likewise; `tcp_init_cwnd_reduction` calls it at a "
                                       "recovery and `tcp_enter_loss` at a timeout, and "
                                       "`tcp_cwnd_reduction` (PRR) divides by `prior_cwnd`, "
                                       "the `snd_cwnd` saved then (tcp_input.c)"),
        "reduction_window": Setting("all", "one reduction per window of data: "
                                           "`tcp_enter_recovery` calls `ssthresh()` only "
                                           "outside a cwnd reduction (`tcp_in_cwnd_reduction`: "
                                           "CWR after ECN or a local drop, or Recovery), and "
                                           "`tcp_enter_loss` only from Open or Disorder, once "
                                           "`snd_una` reaches `high_seq`, or in Loss after "
                                           "`snd_una` moved (`!icsk_retransmits`) "
                                           "(tcp_input.c)"),
        "exit_ack": Setting(True, "`tcp_ack` calls `tcp_fastretrans_alert` (which leaves the "
                                  "recovery at `snd_una ≥ high_seq`, `tcp_end_cwnd_reduction` "
                                  "setting `cwnd = ssthresh`) before `tcp_cong_control`, which, "
                                  "out of the reduction, hands that ACK's `acked_sacked` to the "
                                  "module's `cong_avoid` (tcp_input.c)"),
    },
    recovery={
        "reno": Setting("prr", _LINUX_RACK),
        "vegas": Setting("prr", "`tcp_vegas.c` has no recovery of its own: " + _LINUX_RACK),
        "bbr": Setting("prr", "Linux finds BBR's losses as every flow's, by SACK and RACK "
                              "(`tcp_fastretrans_alert`, `tcp_rack_mark_lost`), so a "
                              "retransmission lost again is resent within the recovery, not "
                              "after the timer; `tcp_bbr.c`'s own `cong_control` sets the "
                              "window there instead of `tcp_cwnd_reduction` (ccsim's PRR then "
                              "only picks segments: `controls_recovery_window`)"),
        "bbr3": Setting("prr", "as BBR v1: the v3 branch (google/bbr `v3`, `tcp_bbr.c`) is a "
                               "`cong_control` module that detects no loss itself; Linux's "
                               "SACK and RACK mark segments lost (`tcp_rack_mark_lost`), and "
                               "the branch's `tcp_mark_skb_lost` hands each to the module's "
                               "`skb_marked_lost` hook (`bbr_skb_marked_lost`) and counts it "
                               "in the rate sample's `rs->lost` that `bbr_main` reads; PRR "
                               "only picks segments, as for v1"),
    },
    ack_counting={
        "hybla": Setting("acks", "`hybla_cong_avoid` steps once per ACK in both phases, "
                                 "whatever the ACK covers (`acked` reaches only the Reno rule "
                                 "it falls back to outside the Open state)"),
        "highspeed": Setting("acks-in-congestion-avoidance",
                             "`hstcp_cong_avoid` adds `a + 1` to `snd_cwnd_cnt` once per ACK in "
                             "congestion avoidance; slow start counts `acked` "
                             "(`tcp_slow_start`)"),
    },
    params={
        "lp": {"clock_offset": Setting(1000.0, (
            "`tcp_lp.c` takes the one-way delay as `rcv_tsval − rcv_tsecr`: the receiver's "
            "timestamp clock against the sender's, which differ by a random per-connection "
            "offset (`secure_tcp_ts_off`, `net.ipv4.tcp_timestamps` = 1, RFC 7323 §5.4); "
            "any offset above ~7× the largest queueing delay acts alike, 1000 s stands for it")),
               "eci_ssthresh": Setting(False, (
                   "`tcp_lp_pkts_acked` sets `snd_cwnd` alone at an early congestion "
                   "indication (1 inside the inference phase, half outside), never "
                   "`snd_ssthresh`: below it the flow slow-starts on"))},
    },
)

_NS3_ACK_COUNTING = ("one slow-start step per ACK ({}), the segments acknowledged in "
                     "congestion avoidance")
_NS3_SLOW_START = {"bic": "`TcpBic::IncreaseWindow`, tcp-bic.cc",
                   "scalable": "`TcpNewReno::SlowStart`, tcp-congestion-ops.cc",
                   "illinois": "`TcpNewReno::SlowStart`, called by tcp-illinois.cc",
                   "highspeed": "`TcpNewReno::SlowStart`, tcp-congestion-ops.cc",
                   "hybla": "`TcpHybla::SlowStart`, tcp-hybla.cc"}

NS3 = Profile(
    name="ns3",
    title="ns-3 3.44 as shipped",
    knobs={
        "initial_window": Setting(10.0, "`TcpSocket::InitialCwnd` 10 (tcp-socket.cc)"),
        "min_rto": Setting(1.0, "`TcpSocketBase::MinRto` 1 s (tcp-socket-base.cc)"),
        "initial_rto": Setting(1.0, "`RttEstimator::InitialEstimation` 1 s "
                                    "(rtt-estimator.cc)"),
        "delayed_ack": Setting(True, "`TcpSocket::DelAckCount` 2 (tcp-socket.cc)"),
        "delayed_ack_timeout": Setting(0.2, "`TcpSocket::DelAckTimeout` 200 ms "
                                            "(tcp-socket.cc)"),
        "quick_ack": Setting(False, "ns-3's receiver has no quick-ACK mode"),
        "sack": Setting(True, "`TcpSocketBase::Sack` true (tcp-socket-base.cc)"),
        "ack_counting": Setting("acks", "`TcpNewReno::SlowStart` and `CongestionAvoidance` "
                                        "grow once per ACK, whatever it covers "
                                        "(tcp-congestion-ops.cc)"),
        "limited_transmit": Setting(True, "`TcpSocketBase::LimitedTransmit` true "
                                          "(tcp-socket-base.cc)"),
        "tail_loss_probe": Setting(False, "ns-3 has no tail loss probe"),
        "law_rtt": Setting("smoothed", "`PktsAcked(m_tcb, segsAcked, m_tcb->m_srtt)`: every "
                                       "class is handed the smoothed RTT "
                                       "(tcp-socket-base.cc)"),
        "handshake": Setting(True, "`TcpSocketBase::Connect` sends a SYN and the first data "
                                   "waits for the SYN-ACK (`ProcessSynSent`); `DoForwardUp` "
                                   "runs `EstimateRtt` on the SYN-ACK (tcp-socket-base.cc)"),
        "loss_flight": Setting("pipe", "`EnterRecovery` marks the head lost, then hands "
                                       "`GetSsThresh` `BytesInFlight()`: RFC 6675's pipe, "
                                       "without the SACKed and the lost segments "
                                       "(tcp-socket-base.cc); `TcpNewReno::GetSsThresh` "
                                       "halves it (tcp-congestion-ops.cc)"),
        "reduction_window": Setting("none", "`EnterRecovery` always calls `GetSsThresh`, "
                                            "and `ReTxTimeout` does unless the state is "
                                            "`CA_LOSS` with the head already resent "
                                            "(`IsHeadRetransmitted`) (tcp-socket-base.cc)"),
        "exit_ack": Setting(False, "`ProcessAck` leaving `CA_RECOVERY` calls `PktsAcked` and "
                                   "`ExitRecovery` but not `IncreaseWindow` (leaving `CA_LOSS` "
                                   "it does) (tcp-socket-base.cc)"),
    },
    recovery={name: Setting("prr", "`TcpL4Protocol::RecoveryType` TcpPrrRecovery "
                                   "(tcp-l4-protocol.cc), whatever the class")
              for name in ("reno", "vegas")},
    ack_counting={
        "cubic": Setting("segments", "counts segments in both phases: "
                                     "`TcpCubic::IncreaseWindow` (tcp-cubic.cc)"),
        **{name: Setting("acks-in-slow-start", _NS3_ACK_COUNTING.format(source))
           for name, source in _NS3_SLOW_START.items()}},
    params={
        "scalable": {"a": Setting(1 / 50, "`TcpScalable::AIFactor` 50 (tcp-scalable.cc; "
                                          "Linux 100)")},
        "bic": {"smooth_part": Setting(5.0, "`TcpBic::SmoothPart` 5 (tcp-bic.cc; Linux 20)"),
                "beta": Setting(0.8, "`TcpBic::Beta` 0.8 (tcp-bic.cc; Linux 819/1024)")},
        "lp": {"eci_ssthresh": Setting(False, "`TcpLp::PktsAcked` sets `m_cWnd` alone at an "
                                              "early congestion indication (one segment inside "
                                              "the inference time, else half, at least one "
                                              "segment), never `m_ssThresh`: below it "
                                              "`TcpNewReno::IncreaseWindow` slow-starts on "
                                              "(tcp-lp.cc)")},
        "hybla": {"rtt0": Setting(0.05, "`TcpHybla::RRTT` 50 ms (tcp-hybla.cc; Linux 25 ms)"),
                  "rule": Setting("paper", "`TcpHybla::CongestionAvoidance` adds ρ²/cwnd per "
                                           "segment in doubles with the exact ρ, and "
                                           "`SlowStart` 2^ρ − 1 (tcp-hybla.cc; Linux in "
                                           "128ths of a segment, ρ in eighths)")},
        "westwood": {"jiffy": Setting(0.0, "ns-3 reads RTTs from its exact clock (Linux: "
                                           "whole jiffies)"),
                     "min_interval": Setting(0.0, "`TcpWestwoodPlus::PktsAcked` samples once "
                                                  "per RTT, with no 50 ms floor "
                                                  "(tcp-westwood-plus.cc)")},
        "vegas": {"diff_rule": Setting("ns3", "`TcpVegas::IncreaseWindow`: `targetCwnd = "
                                              "segCwnd·baseRtt/minRtt` truncated, `diff = segCwnd "
                                              "− targetCwnd` (tcp-vegas.cc; Linux scales by "
                                              "RTT/BaseRTT)"),
                  "loss_rule": Setting("ns3", "`TcpVegas::GetSsThresh`: "
                                              "`max(min(ssThresh, cWnd − segmentSize), "
                                              "2·segmentSize)` on a loss (tcp-vegas.cc; Linux "
                                              "halves, `tcp_reno_ssthresh`)")},
    },
)

_NS2_DEFAULT = "tcl/lib/ns-default.tcl"

NS2 = Profile(
    name="ns2",
    title="ns-2's one-way Agent/TCP, as the studies of 1995–2002 ran it",
    knobs={
        "initial_window": Setting(2.0, f"`Agent/TCP set windowInit_ 2` ({_NS2_DEFAULT}; "
                                       "1 before 2001-05-26)"),
        "min_rto": Setting(0.2, f"`Agent/TCP set minrto_ 0.2` ({_NS2_DEFAULT})"),
        "initial_rto": Setting(3.0, f"`Agent/TCP set rtxcur_init_ 3.0` ({_NS2_DEFAULT})"),
        "delayed_ack": Setting(False, "`Agent/TCPSink` ACKs every segment (the DelAck sink "
                                      "is a separate class)"),
        "delayed_ack_timeout": Setting(0.1, f"`Agent/TCPSink/DelAck set interval_ 100ms` "
                                            f"({_NS2_DEFAULT}), used with delayed_ack=True"),
        "quick_ack": Setting(False, "no quick-ACK mode in ns-2's sinks"),
        "sack": Setting(False, "`Agent/TCPSink` sends no SACK blocks (`Agent/TCPSink/Sack1` "
                               "does: the `sack` agent turns them on for its flow)"),
        "ack_counting": Setting("acks", "`TcpAgent::opencwnd` grows once per new ACK "
                                        "(tcp.cc)"),
        "limited_transmit": Setting(False, "`singledup_ 0`: the agents of the 1995–2001 "
                                           f"releases ({_NS2_DEFAULT}: default changed to 1 on "
                                           "2001-11-28)"),
        "tail_loss_probe": Setting(False, "ns-2 has no tail loss probe"),
        "law_rtt": Setting("sample", "ns-2's Vegas reads each ACK's RTT from its own "
                                     "fine-grained clock (`vegastime()`, tcp-vegas.cc)"),
        "handshake": Setting(False, "the one-way `Agent/TCP` sends its first window at its "
                                    "start, with no SYN (only `Agent/TCP/FullTcp` has one)"),
        "loss_flight": Setting("cwnd", "`TcpAgent::slowdown` halves `window()`, "
                                       "`min(cwnd_, wnd_)`, at a fast retransmit "
                                       "(`dupack_action`) and a timeout alike (tcp.cc; "
                                       "truncated to whole segments: `precisionReduce_` "
                                       f"true only since 2006-01-24, {_NS2_DEFAULT})"),
        "reduction_window": Setting("ecn", "after an ECN reduction (`CWND_ACTION_ECN`, "
                                           "`recover_ = maxseq_`) `dupack_action` "
                                           "retransmits without halving and `timeout` closes "
                                           "the window to one without halving while "
                                           "`highest_ack_ < recover_`; a timeout during a "
                                           "fast recovery halves again (tcp.cc)"),
        "exit_ack": Setting(True, "the Reno and NewReno agents pass the ACK that ends fast "
                                  "recovery to `recv_newack_helper`, which calls `opencwnd` "
                                  "(tcp-reno.cc, tcp-newreno.cc, tcp.cc); the Vegas agent runs "
                                  "its per-ACK increase on it (tcp-vegas.cc)"),
    },
    exit_ack={"sack": Setting(False, "`Sack1TcpAgent::recv` ends fast recovery with "
                                     "`newack` alone, no `opencwnd` (tcp-sack1.cc)")},
    recovery_params={
        "newreno": {"exit_window": Setting("ns2", "`NewRenoTcpAgent::recv` ends fast recovery "
                                                  "with `dupwnd_ = 0`, leaving `cwnd_` as the "
                                                  "partial ACKs left it (`exit_recovery_fix_ "
                                                  f"0`, {_NS2_DEFAULT}; tcp-newreno.cc)")},
    },
    params={
        "vegas": {
            "alpha": Setting(1.0, f"`Agent/TCP/Vegas set v_alpha_ 1` ({_NS2_DEFAULT})"),
            "beta": Setting(3.0, f"`Agent/TCP/Vegas set v_beta_ 3` ({_NS2_DEFAULT})"),
            "gamma": Setting(1.0, f"`Agent/TCP/Vegas set v_gamma_ 1` ({_NS2_DEFAULT})"),
            "slow_start": Setting("paper", "tcp-vegas.cc: the window grows every other RTT "
                                           "(Brakmo & Peterson 1995 §3.3)"),
            "diff_rule": Setting("paper", "tcp-vegas.cc: `(expect - actual) * v_baseRTT_`, "
                                          "not truncated"),
        },
    },
)

STACKS: dict[str, Profile] = {p.name: p for p in (LINUX, NS3, NS2)}
"""The profiles by name; ``"linux"`` is :attr:`Scenario.stack`'s default."""


@dataclass(frozen=True)
class FlowStack:
    """One flow's stack, every setting resolved (see :func:`resolve`).

    Attributes: the values of :data:`STACK_KNOBS` (units as the
    :class:`~ccsim.Scenario` fields), ``recovery`` (the strategy's name) and
    ``params`` (the law's keyword arguments, profile's and flow's) and
    ``recovery_params`` (the strategy's, the profile's).
    """

    initial_window: float
    min_rto: float
    initial_rto: float
    delayed_ack: bool
    delayed_ack_timeout: float
    quick_ack: bool
    sack: bool
    ack_counting: str
    limited_transmit: bool
    tail_loss_probe: bool
    law_rtt: str
    handshake: bool
    loss_flight: str
    reduction_window: str
    exit_ack: bool
    recovery: str
    params: tuple[tuple[str, Any], ...]
    recovery_params: tuple[tuple[str, Any], ...] = ()


def resolve(profile: Profile, algorithm: str, default_recovery: str, knobs: Mapping[str, Any],
            flow_recovery: str | None, flow_ack_counting: str | None,
            flow_params: Mapping[str, Any]) -> FlowStack:
    """One flow's settings: what the flow says, else what the scenario's
    ``knobs`` say (``None``: not given), else the profile's entry for the
    flow's algorithm, else the profile's own value."""
    values = {}
    for name in STACK_KNOBS:
        value = knobs.get(name)
        if name == "ack_counting":
            if flow_ack_counting is not None:
                value = flow_ack_counting
            elif value is None and algorithm in profile.ack_counting:
                value = profile.ack_counting[algorithm].value
        values[name] = profile.knobs[name].value if value is None else value
    recovery = flow_recovery
    if recovery is None:
        entry = profile.recovery.get(algorithm)
        if entry is None and default_recovery == "reno":  # a law declaring Reno's recovery
            entry = profile.recovery.get("reno")
        recovery = default_recovery if entry is None else entry.value
    if knobs.get("exit_ack") is None and recovery in profile.exit_ack:
        values["exit_ack"] = profile.exit_ack[recovery].value  # the agent's own
    params = {k: s.value for k, s in profile.params.get(algorithm, {}).items()}
    params.update(flow_params)
    recovery_params = {k: s.value for k, s in profile.recovery_params.get(recovery, {}).items()}
    return FlowStack(recovery=recovery, params=tuple(sorted(params.items())),
                     recovery_params=tuple(sorted(recovery_params.items())), **values)


def table() -> list[dict[str, Any]]:
    """Every setting of every profile as rows (``setting``, ``applies to``,
    then per profile its value and source), for docs/stack.md."""
    rows = []
    for name in STACK_KNOBS:
        rows.append({"setting": name, "applies to": "every flow",
                     **{p.name: p.knobs[name] for p in STACKS.values()}})
    for kind in ("recovery", "ack_counting", "exit_ack"):
        algos = sorted({a for p in STACKS.values() for a in getattr(p, kind)})
        for algo in algos:
            rows.append({"setting": kind, "applies to": (f"{algo} recovery" if kind == "exit_ack"
                                                         else algo),
                         **{p.name: getattr(p, kind).get(algo) for p in STACKS.values()}})
    pairs = sorted({(a, k) for p in STACKS.values() for a, ps in p.params.items() for k in ps})
    for algo, key in pairs:
        rows.append({"setting": f"params[{key!r}]", "applies to": algo,
                     **{p.name: p.params.get(algo, {}).get(key) for p in STACKS.values()}})
    pairs = sorted({(r, k) for p in STACKS.values() for r, ps in p.recovery_params.items()
                    for k in ps})
    for rec, key in pairs:
        rows.append({"setting": f"recovery_params[{key!r}]", "applies to": f"{rec} recovery",
                     **{p.name: p.recovery_params.get(rec, {}).get(key)
                        for p in STACKS.values()}})
    return rows


def markdown() -> str:
    """:func:`table` as the markdown table docs/stack.md shows: each cell the
    value, then its source; "—" where the profile has no entry
    (the algorithm's own default)."""
    names = list(STACKS)
    lines = ["| setting | applies to | " + " | ".join(STACKS[n].title for n in names) + " |",
             "|---" * (2 + len(names)) + "|"]
    for row in table():
        cells = []
        for n in names:
            s = row[n]
            cells.append("—" if s is None else f"`{s.value!r}`: {s.source}")
        lines.append(f"| `{row['setting']}` | {row['applies to']} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
