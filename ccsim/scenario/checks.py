"""Field checks shared by the parts of a scenario: each takes a value and
the name of the field it was given for, and returns it in base units
(seconds, bytes, plain floats and ints) or raises
:class:`~ccsim.ScenarioError` / :class:`~ccsim.ScenarioTypeError` naming the
field, the value and what is allowed."""

from __future__ import annotations

import math
import numbers
from typing import Any

from ..errors import ScenarioError, ScenarioTypeError
from ..units import parse_probability, parse_size, parse_time


def real(value: Any, field: str, allowed: str) -> float:
    """A finite real number (not a bool), as a float; ``allowed`` says what
    the field takes, for the error."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ScenarioTypeError(field, value, allowed)
    value = float(value)
    if not math.isfinite(value):
        raise ScenarioError(field, value, allowed)
    return value


def positive_number(value: Any, field: str, what: str = "a number") -> float:
    """A finite number > 0, as a float; ``what`` names its kind for the error."""
    value = real(value, field, f"{what} > 0")
    if value <= 0:
        raise ScenarioError(field, value, f"{what} > 0")
    return value


def probability(value: Any, field: str) -> float:
    """A probability in [0, 1), as a float: a number, ``"0.01"`` or ``"1%"``."""
    allowed = "a probability in [0, 1), such as 0.01 or '1%'"
    number = parse_probability(value, field)
    if not 0.0 <= number < 1.0:
        raise ScenarioError(field, value, allowed)
    return number


def whole_bytes(value: Any, field: str, minimum: int) -> int:
    """A whole number of bytes, from an int or a size such as ``"1460B"``."""
    if isinstance(value, str):
        value = parse_size(value, field)
        if value != int(value):
            raise ScenarioError(field, value, "a whole number of bytes")
        value = int(value)
    return whole(value, field, minimum, f"a whole number of bytes ≥ {minimum}, such as 1460")


def whole(value: Any, field: str, minimum: int, allowed: str) -> int:
    """An integer (not a bool) ≥ ``minimum``, as an int."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ScenarioTypeError(field, value, allowed)
    if value < minimum:
        raise ScenarioError(field, value, allowed)
    return int(value)


def seconds(value: Any, field: str, *, positive: bool) -> float:
    """A time (s, or a string such as ``"20ms"``) in seconds, checked to be
    > 0 when ``positive``."""
    t = parse_time(value, field)
    if positive and t <= 0:
        raise ScenarioError(field, value, "a time > 0, such as '20ms'")
    return t


def set_normalised(obj: Any, **values: Any) -> None:
    """Store normalised values on a frozen dataclass during validation."""
    for name, value in values.items():
        object.__setattr__(obj, name, value)
