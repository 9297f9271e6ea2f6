"""The fluid engine under random loss: when a loss is found, and how much of
a window is in flight, against the packet engine's rules.

A loss-limited flow lives on small windows and on how soon each loss is
found, so two rules that a fluid model may blur decide its rate: the sender
keeps whole segments in flight (RFC 5681: a segment goes out while
``snd_nxt − snd_una + 1 ≤ cwnd``; the packet engine's ``send_window``), and a
loss on the path is found one RTT after the lost segment was sent, when the
segments sent after it are acknowledged (three duplicate ACKs, RFC 5681
§3.2; RFC 6675). Packet runs here take a fraction of a second each.
"""

import pytest

import ccsim
from ccsim.algorithms import CongestionControl


def test_a_window_of_nine_and_a_half_segments_sends_nine_per_round(scratch_registry):
    """A window law that holds cwnd at 9.6 segments on a 10 Mbit/s, 100 ms
    path (BDP 83 segments: the link never fills) sends 9 segments per RTT in
    the packet engine. The fluid engine sent 9.6 per RTT, 6.7 % more, when it
    kept the whole fractional window in flight. Within 2 %: the packet times
    and the start jitter move the two engines' RTTs by less than 1 %."""

    @ccsim.algorithms.register
    class Fixed(CongestionControl):
        name = "fixed-9.6"

        def start(self, initial_window, mss):
            super().start(initial_window, mss)
            self.cwnd = 9.6

        def on_ack(self, ack):
            pass

    sc = ccsim.dumbbell("10Mbps", "100ms", buffer=100, duration="10s", seed=1,
                        flows=["fixed-9.6"], delayed_ack=False)
    packet, fluid = (ccsim.run(sc, mode=m).summary.goodput_bps[0] for m in ("packet", "fluid"))
    assert abs(fluid / packet - 1.0) < 0.02, (packet, fluid)


def test_slow_start_under_random_loss_ends_at_the_window_of_its_first_loss():
    """Slow start adds a segment per segment acknowledged, so when the n-th
    segment is lost and found an RTT later, cwnd is the initial 10 plus the
    n − 1 acknowledged before it, and the reduction leaves ssthresh at half
    that. At 2 % loss n is geometric with mean 50: ssthresh ≈ (10 + 50)/2 = 30
    on average. Over 20 seeds the mean has a standard error of about 6
    (n's own spread is 50), so the band is 30 ± 12 (two standard errors).
    The fluid engine read 57 (the packet engine 24 over the same seeds) when
    it found a loss on the link an RTT after the lost data's ACK was due, two
    RTTs after it was sent, while slow start doubled the window once more."""
    firsts = []
    for seed in range(1, 21):
        sc = ccsim.dumbbell("10Mbps", "100ms", buffer=1000, loss=0.02, duration="1.5s",
                            seed=seed, flows=["reno"])
        tr = ccsim.run(sc, mode="fluid").traces
        ss = tr[(tr.variable == "ssthresh") & (tr.value < float("inf"))].value
        if len(ss):
            firsts.append(float(ss.iloc[0]))
    assert len(firsts) >= 18  # nearly every seed loses a segment within 1.5 s
    mean = sum(firsts) / len(firsts)
    assert 18.0 <= mean <= 42.0, sorted(firsts)
