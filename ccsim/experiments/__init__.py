"""Experiment recipes: the studies users reproduce, each returning an
:class:`ExperimentResult` (a table and a plot), with the paper's numbers
beside ccsim's where the paper gives them.

* :func:`multiple_drops` — Fall & Floyd 1996: one flow, k chosen drops in one
  window, for each recovery strategy.
* :func:`link_errors` — Lai & Yao, Fig. 5: mean throughput of each algorithm
  as the link error rate rises, with the paper's rank order checked.
* :func:`unfairness`, :func:`new_arrival`, :func:`reno_interop` — Lai & Yao,
  Tables 2, 3 and 4.
* :func:`utilisation_under_loss` — Zhang & Bian's utilisation table (Reno,
  SACK, Vegas at 1 % and 5 % loss); :func:`rtt_bias`, :func:`queue_fairness`,
  :func:`competition` — their RTT bias, DropTail against RED, and Reno, SACK
  and Vegas sharing a link.
* :func:`delay_queue_loss` — Kwon: Reno, CUBIC, BBR and Vegas across delay,
  queue and loss, with the poster's findings checked one by one.
* :func:`pairwise_matrix` — Esterhuizen & Krzesinski, Table I: every ordered
  pair of algorithms (any registered names: with Veno, Esterhuizen's 13 × 13);
  :func:`start_order`: each pair in both orders.
* :func:`short_flow_fct` — short flows' completion times (DCTCP's web-search
  sizes, Alizadeh et al. 2010) behind CUBIC, behind BBR and under fq_codel.
* :func:`cellular_link` — Vegas, Copa and BBR on a synthetic cellular trace
  (Sprout's link model, Winstein et al. 2013).

:data:`RECIPES` maps the names ``ccsim experiment NAME`` takes to the functions.
"""

from ._result import ExperimentResult
from .kwon import delay_queue_loss
from .lai_yao import new_arrival, reno_interop, unfairness
from .link_errors import link_errors, utilisation_under_loss
from .cellular import cellular_link
from .multiple_drops import multiple_drops
from .pairwise import pairwise_matrix, start_order
from .short_flows import short_flow_fct
from .zhang_bian import competition, queue_fairness, rtt_bias

RECIPES = {f.__name__.replace("_", "-"): f for f in (
    pairwise_matrix, start_order, multiple_drops, link_errors, unfairness, new_arrival, reno_interop,
    utilisation_under_loss, rtt_bias, queue_fairness, competition, delay_queue_loss,
    short_flow_fct, cellular_link)}
"""Recipe name (as ``ccsim experiment NAME`` spells it) → function."""

STUDIES = {
    "pairwise-matrix": "Esterhuizen & Krzesinski, Table I",
    "start-order": "Esterhuizen & Krzesinski, Table I",
    "multiple-drops": "Fall & Floyd 1996",
    "link-errors": "Lai & Yao, Fig. 5",
    "unfairness": "Lai & Yao, Table 2",
    "new-arrival": "Lai & Yao, Table 3",
    "reno-interop": "Lai & Yao, Table 4",
    "utilisation-under-loss": "Zhang & Bian",
    "rtt-bias": "Zhang & Bian",
    "queue-fairness": "Zhang & Bian",
    "competition": "Zhang & Bian",
    "delay-queue-loss": "Kwon",
    "short-flow-fct": "Alizadeh et al. 2010",
    "cellular-link": "Winstein et al. 2013",
}
"""Recipe name → the published study it reproduces (``ccsim experiment --list``)."""

__all__ = [
    "RECIPES",
    "STUDIES",
    "ExperimentResult",
    "cellular_link",
    "competition",
    "delay_queue_loss",
    "link_errors",
    "multiple_drops",
    "new_arrival",
    "pairwise_matrix",
    "queue_fairness",
    "short_flow_fct",
    "reno_interop",
    "rtt_bias",
    "start_order",
    "unfairness",
    "utilisation_under_loss",
]
