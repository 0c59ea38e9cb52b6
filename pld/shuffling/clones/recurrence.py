"""The clones pair row by row without walking the rows: binomial sums carried from row to row.

Row t of the clones pair (:mod:`pld.shuffling.clones.mechanism`) holds the points
(a, t - a), with masses built from ``beta_m(a)``, the Bin(m, 1/2) pmf of m = t - 1,
and the loss increases with a. What a hockey stick or a grid cell needs of a row
is a few sums of beta_m over ranges of a with moving ends, and consecutive rows are
tied by Pascal's rule ``beta_{m+1}(a) = (beta_m(a) + beta_m(a - 1)) / 2``:

    U_{m+1}[e, f) = U_m[e, f) + (beta_m(e - 1) - beta_m(f - 1)) / 2,   U_m[e, f) = sum beta_m(a),
    P(X_{m+1} >= k) = P(X_m >= k) + beta_m(k - 1) / 2,
    beta_{m+1}(a) = beta_m(a) (m + 1) / (2 (m + 1 - a)),   beta(a + 1) = beta(a) (m - a) / (a + 1),

so a row costs O(1) per range end instead of O(row width): a range end moves by
0 or 1 per row (the a at which the loss crosses a level solves a linear equation
in (a, t) whose slope da/dt lies in [0, 1]: docs/large-populations.md §1), and
moving it moves one beta value between neighbouring ranges. At n = 10^9 (eps0 = 1)
a row is 1.7e5 points wide and spans about 1200 cells of the default grid: the
recurrence does 1.2e3 steps per row instead of 1.7e5.

Error bound, carried with the values (a posteriori, so valid for any path the
ends take): every beta value carries a relative bound (Loader's pmf where it is
computed afresh, :mod:`pld.numerics.binomial_pmf`, plus 3 u per product) and every
range sum an absolute one (each addition adds u of its result and the relative
bound of the beta value added). Sums are recomputed from fresh pmfs every
``ANCHOR_ROWS`` rows, so the bounds do not grow with n: about 3e-11 relative
for the cells at n = 10^9 (measured with the bound itself; the values agree
with a point-by-point walk to 2e-14 at n = 10^7).
"""

from __future__ import annotations

import math

import numba
import numpy as np

from pld.numerics import UNIT_ROUNDOFF
from pld.numerics.binomial_pmf import LOG_PMF_ERROR, half_pmf
from pld.shuffling.clones.kernels import _row_loss

#: Rows between fresh evaluations of the cell sums (each costs one walk over the
#: kept part of a row).
ANCHOR_ROWS = 4096

_U = UNIT_ROUNDOFF


@numba.njit(cache=True)
def _pmf_error(value: float) -> float:
    """Relative error bound of a fresh :func:`half_pmf` value."""
    if value <= 0.0:
        return 0.0
    return LOG_PMF_ERROR * (1.0 - math.log(value)) + 2.0 * _U


@numba.njit(cache=True)
def _walk_up(k: int, m: int) -> tuple[float, float]:
    """(S, err) with |S - P(X >= k)| <= err for X ~ Bin(m, 1/2), 2 k > m: summed upward.

    Terms by the ratio beta(a + 1) = beta(a) (m - a) / (a + 1) (2 u each), afresh
    every 1024 steps; stopped at 1e-20 of the sum, the rest bounded by the
    geometric series of the next ratio (ratios decrease above the median).
    """
    term = half_pmf(float(k), float(m))
    if term == 0.0:
        return 0.0, 0.0
    anchor = _pmf_error(term)
    rel = anchor
    drift = 0.0
    total = 0.0
    a = k
    while True:
        total += term
        if a >= m or term <= 1e-20 * total:
            break
        term = term * (m - a) / (a + 1.0)
        a += 1
        drift += 2.0 * _U
        if drift > 2048.0 * _U:
            term = half_pmf(float(a), float(m))
            anchor = _pmf_error(term)
            drift = 0.0
        rel = max(rel, anchor + drift)
    rest = 0.0
    if a < m and term > 0.0:
        ratio = (m - a) / (a + 1.0)
        rest = term * (1.0 + rel) * ratio / (1.0 - ratio)
    return total + 0.5 * rest, (rel + (a - k + 2) * _U) * total + rest


@numba.njit(cache=True)
def upper_tail(k: int, m: int) -> tuple[float, float]:
    """(T, err) with |T - P(X >= k)| <= err, X ~ Bin(m, 1/2)."""
    if k <= 0:
        return 1.0, 0.0
    if k > m:
        return 0.0, 0.0
    if 2 * k > m:
        return _walk_up(k, m)
    low, err = _walk_up(m - k + 1, m)  # P(X <= k - 1) = P(X >= m - k + 1)
    return 1.0 - low, err + _U


@numba.njit(cache=True)
def _threshold(start: int, t: int, eps: float, r: float, one_minus_r: float):
    """Smallest a in [0, t + 1] with s(a, t - a) >= eps, searched from ``start``."""
    a = start
    while a > 0 and _row_loss(a - 1, t, r, one_minus_r) >= eps:
        a -= 1
    while a <= t and _row_loss(a, t, r, one_minus_r) < eps:
        a += 1
    return a


@numba.njit(cache=True)
def hockey_stick_rows(
    eps: float,
    first: int,
    row_weight: np.ndarray,
    weight_error: np.ndarray,
    r: float,
    one_minus_r: float,
    eps0: float,
) -> tuple[float, float]:
    """Sum over rows t = first, first + 1, ... of P - e^eps Q over the points of loss >= eps.

    Per row (Koskela et al. 2023, App A, regrouped so that nothing cancels at
    eps = 0): ``w [(1 - e^eps)(1 + r) T + (1 - e^(eps - eps0)) B]``
    with T = P(X >= k), B = beta(k - 1), k the row's threshold. Returns the sum and
    a bound on its absolute error (``weight_error``: relative bound of each weight).
    """
    e = math.expm1(eps)
    edge0 = -math.expm1(eps - eps0)
    rows = row_weight.shape[0]
    t = first
    k = _threshold(t // 2, t, eps, r, one_minus_r)
    m = t - 1
    tail, tail_error = upper_tail(k, m)
    beta = half_pmf(float(k - 1), float(m)) if 1 <= k <= m + 1 else 0.0
    beta_error = _pmf_error(beta)
    total = 0.0
    slack = 0.0
    for i in range(rows):
        t = first + i
        m = t - 1
        w = row_weight[i]
        c1 = -e * (1.0 + r)
        c2 = edge0
        a1 = w * c1 * tail
        a2 = w * c2 * beta
        total += a1 + a2
        slack += abs(w * c1) * tail_error + abs(w * c2) * beta * beta_error
        slack += (weight_error[i] + 16.0 * _U) * (abs(a1) + abs(a2))
        if i == rows - 1:
            break
        big_m = m + 1
        following = t + 1
        k_next = _threshold(k, following, eps, r, one_minus_r)
        if k <= 1 or k >= m or k_next <= 1 or k_next >= big_m:
            # Near an end of the row: afresh (never in the bulk of a large row).
            k = k_next
            tail, tail_error = upper_tail(k, big_m)
            beta = half_pmf(float(k - 1), float(big_m)) if 1 <= k <= big_m + 1 else 0.0
            beta_error = _pmf_error(beta)
            continue
        tail += 0.5 * beta
        tail_error += 0.5 * beta * beta_error + _U * tail
        beta = beta * big_m / (2.0 * (big_m - k + 1))
        beta_error += 3.0 * _U
        while k < k_next:
            beta = beta * (big_m - k + 1) / k
            beta_error += 3.0 * _U
            tail -= beta
            tail_error += beta * beta_error + _U * abs(tail)
            k += 1
        while k > k_next:
            tail += beta
            tail_error += beta * beta_error + _U * tail
            beta = beta * (k - 1) / (big_m - k + 2)
            beta_error += 3.0 * _U
            k -= 1
    # Each row's sum is >= 0, so the partial sums are at most the total: rows u of it.
    return total, slack + _U * rows * abs(total)


# -- grid cells ------------------------------------------------------------------


@numba.njit(cache=True, inline="always")
def _above(a: float, t: float, r: float, edge: float) -> bool:
    """The scatter kernel's test e^s(a) >= edge, as (a + r b) >= edge (r a + b)."""
    return a + r * (t - a) >= edge * (r * a + (t - a))


@numba.njit(cache=True)
def _edge(start: int, t: int, r: float, edge: float) -> int:
    """Smallest a in [0, t + 1] whose point passes :func:`_above`, searched from ``start``."""
    a = start
    while a > 0 and _above(float(a - 1), float(t), r, edge):
        a -= 1
    while a <= t and not _above(float(a), float(t), r, edge):
        a += 1
    return a


@numba.njit(cache=True)
def _fresh(
    m: int,
    ends: np.ndarray,
    sums: np.ndarray,
    sum_error: np.ndarray,
    betas: np.ndarray,
    beta_error: np.ndarray,
) -> None:
    """Cell sums over [ends[j], ends[j+1]) and betas[j] = beta_m(ends[j] - 1), afresh."""
    cells = sums.shape[0]
    for j in range(cells + 1):
        betas[j] = half_pmf(float(ends[j] - 1), float(m)) if ends[j] >= 1 else 0.0
        beta_error[j] = _pmf_error(betas[j])
    for j in range(cells):
        lo, hi = ends[j], ends[j + 1]
        total = 0.0
        rel = 0.0
        if hi > lo:
            term = half_pmf(float(lo), float(m))
            anchor = _pmf_error(term)
            drift = 0.0
            for a in range(lo, hi):
                total += term
                rel = max(rel, anchor + drift)
                term = term * (m - a) / (a + 1.0)
                drift += 2.0 * _U
                if drift > 2048.0 * _U:
                    term = half_pmf(float(a + 1), float(m))
                    anchor = _pmf_error(term)
                    drift = 0.0
        sums[j] = total
        sum_error[j] = (rel + (hi - lo + 1) * _U) * total


@numba.njit(cache=True)
def scatter_rows(
    first: int,
    row_weight: np.ndarray,
    weight_error: np.ndarray,
    r: float,
    edges: np.ndarray,
    low_cell: int,
    high_cell: int,
    cell_p: np.ndarray,
    cell_q: np.ndarray,
    error_p: np.ndarray,
    error_q: np.ndarray,
    anchor_rows: int,
) -> float:
    """Add the masses of the points of cells [low_cell, high_cell) of each row; return the rest.

    Rows t = first, first + 1, ...; cell j holds the points with
    ``edges[j] <= e^s < edges[j + 1]`` (the comparison of the scatter kernel), row
    weights as in :mod:`pld.shuffling.clones.kernels`. With ``U_j`` the beta-sum of
    cell j and ``E_j = beta(e_j - 1)`` at its lower end e_j, the cell's masses are

        P_j = w [(1 + r) U_j + (E_j - E_{j+1})],
        Q_j = w [(1 + r) U_j + r (E_j - E_{j+1})],

    (sum of beta(a - 1) over the cell: U_j + E_j - E_{j+1}). ``error_p``/``error_q``
    receive bounds on the absolute errors. Returns a bound on the P-mass (also on
    the Q-mass) of the points below e_low or from e_high on: per row at most
    ``w (1 + r)`` times the two binomial tails, each bounded by the
    geometric series of its end's ratio (ratios fall away from the median).
    """
    rows = row_weight.shape[0]
    cells = high_cell - low_cell
    ends = np.empty(cells + 1, dtype=np.int64)
    targets = np.empty(cells + 1, dtype=np.int64)
    sums = np.zeros(cells)
    sum_error = np.zeros(cells)
    betas = np.zeros(cells + 1)
    beta_error = np.zeros(cells + 1)
    t = first
    guess = t // 2
    for j in range(cells + 1):
        ends[j] = _edge(guess, t, r, edges[low_cell + j])
        guess = ends[j]
    _fresh(t - 1, ends, sums, sum_error, betas, beta_error)
    outside = 0.0
    for i in range(rows):
        t = first + i
        m = t - 1
        w = row_weight[i]
        both = 1.0 + r
        p_edge = 1.0
        q_edge = r
        relative = weight_error[i] + 8.0 * _U
        for j in range(cells):
            difference = betas[j] - betas[j + 1]
            spread = betas[j] * beta_error[j] + betas[j + 1] * beta_error[j + 1]
            base = both * sums[j]
            cell_p[low_cell + j] += w * (base + p_edge * difference)
            cell_q[low_cell + j] += w * (base + q_edge * difference)
            bound = w * (
                both * sum_error[j]
                + p_edge * spread
                + relative * (base + p_edge * (betas[j] + betas[j + 1]))
            )
            error_p[low_cell + j] += bound
            error_q[low_cell + j] += bound
        low = ends[0] - 1
        left = 0.0
        if low >= 0:
            ratio = low / (m - low + 1.0)
            left = betas[0] / (1.0 - ratio) if ratio < 1.0 else 1.0
        high = ends[cells] - 1
        right = 0.0
        if high <= m:
            ratio = (m - high) / (high + 1.0)
            right = betas[cells] / (1.0 - ratio) if ratio < 1.0 else 1.0
        margin = 1.0 + beta_error[0] + beta_error[cells] + relative + 16.0 * _U
        outside += w * both * (left + right) * margin
        if i == rows - 1:
            break
        big_m = m + 1
        following = t + 1
        for j in range(cells + 1):
            targets[j] = _edge(ends[j], following, r, edges[low_cell + j])
        if (i + 1) % anchor_rows == 0:
            for j in range(cells + 1):
                ends[j] = targets[j]
            _fresh(big_m, ends, sums, sum_error, betas, beta_error)
            continue
        # Pascal's rule: the next row with the same ends.
        for j in range(cells):
            step = 0.5 * (betas[j] - betas[j + 1])
            sums[j] += step
            sum_error[j] += 0.5 * (betas[j] * beta_error[j] + betas[j + 1] * beta_error[j + 1])
            sum_error[j] += _U * (abs(sums[j]) + abs(step))
        for j in range(cells + 1):
            if ends[j] - 1 < big_m:
                betas[j] *= big_m / (2.0 * (big_m - ends[j] + 1))
                beta_error[j] += 3.0 * _U
            else:  # beta_m(m + 1) = 0 but beta_{m+1}(m + 1) is not: afresh
                betas[j] = half_pmf(float(ends[j] - 1), float(big_m))
                beta_error[j] = _pmf_error(betas[j])
        # The ends of the next row: rightward moves from the top down (the ends stay
        # ordered), then leftward ones from the bottom up.
        for j in range(cells, -1, -1):
            while ends[j] < targets[j]:
                a = ends[j]
                if a == 0:
                    value = half_pmf(0.0, float(big_m))
                    rel = _pmf_error(value)
                else:
                    value = betas[j] * (big_m - a + 1.0) / a
                    rel = beta_error[j] + 3.0 * _U
                if j > 0:
                    sums[j - 1] += value
                    sum_error[j - 1] += value * rel + _U * abs(sums[j - 1])
                if j < cells:
                    sums[j] -= value
                    sum_error[j] += value * rel + _U * abs(sums[j])
                betas[j] = value
                beta_error[j] = rel
                ends[j] = a + 1
        for j in range(cells + 1):
            while ends[j] > targets[j]:
                a = ends[j] - 1
                value = betas[j]
                rel = beta_error[j]
                if j < cells:
                    sums[j] += value
                    sum_error[j] += value * rel + _U * abs(sums[j])
                if j > 0:
                    sums[j - 1] -= value
                    sum_error[j - 1] += value * rel + _U * abs(sums[j - 1])
                betas[j] = betas[j] * a / (big_m - a + 1.0) if a >= 1 else 0.0
                beta_error[j] = rel + 3.0 * _U
                ends[j] = a
    return outside
