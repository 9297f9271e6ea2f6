"""ccsim.testing: the conformance suite over every registered algorithm, mutants
that show the kit can fail, regression sequences, and the kit's own contract.

Layer 2 of STYLE.md's "Tests in layers": the shared suite and state-machine
properties. The hypothesis profile comes from tests/conftest.py ("ci" by
default; CCSIM_HYPOTHESIS_PROFILE=thorough for many more examples).
"""

import math
import subprocess
import sys

import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

from ccsim import algorithms
from ccsim.algorithms import Ack, CongestionControl, Loss, RttSample
from ccsim.testing import (AckRound, CheckFailure, check_algorithm, make_machine, rules,
                           snapshot, strategies)
from ccsim.testing.model import declared, same_state

MUTANT_EXAMPLES = 300  # generous: a mutant must be caught from a cold example database
MUTANT_SETTINGS = settings(stateful_step_count=25)  # shorter runs shrink faster


# -- extra rules for algorithms whose files do not (yet) declare them -----------------------------
def cubic_k_is_eq2(before, event, after):
    """RFC 9438 §4.2 eq. 2: when an epoch begins, K = cbrt((W_max − cwnd_epoch)/C),
    i.e. W_cubic(0) = cwnd_epoch. cwnd_epoch is cwnd when the epoch began: the
    window before the step if it was already in congestion avoidance, else ssthresh."""
    if before.get("epoch_start") is not None or after.get("epoch_start") is None:
        return None
    cwnd_epoch = max(before["cwnd"], before["ssthresh"])
    k = math.cbrt(max(after["w_max"] - cwnd_epoch, 0.0) / after["c"])
    if not math.isclose(after["_k"], k, rel_tol=1e-9, abs_tol=1e-9):
        return (f"epoch began with W_max={after['w_max']!r}, cwnd_epoch={cwnd_epoch!r}, "
                f"C={after['c']!r}: K is {after['_k']!r}, eq. 2 gives {k!r}")
    return None


def cubic_reno_friendly(before, event, after):
    """RFC 9438 §4.3: in the Reno-friendly region (W_cubic(t) < W_est at an ACK),
    cwnd is not below W_est. (Outside that region cwnd follows the cubic target
    and may lag W_est: the unqualified "never below W_est" does not hold — see
    test_cubic_may_lag_w_est_outside_the_reno_friendly_region.)"""
    acks = getattr(event, "acks", None) or ((event,) if isinstance(event, Ack) else ())
    if not acks or after.get("epoch_start") is None:
        return None
    t = acks[-1].now - after["epoch_start"]
    w_cubic = after["c"] * (t - after["_k"]) ** 3 + after["w_max"]
    if w_cubic < after["w_est"] and after["cwnd"] < after["w_est"] - 1e-9:
        return (f"Reno-friendly region (W_cubic(t)={w_cubic!r} < W_est={after['w_est']!r}) "
                f"but cwnd is {after['cwnd']!r}")
    return None


EXTRA = {"cubic": (cubic_k_is_eq2, cubic_reno_friendly)}

# Bugs the kit found in algorithm files: each stays visible as a strict xfail
# until its file is fixed (then its entry goes; its regression test stays).
KNOWN_BUGS: dict[str, str] = {}


def _cases():
    cases = []
    for name in algorithms.names():
        marks = ()
        if name in KNOWN_BUGS:
            marks = pytest.mark.xfail(raises=CheckFailure, strict=True, reason=KNOWN_BUGS[name])
        cases.append(pytest.param(name, marks=marks, id=name))
    return cases


# -- the registry: every algorithm, the moment it is registered --------------------------------
@pytest.mark.parametrize("name", _cases())
@pytest.mark.slow
def test_registered_algorithm_conforms(name):
    # A known bug only has to show up, not be shrunk again on every run.
    quick = settings(phases=[Phase.explicit, Phase.reuse, Phase.generate]) if name in KNOWN_BUGS else None
    check_algorithm(algorithms.get(name), properties=EXTRA.get(name, ()), settings=quick)


# -- mutants: the kit can fail --------------------------------------------------------------------
Reno = algorithms.get("reno")


class RenoForgetsToHalve(Reno):
    """ssthresh = FlightSize instead of FlightSize / 2."""

    def ssthresh_after(self, loss):
        return max(loss.inflight, 2.0)


class RenoTwicePerRtt(Reno):
    """Congestion avoidance adds two segments per RTT."""

    def on_ack(self, ack):
        if self.cwnd < self.ssthresh:
            super().on_ack(ack)
        else:
            self.cwnd += 2.0 * ack.acked / self.cwnd


class AimdKeepsWindowOnTimeout(CongestionControl):
    """A user's AIMD law whose timeout only halves (cwnd stays high)."""

    name = "aimd-mutant"

    def on_ack(self, ack):
        self.cwnd += ack.acked if self.cwnd < self.ssthresh else ack.acked / self.cwnd

    def on_loss(self, loss):
        self.ssthresh = self.ssthresh_after(loss)
        self.cwnd = self.ssthresh  # wrong on a timeout: RFC 5681 §3.1 says the loss window


class RenoNaNWindow(Reno):
    """Divides by the (possibly zero) inflight count."""

    def on_ack(self, ack):
        super().on_ack(ack)
        self.cwnd = min(self.cwnd, self.cwnd * 1e3 / ack.inflight)


MUTANTS = [
    # Mutants of Reno are checked against Reno's declared rules: overriding a hook
    # makes a different law, which does not inherit them (ccsim.testing.model.declared).
    pytest.param(RenoForgetsToHalve, Reno.properties, ("halves_on_loss",), id="reno-no-halving"),
    pytest.param(RenoTwicePerRtt, Reno.properties, ("one_segment_per_window_of_acks",),
                 id="reno-two-per-rtt"),
    pytest.param(AimdKeepsWindowOnTimeout, (),
                 ("timeout to loss window", "loss does not increase cwnd"), id="timeout-keeps-cwnd"),
    pytest.param(RenoNaNWindow, (), ("hooks do not raise",), id="division-by-zero"),
]

if "cubic" in algorithms.names():
    class CubicWrongK(algorithms.get("cubic")):
        """K with β where eq. 2 has W_max − cwnd_epoch (= W_max·(1 − β) after a loss)."""

        def k(self, w_max, cwnd_epoch):
            return math.cbrt(w_max * self.beta / self.c)

    MUTANTS.append(pytest.param(CubicWrongK, EXTRA["cubic"], ("cubic_k_is_eq2",), id="cubic-wrong-k"))


def _replay(failure: CheckFailure) -> dict:
    """Run a failure's replay script; return its namespace."""
    namespace: dict = {}
    exec(compile(failure.replay, "<replay>", "exec"), namespace)  # noqa: S102 — our own script
    return namespace


@pytest.mark.parametrize("mutant, properties, rules_broken", MUTANTS)
@pytest.mark.slow
def test_kit_catches_mutant(mutant, properties, rules_broken):
    with pytest.raises(CheckFailure) as info:
        check_algorithm(mutant, properties=properties, max_examples=MUTANT_EXAMPLES,
                        settings=MUTANT_SETTINGS)
    failure = info.value
    assert any(rule in failure.rule for rule in rules_broken), failure.rule
    assert isinstance(failure, AssertionError)
    assert failure.replay in str(failure)
    # The replay is a script a user can paste: it compiles and imports what it names
    # (a missing import would raise NameError or ImportError when it runs, below).
    compile(failure.replay, "<replay>", "exec")
    assert f"algo = {mutant.__qualname__}(" in failure.replay
    assert f"# broken rule: {failure.rule}" in failure.replay
    if failure.rule == "hooks do not raise":
        with pytest.raises(Exception) as raised:
            _replay(failure)
        assert not isinstance(raised.value, (NameError, ImportError)), raised.value
        return
    # The replay reproduces the failing state, and the rule is broken there again.
    algo = _replay(failure)["algo"]
    assert same_state(snapshot(algo), failure.after)
    assert failure.recheck(algo) is not None


@pytest.mark.slow
def test_replay_is_short():
    with pytest.raises(CheckFailure) as info:
        check_algorithm(RenoForgetsToHalve, properties=Reno.properties,
                        max_examples=MUTANT_EXAMPLES, settings=MUTANT_SETTINGS)
    # start, one loss and its recovery end: shrinking leaves almost nothing else.
    assert len(info.value.replay.splitlines()) <= 12, info.value.replay


# -- regression sequences: minimal failures the kit found ---------------------------------------
def _drive(algo, steps):
    """Apply (event) steps as the kit does: RTT sample before an ACK, recovery end
    (cwnd = ssthresh) after a fast loss."""
    for ev in steps:
        if isinstance(ev, Ack):
            if ev.rtt is not None:
                algo.on_rtt(RttSample(ev.now, ev.rtt, ev.min_rtt, ev.srtt, ev.inflight))
            algo.on_ack(ev)
        else:
            algo.on_loss(ev)
            if ev.kind == "fast":
                algo.cwnd = algo.ssthresh
    return algo


@pytest.mark.skipif("htcp" not in algorithms.names(), reason="htcp not registered")
def test_htcp_grows_no_faster_than_doubling():
    # Found by the kit: α(Δ) was added per ACK without Linux's cap of one segment
    # per ACK (3 → 7.09 in one RTT of 3 ACKs). The minimal sequence, kept.
    algo = algorithms.get("htcp")()
    algo.start(6, 1460)
    _drive(algo, [Loss(now=1 / 3, kind="fast", inflight=4.0, min_rtt=math.inf, srtt=math.nan)])
    before = algo.cwnd
    acks = [Ack(now=1 / 3 + 0.5 * (i + 1), acked=1, rtt=1.5, min_rtt=1.5, srtt=1.5,
                inflight=2 + (i == 2), delivered=i + 1.0, delivery_rate=23360.0) for i in range(3)]
    _drive(algo, acks)
    assert algo.cwnd - before <= algo.max_growth_per_rtt(before) + 1e-9


@pytest.mark.skipif("hybla" not in algorithms.names(), reason="hybla not registered")
def test_hybla_declares_its_growth():
    # Found by the kit: Hybla grows ρ² segments per RTT (the paper's law) but
    # declared no bound, so the default "no faster than doubling" failed
    # (2 → 92.8 in one RTT at ρ = 13.3). The minimal sequence, kept.
    algo = algorithms.get("hybla")()
    algo.start(9, 536)
    _drive(algo, [Loss(now=0.0574074074074074, kind="fast", inflight=4.0, min_rtt=math.inf,
                       srtt=math.nan)])
    before = algo.cwnd
    rtt = 1 / 3
    _drive(algo, [Ack(now=0.0574074074074074 + rtt / 2 * (i + 1), acked=1, rtt=rtt, min_rtt=rtt,
                      srtt=rtt, inflight=float(max(math.floor(algo.cwnd) - 1, 0)),
                      delivered=i + 1.0, delivery_rate=25728.0) for i in range(1)])
    _drive(algo, [Ack(now=0.0574074074074074 + rtt, acked=1, rtt=rtt, min_rtt=rtt, srtt=rtt,
                      inflight=89, delivered=2.0, delivery_rate=25728.0)])
    assert algo.cwnd - before <= algo.max_growth_per_rtt(before) + 1e-9


@pytest.mark.skipif("cubic" not in algorithms.names(), reason="cubic not registered")
def test_cubic_may_lag_w_est_outside_the_reno_friendly_region():
    """The fuzzer's counterexample to the unqualified "CUBIC's cwnd is never below
    W_est": after two fast losses cwnd follows the cubic target while W_cubic(t) ≥
    W_est and ends a round below W_est. RFC 9438 §4.3 only asks cwnd ≥ W_est in the
    Reno-friendly region, which cubic_reno_friendly checks; this pins the example."""
    algo = algorithms.get("cubic")()
    algo.start(5, 1460)
    steps = [Loss(now=0.2, kind="fast", inflight=4.0, min_rtt=math.inf, srtt=math.nan)]
    steps += [Ack(now=now, acked=1, rtt=0.75, min_rtt=0.75, srtt=0.75, inflight=inflight,
                  delivered=d, delivery_rate=46720.0)
              for now, inflight, d in [(0.45, 2, 1.0), (0.7, 2, 2.0), (0.95, 3, 3.0)]]
    steps += [Loss(now=1.2, kind="fast", inflight=4.0, min_rtt=0.75, srtt=0.75)]
    steps += [Ack(now=now, acked=1, rtt=0.75, min_rtt=0.75, srtt=0.75, inflight=2,
                  delivered=d, delivery_rate=46720.0) for now, d in [(1.45, 4.0), (1.7, 5.0), (1.95, 6.0)]]
    before = snapshot(algo)
    last = steps[-3:]
    _drive(algo, steps)
    after = snapshot(algo)
    assert algo.cwnd < algo.w_est  # the unqualified rule is false here...
    assert cubic_reno_friendly(before, AckRound(tuple(last), 0.75), after) is None  # ...§4.3 holds


# -- the kit's own contract ----------------------------------------------------------------------
@pytest.mark.slow
def test_importing_ccsim_does_not_import_hypothesis():
    code = "import sys, ccsim; ccsim.run; print('hypothesis' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_reno_declarations_and_inheritance():
    assert Reno().max_growth_per_rtt(10.0) == 1.0
    assert CongestionControl().max_growth_per_rtt(10.0) == 10.0
    for name in ("newreno", "tahoe"):  # Reno's hooks: Reno's rules
        assert declared(algorithms.get(name), "properties") == Reno.properties
    if "cubic" in algorithms.names():  # overrides on_ack: not Reno's law
        assert declared(algorithms.get("cubic"), "properties") == ()
        cubic = algorithms.get("cubic")()
        # ... and it declares its own bound: RFC 9438's target ≤ 1.5·cwnd.
        assert declared(type(cubic), "max_growth_per_rtt")(cubic, 10.0) == 5.0
    assert declared(RenoForgetsToHalve, "properties") == ()  # changed ssthresh_after


def test_skip_names_and_param_space_are_validated():
    with pytest.raises(ValueError, match="unknown rule"):
        make_machine(Reno, skip=("no such rule",))

    class Misdeclared(CongestionControl):
        name = "misdeclared"
        param_space = {"beta": (0.1, 0.9)}

    with pytest.raises(TypeError, match="beta"):
        check_algorithm(Misdeclared, max_examples=1)
    with pytest.raises(TypeError):
        check_algorithm(object)


@pytest.mark.slow
def test_skip_leaves_a_rule_out():
    check_algorithm(AimdKeepsWindowOnTimeout, max_examples=50,
                    skip=("timeout to loss window", "loss does not increase cwnd"))


class Gentle(CongestionControl):
    """A parameterised law for the param_space strategies."""

    name = "gentle-test"
    param_space = {"beta": (0.5, 0.95), "step": (1, 3)}

    def __init__(self, *, beta: float = 0.75, step: int = 1):
        self.beta, self.step = beta, step

    def on_ack(self, ack):
        if self.cwnd < self.ssthresh:
            self.cwnd += ack.acked
        else:
            self.cwnd += self.step * ack.acked / self.cwnd

    def max_growth_per_rtt(self, cwnd):
        return float(self.step)

    def ssthresh_after(self, loss):
        return max(loss.inflight * self.beta, 2.0)


@given(strategies.params(Gentle))
def test_params_are_drawn_from_param_space(params):
    assert 0.5 <= params["beta"] <= 0.95
    assert isinstance(params["step"], int) and 1 <= params["step"] <= 3


@pytest.mark.slow
def test_user_algorithm_passes_with_fixed_and_drawn_params():
    check_algorithm(Gentle)
    check_algorithm(Gentle, params={"beta": 0.9, "step": 2})
    check_algorithm(Gentle, params=st.fixed_dictionaries({"beta": st.just(0.6)}))


GentleMachine = make_machine(Gentle)
TestGentleMachine = GentleMachine.TestCase  # the machine in a user's own suite
TestGentleMachine.settings = settings(max_examples=10, deadline=None)


@given(strategies.event_streams())
def test_event_streams_keep_the_engine_semantics(events):
    now, samples = 0.0, []
    for ev in events:
        assert ev.now >= now
        now = ev.now
        if isinstance(ev, (RttSample, Ack)) and getattr(ev, "rtt", None) is not None:
            samples.append(ev.rtt)
        if isinstance(ev, Ack):
            assert ev.acked >= 1 and ev.inflight >= 0 and ev.delivery_rate > 0
            if ev.rtt is None:
                assert any(isinstance(e, Loss) for e in events[:events.index(ev)])
        if samples and not isinstance(ev, Loss):
            assert ev.min_rtt == min(samples)
        if isinstance(ev, Loss):
            assert ev.kind in ("fast", "timeout") and ev.inflight >= 1
            if ev.kind == "fast":
                assert ev.inflight >= 4


@given(strategies.paths(), st.floats(0, 1000))
def test_rtt_never_below_the_base_rtt(path, inflight):
    assert path.base_rtt <= path.rtt(inflight) <= path.base_rtt + path.buffer * path.mss * 8 / path.bandwidth + 1e-12


def test_common_rules_have_names():
    assert set(rules.COMMON) >= {"cwnd finite", "cwnd floor", "ssthresh after loss",
                                 "growth per RTT", "loss does not increase cwnd",
                                 "timeout to loss window"}


@pytest.mark.slow
def test_the_kit_catches_a_hybla_whose_slow_start_step_explodes():
    # Before Linux's cap, one ACK at a 1 s RTT added 2^40 segments and Hybla passed the kit,
    # which checked growth only in congestion avoidance. The slow-start step rule holds each
    # ACK to the law's declaration, (2^min(rho, 16) - 1) per segment for Hybla.
    from ccsim.algorithms.hybla import Hybla

    class UncappedHybla(Hybla):
        SLOW_START_MAX_RHO = 1000.0  # the old cap, an RTT of 25 s
        CWND_CLAMP = math.inf        # nor Linux's window clamp

    with pytest.raises(CheckFailure, match="slow-start step"):
        check_algorithm(UncappedHybla, max_examples=MUTANT_EXAMPLES)
    check_algorithm(Hybla)  # the real one keeps its promise
