"""Esterhuizen & Krzesinski's pairwise matrix recipe and its command."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

import ccsim
from ccsim.algorithms import CongestionControl
from ccsim.algorithms import registry as algorithm_registry
from ccsim.cli import main
from ccsim.experiments import pairwise_matrix
from ccsim.scenario.stacks import STACKS
from ccsim.experiments.pairwise import TABLE_I, outcome, paper_agreement

SMALL = dict(bandwidth="10Mbps", rtt="5ms", buffer=50, delay="2s", duration="6s")


@pytest.fixture(scope="module")
def small():
    return pairwise_matrix(["reno", "cubic", "scalable"], **SMALL)


@pytest.mark.slow
def test_every_ordered_pair_once(small):
    t = small.table
    assert len(t) == 9 and not t.duplicated(["first", "second"]).any()
    assert (t["error"] == "").all()
    assert t[["first_bps", "second_bps"]].gt(0).all().all()


def test_matrix_is_table_one_layout(small):
    # Row started first, column second, cell "first / second" in Mbit/s (Esterhuizen & Krzesinski, Table I).
    m = small.data["matrix"]
    for r in small.table.itertuples():
        a, b = (int(x) for x in m.loc[r.first, r.second].split(" / "))
        assert a == round(r.first_bps / 1e6) and b == round(r.second_bps / 1e6)


def test_start_order_table_follows_its_definition(small):
    # An algorithm's share while both run, first vs second, differing by > 0.15.
    share = {(r.first, r.second): r.first_share for r in small.table.itertuples()}
    expected = set()
    for (a, b), s in share.items():
        if a < b and abs(s - (1 - share[b, a])) > 0.15:
            expected.add((a, b))
    got = set(zip(small.data["start_order"]["a"], small.data["start_order"]["b"]))
    assert got == expected


def test_same_scenario_the_flows_would_get_from_run(small):
    # Each cell is an ordinary run of the documented scenario: each flow
    # counting as its law did in the 2011 kernels (CUBIC segments but its
    # Reno-friendly estimate per ACK, Reno ACKs and a step per cwnd + 1 of them).
    sc = ccsim.dumbbell("10Mbps", "5ms", buffer=50, duration="6s", seed=1,
                        flows=[ccsim.Flow("cubic", ack_counting="segments",
                                          params={"friendly_per_ack": True}),
                               ccsim.Flow("reno", start="2s", ack_counting="acks",
                                          params={"extra_ack": True})])
    res = ccsim.run(sc)
    row = small.table.set_index(["first", "second"]).loc["cubic", "reno"]
    assert row.first_bps == res.summary.loc[0, "goodput_bps"]
    assert row.second_bps == res.summary.loc[1, "goodput_bps"]


def test_a_failing_run_keeps_the_others(scratch_registry):
    @algorithm_registry.register
    class Broken(CongestionControl):
        name = "broken"

        def on_ack(self, ack):
            raise ZeroDivisionError("broken window law")

    res = pairwise_matrix(["reno", "broken"], **SMALL)
    failed = res.table[res.table["error"] != ""]
    assert len(failed) == 3 and all("ZeroDivisionError" in e for e in failed["error"])
    ok = res.table.set_index(["first", "second"]).loc["reno", "reno"]
    assert ok.error == "" and ok.first_bps > 0
    assert res.data["matrix"].loc["broken", "reno"] == "failed"


def test_unknown_algorithm_fails_before_any_run():
    with pytest.raises(ccsim.UnknownAlgorithmError):
        pairwise_matrix(["reno", "cubicc"], **SMALL)


def test_matrix_command(tmp_path, capsys):
    csv = tmp_path / "pairs.csv"
    code = main(["matrix", "--algorithms", "reno", "newreno", "--bandwidth", "10Mbps",
                 "--rtt", "5ms", "--buffer", "50", "--delay", "1s", "--duration", "3s",
                 "--csv", str(csv), "--plot", str(tmp_path / "m.png")])
    out = capsys.readouterr().out
    assert code == 0
    assert "started first" in out and "4 runs in" in out
    assert "Esterhuizen & Krzesinski's Table I for" in out and "of 1 pairs" in out  # only reno-reno is in it
    table = pd.read_csv(csv)
    assert len(table) == 4 and set(table["first"]) == {"reno", "newreno"}
    assert (tmp_path / "m.png").stat().st_size > 0
    assert not math.isnan(table["first_share"].iloc[0])


PAPER_TEXT = Path(__file__).parents[2] / "shared" / "seeds" / "000_91321bb5f5dd1384.txt"


@pytest.mark.skipif(not PAPER_TEXT.exists(), reason="Esterhuizen & Krzesinski's text (../shared/seeds/) is not beside the repository")
def test_table_i_is_transcribed_from_the_paper():
    # Read Table I's header and rows straight from the paper's text; compare every cell.
    text = PAPER_TEXT.read_text().splitlines()
    header_line = next(line for line in text if line.startswith("| | Vegas |"))
    header = [c.strip().lower() for c in header_line.split("|")[2:-2]]
    lines = [line for line in text
             if line.startswith("| ") and line.split("|")[1].strip().lower() in header
             and "," in line.split("|")[2]]
    assert len(header) == 12 and len(lines) == 12
    for line in lines:
        cells = [c.strip() for c in line.split("|")[1:-1]]
        row = cells[0].lower()
        for column, cell in zip(header, cells[1:13]):
            first, second = (int(x) for x in cell.split(","))
            assert TABLE_I[row][column] == (first, second), (row, column)


def test_outcome_and_agreement():
    assert list(outcome([70, 35, 55], [30, 65, 45])) == ["first", "second", "shared"]
    seed = pd.DataFrame([
        {"first": a, "second": b, "first_bps": f * 1e6, "second_bps": s * 1e6,
         "paper_first_bps": f * 1e6, "paper_second_bps": s * 1e6, "error": ""}
        for a, row in TABLE_I.items() for b, (f, s) in row.items()])
    assert paper_agreement(seed) == 1.0  # the paper agrees with itself
    swapped = seed.assign(first_bps=seed.second_bps, second_bps=seed.first_bps)
    shared = outcome(seed.first_bps, seed.second_bps) == "shared"
    assert paper_agreement(swapped) == pytest.approx(shared.mean())  # only ties survive a swap


def test_small_matrix_reports_the_paper_figures(small):
    t = small.table.set_index(["first", "second"])
    assert t.loc[("reno", "cubic"), "paper_first_bps"] == 54e6  # Table I: Reno 54, CUBIC 49
    assert t.loc[("cubic", "scalable"), "paper_second_bps"] == 77e6
    assert 0.0 <= small.data["agreement"] <= 1.0


@pytest.mark.slow
def test_start_order_vegas_loses_whoever_starts_first():
    # Esterhuizen & Krzesinski §IV: Illinois started first keeps more of the link,
    # "with the exception of Westwood and Vegas, whose mean throughput remains
    # the same regardless of the order"; against Vegas, Illinois takes almost all.
    from ccsim.experiments import start_order

    res = start_order([("illinois", "vegas")], mode="fluid", duration="30s", delay="5s",
                      workers=1)
    row = res.table.iloc[0]
    assert row.a_share_when_first > 0.8 and row.a_share_when_second > 0.8
    assert not row.depends and not row.paper_depends
    assert res.data["agreement"] == 1.0
    runs = res.data["runs"].set_index(["first", "second"])["first_share"]
    assert row.a_share_when_second == pytest.approx(1 - runs["vegas", "illinois"])


@pytest.mark.slow
def test_matrix_takes_any_registered_names_veno_included():
    # Esterhuizen (2012) adds Veno to the matrix: not in Table I, so no paper figure.
    m = pairwise_matrix(["veno", "reno"], mode="fluid", duration="20s", delay="5s",
                        workers=1)
    assert m.data["matrix"].shape == (2, 2)
    assert m.table.set_index(["first", "second"]).paper_first_bps.isna()[("veno", "reno")]


def test_reno_takes_the_link_from_vegas_whoever_starts_first():
    # Table I: Reno against Vegas is 94 / 9 with Reno first and 9 / 94 with Vegas
    # first: Reno fills the buffer, which Vegas reads as congestion and backs off.
    # 20 s, not SMALL's 6: with the 2011 counter's extra ACK, Reno started first
    # (seed 1) halves twice as Vegas starts and has only 4 s to win back, 48 % of the
    # link at 6 s (74 % without the extra ACK); over 20 s it takes 76 % (30 s: 79 %)
    res = pairwise_matrix(["reno", "vegas"], **dict(SMALL, duration="20s"))
    t = res.table.set_index(["first", "second"])
    # beyond the 60 % an outcome needs, short of Table I's 91 %: a 20 s run on a
    # 10 Mbit/s path is not the paper's LAN
    assert t.first_share["reno", "vegas"] > 0.7
    assert t.first_share["vegas", "reno"] < 0.3
    mixed = res.table[res.table["first"] != res.table["second"]]
    assert paper_agreement(mixed) == 1.0  # both mixed cells have Table I's winner


def test_recipes_and_command_share_the_documented_buffer():
    # The docstring's reasoning (the switch port, not a sender's txqueuelen) sets
    # 100 packets; the two recipes and `ccsim matrix` must not drift apart.
    import inspect

    from ccsim.cli import build_parser
    from ccsim.experiments import start_order

    for recipe in (pairwise_matrix, start_order):
        assert inspect.signature(recipe).parameters["buffer"].default == 100
    args = build_parser().parse_args(["matrix"])
    assert ccsim.dumbbell("100Mbps", "1ms", buffer=args.buffer).links[0].queue.limit == 100
    assert "100-packet" in ccsim.experiments.pairwise.__doc__


@pytest.mark.slow
def test_the_matrix_figure_has_room_for_its_title_and_colour_bar_label():
    # `ccsim matrix --algorithms reno cubic scalable --plot` wrote a 390 x 330 px
    # image with the title and the colour bar's label cut off
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from ccsim.cli import PLOT_DPI

    res = pairwise_matrix(("reno", "cubic", "scalable"), duration="12s", delay="2s",
                          mode="fluid")
    fig = res.plot()
    FigureCanvasAgg(fig)
    fig.set_dpi(PLOT_DPI)
    width, height = fig.get_size_inches() * PLOT_DPI
    assert width >= 600 and height >= 450
    renderer = fig.canvas.get_renderer()
    box = fig.bbox
    texts = [fig.axes[0].title, fig.axes[1].yaxis.label]
    for text in texts:
        extent = text.get_window_extent(renderer)
        assert text.get_text()
        assert box.x0 - 1 <= extent.x0 and extent.x1 <= box.x1 + 1, text.get_text()
        assert box.y0 - 1 <= extent.y0 and extent.y1 <= box.y1 + 1, text.get_text()


class _Captured(Exception):
    pass


def _scenarios_of(monkeypatch, recipe, *args, **kwargs):
    """The scenarios a recipe hands to sweep (the runs themselves are not needed)."""
    from ccsim.experiments import pairwise

    seen = []

    def capture(scenarios, **_):
        seen.extend(scenarios)
        raise _Captured

    monkeypatch.setattr(pairwise, "sweep", capture)
    with pytest.raises(_Captured):
        recipe(*args, **kwargs)
    return seen


def test_flows_count_as_the_2011_kernels_did(monkeypatch):
    # Restated from the 2011 modules (2.6.3x–3.2): H-TCP, Illinois and YeAH's fast
    # mode add pkts_acked to snd_cwnd_cnt; CUBIC and BIC scale by their measured ACK
    # ratio; every other Table I law grows through Reno's per-ACK
    # tcp_cong_avoid_ai / tcp_slow_start, or counts per call as it does; every
    # slow start but YeAH's own (in the law) is tcp_slow_start's, per ACK.
    per_segment = {"htcp": "acks-in-slow-start", "illinois": "acks-in-slow-start",
                   "cubic": "acks-in-slow-start", "bic": "acks-in-slow-start",
                   "yeah": "segments"}
    names = list(TABLE_I)
    scs = _scenarios_of(monkeypatch, pairwise_matrix, names, **SMALL)
    assert len(scs) == len(names) ** 2
    for sc in scs:
        for flow in sc.flows:
            want = per_segment.get(flow.algorithm, "acks")
            assert flow.ack_counting == want, (flow.algorithm, flow.ack_counting)
            # CUBIC's Reno-friendly estimate alone counted ACKs (ca->ack_cnt++ before 4.1);
            # Scalable's TCP_SCALABLE_AI_CNT was 50 ACKs (100 segments since 5.7)
            assert dict(flow.params).get("friendly_per_ack", False) == (flow.algorithm == "cubic")
            assert dict(flow.params).get("a") == (0.02 if flow.algorithm == "scalable" else None)
            # YeAH's slow start and Reno mode stepped per ACK, its fast mode per segment
            assert dict(flow.params).get("reno_per_ack", False) == (flow.algorithm == "yeah")
            # tcp_cong_avoid_ai (Reno, Westwood+, TCP-LP, YeAH's Reno mode) stepped on the
            # ACK after snd_cwnd_cnt reached w; Scalable and YeAH's fast mode compared
            # the counter with ">" after counting: one ACK more per step in all five
            assert dict(flow.params).get("extra_ack", False) == (
                flow.algorithm in ("reno", "westwood", "lp", "scalable", "yeah"))
    # a law outside Table I keeps the stack's counting, and the switch turns it off
    veno = _scenarios_of(monkeypatch, pairwise_matrix, ["veno", "reno"], **SMALL)
    assert [f.ack_counting for f in veno[0].flows] == [None, None]  # the pair veno, veno
    off = _scenarios_of(monkeypatch, pairwise_matrix, ["reno", "htcp"],
                        ack_counting_2011=False, **SMALL)
    assert all(f.ack_counting is None for sc in off for f in sc.flows)
    mainline = _scenarios_of(monkeypatch, pairwise_matrix, ["cubic"], ack_counting_2011=False,
                             **SMALL)
    assert [dict(f.params) for f in mainline[0].flows] == [{}, {}]


def test_fluid_matrix_keeps_the_stacks_counting(monkeypatch):
    # The fluid engine refuses per-ACK growth under delayed ACKs: no override there.
    scs = _scenarios_of(monkeypatch, pairwise_matrix, ["reno", "cubic"], mode="fluid", **SMALL)
    assert all(f.ack_counting is None and "friendly_per_ack" not in f.params
               for sc in scs for f in sc.flows)


def test_params_reach_every_flow_of_that_law(monkeypatch):
    scs = _scenarios_of(monkeypatch, pairwise_matrix, ["westwood", "reno"],
                        params={"westwood": {"jiffy": 0.01}}, **SMALL)
    # the recipe's own 2011 parameters (tcp_cong_avoid_ai's extra ACK) stay beside them
    for sc in scs:
        for flow in sc.flows:
            want = {"jiffy": 0.01} if flow.algorithm == "westwood" else {}
            assert dict(flow.params) == {**want, "extra_ack": True}, (flow.algorithm, flow.params)
    with pytest.raises(ccsim.errors.ScenarioError, match="params.*cubic"):
        pairwise_matrix(["westwood", "reno"], params={"cubic": {"beta": 0.7}}, **SMALL)


def test_westwood_reads_the_2011_kernels_estimated_clock(monkeypatch):
    # CONFIG_HZ = 250, the recipe's documented estimate: one jiffy is 4 ms
    # (1/250 s), whatever the law's own default; a user's params override it.
    from ccsim.experiments.pairwise import LINUX_2011_PARAMS

    assert LINUX_2011_PARAMS == {"westwood": {"jiffy": 1 / 250}}
    scs = _scenarios_of(monkeypatch, pairwise_matrix, ["westwood", "reno"], **SMALL)
    assert len(scs) == 4
    for sc in scs:  # beside the 2011 counter's extra ACK (packet engine)
        for flow in sc.flows:
            want = {"jiffy": 0.004} if flow.algorithm == "westwood" else {}
            assert dict(flow.params) == {**want, "extra_ack": True}, (flow.algorithm, flow.params)
    fluid = _scenarios_of(monkeypatch, pairwise_matrix, ["westwood"], mode="fluid", **SMALL)
    assert [dict(f.params) for f in fluid[0].flows] == [{"jiffy": 0.004}] * 2
    # no Westwood in the pairs: no parameters for it, and no error
    assert all("jiffy" not in dict(f.params) for sc in
               _scenarios_of(monkeypatch, pairwise_matrix, ["reno"], **SMALL) for f in sc.flows)


def test_the_2011_recovery_is_an_option(monkeypatch):
    # Linux 2.6.x-3.1 (before PRR in 3.2): tcp_cwnd_down in fast recovery, and
    # tcp_cong_avoid ran before tcp_fastretrans_alert, gated off in Recovery
    # (tcp_may_raise_cwnd), so the ACK that ended a recovery never reached the
    # law. The recipe keeps the stack's (PRR, the exit ACK) unless asked.
    names = ["reno", "bic", "newreno"]
    default = _scenarios_of(monkeypatch, pairwise_matrix, names, **SMALL)
    assert all(f.recovery is None for sc in default for f in sc.flows)
    assert all(sc.exit_ack is None for sc in default)
    old = _scenarios_of(monkeypatch, pairwise_matrix, names, recovery_2011=True, **SMALL)
    for sc in old:
        assert sc.exit_ack is False
        for flow in sc.flows:
            # a preset (Reno's law with NewReno recovery) keeps its own
            want = None if flow.algorithm == "newreno" else "linux-rate-halving"
            assert flow.recovery == want, (flow.algorithm, flow.recovery)
    mine = _scenarios_of(monkeypatch, pairwise_matrix, ["reno"], recovery_2011=True,
                         exit_ack=True, **SMALL)
    assert mine[0].exit_ack is True  # a knob passed wins
    fluid = _scenarios_of(monkeypatch, pairwise_matrix, ["reno"], recovery_2011=True,
                          mode="fluid", **SMALL)
    assert fluid[0].flows[0].recovery is None and fluid[0].exit_ack is None


def test_lp_keeps_linux_threshold_at_an_early_indication(monkeypatch):
    # tcp_lp_pkts_acked (2011 and mainline) sets snd_cwnd alone at an early
    # congestion indication: the recipe runs on the "linux" stack, whose
    # profile gives LP that rule in both engines, and a user's params win.
    assert STACKS["linux"].params["lp"]["eci_ssthresh"].value is False
    for mode in ("packet", "fluid"):
        scs = _scenarios_of(monkeypatch, pairwise_matrix, ["lp", "reno"], mode=mode, **SMALL)
        for sc in scs:  # (test_stacks: the profile's params reach the built law)
            assert sc.stack == "linux"
            assert all("eci_ssthresh" not in dict(f.params) for f in sc.flows)
    mine = _scenarios_of(monkeypatch, pairwise_matrix, ["lp"],
                         params={"lp": {"eci_ssthresh": True}}, **SMALL)
    assert [dict(f.params)["eci_ssthresh"] for f in mine[0].flows] == [True, True]
