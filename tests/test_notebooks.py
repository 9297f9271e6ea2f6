"""Every notebook in notebooks/ runs top to bottom without an error.

Each is executed again in a fresh kernel with nbclient (600 s per cell), in a
scratch directory (whatever a notebook writes, hypothesis' database included,
stays out of notebooks/), with this checkout first on the kernel's PYTHONPATH
so it imports this ccsim. The stored notebooks carry their outputs, so they
read without running; every code cell that draws has a stored image.
"""

import os
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def test_there_are_notebooks():
    assert NOTEBOOKS, "notebooks/ holds no .ipynb"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_is_stored_with_outputs(path):
    nb = nbformat.read(path, as_version=4)
    code = [cell for cell in nb.cells if cell.cell_type == "code"]
    assert all(cell.get("execution_count") for cell in code), \
        f"{path.name}: store it executed, top to bottom"
    def draws(source):  # a figure-making call outside comments
        lines = [line.split("#")[0] for line in source.splitlines()]
        return any(".plot(" in line or "plt.show()" in line for line in lines)

    drawing = [cell for cell in code if draws(cell.source)]
    assert drawing, path.name
    for cell in drawing:
        assert any("image/png" in out.get("data", {}) for out in cell.outputs), \
            f"{path.name}: no stored figure for\n{cell.source[:200]}"


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs(path, monkeypatch, tmp_path):
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        [str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    monkeypatch.setenv("MPLBACKEND", "Agg")
    nb = nbformat.read(path, as_version=4)
    before = sorted(p.name for p in path.parent.iterdir())
    client = NotebookClient(nb, timeout=600, kernel_name="python3", allow_errors=False,
                            resources={"metadata": {"path": str(tmp_path)}})
    client.execute()  # raises CellExecutionError, naming the cell, on the first error
    assert sorted(p.name for p in path.parent.iterdir()) == before  # nothing left behind
