"""The README's two commands are the ones that work, and CI runs the second."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def _commands() -> list[str]:
    section = README.split("## Two commands", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```bash\n(.*?)\n```", section, flags=re.S)


def test_readme_gives_exactly_two_commands():
    assert _commands() == ['pip install . && ccsim demo',
                           'pip install ".[test]" && python -m pytest -n auto']


def test_ci_runs_the_readme_test_command():
    ci = (ROOT / ".ci" / "run").read_text()
    install, test = _commands()[1].split(" && ")
    assert install.startswith("pip install") and '".[test]"' in install
    assert 'pip install --quiet ".[test]"' in ci
    assert f"&& {test}" in ci  # the same runner, after the same install


@pytest.mark.slow
def test_readme_demo_runs(tmp_path):
    # `ccsim demo` is the console script for `python -m ccsim demo`.
    assert _commands()[0].endswith("ccsim demo")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg"}
    out = subprocess.run([sys.executable, "-m", "ccsim", "demo"], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=300, check=True).stdout
    png = tmp_path / "ccsim-demo.png"
    assert png.exists() and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "reno" in out and "Jain" in out


@pytest.mark.slow
def test_readme_example_runs(monkeypatch):
    # DESIGN.md's five lines, as the README shows them: every doc starts there.
    monkeypatch.setenv("MPLBACKEND", "Agg")
    example = re.search(r"```python\n(.*?)\n```", README, flags=re.S).group(1)
    assert "ccsim.dumbbell(" in example and "ccsim.run(sc)" in example
    scope: dict = {}
    exec(compile(example, "README.md", "exec"), scope)
    summary = scope["res"].summary
    assert list(summary["algorithm"]) == ["reno", "vegas"]
    assert summary["share"].sum() == pytest.approx(1.0)
