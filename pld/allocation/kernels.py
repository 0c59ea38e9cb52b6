"""The numba kernels of random allocation: sums of two independent ratio laws onto a grid.

A law is a list of values ``v_i >= 0`` (likelihood ratios, or sums of them) with
Q-masses ``w_i``. Convolving two laws visits every pair ``(i, j)``, whose sum
``v = a_i + b_j`` carries mass ``w = x_i y_j``, and puts it on a grid
(:class:`pld.allocation.sums.Grid`: points ``g_0 = 0 < g_1 < ...``):

* split (the dominating side, :func:`scatter_pairs` with ``merge=False``) splits
  ``w`` between the two grid points around ``v`` so that mass and mean are kept
  (``w (g_{k+1} - v) / (g_{k+1} - g_k)`` at ``g_k``, the rest at ``g_{k+1}``);
* merge (the dominated side, ``merge=True``) adds ``w`` and ``w v`` to the cell
  ``[g_k, g_{k+1})`` (the last cell is unbounded).

The values of each operand increase, so for a fixed ``a_i`` the cell index only
moves up with ``j``: one binary search per row, then a pointer walk.
Every mass is a sum of non-negative products, so its relative rounding error is
at most (terms + 2) units of round-off (:mod:`pld.allocation.sums` charges it).
Kept apart so that numba is imported only by the work that needs it.
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True)
def _cell(v: float, points: np.ndarray) -> int:
    """Index k of the grid cell ``[points[k], points[k+1])`` holding ``v >= 0`` (binary search).

    Values at or above the last point return the last index.
    """
    low, high = 0, points.shape[0] - 1
    if v >= points[high]:
        return high
    while high - low > 1:
        middle = (low + high) // 2
        if points[middle] <= v:
            low = middle
        else:
            high = middle
    return low


@numba.njit(cache=True)
def _split(
    v: float, w: float, k: int, points: np.ndarray, snap: float, out: np.ndarray, terms: np.ndarray
) -> float:
    """Split ``w`` at ``v`` (in cell k) onto its two points; returns ``w`` if beyond the last."""
    last = points.shape[0] - 1
    if k == last:
        if v > points[last] * (1.0 + snap):
            return w
        out[last] += w
        terms[last] += 1
    elif k == 0 and v >= points[1] * (1.0 - snap):
        out[1] += w
        terms[1] += 1
    else:
        low = points[k]
        high = points[k + 1]
        width = high - low
        out[k] += w * ((high - v) / width)
        out[k + 1] += w * ((v - low) / width)
        terms[k] += 1
        terms[k + 1] += 1
    return 0.0


@numba.njit(cache=True)
def scatter_pairs(
    a_values: np.ndarray,
    a_mass: np.ndarray,
    b_values: np.ndarray,
    b_mass: np.ndarray,
    points: np.ndarray,
    snap: float,
    merge: bool,
    mass: np.ndarray,
    moment: np.ndarray,
    terms: np.ndarray,
) -> float:
    """Put every pair sum on the grid: split (``merge`` false) or merged into its cell.

    Split: ``mass`` receives both shares, each computed from the differences to
    the two points (a relative error of a few units of round-off); a sum above
    the last point, or below the first positive one, by a relative ``snap`` at
    most (float error) is put on it. Merge: ``mass`` and ``moment`` receive the
    mass and mass times value of the cell. ``terms[k]`` counts the products added
    to cell or point k (for the rounding bound). Returns the split mass beyond the
    last point (left out: the caller charges it to the fully revealing pair).
    """
    last = points.shape[0] - 1
    beyond = 0.0
    for i in range(a_values.shape[0]):
        x = a_mass[i]
        if x == 0.0:
            continue
        a = a_values[i]
        k = _cell(a + b_values[0], points)
        for j in range(b_values.shape[0]):
            w = x * b_mass[j]
            if w == 0.0:
                continue
            v = a + b_values[j]
            while k < last and points[k + 1] <= v:
                k += 1
            if merge:
                mass[k] += w
                moment[k] += w * v
                terms[k] += 1
            else:
                beyond += _split(v, w, k, points, snap, mass, terms)
    return beyond
