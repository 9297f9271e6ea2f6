"""How far the fluid engine is from the packet engine, scenario by scenario.

Runs a fixed set of scenarios through both engines and reports, for each,
the first flow's share of the bottleneck, the utilisation and the loss rate
side by side, with the gaps. The set follows the studies ccsim reproduces:

* pairs from Esterhuizen & Krzesinski's Table I (100 Mbit/s, 1 ms, a
  1000-packet buffer, the second flow 10 s after the first);
* Kwon's grid: each of Reno, CUBIC, BBR and Vegas against Reno × delay
  {10, 100 ms} × queue {5, 1000 packets} × random loss {0, 2 %};
* Zhang & Bian: one flow under 1 % and 5 % loss (Reno, SACK, Vegas), RTT bias
  (10 ms against 58 ms with a 10-packet buffer), DropTail against RED, and
  Reno/SACK/Vegas competition;
* crowds of 4 and 8 flows, drop-tail and RED.

Usage, from the repository root::

    python benchmarks/fluid_agreement.py [--duration 30] [--write docs/fluid.md]

``--write`` replaces the table between the agreement markers in that file.
"""

from __future__ import annotations

import argparse
import platform
import re
import time
from datetime import date

import pandas as pd

import ccsim

MATRIX_PAIRS = [("reno", "cubic"), ("cubic", "reno"), ("htcp", "reno"), ("bic", "cubic"),
                ("highspeed", "reno"), ("scalable", "reno"), ("illinois", "cubic"),
                ("vegas", "reno"), ("westwood", "cubic"), ("yeah", "reno"),
                ("hybla", "cubic"), ("lp", "reno")]


def scenarios(duration: float) -> list[tuple[str, str, ccsim.Scenario]]:
    """(group, label, scenario) for every case of the set."""
    out = []
    d = f"{duration}s"
    for a, b in MATRIX_PAIRS:
        out.append(("Table I pairs", f"{a} then {b}",
                    ccsim.dumbbell("100Mbps", "1ms", buffer=1000, duration=d, seed=1,
                                   flows=[a, ccsim.Flow(b, start="10s")])))
    for alg in ("reno", "cubic", "bbr", "vegas"):
        for delay in ("10ms", "100ms"):
            for queue in (5, 1000):
                for loss in (0.0, 0.02):
                    out.append(("Kwon's grid", f"{alg} vs reno, {delay}, {queue} pkts, "
                                               f"loss {loss:.0%}",
                                ccsim.dumbbell("10Mbps", delay, buffer=queue, loss=loss,
                                               duration=d, seed=1, flows=[alg, "reno"])))
    for alg in ("reno", "sack", "vegas"):
        for loss in (0.01, 0.05):
            out.append(("Zhang & Bian", f"{alg} alone, loss {loss:.0%}",
                        ccsim.dumbbell("1.5Mbps", "50ms", buffer=10, loss=loss, duration=d,
                                       seed=1, flows=[alg])))
        out.append(("Zhang & Bian", f"{alg}: 10 ms vs 58 ms, 10 pkts",
                    ccsim.dumbbell("1.5Mbps", "10ms", buffer=10, duration=d, seed=1,
                                   flows=[alg, ccsim.Flow(alg, rtt="58ms")])))
    for queue in ("droptail", "red"):
        out.append(("Zhang & Bian", f"reno: 10 ms vs 58 ms, {queue}, 30 pkts",
                    ccsim.dumbbell("1.5Mbps", "10ms", buffer=30, queue=queue, duration=d,
                                   seed=1, flows=["reno", ccsim.Flow("reno", rtt="58ms")])))
    for a, b in (("reno", "sack"), ("reno", "vegas"), ("sack", "vegas")):
        out.append(("Zhang & Bian", f"{a} vs {b}",
                    ccsim.dumbbell("1.5Mbps", "50ms", buffer=20, duration=d, seed=1,
                                   flows=[a, b])))
    out.append(("crowds", "4 reno", ccsim.dumbbell("20Mbps", "40ms", buffer="1BDP",
                                                   duration=d, seed=1, flows=["reno"] * 4)))
    out.append(("crowds", "8 cubic", ccsim.dumbbell("20Mbps", "40ms", buffer="1BDP",
                                                    duration=d, seed=1, flows=["cubic"] * 8)))
    out.append(("crowds", "2 reno + 2 cubic",
                ccsim.dumbbell("20Mbps", "40ms", buffer="1BDP", duration=d, seed=1,
                               flows=["reno", "reno", "cubic", "cubic"])))
    out.append(("crowds", "8 reno, RED",
                ccsim.dumbbell("20Mbps", "40ms", buffer=200, queue="red", duration=d, seed=1,
                               flows=["reno"] * 8)))
    return out


def loss_rate(res: ccsim.Result) -> float:
    m = res.metrics
    return (m["drops"] + m["losses"]) / max(m["data_packets"], 1)


def measure(duration: float) -> tuple[pd.DataFrame, float, float]:
    cases = scenarios(duration)
    start = time.perf_counter()
    fluid = ccsim.run_many([sc for _, _, sc in cases], mode="fluid", traces=False)
    fluid_wall = time.perf_counter() - start
    rows, packet_wall = [], 0.0
    for (group, label, sc), f in zip(cases, fluid):
        start = time.perf_counter()
        p = ccsim.run(sc)
        packet_wall += time.perf_counter() - start
        rows.append({"group": group, "scenario": label,
                     "share_packet": p.summary["share"][0], "share_fluid": f.summary["share"][0],
                     "util_packet": p.metrics["utilisation"],
                     "util_fluid": f.metrics["utilisation"],
                     "loss_packet": loss_rate(p), "loss_fluid": loss_rate(f)})
    table = pd.DataFrame(rows)
    table["share_gap"] = (table.share_fluid - table.share_packet).abs() * 100  # points
    table["util_gap"] = (table.util_fluid - table.util_packet).abs() * 100
    return table, fluid_wall, packet_wall


def summary_lines(table: pd.DataFrame, fluid_wall: float, packet_wall: float) -> list[str]:
    gaps = table.share_gap
    return [f"- median share gap: {gaps.median():.1f} points (target ≤ 5)",
            f"- within 10 points: {(gaps <= 10).mean():.0%} of scenarios (target ≥ 90 %)",
            f"- utilisation gap: median {table.util_gap.median():.1f}, "
            f"90th percentile {table.util_gap.quantile(0.9):.1f} points (target: within 3)",
            f"- wall time: fluid {fluid_wall:.1f} s for all {len(table)} in one batch, "
            f"packet {packet_wall:.1f} s ({packet_wall / fluid_wall:.0f}×)"]


def markdown(table: pd.DataFrame, lines: list[str], duration: float) -> str:
    head = (f"Measured {date.today().isoformat()} on the 2-core CI machine kind "
            f"(Python {platform.python_version()}), {duration:g} s per scenario, seed 1: "
            f"`python benchmarks/fluid_agreement.py --duration {duration:g}`.\n\n")
    cols = ["group", "scenario", "share_packet", "share_fluid", "share_gap", "util_packet",
            "util_fluid", "loss_packet", "loss_fluid"]
    body = ["| " + " | ".join(["group", "scenario", "flow 1 share (packet / fluid)",
                               "gap (points)", "utilisation (packet / fluid)",
                               "loss rate (packet / fluid)"]) + " |",
            "|---|---|---|---|---|---|"]
    for r in table[cols].itertuples(index=False):
        body.append(f"| {r.group} | {r.scenario} | {r.share_packet:.2f} / {r.share_fluid:.2f} "
                    f"| {r.share_gap:.1f} | {r.util_packet:.3f} / {r.util_fluid:.3f} "
                    f"| {r.loss_packet:.2%} / {r.loss_fluid:.2%} |")
    return head + "\n".join(lines) + "\n\n" + "\n".join(body) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=30.0, help="seconds per scenario")
    parser.add_argument("--write", metavar="FILE", help="replace the table in FILE")
    parser.add_argument("--csv", metavar="FILE", help="save the table as CSV")
    args = parser.parse_args()
    table, fluid_wall, packet_wall = measure(args.duration)
    lines = summary_lines(table, fluid_wall, packet_wall)
    with pd.option_context("display.width", 200, "display.max_rows", 200):
        print(table.round(3).to_string())
    print("\n".join(lines))
    if args.csv:
        table.to_csv(args.csv, index=False)
    if args.write:
        text = open(args.write, encoding="utf-8").read()
        block = markdown(table, lines, args.duration)
        new = re.sub(r"(<!-- agreement:start -->\n).*?(<!-- agreement:end -->)",
                     lambda m: m.group(1) + block + m.group(2), text, flags=re.S)
        open(args.write, "w", encoding="utf-8").write(new)


if __name__ == "__main__":
    main()
