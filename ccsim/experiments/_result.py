"""What an experiment returns."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    import matplotlib.figure


@dataclass
class ExperimentResult:
    """A recipe's outcome.

    Attributes:
        name: the recipe.
        table: one row per run or per aggregate, as the recipe documents.
        data: extra series the plot draws from (recipe-specific).
    """

    name: str
    table: pd.DataFrame
    data: dict[str, Any] = field(default_factory=dict, repr=False)
    draw: Callable[["ExperimentResult"], "matplotlib.figure.Figure"] | None = field(
        default=None, repr=False)

    def plot(self) -> "matplotlib.figure.Figure":
        """The recipe's figure (a matplotlib ``Figure``)."""
        return self.draw(self)

    def _repr_html_(self) -> str:
        return f"<b>{self.name}</b>" + self.table._repr_html_()

    def __str__(self) -> str:
        """The report ``ccsim experiment`` prints: the name, the whole table
        (numbers to three figures), each finding's verdict, and the agreement
        with the paper, one figure a line."""
        lines = [self.name]
        with pd.option_context("display.width", 160, "display.max_rows", 400):
            lines.append(self.table.drop(columns=["error"], errors="ignore").to_string(
                index=False, float_format=lambda x: f"{x:.3f}" if abs(x) < 100 else f"{x:.0f}"))
        if "findings" in self.data:
            lines.append("")
            for row in self.data["findings"].itertuples():
                verdict = {True: "reproduced", False: "NOT reproduced"}.get(row.reproduced,
                                                                             "not checked")
                lines.append(f"{verdict:>15}: {row.statement}")
        for key in ("agreement", "ordering", "exponent"):
            if key in self.data:
                lines.append(f"\n{key} with the paper:{readable(self.data[key])}")
        return "\n".join(lines)


def readable(value: Any, indent: str = "  ") -> str:
    """A recipe's figure for reading: a number rounded, a dict or Series one
    ``name: value`` line each (nested ones indented), never a raw dict."""
    if isinstance(value, pd.Series):
        value = value.to_dict()
    if isinstance(value, dict):
        return "".join(f"\n{indent}{k}:{readable(v, indent + '  ')}" for k, v in value.items())
    if isinstance(value, (float, np.floating)):
        return " –" if math.isnan(value) else f" {value:.3g}"
    return f" {value}"


def flow_for(name: str, **kwargs: Any):
    """A flow for a family member: a registered algorithm name, or a recovery
    strategy name on Reno's window law (``"prr"`` → Reno with PRR)."""
    from .. import algorithms
    from ..scenario import Flow

    if name in algorithms.names():
        return Flow(name, **kwargs)
    return Flow("reno", recovery=name, **kwargs)
