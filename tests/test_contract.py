"""The law/engine contract (ccsim.algorithms.contract) is the one the three
routes follow: the packet sender, the fluid engine's hook route and the
testing kit each drive every hook it lists, with the event type it names."""

from __future__ import annotations

import collections
import inspect
import math

import pytest

import ccsim
from ccsim.algorithms import CongestionControl, contract, get
from ccsim.algorithms.base import Ack, EcnEcho, Loss, RecoveryState, RttSample


def test_every_hook_of_the_window_law_is_in_the_contract():
    # a hook added to CongestionControl without a row in the contract fails here
    hooks = {name for name, _ in inspect.getmembers(CongestionControl, inspect.isfunction)
             if name.startswith("on_")} | {"start"}
    assert hooks == set(contract.HOOKS)
    for name, hook in contract.HOOKS.items():
        assert hook.name == name
        params = list(inspect.signature(getattr(CongestionControl, name)).parameters)
        assert params == (["self", "initial_window", "mss"] if hook.event is None
                          else ["self", params[1]]), name
        for route in ("packet", "fluid", "testing", "may_change"):
            assert getattr(hook, route).strip(), (name, route)
    assert contract.EVENTS == {n: h.event for n, h in contract.HOOKS.items() if h.event}
    declared = set(CongestionControl.__annotations__) | set(vars(CongestionControl))
    assert set(contract.READ_BACK) | set(contract.DECLARATIONS) <= declared
    # the module's documentation is generated from the table, hook by hook
    for name, hook in contract.HOOKS.items():
        assert f"``{name}``" in contract.__doc__ and hook.packet in contract.__doc__


def test_the_events_keep_their_names_and_field_order():
    # the packet sender builds them positionally (tuple.__new__): names and
    # order are part of the contract
    assert Ack._fields == ("now", "acked", "rtt", "min_rtt", "srtt", "inflight", "delivered",
                           "delivery_rate", "tx_in_flight", "sample_delivered")
    # the rate sample's two counts came last, with defaults: Acks built with the
    # first eight fields still build, and say the counts were not sampled
    ack = Ack(1.0, 1.0, 0.1, 0.1, 0.1, 9.0, 10.0, 1e6)
    assert ack.tx_in_flight is contract.NOT_SAMPLED and ack.sample_delivered is contract.NOT_SAMPLED
    assert Loss._fields == ("now", "kind", "inflight", "min_rtt", "srtt")
    assert RecoveryState._fields == ("now", "state", "pipe", "inflight", "delivered", "acked",
                                     "lost", "change")
    assert RttSample._fields == ("now", "rtt", "min_rtt", "srtt", "inflight")
    assert EcnEcho._fields == ("now", "marked", "marked_total", "delivered", "inflight",
                               "min_rtt", "srtt")
    assert (ccsim.algorithms.Ack, ccsim.algorithms.base.Ack) == (contract.Ack, contract.Ack)


def test_event_builds_a_hooks_event_by_name():
    loss = contract.event("on_loss", now=1.0, kind="timeout", inflight=4.0, min_rtt=0.1,
                          srtt=0.12)
    assert type(loss) is Loss and loss == Loss(1.0, "timeout", 4.0, 0.1, 0.12)
    with pytest.raises(TypeError):
        contract.event("on_loss", now=1.0, kind="fast", inflight=4.0, min_rtt=0.1)  # srtt missing
    with pytest.raises(TypeError):
        contract.event("on_rtt", now=1.0, rtt=0.1, min_rtt=0.1, srtt=0.1, inflight=1.0, rto=1.0)
    with pytest.raises(KeyError):
        contract.event("start", initial_window=10, mss=1460)


def _recording(seen: collections.Counter) -> type:
    """Reno, with every hook of the contract noting its name, its argument's
    type and (for losses) the kind."""
    reno = get("reno")

    def noting(name):
        def hook(self, *args):
            arg = args[0] if name != "start" else None
            seen[name, type(arg), getattr(arg, "kind", None)] += 1
            return getattr(reno, name)(self, *args)
        return hook

    return type("Recording", (reno,), {"name": "test-recording", "ecn": True,
                                       **{name: noting(name) for name in contract.HOOKS}})


def _wanted() -> set:
    want = {(name, hook.event or type(None), None) for name, hook in contract.HOOKS.items()}
    want.discard(("on_loss", Loss, None))
    return want | {("on_loss", Loss, "fast"), ("on_loss", Loss, "timeout")}


@pytest.mark.parametrize("mode", ["packet", "fluid"])
def test_both_engines_drive_every_hook_with_the_contracts_events(mode, scratch_registry):
    # ECN flows behind RED that marks, with random loss for fast losses and
    # timeouts: every hook, each with its event type; in the fluid engine the
    # class has no fluid law, so this is the hook route (HookLaw). One flow runs
    # the stack's recovery (PRR), the other classic Reno's, whose losses in
    # one window end in timeouts within the run.
    seen: collections.Counter = collections.Counter()
    cls = ccsim.algorithms.register(_recording(seen))
    assert vars(cls).get("fluid") is None
    sc = ccsim.dumbbell("10Mbps", "20ms", queue=ccsim.RED(limit=25, ecn=True), buffer=None,
                        loss=0.003,
                        flows=["test-recording", ccsim.Flow("test-recording", recovery="reno")],
                        duration="10s", seed=1)
    ccsim.run(sc, mode)
    want = _wanted()
    if mode == "fluid":  # the contract: the fluid engine has no per-ACK recovery state to tell
        want.discard(("on_recovery", RecoveryState, None))
    assert set(seen) == want, sorted(set(seen) ^ want, key=repr)


def test_the_testing_kit_drives_every_hook_with_the_contracts_events():
    from ccsim.testing import check_algorithm

    seen: collections.Counter = collections.Counter()
    check_algorithm(_recording(seen), max_examples=40)
    assert set(seen) == _wanted(), sorted(set(seen) ^ _wanted(), key=repr)


def test_the_kits_echoes_follow_the_contract_once_per_window():
    # on_ecn at most once per window of data: never twice before the data
    # outstanding at the reduction is delivered
    from ccsim.testing import check_algorithm

    reductions: list = []  # this example's: delivered count that ends each reduction's window
    total = [0]

    class Strict(get("reno")):
        def on_ecn(self, echo):
            if reductions and echo.delivered < reductions[-1]:
                raise AssertionError(f"a second reduction at delivered={echo.delivered}")
            reductions.append(echo.delivered + echo.inflight)
            total[0] += 1
            super().on_ecn(echo)

        def start(self, initial_window, mss):
            reductions.clear()
            super().start(initial_window, mss)

    check_algorithm(Strict, max_examples=40)
    assert total[0] > 0 and all(math.isfinite(r) for r in reductions)
