"""Validation of Rényi orders shared by the ``pld.rdp`` modules."""

from __future__ import annotations

import numpy as np

from pld.validation import integer_at_least, real_array


def integer_orders(orders: object, name: str = "orders") -> np.ndarray:
    """Return ``orders`` as a 1-d int64 array of integers >= 2, or raise ``ValueError``.

    The binomial and multinomial expansions of the shuffle and subsampling bounds
    are only defined at integer orders.
    """
    values = real_array(name, orders)
    if values.size == 0:
        raise ValueError(f"{name} must contain at least one order")
    return np.array([integer_at_least(name, float(v), 2) for v in values], dtype=np.int64)


def real_orders(orders: object, name: str = "orders") -> np.ndarray:
    """Return ``orders`` as a 1-d float64 array of reals > 1, or raise ``ValueError``."""
    values = real_array(name, orders)
    if values.size == 0:
        raise ValueError(f"{name} must contain at least one order")
    if np.any(values <= 1.0):
        raise ValueError(f"{name} must contain only orders > 1 (got {values.min()!r})")
    return values


def rdp_values(rdp: object, orders: np.ndarray, name: str = "rdp") -> np.ndarray:
    """Return ``rdp`` as a float64 array matching ``orders``; ``+inf`` allowed, NaN/negative not."""
    try:
        values = np.atleast_1d(np.asarray(rdp, dtype=np.float64))
    except (TypeError, ValueError) as error:
        raise ValueError(f"{name} must be an array of reals >= 0 or +inf") from error
    if values.ndim != 1 or values.shape != orders.shape:
        raise ValueError(
            f"{name} must be a 1-d array with one value per order "
            f"(got shape {values.shape}, orders have shape {orders.shape})"
        )
    if np.any(np.isnan(values)) or np.any(values < 0):
        raise ValueError(f"{name} must contain only reals >= 0 or +inf")
    return values
