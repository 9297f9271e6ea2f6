"""Code blocks in docs/ run as printed.

Each ```python block of a page runs in a fresh namespace, in order, so a page
reads top to bottom as a session would. Pages join ``PAGES`` as they are made
self-contained (the first-hour polish brings the rest)."""

import re
from pathlib import Path

import matplotlib
import pytest

matplotlib.use("Agg")

DOCS = Path(__file__).resolve().parent.parent / "docs"
PAGES = ["fluid.md", "algorithms.md", "engine.md"]


def blocks(page: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", (DOCS / page).read_text(encoding="utf-8"), re.S)


@pytest.mark.parametrize("page", PAGES)
def test_every_code_block_runs(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # anything a block writes stays out of the checkout
    found = blocks(page)
    assert found, f"docs/{page} has no python blocks"
    namespace: dict = {}
    for i, code in enumerate(found):
        exec(compile(code, f"docs/{page} block {i + 1}", "exec"), namespace)
