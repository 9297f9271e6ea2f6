"""TimeBins: lazy per-bin counts give what adding to each bin at once gives."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from ccsim.packet.bins import TimeBins


@given(st.lists(st.tuples(st.floats(0.0, 2.0), st.sampled_from([1, 1, 1, 2, 0.37, 0.5]))),
       st.integers(1, 12), st.sampled_from([0.1, 0.25, 0.3, 1 / 3]))
def test_lazy_counts_are_eager_counts_bit_for_bit(events, n_bins, width):
    # events in time order, some past the last bin; counts whole and fractional
    events = sorted(events)
    bins = TimeBins(n_bins, width)
    eager = [0] * n_bins
    for t, n in events:
        bins.at(t, n)
        b = int(t * (1.0 / width))
        if b < n_bins:
            eager[b] += n  # the same additions, one at a time
    assert bins.per_bin(n_bins) == eager
    assert bins.per_bin(n_bins) == eager  # reading twice adds nothing


def test_a_bin_written_directly_between_close_and_open_keeps_its_share():
    # the link's straddling packets: close, a share added to each bin, then the
    # bin of the packet's end opened with its share already in it
    bins = TimeBins(3, 1.0)
    bins.at(0.2, 1)
    bins.close()
    bins.bins[0] += 0.25
    bins.bins[1] += 0.75
    bins.open(1.5)
    bins.at(1.7, 1)
    assert bins.per_bin(3) == [1.25, 1.75, 0]
