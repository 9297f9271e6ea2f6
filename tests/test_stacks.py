"""Stack profiles (``Scenario.stack``): every setting of every profile
reaches the flows the engine builds, explicit knobs override the profile,
and the behaviours only a profile turns on (quick ACKs, the smoothed RTT
handed to the laws) do what their sources say."""

from __future__ import annotations

import math

import pandas as pd
import pytest

import ccsim
from ccsim import Flow
from ccsim.algorithms.registry import REGISTRY
from ccsim.algorithms.reno import Reno
from ccsim.packet.clock import Clock
from ccsim.packet.engine import PacketEngine
from ccsim.packet.receiver import MAX_QUICKACKS, Receiver
from ccsim.scenario.stacks import STACK_KNOBS, STACKS, table

ALGORITHMS = ("reno", "vegas", "cubic", "bic", "scalable", "hybla", "illinois", "highspeed",
              "westwood", "sack")


def _built(stack, algorithm, **knobs):
    """The sender and receiver the packet engine builds for one flow."""
    sc = ccsim.dumbbell("10Mbps", "20ms", flows=[algorithm], duration="1s", stack=stack,
                        **knobs)
    engine = PacketEngine(sc)
    engine.senders[0].opens_by_handshake = 0 in engine.handshakes  # for _observed
    return engine.senders[0], engine.receivers[0]


def _observed(sender, receiver):
    """Each setting of :data:`STACK_KNOBS` as the built sender and receiver hold it."""
    return {
        "initial_window": sender.initial_window,
        "min_rto": sender.rtt.min_rto,
        "initial_rto": sender.rtt.rto,
        "delayed_ack": receiver.delayed,
        "delayed_ack_timeout": receiver.ack_delay,
        "quick_ack": receiver.quick_gap is not None,
        "sack": receiver.sack,
        "ack_counting": ("acks" if sender.per_ack else "acks-in-slow-start"
                         if sender.per_ack_in_slow_start else "acks-in-congestion-avoidance"
                         if sender.per_ack_in_avoidance else "segments"),
        "limited_transmit": sender.limited_transmit,
        "tail_loss_probe": sender.tlp is not None,
        "law_rtt": "smoothed" if sender.law_smoothed else "sample",
        "handshake": sender.opens_by_handshake,
        "loss_flight": ("pipe" if sender.loss_pipe else "cwnd" if sender.loss_cwnd
                        else "flight"),
        "reduction_window": ("all" if sender.window_any else "ecn" if sender.window_ecn
                             else "none"),
        "exit_ack": sender.exit_ack,
    }


@pytest.mark.parametrize("stack", sorted(STACKS))
@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_every_setting_of_the_table_reaches_the_built_flow(stack, algorithm):
    # The table is the documentation (docs/stack.md renders it): what it says
    # for each algorithm is what the engine builds.
    profile = STACKS[stack]
    sender, receiver = _built(stack, algorithm)
    cls = ccsim.algorithms.get(algorithm)
    expected = {name: profile.knobs[name].value for name in STACK_KNOBS}
    if algorithm in profile.ack_counting:
        expected["ack_counting"] = profile.ack_counting[algorithm].value
    rec = profile.recovery.get(algorithm)
    recovery = cls.recovery if rec is None else rec.value
    uses_sack = ccsim.recovery.get(recovery).uses_sack
    expected["sack"] = expected["sack"] or uses_sack  # SACK strategies turn it on
    # a probe needs a scoreboard (SACK recovery)
    expected["tail_loss_probe"] = expected["tail_loss_probe"] and uses_sack
    if recovery in profile.exit_ack:  # ns-2's Sack1 agent differs from its Reno agents
        expected["exit_ack"] = profile.exit_ack[recovery].value
    assert _observed(sender, receiver) == expected
    assert type(sender.recovery) is ccsim.recovery.get(recovery)
    params = sender.cc.params()
    for name, setting in profile.params.get(algorithm, {}).items():
        assert params[name] == setting.value, name


def test_the_profiles_values_are_their_sources():
    # Spot checks of the table against the sources it cites (a typo in the
    # table would otherwise be "tested" by the test above).
    linux, ns3, ns2 = STACKS["linux"], STACKS["ns3"], STACKS["ns2"]
    assert [linux.knobs[k].value for k in ("initial_window", "min_rto", "delayed_ack_timeout")] \
        == [10.0, 0.2, 0.04]
    assert linux.recovery["reno"].value == linux.recovery["vegas"].value == "prr"
    # Linux's RACK finds both BBRs' losses (tcp_bbr.c v1 and the google/bbr v3 branch
    # are cong_control modules with no loss detection of their own)
    assert linux.recovery["bbr"].value == linux.recovery["bbr3"].value == "prr"
    # hybla_cong_avoid ignores `acked`; hstcp_cong_avoid does above ssthresh
    assert {a: s.value for a, s in linux.ack_counting.items()} == {
        "hybla": "acks", "highspeed": "acks-in-congestion-avoidance"}
    assert [ns3.knobs[k].value for k in ("min_rto", "delayed_ack_timeout", "law_rtt")] \
        == [1.0, 0.2, "smoothed"]
    assert ns3.knobs["limited_transmit"].value is True  # TcpSocketBase::LimitedTransmit
    assert ns3.knobs["handshake"].value is True  # TcpSocketBase::Connect, ProcessSynSent
    assert ns2.knobs["handshake"].value is False  # the one-way Agent/TCP sends at once
    # TcpCubic::IncreaseWindow counts segments in slow start too; the others
    # step once per ACK there (TcpNewReno::SlowStart, TcpHybla::SlowStart)
    assert {a for a, s in ns3.ack_counting.items() if s.value == "segments"} == {"cubic"}
    assert {a for a, s in ns3.ack_counting.items() if s.value == "acks-in-slow-start"} == {
        "bic", "scalable", "illinois", "highspeed", "hybla"}
    assert ns3.params["scalable"]["a"].value == 1 / 50
    assert ns3.params["bic"]["smooth_part"].value == 5
    assert ns3.params["hybla"]["rtt0"].value == 0.05
    # TcpHybla adds rho^2/cwnd in doubles (the paper's continuous law; Linux: 128ths)
    assert ns3.params["hybla"]["rule"].value == "paper"
    # TcpLp::PktsAcked halves m_cWnd alone at an early congestion indication, as
    # tcp_lp_pkts_acked does; ns-2 keeps the paper's rule (the law's default)
    assert ns3.params["lp"]["eci_ssthresh"].value is linux.params["lp"]["eci_ssthresh"].value \
        is False
    assert "lp" not in ns2.params
    # EnterRecovery hands GetSsThresh BytesInFlight(); TcpVegas::GetSsThresh
    # keeps min(ssThresh, cWnd - 1); TcpVegas's diff is segCwnd - targetCwnd;
    # TcpWestwoodPlus samples once per RTT on ns-3's exact clock
    assert ns3.knobs["loss_flight"].value == "pipe"
    # every Linux module's ssthresh() reads snd_cwnd (tcp_reno_ssthresh:
    # max(snd_cwnd >> 1, 2)); ns-2's TcpAgent::slowdown halves window()
    assert linux.knobs["loss_flight"].value == ns2.knobs["loss_flight"].value == "cwnd"
    # tcp_enter_recovery / tcp_enter_loss reduce once per window; ns-2 skips the
    # halving only after CWND_ACTION_ECN; ns-3's EnterRecovery and ReTxTimeout always
    assert [p.knobs["reduction_window"].value for p in (linux, ns2, ns3)] == [
        "all", "ecn", "none"]
    # tcp_cong_control runs cong_avoid on the ACK tcp_fastretrans_alert ended the
    # recovery with; ns-3's ProcessAck calls ExitRecovery without IncreaseWindow;
    # ns-2's Reno agents call opencwnd on it (recv_newack_helper), its Sack1 agent not
    assert [p.knobs["exit_ack"].value for p in (linux, ns2, ns3)] == [True, True, False]
    assert {r: s.value for r, s in ns2.exit_ack.items()} == {"sack": False}
    assert not linux.exit_ack and not ns3.exit_ack
    assert {k: s.value for k, s in ns3.params["vegas"].items()} == {
        "diff_rule": "ns3", "loss_rule": "ns3"}
    assert {k: s.value for k, s in ns3.params["westwood"].items()} == {
        "jiffy": 0.0, "min_interval": 0.0}
    assert [ns2.params["vegas"][k].value for k in ("alpha", "beta", "gamma")] == [1, 3, 1]
    assert ns2.knobs["delayed_ack"].value is False and ns2.knobs["sack"].value is False
    assert ns2.knobs["limited_transmit"].value is False
    for profile in STACKS.values():
        for row in table():
            setting = row[profile.name]
            assert setting is None or setting.source, (row["setting"], row["applies to"])


def test_linux_is_the_default_bit_for_bit():
    kw = dict(flows=["reno", "cubic", "vegas"], duration="4s", seed=3, loss=0.005)
    default = ccsim.dumbbell("10Mbps", "30ms", **kw)
    linux = ccsim.dumbbell("10Mbps", "30ms", stack="linux", **kw)
    assert default == linux and default.key == linux.key
    a, b = ccsim.run(default).summary, ccsim.run(linux).summary
    pd.testing.assert_frame_equal(a, b)
    # and the profile is in force: not the stack of ns-2
    ns2 = ccsim.run(ccsim.dumbbell("10Mbps", "30ms", stack="ns2", **kw)).summary
    assert not a.goodput_bps.equals(ns2.goodput_bps)


def test_explicit_knobs_flow_fields_and_law_parameters_override_the_profile():
    sc = ccsim.dumbbell("10Mbps", "20ms", stack="ns3", min_rto="300ms", delayed_ack=False,
                        flows=[Flow("reno", ack_counting="segments"),
                               Flow("scalable", params={"a": 0.05}),
                               Flow("vegas", recovery="vegas"), "cubic"],
                        duration="1s")
    st = [sc.flow_stack(i) for i in range(4)]
    assert {s.min_rto for s in st} == {0.3} and {s.delayed_ack for s in st} == {False}
    assert st[0].ack_counting == "segments"          # the flow's own, over ns-3's "acks"
    assert dict(st[1].params) == {"a": 0.05}         # the flow's parameter, over AIFactor 50
    assert st[2].recovery == "vegas"                 # the flow's recovery, over ns-3's PRR
    assert st[3].law_rtt == "smoothed" and st[3].min_rto == 0.3
    # a scenario-wide ack_counting overrides the profile's per-class entries
    sc = sc.replace(ack_counting="acks")
    assert sc.flow_stack(3).ack_counting == "acks" and sc.flow_stack(0).ack_counting == "segments"
    engine = PacketEngine(sc)
    assert engine.senders[1].cc.params()["a"] == 0.05 and engine.senders[0].rtt.min_rto == 0.3


@pytest.mark.parametrize("stack, expected", [("linux", "prr"), ("ns3", "prr"), ("ns2", "reno")])
def test_a_users_own_law_runs_in_the_stacks_recovery_as_reno_does(stack, expected):
    # A law that declares Reno's recovery (the base class's default, as a user's
    # own law usually does) is not Reno by name, yet Linux and ns-3 run every
    # law inside their one recovery (tcp_input.c; TcpL4Protocol::RecoveryType).
    class OwnAimd(Reno):
        name = "own-aimd-in-" + stack

    assert OwnAimd.recovery == "reno"
    with REGISTRY.scratch():
        ccsim.algorithms.register(OwnAimd)
        sc = ccsim.dumbbell("10Mbps", "20ms", stack=stack, duration="1s",
                            flows=[OwnAimd.name, Flow(OwnAimd.name, recovery="newreno"),
                                   "pseudo-rate"])
        assert sc.flow_stack(0).recovery == expected
        assert sc.flow_stack(1).recovery == "newreno"       # the flow's own still wins
        assert sc.flow_stack(2).recovery == "vegas"         # declares Vegas's: its own
        assert type(PacketEngine(sc).senders[0].recovery) is ccsim.recovery.get(expected)


def test_stack_round_trips_and_leaves_keys_of_scenarios_that_do_not_name_it():
    sc = ccsim.dumbbell("10Mbps", "20ms", stack="ns2", flows=[Flow("vegas", ack_counting="acks")],
                        duration="5s")
    assert ccsim.Scenario.from_dict(sc.to_dict()) == sc
    assert ccsim.Scenario.from_toml(sc.to_toml()) == sc
    plain = ccsim.dumbbell("10Mbps", "20ms", duration="5s").to_dict()
    assert "stack" not in plain and not set(STACK_KNOBS) & set(plain)
    assert "ack_counting" not in plain["flows"][0]
    assert sc.key != sc.replace(stack="ns3").key


@pytest.mark.parametrize("field,value,allowed", [
    ("stack", "ns-3", "'linux', 'ns3', 'ns2'"), ("law_rtt", "srtt", "'sample', 'smoothed'"),
    ("quick_ack", 1, "True, False or None"), ("loss_flight", "FlightSize", "'flight', 'pipe', 'cwnd'")])
def test_bad_stack_settings_are_refused_by_name(field, value, allowed):
    with pytest.raises((ccsim.ScenarioError, ccsim.ScenarioTypeError)) as err:
        ccsim.dumbbell("10Mbps", "20ms", **{field: value})
    assert field in str(err.value) and allowed in str(err.value)


def test_a_flows_ack_counting_is_checked():
    with pytest.raises(ccsim.ScenarioError, match="flow.ack_counting"):
        Flow("reno", ack_counting="bytes")


# -- quick ACKs (Linux) -----------------------------------------------------------------

def _quick_receiver(acks, gap):
    clock = Clock()
    rx = Receiver(sack=False, delayed_ack=True, ack_delay=0.04, back=0.0, clock=clock,
                  deliver_ack=acks.append, n_bins=1, bin_width=100.0, quick_gap=gap)
    return clock, rx


def test_quick_acks_acknowledge_the_first_segments_one_by_one():
    acks = []
    clock, rx = _quick_receiver(acks, gap=0.5)
    for seq in range(MAX_QUICKACKS + 8):
        rx.receive(seq, seq * 0.001)
    clock.run(until=1.0)
    numbers = [a[0] for a in acks]
    # 16 ACKs of one segment each (tcp_incr_quickack(sk, TCP_MAX_QUICKACKS)), then every
    # second segment
    assert numbers[:MAX_QUICKACKS] == list(range(1, MAX_QUICKACKS + 1))
    assert numbers[MAX_QUICKACKS:] == list(range(MAX_QUICKACKS + 2, MAX_QUICKACKS + 9, 2))


def test_quick_acks_come_back_after_a_silence_longer_than_the_rto():
    acks = []
    clock, rx = _quick_receiver(acks, gap=0.5)
    for seq in range(MAX_QUICKACKS + 4):
        rx.receive(seq, seq * 0.001)
    clock.run(until=0.3)
    before = len(acks)
    base = MAX_QUICKACKS + 4
    rx.receive(base, 0.2)          # 0.18 s later: no quick ACK, the ACK is held
    rx.receive(base + 1, 0.201)
    rx.receive(base + 2, 1.0)      # 0.8 s of silence, past the 0.5 s RTO: quick again
    rx.receive(base + 3, 1.001)
    clock.run(until=2.0)
    assert [a[0] for a in acks[before:]] == [base + 2, base + 3, base + 4]


def test_the_linux_stack_runs_quick_acks_and_ns3_does_not():
    _, linux = _built("linux", "cubic")
    _, ns3 = _built("ns3", "cubic")
    assert linux.quick_gap == pytest.approx(0.02 + 0.2)  # the flow's RTT + min RTO
    assert ns3.quick_gap is None and ns3.delayed


# -- the RTT handed to the laws (ns-3: smoothed) --------------------------------------------

@pytest.mark.parametrize("stack,smoothed", [("linux", False), ("ns3", True)])
def test_ns3_hands_the_laws_the_smoothed_rtt(monkeypatch, stack, smoothed):
    seen = []
    original = Reno.on_ack

    def spy(self, ack):
        if ack.rtt is not None:
            seen.append((ack.rtt, ack.srtt, ack.min_rtt))
        return original(self, ack)

    monkeypatch.setattr(Reno, "on_ack", spy)
    sc = ccsim.dumbbell("10Mbps", "20ms", flows=["reno"], buffer=30, duration="3s", stack=stack,
                        start_jitter=0)
    ccsim.run(sc)
    assert len(seen) > 100
    same = [rtt == srtt for rtt, srtt, _ in seen]
    if smoothed:
        assert all(same)
        # min_rtt is the least smoothed RTT the law has been handed
        least = math.inf
        for rtt, _, min_rtt in seen:
            least = min(least, rtt)
            assert min_rtt == least
    else:
        assert not all(same)



# -- the flight a fast recovery halves (ns-3: RFC 6675's pipe) -------------------------------

def _fast_losses(algorithm, loss_flight):
    """One flow losing one segment: per fast recovery, what the sender held
    (FlightSize, SACKed segments) and what the law was handed and set."""
    sc = ccsim.dumbbell("10Mbps", "20ms", buffer=100, duration="2s", stack="ns3",
                        loss_flight=loss_flight, start_jitter=0,
                        flows=[Flow(algorithm, drop_segments=(60,))])
    engine = PacketEngine(sc)
    sender = engine.senders[0]
    seen, original = [], sender.cc.on_loss

    def spy(loss):
        flight = sender.snd_nxt - sender.snd_una
        sacked = sender.scoreboard.sacked_in(sender.snd_una, sender.snd_nxt)
        original(loss)
        seen.append((loss.kind, flight, sacked, loss.inflight, sender.cc.ssthresh))

    sender.cc.on_loss = spy
    engine.run()
    return seen


@pytest.mark.parametrize("algorithm", ["reno", "hybla"])
def test_ns3_halves_the_pipe_with_the_head_lost(algorithm):
    # ns-3's EnterRecovery marks the head lost, then hands GetSsThresh
    # BytesInFlight(): the segments sent and neither SACKed nor lost; NewReno's
    # GetSsThresh (Hybla's too) is max(2 segments, bytesInFlight / 2). With
    # one segment dropped, DupThresh = 3 SACKed segments start the recovery
    # and the dropped head is the one segment lost.
    seen = _fast_losses(algorithm, "pipe")
    assert [s[0] for s in seen] == ["fast"]
    _, flight, sacked, inflight, ssthresh = seen[0]
    assert sacked == 3 and flight > 10
    assert inflight == flight - sacked - 1
    assert ssthresh == max((flight - sacked - 1) / 2, 2.0)
    # RFC 5681's FlightSize (Linux's and ns-2's profile) counts them all
    _, flight, sacked, inflight, ssthresh = _fast_losses(algorithm, "flight")[0]
    assert inflight == flight and ssthresh == flight / 2


def _losses(sc):
    """Per loss of flow 0: its kind, the FlightSize and the window just before
    the law reacts, what the law was handed, the ssthresh it set, and PRR's
    RecoverFS (None for other strategies)."""
    engine = PacketEngine(sc)
    sender = engine.senders[0]
    seen, original = [], sender.cc.on_loss

    def spy(loss):
        flight, cwnd = sender.snd_nxt - sender.snd_una, sender.cc.cwnd
        original(loss)
        seen.append((loss.kind, flight, cwnd, loss.inflight, sender.cc.ssthresh,
                     getattr(sender.recovery, "recover_fs", None)))

    sender.cc.on_loss = spy
    engine.run()
    return seen


# the Linux modules whose ssthresh() is tcp_reno_ssthresh, max(snd_cwnd >> 1, 2),
# and two with their own rule on snd_cwnd (hstcp_ssthresh, tcp_scalable_ssthresh)
@pytest.mark.parametrize("algorithm", ["reno", "hybla", "vegas", "lp", "highspeed", "scalable"])
def test_linux_hands_every_law_the_window_not_the_flight(algorithm):
    # One segment dropped: the SACKs that start the recovery let new segments
    # out first (tcp_packets_in_flight leaves SACKed ones out), so FlightSize
    # exceeds cwnd at the loss. Linux's ssthresh() reads snd_cwnd, and
    # tcp_cwnd_reduction (PRR) divides by prior_cwnd, the snd_cwnd that
    # tcp_init_cwnd_reduction saved; FlightSize (the old rule) fails both.
    sc = ccsim.dumbbell("10Mbps", "20ms", buffer=100, duration="2s", start_jitter=0,
                        flows=[Flow(algorithm, drop_segments=(60,))])
    assert sc.flow_stack(0).loss_flight == "cwnd"
    [(kind, flight, cwnd, inflight, ssthresh, recover_fs)] = _losses(sc)
    assert kind == "fast" and flight > cwnd
    assert inflight == recover_fs == cwnd
    if algorithm in ("reno", "hybla", "vegas", "lp"):
        assert ssthresh == max(cwnd / 2, 2.0)


def test_ns2_halves_the_window_at_a_timeout_of_an_application_limited_flow():
    # ns-2's TcpAgent::slowdown halves window() = min(cwnd_, wnd_) at a
    # timeout too. A 28-segment flow losing segment 25 has 3 segments in
    # flight and a window grown far past them: the timeout halves the window.
    sc = ccsim.dumbbell("10Mbps", "20ms", buffer=100, duration="3s", stack="ns2",
                        start_jitter=0, flows=[Flow("reno", size=40_000, drop_segments=(25,))])
    [(kind, flight, cwnd, inflight, ssthresh, _)] = _losses(sc)
    assert kind == "timeout" and flight < cwnd / 2
    assert inflight == cwnd and ssthresh == cwnd / 2
    # ... and within the receiver window: window() is min(cwnd_, wnd_)
    rwnd = 8 * sc.mss
    [(kind, _, cwnd, inflight, ssthresh, _)] = _losses(sc.replace(rwnd=rwnd))
    assert kind == "timeout" and cwnd > 8 and inflight == 8 and ssthresh == 4


def test_a_full_host_queue_reduces_from_the_window_in_linux():
    # A 2011 kernel's tcp_enter_cwr (NET_XMIT_DROP from a full qdisc) calls
    # ssthresh() on snd_cwnd, as a recovery does: FlightSize, whole segments,
    # misses the window's fraction.
    sc = ccsim.dumbbell("10Mbps", "20ms", buffer=100, duration="3s", seed=1,
                        access={"rate": "10Mbps", "buffer": 20}, flows=["reno"])
    seen = _losses(sc)
    assert len(seen) > 2 and all(kind == "fast" for kind, *_ in seen)
    assert any(flight != cwnd for _, flight, cwnd, *_ in seen)
    for _, _, cwnd, inflight, ssthresh, _ in seen:
        assert inflight == cwnd and ssthresh == max(cwnd / 2, 2.0)


def test_docs_show_the_table_as_it_is():
    # docs/stack.md's table is rendered from the profiles: a setting changed in
    # one place and not the other fails here.
    from pathlib import Path

    from ccsim.scenario.stacks import markdown

    doc = (Path(__file__).parents[1] / "docs" / "stack.md").read_text()
    begin, end = "<!-- stacks table: begin -->\n", "<!-- stacks table: end -->"
    assert doc[doc.index(begin) + len(begin):doc.index(end)] == markdown()


def test_the_command_line_names_the_stack(capsys):
    import json

    from ccsim.cli import main

    assert main(["run", "--stack", "ns2", "--no-delayed-ack", "--duration", "2s", "--json"]) == 0
    sc = ccsim.Scenario.from_dict(json.loads(capsys.readouterr().out)["scenario"])
    assert sc.stack == "ns2" and sc.delayed_ack is False
    assert sc.flow_stack(0).initial_window == STACKS["ns2"].knobs["initial_window"].value


@pytest.mark.parametrize("counting", ["segments", "acks", "acks-in-slow-start",
                                      "acks-in-congestion-avoidance"])
def test_ack_counting_tells_the_law_what_each_rule_says(counting):
    # Restated from Scenario.ack_counting: "segments", every segment an ACK
    # covers; "acks", one per ACK; "acks-in-slow-start", one per ACK below
    # ssthresh and every segment above it (ns-3's TcpNewReno::SlowStart, then
    # CongestionAvoidance with the segments acknowledged);
    # "acks-in-congestion-avoidance", the reverse (Linux's hstcp_cong_avoid).
    told = []

    class Spy(Reno):
        name = "spy-" + counting

        def on_ack(self, event):
            told.append((self.cwnd < self.ssthresh, event.acked, event.inflight))
            super().on_ack(event)

    with REGISTRY.scratch():
        ccsim.algorithms.register(Spy)
        # delayed ACKs cover two segments; the loss ends slow start early on
        sc = ccsim.dumbbell("10Mbps", "20ms", buffer=10, duration="3s", stack="ns3",
                            flows=[Flow(Spy.name, ack_counting=counting)])
        engine = PacketEngine(sc)
        engine.run()
    slow = [acked for ss, acked, _ in told if ss]
    avoid = [acked for ss, acked, _ in told if not ss]
    assert slow and avoid
    per_ack_below = counting in ("acks", "acks-in-slow-start")
    per_ack_above = counting in ("acks", "acks-in-congestion-avoidance")
    assert (max(slow) == 1) == per_ack_below
    assert (max(avoid) == 1) == per_ack_above
