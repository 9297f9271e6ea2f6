"""What an experiment returns."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

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


def flow_for(name: str, **kwargs: Any):
    """A flow for a family member: a registered algorithm name, or a recovery
    strategy name on Reno's window law (``"prr"`` → Reno with PRR)."""
    from .. import algorithms
    from ..scenario import Flow

    if name in algorithms.names():
        return Flow(name, **kwargs)
    return Flow("reno", recovery=name, **kwargs)
