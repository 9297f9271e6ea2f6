"""Progress bars: tqdm's notebook widget where it can draw one, its text bar
elsewhere (and in a notebook without ipywidgets, without tqdm's warning)."""

from __future__ import annotations

from typing import Any


def tqdm(*args: Any, **kwargs: Any) -> Any:
    """``tqdm.auto.tqdm`` when ipywidgets is importable, else ``tqdm.std.tqdm``
    (``pip install "ccsim[notebook]"`` for widget bars in Jupyter)."""
    try:
        import ipywidgets  # noqa: F401
    except ImportError:
        from tqdm.std import tqdm as bar
    else:
        from tqdm.auto import tqdm as bar
    return bar(*args, **kwargs)
