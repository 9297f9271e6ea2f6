"""FlightSize handed to a window law's loss hook is never negative, through
repeated timeouts with SACK-based recovery (the go-back-N path)."""

from __future__ import annotations

import pytest

import ccsim
from ccsim.packet import PacketEngine
from ccsim.packet.fast_path import FastSender


def recording_losses(seen: list) -> type[FastSender]:
    """The engine's sender, appending ``(kind, inflight)`` of every Loss its
    law is told of to ``seen``."""

    class Recording(FastSender):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            tell = self.cc.on_loss

            def on_loss(loss):
                seen.append((loss.kind, loss.inflight))
                tell(loss)
            self.cc.on_loss = on_loss
    return Recording


@pytest.mark.parametrize("flows", [[ccsim.Flow("bbr", recovery="sack")] * 2,
                                   [ccsim.Flow("reno", recovery="sack"),
                                                    ccsim.Flow("cubic", recovery="fack")]])
def test_flight_size_at_every_loss_is_never_negative(flows):
    # 5 % random loss into a 5-packet buffer: timeouts in a row (26 for two BBR flows in 20 s),
    # each going back to snd_una with SACKed data still above it. FlightSize counted every
    # SACKed segment, also those above the reset snd_nxt, and reached -229 here (-1,897 in a
    # longer run), quietly setting Reno-style thresholds to 2. The Linux stack hands a loss
    # the window and runs BBR with RACK, which finds lost retransmissions without the timer:
    # the test asks for FlightSize and plain SACK recovery, the path it is about, and
    # for every timeout to reach the law (Linux keeps a recovery's ssthresh at most of them).
    seen = []
    sc = ccsim.dumbbell("10Mbps", "40ms", buffer=5, loss=0.05, flows=flows, duration="20s",
                        seed=2, loss_flight="flight", reduction_window="none")
    res = PacketEngine(sc, sender_class=recording_losses(seen)).run()
    assert res.summary["timeouts"].sum() >= 10  # the path under test was taken
    assert sum(kind == "timeout" for kind, _ in seen) >= 10
    assert min(inflight for _, inflight in seen) >= 0
