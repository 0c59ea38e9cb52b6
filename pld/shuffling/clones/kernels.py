"""The numba kernels of the clones pair: the row loss, its thresholds and the cell scatter.

Kept apart from :mod:`pld.shuffling.clones.pair` and
:mod:`pld.shuffling.clones.cells` so that numba is imported (and its cached
kernels loaded, about 0.5 s in a fresh process) only by the work that needs them:
the grid-free δ bounds and the scatter of more than
``pld.shuffling.clones.cells.NUMPY_SCATTER_CELLS`` row cells.
"""

from __future__ import annotations

import math

import numba
import numpy as np

# -- the privacy loss within a row -------------------------------------------------


@numba.njit(cache=True)
def _row_loss(a: int, t: int, r: float, one_minus_r: float) -> float:
    """s(a, t - a) = log((a + r b) / (r a + b)), t >= 1 (:mod:`.mechanism`).

    As log1p((1 - r)(a - b) / (r a + b)) when that argument is small (small
    ε0 or a near b), as a difference of logs otherwise (large ε0, where 1 - r
    rounds to 1 and log1p(-1) would be -inf).
    """
    b = t - a
    denominator = r * a + b
    relative = one_minus_r * (a - b) / denominator
    if abs(relative) < 0.5:
        return math.log1p(relative)
    return math.log(a + r * b) - math.log(denominator)


@numba.njit(cache=True)
def _first_at_or_above(
    threshold: float, start: int, stop: int, t: int, r: float, one_minus_r: float
) -> int:
    """Smallest a in [start, stop] with s(a) >= threshold (stop if none; s increases in a).

    Solves s(a) = threshold in closed form, a* = (x t - r t) / ((1 - r)(1 + x))
    with x = e^threshold (divided through by x when threshold > 0), then corrects
    the rounding by evaluating s itself.
    """
    if threshold > 0.0:
        y = math.exp(-threshold)
        guess = (t - y * (r * t)) / (one_minus_r * (1.0 + y))
    else:
        x = math.exp(threshold)
        guess = (math.expm1(threshold) * t + one_minus_r * t) / (one_minus_r * (1.0 + x))
    if guess != guess:
        guess = start
    a = int(min(max(math.ceil(min(max(guess, -1.0), stop + 1.0)), start), stop))
    while a > start and _row_loss(a - 1, t, r, one_minus_r) >= threshold:
        a -= 1
    while a < stop and _row_loss(a, t, r, one_minus_r) < threshold:
        a += 1
    return a


@numba.njit(cache=True)
def _row_thresholds(
    threshold: float, totals: np.ndarray, r: float, one_minus_r: float
) -> np.ndarray:
    """For each row t, the smallest a in [0, t] with s(a, t - a) >= threshold (t + 1 if none)."""
    result = np.empty(totals.shape[0], dtype=np.int64)
    for row in range(totals.shape[0]):
        t = totals[row]
        result[row] = _first_at_or_above(threshold, 0, t + 1, t, r, one_minus_r)
    return result


# -- the lattice points merged per loss-grid cell ------------------------------------


@numba.njit(cache=True)
def _scatter_rows(
    totals: np.ndarray,
    lows: np.ndarray,
    row_weight: np.ndarray,
    row_window_mass: np.ndarray,
    r: float,
    step: float,
    edges: np.ndarray,
    first_cell: int,
    cell_p: np.ndarray,
    cell_q: np.ndarray,
) -> int:
    """Add the P- and Q-mass of every kept lattice point to its loss cell; return the count.

    Row t (t >= 1) keeps a in [lo, t - lo]. With β the Bin(t - 1, 1/2) pmf, the
    point's masses are ``row_weight[t] * (β(a-1) + r β(a))``
    and ``row_weight[t] * (r β(a-1) + β(a))`` (module
    docstring). β is built by the ratio recurrence from the row's median outward
    and rescaled so that its sum over the window equals ``row_window_mass[t]``
    (exact, from binomial cdfs), which removes the drift of the recurrence.

    The point (a, b) lies in cell ``first_cell + j`` when ``edges[j] <= e^s <
    edges[j + 1]`` with ``edges[j] = exp((first_cell + j) step)`` and
    e^s = (a + r b) / (r a + b); the comparisons are made without
    division or logarithm.
    The loss increases with a, so each cell is one run of a: the first point's
    cell comes from its loss, corrected by comparisons, and the walk then merges
    the increasing points with the increasing edges, one comparison per point
    and per edge crossed. Each run's β-sums are summed directly, in order of a
    (not as differences of prefix sums, which would lose the relative accuracy
    of the small tail runs).
    """
    widest = 0
    for row in range(totals.shape[0]):
        widest = max(widest, totals[row] - 2 * lows[row] + 2)
    beta = np.empty(widest)
    last = cell_p.shape[0] - 1
    points = 0
    for row in range(totals.shape[0]):
        t = totals[row]
        lo = lows[row]
        hi = t - lo
        trials = t - 1
        # beta[k - base] = β(k) for k in [lo - 1, hi] (the a - 1 and a of every kept a),
        # built on the support [k0, k1] and zero outside it.
        base = lo - 1
        k0 = max(base, 0)
        k1 = min(hi, trials)
        beta[0] = 0.0
        beta[hi - base] = 0.0
        centre = min(max(trials // 2, k0), k1)
        value = 1.0
        beta[centre - base] = value
        total = value
        for k in range(centre, k1):
            value *= (trials - k) / (k + 1)
            beta[k + 1 - base] = value
            total += value
        value = 1.0
        for k in range(centre, k0, -1):
            value *= k / (trials - k + 1)
            beta[k - 1 - base] = value
            total += value
        weight = row_weight[row] * row_window_mass[row] / total
        # Cell of a = lo from its loss, then made consistent with the edge comparisons.
        numerator = lo + r * (t - lo)
        denominator = r * lo + (t - lo)
        j = min(max(math.floor(math.log(numerator / denominator) / step) - first_cell, 0), last)
        while j > 0 and numerator < edges[j] * denominator:
            j -= 1
        while j < last and numerator >= edges[j + 1] * denominator:
            j += 1
        upper_edge = edges[j + 1] if j < last else math.inf
        start = lo
        unshifted = 0.0  # sum of β(a') over the run
        # a and t - a as floats counted exactly (integers below 2^53): the same
        # values as converting them per point, without the conversions.
        a_float = float(lo)
        t_float = float(t)
        for a in range(lo, hi + 1):
            numerator = a_float + r * (t_float - a_float)
            denominator = r * a_float + (t_float - a_float)
            a_float += 1.0
            if numerator >= upper_edge * denominator:
                # a opens a later cell: the run [start, a) of cell j is complete.
                shifted = unshifted - beta[a - 1 - base] + beta[start - 1 - base]
                cell_p[j] += weight * (shifted + r * unshifted)
                cell_q[j] += weight * (r * shifted + unshifted)
                j += 1
                while j < last and numerator >= edges[j + 1] * denominator:
                    j += 1
                upper_edge = edges[j + 1] if j < last else math.inf
                start = a
                unshifted = 0.0
            unshifted += beta[a - base]
        shifted = unshifted - beta[hi - base] + beta[start - 1 - base]  # sum of β(a' - 1)
        cell_p[j] += weight * (shifted + r * unshifted)
        cell_q[j] += weight * (r * shifted + unshifted)
        points += hi - lo + 1
    return points
