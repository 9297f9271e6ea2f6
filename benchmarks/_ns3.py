"""Running a scenario in ns-3 from a benchmark: the scenario is compiled C++
(``cppyy.cppdef``) driven by a short worker script, in a subprocess of an
interpreter that has ns-3's bindings (``pip install ns3``), so this process
needs neither. Shared by ``ns3_shares.py``, ``ns3_side_by_side.py`` and
``ns3_vegas_together.py``, whose C++ starts with :data:`DUMBBELL_CPP`."""

from __future__ import annotations

import json
import subprocess

WORKER_HEAD = r"""
import json, sys
try:
    from ns import ns
    import cppyy
except Exception as e:
    print(json.dumps({"missing": f"{type(e).__name__}: {e}"}))
    sys.exit(0)
"""
"""The worker's first lines: ns-3 and cppyy imported, or ``{"missing": why}``
printed and an exit."""


DUMBBELL_CPP = r"""
#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

namespace ccsim_ns3 {
using namespace ns3;

// The benchmarks' dumbbell: n senders and n receivers, each behind its own
// access link (10 Gbit/s, 1 us), around one bottleneck of `rate` and one-way
// `delay` between two routers, whose device queue (drop-tail, `buffer`
// packets) is its only buffer: the root queue disc that assigning addresses
// installs is removed.
struct Dumbbell {
    NodeContainer senders, receivers, routers;
    NetDeviceContainer bottleneck;                // the routers' ends
    std::vector<NetDeviceContainer> senderLinks;  // each sender's access link
    std::vector<Ipv4Address> destinations;        // each receiver's address
};

inline Dumbbell BuildDumbbell(uint32_t n, const std::string& rate, const std::string& delay,
                              uint32_t buffer) {
    Dumbbell d;
    d.senders.Create(n);
    d.receivers.Create(n);
    d.routers.Create(2);
    InternetStackHelper stack;
    stack.InstallAll();

    PointToPointHelper access;
    access.SetDeviceAttribute("DataRate", StringValue("10Gbps"));
    access.SetChannelAttribute("Delay", StringValue("1us"));
    PointToPointHelper bottleneck;
    bottleneck.SetDeviceAttribute("DataRate", StringValue(rate));
    bottleneck.SetChannelAttribute("Delay", StringValue(delay));
    bottleneck.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize",
                        QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, buffer)));

    Ipv4AddressHelper addresses;
    d.bottleneck = bottleneck.Install(d.routers.Get(0), d.routers.Get(1));
    addresses.SetBase("10.0.0.0", "255.255.255.0");
    addresses.Assign(d.bottleneck);  // installs the default root queue disc (FqCoDel) ...
    TrafficControlHelper tch;
    tch.Uninstall(d.bottleneck.Get(0));  // ... removed: the device's drop-tail is the buffer

    for (uint32_t i = 0; i < n; ++i) {
        NetDeviceContainer s = access.Install(d.senders.Get(i), d.routers.Get(0));
        NetDeviceContainer r = access.Install(d.routers.Get(1), d.receivers.Get(i));
        std::ostringstream left, right;
        left << "10.1." << i << ".0";
        right << "10.2." << i << ".0";
        addresses.SetBase(left.str().c_str(), "255.255.255.0");
        addresses.Assign(s);
        addresses.SetBase(right.str().c_str(), "255.255.255.0");
        d.destinations.push_back(addresses.Assign(r).GetAddress(1));
        d.senderLinks.push_back(s);
    }
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();
    return d;
}

// A bulk sender on each sender to its receiver (port 5000 + i; 1448-byte
// writes, no end) from 0 s; the receivers' sinks, started at 0 s, in `sinks`.
inline void StartBulkFlows(const Dumbbell& d, ApplicationContainer& sinks) {
    for (uint32_t i = 0; i < d.senders.GetN(); ++i) {
        uint16_t port = 5000 + i;
        BulkSendHelper source("ns3::TcpSocketFactory",
                              InetSocketAddress(d.destinations[i], port));
        source.SetAttribute("MaxBytes", UintegerValue(0));
        source.SetAttribute("SendSize", UintegerValue(1448));
        source.Install(d.senders.Get(i)).Start(Seconds(0));
        PacketSinkHelper sink("ns3::TcpSocketFactory",
                              InetSocketAddress(Ipv4Address::GetAny(), port));
        sinks.Add(sink.Install(d.receivers.Get(i)));
    }
    sinks.Start(Seconds(0));
}
}  // namespace ccsim_ns3
"""
"""C++ the benchmarks' ns-3 scenarios start with: ``ccsim_ns3::BuildDumbbell``
and ``ccsim_ns3::StartBulkFlows``."""


def run_worker(python: str, body: str, *args: str) -> dict:
    """Run :data:`WORKER_HEAD` + ``body`` (which prints one JSON line last) in
    a subprocess of ``python`` with ``args`` as ``sys.argv[1:]``; its last
    JSON line, or ``{"missing": why}`` if ``python`` or ns-3's bindings are
    not there. A run that fails otherwise stops the benchmark with its error."""
    try:
        out = subprocess.run([python, "-c", WORKER_HEAD + body, *args],
                             capture_output=True, text=True)
    except OSError as e:  # no such interpreter
        return {"missing": str(e)}
    lines = [line for line in out.stdout.splitlines() if line.startswith("{")]
    if out.returncode != 0 or not lines:
        raise SystemExit(f"the ns-3 run failed (exit {out.returncode}):\n{out.stderr[-2000:]}")
    return json.loads(lines[-1])
