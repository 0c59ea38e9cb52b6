"""Argument checks shared by the whole library.

Every public function validates its inputs with these helpers, so that bad input
raises a ``ValueError`` that names the parameter and its allowed range instead of
producing a silently wrong number.
"""

from __future__ import annotations

import math
from numbers import Integral, Real

import numpy as np


def finite_real(name: str, value: object) -> float:
    """Return ``value`` as a float, or raise if it is not a finite real number."""
    if isinstance(value, bool) or not isinstance(value, (Real, np.floating, np.integer)):
        raise ValueError(f"{name} must be a finite real number (got {value!r})")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{name} must be a finite real number (got {value!r})")
    return value


def positive(name: str, value: object) -> float:
    """Return ``value`` as a float, or raise unless it is finite and > 0."""
    value = finite_real(name, value)
    if value <= 0:
        raise ValueError(f"{name} must be > 0 (got {value!r})")
    return value


def non_negative(name: str, value: object) -> float:
    """Return ``value`` as a float, or raise unless it is finite and >= 0."""
    value = finite_real(name, value)
    if value < 0:
        raise ValueError(f"{name} must be >= 0 (got {value!r})")
    return value


def in_interval(
    name: str,
    value: object,
    low: float,
    high: float,
    *,
    low_open: bool = False,
    high_open: bool = False,
) -> float:
    """Return ``value`` as a float, or raise unless it lies in the given interval."""
    value = finite_real(name, value)
    too_low = value <= low if low_open else value < low
    too_high = value >= high if high_open else value > high
    if too_low or too_high:
        left = "(" if low_open else "["
        right = ")" if high_open else "]"
        raise ValueError(f"{name} must lie in {left}{low:g}, {high:g}{right} (got {value!r})")
    return value


def loss_grid_step(value: object) -> float:
    """Return ``value`` as a loss grid step in nats, or raise unless it lies in
    [``pld.engine.MIN_LOSS_GRID_STEP``, 1] (the range :func:`pld.from_pmfs` accepts)."""
    from pld.engine import MIN_LOSS_GRID_STEP

    return in_interval("loss_grid_step", value, MIN_LOSS_GRID_STEP, 1.0)


def optional_loss_grid_step(value: object) -> float | None:
    """``None`` (the caller's default grid) or :func:`loss_grid_step` of ``value``."""
    return None if value is None else loss_grid_step(value)


#: Largest number of users accepted by the shuffle mechanisms (about 1.1e12):
#: scipy's binomial quantiles (Boost) were measured reliable up to 2^40 trials
#: and return NaN at 2^53.
MAX_USERS = 2**40


def integer_at_least(name: str, value: object, minimum: int, maximum: int | None = None) -> int:
    """Return ``value`` as an int, or raise unless it is an integer in [minimum, maximum]."""
    allowed = f">= {minimum}" if maximum is None else f"in [{minimum}, {maximum}]"
    if isinstance(value, bool):
        raise ValueError(f"{name} must be an integer {allowed} (got {value!r})")
    if isinstance(value, (Integral, np.integer)):
        result = int(value)
    elif (
        isinstance(value, (Real, np.floating))
        and math.isfinite(float(value))
        and float(value).is_integer()
    ):
        result = int(value)
    else:
        raise ValueError(f"{name} must be an integer {allowed} (got {value!r})")
    if result < minimum or (maximum is not None and result > maximum):
        raise ValueError(f"{name} must be an integer {allowed} (got {value!r})")
    return result


def one_of(name: str, value: object, choices: tuple[str, ...]) -> str:
    """Return ``value`` if it is one of the strings ``choices``, or raise naming them."""
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name} must be one of {choices} (got {value!r})")
    return value


def real_array(name: str, values: object) -> np.ndarray:
    """Return a 1-d float64 array of finite reals, or raise.

    Strings, bytes and booleans are refused even where numpy would convert them.
    """
    if isinstance(values, (str, bytes)):
        raise ValueError(f"{name} must be an array of finite real numbers (got {values!r})")
    try:
        raw = np.asarray(values)
    except (TypeError, ValueError) as error:
        raise ValueError(f"{name} must be an array of finite real numbers") from error
    if raw.dtype.kind not in "iuf" and not (raw.dtype.kind == "O" and _all_real(raw)):
        raise ValueError(f"{name} must be an array of finite real numbers (got dtype {raw.dtype})")
    try:
        array = np.atleast_1d(raw.astype(np.float64))
    except (TypeError, ValueError, OverflowError) as error:
        raise ValueError(f"{name} must be an array of finite real numbers") from error
    if array.ndim != 1:
        raise ValueError(f"{name} must be a scalar or a 1-d array (got shape {array.shape})")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} must contain only finite real numbers")
    return array


def _all_real(raw: np.ndarray) -> bool:
    """True when every entry of an object array is a real number (not a bool or a string)."""
    return all(
        isinstance(item, (Real, np.floating, np.integer)) and not isinstance(item, bool)
        for item in raw.ravel()
    )
