"""How far the fluid engine is from the packet engine, scenario by scenario.

Runs the agreement set (:mod:`agreement_set`: the first edition's classic
cases plus cases drawn per regime — mixed RTTs, tiny and huge buffers,
10–1000 flows, random loss, RED, NewReno with staggered starts,
RTT-compensated laws, BBR on shallow/RED/lossy paths, large-BDP late
starters, loss-tolerant laws, ECN) through both engines and reports per
scenario:

* ``share_gap`` — the largest gap, over the scenario's flows, between the
  two engines' shares of the bottleneck (points);
* ``util_gap`` — the gap in utilisation (points);
* ``loss_gap`` — the gap in loss rate (queue drops and random losses per
  data packet sent, points);

and their median, 90th percentile and worst, on the tuning set and the
held-out set separately (the split is fixed by a hash of each label, see
:func:`agreement_set.held_out`) and by regime.

The packet engine's results are cached in a SQLite sweep store
(``--store``, gitignored), so rerunning after a change to the fluid model
costs the fluid batch alone: the store keys the packet results by scenario
and the packet engine's code (ccsim's source but for ``ccsim/fluid``), so a
changed packet engine, law or default re-runs what it affects. The default
store's name carries a hash of those sources as well, so each version of
them keeps a file of its own (``--fresh`` reruns anyway). Packet runs go to
a process pool (``--workers``). The 1000- and 300-flow cases run 10 s, the
100-flow ones 20 s, to keep the packet run affordable.

Usage, from the repository root::

    PYTHONPATH=. python benchmarks/fluid_agreement.py [--duration 30] [--workers 2]
        [--write docs/fluid.md] [--csv table.csv]

``--write`` replaces the text between the agreement markers in that file.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import sys
import time
from datetime import datetime, timezone

import numpy as np
import pandas as pd

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import ccsim  # noqa: E402
from agreement_set import held_out, scenarios  # noqa: E402
from ccsim.errors import CcsimError  # noqa: E402
from ccsim.fluid.engine import FluidEngine  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def packet_fingerprint() -> str:
    """A hash of ccsim's sources outside the fluid engine: the packet cache is
    valid only for the packet engine (and defaults) that filled it, and the
    sweep store's key (scenario, ccsim version) does not see a changed default."""
    import hashlib

    root = os.path.join(HERE, os.pardir, "ccsim")
    digest = hashlib.sha256()
    for folder, dirs, files in sorted(os.walk(root)):
        dirs[:] = sorted(d for d in dirs if d not in ("fluid", "__pycache__"))
        for name in sorted(files):
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                digest.update(os.path.relpath(path, root).encode())
                with open(path, "rb") as fh:
                    digest.update(fh.read())
    return digest.hexdigest()[:12]


STORE = os.path.join(HERE, f"fluid_agreement-{packet_fingerprint()}.sqlite")


def _loss_rate(drops: float, losses: float, data: float) -> float:
    return (drops + losses) / max(data, 1.0)


def packet_results(cases, workers: int, store: str, progress: bool) -> pd.DataFrame:
    """The packet engine's per-flow table (cached in ``store``)."""
    table = ccsim.sweep([sc for _, _, sc in cases], mode="packet", workers=workers,
                        store=store, progress=progress)
    return table


def fluid_results(cases) -> tuple[dict[int, ccsim.Result | str], float]:
    """The fluid engine's results by case index, one batch for every case it
    accepts; a case it refuses gets the error's text."""
    out: dict[int, ccsim.Result | str] = {}
    ok = []
    for i, (_, _, sc) in enumerate(cases):
        try:
            FluidEngine([sc], traces=False)  # refuses what it cannot model, naming it
            ok.append(i)
        except CcsimError as exc:
            out[i] = str(exc).splitlines()[0].split(" (")[0]
    start = time.process_time()
    results = ccsim.run_many([cases[i][2] for i in ok], mode="fluid", traces=False)
    cpu = time.process_time() - start
    out.update(zip(ok, results))
    return out, cpu


def measure(duration: float, workers: int, store: str, progress: bool = True):
    cases = scenarios(duration)
    start = time.perf_counter()
    packet = packet_results(cases, workers, store, progress)
    packet_wall = time.perf_counter() - start
    fluid, fluid_cpu = fluid_results(cases)
    rows = []
    for i, (group, label, sc) in enumerate(cases):
        p = packet[packet.scenario == i]
        row = {"group": group, "scenario": label, "set": "held-out" if held_out(label)
               else "tuning", "flows": len(sc.flows)}
        f = fluid[i]
        if isinstance(f, str) or (p.error != "").any():
            row["note"] = f if isinstance(f, str) else p.error.iloc[0].splitlines()[-1]
            rows.append(row)
            continue
        ps = p.share.to_numpy()
        fs = f.summary["share"].to_numpy()
        worst = int(np.nanargmax(np.abs(fs - ps)))
        m = f.metrics
        p0 = p.iloc[0]
        row.update(
            share_gap=float(np.nanmax(np.abs(fs - ps))) * 100,
            worst_flow=worst, share_packet=float(ps[worst]), share_fluid=float(fs[worst]),
            util_packet=float(p0.utilisation), util_fluid=float(m["utilisation"]),
            loss_packet=_loss_rate(p0.drops, p0.losses, p0.data_packets),
            loss_fluid=_loss_rate(m["drops"], m["losses"], m["data_packets"]),
            jain_packet=float(p0.jain), jain_fluid=float(m["jain"]),
            timeouts_packet=float(p.timeouts.sum()),
            timeouts_fluid=float(f.summary["timeouts"].sum()),
            note="")
        row["util_gap"] = abs(row["util_fluid"] - row["util_packet"]) * 100
        row["loss_gap"] = abs(row["loss_fluid"] - row["loss_packet"]) * 100
        rows.append(row)
    table = pd.DataFrame(rows)
    return table, fluid_cpu, packet_wall


def stats(table: pd.DataFrame, by: str | None = None) -> pd.DataFrame:
    """Median, 90th percentile and worst of each gap (over runnable cases)."""
    t = table.dropna(subset=["share_gap"])
    cols = ["share_gap", "util_gap", "loss_gap"]

    def one(g: pd.DataFrame) -> pd.Series:
        out = {"n": len(g)}
        for c in cols:
            out[f"{c} median"] = g[c].median()
            out[f"{c} p90"] = g[c].quantile(0.9)
            out[f"{c} worst"] = g[c].max()
        return pd.Series(out)

    if by is None:
        return pd.DataFrame({"all": one(t)}).T
    return t.groupby(by, sort=False).apply(one)


def summary_text(table: pd.DataFrame) -> str:
    lines = []
    for name, sub in (("held-out", table[table.set == "held-out"]),
                      ("tuning", table[table.set == "tuning"]), ("all", table)):
        s = stats(sub).iloc[0]
        lines.append(f"| {name} | {int(s.n)} | {s['share_gap median']:.1f} / "
                     f"{s['share_gap p90']:.1f} / {s['share_gap worst']:.1f} | "
                     f"{s['util_gap median']:.1f} / {s['util_gap p90']:.1f} / "
                     f"{s['util_gap worst']:.1f} | {s['loss_gap median']:.2f} / "
                     f"{s['loss_gap p90']:.2f} / {s['loss_gap worst']:.2f} |")
    head = ["| set | scenarios | largest per-flow share gap, points (median / p90 / worst) | "
            "utilisation gap, points | loss-rate gap, points |", "|---|---|---|---|---|"]
    by = stats(table, "group")
    reg = ["| regime | scenarios | share gap (median / p90 / worst) | utilisation gap | "
           "loss-rate gap |", "|---|---|---|---|---|"]
    for g, s in by.iterrows():
        reg.append(f"| {g} | {int(s.n)} | {s['share_gap median']:.1f} / "
                   f"{s['share_gap p90']:.1f} / {s['share_gap worst']:.1f} | "
                   f"{s['util_gap median']:.1f} / {s['util_gap p90']:.1f} / "
                   f"{s['util_gap worst']:.1f} | {s['loss_gap median']:.2f} / "
                   f"{s['loss_gap p90']:.2f} / {s['loss_gap worst']:.2f} |")
    skipped = table[table.share_gap.isna()] if "share_gap" in table else table.iloc[:0]
    notes = [f"- not run in fluid: {r.scenario} ({r.note})" for r in skipped.itertuples()]
    return "\n".join(head + lines) + "\n\n" + "\n".join(reg) + "\n" + (
        "\n" + "\n".join(notes) + "\n" if notes else "")


def markdown(table: pd.DataFrame, duration: float, fluid_cpu: float) -> str:
    when = datetime.now(timezone.utc).strftime("%Y-%m-%d")
    head = (f"Measured {when} on a 2-core machine (Python {platform.python_version()}), "
            f"{duration:g} s per scenario unless the label says otherwise, seed 1: "
            f"`PYTHONPATH=. python benchmarks/fluid_agreement.py --duration {duration:g}`. "
            f"The fluid batch of {int(table.share_gap.notna().sum())} scenarios took "
            f"{fluid_cpu:.1f} CPU-seconds.\n\n")
    body = ["| set | group | scenario | worst flow's share (packet / fluid) | gap | "
            "utilisation (packet / fluid) | loss rate (packet / fluid) | Jain (packet / fluid) |",
            "|---|---|---|---|---|---|---|---|"]
    for r in table.itertuples(index=False):
        if not isinstance(r.note, str) or r.note == "" or not np.isnan(r.share_gap):
            body.append(f"| {r.set} | {r.group} | {r.scenario} | {r.share_packet:.3f} / "
                        f"{r.share_fluid:.3f} | {r.share_gap:.1f} | {r.util_packet:.3f} / "
                        f"{r.util_fluid:.3f} | {r.loss_packet:.2%} / {r.loss_fluid:.2%} | "
                        f"{r.jain_packet:.2f} / {r.jain_fluid:.2f} |")
    return (head + summary_text(table) + "\n<details><summary>Every scenario</summary>\n\n"
            + "\n".join(body) + "\n\n</details>\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=30.0, help="seconds per scenario")
    parser.add_argument("--workers", type=int, default=2, help="processes for packet runs")
    parser.add_argument("--store", default=STORE, help="SQLite cache of the packet runs")
    parser.add_argument("--fresh", action="store_true", help="rerun the packet engine")
    parser.add_argument("--write", metavar="FILE", help="replace the table in FILE")
    parser.add_argument("--csv", metavar="FILE", help="save the table as CSV")
    parser.add_argument("--group", action="append", help="only these groups (repeatable)")
    args = parser.parse_args()
    if args.fresh and os.path.exists(args.store):
        os.remove(args.store)
    table, fluid_cpu, packet_wall = measure(args.duration, args.workers, args.store)
    if args.group:
        table = table[table.group.isin(args.group)]
    cols = ["set", "group", "scenario", "share_gap", "worst_flow", "share_packet",
            "share_fluid", "util_packet", "util_fluid", "loss_packet", "loss_fluid",
            "jain_packet", "jain_fluid", "timeouts_packet", "timeouts_fluid"]
    with pd.option_context("display.width", 250, "display.max_rows", 500,
                           "display.max_colwidth", 70):
        print(table[cols].round(3).to_string())
    print(summary_text(table))
    print(f"fluid batch: {fluid_cpu:.1f} CPU-s; packet engine (or its cache): "
          f"{packet_wall:.1f} s wall")
    if args.csv:
        table.to_csv(args.csv, index=False)
    if args.write:
        text = open(args.write, encoding="utf-8").read()
        block = markdown(table, args.duration, fluid_cpu)
        new = re.sub(r"(<!-- agreement:start -->\n).*?(<!-- agreement:end -->)",
                     lambda m: m.group(1) + block + m.group(2), text, flags=re.S)
        open(args.write, "w", encoding="utf-8").write(new)


if __name__ == "__main__":
    main()
