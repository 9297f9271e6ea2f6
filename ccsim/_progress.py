"""Progress bars: tqdm's notebook widget where it can draw one, its text bar
elsewhere (and in a notebook without ipywidgets, without tqdm's warning).

Both engines and the sweeps draw theirs from here, the bottom layer, so that
no engine imports :mod:`ccsim.run`, which imports the engines."""

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


def progress_bar(duration: float, desc: str) -> Any:
    """A tqdm bar over ``duration`` simulated seconds (``update`` in seconds)."""
    return tqdm(total=duration, desc=desc, unit="s", unit_scale=False,
                bar_format="{l_bar}{bar}| {n:.1f}/{total:.1f} s simulated "
                           "[{elapsed}<{remaining}]")
