"""The ``ccsim`` command line: run one scenario or a sweep, the README demo, list algorithms.

The only module that prints or reads argv. Console entry point:
``ccsim = "ccsim.cli:main"``; also ``python -m ccsim``.

Examples::

    ccsim run --flows reno vegas@10s --bandwidth 10Mbps --rtt 20ms --duration 60s --plot out.png
    ccsim run --flows "vegas@10s:rtt=40ms,alpha=3" "cubic:recovery=sack" --queue red:max_p=0.1
    ccsim run --flows cubic cubic --loss 1% --json | head
    ccsim run --bandwidth 100mbit --csv summary.csv --traces traces.csv
    ccsim sweep sweep.toml --workers 8 --store sweep.sqlite --csv out.csv
    ccsim experiment --list
    ccsim experiment unfairness --workers 2 --csv table2.csv --plot table2.png
    ccsim demo
    ccsim algorithms
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shutil
import sys
import textwrap
from typing import Any, Sequence

import numpy as np
import pandas as pd

from . import __version__
from .errors import CcsimError, ScenarioError
from .units import format_rate, format_size, format_time

__all__ = ["main"]

DEMO_PLOT = "ccsim-demo.png"
PLOT_DPI = 120


# -- argument parsing -------------------------------------------------------------
def build_parser() -> argparse.ArgumentParser:
    """The ``ccsim`` command's argument parser: its commands and their options."""
    parser = argparse.ArgumentParser(
        prog="ccsim", description="TCP congestion control, simulated.",
        epilog="Quantities take units: 10Mbps, 20ms, 64KB, 1BDP. "
               "'ccsim COMMAND --help' describes each command.")
    parser.add_argument("--version", action="version", version=f"ccsim {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    run = commands.add_parser(
        "run", help="simulate one dumbbell scenario and print its summary",
        description="Simulate flows sharing one bottleneck (a dumbbell) and print the "
                    "per-flow summary and aggregate metrics.")
    run.add_argument("--flows", nargs="+", default=["reno", "reno"],
                     metavar="NAME[@START][:KEY=VALUE,...]",
                     help="one flow per algorithm name (any case), optionally with its start "
                          "time and, after a colon, its own settings: rtt, stop, size, "
                          "recovery, overhead, reverse=true, and the algorithm's "
                          "parameters, e.g. reno "
                          "\"vegas@10s:rtt=40ms,alpha=3\" (default: reno reno)")
    run.add_argument("--bandwidth", default="10Mbps", type=_unit_type("rate", "--bandwidth"),
                     help="bottleneck rate: 10Mbps, 10Mbit/s, or tc's 10mbit (default: 10Mbps)")
    run.add_argument("--rtt", default="20ms", type=_unit_type("time", "--rtt"), help="two-way propagation delay (default: 20ms)")
    run.add_argument("--buffer", default="1BDP",
                     help="bottleneck buffer: packets, a size (64KB) or a BDP multiple "
                          "(default: 1BDP)")
    run.add_argument("--queue", default="droptail", metavar="KIND[:KEY=VALUE,...]",
                     help="bottleneck queue discipline (droptail, red, codel, pie), with its parameters "
                          "after a colon, e.g. red:min_th=5,max_th=15,max_p=0.1,gentle=true "
                          "(default: droptail)")
    run.add_argument("--loss", default="0",
                     help="random loss probability of data packets, e.g. 0.01 or 1%% "
                          "(default: 0)")
    run.add_argument("--duration", default="60s", type=_unit_type("time", "--duration"),
                     help="simulated time (default: 60s)")
    run.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    run.add_argument("--mode", default="packet",
                     help="engine: packet (every segment) or fluid (rates and a queue "
                          "level; see docs/fluid.md) (default: packet)")
    run.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                     help="a progress bar in simulated seconds (default: for packet runs "
                          f"of more than {LONG_RUN_PACKETS:,} expected packets)")
    stack = run.add_argument_group("TCP stack knobs (defaults: the stack's, docs/stack.md)")
    stack.add_argument("--stack", choices=("linux", "ns3", "ns2"),
                       help="the TCP stack around the window laws: current Linux (the "
                            "default), ns-3 3.44 or ns-2's agents")
    stack.add_argument("--mss", type=int, help="segment payload, bytes (1460)")
    stack.add_argument("--initial-window", type=float,
                       help="initial cwnd, segments (Linux, ns-3: 10)")
    stack.add_argument("--min-rto", type=_unit_type("time", "--min-rto"),
                       help="minimum retransmission timeout (Linux: 200ms)")
    stack.add_argument("--delayed-ack", action=argparse.BooleanOptionalAction, default=None,
                       help="acknowledge every second segment (Linux, ns-3: on)")
    stack.add_argument("--sack", action=argparse.BooleanOptionalAction, default=None,
                       help="receivers send SACK blocks (Linux, ns-3: on)")
    out = run.add_argument_group("output")
    out.add_argument("--plot", metavar="FILE", help="save cwnd, goodput and queue plots to FILE")
    out.add_argument("--json", action="store_true",
                     help="print scenario, summary and metrics as one JSON object")
    out.add_argument("--csv", metavar="FILE",
                     help="save the summary (Result.to_pandas(): one row per flow) as CSV")
    out.add_argument("--traces", metavar="FILE",
                     help="save the time series (time, flow, variable, value) as CSV")

    demo = commands.add_parser(
        "demo", help="the README's example: reno against a reno that starts at 10 s",
        description="Two Reno flows through a 10 Mbit/s, 20 ms, 1 BDP drop-tail dumbbell, "
                    "the second starting at 10 s; 60 s, seed 1. Prints the summary and "
                    "saves the plot.")
    demo.add_argument("--plot", metavar="FILE", default=DEMO_PLOT,
                      help=f"where to save the plot (default: {DEMO_PLOT})")

    matrix = commands.add_parser(
        "matrix", help="Esterhuizen & Krzesinski's pairwise matrix: every ordered pair of algorithms",
        description="Run every ordered pair of algorithms on a LAN-like dumbbell, the "
                    "second flow starting after the first, and print Esterhuizen & Krzesinski's Table I "
                    "(Mbit/s of the first and second flow) and the pairs whose outcome "
                    "depends on who starts first.")
    matrix.add_argument("--algorithms", nargs="+", metavar="NAME",
                        help="algorithms to pair")
    matrix.add_argument("--all", action="store_true",
                        help="pair every registered algorithm (many runs: without --all or "
                             "--algorithms the command says how many and stops)")
    matrix.add_argument("--bandwidth", default="100Mbps", type=_unit_type("rate", "--bandwidth"),
                        help="bottleneck rate")
    matrix.add_argument("--rtt", default="1ms", type=_unit_type("time", "--rtt"), help="two-way propagation delay")
    matrix.add_argument("--buffer", default="100",
                        help="bottleneck buffer (default 100 packets, a switch port's)")
    matrix.add_argument("--delay", default="10s", type=_unit_type("time", "--delay"),
                        help="start of the second flow")
    matrix.add_argument("--duration", default="60s", type=_unit_type("time", "--duration"),
                        help="simulated time per run")
    matrix.add_argument("--seed", type=int, default=1, help="random seed")
    matrix.add_argument("--csv", metavar="FILE", help="save the per-pair table as CSV")
    matrix.add_argument("--plot", metavar="FILE", help="save the heatmap to FILE")
    _spread(matrix)

    sweep = commands.add_parser(
        "sweep", help="run a grid of scenarios described in a TOML file",
        description="Run every combination of a TOML file's [grid] over its base scenario, "
                    "for each seed, in parallel; print one line per scenario. Exit status "
                    "1 if any scenario failed (its error is in the table).",
        epilog="The file: the base scenario at the top level (dumbbell keywords such as "
               "bandwidth = '10Mbps', or Scenario.to_toml()'s output), a [grid] table "
               "(keyword = [values]) and an optional [sweep] table (seeds, mode, timeout, "
               "validate).")
    sweep.add_argument("file", help="the sweep's TOML file")
    sweep.add_argument("--mode", help="engine: packet, fluid or both (default: the file's, "
                                      "else packet)")
    sweep.add_argument("--timeout", type=float, metavar="SECONDS",
                       help="wall-clock limit per scenario")
    sweep.add_argument("--validate", type=float, metavar="FRACTION",
                       help="with mode fluid: run this fraction of the scenarios (chosen at "
                            "random, the same for the same sweep) in the packet engine too, "
                            "and print how far the engines agree on them (default: the "
                            "file's, else none)")
    sweep.add_argument("--csv", metavar="FILE", help="save the table (one row per flow) as CSV")
    sweep.add_argument("--parquet", metavar="FILE",
                       help="save the table as Parquet (needs pyarrow)")
    sweep.add_argument("--no-progress", action="store_true", help="no progress bar")
    _spread(sweep)

    experiment = commands.add_parser(
        "experiment", help="run a published study's recipe and print it beside the paper",
        description="Run one recipe of ccsim.experiments with its defaults (derived from "
                    "the paper; see each function's docstring) and print its table and "
                    "its agreement with the paper.")
    experiment.add_argument("name", nargs="?", metavar="NAME",
                            help="the recipe ('ccsim experiment --list' names them)")
    experiment.add_argument("--list", action="store_true", help="list the recipes and exit")
    experiment.add_argument("--duration", type=_unit_type("time", "--duration"), help="simulated time per run (default: the "
                                               "recipe's)")
    experiment.add_argument("--mode", choices=["packet", "fluid"],
                            help="engine, for recipes that take one (default: packet)")
    experiment.add_argument("--csv", metavar="FILE", help="save the table as CSV")
    experiment.add_argument("--plot", metavar="FILE", help="save the recipe's figure to FILE")
    _spread(experiment)

    commands.add_parser("algorithms", help="list congestion-control algorithms and "
                                           "recovery strategies",
                        description="List the registered congestion-control algorithms "
                                    "with their default loss recovery, and the recovery "
                                    "strategies they can be combined with.")
    return parser


LONG_RUN_PACKETS = 600_000
"""Packets a bottleneck can carry in a run (rate × duration) above which
``ccsim run`` shows a progress bar: about 3 s of wall time at the packet
engine's 200,000 packets per second."""


def is_long_run(sc: Any, mode: str) -> bool:
    """Whether a run of ``sc`` is expected to take more than a few seconds:
    a packet run whose bottleneck can carry over ``LONG_RUN_PACKETS``."""
    packets = sc.links[sc.bottleneck].rate * sc.duration / (8 * sc.packet_size)
    return mode == "packet" and packets > LONG_RUN_PACKETS

def _spread(command: argparse.ArgumentParser) -> None:
    """``--workers`` and ``--store``, for commands that run many scenarios."""
    command.add_argument("--workers", type=int, metavar="N",
                         help="processes to run on (default: one per CPU)")
    command.add_argument("--store", metavar="FILE.sqlite",
                         help="keep results in this SQLite file as they finish; "
                              "running again skips what is already there")


_NEGATIVE = re.compile(r"-\.?\d")


def _attach_negative_values(parser: argparse.ArgumentParser, argv: list[str]) -> list[str]:
    """``--bandwidth -5Mbps`` → ``--bandwidth=-5Mbps``.

    argparse takes ``-5Mbps`` for an option and fails with "expected one
    argument"; attached, the value reaches ccsim's validation, which says what
    is wrong with it.
    """
    single = set()
    for action in parser._actions:  # the options of every subcommand
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                single.update(opt for a in sub._actions if a.nargs is None and a.option_strings
                              for opt in a.option_strings)
    out: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg in single and i + 1 < len(argv) and _NEGATIVE.match(argv[i + 1]):
            out.append(f"{arg}={argv[i + 1]}")
            i += 2
        else:
            out.append(arg)
            i += 1
    return out


def _refuse_repeats(parser: argparse.ArgumentParser, argv: list[str]) -> None:
    """Refuse an option given twice (``--flows reno --flows cubic``), where
    argparse would keep the last silently."""
    dests = {}
    for action in parser._actions:  # the options of every subcommand
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                dests.update({opt: a.dest for a in sub._actions for opt in a.option_strings})
    seen: dict[str, str] = {}
    for arg in argv:
        option = arg.split("=", 1)[0]
        dest = dests.get(option)
        if dest is None:
            continue
        if dest in seen:
            raise ScenarioError(option, "given twice", f"each option once; {option} takes all "
                                "its values together, e.g. '--flows reno cubic'"
                                if option == "--flows" else "each option once")
        seen[dest] = option


# -- quantities on the command line ------------------------------------------------
_UNIT_EXAMPLES = {"time": ("ms", "s", "ns, us, ms, s, min, h"),
                  "rate": ("Mbps", "Gbps", "bps, kbps, Mbps, Gbps, Bps, MB/s, mbit, ..."),
                  "size": ("B", "KB", "B, KB, MB, KiB, MiB, ..., or b for bits")}


def _bare_number(text: str) -> bool:
    """True for a plain number other than zero (``"20"``, ``"1e3"``), which a
    command line cannot say the unit of."""
    try:
        return float(text) != 0.0
    except ValueError:
        return False


def _require_unit(option: str, text: Any, kind: str) -> Any:
    """Refuse ``--rtt 20``: in Python a bare number is seconds (or bit/s,
    bytes), but typed on a command line it is as likely milliseconds, so the
    unit must be written. Zero needs none."""
    if isinstance(text, (int, float, str)) and not isinstance(text, bool) \
            and _bare_number(str(text)):
        a, b, units = _UNIT_EXAMPLES[kind]
        raise ScenarioError(option, text, f"a {kind} with its unit, such as '{text}{a}' or "
                                          f"'{text}{b}' (units: {units})",
                            "a bare number is refused on the command line")
    return text


def _unit_type(kind: str, option: str) -> Any:
    """An argparse ``type=`` that refuses a bare number for ``option``."""
    def convert(text: str) -> str:
        try:
            return _require_unit(option, text, kind)
        except ScenarioError as exc:  # argparse would print only "invalid value"
            raise argparse.ArgumentTypeError(str(exc)) from None
    convert.__name__ = kind  # argparse names the type in its own messages
    return convert


# -- scenario from arguments -------------------------------------------------------
_FLOW_FIELDS = ("start", "stop", "size", "rtt", "recovery", "overhead", "reverse")


def _settings(text: str, field: str) -> dict[str, Any]:
    """``"a=1,b=40ms"`` → ``{"a": 1, "b": "40ms"}``: numbers become numbers,
    true/false booleans, anything else stays a string for ccsim to parse."""
    out: dict[str, Any] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ScenarioError(field, item, "KEY=VALUE settings separated by commas, "
                                             "e.g. 'rtt=40ms,alpha=3'")
        out[key.strip()] = _value(value.strip())
    return out


def _value(text: str) -> Any:
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def _flow(spec: str) -> Any:
    """``NAME[@START][:KEY=VALUE,...]`` → a :class:`ccsim.Flow`. Keys ``start``,
    ``stop``, ``size``, ``rtt``, ``recovery``, ``overhead`` and ``reverse`` are the
    flow's; any other is
    a parameter of its algorithm (``vegas@10s:rtt=40ms,alpha=3``)."""
    from .scenario import Flow

    head, colon, rest = spec.partition(":")
    name, sep, start = head.partition("@")
    if sep and not start:
        raise ScenarioError("flow.start", spec, "NAME@START with a start time, e.g. 'vegas@10s'")
    settings = _settings(rest, "flow") if colon else {}
    fields = {k: settings.pop(k) for k in _FLOW_FIELDS if k in settings}
    for key, kind in (("start", "time"), ("stop", "time"), ("rtt", "time"),
                      ("overhead", "time"), ("size", "size")):
        if key in fields:
            _require_unit(f"flow.{key}", fields[key], kind)
    if sep:
        _require_unit("flow.start", start, "time")
        if "start" in fields:
            raise ScenarioError("flow.start", spec, "the start time once: NAME@START or start=")
        fields["start"] = start
    return Flow(name.strip().lower(), params=settings, **fields)


def _queue(spec: str, field: str = "--queue") -> tuple[str, dict[str, Any]]:
    """``"red:min_th=5,max_p=0.1"`` → ``("red", {"min_th": 5, "max_p": 0.1})``."""
    kind, colon, rest = spec.partition(":")
    return kind.strip().lower(), (_settings(rest, field) if colon else {})


def _scenario(args: argparse.Namespace) -> Any:
    import dataclasses

    from .scenario import dumbbell

    knobs = {name: getattr(args, name) for name in
             ("stack", "mss", "initial_window", "min_rto", "delayed_ack", "sack")
             if getattr(args, name) is not None}
    kind, queue_params = _queue(args.queue)
    sc = dumbbell(bandwidth=args.bandwidth, rtt=args.rtt, buffer=args.buffer,
                  queue=kind, loss=args.loss,
                  flows=[_flow(spec) for spec in args.flows], duration=args.duration,
                  seed=args.seed, **knobs)
    if queue_params:
        queue = sc.links[0].queue
        known = [f.name for f in dataclasses.fields(queue) if f.name not in ("limit", "unit")]
        for key in queue_params:
            if key not in known:
                raise ScenarioError("--queue", f"{kind}:{key}=...",
                                    f"parameters of {kind}: " + (", ".join(known) or "none")
                                    + "; its buffer is --buffer")
        sc = sc.replace(links=(dataclasses.replace(
            sc.links[0], queue=dataclasses.replace(queue, **queue_params)),))
    return sc


# -- output ---------------------------------------------------------------------------
def _missing(x: Any) -> bool:
    return x is None or x is pd.NA or (isinstance(x, float) and math.isnan(x))


def _seconds(x: float) -> str:
    """Times on the run's clock stay in seconds: ``"60 s"``, not ``"1 min"``."""
    return f"{x:.6g} s"


def _or_dash(fmt: Any) -> Any:
    return lambda x: "-" if _missing(x) else fmt(x)


def _rate_column(values: pd.Series) -> Any:
    """A formatter printing every rate in the unit that suits the column's largest."""
    top = values.abs().max()
    unit = format_rate(top).split()[-1] if not _missing(top) else "bit/s"
    scale = {"bit/s": 1.0, "kbit/s": 1e3, "Mbit/s": 1e6, "Gbit/s": 1e9, "Tbit/s": 1e12}[unit]
    return _or_dash(lambda x: f"{x / scale:.3f} {unit}")


def summary_table(summary: pd.DataFrame) -> str:
    """The summary as text: the real column names, values in readable units."""
    formatters = {
        "start": _or_dash(_seconds), "end": _or_dash(_seconds),
        "base_rtt": _or_dash(format_time), "mean_rtt": _or_dash(format_time),
        "fct": _or_dash(format_time), "goodput_bps": _rate_column(summary["goodput_bps"]),
        "share": _or_dash(lambda x: f"{x:.1%}"),
        "delivered_bytes": _or_dash(format_size),
    }
    return summary.to_string(formatters={k: v for k, v in formatters.items()
                                         if k in summary.columns}, na_rep="-")


def metrics_line(metrics: dict[str, Any]) -> str:
    """``over 10–60 s: utilisation 99.9%, Jain's index 0.999, UF 12.3%``."""
    def pct(x: Any) -> str:
        return "n/a" if _missing(x) else f"{x:.1%}"

    parts = [f"utilisation {pct(metrics.get('utilisation'))}"]
    if "reverse_utilisation" in metrics:  # two-way traffic: the other side too
        parts[0] += f" (reverse side {pct(metrics['reverse_utilisation'])})"
    def index(x: Any) -> str:
        return "n/a" if _missing(x) else f"{x:.3f}"

    parts.append(f"Jain's index {index(metrics.get('jain'))}")
    if "reverse_jain" in metrics:
        parts[-1] += f" (reverse side {index(metrics['reverse_jain'])})"
    if "uf" in metrics and not _missing(metrics["uf"]):
        parts.append(f"UF {metrics['uf']:.1f}%")
    text = ", ".join(parts)
    interval = metrics.get("interval")
    if interval is not None:
        t0, t1 = interval
        text = f"over {t0:.6g}–{_seconds(t1)}: " + text
    return text


def json_safe(x: Any) -> Any:
    """Plain JSON values: NaN/inf and pandas' NA → None, tuples → lists,
    numpy scalars and arrays → Python numbers and lists."""
    if isinstance(x, dict):
        return {str(k): json_safe(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [json_safe(v) for v in x]
    if isinstance(x, np.ndarray):
        return [json_safe(v) for v in x.tolist()]
    if isinstance(x, np.generic):
        x = x.item()
    if x is None or x is pd.NA or x is pd.NaT:
        return None
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, (str, int, float, bool)):
        return x
    return str(x)


def _header(res: Any) -> str:
    from .plot import describe

    return f"{describe(res)} · {_seconds(res.scenario.duration)}"


def _check_plot_path(path: str | None) -> None:
    """Fail before simulating, not after, when the plot cannot be written."""
    if path is None:
        return
    from matplotlib.backend_bases import FigureCanvasBase

    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise ScenarioError("--plot", path, "a file in an existing directory",
                            f"no directory {directory!r}")
    ext = os.path.splitext(path)[1].lstrip(".").lower()
    formats = FigureCanvasBase.get_supported_filetypes()
    if ext not in formats:
        raise ScenarioError("--plot", path, "a file name ending in one of: "
                            + ", ".join("." + f for f in sorted(formats)))


def _save_plot(res: Any, path: str) -> None:
    fig = res.plot()
    try:
        fig.savefig(path, dpi=PLOT_DPI)
    except OSError as exc:
        raise ScenarioError("--plot", path, "a file that can be written",
                            exc.strerror or str(exc)) from None
    except ValueError as exc:  # an image format matplotlib cannot write
        raise ScenarioError("--plot", path, "an image file name such as 'out.png'",
                            str(exc)) from None


def _report(res: Any) -> None:
    from .results import SCENARIO_COLUMNS

    print(_header(res))  # the scenario's parameters are in the header line
    print(summary_table(res.summary.drop(columns=list(SCENARIO_COLUMNS))))
    print(metrics_line(res.metrics))


# -- commands -------------------------------------------------------------------------
def _cmd_run(args: argparse.Namespace) -> int:
    from .run import run

    sc = _scenario(args)
    _check_plot_path(args.plot)
    _check_table_path("--csv", args.csv)
    _check_table_path("--traces", args.traces)
    progress = args.progress
    if progress is None:
        progress = is_long_run(sc, args.mode)
    res = run(sc, mode=args.mode, progress=progress)
    if args.json:
        doc = {"scenario": res.scenario.to_dict(),
               "summary": res.summary.reset_index().to_dict(orient="records"),
               "metrics": res.metrics}
        print(json.dumps(json_safe(doc), indent=2, allow_nan=False))
    else:
        _report(res)
    # with --json, stdout holds only the JSON document
    note = sys.stderr if args.json else sys.stdout
    if args.csv:
        res.to_pandas().to_csv(args.csv, index=False)
        print(f"summary saved to {args.csv}", file=note)
    if args.traces:
        res.traces.to_csv(args.traces, index=False)
        print(f"traces saved to {args.traces}", file=note)
    if args.plot:
        _save_plot(res, args.plot)
        print(f"plot saved to {args.plot}", file=note)
    return 0


def _cmd_demo(args: argparse.Namespace) -> int:
    from .run import run
    from .scenario import Flow, dumbbell

    sc = dumbbell(bandwidth="10Mbps", rtt="20ms", buffer="1BDP",
                  flows=["reno", Flow("reno", start="10s")], duration="60s", seed=1)
    _check_plot_path(args.plot)
    res = run(sc)
    _report(res)
    _save_plot(res, args.plot)
    print(f"plot saved to {args.plot}")
    return 0


def _cmd_algorithms(args: argparse.Namespace) -> int:
    from . import algorithms, recovery

    import inspect
    import shutil
    import textwrap

    rows = []
    for name in algorithms.names():
        cls = algorithms.get(name)
        # the docstring's first paragraph, whole: what the algorithm is and its source
        first = inspect.cleandoc(cls.__doc__ or "").split("\n\n")[0]
        rows.append((name, cls.recovery, _plain(" ".join(first.split()))))
    w_name = max([len("algorithm")] + [len(r[0]) for r in rows])
    w_rec = max([len("default recovery")] + [len(r[1]) for r in rows])
    indent = w_name + w_rec + 4
    width = max(60, min(shutil.get_terminal_size((100, 24)).columns, 120))
    print(f"{'algorithm':<{w_name}}  {'default recovery':<{w_rec}}  description")
    for name, rec, doc in rows:
        lines = textwrap.wrap(doc, width - indent, break_on_hyphens=False,
                              break_long_words=False) or [""]
        print(f"{name:<{w_name}}  {rec:<{w_rec}}  {lines[0]}".rstrip())
        for line in lines[1:]:
            print(" " * indent + line)
    print()
    print("recovery strategies: " + ", ".join(recovery.names()))
    print("combine them with Flow(algorithm, recovery=...)")
    return 0


PACKETS_PER_SECOND = 200_000
"""The packet engine's speed for time estimates, data packets per CPU-second
(benchmarks/README.md measures about 210,000 for Reno)."""


def _cmd_matrix(args: argparse.Namespace) -> int:
    from . import algorithms
    from .experiments import pairwise_matrix
    from .scenario import dumbbell
    from .units import parse_time

    if args.all and args.algorithms:
        raise ScenarioError("--all", "with --algorithms", "one of --all or --algorithms NAME ...")
    names = algorithms.names() if args.algorithms is None else args.algorithms
    delay, duration = parse_time(args.delay, "--delay"), parse_time(args.duration, "--duration")
    if delay >= duration:
        raise ScenarioError("--duration", args.duration,
                            f"a time after --delay={args.delay}, when the second flow starts")
    if args.algorithms is None and not args.all:
        sc = dumbbell(bandwidth=args.bandwidth, rtt=args.rtt, buffer=args.buffer,
                      duration=args.duration)
        runs = len(names) ** 2
        packets = sc.links[0].rate * sc.duration / (8 * sc.packet_size)
        workers = args.workers or os.cpu_count() or 1
        minutes = runs * packets / PACKETS_PER_SECOND / min(workers, runs) / 60
        print(f"ccsim matrix would run every ordered pair of the {len(names)} registered "
              f"algorithms: {runs} packet runs of {_seconds(sc.duration)} at "
              f"{format_rate(sc.links[0].rate)}, about {minutes:.0f} min on {workers} "
              f"worker{'s' * (workers != 1)}.", file=sys.stderr)
        print("Run it with --all, or pick some: --algorithms reno cubic vegas", file=sys.stderr)
        return 2
    _check_plot_path(args.plot)
    from .sweeps import SweepFailed, per_scenario

    try:
        res = pairwise_matrix(args.algorithms, bandwidth=args.bandwidth, rtt=args.rtt,
                              buffer=args.buffer, delay=args.delay, duration=args.duration,
                              seed=args.seed, progress=True, workers=args.workers,
                              store=args.store)
    except SweepFailed as exc:  # nothing to show but the failures
        runs = per_scenario(exc.table)
        for row in runs.itertuples():
            print(f"failed: scenario {row.scenario}: {row.error}", file=sys.stderr)
        print(f"error: every one of the {len(runs)} runs failed (first: "
              f"{runs.iloc[0].error})", file=sys.stderr)
        return 1
    print("Mbit/s of (started first, started second):")
    print(res.data["matrix"].to_string())
    order = res.data["start_order"]
    print()
    if order.empty:
        print("no pair depends on who starts first")
    else:
        print("pairs whose outcome depends on who starts first (a's share of the link):")
        print(order.to_string(index=False, float_format=lambda x: f"{x:.2f}"))
    failed = res.table[res.table["error"] != ""]
    for row in failed.itertuples():
        print(f"failed: {row.first} then {row.second}: {row.error}", file=sys.stderr)
    agreement = res.data["agreement"]
    if agreement == agreement:  # not NaN: some pairs are in the paper's table
        compared = int(res.table.paper_first_bps.notna().sum())
        print(f"\noutcome as in Esterhuizen & Krzesinski's Table I for {agreement:.0%} of {compared} pairs")
    print(f"\n{len(res.table)} runs in {res.data['wall_time']:.0f} s")
    _save_outputs(res, args)
    if len(failed) == len(res.table):
        print(f"error: every one of the {len(failed)} runs failed (first: "
              f"{failed.iloc[0].error})", file=sys.stderr)
        return 1
    return 0


def _save_outputs(res: Any, args: argparse.Namespace) -> None:
    """An experiment's table to ``--csv`` and its figure to ``--plot``, if asked."""
    if args.csv:
        res.table.to_csv(args.csv, index=False)
        print(f"table saved to {args.csv}")
    if args.plot:
        _save_plot(res, args.plot)
        print(f"plot saved to {args.plot}")


def _check_table_path(option: str, path: str | None) -> None:
    if path is not None and not os.path.isdir(os.path.dirname(os.path.abspath(path))):
        raise ScenarioError(option, path, "a file in an existing directory")


def _cmd_sweep(args: argparse.Namespace) -> int:
    import time

    from .sweeps import SweepFailed, per_scenario, sweep, to_parquet
    from .sweeps.spec import read_spec

    spec = read_spec(args.file)
    _check_table_path("--csv", args.csv)
    _check_table_path("--parquet", args.parquet)
    if args.parquet:
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            raise ScenarioError("--parquet", args.parquet, "pyarrow installed",
                                "pip install \"ccsim[parquet]\", or use --csv") from None
    started = time.perf_counter()
    validate = args.validate if args.validate is not None else spec.get("validate")
    try:
        table = sweep(spec["base"], spec["grid"], spec["seeds"], args.mode or spec["mode"],
                      workers=args.workers, store=args.store, progress=not args.no_progress,
                      timeout=args.timeout if args.timeout is not None else spec["timeout"],
                      validate=validate)
    except SweepFailed as exc:  # every scenario failed: shown as any failures are
        table = exc.table
    wall = time.perf_counter() - started
    view = per_scenario(table)
    if "share" in table.columns and len(view):  # each flow's share, by name, per run
        shares = (table.sort_values("flow").groupby(["scenario", "mode"], sort=False)
                  .apply(lambda g: " · ".join(
                      f"{a} {'–' if s != s else f'{s:.0%}'}"
                      for a, s in zip(g["algorithm"], g["share"])), include_groups=False)
                  .rename("shares"))
        view = view.join(shares, on=["scenario", "mode"])
    shown = ["scenario"] + table.attrs["ccsim.params"] + ["seed", "mode", "utilisation",
                                                          "jain", "shares", "error"]
    with pd.option_context("display.max_rows", 40, "display.width", 120):
        print(view[[c for c in shown if c in view.columns]].to_string(index=False, max_rows=40))
    failed = view[view["error"] != ""]
    print(f"\n{len(view)} scenarios, {len(failed)} failed, in {wall:.1f} s")
    if validate is not None:
        _print_agreement(table)
    for row in failed.itertuples():
        print(f"failed: scenario {row.scenario}: {row.error}", file=sys.stderr)
    if args.csv:
        table.to_csv(args.csv, index=False)
        print(f"table saved to {args.csv}")
    if args.parquet:
        to_parquet(table, args.parquet)  # grid tuples and mixed values intact
        print(f"table saved to {args.parquet}")
    return 1 if len(failed) else 0


def _print_agreement(table: pd.DataFrame) -> None:
    """The validated scenarios' gaps between the engines, one line per metric."""
    from .sweeps import agreement

    try:
        gaps = agreement(table)
    except ScenarioError:  # every validated scenario failed in one engine
        print("\nagreement with the packet engine: no scenario ran in both without error")
        return
    n = int(gaps["scenarios"].max())
    print(f"\nagreement with the packet engine on {n} validated scenario"
          f"{'s' if n != 1 else ''} (gap: median, 90th percentile, worst):")
    for metric, row in gaps.iterrows():
        if row["scenarios"]:
            print(f"  {metric:<12} {row['median']:7.1f} {row['p90']:7.1f} {row['worst']:7.1f}  "
                  f"{row['unit']} (worst: scenario {row['worst_scenario']})")
    weak = table[(table["mode"] == "fluid") & (table["fluid_warning"] != "")]
    if len(weak):
        print(f"  {weak['scenario'].nunique()} scenarios in regimes where the fluid model is "
              "weak: see the fluid_warning column")


def _plain(text: str) -> str:
    """reST roles and literals (``:func:`x```, ````x````) as their text."""
    return re.sub(r"``([^`]+)``", r"\1", re.sub(r":\w+:`~?([^`]+)`", r"\1", text))


def _first_sentence(doc: str) -> str:
    """A docstring's first sentence as plain text."""
    paragraph = _plain(" ".join(doc.split("\n\n", 1)[0].split()))
    match = re.match(r"(.+?[.?!])(\s|$)", paragraph)
    return match.group(1) if match else paragraph


def _cmd_experiment(args: argparse.Namespace) -> int:
    import inspect
    import time

    from .experiments import RECIPES, STUDIES

    if args.list:
        width = max(map(len, RECIPES))
        columns = shutil.get_terminal_size((100, 24)).columns
        for name, recipe in RECIPES.items():
            study, sentence = STUDIES[name], _first_sentence(inspect.getdoc(recipe))
            text = (sentence if sentence.startswith(study.split(",")[0])  # names it already
                    else f"{study}: {sentence[0].lower()}{sentence[1:]}")
            lines = textwrap.wrap(text, max(columns - width - 2, 40))
            print(f"{name:<{width}}  " + f"\n{'':<{width}}  ".join(lines))
        return 0
    if args.name not in RECIPES:
        raise ScenarioError("NAME", args.name, "one of: " + ", ".join(RECIPES))
    recipe = RECIPES[args.name]
    _check_plot_path(args.plot)
    _check_table_path("--csv", args.csv)
    options = {"duration": args.duration, "workers": args.workers, "store": args.store,
               "mode": args.mode}
    accepted = inspect.signature(recipe).parameters
    kwargs = {k: v for k, v in options.items() if v is not None and k in accepted}
    if args.mode and "mode" not in accepted:
        raise ScenarioError("--mode", args.mode, f"no --mode: {args.name} runs the packet "
                                                 "engine only")
    started = time.perf_counter()
    res = recipe(progress=True, **kwargs)
    print(res)
    print(f"\n{time.perf_counter() - started:.0f} s")
    _save_outputs(res, args)
    return 0


_COMMANDS = {"run": _cmd_run, "experiment": _cmd_experiment, "demo": _cmd_demo, "matrix": _cmd_matrix,
             "sweep": _cmd_sweep, "algorithms": _cmd_algorithms}


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``ccsim`` command line; returns the exit status.

    0 on success; 2 for bad input: argparse's usage errors, and ccsim's
    validation errors printed as ``ccsim: error: <message>`` without a
    traceback.
    """
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        args = parser.parse_args(_attach_negative_values(parser, argv))
    except SystemExit as exc:  # --help, --version, usage errors: argparse has printed
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    try:
        _refuse_repeats(parser, argv)
        return _COMMANDS[args.command](args)
    except CcsimError as exc:
        print(f"ccsim: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("ccsim: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # the reader went away (``ccsim run --json | head``): stop quietly, like
        # any Unix filter, and point stdout at /dev/null so that the flush at exit
        # does not raise again
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError, AttributeError):
            pass
        return 141  # 128 + SIGPIPE, what a shell reports for a filter cut short
