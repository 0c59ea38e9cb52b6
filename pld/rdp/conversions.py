"""Conversions between Rényi DP and (epsilon, delta)-DP.

* :func:`to_epsilon` / :func:`to_delta`: RDP -> (eps, delta), the conversion of
  Liew and Takahashi (2022), Lemma 2 (eq. 4) = Liew et al. (2022), Lemma 3 (eq. 9), from Balle et
  al. (2020, Thm 21) and Canonne, Kamath and Steinke (2020), minimised over the orders. These are
  valid upper bounds for every mechanism whose RDP curve is given.
* :func:`from_dp`: (eps, delta) -> RDP by Liew et al. (2022), Lemma 1 (eq. 2, attributed to
  Asoodeh et al. 2021). **Not a valid upper bound in general**: see its docstring.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from pld.rdp.orders import rdp_values, real_orders
from pld.validation import in_interval, non_negative


class OrderRangeWarning(UserWarning):
    """The best order of a conversion is the largest one supplied (or the smallest, above 2).

    The minimum over the orders may then lie outside the range: the answer is still a
    valid bound, possibly a loose one; widen the orders on that side.
    """


def _warn_at_edge(lams: np.ndarray, best: int, value: float, what: str) -> None:
    """Warn (:class:`OrderRangeWarning`) when ``lams[best]`` is an end of several orders:
    the largest, or the smallest when it is above 2 (many RDP curves are defined at the
    integer orders >= 2 only, so a range that starts at 2 is as wide as it goes)."""
    if lams.size < 2 or value == 0.0:
        return
    order = lams[best]
    smallest = order == np.min(lams) and order > 2.0
    side = "largest" if order == np.max(lams) else "smallest" if smallest else None
    if side is not None:
        warnings.warn(
            f"{what} is attained at the {side} order supplied ({order:g}); the optimum may lie "
            f"beyond it: widen the orders {'upwards' if side == 'largest' else 'towards 1'}",
            OrderRangeWarning,
            stacklevel=3,
        )


def _conversion_slack(orders: np.ndarray) -> np.ndarray:
    """``((lam - 1) log(1 - 1/lam) - log(lam)) / (lam - 1)`` of Liew and Takahashi (2022), eq. 4."""
    return np.log1p(-1.0 / orders) - np.log(orders) / (orders - 1.0)


def epsilon_per_order(rdp: object, orders: object, delta: float) -> np.ndarray:
    """The epsilon that each order alone certifies at ``delta`` (Liew and Takahashi 2022, eq. 4).

    ``eps(lam) + (log(1/delta) + (lam - 1) log(1 - 1/lam) - log(lam)) / (lam - 1)``,
    floored at 0 (an (eps, delta) guarantee with eps < 0 is not meaningful).
    """
    lams = real_orders(orders)
    values = rdp_values(rdp, lams)
    delta = in_interval("delta", delta, 0.0, 1.0, low_open=True, high_open=True)
    per_order = values + math.log(1.0 / delta) / (lams - 1.0) + _conversion_slack(lams)
    return np.maximum(per_order, 0.0)


def to_epsilon(rdp: object, orders: object, delta: float) -> tuple[float, float]:
    """Smallest epsilon such that an RDP curve implies (epsilon, delta)-DP.

    Implements Liew and Takahashi (2022), Lemma 2 (eq. 4) = Liew et al. (2022), Lemma 3 (eq. 9):
    ``eps = min_lam eps(lam) + (log(1/delta) + (lam-1) log(1-1/lam) - log lam)/(lam-1)``.

    Parameters
    ----------
    rdp : array_like
        RDP values ``eps(lam)`` in nats (``+inf`` allowed), one per order.
    orders : array_like
        Rényi orders ``lam > 1`` (any reals).
    delta : float
        Target delta in (0, 1).

    Returns
    -------
    (float, float)
        ``(epsilon, order)``: the epsilon in nats and the order ``lam*`` attaining the
        minimum. ``(inf, nan)`` if every order has infinite RDP.

    Warns
    -----
    OrderRangeWarning
        If ``lam*`` is the largest of several orders, or the smallest and above 2
        (widen them).
    """
    lams = real_orders(orders)
    per_order = epsilon_per_order(rdp, lams, delta)
    if not np.any(np.isfinite(per_order)):
        return math.inf, math.nan
    best = int(np.argmin(per_order))
    _warn_at_edge(lams, best, float(per_order[best]), "the smallest epsilon")
    return float(per_order[best]), float(lams[best])


def to_delta(rdp: object, orders: object, epsilon: float) -> tuple[float, float]:
    """Smallest delta such that an RDP curve implies (epsilon, delta)-DP.

    The inverse of :func:`to_epsilon` at each order (Liew and Takahashi 2022, Lemma 2 solved for
    delta):
    ``log delta = (lam - 1)(eps(lam) - epsilon) + (lam - 1) log(1 - 1/lam) - log lam``,
    minimised over the orders and capped at 1.

    Parameters
    ----------
    rdp : array_like
        RDP values ``eps(lam)`` in nats (``+inf`` allowed), one per order.
    orders : array_like
        Rényi orders ``lam > 1``.
    epsilon : float
        Target epsilon >= 0 in nats.

    Returns
    -------
    (float, float)
        ``(delta, order)``; ``(1.0, nan)`` if no order gives delta < 1.

    Warns
    -----
    OrderRangeWarning
        If the order attaining it is the largest of several orders, or the smallest
        and above 2.
    """
    lams = real_orders(orders)
    values = rdp_values(rdp, lams)
    epsilon = non_negative("epsilon", epsilon)
    with np.errstate(invalid="ignore"):
        log_delta = (lams - 1.0) * (values - epsilon + _conversion_slack(lams))
    log_delta = np.where(np.isfinite(values), log_delta, np.inf)
    best = int(np.argmin(log_delta))
    if not log_delta[best] < 0.0:
        return 1.0, math.nan
    _warn_at_edge(lams, best, float(log_delta[best]), "the smallest delta")
    return float(math.exp(log_delta[best])), float(lams[best])


def _log_asoodeh_objective(
    r: np.ndarray, lam: np.ndarray, epsilon: np.ndarray, delta: np.ndarray
) -> np.ndarray:
    """``log(r^lam (r-delta)^(1-lam) + (1-r)^lam (e^eps - r + delta)^(1-lam))``."""
    first = lam * np.log(r) + (1.0 - lam) * np.log(r - delta)
    second = lam * np.log1p(-r) + (1.0 - lam) * np.log(np.exp(epsilon) - r + delta)
    return np.logaddexp(first, second)


def from_dp(epsilon: float, delta: float, orders: object) -> np.ndarray:
    """The RDP curve of an (epsilon, delta)-DP mechanism by Liew et al. (2022), Lemma 1 (eq. 2).

    ``eps(lam) = epsilon + log M / (lam - 1)`` with
    ``M = min_{r in (delta, 1)} r^lam (r - delta)^(1-lam) + (1-r)^lam (e^eps - r + delta)^(1-lam)``,
    a one-dimensional convex minimisation (both terms are perspectives of ``x^lam``),
    solved here by golden-section search on ``log M``, vectorised over the orders.

    Warning
    -------
    This is **not** an upper bound on the RDP of (epsilon, delta)-DP mechanisms and
    must not be used to certify privacy:

    * for ``delta > 0`` the (epsilon, delta)-DP pair ``P = (delta, (1-delta) p, (1-delta) q, 0)``,
      ``Q = (0, (1-delta) q, (1-delta) p, delta)`` (``p = e^eps / (1 + e^eps)``, ``q = 1 - p``)
      has infinite Rényi divergence of every order, while this formula is finite;
    * ``epsilon + log M / (lam - 1)`` equals the Rényi divergence between the binary
      laws ``(r, 1 - r)`` and ``((r - delta) e^-eps, 1 - (r - delta) e^-eps)``, and the
      formula takes the *minimum* over ``r``, which sits near ``r ~ delta``: at
      ``epsilon = 1``, ``delta = 1e-5`` and order 2 it gives 6.9e-5, while randomised
      response with ``epsilon = 1`` (which is (1, 1e-5)-DP) has RDP 0.74 there; at
      ``delta = 0`` it tends to 0.

    Both facts are asserted in ``tests/rdp/test_rdp_conversions.py``. The function is kept
    because Approaches 1 and 2 of Liew et al. (2022) and their baseline (Table 2) are built on it;
    :mod:`pld.rdp.generic_ldp` labels their outputs accordingly.

    Parameters
    ----------
    epsilon : float
        Epsilon >= 0 of the (epsilon, delta)-DP guarantee, in nats.
    delta : float
        Delta in (0, 1).
    orders : array_like
        Rényi orders ``lam > 1``.

    Returns
    -------
    numpy.ndarray
        ``eps(lam)`` in nats per order.
    """
    epsilon = non_negative("epsilon", epsilon)
    delta = in_interval("delta", delta, 0.0, 1.0, low_open=True, high_open=True)
    lams = real_orders(orders)
    return from_dp_arrays(np.full(lams.shape, epsilon), np.full(lams.shape, delta), lams)


def from_dp_arrays(epsilon: np.ndarray, delta: np.ndarray, lams: np.ndarray) -> np.ndarray:
    """Vectorised :func:`from_dp` over broadcastable arrays (validated by the caller)."""
    epsilon, delta, lams = np.broadcast_arrays(
        np.asarray(epsilon, dtype=np.float64),
        np.asarray(delta, dtype=np.float64),
        np.asarray(lams, dtype=np.float64),
    )
    # golden-section search of the unimodal log M over r in (delta, 1)
    low = delta + (1.0 - delta) * 1e-15
    high = np.full(delta.shape, 1.0 - 1e-15)
    ratio = (math.sqrt(5.0) - 1.0) / 2.0
    left = high - ratio * (high - low)
    right = low + ratio * (high - low)
    f_left = _log_asoodeh_objective(left, lams, epsilon, delta)
    f_right = _log_asoodeh_objective(right, lams, epsilon, delta)
    for _ in range(100):
        keep_left = f_left < f_right
        # minimum in [low, right] if f(left) < f(right), else in [left, high]
        high = np.where(keep_left, right, high)
        low = np.where(keep_left, low, left)
        reused = np.where(keep_left, left, right)
        f_reused = np.where(keep_left, f_left, f_right)
        fresh = np.where(keep_left, high - ratio * (high - low), low + ratio * (high - low))
        f_fresh = _log_asoodeh_objective(fresh, lams, epsilon, delta)
        left = np.where(keep_left, fresh, reused)
        right = np.where(keep_left, reused, fresh)
        f_left = np.where(keep_left, f_fresh, f_reused)
        f_right = np.where(keep_left, f_reused, f_fresh)
    log_m = np.minimum(f_left, f_right)
    return epsilon + log_m / (lams - 1.0)
