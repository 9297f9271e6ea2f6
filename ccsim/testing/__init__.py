"""ccsim.testing: property-based checks of window laws, for ccsim's and yours.

Needs hypothesis (``pip install "ccsim[testing]"``); ``import ccsim`` does not
import this package.

* :func:`check_algorithm` — the conformance suite, like scikit-learn's
  ``check_estimator``: ``check_algorithm(MyAlgo)`` returns ``None`` or raises
  :class:`CheckFailure` with a minimal replay script.
* :func:`make_machine` / :class:`AlgorithmMachine` — the hypothesis
  ``RuleBasedStateMachine`` behind it, for your own test suites.
* :mod:`~ccsim.testing.strategies` — paths, parameters and event streams.
* :mod:`~ccsim.testing.rules` — the common rules (``COMMON``), by name.
* :class:`AckRound`, :class:`Path`, :func:`snapshot` — what rules see.

See docs/testing.md and notebooks/testing_your_algorithm.ipynb.
"""

from . import rules, strategies
from .machine import AlgorithmMachine, CheckFailure, check_algorithm, make_machine
from .model import AckRound, Path, snapshot

__all__ = [
    # check
    "check_algorithm", "CheckFailure",
    # build your own
    "make_machine", "AlgorithmMachine", "strategies", "rules",
    # what rules see
    "AckRound", "Path", "snapshot",
]
