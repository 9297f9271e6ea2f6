"""FlightSize handed to a window law's loss hook is never negative, through
repeated timeouts with SACK-based recovery (the go-back-N path)."""

from __future__ import annotations

import pytest

import ccsim
import ccsim.packet.tcp as tcp
from ccsim.algorithms.base import Loss


@pytest.mark.parametrize("flows", [["bbr", "bbr"], [ccsim.Flow("reno", recovery="sack"),
                                                    ccsim.Flow("cubic", recovery="fack")]])
def test_flight_size_at_every_loss_is_never_negative(flows, monkeypatch):
    # 5 % random loss into a 5-packet buffer: timeouts in a row (26 for two BBR flows in 20 s),
    # each going back to snd_una with SACKed data still above it. FlightSize counted every
    # SACKed segment, also those above the reset snd_nxt, and reached -229 here (-1,897 in a
    # longer run), quietly setting Reno-style thresholds to 2.
    seen = []

    def recording(now, kind, inflight, min_rtt, srtt):
        seen.append((kind, inflight))
        return Loss(now, kind, inflight, min_rtt, srtt)

    monkeypatch.setattr(tcp, "Loss", recording)
    sc = ccsim.dumbbell("10Mbps", "40ms", buffer=5, loss=0.05, flows=flows, duration="20s",
                        seed=2)
    res = ccsim.run(sc)
    assert res.summary["timeouts"].sum() >= 10  # the path under test was taken
    assert sum(kind == "timeout" for kind, _ in seen) >= 10
    assert min(inflight for _, inflight in seen) >= 0
