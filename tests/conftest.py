"""Shared test setup: hypothesis profiles and a headless matplotlib.

Profiles: "ci" (the default) keeps the whole suite fast; "thorough" runs many
more examples for local bug hunting:

    CCSIM_HYPOTHESIS_PROFILE=thorough python -m pytest tests/test_testing_kit.py
"""

import os

import matplotlib
from hypothesis import settings

matplotlib.use("Agg")

settings.register_profile("ci", max_examples=30, deadline=None)
settings.register_profile("thorough", max_examples=2000, deadline=None)
settings.load_profile(os.environ.get("CCSIM_HYPOTHESIS_PROFILE", "ci"))
