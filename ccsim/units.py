"""Human quantities -> ccsim base units: time in seconds, rates in bit/s, sizes in bytes.

Parsers accept a number (already in the base unit) or a string ``"<number>[ ]<unit>"``.
Units are case-sensitive (``"Mb"`` is megabits, ``"MB"`` megabytes; ``"BDP"`` is the one
exception).  Prefixes k/K, M, G, T are SI decimal (x1000) for rates and sizes alike, as in
networking practice; binary sizes need the explicit ``KiB``/``MiB``/``GiB``/``TiB`` (x1024).
Zero is accepted; negative, NaN and infinite values are not.  Nothing is clamped.
"""

from __future__ import annotations

import math
import numbers
import re

from ccsim.errors import ScenarioError, ScenarioTypeError, UnitError

_SI = {"": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}

_TIME_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3,
               "s": 1.0, "sec": 1.0, "min": 60.0, "h": 3600.0}
"""Seconds per unit (both the micro sign and Greek mu are accepted)."""

_RATE_UNITS = {prefix + suffix: factor * per_unit
               for prefix, factor in _SI.items()
               for suffix, per_unit in (("bps", 1), ("bit/s", 1), ("b/s", 1), ("Bps", 8), ("B/s", 8))}
_RATE_UNITS |= {prefix + "bit": factor for prefix, factor in
                (_SI | {"m": 1e6, "g": 1e9, "t": 1e12}).items()}
"""bit/s per unit: lowercase b / bit = bits, capital B = bytes. tc's spellings
``kbit``, ``mbit``, ``gbit`` (bits per second, any case of the prefix) too."""
_TC_BYTE_RATES = {"kbps": "kB/s", "mbps": "MB/s", "gbps": "GB/s", "tbps": "TB/s"}
"""tc's lowercase ``mbps`` is megaBYTES per second; ccsim's ``Mbps`` is bits.
Refused with a hint rather than guessed."""

_SIZE_UNITS = ({prefix + "B": factor for prefix, factor in _SI.items()}
               | {prefix + "b": factor / 8 for prefix, factor in _SI.items()}
               | {prefix + "iB": 1024.0 ** power for power, prefix in enumerate("KMGT", 1)})
"""Bytes per unit: ``B`` bytes, ``b`` bits, ``KiB``.. binary."""

_PACKET_UNITS = ("p", "pkt", "pkts", "packet", "packets")

_UNITS = {"time": _TIME_UNITS, "rate": _RATE_UNITS, "size": _SIZE_UNITS,
          "buffer": dict.fromkeys(("BDP", *_PACKET_UNITS), 1.0) | _SIZE_UNITS}

_ALLOWED = {
    "time": "a time such as '20ms' or a number in seconds; units: ns, us, µs, ms, s, sec, min, h",
    "rate": "a rate such as '100Mbps' or a number in bit/s; units: bps, kbps, Mbps, Gbps, Tbps, "
            "bit/s, Mbit/s, Mb/s, kbit, mbit, gbit (as tc writes them), Bps, kBps, MBps, GBps, "
            "MB/s (bytes/s; prefixes k/K, M, G, T)",
    "size": "a size such as '64KB' or a number in bytes; units: B, kB, KB, MB, GB, TB (x1000), "
            "KiB, MiB, GiB, TiB (x1024), b, kb, Mb, Gb, Tb (bits)",
    "buffer": "a buffer such as 100 (packets), '100 packets', '0.5BDP' or a size such as '64KB'; "
              "units: p, pkt, pkts, packet, packets, BDP, or a size unit (B, kB, KiB, MB, ...)",
}

_QUANTITY = re.compile(
    r"\s*([+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|(?i:nan|inf(?:inity)?)))\s*(\S*)\s*")
"""``<number>[ ]<unit>``: optional sign, decimals, exponent; nan/inf parse so they can be rejected."""


def _split(value: object, field: str, what: str) -> tuple[float, str]:
    """Validate ``value`` as a ``what`` quantity and return (number, unit); unit is ``""`` for plain numbers.

    The unit is checked against ``_UNITS[what]``; ``"bdp"`` in any case becomes ``"BDP"``.
    """
    if isinstance(value, bool) or not isinstance(value, (numbers.Real, str)):
        raise ScenarioTypeError(field, value, f"expected a number or a string: {_ALLOWED[what]}")
    if isinstance(value, str):
        match = _QUANTITY.fullmatch(value)
        if match is None:
            raise UnitError(field, value, _ALLOWED[what])
        number, unit = float(match[1]), match[2]
        unit = "BDP" if unit.lower() == "bdp" else unit
    else:
        number, unit = float(value), ""
    if not math.isfinite(number) or number < 0:
        raise ScenarioError(field, value, "must be a finite number >= 0")
    if unit and unit not in _UNITS[what]:
        other = next((kind for kind in ("time", "rate", "size") if unit in _UNITS[kind]), None)
        hint = f"'{unit}' is a {other} unit, not a {what} unit" if other else f"unknown unit '{unit}'"
        if what == "rate" and unit in _TC_BYTE_RATES:
            hint = (f"'{unit}' is ambiguous: tc reads it as bytes per second "
                    f"({_TC_BYTE_RATES[unit]}), ccsim's 'Mbps' means bits; write "
                    f"'{number:g}{unit[0]}bit' for bits or '{number:g}{_TC_BYTE_RATES[unit]}' for bytes")
        raise UnitError(field, value, _ALLOWED[what], hint)
    return number, unit


def parse_time(value: object, field: str) -> float:
    """Parse a duration into seconds.

    Numbers are seconds; strings take ns, us, µs, ms, s, sec, min or h:
    ``parse_time("20ms", f) == 0.02``, ``parse_time("0.5 s", f) == 0.5``, ``parse_time("0.3", f) == 0.3``.
    """
    number, unit = _split(value, field, "time")
    return number * _TIME_UNITS[unit] if unit else number


def parse_rate(value: object, field: str) -> float:
    """Parse a data rate into bit/s.

    Numbers are bit/s; strings take bps, bit/s or b/s (bits) or Bps, B/s (bytes, x8) with an SI
    prefix k/K, M, G, T: ``"100Mbps"`` -> 1e8, ``"10Mbit/s"`` -> 1e7, ``"1MB/s"`` -> 8e6.
    """
    number, unit = _split(value, field, "rate")
    return number * _RATE_UNITS[unit] if unit else number


def parse_size(value: object, field: str) -> float:
    """Parse a data size into bytes.

    Numbers are bytes; ``B`` is bytes and ``b`` bits, SI prefixes are decimal, ``iB`` binary:
    ``"64KB"`` and ``"64kB"`` -> 64_000, ``"64KiB"`` -> 65_536, ``"1Mb"`` -> 125_000.
    """
    number, unit = _split(value, field, "size")
    return number * _SIZE_UNITS[unit] if unit else number


def parse_probability(value: object, field: str) -> float:
    """Parse a probability: a number, or a string ``"0.01"`` or ``"1%"`` (percent).

    ``parse_probability("1%", f) == 0.01``, ``parse_probability("0", f) == 0.0``. Only the
    form is checked here; the range is the caller's (a loss rate must be below 1).
    """
    allowed = "a probability such as 0.01, '0.01' or '1%'"
    if isinstance(value, bool) or not isinstance(value, (numbers.Real, str)):
        raise ScenarioTypeError(field, value, allowed)
    if isinstance(value, str):
        text = value.strip()
        percent = text.endswith("%")
        match = _QUANTITY.fullmatch(text[:-1] if percent else text)
        if match is None or match[2]:
            raise UnitError(field, value, allowed)
        number = float(match[1]) / (100.0 if percent else 1.0)
    else:
        number = float(value)
    if not math.isfinite(number):
        raise ScenarioError(field, value, allowed)
    return number


def parse_buffer(value: object, field: str) -> tuple[float, str]:
    """Parse a buffer spec into (amount, kind), kind one of ``"packets"``, ``"bytes"``, ``"bdp"``.

    A whole number (int, integral float, ``"100"``, ``"100p"``, ``"100 pkts"``, ``"100 packets"``)
    is packets; ``"0.5BDP"`` / ``"1 bdp"`` is a multiple of the bandwidth-delay product; a size
    (``"64KB"``, see :func:`parse_size`) is bytes.
    """
    number, unit = _split(value, field, "buffer")
    if unit == "BDP":
        return number, "bdp"
    if unit in _SIZE_UNITS:
        return number * _SIZE_UNITS[unit], "bytes"
    if not number.is_integer():
        raise ScenarioError(field, value, "a packet count must be a whole number",
                            "use e.g. '0.5BDP' or '64KB' for fractional buffers")
    return number, "packets"


def _format(x: float, scales: tuple[tuple[float, str], ...]) -> str:
    """``x`` to 3 significant digits in the largest unit of ``scales`` (ascending) not above it."""
    rounded = float(f"{x:.3g}")
    if rounded == 0 or not math.isfinite(rounded):
        fits = [scale for scale in scales if scale[0] == 1]
    else:
        fits = [scale for scale in scales if scale[0] <= abs(rounded)] or [scales[0]]
    factor, name = fits[-1]
    return f"{rounded / factor:.3g} {name}"


def format_rate(bps: float) -> str:
    """Format bit/s for tables and labels: ``format_rate(1e7) == "10 Mbit/s"`` (3 significant digits)."""
    return _format(bps, ((1, "bit/s"), (1e3, "kbit/s"), (1e6, "Mbit/s"), (1e9, "Gbit/s"), (1e12, "Tbit/s")))


def format_time(s: float) -> str:
    """Format seconds: ``"20 ms"``, ``"1.5 s"``, ``"250 µs"``, ``"2 min"`` (3 significant digits)."""
    return _format(s, ((1e-9, "ns"), (1e-6, "µs"), (1e-3, "ms"), (1, "s"), (60, "min"), (3600, "h")))


def format_size(b: float) -> str:
    """Format bytes with decimal prefixes: ``format_size(64_000) == "64 kB"`` (3 significant digits)."""
    return _format(b, ((1, "B"), (1e3, "kB"), (1e6, "MB"), (1e9, "GB"), (1e12, "TB")))
