"""The packet engine's event trace: every segment event, consistent with the
run's own counters, and no effect on the run."""

from __future__ import annotations

import struct

import numpy as np
import pandas as pd
import pytest

import ccsim
from ccsim import Flow
from ccsim.packet.events import EVENT_COLUMNS, EVENTS
from tests.test_golden import fingerprint


def _lossy():
    # RED, random loss, chosen drops and two recoveries families: every kind of event
    return ccsim.dumbbell("10Mbps", "20ms", queue="red", buffer="1BDP", loss=0.001,
                          flows=[Flow("reno", drop_segments=(30, 31)), "cubic"],
                          duration="5s", seed=3)


@pytest.fixture(scope="module")
def lossy():
    sc = _lossy()
    return ccsim.run(sc), ccsim.run(sc, events=True)


def test_recording_changes_nothing_in_the_run(lossy):
    plain, recorded = lossy
    assert fingerprint(plain) == fingerprint(recorded)


def test_events_agree_with_the_runs_counters(lossy):
    _, res = lossy
    ev = res.events
    assert list(ev.columns) == list(EVENT_COLUMNS)
    assert set(ev["event"].cat.categories) == set(EVENTS)
    assert ev["time"].is_monotonic_increasing
    counts = ev.groupby(["flow", "event"], observed=False).size().unstack(fill_value=0)
    summary = res.summary
    assert (counts["retransmitted"] == summary["retransmits"]).all()
    assert (counts["timeout"] == summary["timeouts"]).all()
    assert (counts["recovery"] == summary["recoveries"]).all()
    assert counts[["sent", "retransmitted"]].to_numpy().sum() == res.metrics["data_packets"]
    dropped = ev[ev["event"] == "dropped"]
    at_link = dropped[dropped["link"] == 0]
    assert (at_link["reason"].isin(["overflow", "red"])).sum() == res.metrics["drops"]
    assert (at_link["reason"] == "error").sum() == res.metrics["losses"]
    assert (dropped["reason"] == "red").sum() > 0  # RED dropped early, and says so
    chosen = dropped[dropped["reason"] == "chosen"]
    assert list(zip(chosen["flow"], chosen["seq"])) == [(0, 30), (0, 31)]
    assert (chosen["link"] == -1).all()


def test_each_segment_is_sent_then_delivered_or_dropped(lossy):
    _, res = lossy
    ev = res.events
    out = ev[ev["event"].isin(["sent", "retransmitted"])].groupby(["flow", "seq"]).size()
    fate = ev[ev["event"].isin(["delivered", "dropped"])].groupby(["flow", "seq"]).size()
    # every transmission ends delivered or dropped, except those still in flight
    # at the end (sent within the last round trip)
    late = ev[(ev["time"] > res.scenario.duration - 2 * res.scenario.path_rtt)]
    in_flight = set(zip(late["flow"], late["seq"]))
    both = out.to_frame("out").join(fate.to_frame("fate"), how="left").fillna(0)
    settled = both[[k not in in_flight for k in both.index]]
    assert (settled["out"] == settled["fate"]).all()
    # and no segment is delivered before it was first sent
    first_sent = ev[ev["event"] == "sent"].groupby(["flow", "seq"])["time"].min()
    first_in = ev[ev["event"] == "delivered"].groupby(["flow", "seq"])["time"].min()
    joined = pd.concat([first_sent, first_in], axis=1, keys=["sent", "in"]).dropna()
    assert (joined["in"] > joined["sent"]).all()


def test_acks_carry_the_cumulative_ack_and_recoveries_end(lossy):
    _, res = lossy
    ev = res.events
    for flow in (0, 1):
        acks = ev[(ev["event"] == "acked") & (ev["flow"] == flow)]["seq"].to_numpy()
        assert (acks[1:] >= acks[:-1]).all()  # cumulative ACKs never go back
        starts = (ev["event"] == "recovery") & (ev["flow"] == flow)
        ends = (ev["event"] == "recovered") & (ev["flow"] == flow)
        assert 0 <= starts.sum() - ends.sum() <= 1  # each recovery ends (one may be open)


def test_sack_blocks_are_recorded_on_acks():
    sc = ccsim.dumbbell("10Mbps", "40ms", buffer=20,
                        flows=[Flow("sack", drop_segments=(40, 42))], duration="2s")
    ev = ccsim.run(sc, events=True).events
    blocks = ev.loc[(ev["event"] == "acked") & (ev["seq"] == 40), "sack"]
    assert any(b and b[0][0] == 41 for b in blocks)  # 41 arrived above the hole at 40


def test_without_recording_only_losses_and_timeouts(lossy):
    plain, recorded = lossy
    kinds = set(plain.events["event"].astype(str))
    assert kinds <= {"recovery", "timeout"}
    mask = recorded.events["event"].isin(["recovery", "timeout"])
    pd.testing.assert_frame_equal(plain.events, recorded.events[mask].reset_index(drop=True))


def test_fluid_engine_refuses_to_record_events():
    with pytest.raises(ccsim.ScenarioError, match="events"):
        ccsim.run(_lossy(), mode="fluid", events=True)


@pytest.mark.slow
def test_pcap_reads_back_with_a_pcap_reader(tmp_path, lossy):
    dpkt = pytest.importorskip("dpkt")
    _, res = lossy
    path = tmp_path / "run.pcap"
    n = res.to_pcap(path)
    ev = res.events[res.events["event"].isin(["sent", "retransmitted", "acked"])]
    assert n == len(ev)
    mss = res.scenario.mss
    with open(path, "rb") as f:
        packets = list(dpkt.pcap.Reader(f))
    assert len(packets) == n
    sack_seen = 0
    for (ts, buf), (_, row) in zip(packets, ev.iterrows()):
        assert float(ts) == pytest.approx(row["time"], abs=1e-9)
        ip = dpkt.ip.IP(buf)
        tcp = ip.data
        data = row["event"] != "acked"
        assert ip.len == 40 + len(tcp.opts) + (mss if data else 0)  # full length on record
        # RFC 1071: a header with its checksum sums to all ones
        words = sum(struct.unpack("!10H", buf[:20]))
        assert (words & 0xFFFF) + (words >> 16) == 0xFFFF
        port = 10000 + row["flow"]
        if data:
            assert (tcp.sport, tcp.dport, tcp.seq) == (port, 5001, 1 + row["seq"] * mss)
        else:
            assert (tcp.sport, tcp.dport, tcp.ack) == (5001, port, 1 + row["seq"] * mss)
            opts = dict(dpkt.tcp.parse_opts(tcp.opts))
            if row["sack"]:
                edges = struct.unpack(f"!{len(opts[5]) // 4}I", opts[5])
                assert list(zip(edges[::2], edges[1::2])) == [
                    (1 + s * mss, 1 + e * mss) for s, e in row["sack"]]
                sack_seen += 1
    assert sack_seen > 0  # CUBIC's SACK blocks made it into the options


def test_pcap_of_one_flow_and_refusals(tmp_path, lossy):
    plain, res = lossy
    n = res.to_pcap(tmp_path / "one.pcap", flows=[1])
    ev = res.events
    assert n == (ev["event"].isin(["sent", "retransmitted", "acked"]) & (ev["flow"] == 1)).sum()
    with pytest.raises(ccsim.ScenarioError, match="flows"):
        res.to_pcap(tmp_path / "x.pcap", flows=[7])
    with pytest.raises(ccsim.ScenarioError, match="events=True"):
        plain.to_pcap(tmp_path / "x.pcap")


def test_pcap_at_the_bottleneck(tmp_path):
    # Captured at the bottleneck's queue, data segments leave one serialisation
    # time apart at least (the link sends one at a time; at the senders a window's
    # segments leave at one instant), and only those the queue did not drop are
    # there. An ACK passes that point after the segment it acknowledges crossed the
    # link, reached the receiver and the ACK came back: for the flow without access
    # delay, exactly two link delays and the receiver's NIC's packet time later, plus
    # the receiver-side access delay both ways for the other (no delayed ACKs: each in-order segment is
    # acknowledged on arrival; no ACK jitter, which would add up to a packet time,
    # nor start jitter: exact phases, a run in which flow 1 sends to the end).
    dpkt = pytest.importorskip("dpkt")
    sc = ccsim.dumbbell("10Mbps", "40ms", buffer=15, duration="3.05s", seed=1, ack_jitter=0,
                        start_jitter=0, delayed_ack=False,
                        flows=[ccsim.Flow("reno"), ccsim.Flow("reno", rtt="80ms")])
    res = ccsim.run(sc, events=True)
    ev = res.events
    n = res.to_pcap(tmp_path / "b.pcap", link="bottleneck")
    with open(tmp_path / "b.pcap", "rb") as f:
        packets = [(float(ts), dpkt.ip.IP(buf)) for ts, buf in dpkt.pcap.Reader(f)]
    assert len(packets) == n
    data = [(t, ip.data) for t, ip in packets if ip.data.dport == 5001]
    acks = [(t, ip.data) for t, ip in packets if ip.data.sport == 5001]
    sent = ev[ev["event"].isin(["sent", "retransmitted"])]
    # a segment reaches the link its host's NIC packet time after sending, flow 1's
    # 10 ms more (a quarter of its 40 ms extra RTT): what each sent in its last such
    # span is still on its way at the end of the run
    nic = sc.packet_size * 8 / sc.flows[0].access_rate
    lead = nic + np.where(sent["flow"] == 1, 0.01, 0.0)
    on_the_way = (sent["time"] >= sc.duration - lead).sum()
    assert (ev["event"] == "dropped").sum() > 0 and on_the_way > 0
    assert len(data) == len(sent) - (ev["event"] == "dropped").sum() - on_the_way
    assert len(acks) == (ev["event"] == "acked").sum()
    tx = sc.packet_size * 8 / 10e6
    gaps = np.diff([t for t, _ in data])
    assert gaps.min() >= tx - 2e-9  # timestamps are whole nanoseconds
    assert all(b >= a for a, b in zip([t for t, _ in packets], [t for t, _ in packets][1:]))
    mss, delay = sc.mss, sc.links[0].delay
    # behind the link: its delay, then the flow's receiver-side access delay
    # (flow 1: a quarter of its 40 ms extra RTT), both ways
    for port, back in ((10000, 2 * delay + nic), (10001, 2 * delay + 2 * 0.01 + nic)):
        left, copies = {}, {}  # segment -> when it left the bottleneck, how often
        for t, seg in data:
            if seg.sport == port:
                k = (seg.seq - 1) // mss
                left[k], copies[k] = t, copies.get(k, 0) + 1
        left = {k: t for k, t in left.items() if copies[k] == 1}  # unambiguous ACKs
        previous, checked = 1, 0
        for t, ack in acks:
            if ack.dport != port:
                continue
            segment = (ack.ack - 1) // mss - 1  # the segment this ACK moved past
            if ack.ack - previous == mss and segment in left:  # that segment's own ACK
                assert t == pytest.approx(left[segment] + back, abs=2e-9)
                checked += 1
            previous = max(previous, ack.ack)
        # most segments have an ACK of their own: not those acknowledged
        # cumulatively when a hole before them is filled, nor the last round
        # trip's (flow 1 here: 173 of 241, with 5 recoveries in 3 s)
        assert checked > 0.6 * len(left)


def test_pcap_link_refused_by_name(tmp_path, lossy):
    _, res = lossy
    for bad in (5, -1, "first", 1.5, True):
        with pytest.raises(ccsim.ScenarioError, match="link"):
            res.to_pcap(tmp_path / "x.pcap", link=bad)
