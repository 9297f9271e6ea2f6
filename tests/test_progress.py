"""ccsim.run(..., progress=True): a bar in simulated seconds, on standard
error, that changes no result."""

from __future__ import annotations

import pytest

import ccsim
from ccsim.errors import ScenarioTypeError


@pytest.mark.parametrize("mode", ["packet", "fluid"])
def test_progress_shows_a_bar_in_simulated_seconds_and_changes_nothing(mode, capsys):
    sc = ccsim.dumbbell("10Mbps", "20ms", flows=["reno", "cubic"], duration="5s")
    quiet = ccsim.run(sc, mode=mode)
    assert capsys.readouterr().err == ""  # silent by default
    shown = ccsim.run(sc, mode=mode, progress=True)
    err = capsys.readouterr().err
    assert "5.0/5.0 s simulated" in err  # the bar reached the end, in simulated seconds
    assert shown.summary.equals(quiet.summary)
    assert shown.traces.equals(quiet.traces)


def test_progress_must_be_a_bool():
    sc = ccsim.dumbbell("10Mbps", "20ms", flows=["reno"], duration="1s")
    with pytest.raises(ScenarioTypeError, match="progress"):
        ccsim.run(sc, progress="yes")


def test_the_cli_shows_a_bar_for_long_runs_and_not_for_short_ones(capsys):
    from ccsim.cli import LONG_RUN_PACKETS, main

    # 10 Mbit/s for 2 s: 1,667 packets, far below the threshold: no bar.
    assert main(["run", "--flows", "reno", "--bandwidth", "10Mbps", "--duration", "2s"]) == 0
    assert "simulated" not in capsys.readouterr().err
    # 1 Gbit/s for 10 s is 833,000 packets: a long packet run (not in the fluid engine).
    from ccsim.cli import is_long_run
    long = ccsim.dumbbell("1Gbps", "20ms", flows=["reno"], duration="10s")
    assert 1e9 * 10 / (8 * 1500) > LONG_RUN_PACKETS
    assert is_long_run(long, "packet") and not is_long_run(long, "fluid")
    assert not is_long_run(long.replace(duration=5.0), "packet")  # 417,000 packets
    # --progress forces the bar on a short run (kept short so the test is quick)
    assert main(["run", "--flows", "reno", "--bandwidth", "10Mbps", "--duration", "2s",
                 "--progress"]) == 0
    assert "2.0/2.0 s simulated" in capsys.readouterr().err


def test_no_widget_warning_without_ipywidgets(monkeypatch, capsys):
    # tqdm.auto in a notebook without ipywidgets warns (TqdmWarning: IProgress not
    # found); ccsim falls back to the text bar instead
    import sys
    import warnings

    monkeypatch.setitem(sys.modules, "ipywidgets", None)  # import fails
    sc = ccsim.dumbbell("1Mbps", "20ms", flows=["reno"], duration="1s")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ccsim.run(sc, progress=True)
    assert "1.0/1.0 s simulated" in capsys.readouterr().err  # the text bar, drawn
