"""Tests for ccsim.units and ccsim.errors."""

import math
import pickle

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ccsim.errors import (CcsimError, ScenarioError, ScenarioTypeError, UnitError,
                          UnknownAlgorithmError)
from ccsim.units import (format_rate, format_size, format_time, parse_buffer, parse_probability,
                         parse_rate, parse_size, parse_time)


@pytest.mark.parametrize("value, expected", [
    (0, 0.0), (2, 2.0), (0.25, 0.25), (np.float64(0.5), 0.5), (np.int64(3), 3.0),
    ("20ms", 20 / 1000), ("1.5s", 1.5), ("10us", 10 / 1e6), ("10µs", 10 / 1e6),
    ("10μs", 10 / 1e6), ("250ns", 250 / 1e9), ("2min", 120.0), ("0.5 s", 0.5),
    ("3sec", 3.0), ("1h", 3600.0), ("0.3", 0.3), ("  7 ms ", 7 / 1000), ("+5ms", 5 / 1000),
    ("1e3ms", 1.0), ("2.5E-3s", 0.0025), (".5s", 0.5), ("0ms", 0.0),
])
def test_parse_time(value, expected):
    assert parse_time(value, "rtt") == pytest.approx(expected, rel=1e-15, abs=0)


@pytest.mark.parametrize("value, expected", [
    (10, 10.0), (1.5e6, 1.5e6), ("100Mbps", 100 * 10**6), ("1.5 Gbps", 1.5e9),
    ("64kbps", 64 * 1000), ("64Kbps", 64 * 1000), ("10Mbit/s", 10 * 10**6),
    ("10Mb/s", 10 * 10**6), ("1e6bps", 10**6), ("1Tbps", 10**12), ("1MBps", 8 * 10**6),
    ("1MB/s", 8 * 10**6), ("3 Bps", 24.0), ("2kB/s", 16_000.0), ("500", 500.0),
])
def test_parse_rate(value, expected):
    assert parse_rate(value, "rate") == pytest.approx(expected, rel=1e-15, abs=0)


@pytest.mark.parametrize("value, expected", [
    (1500, 1500.0), ("1500B", 1500.0), ("64KB", 64 * 1000), ("64kB", 64 * 1000),
    ("64KiB", 64 * 1024), ("1MB", 10**6), ("1MiB", 1024**2), ("1GB", 10**9),
    ("1GiB", 1024**3), ("8b", 1.0), ("1kb", 1000 / 8), ("1Mb", 10**6 / 8), ("1.5 kB", 1500.0),
])
def test_parse_size(value, expected):
    assert parse_size(value, "mss") == pytest.approx(expected, rel=1e-15, abs=0)


@pytest.mark.parametrize("value, expected", [
    (100, (100.0, "packets")), (100.0, (100.0, "packets")), ("100", (100.0, "packets")),
    ("100p", (100.0, "packets")), ("100 packets", (100.0, "packets")),
    ("100pkts", (100.0, "packets")), ("100 pkt", (100.0, "packets")), (0, (0.0, "packets")),
    ("1BDP", (1.0, "bdp")), ("0.5 BDP", (0.5, "bdp")), ("2bdp", (2.0, "bdp")), ("2 Bdp", (2.0, "bdp")),
    ("64KB", (64 * 1000, "bytes")), ("64KiB", (64 * 1024, "bytes")), ("1500B", (1500.0, "bytes")),
])
def test_parse_buffer(value, expected):
    assert parse_buffer(value, "buffer") == expected


@pytest.mark.parametrize("fmt, value, expected", [
    (format_rate, 1e7, "10 Mbit/s"), (format_rate, 1.5e9, "1.5 Gbit/s"), (format_rate, 999.6e6, "1 Gbit/s"),
    (format_rate, 123_456, "123 kbit/s"), (format_rate, 5, "5 bit/s"), (format_rate, 0, "0 bit/s"),
    (format_time, 0.02, "20 ms"), (format_time, 1.5, "1.5 s"), (format_time, 250e-6, "250 µs"),
    (format_time, 120, "2 min"), (format_time, 0, "0 s"), (format_time, 3e-9, "3 ns"),
    (format_size, 64_000, "64 kB"), (format_size, 1500, "1.5 kB"), (format_size, 65_536, "65.5 kB"),
    (format_size, 40, "40 B"),
])
def test_format(fmt, value, expected):
    assert fmt(value) == expected


@pytest.mark.parametrize("parse, value, cls, example", [
    (parse_time, True, ScenarioTypeError, "20ms"),
    (parse_time, None, ScenarioTypeError, "20ms"),
    (parse_time, [1], ScenarioTypeError, "20ms"),
    (parse_rate, False, ScenarioTypeError, "100Mbps"),
    (parse_size, b"64KB", ScenarioTypeError, "64KB"),
    (parse_buffer, None, ScenarioTypeError, "BDP"),
    (parse_time, "fast", UnitError, "ms"),
    (parse_time, "", UnitError, "ms"),
    (parse_time, "20 m s", UnitError, "ms"),
    (parse_time, "20MS", UnitError, "ms"),
    (parse_time, "20ks", UnitError, "ms"),
    (parse_rate, "20ms", UnitError, "Mbps"),
    (parse_rate, "10 Mbs", UnitError, "Mbps"),
    (parse_rate, "1MB", UnitError, "Mbps"),
    (parse_size, "1Mbps", UnitError, "KiB"),
    (parse_size, "64KIB", UnitError, "KiB"),
    (parse_buffer, "2xBDP", UnitError, "BDP"),
    (parse_buffer, "20ms", UnitError, "packets"),
])
def test_type_and_unit_errors(parse, value, cls, example):
    with pytest.raises(cls) as info:
        parse(value, "link.x")
    err = info.value
    assert type(err) is cls
    assert (err.field, err.value) == ("link.x", value)
    assert "link.x" in str(err) and repr(value) in str(err)
    assert example in err.allowed


@pytest.mark.parametrize("parse", [parse_time, parse_rate, parse_size, parse_buffer])
@pytest.mark.parametrize("value", [-1, -0.5, "-5", "-1e3", math.nan, math.inf, -math.inf,
                                   "nan", "inf", "-inf", "NaN", "Infinity", np.float64("nan")])
def test_rejects_negative_and_non_finite(parse, value):
    with pytest.raises(ScenarioError) as info:
        parse(value, "q")
    assert type(info.value) is ScenarioError
    assert info.value.value is value and "finite" in info.value.allowed
    assert str(info.value).startswith(f"q={value!r}: ")


def test_time_given_as_rate_says_so():
    with pytest.raises(UnitError) as info:
        parse_rate("20ms", "link.rate")
    assert "time unit, not a rate" in str(info.value)
    assert "'ms' is a time unit" in info.value.hint


def test_fractional_packets_rejected():
    for value in (2.5, "2.5", "2.5 packets"):
        with pytest.raises(ScenarioError) as info:
            parse_buffer(value, "queue.size")
        assert "whole" in str(info.value) and repr(value) in str(info.value)


def test_error_hierarchy_and_message():
    assert issubclass(ScenarioError, ValueError) and issubclass(ScenarioError, CcsimError)
    assert issubclass(UnitError, ScenarioError) and issubclass(UnknownAlgorithmError, ScenarioError)
    assert issubclass(ScenarioTypeError, TypeError) and issubclass(ScenarioTypeError, CcsimError)
    assert not issubclass(ScenarioTypeError, ValueError)
    assert isinstance(ScenarioError("f", 1, "must be > 0"), ValueError)
    assert isinstance(ScenarioTypeError("f", None, "a number"), TypeError)
    assert str(ScenarioError("a.b", "x", "must be y")) == "a.b='x': must be y"
    assert str(ScenarioTypeError("a.b", None, "a number", "got None")) == "a.b=None: a number (got None)"


def test_unknown_algorithm_suggestion():
    err = UnknownAlgorithmError("flow.cc", "renoo", ["tahoe", "reno", "newreno"])
    assert err.suggestion == "reno" and err.known == ["newreno", "reno", "tahoe"]
    assert str(err) == "flow.cc='renoo': must be one of: newreno, reno, tahoe (did you mean 'reno'?)"
    far = UnknownAlgorithmError("flow.cc", "bbr", ["tahoe", "reno", "newreno"])
    assert far.suggestion is None and far.hint is None and "did you mean" not in str(far)


@pytest.mark.parametrize("err", [
    ScenarioError("f", 1, "must be > 1", "hint"), UnitError("f", "1x", "units: s"),
    ScenarioTypeError("f", None, "a number"), UnknownAlgorithmError("cc", "renoo", ["reno"]),
])
def test_errors_pickle(err):
    # Errors cross process boundaries in parallel sweeps; custom __init__ needs __reduce__.
    copy = pickle.loads(pickle.dumps(err))
    assert type(copy) is type(err) and str(copy) == str(err) and copy.field == err.field


# Finite non-negative floats.  repr() round-trips a float exactly, so the only error is
# the one scaling ms -> s (<= 1-2 ulp); 1e-12 relative is generous.  abs_tol covers results
# that underflow into subnormals, where relative precision is lost.
@given(st.floats(min_value=0, allow_nan=False, allow_infinity=False))
def test_parse_time_ms_roundtrip(x):
    assert math.isclose(parse_time(f"{x!r}ms", "t"), x / 1000, rel_tol=1e-12, abs_tol=1e-300)


# format_rate keeps 3 significant digits: worst-case relative rounding error is
# 0.005 / 1.005 < 0.5% (at mantissa 1.005); parsing back adds only float rounding.
@given(st.floats(min_value=1, max_value=1e12))
def test_format_rate_roundtrip(x):
    assert math.isclose(parse_rate(format_rate(x), "r"), x, rel_tol=0.005)


@pytest.mark.parametrize("value, expected", [
    (0.01, 0.01), ("0.01", 0.01), ("1%", 0.01), (" 2.5 % ", 0.025), ("0", 0.0), ("1e-3", 0.001)])
def test_parse_probability(value, expected):
    assert parse_probability(value, "loss") == pytest.approx(expected, rel=1e-15)


@pytest.mark.parametrize("value, error", [
    ("often", UnitError), ("1 percent", UnitError), ("1ms", UnitError), ("%", UnitError),
    (True, ScenarioTypeError), (None, ScenarioTypeError), ("nan", ScenarioError)])
def test_parse_probability_refuses(value, error):
    with pytest.raises(error, match="loss"):
        parse_probability(value, "loss")


def test_loss_takes_percent_in_python_and_toml():
    import ccsim
    a = ccsim.dumbbell("10Mbps", "20ms", loss="1%")
    assert a.links[0].loss == 0.01 and a == ccsim.dumbbell("10Mbps", "20ms", loss=0.01)
    assert ccsim.dumbbell("10Mbps", "20ms", loss="0").links[0].loss == 0.0
    toml = a.to_toml().replace("loss = 0.01", 'loss = "1%"')
    assert 'loss = "1%"' in toml and ccsim.Scenario.from_toml(toml) == a
    with pytest.raises(ScenarioError, match=r"loss='100%'.*\[0, 1\)"):
        ccsim.dumbbell("10Mbps", "20ms", loss="100%")
