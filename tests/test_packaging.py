"""Packaging and the README's promises: one version, metadata in setup.cfg,
speed figures that match the benchmarks they quote."""

import ast
import configparser
import subprocess
import sys
import re
import tomllib
from pathlib import Path

import pytest

import ccsim

ROOT = Path(__file__).resolve().parents[1]


def test_version_has_one_source():
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg")
    assert cfg["metadata"]["version"] == "attr: ccsim._version.__version__"
    # what setuptools reads: the literal in that file, without importing ccsim
    (literal,) = [node.value.value for node in ast.parse((ROOT / "ccsim/_version.py").read_text()).body
                  if isinstance(node, ast.Assign) and node.targets[0].id == "__version__"]
    assert literal == ccsim.__version__
    assert re.fullmatch(r"\d+\.\d+\.\d+\S*", ccsim.__version__)
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "project" not in pyproject  # no second copy of the metadata
    assert pyproject["build-system"]["build-backend"] == "setuptools.build_meta"


def test_ci_and_docs_dependencies_are_declared():
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg")
    extras = cfg["options.extras_require"]
    test = extras["test"]
    for needed in ("pytest", "hypothesis", "nbclient", "sphinx", "myst-nb", "ruff", "pyarrow",
                   "xarray", "dask[distributed]"):
        assert needed in test, needed
    assert "sphinx" in extras["docs"] and "ipywidgets" in extras["notebook"]
    # the optional extras the error messages of to_parquet and to_xarray name
    assert "pyarrow" in extras["parquet"] and "xarray" in extras["xarray"]
    assert "scipy" in cfg["options"]["install_requires"]  # used: fluid draws, sweep intervals


def test_slow_marker_is_registered():
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    markers = pyproject["tool"]["pytest"]["ini_options"]["markers"]
    assert any(m.startswith("slow:") for m in markers)
    tox = (ROOT / "tox.ini").read_text()
    assert '-m "not slow"' in tox and "[testenv:full]" in tox and "[testenv:docs]" in tox


def test_readme_speed_figures_are_the_benchmarks():
    readme = (ROOT / "README.md").read_text()
    speed = readme.split("## Speed", 1)[1].split("\n## ", 1)[0]
    bench = (ROOT / "benchmarks" / "README.md").read_text()
    figures = re.findall(r"\d[\d,.]*\d×?|\d×?", " ".join(speed.split()))
    assert len(figures) > 10
    for figure in figures:
        assert figure in bench, f"README's {figure!r} is not in benchmarks/README.md"
    # the date, the machine and the command travel with the figures
    dates = re.findall(r"\d{4}-\d{2}-\d{2}", speed)
    assert dates and all(d in bench for d in dates) and "2-core" in speed
    assert "benchmarks/packet_engine.py" in speed


@pytest.mark.slow
def test_importing_ccsim_leaves_plotting_and_clusters_for_later():
    # Plots, Dask and xarray are imported when used, not with ccsim: matplotlib
    # alone adds about 40,000 objects that every garbage collection of a
    # packet run then walks (the benchmark dumbbell ran 11 % slower with it).
    code = ("import sys, ccsim; print(sorted(m for m in ('matplotlib', 'dask', "
            "'distributed', 'xarray') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=Path(__file__).resolve().parents[1])
    assert out.stdout.strip() == "[]"


def test_every_jupyter_command_the_docs_give_is_installed_by_the_notebook_extra():
    # A reader who follows the notebooks' README must get working commands:
    # each `jupyter <sub>` it names comes from a package in ccsim[notebook].
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg")
    extra = cfg["options.extras_require"]["notebook"]
    provider = {"lab": "jupyterlab", "nbconvert": "nbconvert", "notebook": "notebook",
                "execute": "nbclient"}
    texts = [ROOT / "README.md", ROOT / "notebooks" / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    named = {(path.name, sub) for path in texts
             for sub in re.findall(r"jupyter[ -](\w+)", path.read_text())}
    assert ("README.md", "lab") in named and ("README.md", "nbconvert") in named
    for where, sub in sorted(named):
        assert sub in provider, f"{where} names `jupyter {sub}`, which no known package provides"
        assert provider[sub] in extra, f"{where} names `jupyter {sub}`; ccsim[notebook] lacks {provider[sub]}"
    assert "ipykernel" in extra  # a kernel to run them with
    notebooks_readme = (ROOT / "notebooks" / "README.md").read_text()
    assert 'pip install ".[notebook]"' in notebooks_readme
