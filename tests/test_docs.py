"""Every python block in docs/*.md and README.md runs as printed.

Each ```python block runs in a fresh namespace (a block is self-contained:
it imports what it uses and builds what it needs), as a script would
(``__name__ == "__main__"``). The blocks of one page run in order in one
scratch directory, so a block may read a file an earlier block of the page
wrote (a sweep's store), as a reader following the page would.

Blocks that are not meant to run (printed output, a replay script) use a
different fence: ```{code-block} python with a caption saying what they
are; a test keeps them rare.
"""

import re
from pathlib import Path

import matplotlib
import pytest

matplotlib.use("Agg")

ROOT = Path(__file__).resolve().parent.parent
PAGES = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "docs").glob("*.md")) \
    + ["README.md"]
RUN = re.compile(r"^```python\n(.*?)^```", re.S | re.M)
NOT_RUN = re.compile(r"^```\{code-block\} python", re.M)


def blocks(page: str) -> list[str]:
    return RUN.findall((ROOT / page).read_text(encoding="utf-8"))


def test_every_page_is_covered():
    assert "docs/guide.md" in PAGES and "docs/testing.md" in PAGES and "README.md" in PAGES
    with_code = [p for p in PAGES if blocks(p)]
    assert len(with_code) >= 5


def test_blocks_that_do_not_run_are_rare_and_captioned():
    for page in PAGES:
        text = (ROOT / page).read_text(encoding="utf-8")
        skipped = NOT_RUN.findall(text)
        assert len(skipped) <= max(1, len(blocks(page)) // 3), page
        for match in re.finditer(r"^```\{code-block\} python\n(.*?)\n", text, re.M):
            assert match.group(1).startswith(":caption:"), (page, match.group(0))
        # no other fence hides python from the test
        assert not re.search(r"^```(py|python3|pycon)\s*$", text, re.M), page


@pytest.mark.slow
@pytest.mark.parametrize("page", [p for p in PAGES if blocks(p)])
def test_every_code_block_runs(page, tmp_path, monkeypatch, scratch_registry,
                               scratch_recovery_registry):
    # scratch registries: an algorithm or strategy a page registers stays with it
    monkeypatch.chdir(tmp_path)  # anything a block writes stays out of the checkout
    monkeypatch.setenv("MPLBACKEND", "Agg")
    for i, code in enumerate(blocks(page)):
        namespace = {"__name__": "__main__"}
        exec(compile(code, f"{page} block {i + 1}", "exec"), namespace)
