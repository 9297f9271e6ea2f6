"""The documentation site builds with Sphinx, warnings as errors, and has the
pages it promises: the guide, the notes, the notebooks, the API reference and
the algorithm catalogue generated from the registry; and it reads well in a
real browser at 1280 px (Chromium through Selenium, where installed)."""

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import ccsim

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The site, built once for this module's tests."""
    out = tmp_path_factory.mktemp("site") / "html"
    proc = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b",
                           "html", str(ROOT / "docs"), str(out)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


@pytest.mark.slow
def test_sphinx_builds_without_warnings(site):
    out = site
    for page in ("index", "guide", "engine", "fluid", "studies", "testing", "api", "l4s",
                 "_generated/catalogue", "_generated/notebooks/vegas_vs_reno"):
        assert (out / f"{page}.html").exists(), page
    catalogue = (out / "_generated" / "catalogue.html").read_text(encoding="utf-8")
    for name in ccsim.algorithms.names():  # every registered law, with its figure
        assert f"{name}.png" in catalogue, name
        assert (out / "_images" / f"{name}.png").exists(), name
    assert "packet engine" in catalogue  # drawn by the reference engine
    for name in ccsim.recovery.names():
        assert f"{name} (recovery)" in catalogue, name
    assert "<td><p><code class=\"docutils literal notranslate\"><span class=\"pre\">alpha</span>" \
        in catalogue  # Vegas' parameters, from its signature
    api = (out / "api.html").read_text(encoding="utf-8")
    assert "ccsim.dumbbell" in api and "ccsim.Result" in api
    assert "ccsim.experiments.pairwise_matrix" in api  # the recipes are in the reference
    notebook = (out / "_generated" / "notebooks" / "vegas_vs_reno.html").read_text(
        encoding="utf-8")
    assert "<img" in notebook  # stored outputs are rendered, not re-executed
    landing = (out / "index.html").read_text(encoding="utf-8")
    text = re.sub(r"<[^>]+>", "", landing)  # highlighting splits the words into spans
    assert "pip install ." in text and "landing.png" in landing  # install, example, figure
    assert (out / "_images" / "landing.png").exists()


def _browser():
    """A headless Chromium at 1280 x 900 px, or a skip saying what is missing."""
    webdriver = pytest.importorskip("selenium.webdriver",
                                    reason="selenium is not installed (pip install selenium)")
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if not chromium or not driver:
        pytest.skip("Chromium and its driver are not installed "
                    "(Debian: apt-get install chromium chromium-driver)")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1280,900",
                "--allow-file-access-from-files"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    from selenium.webdriver.chrome.service import Service

    return webdriver.Chrome(options=options, service=Service(driver))


OVERFLOWS = """
const column = document.querySelector('div.content') || document.querySelector('article')
               || document.body;
const right = column.getBoundingClientRect().right;
const scrollsInside = el => {
  for (let a = el.parentElement; a && a !== column; a = a.parentElement) {
    const x = getComputedStyle(a).overflowX;
    if ((x === 'auto' || x === 'scroll') && a.getBoundingClientRect().right <= right + 1) {
      return true;
    }
  }
  return false;
};
const out = [];
for (const el of column.querySelectorAll('div.highlight, pre, table, div.table-wrapper, img')) {
  const box = el.getBoundingClientRect();
  if (box.width > 0 && box.right > right + 1 && !scrollsInside(el)) {
    out.push(el.tagName + '.' + el.className + ' ' + Math.round(box.right - right) + ' px');
  }
}
return out;
"""
"""Code blocks, tables and images whose box reaches past the content column
(furo's ``div.content``) without a scrolling container inside the column to
hold them: a wide block must scroll in the column, not spill out of it."""

BROKEN_IMAGES = """
return Array.from(document.images)
  .filter(img => !(img.complete && img.naturalWidth > 0))
  .map(img => img.getAttribute('src'));
"""


@pytest.mark.slow
def test_every_page_reads_cleanly_in_a_browser(site):
    browser = _browser()
    pages = sorted(p for p in site.rglob("*.html")
                   if not any(part.startswith("_") and part not in ("_generated",)
                              for part in p.relative_to(site).parts[:-1])
                   and p.name not in ("genindex.html", "search.html"))
    assert len(pages) >= 10
    problems = []
    try:
        for page in pages:
            browser.get(page.as_uri())
            name = page.relative_to(site).as_posix()
            errors = [e["message"] for e in browser.get_log("browser") if e["level"] == "SEVERE"]
            problems += [f"{name}: console: {m}" for m in errors]
            problems += [f"{name}: overflows its column: {o}"
                         for o in browser.execute_script(OVERFLOWS)]
            problems += [f"{name}: image does not load: {src}"
                         for src in browser.execute_script(BROKEN_IMAGES)]
    finally:
        browser.quit()
    assert not problems, "\n".join(problems)


def test_every_recipe_is_in_the_api_reference():
    api = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    from ccsim.experiments import RECIPES

    for recipe in RECIPES.values():
        assert f"ccsim.experiments.{recipe.__name__}" in api, recipe.__name__


def test_the_docs_cite_nothing_outside_the_repository():
    # docs/fluid.md cited "DESIGN.md", a file a reader of the site cannot open
    for page in sorted((ROOT / "docs").glob("*.md")):
        text = page.read_text(encoding="utf-8")
        for name in ("DESIGN.md", "FLUID-NOTES.md", "STYLE.md", "../shared"):
            assert name not in text, (page.name, name)
