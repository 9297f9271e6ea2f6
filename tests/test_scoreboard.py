"""RFC 6675 on hand-built SACK scoreboards (ccsim.recovery.scoreboard).

The expected behaviour is restated below from the source, independently of the
library, with sequence numbers counting whole segments (one SMSS each):

RFC 6675 §4, IsLost(SeqNum): "returns true when either DupThresh discontiguous
SACKed sequences have arrived above 'SeqNum' or more than (DupThresh - 1) * SMSS
bytes with sequence numbers greater than 'SeqNum' have been SACKed", with
DupThresh = 3 (§2). With whole segments the two clauses coincide: DupThresh
discontiguous SACKed sequences above SeqNum are at least DupThresh SACKed
segments above it, and "more than (DupThresh - 1)·SMSS bytes" SACKed above is
"at least DupThresh segments". So IsLost(s) ⇔ #SACKed segments above s ≥ 3.
The reference below still evaluates both clauses literally and ORs them.

RFC 6675 §4, SetPipe: for each octet (here: segment) S1 in [HighACK, HighData)
that has not been SACKed: (a) if IsLost(S1) is false, pipe += 1; (b) if
S1 <= HighRxt, pipe += 1.

The scoreboard itself (RFC 2018 §3-4 kept by the sender): the set of SACKed
segments at or above the cumulative ACK. An ACK (una, blocks) adds the blocks'
segments at or above una and forgets everything below una; it reports the
segments SACKed for the first time ("newly") and the previously SACKed segments
that the cumulative ACK now covers ("released"), so that newly acked - released
+ newly SACKed is what the ACK delivered (RFC 6937's DeliveredData).

The references below are set-based and per segment (O(window) per query) on
purpose: they share no code or representation with the interval-based library.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ccsim.recovery.scoreboard import Scoreboard

DUPTHRESH = 3  # RFC 6675 §2 (RFC 5681's three duplicate ACKs)


# -- the reference, straight from RFC 6675 §4 -------------------------------------------
def ref_is_lost(sacked: set[int], s: int) -> bool:
    above = sorted(x for x in sacked if x > s)
    # clause 1: DupThresh discontiguous SACKed sequences (maximal runs) above s
    runs = sum(1 for i, x in enumerate(above) if i == 0 or above[i - 1] != x - 1)
    # clause 2: more than (DupThresh - 1) SMSS SACKed above s (whole segments)
    return runs >= DUPTHRESH or len(above) > DUPTHRESH - 1


def ref_pipe(sacked: set[int], high_ack: int, high_data: int, high_rxt: int) -> int:
    pipe = 0
    for s in range(high_ack, high_data):
        if s in sacked:
            continue
        if not ref_is_lost(sacked, s):  # (a)
            pipe += 1
        if s <= high_rxt:               # (b)
            pipe += 1
    return pipe


def board(una: int, sacked: set[int]) -> Scoreboard:
    """A scoreboard holding exactly ``sacked`` (one single-segment block each,
    so the library must merge them itself)."""
    sb = Scoreboard()
    sb.update(una, tuple((s, s + 1) for s in sorted(sacked)))
    return sb


def runs_of(segments: set[int]) -> list[list[int]]:
    """Maximal runs of consecutive segments as sorted [start, end) intervals."""
    out: list[list[int]] = []
    for s in sorted(segments):
        if out and out[-1][1] == s:
            out[-1][1] = s + 1
        else:
            out.append([s, s + 1])
    return out


# -- hand-built cases ---------------------------------------------------------------------
UNA = 10
SACKED = {12, 13, 14, 16, 17, 18, 19}   # holes 10, 11, 15 and 20, 21 (not yet SACKed)
HIGH_DATA = 22


def test_hand_built_is_lost_follows_the_rfc():
    sb = board(UNA, SACKED)
    # By hand: 10 and 11 have 7 SACKed above, 15 has 4 (16-19): lost. 20 and 21 have
    # none above: not lost. The reference must agree with that reading.
    by_hand = {10: True, 11: True, 15: True, 20: False, 21: False}
    for s, lost in by_hand.items():
        assert ref_is_lost(SACKED, s) is lost
        assert sb.is_lost(s) is lost, s
    for s in range(UNA, HIGH_DATA + 3):
        assert sb.is_lost(s) == ref_is_lost(SACKED, s), s


@pytest.mark.parametrize("high_rxt", [UNA - 1, 10, 11, 14, 15, 19, 20, 21])
def test_hand_built_pipe_follows_the_rfc(high_rxt):
    sb = board(UNA, SACKED)
    assert sb.pipe(UNA, HIGH_DATA, high_rxt) == ref_pipe(SACKED, UNA, HIGH_DATA, high_rxt)


def test_hand_built_pipe_by_hand():
    # Unsacked in [10, 22): 10, 11, 15 (lost) and 20, 21 (not lost).
    # No retransmission (HighRxt = HighACK - 1): only (a) counts: 20, 21 -> 2.
    # HighRxt = 11: (b) adds 10 and 11 -> 4. HighRxt = 15: (b) adds 10, 11, 15 -> 5.
    # HighRxt = 21: (b) adds all five unSACKed segments -> 7.
    sb = board(UNA, SACKED)
    unsacked = [s for s in range(UNA, HIGH_DATA) if s not in SACKED]
    not_lost = [s for s in unsacked if s >= 20]
    for high_rxt in (UNA - 1, 11, 15, 21):
        resent = [s for s in unsacked if s <= high_rxt]
        assert sb.pipe(UNA, HIGH_DATA, high_rxt) == len(not_lost) + len(resent)


def test_fewer_than_dupthresh_sacked_nothing_is_lost():
    # Two SACKed segments can never make anything lost (clause 2 needs 3, clause 1
    # needs 3 runs): pipe is then every unSACKed segment, plus retransmissions.
    sacked = {13, 15}
    sb = board(UNA, sacked)
    assert not any(sb.is_lost(s) for s in range(UNA, 20))
    assert sb.pipe(UNA, 20, UNA - 1) == 10 - len(sacked)
    assert sb.pipe(UNA, 20, 12) == ref_pipe(sacked, UNA, 20, 12)


def test_three_discontiguous_single_segments_make_the_segment_below_lost():
    # Clause 1 alone: 3 runs of one segment each above 10 (11, 13, 15).
    sacked = {11, 13, 15}
    sb = board(UNA, sacked)
    assert sb.is_lost(10) and ref_is_lost(sacked, 10)
    assert not sb.is_lost(12) and not ref_is_lost(sacked, 12)  # only 13, 15 above


def test_empty_scoreboard():
    sb = Scoreboard()
    assert sb.highest is None and sb.count == 0
    assert not sb.is_lost(UNA) and not sb.is_sacked(UNA)
    assert sb.pipe(UNA, 30, UNA - 1) == 20  # all outstanding, none lost
    assert sb.pipe(UNA, 30, 14) == 20 + 5   # 10..14 retransmitted too
    assert sb.first_hole(UNA, 30) == UNA and sb.last_hole(UNA, 30) == 29


# -- property: random scoreboards against the reference ------------------------------------
@st.composite
def scoreboards(draw):
    una = draw(st.integers(0, 10_000))
    blocks = draw(st.lists(
        st.tuples(st.integers(0, 199), st.integers(1, 30)).map(
            lambda t: (una + t[0], min(una + t[0] + t[1], una + 200))),
        max_size=8))
    sacked = {s for a, b in blocks for s in range(a, b)}
    top = max(sacked) + 1 if sacked else una
    high_data = draw(st.integers(max(top, una + 1), una + 200))
    high_rxt = draw(st.integers(una - 1, high_data - 1))
    return una, tuple(blocks), sacked, high_data, high_rxt


@given(scoreboards())
def test_is_lost_and_pipe_match_the_rfc_reference(case):
    una, blocks, sacked, high_data, high_rxt = case
    sb = Scoreboard()
    sb.update(una, blocks)
    for s in range(una, high_data):
        assert sb.is_sacked(s) == (s in sacked), s
        if s not in sacked:  # IsLost is asked of unSACKed segments
            assert sb.is_lost(s) == ref_is_lost(sacked, s), s
    assert sb.pipe(una, high_data, high_rxt) == ref_pipe(sacked, una, high_data, high_rxt)


# -- update(): merging, trimming, newly / released -----------------------------------------
def test_overlapping_and_adjacent_blocks_merge():
    sb = Scoreboard()
    newly, released = sb.update(10, ((20, 23), (22, 25), (25, 27), (30, 31)))
    assert sb.blocks == [[20, 27], [30, 31]]
    assert (newly, released) == (len(set(range(20, 27)) | {30}), 0)
    # A block bridging the two, partly already SACKed: only 27..29 are new.
    newly, released = sb.update(10, ((26, 31),))
    assert sb.blocks == [[20, 31]] and (newly, released) == (3, 0)


def test_blocks_below_una_are_trimmed_and_cumulative_ack_releases():
    sb = Scoreboard()
    sb.update(10, ((12, 15), (18, 20)))
    # The cumulative ACK moves to 13: 12 was SACKed before and is now covered
    # (released); 5..13 of the stale block lie below una and are not "new".
    newly, released = sb.update(13, ((5, 14), (21, 22)))
    assert sb.blocks == [[13, 15], [18, 20], [21, 22]]
    assert (newly, released) == (1, 1)
    assert not sb.is_sacked(12) and sb.is_sacked(13)


@st.composite
def ack_sequences(draw):
    una = draw(st.integers(0, 1000))
    steps = []
    for _ in range(draw(st.integers(1, 12))):
        una += draw(st.integers(0, 15))  # the cumulative ACK never goes back
        blocks = draw(st.lists(
            st.tuples(st.integers(-10, 60), st.integers(1, 12)).map(
                lambda t, u=una: (u + t[0], u + t[0] + t[1])),
            max_size=4))
        steps.append((una, tuple(blocks)))
    return steps


@given(ack_sequences(), st.data())
def test_update_matches_a_set_model(steps, data):
    sb = Scoreboard()
    model: set[int] = set()
    for una, blocks in steps:
        incoming = {s for a, b in blocks for s in range(a, b) if s >= una}
        newly = len(incoming - model)
        released = len({s for s in model if s < una})
        model = {s for s in model | incoming if s >= una}

        assert sb.update(una, blocks) == (newly, released)
        # canonical form: sorted, non-empty, neither overlapping nor adjacent
        assert sb.blocks == runs_of(model)
        assert all(b[0] >= una for b in sb.blocks)
        assert sb.count == len(model)
        assert sb.highest == (max(model) + 1 if model else None)

        lo = data.draw(st.integers(una - 5, una + 80), label="lo")
        hi = data.draw(st.integers(lo, una + 80), label="hi")
        holes = [s for s in range(lo, hi) if s not in model]
        assert sb.first_hole(lo, hi) == (holes[0] if holes else None)
        assert sb.last_hole(lo, hi) == (holes[-1] if holes else None)
        assert sb.sacked_in(lo, hi) == sum(1 for s in model if lo <= s < hi)


def test_first_and_last_hole_by_hand():
    sb = board(UNA, SACKED)
    assert sb.first_hole(UNA, HIGH_DATA) == 10
    assert sb.first_hole(12, HIGH_DATA) == 15   # 12-14 SACKed
    assert sb.first_hole(16, 20) is None        # 16-19 all SACKed
    assert sb.last_hole(UNA, HIGH_DATA) == 21
    assert sb.last_hole(UNA, 20) == 15          # 16-19 SACKed
    assert sb.last_hole(12, 15) is None


@given(scoreboards(), scoreboards())
def test_new_ranges_are_exactly_the_segments_sacked_for_the_first_time(before, after):
    # What RACK dates: the ranges update() reports must be the set difference.
    una = before[0]
    sb = Scoreboard()
    sb.update(una, before[1])
    held = {s for b in sb.blocks for s in range(*b)}
    blocks = tuple((max(a, una), b) for a, b in after[1] if b > max(a, una))
    new: list[tuple[int, int]] = []
    newly, _ = sb.update(una, blocks, new)
    reported = [s for a, b in new for s in range(a, b)]
    arriving = {s for a, b in blocks for s in range(a, b)}
    assert sorted(reported) == sorted(arriving - held) and len(reported) == newly


@pytest.fixture(scope="module")
def monkeypatch_many_holes():
    from ccsim.recovery import scoreboard
    saved = scoreboard.MANY_HOLES
    scoreboard.MANY_HOLES = 2
    yield
    scoreboard.MANY_HOLES = saved


@st.composite
def long_ack_sequences(draw):
    """ACKs over long windows: spans past the counts' first ring (1024 segments) and
    cumulative ACKs far past it, so the ring wraps and doubles."""
    una = draw(st.integers(0, 5000))
    steps = []
    for _ in range(draw(st.integers(1, 10))):
        una += draw(st.integers(0, 900))
        blocks = draw(st.lists(
            st.tuples(st.integers(-10, 3000), st.integers(1, 40)).map(
                lambda t, u=una: (u + t[0], u + t[0] + t[1])),
            max_size=12))
        steps.append((una, tuple(blocks)))
    return steps


@given(long_ack_sequences(), st.data())
def test_many_holes_counts_match_a_set_model(monkeypatch_many_holes, steps, data):
    # The per-segment counts (a Fenwick tree in a ring) take over from the walk from
    # MANY_HOLES blocks on; set to 2 here, every query below goes through them.
    sb = Scoreboard()
    model: set[int] = set()
    for una, blocks in steps:
        incoming = {s for a, b in blocks for s in range(a, b) if s >= una}
        model = {s for s in model | incoming if s >= una}
        sb.update(una, blocks)
        assert sb.blocks == runs_of(model)
        for _ in range(3):
            lo = data.draw(st.integers(una - 5, una + 3100), label="lo")
            hi = data.draw(st.integers(lo, una + 3100), label="hi")
            assert sb.sacked_in(lo, hi) == sum(1 for s in model if lo <= s < hi)
            holes = [s for s in range(lo, min(hi, lo + 200)) if s not in model]
            assert sb.first_hole(lo, min(hi, lo + 200)) == (holes[0] if holes else None)
