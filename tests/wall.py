"""A wall-clock limit for tests that must fail, not hang, when the engine
regresses into a loop."""

from __future__ import annotations

import signal
from contextlib import contextmanager


@contextmanager
def wall_limit(seconds: int):
    """Raise TimeoutError in the block once ``seconds`` of wall time pass (SIGALRM)."""
    def expired(signum, frame):
        raise TimeoutError(f"the run took more than {seconds} s of wall time: a hang")
    old = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
