"""Vegas flows opened at one instant, beside ns-3: the bottleneck queue and
the fastest/slowest rate of N Vegas flows started together on one path
(10 Mbit/s, 50 ms, a 300-packet drop-tail buffer, 60 s; the last 20 s
measured), ccsim's ``stack="ns3"`` (and ``stack="linux"``) against ns-3 3.44.

The ns-3 side: senders -- 10 Gbit/s, 1 us -- router -- 10 Mbit/s, 24.998 ms
-- router -- 10 Gbit/s, 1 us -- receivers; the bottleneck device's own
DropTailQueue of 300 packets, its root queue disc removed; ns-3's default
stack with ``TcpL4Protocol::SocketType`` ``ns3::TcpVegas`` (α 2, β 4, γ 1);
segment size 1448 bytes; 64 MB socket buffers; ``BulkSendApplication`` on
every sender, all started at 0. The queue is the device queue's
``PacketsInQueue`` sampled every 10 ms over 40-60 s; a flow's rate is its
receiver's bytes over 40-60 s. With ``--trace S`` each flow's Vegas is a
subclass that logs what ``PktsAcked`` hands it (time, segments, RTT) and its
window after each ``IncreaseWindow`` for the first S seconds, printed per
flow: the first RTT handed (the BaseRTT candidate), the least, and the
window when the first ACK of the flow arrived. Run from the repository root:

    python benchmarks/ns3_vegas_together.py --ns3-python /path/to/ns3venv/bin/python
    python benchmarks/ns3_vegas_together.py --flows 5 --trace 3 --ns3-python ...

Without ``--ns3-python`` (or without ns-3's bindings there) only ccsim runs.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _ns3 import DUMBBELL_CPP, run_worker  # noqa: E402 — after the path it lives on

_NS3_CPP = DUMBBELL_CPP + r"""
namespace ccsim_vegas {
using namespace ns3;

static std::ostringstream g_log;
static double g_traceUntil = 0;

// ns-3's own TcpVegas, with what PktsAcked is handed and the window after
// IncreaseWindow written to a log (the class's rules are ns-3's, untouched).
class LoggedVegas : public TcpVegas {
  public:
    static TypeId GetTypeId() {
        static TypeId tid = TypeId("ccsim_vegas::LoggedVegas")
                                .SetParent<TcpVegas>()
                                .AddConstructor<LoggedVegas>();
        return tid;
    }
    void PktsAcked(Ptr<TcpSocketState> tcb, uint32_t segs, const Time& rtt) override {
        double now = Simulator::Now().GetSeconds();
        if (now < g_traceUntil)
            g_log << "a " << m_id << " " << now << " " << segs << " " << rtt.GetSeconds() << "\n";
        TcpVegas::PktsAcked(tcb, segs, rtt);
    }
    void IncreaseWindow(Ptr<TcpSocketState> tcb, uint32_t segs) override {
        TcpVegas::IncreaseWindow(tcb, segs);
        double now = Simulator::Now().GetSeconds();
        if (now < g_traceUntil)
            g_log << "w " << m_id << " " << now << " " << tcb->m_cWnd.Get() / 1448.0 << " "
                  << tcb->m_ssThresh.Get() / 1448.0 << "\n";
    }
    uint32_t m_id = 0;
};

static ApplicationContainer g_sinks;
static std::vector<uint64_t> g_at40;
static uint64_t g_queueSum = 0, g_queueN = 0;
static Ptr<QueueBase> g_queue;

static void SampleQueue() {
    g_queueSum += g_queue->GetNPackets();
    ++g_queueN;
    Simulator::Schedule(MilliSeconds(10), &SampleQueue);
}

static void At40() {
    for (uint32_t i = 0; i < g_sinks.GetN(); ++i)
        g_at40.push_back(DynamicCast<PacketSink>(g_sinks.Get(i))->GetTotalRx());
    SampleQueue();
}

static void Label(uint32_t node, uint32_t id) {
    Ptr<TcpL4Protocol> tcp = NodeList::GetNode(node)->GetObject<TcpL4Protocol>();
    PointerValue sockets;
    ObjectVectorValue list;
    tcp->GetAttribute("SocketList", list);
    Ptr<TcpSocketBase> s = DynamicCast<TcpSocketBase>(list.Get(0));
    PointerValue ops;
    s->GetAttribute("CongestionOps", ops);
    Ptr<LoggedVegas> v = DynamicCast<LoggedVegas>(ops.Get<TcpCongestionOps>());
    if (v) v->m_id = id;
}

void Build(uint32_t n, double duration, double traceUntil, double rttAlpha) {
    g_traceUntil = traceUntil;
    // 0.125 is ns-3's own gain; 1 makes the "smoothed" RTT each ACK's sample
    Config::SetDefault("ns3::RttMeanDeviation::Alpha", DoubleValue(rttAlpha));
    LoggedVegas::GetTypeId();
    Config::SetDefault("ns3::TcpL4Protocol::SocketType",
                       TypeIdValue(traceUntil > 0 ? LoggedVegas::GetTypeId()
                                                  : TypeId::LookupByName("ns3::TcpVegas")));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(1448));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(1 << 26));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(1 << 26));

    ccsim_ns3::Dumbbell d = ccsim_ns3::BuildDumbbell(n, "10Mbps", "24998us", 300);
    g_queue = DynamicCast<PointToPointNetDevice>(d.bottleneck.Get(0))->GetQueue();
    ccsim_ns3::StartBulkFlows(d, g_sinks);
    if (traceUntil > 0)
        for (uint32_t i = 0; i < n; ++i)
            Simulator::Schedule(MicroSeconds(1), &Label, d.senders.Get(i)->GetId(), i);
    Simulator::Schedule(Seconds(duration - 20), &At40);
    Simulator::Stop(Seconds(duration));
}

std::string Run() {
    Simulator::Run();
    std::ostringstream o;
    o << "{\"queue\": " << (g_queueN ? double(g_queueSum) / g_queueN : 0.0) << ", \"bytes\": [";
    for (uint32_t i = 0; i < g_sinks.GetN(); ++i)
        o << (i ? ", " : "")
          << DynamicCast<PacketSink>(g_sinks.Get(i))->GetTotalRx() - g_at40[i];
    o << "]}";
    Simulator::Destroy();
    return o.str();
}

std::string Log() { return g_log.str(); }
}  // namespace ccsim_vegas
"""

_NS3_WORKER = r"""
n, duration, trace, alpha, source = (int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]),
                                     float(sys.argv[4]), sys.argv[5])
cppyy.cppdef(source)
m = cppyy.gbl.ccsim_vegas
m.Build(n, duration, trace, alpha)
out = json.loads(str(m.Run()))
out["log"] = str(m.Log())
print(json.dumps(out))
"""


def ns3_run(python: str, n: int, duration: float, trace: float, alpha: float = 0.125) -> dict:
    """One ns-3 run: ``{"queue": packets, "bytes": [per flow, last 20 s], "log": ...}``;
    ``alpha``: ``RttMeanDeviation::Alpha``, the gain of the RTT ns-3 hands the class."""
    return run_worker(python, _NS3_WORKER, str(n), repr(duration), repr(trace), repr(alpha),
                      _NS3_CPP)


def summarise_log(log: str, n: int) -> list[str]:
    """Per flow: the first and least RTT ``PktsAcked`` was handed, and the
    window when the flow left slow start (first ``ssthresh`` below 1e6)."""
    rtts: dict[int, list[float]] = {i: [] for i in range(n)}
    exit_: dict[int, tuple[float, float]] = {}
    for line in log.splitlines():
        kind, flow, *rest = line.split()
        i = int(flow)
        if kind == "a":
            rtts[i].append(float(rest[2]))
        elif kind == "w" and i not in exit_ and float(rest[2]) < 1e6:
            exit_[i] = (float(rest[0]), float(rest[1]))
    out = []
    for i in range(n):
        r = rtts[i]
        left = exit_.get(i)
        out.append(f"  flow {i}: first RTT handed {1e3 * r[0]:.3f} ms, least "
                   f"{1e3 * min(r):.3f} ms ({len(r)} calls)" if r else f"  flow {i}: no ACKs")
        if left:
            out[-1] += f"; left slow start at {left[0]:.3f} s with cwnd {left[1]:.1f}"
    return out


def ccsim_run(n: int, duration: float, stack: str,
              law_rtt: str | None = None) -> tuple[float, float]:
    """ccsim's mean queue (packets) and fastest/slowest rate over the last 20 s."""
    import ccsim

    sc = ccsim.dumbbell("10Mbps", "50ms", buffer=300, duration=duration, start_jitter=0,
                        flows=["vegas"] * n, stack=stack, law_rtt=law_rtt)
    res = ccsim.run(sc)
    queue = res.series("queue")["queue"]
    goodput = res.series("goodput")
    rates = goodput[goodput.index > duration - 20].mean().to_numpy()
    return float(queue[queue.index > duration - 20].mean()), float(rates.max() / rates.min())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--flows", type=int, nargs="+", default=[2, 5])
    parser.add_argument("--duration", type=float, default=60.0)
    parser.add_argument("--ns3-python", default=None, metavar="PATH")
    parser.add_argument("--trace", type=float, default=0.0, metavar="S",
                        help="log ns-3's Vegas for the first S seconds")
    parser.add_argument("--stacks", nargs="+", default=["ns3", "linux"])
    parser.add_argument("--ns3-rtt-alpha", type=float, default=0.125, metavar="G",
                        help="ns-3's RttMeanDeviation::Alpha (default 0.125, ns-3's; 1 hands "
                             "Vegas each ACK's own sample, as Linux's Vegas reads)")
    parser.add_argument("--law-rtt", default=None, help="ccsim's law_rtt (default: the stack's)")
    args = parser.parse_args()
    print(f"Vegas started together, 10 Mbit/s, 50 ms, 300 packets, {args.duration:g} s; "
          f"python {platform.python_version()}, {os.cpu_count()} CPUs")
    for n in args.flows:
        if args.ns3_python:
            r = ns3_run(args.ns3_python, n, args.duration, args.trace, args.ns3_rtt_alpha)
            if "missing" in r:
                print(f"ns-3 not importable with {args.ns3_python} ({r['missing']})")
            else:
                b = r["bytes"]
                print(f"N={n} ns-3 3.44 (RTT gain {args.ns3_rtt_alpha:g}): queue {r['queue']:.1f} packets, fastest/slowest "
                      f"{max(b) / max(min(b), 1):.2f}, rates {[round(x * 8 / 20e6, 2) for x in b]}"
                      " Mbit/s")
                if args.trace > 0:
                    print("\n".join(summarise_log(r["log"], n)))
        for stack in args.stacks:
            q, spread = ccsim_run(n, args.duration, stack, args.law_rtt)
            print(f"N={n} ccsim stack={stack!r}, law_rtt={args.law_rtt!r}: queue {q:.1f} packets, fastest/slowest "
                  f"{spread:.2f}")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
