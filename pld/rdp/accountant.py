"""A small Rényi-DP accountant: compose per-round RDP curves, then convert to (eps, delta).

Composition adds RDP curves order by order (Mironov 2017; Liew and Takahashi 2022, Lemma 1, Liew
et al. (2022) Lemma 2), also for rounds of different mechanisms (heterogeneous composition) and for
adaptively chosen rounds. The conversion is :func:`pld.rdp.conversions.to_epsilon`
and :func:`pld.rdp.conversions.to_delta` (Liew and Takahashi 2022, Lemma 2).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from pld.rdp.conversions import to_delta, to_epsilon
from pld.rdp.orders import rdp_values, real_orders
from pld.validation import integer_at_least


class RdpAccountant:
    """Accumulates the RDP of a sequence of rounds on a fixed set of orders.

    Parameters
    ----------
    orders : array_like
        Rényi orders ``lam > 1`` shared by every curve composed.

    Examples
    --------
    >>> import numpy as np
    >>> from pld.rdp import RdpAccountant, gaussian
    >>> acc = RdpAccountant(np.arange(2, 65))
    >>> acc.compose(gaussian(4.0, acc.orders), rounds=100).epsilon(1e-5)[0] > 0
    True
    """

    def __init__(self, orders: object) -> None:
        self._orders = real_orders(orders)
        self._rdp = np.zeros(self._orders.shape)

    @property
    def orders(self) -> np.ndarray:
        """The orders (a copy)."""
        return self._orders.copy()

    @property
    def rdp(self) -> np.ndarray:
        """The composed RDP curve in nats, one value per order (a copy)."""
        return self._rdp.copy()

    def compose(
        self, rdp: np.ndarray | Callable[[np.ndarray], np.ndarray], rounds: int = 1
    ) -> RdpAccountant:
        """Add ``rounds`` rounds of a mechanism with per-round RDP ``rdp``; returns ``self``.

        ``rdp`` is an array with one value (nats, ``+inf`` allowed) per order, or a
        callable evaluated at :attr:`orders`.
        """
        rounds = integer_at_least("rounds", rounds, 0)
        values = rdp(self.orders) if callable(rdp) else rdp
        values = rdp_values(values, self._orders)
        if rounds:
            self._rdp = self._rdp + rounds * values
        return self

    def epsilon(self, delta: float) -> tuple[float, float]:
        """``(epsilon, order)``: the (epsilon, delta)-DP guarantee of the composition."""
        return to_epsilon(self._rdp, self._orders, delta)

    def delta(self, epsilon: float) -> tuple[float, float]:
        """``(delta, order)``: the (epsilon, delta)-DP guarantee of the composition."""
        return to_delta(self._rdp, self._orders, epsilon)
