"""Rényi DP of the Gaussian mechanism (Mironov 2017, Prop. 7)."""

from __future__ import annotations

import numpy as np

from pld.rdp.orders import real_orders
from pld.validation import positive


def gaussian(sigma: float, orders: object, *, sensitivity: float = 1.0) -> np.ndarray:
    """RDP ``lam * sensitivity^2 / (2 sigma^2)`` of the Gaussian mechanism.

    The same in both directions; it is the ``n = 1`` case of the shuffle Gaussian
    (Liew and Takahashi 2022, Corollary 1) and its upper bound for every ``n``.

    Parameters
    ----------
    sigma : float
        Noise standard deviation, > 0.
    orders : array_like
        Rényi orders ``lam > 1``.
    sensitivity : float
        L2 distance between the two inputs, > 0.

    Returns
    -------
    numpy.ndarray
        ``eps(lam)`` in nats per order.
    """
    sigma = positive("sigma", sigma)
    sensitivity = positive("sensitivity", sensitivity)
    lams = real_orders(orders)
    return lams * sensitivity**2 / (2.0 * sigma * sigma)
