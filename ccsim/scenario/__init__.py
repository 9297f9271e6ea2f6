"""Scenario: an immutable, validated description of what to simulate.

A scenario is a chain of links that every flow crosses in order, left to
right or, for a reverse flow, right to left (a dumbbell is a chain of one: the
bottleneck), per-flow access delays that give flows different RTTs, the flows
themselves, and the TCP stack's knobs. Every value
is checked when the scenario is built and stored in base units (seconds,
bit/s, bytes, segments), so a scenario round-trips through dict, JSON and
TOML unchanged and has a stable content hash, :attr:`Scenario.key`.

Build one with :func:`dumbbell`, :func:`parking_lot` or :func:`path`; the
dataclasses they return are what the engines read. The parts, bottom up:

* :mod:`.checks`: the field checks every part uses;
* :mod:`.schedule`: rates that change (steps, Mahimahi traces);
* :mod:`.links` (:class:`Link`, :func:`make_queue`) and :mod:`.flows`
  (:class:`Flow`);
* :mod:`.validation`: the checks across a scenario's fields;
* :mod:`.serial`: the dict, JSON and TOML forms and the key;
* :mod:`.topologies`: each builder's arithmetic, from its keywords to the
  scenario's fields;
* :mod:`.core`: :class:`Scenario`;
* :mod:`.builders`: :func:`dumbbell`, :func:`parking_lot`, :func:`path`.
"""

from ..queues import RED, DropTail
from .builders import dumbbell, parking_lot, path
from .core import Scenario
from .flows import Flow, as_flow
from .links import MIN_RATE, QUEUES, Link, make_queue
from .schedule import RateSchedule, cellular_trace, read_mahimahi, write_mahimahi
from .serial import SCHEMA
from .validation import MAX_TRACE_ROWS, TRACE_BYTES_PER_ROW, TRACE_VARIABLES_PER_FLOW

__all__ = ["DropTail", "RED", "Link", "Flow", "Scenario", "dumbbell", "parking_lot", "path",
           "as_flow", "make_queue", "QUEUES", "MIN_RATE", "SCHEMA", "MAX_TRACE_ROWS",
           "TRACE_BYTES_PER_ROW", "TRACE_VARIABLES_PER_FLOW", "RateSchedule", "read_mahimahi",
           "write_mahimahi", "cellular_trace"]
