"""Sphinx configuration for ccsim's documentation site.

Why Sphinx: autodoc reads the API reference from the docstrings the code
already has (Google style, through napoleon), a small extension generates the
algorithm catalogue from the registry at build time, and myst-nb reads the
existing Markdown pages and the stored notebooks as they are, so there is one
source for each page. Build: ``sphinx-build -W -b html docs docs/_build/html``.
"""

import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS.parent))  # this checkout's ccsim
sys.path.insert(0, str(DOCS / "_ext"))

import ccsim  # noqa: E402

project = "ccsim"
author = "ccsim contributors"
release = version = ccsim.__version__

extensions = [
    "myst_nb",               # Markdown (MyST) pages and .ipynb notebooks
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",   # Google-style "Args:" / "Returns:" docstrings
    "ccsim_catalogue",       # docs/_ext: the algorithm catalogue, the notebooks
]
source_suffix = {".md": "myst-nb", ".ipynb": "myst-nb"}
exclude_patterns = ["_build", "_ext", "Thumbs.db", ".DS_Store"]

# notebooks are shown with the outputs stored in them; CI executes them apart
nb_execution_mode = "off"
# no scripts from a CDN: the site reads offline and loads without console
# errors (widgets need a kernel anyway; no page uses TeX math)
nb_ipywidgets_js = {}
html_static_path = ["_static"]
html_css_files = ["ccsim.css"]
myst_enable_extensions = ["dollarmath"]
myst_heading_anchors = 3

autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_default_options = {"members": True, "undoc-members": False}
napoleon_google_docstring = True
napoleon_numpy_docstring = False

# furo: a theme scientific-Python readers know, with a content column that
# scrolls wide code and tables instead of cutting them
html_theme = "furo"
html_title = f"ccsim {release}"
napoleon_use_ivar = True   # "Attributes:" as fields: no duplicate of the dataclass fields
