"""Experiment recipes: the seed studies' experiments, each returning an
:class:`ExperimentResult` (a table and a plot).

* :func:`multiple_drops` — Fall & Floyd 1996: one flow, k chosen drops in one
  window, for each recovery strategy.
* :func:`link_errors` — seed 004 Fig. 5: mean throughput of each algorithm
  as the link error rate rises, with the ordering.
* :func:`utilisation_under_loss` — seed 003's utilisation table (Reno, SACK,
  Vegas at 1 % and 5 % loss).
* :func:`pairwise_matrix` — seed 000's Table I: every ordered pair of
  algorithms, with the start-order effect.
"""

from ._result import ExperimentResult
from .link_errors import link_errors, utilisation_under_loss
from .multiple_drops import multiple_drops
from .pairwise import pairwise_matrix

__all__ = ["ExperimentResult", "multiple_drops", "link_errors", "utilisation_under_loss",
           "pairwise_matrix"]
