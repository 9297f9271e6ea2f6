"""A packet run's segments as a pcap file, for Wireshark, tshark and
tcptrace-style tools.

By default the capture is taken where ``tcpdump`` on each sender would take
it: data segments as they leave the sender, ACKs as they reach it. With
``link=k`` it is taken at link ``k``'s queue side, as on a router's
interface: data segments as their serialisation on the link ends (those the
queue dropped are not there), ACKs as they pass on their way back (the
reverse path is uncongested, so that is the ACK's arrival at the sender less
its propagation from there). Headers are
synthesised from :attr:`Result.events <ccsim.Result.events>`: IPv4 and TCP
(RFC 793) with sequence numbers in bytes (``1 + segment · mss``: a zero
initial sequence number, then the SYN's one byte), the cumulative ACK, and
on ACKs a SACK option (RFC 2018) with the ACK's blocks. Flow ``i`` is the
connection ``10.0.0.1:(10000 + i) → 10.0.0.2:5001``. Payloads are not kept:
every packet is captured truncated after its 40 header bytes (plus options),
as ``tcpdump -s`` does, with its full length on record. Timestamps are in
nanoseconds (the pcap nanosecond format). There is no handshake: tools see
connections already open.

It reads only the events table, so it sits beside :mod:`ccsim.results`, not
in the packet engine that :mod:`ccsim.results` must not import.
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Iterable

import pandas as pd

from .errors import ScenarioError

SENDER, RECEIVER = bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2])
FIRST_PORT, SERVER_PORT = 10000, 5001
_MAGIC_NANOSECONDS = 0xA1B23C4D
_LINKTYPE_RAW = 101  # a bare IPv4 packet, no link-layer header
_ACK, _PSH = 0x10, 0x08


def _checksum(header: bytes) -> int:
    """The Internet checksum (RFC 1071) of an IPv4 header."""
    total = sum(struct.unpack(f"!{len(header) // 2}H", header))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def _packet(flow: int, data: bool, seq: int, ack: int, options: bytes,
            payload: int) -> tuple[bytes, int]:
    """IPv4 + TCP headers of one packet, and its length on the wire (bytes)."""
    tcp_len = 20 + len(options)
    port = FIRST_PORT + flow
    ports = (port, SERVER_PORT) if data else (SERVER_PORT, port)
    tcp = struct.pack("!HHIIBBHHH", *ports, seq & 0xFFFFFFFF, ack & 0xFFFFFFFF,
                      (tcp_len // 4) << 4, _ACK | (_PSH if data else 0), 65535, 0, 0) + options
    total = 20 + tcp_len + payload
    src, dst = (SENDER, RECEIVER) if data else (RECEIVER, SENDER)
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, total, 0, 0x4000, 64, 6, 0, src, dst)
    ip = ip[:10] + struct.pack("!H", _checksum(ip)) + ip[12:]
    return ip + tcp, total


def _sack_option(blocks: Iterable[tuple[int, int]], mss: int) -> bytes:
    """Two NOPs and a SACK option (kind 5) with ``blocks`` in segments."""
    blocks = list(blocks or ())
    if not blocks:
        return b""
    edges = b"".join(struct.pack("!II", (1 + s * mss) & 0xFFFFFFFF, (1 + e * mss) & 0xFFFFFFFF)
                     for s, e in blocks)
    return b"\x01\x01" + bytes([5, 2 + len(edges)]) + edges


def write_pcap(events: pd.DataFrame, path: str | Path, mss: int,
               flows: Iterable[int] | None = None, link: int | None = None,
               ack_lead: dict[int, float] | None = None) -> int:
    """Write the data segments and ACKs of ``events`` (a packet run's
    :attr:`~ccsim.Result.events`, recorded with ``events=True``) to ``path``
    as a pcap file; ``flows``: the flow indices to keep (default all).
    ``link``: capture at that link (its ``forwarded`` rows) instead of the
    senders; ``ack_lead[flow]``: how long before reaching its sender an ACK
    passes the link (s; flows missing from it do not cross the link).
    Returns the number of packets written."""
    if link is None:
        segments = events[events["event"].isin(["sent", "retransmitted", "acked"])]
    else:
        lead = ack_lead or {}
        forwarded = events[(events["event"] == "forwarded") & (events["link"] == link)]
        acks = events[(events["event"] == "acked") & events["flow"].isin(list(lead))].copy()
        acks["time"] = acks["time"] - acks["flow"].map(lead)
        segments = pd.concat([forwarded, acks]).sort_values("time", kind="stable")
    if not (events["event"].isin(["sent", "retransmitted"])).any():
        raise ScenarioError("events", "losses and timeouts only",
                            "a run recorded with ccsim.run(scenario, events=True)",
                            "a pcap needs every segment the senders sent")
    if flows is not None:
        keep = sorted(set(flows))
        known = set(events["flow"])
        unknown = [f for f in keep if f not in known]
        if unknown:
            raise ScenarioError("flows", unknown[0], f"a flow index of this run, {sorted(known)}")
        segments = segments[segments["flow"].isin(keep)]
    out = [struct.pack("<IHHiIII", _MAGIC_NANOSECONDS, 2, 4, 0, 0, 65535, _LINKTYPE_RAW)]
    for t, flow, kind, seq, sack in zip(segments["time"], segments["flow"],
                                        segments["event"], segments["seq"], segments["sack"]):
        data = kind != "acked"
        if data:
            raw, length = _packet(flow, True, 1 + seq * mss, 1, b"", mss)
        else:
            raw, length = _packet(flow, False, 1, 1 + seq * mss, _sack_option(sack, mss), 0)
        ns = round(t * 1e9)
        out.append(struct.pack("<IIII", ns // 1_000_000_000, ns % 1_000_000_000, len(raw),
                               length) + raw)
    Path(path).write_bytes(b"".join(out))
    return len(out) - 1
