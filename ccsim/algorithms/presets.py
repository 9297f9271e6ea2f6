"""Presets: the names the literature gives Reno's window law with another
loss recovery.

Each is Reno's window law (RFC 5681 §3.1, :mod:`ccsim.algorithms.reno`)
with the recovery strategy of the same name; asking for a preset with a
different recovery (``Flow("sack", recovery="newreno")``) is refused, since
it names two recoveries. Any other law takes these recoveries with
``Flow("cubic", recovery="sack")``.

==============  ==========================================================
name            recovery and its source
==============  ==========================================================
``tahoe``       :mod:`ccsim.recovery.tahoe`: V. Jacobson, "Congestion
                Avoidance and Control", SIGCOMM 1988 — on the third
                duplicate ACK, retransmit, ``ssthresh = max(FlightSize/2,
                2)``, ``cwnd = 1`` and slow start from the first
                unacknowledged segment (go-back-N).
``newreno``     :mod:`ccsim.recovery.newreno`: RFC 6582 (Henderson, Floyd,
                Gurtov, Nishida, 2012; after Hoe, SIGCOMM 1996, and Fall &
                Floyd, CCR 1996) — a partial ACK resends the next hole and
                keeps the sender in fast recovery.
``sack``        :mod:`ccsim.recovery.sack`: RFC 2018's option with RFC 6675's
                recovery — "Reno with SACK" in Fall & Floyd (CCR 1996) and
                Lai & Yao.
``fack``        :mod:`ccsim.recovery.fack`: Mathis & Mahdavi, "Forward
                Acknowledgement: Refining TCP Congestion Control", SIGCOMM
                1996.
``rate-halving`` :mod:`ccsim.recovery.rate_halving`: Mathis, Semke, Mahdavi &
                Lahey, draft-mathis-tcp-ratehalving-00 (1999), over SACK.
==============  ==========================================================

SSDR is not a preset: its smooth-start is a window law of its own
(:mod:`ccsim.algorithms.ssdr`).

Differences from the source: those of :mod:`ccsim.algorithms.reno` and of
each recovery module. Jacobson's 1988 code set Tahoe's ``ssthresh`` from
``min(cwnd, rwnd) / 2``, as ns-2's ``TcpAgent::slowdown`` (``window()``) and
the Linux and ns-2 stacks (``Scenario.loss_flight="cwnd"``) do; with
``loss_flight="flight"`` RFC 5681's FlightSize is halved instead.
"""

from __future__ import annotations

from .registry import register
from .reno import Reno, RenoFluid

PRESETS = {
    "tahoe": "Reno's window law with Tahoe's recovery (slow start after every loss).",
    "newreno": "Reno's window law with NewReno recovery (RFC 6582).",
    "sack": "Reno's window law with SACK recovery (RFC 6675).",
    "fack": "Reno's window law with FACK recovery (Mathis & Mahdavi 1996).",
    "rate-halving": "Reno's window law with Rate-Halving recovery (Mathis et al. 1999).",
}
"""Preset name (its recovery's too) → one-line description."""


def _preset(name: str, doc: str) -> type[Reno]:
    """Reno under ``name``, with the recovery of that name as its own."""
    cls = type("".join(p.capitalize() for p in name.split("-")), (Reno,),
               {"name": name, "recovery": name, "preset": True, "fluid": RenoFluid,
                "__doc__": doc, "__module__": __name__})
    return register(cls)


for _name, _doc in PRESETS.items():
    _cls = _preset(_name, _doc)
    globals()[_cls.__name__] = _cls
