"""``python -m ccsim``: the command line (see :mod:`ccsim.cli`)."""

from .cli import main

raise SystemExit(main())
