"""Accuracy beside ns-3: the first flow's share of eight pairs of window
laws with ``stack="ns3"`` (ns-3 3.44's stack around the laws) against the
same dumbbell in ns-3 itself.

The dumbbell: 10 Mbit/s, 20 ms, a 17-packet drop-tail buffer (1 BDP of
1500-byte packets), both flows started at 0, 60 s. Each pair is NewReno
against one class whose ns-3 setting differs from Linux's: per-segment
counting (CUBIC, BIC, Scalable, Illinois, HighSpeed, Hybla), ns-3's
constants (Scalable's AIFactor 50, BIC's SmoothPart 5, Hybla's RRTT 50 ms),
and the smoothed RTT handed to the delay-based laws (Vegas, Westwood+).
ccsim's figure is the mean over seeds 1-3 (its start jitter); ns-3's run is
deterministic.

ns-3 is optional: its part runs under ``--ns3-python`` (an interpreter with
``pip install ns3``, 3.44 from PyPI); without it the script prints ccsim's
shares, the reference figures given with ``--reference`` (JSON
``{"reno+cubic": 0.41, ...}``) if any, and says that ns-3 was not run.
Run from the repository root:

    python benchmarks/ns3_shares.py --ns3-python /path/to/ns3venv/bin/python
    python benchmarks/ns3_shares.py --duration 20s

The ns-3 side (compiled C++ via cppyy, as in ``ns3_side_by_side.py``):
senders -- 10 Gbit/s, 1 us -- router -- 10 Mbit/s, 9.998 ms -- router --
10 Gbit/s, 1 us -- receivers; the bottleneck device's own DropTailQueue of
17 packets with the root queue disc removed; ns-3's default stack (PRR,
SACK, timestamps, DelAckCount 2, MinRto 1 s) with each sender's
``TcpL4Protocol::SocketType`` set to its class; segment size 1448 bytes
(1500-byte IP packets with timestamps, as ccsim's 1460 + 40); socket
buffers of 64 MB; ``BulkSendApplication`` on both senders. A flow's share is
its receiver's bytes over both receivers' bytes.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _ns3 import DUMBBELL_CPP, run_worker  # noqa: E402 — after the path it lives on

PAIRS = (("reno", "cubic"), ("reno", "bic"), ("reno", "scalable"), ("reno", "illinois"),
         ("reno", "highspeed"), ("reno", "hybla"), ("reno", "westwood"), ("reno", "vegas"))
"""ccsim's names of the eight pairs (ccsim's ``reno`` is ns-3's NewReno law)."""

NS3_CLASS = {"reno": "ns3::TcpNewReno", "cubic": "ns3::TcpCubic", "bic": "ns3::TcpBic",
             "scalable": "ns3::TcpScalable", "illinois": "ns3::TcpIllinois",
             "highspeed": "ns3::TcpHighSpeed", "hybla": "ns3::TcpHybla",
             "westwood": "ns3::TcpWestwoodPlus", "vegas": "ns3::TcpVegas"}

TARGET = 0.07  # each pair's flow-1 share within 7 points of ns-3's

_NS3_CPP = DUMBBELL_CPP + r"""
namespace ccsim_shares {
using namespace ns3;

static ApplicationContainer g_sinks;

void Build(double duration, std::string first, std::string second, uint32_t bufferPackets) {
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(1448));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(1 << 26));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(1 << 26));

    ccsim_ns3::Dumbbell d = ccsim_ns3::BuildDumbbell(2, "10Mbps", "9998us", bufferPackets);
    std::string classes[2] = {first, second};
    for (uint32_t i = 0; i < 2; ++i) {
        std::ostringstream path;
        path << "/NodeList/" << d.senders.Get(i)->GetId() << "/$ns3::TcpL4Protocol/SocketType";
        Config::Set(path.str(), TypeIdValue(TypeId::LookupByName(classes[i])));
    }
    ccsim_ns3::StartBulkFlows(d, g_sinks);
    Simulator::Stop(Seconds(duration));
}

std::string Run() {
    Simulator::Run();
    std::ostringstream o;
    o << "[" << DynamicCast<PacketSink>(g_sinks.Get(0))->GetTotalRx() << ", "
      << DynamicCast<PacketSink>(g_sinks.Get(1))->GetTotalRx() << "]";
    Simulator::Destroy();
    return o.str();
}
}  // namespace ccsim_shares
"""

# The worker's body, after _ns3.WORKER_HEAD has imported ns-3 and cppyy.
_NS3_WORKER = r"""
duration, first, second, buffer, source = (float(sys.argv[1]), sys.argv[2], sys.argv[3],
                                           int(sys.argv[4]), sys.argv[5])
cppyy.cppdef(source)
m = cppyy.gbl.ccsim_shares
m.Build(duration, first, second, buffer)
print(json.dumps({"bytes": json.loads(str(m.Run()))}))
"""


def ns3_share(python: str, first: str, second: str, duration: float) -> dict:
    """ns-3's first-flow share of one pair, in a fresh subprocess of ``python``."""
    r = run_worker(python, _NS3_WORKER, repr(duration), NS3_CLASS[first], NS3_CLASS[second],
                   "17", _NS3_CPP)
    if "bytes" in r:
        a, b = r["bytes"]
        r["share"] = a / (a + b)
    return r


def ccsim_shares(duration: float, seeds=(1, 2, 3), stack: str = "ns3") -> dict:
    """ccsim's mean first-flow share per pair (packet engine, ``stack``)."""
    import ccsim

    # hosts behind 10 Gbit/s NICs, as ns-3's dumbbell below
    scenarios = [ccsim.dumbbell("10Mbps", "20ms", buffer=17, flows=list(pair), stack=stack,
                                duration=duration, seed=seed, access="10Gbps")
                 for pair in PAIRS for seed in seeds]
    table = ccsim.sweep(scenarios, workers=1)
    first = table[table.flow == 0]["share"].to_numpy()
    n = len(seeds)
    return {"+".join(pair): float(first[k * n:(k + 1) * n].mean())
            for k, pair in enumerate(PAIRS)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", default=60.0, type=lambda s: float(s.rstrip("s")),
                        help="simulated seconds (default 60)")
    parser.add_argument("--ns3-python", default=None, metavar="PATH",
                        help="an interpreter with ns-3's bindings (default: ns-3 not run)")
    parser.add_argument("--reference", default=None, metavar="JSON",
                        help="ns-3's shares measured before, {\"reno+cubic\": 0.41, ...}")
    parser.add_argument("--stack", default="ns3", help="ccsim's stack (default ns3)")
    args = parser.parse_args()
    print(f"eight pairs, 10 Mbit/s, 20 ms, 17 packets, {args.duration:g} s; ccsim "
          f"stack={args.stack!r}, seeds 1-3; python {platform.python_version()}, "
          f"{os.cpu_count()} CPUs")
    ours = ccsim_shares(args.duration, stack=args.stack)
    reference = json.loads(args.reference) if args.reference else {}
    if args.ns3_python:
        for first, second in PAIRS:
            r = ns3_share(args.ns3_python, first, second, args.duration)
            if "missing" in r:
                print(f"ns-3 not importable with {args.ns3_python} ({r['missing']})")
                break
            reference["+".join((first, second))] = r["share"]
    worst = 0.0
    for name, share in ours.items():
        ref = reference.get(name)
        if ref is None:
            print(f"{name:>16}: ccsim {share:.3f}")
            continue
        gap = share - ref
        worst = max(worst, abs(gap))
        print(f"{name:>16}: ccsim {share:.3f}  ns-3 {ref:.3f}  gap {100 * gap:+.1f} points"
              f"{'' if abs(gap) <= TARGET else '  (beyond 7 points)'}")
    if reference:
        print(f"worst gap {100 * worst:.1f} points (target {100 * TARGET:.0f})")
    else:
        print("no ns-3 figures: pass --ns3-python or --reference to compare")


if __name__ == "__main__":
    main()
