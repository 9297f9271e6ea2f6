"""Tests for the ccsim command line (ccsim.cli, python -m ccsim)."""

import matplotlib

matplotlib.use("Agg")

import json  # noqa: E402
import math  # noqa: E402
import re  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

import ccsim  # noqa: E402
from ccsim.cli import json_safe, main, metrics_line  # noqa: E402

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
SHORT = ["--duration", "3s"]


def no_nan(token):
    raise AssertionError(f"JSON contains {token}")


def run_json(capsys, *args):
    code = main(["run", *args, "--json"])
    out = capsys.readouterr().out
    assert code == 0
    return json.loads(out, parse_constant=no_nan)


def test_run_json(capsys):
    doc = run_json(capsys, "--flows", "reno", "reno@5s", "--duration", "10s")
    assert set(doc) == {"scenario", "summary", "metrics"}
    assert len(doc["summary"]) == 2
    assert [row["flow"] for row in doc["summary"]] == [0, 1]
    assert doc["summary"][1]["start"] == 5.0
    assert doc["summary"][0]["algorithm"] == "reno"
    assert doc["summary"][0]["fct"] is None  # NaN -> null
    # tuple -> list; all flows are active once the second opens (its start jitter)
    back = ccsim.Scenario.from_dict(doc["scenario"])
    opened = back.flow_start(1)
    assert 5.0 < opened < 5.0 + back.flow_rtt(1) and doc["metrics"]["interval"] == [opened, 10.0]
    assert 0 < doc["metrics"]["utilisation"] <= 1
    # the scenario round-trips
    sc = ccsim.Scenario.from_dict(doc["scenario"])
    assert sc.duration == 10.0 and sc.flows[1].start == 5.0


def test_run_defaults_are_the_documented_ones(capsys):
    doc = run_json(capsys, *SHORT)
    sc = ccsim.Scenario.from_dict(doc["scenario"])
    assert sc.links[0].rate == 10e6 and sc.path_rtt == pytest.approx(0.02)
    assert sc.links[0].queue == ccsim.DropTail(17)  # 1 BDP
    assert sc.links[0].loss == 0 and sc.seed == 0
    assert [f.algorithm for f in sc.flows] == ["reno", "reno"]


def test_run_options_reach_the_scenario(capsys):
    doc = run_json(capsys, "--flows", "newreno@0.5s", "--bandwidth", "5Mbps", "--rtt", "40ms",
                   "--buffer", "50", "--queue", "red", "--loss", "1%", "--seed", "7",
                   "--mss", "1000", "--initial-window", "4", "--min-rto", "1s",
                   "--delayed-ack", "--sack", *SHORT)
    sc = ccsim.Scenario.from_dict(doc["scenario"])
    link = sc.links[0]
    assert link.rate == 5e6 and sc.path_rtt == pytest.approx(0.04)
    assert isinstance(link.queue, ccsim.RED) and link.queue.limit == 50
    assert link.loss == pytest.approx(0.01) and sc.seed == 7
    assert sc.flows[0].algorithm == "newreno" and sc.flows[0].start == 0.5
    assert (sc.mss, sc.initial_window, sc.min_rto) == (1000, 4.0, 1.0)
    assert sc.delayed_ack is True and sc.sack is True


def test_run_prints_table_and_metrics(capsys):
    assert main(["run", "--flows", "reno", "newreno@1s", *SHORT]) == 0
    out = capsys.readouterr().out
    for column in ("algorithm", "goodput_bps", "share", "retransmits", "timeouts"):
        assert column in out
    assert "Mbit/s" in out and "newreno" in out
    last = out.strip().splitlines()[-1]
    assert "utilisation" in last and "Jain's index" in last
    assert "10 Mbit/s" in out.splitlines()[0]  # the scenario header


def test_metrics_line():
    line = metrics_line({"utilisation": 0.9512, "jain": 0.98765, "uf": 12.34,
                         "interval": (10.0, 60.0)})
    assert line == "over 10–60 s: utilisation 95.1%, Jain's index 0.988, UF 12.3%"
    assert "UF" not in metrics_line({"utilisation": 0.5, "jain": math.nan})
    assert "Jain's index n/a" in metrics_line({"utilisation": 0.5, "jain": math.nan})


def test_run_plot_writes_png(capsys, tmp_path):
    out = tmp_path / "run.png"
    assert main(["run", "--flows", "reno", *SHORT, "--plot", str(out)]) == 0
    assert out.read_bytes().startswith(PNG_MAGIC)
    assert out.stat().st_size > 10_000
    assert str(out) in capsys.readouterr().out


def test_run_plot_with_json_keeps_stdout_json(capsys, tmp_path):
    out = tmp_path / "run.png"
    assert main(["run", "--flows", "reno", *SHORT, "--plot", str(out), "--json"]) == 0
    captured = capsys.readouterr()
    json.loads(captured.out)
    assert str(out) in captured.err
    assert out.read_bytes().startswith(PNG_MAGIC)


def error_of(capsys, *argv):
    code = main(list(argv))
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    return code, captured


def test_negative_bandwidth_is_a_ccsim_error(capsys):
    code, captured = error_of(capsys, "run", "--bandwidth", "-5Mbps", *SHORT)
    assert code == 2
    assert captured.err.startswith("ccsim: error: ")
    assert "bandwidth" in captured.err and "-5Mbps" in captured.err
    assert captured.out == ""


def test_unknown_algorithm_suggests(capsys):
    code, captured = error_of(capsys, "run", "--flows", "renoo", *SHORT)
    assert code == 2
    assert "algorithm" in captured.err and "renoo" in captured.err
    assert "did you mean 'reno'" in captured.err


@pytest.mark.parametrize("argv, field", [
    (["--flows", "reno@20s"], "start"),
    (["--flows", "reno@"], "start"),
    (["--flows", "reno@soon"], "flow.start"),
    (["--loss", "2"], "loss"),
    (["--loss", "often"], "loss"),
    (["--rtt", "20Mbps"], "rtt"),
    (["--buffer", "0"], "buffer"),
    (["--duration", "-1s"], "duration"),
    (["--min-rto", "0"], "min_rto"),
    (["--mode", "warp"], "mode"),
])
def test_bad_values_name_the_field(capsys, argv, field):
    code, captured = error_of(capsys, "run", "--duration", "10s", *argv)
    assert code == 2
    assert captured.err.startswith("ccsim: error: ")
    assert field in captured.err


def test_unwritable_plot_fails_before_simulating(capsys, tmp_path):
    code, captured = error_of(capsys, "run", *SHORT, "--plot", str(tmp_path / "no" / "x.png"))
    assert code == 2 and "--plot" in captured.err
    assert captured.out == ""  # nothing was run or printed
    code, captured = error_of(capsys, "run", *SHORT, "--plot", str(tmp_path / "x.nope"))
    assert code == 2 and ".png" in captured.err


@pytest.mark.parametrize("argv", [[], ["fly"], ["run", "--seed", "one"], ["run", "--flows"]])
def test_usage_errors_exit_2(capsys, argv):
    code, captured = error_of(capsys, *argv)
    assert code == 2
    assert "usage: ccsim" in captured.err


def test_help_and_version(capsys):
    assert main(["--help"]) == 0
    assert "run" in capsys.readouterr().out
    assert main(["run", "--help"]) == 0
    assert "--bandwidth" in capsys.readouterr().out
    assert main(["--version"]) == 0
    assert ccsim.__version__ in capsys.readouterr().out


def test_demo_writes_png_in_cwd(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    png = tmp_path / "ccsim-demo.png"
    assert png.read_bytes().startswith(PNG_MAGIC)
    assert "ccsim-demo.png" in out
    assert "seed 1" in out and "goodput_bps" in out and "Jain's index" in out
    table = [line.split() for line in out.splitlines() if line[:1] in ("0", "1")]
    assert [row[1] for row in table] == ["reno", "reno"]
    assert table[1][3] == "10"  # start "10 s"


def test_algorithms_lists_names_and_recovery(capsys):
    assert main(["algorithms"]) == 0
    out = capsys.readouterr().out
    rows = {line.split()[0]: line.split()[1] for line in out.splitlines()[1:] if line
            and not line.startswith(("recovery", "combine", " "))}
    assert rows == {name: ccsim.algorithms.get(name).recovery
                    for name in ccsim.algorithms.names()}
    assert "recovery strategies: " + ", ".join(ccsim.recovery.names()) in out


def test_json_safe():
    doc = json_safe({"a": (1, np.float64(2.5)), "b": math.nan, "c": np.int64(3),
                     "d": math.inf, "e": pd.NA, "f": [None, True], 4: np.array([1.0, np.nan])})
    assert doc == {"a": [1, 2.5], "b": None, "c": 3, "d": None, "e": None,
                   "f": [None, True], "4": [1.0, None]}
    assert type(doc["c"]) is int
    json.dumps(doc, allow_nan=False)


@pytest.mark.slow
def test_python_dash_m():
    proc = subprocess.run([sys.executable, "-m", "ccsim", "algorithms"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and "reno" in proc.stdout
    proc = subprocess.run([sys.executable, "-m", "ccsim", "run", "--flows", "renoo"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.startswith("ccsim: error: ") and "Traceback" not in proc.stderr


def test_matrix_exits_non_zero_when_every_run_failed(scratch_registry, capsys):
    # Before, a matrix whose every run raised printed a table of "failed" and exited 0.
    from ccsim.algorithms import register
    from ccsim.algorithms.reno import Reno

    @register
    class Broken(Reno):
        name = "broken-on-ack"

        def on_ack(self, ack):
            raise RuntimeError("this law always fails")

    code = main(["matrix", "--algorithms", "broken-on-ack", "--duration", "2s", "--delay",
                 "1s", "--workers", "1", "--bandwidth", "1Mbps"])
    assert code == 1
    assert "every one of the 1 runs failed" in capsys.readouterr().err


# -- a newcomer's first hour -------------------------------------------------------------
FLUID = ["--mode", "fluid", "--duration", "3s"]


def test_algorithm_names_in_any_case(capsys):
    doc = run_json(capsys, "--flows", "Vegas", "RENO", *FLUID)
    assert [row["algorithm"] for row in doc["summary"]] == ["vegas", "reno"]


@pytest.mark.parametrize("text, bps", [("10mbit", 10e6), ("100kbit", 100e3), ("1gbit", 1e9),
                                       ("10Mbit", 10e6)])
def test_tc_style_rates(capsys, text, bps):
    doc = run_json(capsys, "--bandwidth", text, "--buffer", "20", "--flows", "reno", *FLUID)
    assert doc["scenario"]["links"][0]["rate"] == bps


def test_tc_byte_rate_is_refused_with_a_hint(capsys):
    code, captured = error_of(capsys, "run", "--bandwidth", "10mbps", *FLUID)
    assert code == 2
    assert "bandwidth='10mbps'" in captured.err and "'10mbit'" in captured.err
    assert "bytes per second" in captured.err


def test_per_flow_rtt_recovery_and_parameters(capsys):
    doc = run_json(capsys, "--flows", "vegas@1s:rtt=40ms,alpha=3,beta=5",
                   "cubic:recovery=sack", *FLUID)
    vegas, cubic = doc["scenario"]["flows"]
    assert vegas["start"] == 1.0 and vegas["rtt"] == 0.04
    assert vegas["params"] == {"alpha": 3, "beta": 5}
    assert cubic["recovery"] == "sack"
    assert doc["summary"][0]["base_rtt"] == 0.04 and doc["summary"][1]["recovery"] == "sack"


@pytest.mark.parametrize("spec, field", [("vegas:alpha", "flow"), ("vegas:gamma2=1", "flow.params"),
                                         ("vegas@:rtt=5ms", "flow.start")])
def test_bad_flow_settings_name_the_field(capsys, spec, field):
    code, captured = error_of(capsys, "run", "--flows", spec, *FLUID)
    assert code == 2 and f"{field}" in captured.err


def test_queue_and_its_parameters(capsys):
    doc = run_json(capsys, "--queue", "RED:min_th=3,max_th=9,max_p=0.1,gentle=true",
                   "--buffer", "30", *FLUID)
    q = doc["scenario"]["links"][0]["queue"]
    assert q["kind"] == "red" and (q["min_th"], q["max_th"], q["max_p"], q["gentle"]) == \
        (3, 9, 0.1, True)
    assert q["limit"] == 30
    code, captured = error_of(capsys, "run", "--queue", "red:limit=5", *FLUID)
    assert code == 2 and "min_th, max_th" in captured.err and "--buffer" in captured.err
    code, captured = error_of(capsys, "run", "--queue", "fifo", *FLUID)
    assert code == 2 and "'codel', 'droptail', 'dualpi2', 'fq', 'fq_codel', 'pie', 'red'" in captured.err


def test_csv_and_traces(capsys, tmp_path):
    summary, traces = tmp_path / "s.csv", tmp_path / "t.csv"
    assert main(["run", "--flows", "reno", "cubic", *FLUID, "--csv", str(summary),
                 "--traces", str(traces)]) == 0
    table = pd.read_csv(summary)
    assert list(table["algorithm"]) == ["reno", "cubic"]
    assert {"bandwidth", "rtt", "buffer", "goodput_bps"} <= set(table.columns)
    tr = pd.read_csv(traces)
    assert list(tr.columns) == ["time", "flow", "variable", "value"]
    assert set(tr["variable"]) >= {"cwnd", "queue"}


@pytest.mark.slow
def test_json_into_a_closed_pipe_is_quiet():
    # head reads one line and closes the pipe; ccsim must not print a traceback
    cmd = (f"{sys.executable} -m ccsim run --flows reno --mode fluid --duration 60s --json "
           "--traces /dev/stdout | head -n 1")
    proc = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, timeout=120)
    assert proc.stdout == "{\n"
    assert "Traceback" not in proc.stderr and "BrokenPipe" not in proc.stderr, proc.stderr


def test_matrix_without_arguments_says_what_it_would_do(capsys):
    code = main(["matrix"])
    captured = capsys.readouterr()
    assert code == 2 and captured.out == ""
    n = len(ccsim.algorithms.names())
    assert f"{n * n} packet runs" in captured.err and "--all" in captured.err
    assert " min on " in captured.err


@pytest.mark.slow
def test_matrix_cells_read_first_slash_second(capsys):
    assert main(["matrix", "--algorithms", "reno", "cubic", "--duration", "4s", "--delay", "1s",
                 "--bandwidth", "10Mbps", "--buffer", "50", "--workers", "1"]) == 0
    out = capsys.readouterr().out
    cells = [c for c in out.split() if c == "/"]
    assert len(cells) == 4  # four ordered pairs, each "a / b"
    assert "," not in out.split("started second")[1].split("\n\n")[0]


def test_duration_too_short_for_a_flow_is_an_error(capsys):
    code, captured = error_of(capsys, "matrix", "--algorithms", "reno", "--duration", "5s")
    assert code == 2 and "--duration='5s'" in captured.err and "--delay" in captured.err
    code, captured = error_of(capsys, "run", "--flows", "reno", "vegas@70s", "--duration", "60s")
    assert code == 2 and "flows[1].start=70.0" in captured.err


@pytest.mark.parametrize("columns", ["60", "80", "120"])
def test_algorithms_prints_whole_descriptions(capsys, monkeypatch, columns):
    import inspect

    monkeypatch.setenv("COLUMNS", columns)  # wraps at the terminal's width: no word split
    assert main(["algorithms"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    for name in ccsim.algorithms.names():
        first = inspect.cleandoc(ccsim.algorithms.get(name).__doc__).split("\n\n")[0]
        assert " ".join(first.replace("``", "").split()) in out, name  # literals as text


def test_per_flow_overhead_and_direction(capsys):
    doc = run_json(capsys, "--flows", "reno:overhead=1.2ms", "reno:reverse=true",
                   "--duration", "1s")
    first, second = doc["scenario"]["flows"]
    assert first["overhead"] == pytest.approx(0.0012) and "overhead" not in second
    assert second["reverse"] is True and "reverse" not in first
    assert doc["metrics"]["reverse_utilisation"] > 0  # the reverse flow's data went
    assert main(["run", "--flows", "reno", "reno:reverse=true", "--duration", "1s"]) == 0
    out = capsys.readouterr().out
    assert "utilisation" in out and out.count("(reverse side ") == 2  # utilisation, Jain


@pytest.mark.parametrize("command, argv, option", [
    ("run", ["--rtt", "20"], "--rtt"),
    ("run", ["--duration", "5"], "--duration"),
    ("run", ["--bandwidth", "10"], "--bandwidth"),
    ("run", ["--min-rto", "1"], "--min-rto"),
    ("run", ["--flows", "reno@3", "reno"], "flow.start"),
    ("run", ["--flows", "reno:rtt=40", "reno"], "flow.rtt"),
    ("run", ["--flows", "reno:size=100000", "reno"], "flow.size"),
    ("matrix", ["--algorithms", "reno", "cubic", "--delay", "10"], "--delay"),
    ("experiment", ["kwon", "--duration", "10"], "--duration"),
])
def test_a_bare_number_for_a_time_rate_or_size_is_refused(capsys, command, argv, option):
    # In Python a bare number is seconds; typed as `--rtt 20` it is as likely
    # milliseconds (it meant a 16,667-packet buffer), so the unit is required.
    code, captured = error_of(capsys, command, *argv)
    assert code == 2
    assert option in captured.err and "with its unit" in captured.err
    assert captured.out == ""  # refused before anything ran


def test_zero_needs_no_unit_and_units_are_accepted(capsys):
    # zero is the same in every unit; the refusal is only for ambiguous numbers
    rows = run_json(capsys, "--flows", "reno@0", "reno:rtt=30ms", "--rtt", "20ms",
                    "--duration", "1s", "--loss", "0")
    assert len(rows["summary"]) == 2
    sc = ccsim.Scenario.from_dict(rows["scenario"])
    assert sc.flows[1].rtt == 0.03 and sc.links[0].loss == 0.0


@pytest.mark.parametrize("argv, option", [
    (["--flows", "reno", "--flows", "cubic"], "--flows"),
    (["--rtt", "20ms", "--rtt=30ms"], "--rtt"),
])
def test_an_option_given_twice_is_refused_not_overwritten(capsys, argv, option):
    # argparse keeps the last silently: `--flows reno --flows cubic` ran cubic alone
    code, captured = error_of(capsys, "run", "--duration", "1s", *argv)
    assert code == 2 and f"{option}='given twice'" in captured.err
    assert captured.out == ""


def test_a_sweep_file_names_a_misspelt_keyword_before_a_missing_one(capsys, tmp_path):
    # `bandwith` used to surface as "dumbbell() missing ... 'bandwidth'"
    spec = tmp_path / "sweep.toml"
    spec.write_text('bandwith = "10Mbps"\nrtt = "20ms"\nduration = "1s"\n[grid]\nseed = [1, 2]\n')
    code, captured = error_of(capsys, "sweep", str(spec))
    assert code == 2
    assert "bandwith='10Mbps'" in captured.err and "did you mean 'bandwidth'?" in captured.err


@pytest.mark.parametrize("content, where", [(b'a = "\xff"\n', "byte 5 is not UTF-8"),
                                            (b"a = " + b"[" * 5000, "nested too deeply")])
def test_a_sweep_file_that_does_not_parse_says_where(capsys, tmp_path, content, where):
    spec = tmp_path / "sweep.toml"
    spec.write_bytes(content)
    code, captured = error_of(capsys, "sweep", str(spec))
    assert code == 2 and "sweep file=" in captured.err and where in captured.err


RECOVERY_WORDS = {"Reno fast recovery": "reno", "PRR recovery": "prr", "SACK recovery": "sack",
                  "NewReno recovery": "newreno", "Vegas recovery": "vegas",
                  "FACK recovery": "fack", "Rate-Halving recovery": "rate-halving",
                  "Tahoe's recovery": "tahoe"}


def test_algorithms_descriptions_name_the_recovery_their_column_gives(capsys):
    # `ccsim algorithms` said "Reno fast recovery" for vegas, pseudo-rate and
    # hybla, whose recovery column said vegas, vegas and prr
    assert main(["algorithms"]) == 0
    out = capsys.readouterr().out
    text = {}
    name = None
    for line in out.splitlines()[1:]:
        if not line or line.startswith(("recovery strategies", "combine")):
            continue
        if not line.startswith(" "):
            name = line.split()[0]
            text[name] = " ".join(line.split()[2:])
        else:
            text[name] += " " + line.strip()
    assert "``" not in out and ":func:" not in out  # plain text, not reST
    for name, description in text.items():
        named = {rec for words, rec in RECOVERY_WORDS.items() if words in description}
        assert named <= {ccsim.algorithms.get(name).recovery}, (name, description)


def test_experiment_list_names_each_study_in_plain_whole_sentences(capsys, monkeypatch):
    from ccsim.experiments import RECIPES, STUDIES

    monkeypatch.setenv("COLUMNS", "80")
    assert main(["experiment", "--list"]) == 0
    out = capsys.readouterr().out
    assert "``" not in out and ":func:" not in out
    assert set(STUDIES) == set(RECIPES)
    entries = {}
    for line in out.splitlines():
        if not line.startswith(" "):
            name = line.split()[0]
            entries[name] = line[len(name):].strip()
        else:
            entries[name] += " " + line.strip()
    assert set(entries) == set(RECIPES)
    for name, text in entries.items():
        assert text.startswith(STUDIES[name].split(",")[0]), name  # the study, named
        assert text.endswith((".", "?")), name  # a whole sentence, not cut mid-way
    assert max(map(len, out.splitlines())) <= 80


def test_recipe_figures_print_as_lines_not_raw_dicts():
    from ccsim.experiments._result import readable

    text = readable({"biased": 0.75, "uf_rank": {2: 0.4, 4: math.nan}})
    assert text.splitlines() == ["", "  biased: 0.75", "  uf_rank:", "    2: 0.4", "    4: –"]
    assert "{" not in text and readable(0.68751) == " 0.688"


def test_print_of_a_recipes_result_is_its_whole_report():
    # print(r) in a script: the report the command prints, every column and
    # row of the table (not pandas' "..." nor the dataclass's repr)
    import pandas as pd

    from ccsim.experiments._result import ExperimentResult

    table = pd.DataFrame({f"column_{i}": [0.123456 * i] * 70 for i in range(14)})
    r = ExperimentResult("a study (Someone 1999)", table,
                         data={"agreement": {"same winner": 0.75}})
    text = str(r)
    assert text.splitlines()[0] == "a study (Someone 1999)"
    assert "..." not in text and "ExperimentResult(" not in text
    assert all(f"column_{i}" in text for i in range(14)) and text.count("0.123") == 70
    assert text.endswith("agreement with the paper:\n  same winner: 0.75")


def test_sweep_prints_each_flows_share(capsys, tmp_path):
    spec = tmp_path / "sweep.toml"
    spec.write_text('bandwidth = "10Mbps"\nrtt = "20ms"\nflows = ["reno", "cubic"]\n'
                    'duration = "1s"\n[grid]\nbuffer = [10, 40]\n')
    assert main(["sweep", str(spec), "--workers", "1", "--no-progress"]) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if "reno" in line and "cubic" in line]
    assert len(rows) == 2
    for line in rows:
        reno, cubic = (int(x) for x in re.findall(r"(?:reno|cubic) (\d+)%", line))
        assert 99 <= reno + cubic <= 101  # the shares of one run, rounded
