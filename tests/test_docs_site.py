"""The documentation site builds with Sphinx, warnings as errors, and has the
pages it promises: the guide, the notes, the notebooks, the API reference and
the algorithm catalogue generated from the registry."""

import subprocess
import sys
from pathlib import Path

import pytest

import ccsim

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_sphinx_builds_without_warnings(tmp_path):
    out = tmp_path / "html"
    proc = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b",
                           "html", str(ROOT / "docs"), str(out)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    for page in ("index", "guide", "engine", "fluid", "seeds", "testing", "api", "l4s",
                 "_generated/catalogue", "_generated/notebooks/vegas_vs_reno"):
        assert (out / f"{page}.html").exists(), page
    catalogue = (out / "_generated" / "catalogue.html").read_text(encoding="utf-8")
    for name in ccsim.algorithms.names():  # every registered law, with its figure
        assert f"{name}.png" in catalogue, name
        assert (out / "_images" / f"{name}.png").exists(), name
    for name in ccsim.recovery.names():
        assert f"{name} (recovery)" in catalogue, name
    assert "<td><p><code class=\"docutils literal notranslate\"><span class=\"pre\">alpha</span>" \
        in catalogue  # Vegas' parameters, from its signature
    api = (out / "api.html").read_text(encoding="utf-8")
    assert "ccsim.dumbbell" in api and "ccsim.Result" in api
    notebook = (out / "_generated" / "notebooks" / "vegas_vs_reno.html").read_text(
        encoding="utf-8")
    assert "<img" in notebook  # stored outputs are rendered, not re-executed
