"""Links whose rate changes: rate schedules and Mahimahi traces.

A :class:`RateSchedule` is either

* **steps**: a piecewise-constant rate, ``[(0, "10Mbps"), (5, "2Mbps")]``
  (times in s from the start of the run, the first at 0; the last rate holds
  to the end unless ``period`` repeats the steps), or
* **a Mahimahi trace** (:func:`read_mahimahi`; Netravali et al., "Mahimahi:
  Accurate Record-and-Replay for HTTP", USENIX ATC 2015): one line per
  delivery opportunity, its time in whole milliseconds, non-decreasing. An
  opportunity carries ``opportunity`` bytes (1,500: Mahimahi's 1,504 bytes of
  TUN payload are one full-size IP packet and its 4-byte TUN header). The
  trace repeats when it ends, its period the last timestamp, as Mahimahi's
  LinkShell does.

How the packet engine serves a trace (Mahimahi's ``LinkQueue::rationalize``,
src/frontend/link_queue.cc): at each opportunity the head of the queue takes
up to ``opportunity`` bytes; a packet larger than what is left continues at
the next opportunity (packets span opportunities), a packet whose last byte
goes out leaves the link at that opportunity's time, the next queued packet
takes what is left of it, and bytes of an opportunity that no queued packet
uses are lost. A packet arriving at time ``t`` can use opportunities after
``t`` only (Mahimahi burns the opportunities due up to now before it
enqueues). Steps serialise each packet at the rate in force, across changes
(a rate of 0 holds packets until the rate returns).

The fluid engine sees a schedule as its steps; a trace as the mean rate of
its opportunities in windows of :data:`FLUID_WINDOW` (s), a window
without one joined to the next (so that no rate is 0).
"""

from __future__ import annotations

import bisect
import math
import os
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from ..errors import ScenarioError, ScenarioTypeError
from ..units import parse_rate, parse_time

FLUID_WINDOW = 0.01
"""The window (s) over which the fluid engine averages a Mahimahi trace's
delivery opportunities into a piecewise-constant rate."""

OPPORTUNITY = 1500
"""Bytes a Mahimahi delivery opportunity carries by default."""


@dataclass(frozen=True)
class RateSchedule:
    """A link rate that changes over time (see the module's description).

    Attributes:
        times: when each step begins (s), the first 0, increasing.
        rates: each step's rate (bit/s, ≥ 0).
        period: the steps repeat with this period (s), or ``None``: the last
            rate holds for ever.
        opportunities: a Mahimahi trace's delivery opportunities (ms), or
            ``None`` for plain steps (then ``times`` and ``rates`` are exact;
            for a trace they are its :data:`FLUID_WINDOW` means).
        opportunity: bytes per delivery opportunity (traces).
        name: where it came from (a trace's file name), for display.
    """

    times: tuple[float, ...]
    rates: tuple[float, ...]
    period: float | None = None
    opportunities: tuple[int, ...] | None = None
    opportunity: int = OPPORTUNITY
    name: str = ""

    @classmethod
    def steps(cls, steps: Iterable[Any], period: Any = None,
              field: str = "rate") -> "RateSchedule":
        """A piecewise-constant rate from ``(time, rate)`` pairs (s or
        ``"5s"``; bit/s or ``"10Mbps"``): the first at time 0, times
        increasing, rates ≥ 0 and not all 0."""
        if isinstance(steps, (str, bytes)) or not isinstance(steps, Iterable):
            raise ScenarioTypeError(field, steps, "a list of (time, rate) pairs such as "
                                    "[(0, '10Mbps'), (5, '2Mbps')], or ccsim.read_mahimahi(path)")
        times, rates = [], []
        for k, pair in enumerate(steps):
            if isinstance(pair, Mapping):
                pair = (pair.get("time"), pair.get("rate"))
            if isinstance(pair, (str, bytes)) or not isinstance(pair, Iterable) \
                    or len(tuple(pair)) != 2:
                raise ScenarioTypeError(f"{field}[{k}]", pair, "a (time, rate) pair")
            t, r = tuple(pair)
            t = parse_time(t, f"{field}[{k}].time")
            r = parse_rate(r, f"{field}[{k}].rate")
            if not (math.isfinite(t) and t >= 0):
                raise ScenarioError(f"{field}[{k}].time", t, "a finite time ≥ 0 (s)")
            if not (math.isfinite(r) and r >= 0):
                raise ScenarioError(f"{field}[{k}].rate", r,
                                    "a finite rate ≥ 0 bit/s (0: the link is down)")
            if times and t <= times[-1]:
                raise ScenarioError(f"{field}[{k}].time", t,
                                    f"a time after the step before ({times[-1]:g} s): "
                                    "times must increase")
            times.append(float(t))
            rates.append(float(r))
        if not times:
            raise ScenarioError(field, steps, "at least one (time, rate) step")
        if times[0] != 0.0:
            raise ScenarioError(f"{field}[0].time", times[0], "0: the first step starts the run")
        if period is not None:
            period = parse_time(period, f"{field}.period")
            if not (math.isfinite(period) and period > times[-1]):
                raise ScenarioError(f"{field}.period", period,
                                    f"a time after the last step ({times[-1]:g} s), or None")
        if (rates[-1] == 0.0 and period is None) or not any(rates):
            raise ScenarioError(f"{field}[{len(rates) - 1}].rate", rates[-1],
                                "a rate > 0: the link would stay down for ever")
        return cls(tuple(times), tuple(rates), period)

    @classmethod
    def mahimahi(cls, opportunities: Iterable[int], opportunity: int = OPPORTUNITY,
                 name: str = "", field: str = "rate") -> "RateSchedule":
        """A schedule from a Mahimahi trace's opportunity times (ms; see
        :func:`read_mahimahi` to read a file)."""
        ms = tuple(int(x) for x in opportunities)
        where = name or field
        if not ms:
            raise ScenarioError(where, name, "a trace with at least one delivery opportunity")
        for k in range(1, len(ms)):
            if ms[k] < ms[k - 1]:
                raise ScenarioError(f"{where}:{k + 1}", ms[k],
                                    f"a time ≥ the line before ({ms[k - 1]} ms): "
                                    "Mahimahi timestamps are non-decreasing")
        if ms[0] < 0:
            raise ScenarioError(f"{where}:1", ms[0], "a time ≥ 0 ms")
        if ms[-1] <= 0:
            raise ScenarioError(f"{where}:{len(ms)}", ms[-1],
                                "a last time > 0 ms: the trace must last (it repeats "
                                "with the last timestamp as its period)")
        if not (isinstance(opportunity, int) and opportunity > 0):
            raise ScenarioError(f"{field}.opportunity", opportunity, "a whole number of bytes > 0")
        period = ms[-1] / 1000.0
        n = int(math.ceil(period / FLUID_WINDOW - 1e-9))
        counts = [0] * n
        for x in ms:  # an opportunity at the period's end is the next period's start
            counts[int((x % ms[-1]) / 1000.0 / FLUID_WINDOW + 1e-9) % n] += 1
        # a window without an opportunity joins the next (trailing ones, the
        # span before): each span's rate is the mean over its opportunities, never 0
        spans, begin, held = [], 0.0, 0
        for k, c in enumerate(counts):
            held += c
            if held:
                end = min((k + 1) * FLUID_WINDOW, period)
                spans.append([begin, end, held])
                begin, held = end, 0
        spans[-1][1] = period
        times = [b for b, _, _ in spans]
        rates = [c * opportunity * 8.0 / (e - b) for b, e, c in spans]
        return cls(tuple(times), tuple(rates), period, ms, opportunity, name)

    # -- what a run reads ------------------------------------------------------
    @property
    def rate(self) -> float:
        """The nominal rate (bit/s), what a buffer of ``"1BDP"`` and results
        use: a trace's mean over its period; steps' time-weighted mean up to
        the last change (over one period when they repeat), or the one rate."""
        if self.opportunities is not None:
            return len(self.opportunities) * self.opportunity * 8.0 / self.period
        end = self.period if self.period is not None else self.times[-1]
        if end <= 0.0:
            return self.rates[0]
        bounds = list(self.times) + [end]
        return sum(r * (bounds[k + 1] - bounds[k]) for k, r in enumerate(self.rates)
                   if bounds[k] < end) / end

    def rate_at(self, t: float) -> float:
        """The rate in force at time ``t`` (s; bit/s): a trace's window mean."""
        if self.period is not None:
            t = t % self.period
        return self.rates[bisect.bisect_right(self.times, t) - 1]

    def next_change(self, t: float) -> float:
        """The first time after ``t`` at which :meth:`rate_at` may change (s)."""
        if self.period is None:
            k = bisect.bisect_right(self.times, t)
            return self.times[k] if k < len(self.times) else math.inf
        base = math.floor(t / self.period) * self.period
        k = bisect.bisect_right(self.times, t - base)
        return base + (self.times[k] if k < len(self.times) else self.period)

    def capacity(self, t0: float, t1: float) -> float:
        """Bits the link can carry over ``[t0, t1]`` (s): the integral of
        :meth:`rate_at`."""
        bits, t = 0.0, t0
        while t < t1:
            nxt = min(self.next_change(t), t1)
            bits += self.rate_at(t) * (nxt - t)
            t = nxt
        return bits

    def wire(self) -> "OpportunityWire | StepWire":
        """A fresh run-time server of this schedule (the packet engine's)."""
        return OpportunityWire(self) if self.opportunities is not None else StepWire(self)

    # -- as data ---------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """Plain data (JSON, TOML): :meth:`from_dict` is the inverse."""
        if self.opportunities is not None:
            return {"mahimahi": list(self.opportunities), "opportunity": self.opportunity,
                    **({"name": self.name} if self.name else {})}
        return {"steps": [[t, r] for t, r in zip(self.times, self.rates)],
                **({"period": self.period} if self.period is not None else {})}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], field: str = "rate") -> "RateSchedule":
        """The schedule :meth:`to_dict` wrote."""
        data = dict(data)
        if "mahimahi" in data:
            unknown = set(data) - {"mahimahi", "opportunity", "name"}
            if not unknown:
                return cls.mahimahi(data["mahimahi"], data.get("opportunity", OPPORTUNITY),
                                    data.get("name", ""), field)
        elif "steps" in data:
            unknown = set(data) - {"steps", "period"}
            if not unknown:
                return cls.steps(data["steps"], data.get("period"), field)
        else:
            unknown = set(data)
        raise ScenarioTypeError(field, data, "a rate, or a schedule as written by "
                                "RateSchedule.to_dict(): {'steps': ...} or {'mahimahi': ...}")

    def __repr__(self) -> str:
        if self.opportunities is not None:
            return (f"RateSchedule.mahimahi({self.name or '...'!s}: "
                    f"{len(self.opportunities)} opportunities, period {self.period:g} s, "
                    f"mean {self.rate / 1e6:.3g} Mbit/s)")
        return f"RateSchedule.steps({list(zip(self.times, self.rates))!r})"


def as_schedule(value: Any, field: str) -> RateSchedule | None:
    """``value`` as a schedule if it is one (a :class:`RateSchedule`, a list of
    steps, or its dict), else ``None`` (a fixed rate)."""
    if isinstance(value, RateSchedule):
        return value
    if isinstance(value, Mapping):
        return RateSchedule.from_dict(value, field)
    if isinstance(value, (list, tuple)):
        return RateSchedule.steps(value, field=field)
    return None


def read_mahimahi(path: Any, opportunity: int = OPPORTUNITY) -> RateSchedule:
    """Read a Mahimahi trace file (either direction's): one delivery
    opportunity per line, its time in whole milliseconds, non-decreasing.

    Returns a :class:`RateSchedule` for a link's ``rate`` (or a builder's
    ``bandwidth``). A malformed line is refused with the file's name and the
    line's number.
    """
    path = os.fspath(path)
    name = os.path.basename(path)
    ms = []
    try:
        with open(path) as f:
            for k, line in enumerate(f, 1):
                text = line.strip()
                try:
                    value = int(text)
                except ValueError:
                    raise ScenarioError(f"{path}:{k}", text,
                                        "a whole number of milliseconds (one delivery "
                                        "opportunity per line)") from None
                if value < 0:
                    raise ScenarioError(f"{path}:{k}", value, "a time ≥ 0 ms")
                if ms and value < ms[-1]:
                    raise ScenarioError(f"{path}:{k}", value,
                                        f"a time ≥ the line before ({ms[-1]} ms): Mahimahi "
                                        "timestamps are non-decreasing")
                ms.append(value)
    except OSError as exc:
        raise ScenarioError("path", path, "a readable Mahimahi trace file",
                            exc.strerror) from None
    return RateSchedule.mahimahi(ms, opportunity, name, field=path)


def write_mahimahi(path: Any, opportunities: Iterable[int]) -> None:
    """Write opportunity times (ms) as a Mahimahi trace file."""
    with open(os.fspath(path), "w") as f:
        f.writelines(f"{int(x)}\n" for x in opportunities)


class OpportunityWire:
    """A Mahimahi trace served packet by packet (the module's description).

    ``send(t, size)``: a packet of ``size`` bytes joins the queue at ``t``
    (s; non-decreasing over calls); returns when its last byte goes out (s).
    """

    __slots__ = ("ms", "times", "period", "size", "n", "left", "last")

    def __init__(self, schedule: RateSchedule) -> None:
        self.ms = schedule.opportunities
        self.times = [x / 1000.0 for x in self.ms]  # within one period (s)
        self.period = schedule.period
        self.size = schedule.opportunity
        self.n = -1          # the last opportunity used, counted from the start of the run
        self.left = 0        # bytes of it not used yet
        self.last = -math.inf  # its time (s)

    def time(self, n: int) -> float:
        """When opportunity ``n`` (counted from the start of the run) comes (s)."""
        p, i = divmod(n, len(self.ms))
        return (self.ms[i] + p * self.ms[-1]) / 1000.0  # whole ms, then one rounding

    def send(self, t: float, size: int) -> float:
        if t < self.last:  # queued when the last opportunity used came: it takes what is left
            if size <= self.left:
                self.left -= size
                return self.last
            size -= self.left
            n = self.n + 1
        else:  # the queue emptied: what was left is lost; the first opportunity after t
            p = math.floor(t / self.period)
            n = p * len(self.times) + bisect.bisect_right(self.times, t - p * self.period)
            # the times as time(n) computes them decide (t - p·period rounds)
            while n > self.n + 1 and self.time(n - 1) > t:
                n -= 1
            while self.time(n) <= t:
                n += 1
            if n <= self.n:
                n = self.n + 1
        k = -(-size // self.size)  # opportunities the rest needs
        self.n = n = n + k - 1
        self.left = k * self.size - size
        self.last = done = self.time(n)
        return done


class StepWire:
    """Steps served packet by packet: each packet serialised at the rate in
    force, across changes, after the one before it."""

    __slots__ = ("schedule", "free_at")

    def __init__(self, schedule: RateSchedule) -> None:
        self.schedule = schedule
        self.free_at = 0.0

    def send(self, t: float, size: int) -> float:
        s = self.schedule
        start = self.free_at if self.free_at > t else t
        bits = size * 8.0
        while True:
            rate, nxt = s.rate_at(start), s.next_change(start)
            if rate > 0.0:
                done = start + bits / rate
                if done <= nxt:
                    break
                bits -= rate * (nxt - start)
            start = nxt
        self.free_at = done
        return done


def cellular_trace(duration: Any = "30s", mean: Any = "10Mbps", *, volatility: float = 0.5,
                   reversion: Any = "1s", seed: int = 0,
                   opportunity: int = OPPORTUNITY) -> RateSchedule:
    """A synthetic cellular-like Mahimahi trace, generated here (not a
    measured one): Sprout's model of a cellular link (Winstein, Sivaraman &
    Balakrishnan, NSDI 2013), deliveries a Poisson process whose rate wanders.

    Each millisecond the log of the rate takes a step of an Ornstein-Uhlenbeck
    process around ``log(mean)`` (``volatility``: its stationary standard
    deviation, in natural-log units; ``reversion``: its correlation time), and
    the millisecond gets a Poisson number of ``opportunity``-byte delivery
    opportunities at that rate. Same arguments, same trace (numpy's PCG64
    from ``seed``).

    Args:
        duration: length of the trace (s or ``"30s"``); it repeats after.
        mean: the expected rate (bit/s or ``"10Mbps"``); one trace's mean
            differs from it by its own excursions.
        volatility: spread of the log rate (≥ 0; 0 is a Poisson link of
            constant rate).
        reversion: how long the rate's excursions last (s).
        seed: the generator's seed.
    """
    import numpy as np

    length = parse_time(duration, "duration")
    rate = parse_rate(mean, "mean")
    tau = parse_time(reversion, "reversion")
    if not (math.isfinite(length) and length >= 0.002):
        raise ScenarioError("duration", duration, "a time ≥ 2 ms, such as '30s'")
    if not (math.isfinite(rate) and rate > 0):
        raise ScenarioError("mean", mean, "a rate > 0, such as '10Mbps'")
    if isinstance(volatility, bool) or not (isinstance(volatility, (int, float))
                                            and math.isfinite(volatility) and volatility >= 0):
        raise ScenarioError("volatility", volatility, "a number ≥ 0 (natural-log units)")
    if not (math.isfinite(tau) and tau > 0):
        raise ScenarioError("reversion", reversion, "a time > 0, such as '1s'")
    n = int(round(length * 1000.0))
    rng = np.random.default_rng(seed)
    a = math.exp(-0.001 / tau)  # the walk's memory per millisecond
    steps = rng.standard_normal(n) * volatility * math.sqrt(1.0 - a * a)
    x = np.empty(n)
    level = rng.standard_normal() * volatility
    for k in range(n):  # an AR(1) recursion: the exact OU step at 1 ms
        level = a * level + steps[k]
        x[k] = level
    # exp(x) is log-normal, its mean exp(volatility² / 2): scaled to 1
    per_ms = rate / (8.0 * opportunity * 1000.0) * np.exp(x - volatility * volatility / 2.0)
    counts = rng.poisson(per_ms)
    counts[-1] = max(int(counts[-1]), 1)  # the last millisecond closes the period
    ms = np.repeat(np.arange(1, n + 1), counts)
    return RateSchedule.mahimahi(ms.tolist(), opportunity, f"cellular(seed={seed})")
