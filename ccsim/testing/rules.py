"""The common rules every window law must keep, checked after every step.

Each is a pure function ``(algo, before, event, after) -> str | None``:
``before`` and ``after`` are :func:`~ccsim.testing.model.snapshot` copies of
the algorithm's state around one step, ``event`` the step's ``Ack``,
``AckRound``, ``Loss``, ``RttSample`` or ``EcnEcho``, ``algo`` the instance (for its class
declarations). A rule returns a message when broken. ``COMMON`` maps each
rule's name to it; ``check_algorithm(..., skip=(name,))`` leaves one out where
an algorithm documents why it does not apply (BBR has no loss response).

After a fast loss the kit models Reno recovery ending (``cwnd = ssthresh``,
what :mod:`ccsim.recovery.reno` does on the first new ACK), so ``after`` of a
fast-loss step is the state at the end of recovery.
"""

from __future__ import annotations

import math

from ..algorithms.base import Ack, Loss
from .model import AckRound, declared

__all__ = ["COMMON"]

_TOL = 1e-9


def cwnd_finite(algo, before, event, after):
    """``cwnd`` is a finite positive number; ``ssthresh`` is not NaN."""
    cwnd, ssthresh = after["cwnd"], after["ssthresh"]
    if not (isinstance(cwnd, (int, float)) and math.isfinite(cwnd) and cwnd > 0):
        return f"cwnd is {cwnd!r}, not a finite positive number of segments"
    if not isinstance(ssthresh, (int, float)) or math.isnan(ssthresh) or ssthresh <= 0:
        return f"ssthresh is {ssthresh!r}, not a positive number (inf before the first loss)"
    return None


def cwnd_floor(algo, before, event, after):
    """``cwnd ≥ min_cwnd``, the algorithm's declared floor."""
    floor = type(algo).min_cwnd
    if after["cwnd"] < floor - _TOL:
        return f"cwnd {after['cwnd']!r} fell below the floor min_cwnd = {floor!r}"
    return None


def ssthresh_after_loss(algo, before, event, after):
    """After a loss ``ssthresh`` is finite and at least 2 segments (RFC 5681 eq. 4)."""
    if isinstance(event, Loss):
        s = after["ssthresh"]
        if not math.isfinite(s) or s < 2.0 - _TOL:
            return f"after a {event.kind} loss ssthresh is {s!r}; it must be finite and ≥ 2"
    return None


def growth_per_rtt(algo, before, event, after):
    """In congestion avoidance ``cwnd`` grows by at most the declared
    ``max_growth_per_rtt(cwnd)`` over one RTT of ACKs (default: doubling)."""
    if isinstance(event, AckRound) and before["cwnd"] >= before["ssthresh"]:
        limit = declared(type(algo), "max_growth_per_rtt")(algo, before["cwnd"])
        grew = after["cwnd"] - before["cwnd"]
        if grew > limit + _TOL * max(1.0, before["cwnd"]):
            return (f"congestion avoidance: cwnd grew {grew!r} segments in one RTT of "
                    f"{len(event.acks)} ACKs (from {before['cwnd']!r} to {after['cwnd']!r}); "
                    f"max_growth_per_rtt({before['cwnd']!r}) = {limit!r}")
    return None


def slow_start_step(algo, before, event, after):
    """In slow start no ACK grows ``cwnd`` by more than the declared
    ``max_slow_start_step(ack)`` (default: the segments it acknowledges).
    A step that ends above ``ssthresh`` is partly congestion avoidance, which
    "growth per RTT" checks, and is left out."""
    acks = event.acks if isinstance(event, AckRound) else (event,) if isinstance(event, Ack) else ()
    if acks and before["cwnd"] < before["ssthresh"] and after["cwnd"] <= before["ssthresh"]:
        step = declared(type(algo), "max_slow_start_step")
        limit = sum(step(algo, a) for a in acks)
        grew = after["cwnd"] - before["cwnd"]
        if grew > limit + _TOL * max(1.0, before["cwnd"]):
            return (f"slow start: {len(acks)} ACK(s) of {sum(a.acked for a in acks)!r} "
                    f"segments grew cwnd by {grew!r} (from {before['cwnd']!r}); the declared "
                    f"max_slow_start_step allows {limit!r}")
    return None


def loss_no_increase(algo, before, event, after):
    """A loss (with its recovery) never increases ``cwnd``."""
    if isinstance(event, Loss) and after["cwnd"] > before["cwnd"] + _TOL * max(1.0, before["cwnd"]):
        return f"a {event.kind} loss raised cwnd from {before['cwnd']!r} to {after['cwnd']!r}"
    return None


def timeout_loss_window(algo, before, event, after):
    """A retransmission timeout brings ``cwnd`` to ``loss_window`` (RFC 5681 §3.1)."""
    if isinstance(event, Loss) and event.kind == "timeout":
        lw = type(algo).loss_window
        if not math.isclose(after["cwnd"], lw, rel_tol=_TOL, abs_tol=_TOL):
            return f"after a timeout cwnd is {after['cwnd']!r}, not loss_window = {lw!r}"
    return None


#: name → rule; the names are what ``skip=`` takes and what failures report.
COMMON = {
    "cwnd finite": cwnd_finite,
    "cwnd floor": cwnd_floor,
    "ssthresh after loss": ssthresh_after_loss,
    "growth per RTT": growth_per_rtt,
    "slow-start step": slow_start_step,
    "loss does not increase cwnd": loss_no_increase,
    "timeout to loss window": timeout_loss_window,
}
#: Rules checked by the machine itself, not by functions above: the hooks raise
#: nothing, and ``ssthresh_after`` is pure (changes no state).
BUILTIN = ("hooks do not raise", "ssthresh_after is pure")
