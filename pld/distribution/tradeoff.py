"""The hypothesis-testing view: trade-off curves (f-DP) with a rigorous bracket.

An adversary tests "the output came from P" against "from Q" (the two
neighbouring datasets). For a false-positive rate (type I error) alpha, the
smallest false-negative rate (type II error) of any test is the trade-off
function f(alpha) (Dong, Roth and Su 2022, "Gaussian differential privacy",
Def. 2.1); the largest true-positive rate is ``1 - f(alpha)``. A mechanism that
is (eps, delta(eps))-DP for every eps >= 0 satisfies, for every test
(their Prop. 2.12, the primal-dual view of the privacy profile),

    f(alpha) = sup_{eps >= 0} max(0, 1 - delta(eps) - e^eps alpha,
                                  e^{-eps} (1 - delta(eps) - alpha)),            (1)

and with the exact profile of a pair (the maximum over both directions, as
:meth:`pld.PLD.delta_bounds` returns) (1) is the symmetrised trade-off curve
of the pair: for a symmetric pair such as the Gaussian mechanism it is
``T(P, Q)`` itself, e.g. ``f(alpha) = Phi(Phi^{-1}(1 - alpha) - mu)`` for
mu-GDP (Dong et al., eq. 2.2; tests/distribution/test_tradeoff.py).

The bracket
-----------
Every term of (1) is a non-increasing function of delta(eps) and a line in
alpha. Write ``d_lo <= delta <= d_up`` for the PLD's bounds and ``e_0 = 0 <
e_1 < ... < e_K`` for the loss-grid points of its atoms (both bounds, both
directions) in ``[0, E]`` and a uniform grid on it, where
``E = max(log(1 / alpha_min) + 1, 30)`` (at most 700) and alpha_min is the
smallest positive alpha asked for: beyond E the first term of (1) is negative
at every such alpha and the second is below ``e^-30``.

* Lower FNR: (1) with ``d_up`` at the points ``e_k`` only. Each term is then at
  most its value with the true delta, and a sup over fewer eps is smaller, so
  this lower-bounds f: the attacker is never credited with less power than
  the truth allows (the privacy-safe side).
The uniform grid's spacing is ``loss_grid_step / SUBDIVISION``.

* Upper FNR: on ``[e_k, e_{k+1}]`` the true delta is at least
  ``d_lo(e_{k+1})`` (it is non-increasing), so each term on that cell is at
  most its value with delta = ``d_lo(e_{k+1})`` at eps = ``e_k`` (both lines
  decrease in eps); beyond the last point ``e_K`` delta is at least 0. The
  maximum over the cells upper-bounds f, with an error of first order in the
  points' spacing (measured on the Gaussian mechanism: about 4e-5 absolute at
  the default grid, against 1e-7 for the lower side).

The envelope of these lines (two per point) is evaluated exactly at every
requested alpha by an upper convex hull (``_upper_hull``), in
O(K log K + m log K) for m rates. f is also at most ``1 - alpha`` (the test
that ignores the output), which caps the upper side.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
from numba import njit

from pld import validation

if TYPE_CHECKING:  # pragma: no cover
    from pld.distribution.loss_distribution import PLD

#: Lines of (1) are drawn for eps below here (nats; e^eps must stay finite).
_FAR_EPS = 700.0

#: Second-branch lines ``e^-eps (1 - delta - alpha)`` are drawn up to this eps at
#: least (nats); beyond it they are below e^-30 ~ 1e-13.
_SECOND_BRANCH_REACH = 30.0

#: The eps points include a uniform grid this many times finer than the loss grid
#: (the upper side's error is of first order in their spacing) ...
SUBDIVISION = 8

#: ... unless that needs more than this many points; the spacing then grows.
MAX_POINTS = 2**20


@njit(cache=True)
def _upper_hull(slopes: np.ndarray, intercepts: np.ndarray) -> np.ndarray:  # pragma: no cover
    """Indices of the vertices of the upper convex hull of the points ``(slope, intercept)``.

    The points must be sorted by slope, then intercept. ``max_k (intercept_k -
    alpha slope_k)`` over all lines is attained on these (Andrew's monotone chain;
    of equal slopes only the largest intercept is kept).
    """
    n = slopes.shape[0]
    hull = np.empty(n, dtype=np.int64)
    size = 0
    for k in range(n):
        while size >= 1 and slopes[hull[size - 1]] == slopes[k]:
            size -= 1
        while size >= 2:
            o, a = hull[size - 2], hull[size - 1]
            cross = (slopes[a] - slopes[o]) * (intercepts[k] - intercepts[o]) - (
                intercepts[a] - intercepts[o]
            ) * (slopes[k] - slopes[o])
            if cross >= 0:
                size -= 1
            else:
                break
        hull[size] = k
        size += 1
    return hull[:size]


def _envelope(eps: np.ndarray, delta: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    """``max(0, max_k line_k(alpha))`` for the two lines of (1) at each ``(eps_k, delta_k)``."""
    rest = 1.0 - delta
    grow, shrink = np.exp(eps), np.exp(-eps)
    slopes = np.concatenate([grow, shrink])
    intercepts = np.concatenate([rest, shrink * rest])
    order = np.lexsort((intercepts, slopes))
    slopes, intercepts = slopes[order], intercepts[order]
    hull = _upper_hull(slopes, intercepts)
    s, c = slopes[hull], intercepts[hull]
    if s.size == 1:
        best = c[0] - s[0] * alpha
    else:
        # Line j (smaller slope) beats line j+1 for alpha >= crossing_j; the crossings
        # decrease along the hull, so the best line is the number of crossings > alpha.
        crossing = (c[1:] - c[:-1]) / (s[1:] - s[:-1])
        index = np.searchsorted(-crossing, -alpha, side="left")
        best = c[index] - s[index] * alpha
    return np.maximum(best, 0.0)


def _grid_points(loss: PLD, reach: float) -> np.ndarray:
    """The atoms' losses in (0, reach) and a uniform grid on [0, reach] (spacing step / 8)."""
    spacing = max(loss.loss_grid_step / SUBDIVISION, reach / MAX_POINTS)
    points = [np.arange(0.0, reach, spacing), np.array([reach])]
    for bound in ("upper", "lower"):
        for atoms in loss.atoms(bound):
            finite = np.asarray(atoms.loss, dtype=np.float64)
            points.append(finite[(finite > 0) & (finite < reach)])
    return np.unique(np.concatenate(points))


def tradeoff_bounds(loss: PLD, fpr: float | Sequence[float] | np.ndarray) -> tuple:
    """Lower and upper bounds on the smallest false-negative rate at each false-positive rate.

    Parameters
    ----------
    loss : PLD
        Any PLD (one round or composed).
    fpr : float or array_like
        False-positive rates (type I errors) in [0, 1].

    Returns
    -------
    (lower, upper)
        Floats for a scalar ``fpr``, arrays otherwise. ``lower <= f(fpr) <= upper``
        with f the trade-off curve (1) of the module docstring; ``lower`` is the
        one that is safe to report (no test does better than it allows). The
        largest true-positive rate is ``1 - f``. The curve is read from the PLD
        as built (its absolute delta errors carry over as they are; no grid
        refinement): build with a smaller ``loss_grid_step`` for a tighter band.
    """
    scalar = np.ndim(fpr) == 0
    alpha = validation.real_array("fpr", fpr)
    if np.any(alpha < 0) or np.any(alpha > 1):
        bad = alpha[(alpha < 0) | (alpha > 1)][0]
        raise ValueError(f"fpr must lie in [0, 1] (got {bad!r})")
    positive = alpha[alpha > 0]
    smallest = float(positive.min()) if positive.size else 1.0
    # Beyond the reach, first-branch lines are negative at every positive fpr asked
    # for and second-branch ones below e^-30: the last cell's lines bound them.
    reach = min(_FAR_EPS, max(-math.log(smallest) + 1.0, _SECOND_BRANCH_REACH))
    points = _grid_points(loss, reach)
    beyond = max(float(a.loss.max(initial=0.0)) for a in loss.atoms("upper")) + 1.0
    delta_lower, delta_upper = loss.delta_bounds(np.append(points, beyond), rel_accuracy=1.0)
    lower = _envelope(points, np.asarray(delta_upper[:-1]), alpha)
    # Cell [e_k, e_{k+1}]: delta >= d_lo(e_{k+1}), read at e_k. The last cell
    # [e_K, inf) takes delta >= 0: its lines 1 - e^{e_K} alpha and e^{-e_K} (1 - alpha)
    # bound every line of (1) beyond e_K.
    cell_delta = np.append(np.asarray(delta_lower[1:-1]), 0.0)
    upper = _envelope(points, cell_delta, alpha)
    # f(0) = 1 - P(L = +inf): between 1 - d_up and 1 - d_lo past every atom.
    upper = np.where(alpha == 0, 1.0 - delta_lower[-1], np.minimum(upper, 1.0 - alpha))
    lower = np.where(alpha == 0, np.maximum(lower, 1.0 - delta_upper[-1]), lower)
    lower = np.minimum(lower, upper)
    if scalar:
        return float(lower[0]), float(upper[0])
    return lower, upper


def tradeoff_table(loss: PLD, fpr: Sequence[float] | np.ndarray) -> np.ndarray:
    """Rows ``(fpr, fnr_lower, fnr_upper)`` for :func:`pld.plot.plot_tradeoff` and CSV."""
    alpha = validation.real_array("fpr", fpr)
    lower, upper = tradeoff_bounds(loss, alpha)
    return np.column_stack([alpha, lower, upper])
