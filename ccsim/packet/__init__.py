"""The packet-level engine (SimPy): links, queues, senders and receivers."""

from .engine import PacketEngine

__all__ = ["PacketEngine"]
