"""The drop-tail fast path (LinkState._droptail, inlined) against the named
definition it copies (_admitted and _sent, through _disciplined): the same
arrivals give the same answers, drops, losses and departure counts."""

from __future__ import annotations

import random

import pytest

from ccsim import DropTail, Link
from ccsim.packet.link import LinkState


def _arrivals(seed: int, n: int = 4000) -> list[float]:
    """Bursts and gaps around the link's packet time (1.2 ms at 10 Mbit/s)."""
    rng, t, times = random.Random(seed), 0.0, []
    for _ in range(n):
        t += rng.choice([0.0, 0.0, 0.0005, 0.0012, 0.002, 0.01]) * rng.random()
        times.append(t)
    return times


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("loss", [0.0, 0.02])
def test_droptail_fast_path_is_its_named_definition(seed, loss):
    link = Link(rate="10Mbps", delay="5ms", queue=DropTail(8), loss=loss)
    fast = LinkState(link, 1500, (seed, seed + 1), 200, 0.05)
    named = LinkState(link, 1500, (seed, seed + 1), 200, 0.05)
    assert fast.discipline is None and fast.forward == fast._droptail
    answers = [(fast._droptail(t), named._disciplined(t)) for t in _arrivals(seed)]
    assert [a for a, _ in answers] == [b for _, b in answers]
    assert sum(a < 0 for a, _ in answers) > 0          # the bursts did overflow the queue
    assert (fast.drops, fast.losses) == (named.drops, named.losses)
    assert fast.departures.per_bin(200) == named.departures.per_bin(200)
