"""Golden results: the packet engine's full output for a dozen varied
scenarios, fingerprinted bit for bit.

This is a regression guard for work that must not change results (making
the engine faster, moving its seams), not a check of correctness: the other
tests say whether a result is right; this one says whether it moved. When a
change moves it on purpose (a documented fix of a rule), record again and
say so in the commit message:

    python tests/test_golden.py --record

The fingerprint keeps every summary cell and metric exactly (floats as
``float.hex``) and hashes the traces (SHA-256 over their columns' bytes).
"""

from __future__ import annotations

import hashlib
import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest

import ccsim
from ccsim import Flow
from ccsim.results import SUMMARY_COLUMNS

GOLDEN_FILE = Path(__file__).with_name("golden") / "packet.json"


def scenarios() -> dict[str, ccsim.Scenario]:
    """Every recovery strategy, RED, random loss, pacing, delayed ACKs,
    several links, access delays, sized and stopping flows, chosen drops,
    the three stacks."""
    d = ccsim.dumbbell
    return {
        "reno-pair": d("10Mbps", "20ms", flows=["reno", "reno"], duration="10s", seed=1),
        "cubic-reno-delack": d("10Mbps", "40ms", flows=["cubic", "reno"], duration="10s",
                               delayed_ack=True, seed=2),
        "newreno-random-loss": d("10Mbps", "20ms", flows=["newreno"], loss=0.01,
                                 duration="10s", seed=3),
        "tahoe-reno-red": d("10Mbps", "20ms", queue="red", buffer="2BDP",
                            flows=["tahoe", "reno"], duration="10s", seed=4),
        "sack-family-lossy": d("20Mbps", "30ms", buffer="0.5BDP", loss=0.005,
                               flows=["sack", "fack", "rate-halving", "ssdr"],
                               duration="8s", seed=5),
        "prr-vegas-recovery": d("10Mbps", "20ms", loss=0.01,
                                flows=[Flow("reno", recovery="prr"), "vegas"],
                                duration="10s", seed=6),
        "bbr-cubic-paced": d("20Mbps", "20ms", buffer="4BDP", flows=["bbr", "cubic"],
                             duration="10s", seed=7),
        "rtt-mix-access-delays": d("10Mbps", "10ms",
                                   flows=[Flow("westwood", rtt=0.01), Flow("veno", rtt=0.08),
                                          Flow("illinois", rtt=0.04)],
                                   duration="10s", seed=8),
        "three-link-path": ccsim.path(
            [{"rate": "100Mbps", "delay": "2ms"}, {"rate": "10Mbps", "delay": "8ms",
                                                    "buffer": "1BDP"},
             {"rate": "50Mbps", "delay": "5ms"}],
            flows=["htcp", "highspeed", "scalable"], duration="10s", seed=9),
        "sized-and-stopping": d("10Mbps", "20ms",
                                flows=[Flow("reno", size=2_000_000), Flow("bic", start=1.0,
                                                                          stop=6.0),
                                       Flow("yeah", start=2.0)],
                                duration="10s", seed=10),
        "chosen-drops": d("1.5Mbps", "100ms", buffer=25, flows=[
            Flow("reno", drop_segments=(14, 15, 16))], duration="5s", rwnd=20 * 1460, seed=11),
        "stack-knobs": d("10Mbps", "20ms", flows=["lp", "hybla", "pseudo-rate"],
                         delayed_ack=True, ack_counting="acks", limited_transmit=True,
                         rtt_granularity="1ms", duration="10s", seed=12),
        "ns3-stack": d("10Mbps", "20ms", flows=["reno", "cubic", "scalable"], loss=0.002,
                       stack="ns3", duration="10s", seed=13),
        "ns2-stack": d("1.5Mbps", "40ms", buffer=10, mss=960, flows=["sack", "vegas"],
                       stack="ns2", duration="10s", seed=14),
        "nics-per-flow": d("10Mbps", "20ms", buffer="0.5BDP", flows=[
            "cubic", Flow("reno", rtt=0.05), Flow("vegas", access_rate="1Gbps")],
            access=[{"rate": "1Gbps", "delay": "1ms"}, "100Mbps", None], duration="10s",
            seed=15),
        # infinitely fast hosts (access=None): first recorded equal, bit for bit, to the
        # records the same scenarios had under the names without "-no-access" before NICs
        **{f"{name}-no-access": spec(access=None) for name, spec in NO_ACCESS.items()},
    }


NO_ACCESS = {
    "reno-pair": lambda **a: ccsim.dumbbell("10Mbps", "20ms", flows=["reno", "reno"],
                                            duration="10s", seed=1, **a),
    "sack-family-lossy": lambda **a: ccsim.dumbbell(
        "20Mbps", "30ms", buffer="0.5BDP", loss=0.005, flows=["sack", "fack", "rate-halving",
                                                             "ssdr"], duration="8s", seed=5, **a),
    "rtt-mix-access-delays": lambda **a: ccsim.dumbbell(
        "10Mbps", "10ms", flows=[Flow("westwood", rtt=0.01), Flow("veno", rtt=0.08),
                                 Flow("illinois", rtt=0.04)], duration="10s", seed=8, **a),
    "chosen-drops": lambda **a: ccsim.dumbbell(
        "1.5Mbps", "100ms", buffer=25, flows=[Flow("reno", drop_segments=(14, 15, 16))],
        duration="5s", rwnd=20 * 1460, seed=11, **a),
}
"""Scenarios of :func:`scenarios` built again without NICs (their defaults'
records before access links are these ``-no-access`` records)."""


def _exact(value: object) -> object:
    """A JSON value that keeps a float's every bit."""
    if isinstance(value, (float, np.floating)):
        return "nan" if math.isnan(value) else float(value).hex()
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (tuple, list)):
        return [_exact(v) for v in value]
    return value


def fingerprint(res: ccsim.Result) -> dict:
    """Every summary cell and metric exactly (but wall time), traces hashed."""
    # the engine's figures; the scenario's own parameters are inputs, not results
    summary = {col: [_exact(v) for v in res.summary[col]] for col in SUMMARY_COLUMNS}
    metrics = {k: _exact(v) for k, v in sorted(res.metrics.items()) if k != "wall_time"}
    tr = res.traces
    digest = hashlib.sha256()
    digest.update(np.ascontiguousarray(tr["time"].to_numpy(np.float64)).tobytes())
    digest.update(np.ascontiguousarray(tr["flow"].fillna(-1).to_numpy(np.int64)).tobytes())
    digest.update("\n".join(map(str, tr["variable"])).encode())
    digest.update(np.ascontiguousarray(tr["value"].to_numpy(np.float64)).tobytes())
    return {"summary": summary, "metrics": metrics,
            "traces": {"rows": len(tr), "sha256": digest.hexdigest()}}


def _record() -> None:
    out = {name: fingerprint(ccsim.run(sc)) for name, sc in scenarios().items()}
    GOLDEN_FILE.parent.mkdir(exist_ok=True)
    GOLDEN_FILE.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
    print(f"recorded {len(out)} scenarios in {GOLDEN_FILE}")


@pytest.mark.parametrize("name", sorted(scenarios()))
def test_packet_engine_results_unchanged(name):
    golden = json.loads(GOLDEN_FILE.read_text())
    assert name in golden, f"no golden record for {name!r}: record with --record"
    got = fingerprint(ccsim.run(scenarios()[name]))
    want = golden[name]
    assert got["summary"] == want["summary"]
    assert got["metrics"] == want["metrics"]
    assert got["traces"] == want["traces"]


def test_fingerprint_sees_a_one_bit_change():
    """The guard is only as good as its fingerprint: flip the last bit of one
    goodput and one trace value, and both must show."""
    res = ccsim.run(scenarios()["reno-pair"])
    before = fingerprint(res)
    g = res.summary["goodput_bps"].to_numpy().copy()
    g[0] = np.nextafter(g[0], math.inf)
    res.summary["goodput_bps"] = g
    v = res.traces["value"].to_numpy().copy()
    v[-1] = np.nextafter(v[-1], math.inf)
    res.traces["value"] = v
    after = fingerprint(res)
    assert after["summary"]["goodput_bps"] != before["summary"]["goodput_bps"]
    assert after["traces"]["sha256"] != before["traces"]["sha256"]


def test_golden_file_covers_every_scenario():
    assert set(json.loads(GOLDEN_FILE.read_text())) == set(scenarios())


if __name__ == "__main__":
    if sys.argv[1:] == ["--record"]:
        _record()
    else:
        sys.exit("usage: python tests/test_golden.py --record")
