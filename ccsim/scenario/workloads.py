"""Flow arrivals: many sized flows started at Poisson times.

:class:`Arrivals` stands in a builder's ``flows=`` list for a stream of
flows, each of a size drawn from an empirical distribution and started at a
Poisson time. The builder expands it, there and then, into plain
:class:`~ccsim.Flow` objects (``size=`` and ``start=`` set), so that the
scenario stays a value like any other: it round-trips through dict, JSON and
TOML, its key is stable, and both engines run it unchanged. The draws come
from the scenario's seed and the entry's place in ``flows``: same seed, same
flows.

Bundled size distributions (``sizes=``): ``"websearch"``, the web-search
workload of the DCTCP paper (Alizadeh et al., SIGCOMM 2010), and
``"datamining"``, the data-mining workload of the VL2 paper (Greenberg et
al., SIGCOMM 2009), as the points the traffic generators of pFabric, HPCC
and Homa use (files in ``ccsim/scenario/cdfs/``, sources in their headers).
"""

from __future__ import annotations

import math
import numbers
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

import numpy as np

from ..errors import ScenarioError, ScenarioTypeError
from ..units import parse_rate
from .checks import seconds
from .flows import Flow

CDFS = Path(__file__).with_name("cdfs")
"""The folder of the bundled size distributions."""
SIZES = ("websearch", "datamining")
"""Names of the bundled size distributions."""
MAX_LOAD = 1.0
"""Loads must be below this: at a load of 1 or more the flows offer more than
the bottleneck carries, and the backlog of unfinished flows grows without
bound."""
_ARRIVALS = 5  # the arrivals' stream among the scenario seed's (1: the packet
#                engine's send overhead, 2: the start jitter, 3: its ACK jitter)


@dataclass(frozen=True)
class Arrivals:
    """Flows of one algorithm arriving at Poisson times, sizes drawn at random.

    Attributes:
        algorithm: each flow's congestion control (a name or registered class).
        load: offered load, a fraction of the bottleneck's rate in (0, 1):
            flows arrive at ``rate = load · bottleneck rate / (8 · mean size)``
            per second (payload bytes; HPCC's traffic generator's
            definition). Give ``load`` or ``rate``, not both.
        rate: arrivals per second (> 0), instead of ``load``.
        sizes: flow sizes (bytes): ``"websearch"`` or ``"datamining"`` (the
            bundled CDFs), the path of a CDF file (lines ``size probability``,
            or ``size index probability`` as empirical-traffic-gen writes
            them; ``#`` comments; probabilities rising to 1; linear
            interpolation between points), or a frozen
            ``scipy.stats`` distribution (drawn through its ``ppf``). Drawn
            sizes are rounded up to whole bytes.
        start: when arrivals begin (s); ``stop``: when they end (s; default
            the end of the run).
        rtt, recovery, params, ecn: given to every flow, as in
            :class:`~ccsim.Flow`.

    Each flow also opens up to its RTT after its arrival time (the
    scenario's ``start_jitter``): independent delays keep a Poisson stream
    Poisson, and its completion time is counted from that opening.
    """

    algorithm: Any = "reno"
    load: float | None = None
    rate: float | None = None
    sizes: Any = "websearch"
    start: Any = 0.0
    stop: Any = None
    rtt: Any = None
    recovery: str | None = None
    params: Mapping[str, Any] = field(default_factory=dict)
    ecn: bool | None = None

    def __post_init__(self) -> None:
        if (self.load is None) == (self.rate is None):
            raise ScenarioError("arrivals.load", self.load,
                                "exactly one of load= (a fraction of the bottleneck's "
                                "rate) and rate= (flows per second)", f"rate={self.rate!r}")
        if self.load is not None:
            if (not isinstance(self.load, numbers.Real) or isinstance(self.load, bool)
                    or not 0.0 < self.load < MAX_LOAD):
                raise ScenarioError("arrivals.load", self.load,
                                    f"a fraction of the bottleneck's rate, 0 < load < {MAX_LOAD:g}",
                                    "at a load of 1 or more the backlog grows without bound")
        if self.rate is not None:
            if (not isinstance(self.rate, numbers.Real) or isinstance(self.rate, bool)
                    or not (self.rate > 0 and math.isfinite(self.rate))):
                raise ScenarioError("arrivals.rate", self.rate,
                                    "arrivals per second, a finite number > 0")
        self.distribution()  # refuses an unknown name, a bad file or distribution now

    def distribution(self) -> "SizeDistribution":
        """The size distribution that ``sizes`` names."""
        return size_distribution(self.sizes)

    def flows(self, bottleneck_rate: float, duration: float, seed: int,
              index: int) -> list[Flow]:
        """The flows of this entry, at place ``index`` of ``flows``, under a
        bottleneck of ``bottleneck_rate`` (bit/s) in a run of ``duration``
        (s) with ``seed``, in order of arrival."""
        dist = self.distribution()
        start = seconds(self.start, "arrivals.start", positive=False)
        stop = duration if self.stop is None else min(
            seconds(self.stop, "arrivals.stop", positive=True), duration)
        if not stop > start:
            raise ScenarioError("arrivals.stop", self.stop,
                                f"a time after start={start} s and before the end")
        if self.load is not None:
            mean = dist.mean
            if not (math.isfinite(mean) and mean > 0):
                raise ScenarioError("arrivals.sizes", self.sizes,
                                    "a distribution of finite mean with load=",
                                    f"its mean is {mean}: give rate= (flows per second)")
            lam = self.load * bottleneck_rate / (8.0 * mean)
        else:
            lam = float(self.rate)
        times_seq, sizes_seq = np.random.SeedSequence([seed, _ARRIVALS, index]).spawn(2)
        gaps = np.random.Generator(np.random.PCG64(times_seq))
        times: list[float] = []
        t = start
        while True:  # exponential gaps by inversion, in chunks
            u = gaps.random(max(16, int(lam * (stop - t) * 1.2) + 16))
            for g in -np.log1p(-u) / lam:
                t += float(g)
                if t >= stop:
                    break
                times.append(t)
            else:
                continue
            break
        u = np.random.Generator(np.random.PCG64(sizes_seq)).random(len(times))
        sizes = dist.draw(u)
        extra = {"rtt": self.rtt, "recovery": self.recovery, "params": self.params,
                 "ecn": self.ecn}
        return [Flow(self.algorithm, start=t, size=int(s), **extra)
                for t, s in zip(times, sizes)]


@dataclass(frozen=True)
class SizeDistribution:
    """A flow size distribution: ``ppf`` maps uniform draws to sizes (bytes)
    and ``mean`` is its mean (bytes)."""

    ppf: Any
    mean: float

    def draw(self, u: np.ndarray) -> np.ndarray:
        """Sizes (whole bytes ≥ 1) for the uniform draws ``u``."""
        x = np.asarray(self.ppf(u), dtype=float)
        return np.maximum(np.ceil(x), 1.0).astype(np.int64)


def size_distribution(sizes: Any) -> SizeDistribution:
    """The :class:`SizeDistribution` that ``sizes`` names (see :class:`Arrivals`)."""
    if isinstance(sizes, str) and sizes in SIZES:
        return read_cdf(CDFS / f"{sizes}.txt", "arrivals.sizes")
    if isinstance(sizes, (str, os.PathLike)):
        if not Path(sizes).is_file():
            raise ScenarioError("arrivals.sizes", sizes,
                                ", ".join(repr(n) for n in SIZES) + ", the path of a CDF "
                                "file or a frozen scipy.stats distribution")
        return read_cdf(Path(sizes), "arrivals.sizes")
    if hasattr(sizes, "ppf") and hasattr(sizes, "mean") and hasattr(sizes, "dist"):
        lo = float(sizes.ppf(0.0))
        if not lo >= 0.0:
            raise ScenarioError("arrivals.sizes", sizes,
                                "a distribution of sizes ≥ 0 bytes",
                                f"its support starts at {lo}")
        return SizeDistribution(ppf=sizes.ppf, mean=float(sizes.mean()))
    raise ScenarioTypeError("arrivals.sizes", sizes,
                            ", ".join(repr(n) for n in SIZES) + ", the path of a CDF file or "
                            "a frozen scipy.stats distribution")


def read_cdf(path: Path, name: str) -> SizeDistribution:
    """A CDF file (see :class:`Arrivals`) as a :class:`SizeDistribution`:
    linear interpolation between its points, so the mean is each step's
    probability times its midpoint (plus the first point's own mass)."""
    try:
        table = np.loadtxt(path, comments="#", ndmin=2)
    except ValueError as exc:
        raise ScenarioError(name, str(path), "a CDF file: lines 'size probability'",
                            str(exc)) from None
    if table.shape[1] not in (2, 3) or len(table) < 2:
        raise ScenarioError(name, str(path), "a CDF file: two or more lines 'size probability' "
                            "(or 'size index probability')")
    x, p = table[:, 0], table[:, -1]
    if (np.any(np.diff(x) < 0) or np.any(np.diff(p) < 0) or x[0] < 0 or p[0] < 0
            or p[-1] != 1.0):
        raise ScenarioError(name, str(path), "a CDF file: sizes ≥ 0 and probabilities both "
                            "non-decreasing, the last probability 1")
    mean = float(p[0] * x[0] + np.sum(np.diff(p) * (x[:-1] + x[1:]) / 2.0))
    return SizeDistribution(ppf=lambda u: np.interp(u, p, x), mean=mean)


def expand(flows: Iterable[Any], bottleneck_rate: Any, duration: Any, seed: Any) -> list[Any]:
    """``flows`` with each :class:`Arrivals` replaced by its flows (the other
    entries as they are)."""
    flows = list(flows)
    if not any(isinstance(f, Arrivals) for f in flows):
        return flows
    if not isinstance(seed, numbers.Integral) or isinstance(seed, bool):
        raise ScenarioTypeError("seed", seed, "an integer")
    rate = parse_rate(bottleneck_rate, "bandwidth")
    end = seconds(duration, "duration", positive=True)
    out: list[Any] = []
    for i, f in enumerate(flows):
        out.extend(f.flows(rate, end, int(seed), i) if isinstance(f, Arrivals) else [f])
    return out
