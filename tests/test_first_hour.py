"""docs/first-hour.md: its shell steps are the ones CI runs, and what its prose
says of each run is what the run gives (test_docs only runs the blocks)."""

from __future__ import annotations

import configparser
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGE = (ROOT / "docs" / "first-hour.md").read_text(encoding="utf-8")


def _python_blocks() -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", PAGE, flags=re.S | re.M)


def _run(block: str) -> dict:
    scope: dict = {"__name__": "__main__"}
    exec(compile(block, "docs/first-hour.md", "exec"), scope)  # noqa: S102 — our own page
    return scope


def test_shell_steps_are_the_readmes_and_the_extras_exist():
    # test_readme runs `ccsim demo`; .ci/run installs with `pip install ".[test]"`
    steps = re.findall(r"```bash\n(.*?)\n```", PAGE, flags=re.S)
    assert steps == ["pip install .\nccsim demo"]
    extras = configparser.ConfigParser()
    extras.read(ROOT / "setup.cfg")
    named = set(re.findall(r'pip install "\.\[(\w+)\]"', PAGE))
    assert named and named <= set(extras["options.extras_require"])


@pytest.mark.slow
def test_a_larger_buffer_leaves_vegas_less(monkeypatch, tmp_path, capsys):
    # Step 3's answer: Vegas's share falls as the buffer grows (Mo et al. 1999).
    monkeypatch.chdir(tmp_path)
    block = next(b for b in _python_blocks() if "for buffer in" in b)
    _run(block)
    shares = [int(s) for s in re.findall(r"Vegas takes (\d+)%", capsys.readouterr().out)]
    assert len(shares) == 3 and shares[0] > shares[1] > shares[2], shares


@pytest.mark.slow
def test_aimd_takes_about_three_quarters(monkeypatch, tmp_path, scratch_registry):
    # Step 5's prose: with losses at the same overflows, windows go as
    # a/(1 - b): 2/0.3 against 1/0.5, a share of 0.77. The tolerance is the
    # gap between that model and random losses' square-root one (0.66).
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    block = next(b for b in _python_blocks() if "class Aimd" in b)
    scope = _run(block.replace("print(ccsim.run(sc)", "res = (ccsim.run(sc)"))
    share = scope["res"]["share"].iloc[1]
    synchronised = (2 / 0.3) / (2 / 0.3 + 1 / 0.5)
    assert synchronised - 0.11 < share < synchronised + 0.08, share
