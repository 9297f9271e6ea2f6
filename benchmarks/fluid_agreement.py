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

each engine's figure being its mean over seeds 1..N (``--seeds``, default
5: the fluid model describes an expected trajectory, and a single packet run
moves by several points between seeds), and for scale the share gap of the
first seed alone and the packet engine's own seed noise (its first seed
against the mean of the others); and their median, 90th percentile and
worst, on the tuning set and the held-out set separately (the split is fixed by a hash of each label, see
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

    PYTHONPATH=. python benchmarks/fluid_agreement.py [--duration 30] [--seeds 5]
        [--workers 2] [--group NAME] [--write docs/fluid.md] [--csv table.csv]

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
    for folder, dirs, files in os.walk(root):  # top-down: pruning dirs skips them
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


def packet_results(cases, seeds: list[int], workers: int, store: str,
                   progress: bool) -> pd.DataFrame:
    """The packet engine's per-flow table, every case once per seed (cached in
    ``store``); the ``base`` column is the case's index."""
    return ccsim.sweep([sc for _, _, sc in cases], seeds=seeds, mode="packet",
                       workers=workers, store=store, progress=progress)


def fluid_results(cases, seeds: list[int]) -> tuple[dict[tuple[int, int], ccsim.Result | str],
                                                    float]:
    """The fluid engine's results by (case index, seed), one batch for every
    run it accepts; a case it refuses gets the error's text."""
    out: dict[tuple[int, int], ccsim.Result | str] = {}
    ok = []
    for i, (_, _, sc) in enumerate(cases):
        try:
            FluidEngine([sc], traces=False)  # refuses what it cannot model, naming it
            ok.extend((i, s) for s in seeds)
        except CcsimError as exc:
            out.update({(i, s): str(exc).splitlines()[0].split(" (")[0] for s in seeds})
    start = time.process_time()
    results = ccsim.run_many([cases[i][2].replace(seed=s) for i, s in ok], mode="fluid",
                             traces=False)
    cpu = time.process_time() - start
    out.update(zip(ok, results))
    return out, cpu


def _share_gap(a: np.ndarray, b: np.ndarray) -> tuple[float, int]:
    """The largest per-flow gap between two share vectors (points) and its
    flow: the first of those within rounding of it (two flows' shares sum to
    one, so their gaps are equal but for the last bits, which should not
    decide the flow a table shows)."""
    gaps = np.abs(a - b)
    worst = int(np.flatnonzero(gaps >= np.nanmax(gaps) - 1e-9)[0])
    return float(gaps[worst]) * 100, worst


def measure(duration: float, seeds: list[int], workers: int, store: str,
            groups: list[str] | None = None, progress: bool = True):
    """One row per case: each engine's shares, utilisation, loss rate and
    Jain index as means over ``seeds``, their gaps (points), and for scale
    the gap of the first seed alone (``share_gap_seed1``) and the packet
    engine's own seed noise: its first seed against the mean of the others
    (``share_noise``, with two seeds or more)."""
    cases = [c for c in scenarios(duration) if groups is None or c[0] in groups]
    start = time.perf_counter()
    packet = packet_results(cases, seeds, workers, store, progress)
    packet_wall = time.perf_counter() - start
    fluid, fluid_cpu = fluid_results(cases, seeds)
    rows = []
    for i, (group, label, sc) in enumerate(cases):
        p = packet[packet.base == i]
        row = {"group": group, "scenario": label, "set": "held-out" if held_out(label)
               else "tuning", "flows": len(sc.flows)}
        fs = [fluid[i, s] for s in seeds]
        bad = next((f for f in fs if isinstance(f, str)), None)
        if bad is not None or (p.error != "").any():
            row["note"] = bad if bad is not None else \
                p.error[p.error != ""].iloc[0].splitlines()[-1]
            rows.append(row)
            continue
        by_seed = {s: g.sort_values("flow") for s, g in p.groupby("seed")}
        pshares = np.array([by_seed[s].share.to_numpy() for s in seeds])
        fshares = np.array([f.summary["share"].to_numpy() for f in fs])
        firsts = [by_seed[s].iloc[0] for s in seeds]
        gap, worst = _share_gap(fshares.mean(axis=0), pshares.mean(axis=0))
        row.update(
            share_gap=gap, worst_flow=worst,
            share_packet=float(pshares[:, worst].mean()),
            share_fluid=float(fshares[:, worst].mean()),
            share_gap_seed1=_share_gap(fshares[0], pshares[0])[0],
            share_noise=(_share_gap(pshares[0], pshares[1:].mean(axis=0))[0]
                         if len(seeds) > 1 else np.nan),
            util_packet=float(np.mean([r.utilisation for r in firsts])),
            util_fluid=float(np.mean([f.metrics["utilisation"] for f in fs])),
            loss_packet=float(np.mean([_loss_rate(r.drops, r.losses, r.data_packets)
                                       for r in firsts])),
            loss_fluid=float(np.mean([_loss_rate(f.metrics["drops"], f.metrics["losses"],
                                                 f.metrics["data_packets"]) for f in fs])),
            jain_packet=float(np.mean([r.jain for r in firsts])),
            jain_fluid=float(np.mean([f.metrics["jain"] for f in fs])),
            timeouts_packet=float(p.timeouts.sum()) / len(seeds),
            timeouts_fluid=float(np.mean([f.summary["timeouts"].sum() for f in fs])),
            note="")
        row["util_gap"] = abs(row["util_fluid"] - row["util_packet"]) * 100
        row["loss_gap"] = abs(row["loss_fluid"] - row["loss_packet"]) * 100
        rows.append(row)
    table = pd.DataFrame(rows)
    return table, fluid_cpu, packet_wall


GAPS = ["share_gap", "util_gap", "loss_gap", "share_gap_seed1", "share_noise"]


def stats(table: pd.DataFrame, by: str | None = None) -> pd.DataFrame:
    """Median, 90th percentile and worst of each gap (over runnable cases)."""
    t = table.dropna(subset=["share_gap"])

    def one(g: pd.DataFrame) -> pd.Series:
        out = {"n": len(g)}
        for c in GAPS:
            out[f"{c} median"] = g[c].median()
            out[f"{c} p90"] = g[c].quantile(0.9)
            out[f"{c} worst"] = g[c].max()
        return pd.Series(out)

    if by is None:
        return pd.DataFrame({"all": one(t)}).T
    return t.groupby(by, sort=False).apply(one)


def _triple(s: pd.Series, col: str, digits: int = 1) -> str:
    return " / ".join(f"{s[f'{col} {q}']:.{digits}f}" for q in ("median", "p90", "worst"))


def summary_text(table: pd.DataFrame) -> str:
    head = ["| set | scenarios | largest per-flow share gap, points (median / p90 / worst) | "
            "utilisation gap, points | loss-rate gap, points | share gap, first seed alone | "
            "packet engine against itself |", "|---|---|---|---|---|---|---|"]
    lines = []
    for name, sub in (("held-out", table[table.set == "held-out"]),
                      ("tuning", table[table.set == "tuning"]), ("all", table)):
        s = stats(sub).iloc[0]
        lines.append(f"| {name} | {int(s.n)} | {_triple(s, 'share_gap')} | "
                     f"{_triple(s, 'util_gap')} | {_triple(s, 'loss_gap', 2)} | "
                     f"{_triple(s, 'share_gap_seed1')} | {_triple(s, 'share_noise')} |")
    reg = ["| regime | scenarios | share gap (median / p90 / worst) | utilisation gap | "
           "loss-rate gap | packet engine against itself |", "|---|---|---|---|---|---|"]
    for g, s in stats(table, "group").iterrows():
        reg.append(f"| {g} | {int(s.n)} | {_triple(s, 'share_gap')} | "
                   f"{_triple(s, 'util_gap')} | {_triple(s, 'loss_gap', 2)} | "
                   f"{_triple(s, 'share_noise')} |")
    skipped = table[table.share_gap.isna()] if "share_gap" in table else table.iloc[:0]
    notes = [f"- not run in fluid: {r.scenario} ({r.note})" for r in skipped.itertuples()]
    return "\n".join(head + lines) + "\n\n" + "\n".join(reg) + "\n" + (
        "\n" + "\n".join(notes) + "\n" if notes else "")


def _seed_text(seeds: list[int]) -> str:
    return f"seed {seeds[0]}" if len(seeds) == 1 else \
        f"means over seeds {seeds[0]}–{seeds[-1]} in each engine"


def markdown(table: pd.DataFrame, duration: float, seeds: list[int], fluid_cpu: float) -> str:
    when = datetime.now(timezone.utc).strftime("%Y-%m-%d")
    head = (f"Measured {when} on a 2-core machine (Python {platform.python_version()}), "
            f"{duration:g} s per scenario unless the label says otherwise, "
            f"{_seed_text(seeds)}: `PYTHONPATH=. python benchmarks/fluid_agreement.py "
            f"--duration {duration:g} --seeds {len(seeds)}`. The fluid batch of "
            f"{int(table.share_gap.notna().sum()) * len(seeds)} runs took "
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
    parser.add_argument("--seeds", type=int, default=5,
                        help="seeds 1..N per case; each engine's figures are means over them")
    parser.add_argument("--workers", type=int, default=2, help="processes for packet runs")
    parser.add_argument("--store", default=STORE, help="SQLite cache of the packet runs")
    parser.add_argument("--fresh", action="store_true", help="rerun the packet engine")
    parser.add_argument("--write", metavar="FILE", help="replace the table in FILE")
    parser.add_argument("--csv", metavar="FILE", help="save the table as CSV")
    parser.add_argument("--group", action="append", help="only these groups (repeatable)")
    args = parser.parse_args()
    if args.fresh and os.path.exists(args.store):
        os.remove(args.store)
    if args.write and args.group:
        parser.error("--write needs the whole set: drop --group")
    if args.seeds < 1:
        parser.error(f"--seeds {args.seeds}: a count of seeds >= 1")
    seeds = list(range(1, args.seeds + 1))
    table, fluid_cpu, packet_wall = measure(args.duration, seeds, args.workers, args.store,
                                            args.group)
    cols = ["set", "group", "scenario", "share_gap", "share_gap_seed1", "share_noise",
            "worst_flow", "share_packet",
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
        block = markdown(table, args.duration, seeds, fluid_cpu)
        new = re.sub(r"(<!-- agreement:start -->\n).*?(<!-- agreement:end -->)",
                     lambda m: m.group(1) + block + m.group(2), text, flags=re.S)
        open(args.write, "w", encoding="utf-8").write(new)


if __name__ == "__main__":
    main()
