"""ccsim's packet engine beside ns-3's C++ on the benchmark dumbbell: two
Reno (NewReno) flows, 100 Mbit/s, 20 ms, 1-BDP drop-tail (167 packets of
1500 bytes), 60 s simulated (about 500,000 data packets).

Optional: ns-3 is not a dependency of ccsim. Its part runs under the
interpreter given by ``--ns3-python`` (default: this one), which needs
ns-3's Python bindings (``pip install ns3``, 3.44 from PyPI: cppyy); if
``from ns import ns`` fails there, the script says so and exits 0 without
measuring. Run from the repository root:

    python benchmarks/ns3_side_by_side.py --ns3-python /path/to/venv/bin/python
    python benchmarks/ns3_side_by_side.py --ns3-python ... --duration 20s --rounds 5

Every measurement runs in a fresh subprocess, as in ``packet_engine.py``; the
rounds alternate ns-3 and ccsim (ns-3, ccsim, ns-3, ...) and the figures are
medians. Only the simulation is timed, CPU (``time.process_time``) and wall:
ccsim's ``PacketEngine(sc).run()``, ns-3's ``Simulator::Run()``. Not timed:
imports, cppyy's start-up (about 9 s) and JIT compile of the scenario, the
scenario's construction. The figure is data packets per CPU-second (and per
wall-second) and their ratio, ccsim over ns-3.

The ns-3 scenario is compiled C++ (``cppyy.cppdef``), not driven from Python
per event:

- senders -- 10 Gbit/s, 1 us -- router -- 100 Mbit/s, 9.998 ms -- router --
  10 Gbit/s, 1 us -- receivers (PointToPoint links): a base RTT of 20 ms;
- TCP: ``ns3::TcpNewReno``, otherwise ns-3's default stack (PRR recovery,
  SACK, timestamps, window scaling, initial window 10, delayed ACKs every
  second segment, as ccsim's default Linux stack does: ``--ns3-del-ack-count
  1`` acknowledges every segment). Segment size 1448 bytes: with the 12-byte timestamp
  option that is 1500-byte IP packets, as ccsim's 1460-byte MSS + 40-byte
  header (plus PPP's 2 bytes on ns-3's links). Socket buffers of 64 MB, so
  neither flow is window-limited (ccsim's ``rwnd`` is unlimited);
- the buffer: the bottleneck device's own ``DropTailQueue`` of 167 packets,
  with the traffic-control layer's root queue disc *removed* on that device
  (``TrafficControlHelper::Uninstall``), so no FqCoDel in front of it. The
  device then stops its transmit queue when it holds 167 packets and the
  traffic-control layer drops what arrives meanwhile (its ``TcDrop`` trace),
  so at most 167 packets wait plus the one being sent, as in ccsim's
  drop-tail. The run reports the queue's largest backlog (its
  ``PacketsInQueue`` trace) to check it;
- ``BulkSendApplication`` (unlimited, 1448-byte writes) on both senders,
  ``PacketSink`` on the receivers, both started at 0.

ns-3's data packets are counted on the senders' access devices (``MacTx``,
packets above 500 bytes: SYN, FIN and pure ACKs are below), so they include
retransmissions and packets later dropped at the bottleneck, like ccsim's
``res.metrics["data_packets"]``. Before the figures the script prints both
runs' data packets, the bottleneck's utilisation (frames sent on it over its
capacity) and the total goodput, and warns if ns-3's run looks wrong
(utilisation below 0.95 or goodput below 90 % of the link).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _ns3 import DUMBBELL_CPP, run_worker  # noqa: E402 — after the path it lives on

HERE = Path(__file__).resolve().parents[1]

# Runs inside a subprocess with ccsim: one run, one JSON line out.
_CCSIM_WORKER = r"""
import json, resource, sys, time
import ccsim
from ccsim.packet import PacketEngine

sc = ccsim.dumbbell(**json.loads(sys.argv[1]))
wall0, cpu0 = time.perf_counter(), time.process_time()
res = PacketEngine(sc).run()
wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
print(json.dumps({"wall": wall, "cpu": cpu, "packets": int(res.metrics["data_packets"]),
                  "utilisation": float(res.metrics["utilisation"]),
                  "goodput": float(res.summary["goodput_bps"].sum()),
                  "drops": int(res.metrics["drops"]),
                  "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""

# The ns-3 scenario in C++, compiled by cppyy's JIT (cling) in the subprocess.
_NS3_CPP = DUMBBELL_CPP + r"""
namespace ccsim_bench {
using namespace ns3;

static uint64_t g_data = 0, g_bneckFrames = 0, g_bneckBytes = 0, g_queueDrops = 0, g_tcDrops = 0;
static uint32_t g_queueMax = 0;
static double g_duration = 0;
static ApplicationContainer g_sinks;

static void OnSenderTx(Ptr<const Packet> p) { if (p->GetSize() > 500) ++g_data; }
static void OnBottleneckTx(Ptr<const Packet> p) { ++g_bneckFrames; g_bneckBytes += p->GetSize(); }
static void OnBacklog(uint32_t, uint32_t n) { if (n > g_queueMax) g_queueMax = n; }
static void OnQueueDrop(Ptr<const Packet>) { ++g_queueDrops; }
static void OnTcDrop(Ptr<const Packet>) { ++g_tcDrops; }

void Build(double duration, uint32_t delAckCount, uint32_t bufferPackets) {
    g_duration = duration;
    Config::SetDefault("ns3::TcpL4Protocol::SocketType", StringValue("ns3::TcpNewReno"));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(1448));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(1 << 26));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(1 << 26));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(delAckCount));

    ccsim_ns3::Dumbbell d = ccsim_ns3::BuildDumbbell(2, "100Mbps", "9998us", bufferPackets);
    for (uint32_t i = 0; i < 2; ++i)
        d.senderLinks[i].Get(0)->TraceConnectWithoutContext("MacTx", MakeCallback(&OnSenderTx));
    d.bottleneck.Get(0)->TraceConnectWithoutContext("PhyTxBegin", MakeCallback(&OnBottleneckTx));
    Ptr<QueueBase> queue = DynamicCast<PointToPointNetDevice>(d.bottleneck.Get(0))->GetQueue();
    queue->TraceConnectWithoutContext("PacketsInQueue", MakeCallback(&OnBacklog));
    queue->TraceConnectWithoutContext("Drop", MakeCallback(&OnQueueDrop));
    d.routers.Get(0)->GetObject<TrafficControlLayer>()->TraceConnectWithoutContext(
        "TcDrop", MakeCallback(&OnTcDrop));

    ccsim_ns3::StartBulkFlows(d, g_sinks);
    Simulator::Stop(Seconds(duration));
}

void Run() { Simulator::Run(); }

std::string Stats() {
    uint64_t received = 0;
    for (uint32_t i = 0; i < g_sinks.GetN(); ++i)
        received += DynamicCast<PacketSink>(g_sinks.Get(i))->GetTotalRx();
    std::ostringstream o;
    o << "{\"packets\": " << g_data << ", \"bottleneck_frames\": " << g_bneckFrames
      << ", \"utilisation\": " << g_bneckBytes * 8.0 / (100e6 * g_duration)
      << ", \"goodput\": " << received * 8.0 / g_duration
      << ", \"drops\": " << g_queueDrops + g_tcDrops << ", \"queue_drops\": " << g_queueDrops
      << ", \"queue_max\": " << g_queueMax << "}";
    return o.str();
}
}  // namespace ccsim_bench
"""

# Runs inside a subprocess with ns-3's bindings, after _ns3.WORKER_HEAD: one run,
# one JSON line out.
_NS3_WORKER = r"""
import resource, time
duration, del_ack, buffer, source = float(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
cppyy.cppdef(source)
bench = cppyy.gbl.ccsim_bench
bench.Build(duration, del_ack, buffer)
run = bench.Run  # cppyy's wrapper made before the clock starts
wall0, cpu0 = time.perf_counter(), time.process_time()
run()
wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
out = json.loads(str(bench.Stats()))
out.update(wall=wall, cpu=cpu, rss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
print(json.dumps(out))
"""

BUFFER = 167  # 1 BDP: 100 Mbit/s x 20 ms / 1500 bytes, as ccsim's "1BDP"


def seconds(text: str) -> float:
    """``"60s"``, ``"500ms"``, ``"2min"`` or a number of seconds."""
    m = re.fullmatch(r"\s*([0-9.]+(?:e[-+]?\d+)?)\s*(s|ms|min)?\s*", text)
    if m is None:
        raise argparse.ArgumentTypeError(f"not a duration: {text!r}")
    return float(m.group(1)) * {"s": 1.0, None: 1.0, "ms": 1e-3, "min": 60.0}[m.group(2)]


def measure_ccsim(duration: float) -> dict:
    """One ccsim run of the dumbbell, in a subprocess importing this tree's ccsim."""
    spec = json.dumps({"bandwidth": "100Mbps", "rtt": "20ms", "buffer": "1BDP",
                       "flows": ["reno", "reno"], "duration": duration, "seed": 1})
    env = dict(os.environ, PYTHONPATH=str(HERE))
    out = subprocess.run([sys.executable, "-c", _CCSIM_WORKER, spec],
                         env=env, cwd=HERE, check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def measure_ns3(python: str, duration: float, del_ack: int) -> dict:
    """One ns-3 run of the dumbbell, in a subprocess of ``python``; ``{"missing":
    why}`` if ns-3's bindings do not import there."""
    return run_worker(python, _NS3_WORKER, repr(duration), str(del_ack), str(BUFFER), _NS3_CPP)


def sanity(label: str, r: dict) -> str:
    extra = (f", largest backlog {r['queue_max']} packets ({r['queue_drops']} of the drops "
             f"by the device queue, the rest by the traffic-control layer)"
             if "queue_max" in r else "")
    return (f"{label:>6}: {r['packets']:,} data packets, utilisation {r['utilisation']:.4f}, "
            f"goodput {r['goodput'] / 1e6:.2f} Mbit/s in total, {r['drops']:,} drops{extra}")


def describe(label: str, runs: list[dict]) -> tuple[str, float, float]:
    cpu = statistics.median(r["cpu"] for r in runs)
    wall = statistics.median(r["wall"] for r in runs)
    packets = statistics.median(r["packets"] for r in runs)
    line = (f"{label:>6}: median CPU {cpu:6.2f} s, wall {wall:6.2f} s, "
            f"{packets / cpu:9,.0f} data packets per CPU-second, "
            f"{packets / wall:9,.0f} per wall-second, "
            f"peak {max(r['rss_mb'] for r in runs):.0f} MB")
    return line, packets / cpu, packets / wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds (median)")
    parser.add_argument("--duration", default="60s", type=seconds,
                        help="simulated time (default 60s)")
    parser.add_argument("--ns3-python", default=sys.executable, metavar="PATH",
                        help="an interpreter with ns-3's bindings (default: this one)")
    parser.add_argument("--ns3-del-ack-count", type=int, default=2, metavar="N",
                        help="ns-3's TcpSocket::DelAckCount (default 2, ns-3's own, as "
                             "ccsim's Linux stack delays ACKs; 1 acknowledges every segment)")
    args = parser.parse_args()
    runs: dict[str, list[dict]] = {"ns-3": [], "ccsim": []}
    for i in range(args.rounds):
        r = measure_ns3(args.ns3_python, args.duration, args.ns3_del_ack_count)
        if "missing" in r:  # only the first round can get here
            print(f"ns-3 not importable with {args.ns3_python} ({r['missing']}): "
                  "'pip install ns3' in a venv and pass --ns3-python PATH; nothing measured")
            return
        runs["ns-3"].append(r)
        runs["ccsim"].append(measure_ccsim(args.duration))
        if i == 0:  # is the ns-3 run the same scenario? (every run is deterministic)
            print(f"two reno flows, 100 Mbit/s, 20 ms, 1 BDP ({BUFFER} packets), "
                  f"{args.duration:g} s; "
                  f"python {platform.python_version()} on {platform.machine()}, "
                  f"{os.cpu_count()} CPUs, {args.rounds} interleaved rounds, "
                  f"ns-3 DelAckCount {args.ns3_del_ack_count}")
            for name in ("ns-3", "ccsim"):
                print(sanity(name, runs[name][0]))
            r = runs["ns-3"][0]
            if r["utilisation"] < 0.95 or r["goodput"] < 0.9 * 100e6:
                print("WARNING: ns-3's bottleneck is not kept busy: the scenario is not "
                      "the benchmark's, the figures below compare unlike runs")
            sys.stdout.flush()
    rates = {}
    for name in runs:
        line, per_cpu, per_wall = describe(name, runs[name])
        rates[name] = per_cpu, per_wall
        print(line)
    print(f"ccsim / ns-3, data packets per CPU-second (medians): "
          f"{rates['ccsim'][0] / rates['ns-3'][0]:.2f}x; per wall-second: "
          f"{rates['ccsim'][1] / rates['ns-3'][1]:.2f}x")


if __name__ == "__main__":
    main()
