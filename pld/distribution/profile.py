"""Connect-the-dots: a discrete dominating pair from a privacy profile.

Implements Algorithm 1 of Doroshenko, Ghazi, Kamath, Kumar and Manurangsi (2022,
"Connect the dots: tighter discrete approximations of privacy loss
distributions", PoPETs 4:552-570), as used in Koskela et al. (2023), §2.1 and §3.4 (grid
``alpha_0 = 0 < alpha_1 < ... < alpha_N < alpha_{N+1} = inf``), written here in
terms of ``alpha = e^eps``.

Notation
--------
For a pair (P, Q) the hockey-stick curve is ``H(alpha) = H_alpha(P || Q) =
sum_x (P(x) - alpha Q(x))_+`` for ``alpha >= 0``, and ``delta(eps) = H(e^eps)``
(Koskela et al. 2023, eq 2.1). ``H`` is convex and non-increasing, ``H(0) = 1`` and
``H(alpha) >= (1 - alpha)_+``; ``H`` on all of ``alpha >= 0`` also fixes the
reverse curve, ``H_alpha(Q || P) = alpha H(1/alpha) + 1 - alpha``. A *privacy
profile* of a mechanism M is any such function with
``H_alpha(M(X) || M(Y)) <= H(alpha)`` for every ordered pair of neighbours.

Derivation (the version implemented)
------------------------------------
A pair whose privacy loss ``log P/Q`` takes the finite values
``eps_1 < ... < eps_N`` (``alpha_j = e^{eps_j}``), plus ``+inf`` (P-mass
``p_inf`` where Q = 0) and ``-inf`` (Q-mass ``q_-inf`` where P = 0), has

    H(alpha) = p_inf + sum_{j : alpha_j > alpha} (p_j - alpha q_j),   p_j = alpha_j q_j.   (1)

So ``H`` is piecewise linear in ``alpha`` with kinks at the ``alpha_j`` and slope
``-sum_{k > j} q_k`` on ``(alpha_j, alpha_{j+1})``. Conversely, given values
``H_j`` at the grid points, the piecewise-linear interpolant through ``(0, 1)``,
``(alpha_1, H_1), ..., (alpha_N, H_N)``, constant beyond ``alpha_N``, is the curve
(1) of the pair

    s_0 = (H_1 - 1) / alpha_1,   s_j = (H_{j+1} - H_j) / (alpha_{j+1} - alpha_j),   s_N = 0   (2)
    q_j = s_j - s_{j-1},   p_j = alpha_j q_j                           (j = 1..N)            (3)
    p_inf = H_N,   q_-inf = 1 + s_0.                                                        (4)

The Q-masses telescope to 1, and summation by parts gives
``sum_j p_j = 1 - H_N``, so P sums to 1 too. The masses are non-negative exactly
when the slopes are non-decreasing (convexity), ``s_0 >= -1`` and ``s_{N-1} <= 0``.

Domination: a convex ``H`` lies below its chords, so on ``[0, alpha_N]`` the
interpolant is ``>= H``; beyond ``alpha_N`` the constant ``H_N >= H`` because
``H`` is non-increasing. The pair's curve therefore dominates the profile at
every ``alpha`` and equals it at the grid points: the pair is a dominating pair
of every mechanism that the profile describes, for both orders of neighbours.
That is why the resulting PLD is built with ``symmetric=True`` ("one direction
stands for both"): its P->Q direction alone bounds ``H_alpha(M(X) || M(Y))``
for every ordered pair.

Values that are not exactly a profile (float round-off, or bounds on one) are
first replaced by their :func:`profile_hull`, the greatest convex minorant: if
the values bound a true profile from above, so does the hull, and eqs. (2)-(4)
then have non-negative masses. The float64 masses are checked against the hull
in long double and any shortfall is made up (:func:`pair_from_hull`). This
formulation was derived here and checked on randomised response (exact
recovery) and on the Gaussian profile (tests/distribution/test_profile.py); Koskela et al.
(2023) only cites Algorithm 1.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from pld import validation
from pld.distribution.recipes import refinable

if TYPE_CHECKING:  # pragma: no cover
    from pld.distribution.loss_distribution import PLD

_LOGGER = logging.getLogger(__name__)

#: Largest |eps| accepted on a grid, in nats (``e^eps`` must stay finite).
MAX_GRID_EPS = 700.0

#: How far (absolute, in delta) the given profile values may be from a valid
#: profile (convex and non-increasing in alpha, ``>= 1 - alpha``), measured as
#: the largest ``|value - hull|`` of :func:`profile_hull`, before
#: :func:`from_privacy_profile` rejects them. Smaller defects (float round-off of
#: a numerically evaluated profile) are absorbed by the hull, which stays an
#: upper bound on any profile that the values bound from above.
PROFILE_TOLERANCE = 1e-9

_SIDES = ("upper", "lower")


@dataclass(frozen=True)
class DiscretePair:
    """A pmf pair on privacy-loss atoms ``loss`` (nats) plus ``+inf`` and ``-inf``.

    Attributes
    ----------
    loss : ndarray
        Finite privacy losses ``eps_j = log(p_j / q_j)`` of the atoms, increasing, nats.
    log_p, log_q : ndarray
        Natural logs of the P- and Q-masses of the atoms; in float64
        ``loss <= log_p - log_q <= loss`` plus a few ulps of ``|log_q|``
        (:func:`_exact_loss_log_q`).
    p_infinity : float
        P-mass where Q is zero (privacy loss ``+inf``).
    q_minus_infinity : float
        Q-mass where P is zero (privacy loss ``-inf``).
    """

    loss: np.ndarray
    log_p: np.ndarray
    log_q: np.ndarray
    p_infinity: float
    q_minus_infinity: float

    @property
    def p_mass(self) -> np.ndarray:
        """P-masses of the finite atoms."""
        return np.exp(self.log_p)

    @property
    def q_mass(self) -> np.ndarray:
        """Q-masses of the finite atoms."""
        return np.exp(self.log_q)

    def log_pmfs(self) -> tuple[np.ndarray, np.ndarray]:
        """``(log_p, log_q)`` on the support ``[-inf atom, finite atoms, +inf atom]``.

        The form :func:`pld.from_pmfs` takes (``-inf`` marks a zero mass).
        """
        with np.errstate(divide="ignore"):
            log_p = np.concatenate(([-np.inf], self.log_p, [np.log(self.p_infinity)]))
            log_q = np.concatenate(([np.log(self.q_minus_infinity)], self.log_q, [-np.inf]))
        return log_p, log_q

    def hockey_stick(self, alpha: np.ndarray) -> np.ndarray:
        """``H_alpha(P || Q)`` by eq. (1), for an array of ``alpha >= 0``.

        Suffix sums are taken in extended precision (``np.longdouble``), so the
        value is accurate to a few ulps of the tail masses it is made of.
        """
        return self._curve(np.asarray(alpha, dtype=np.longdouble)).astype(np.float64)

    def _curve(self, alpha: np.ndarray) -> np.ndarray:
        """:meth:`hockey_stick` in long double."""
        p_tail, q_tail = tail_sums(self.p_mass, self.q_mass)
        with np.errstate(divide="ignore"):
            index = np.searchsorted(self.loss, np.log(alpha.astype(np.float64)), side="right")
        # Atoms with loss == log(alpha) contribute zero either way.
        value = p_tail[index] - alpha * q_tail[index] + np.longdouble(self.p_infinity)
        return np.maximum(value, 0)


def tail_sums(*masses: np.ndarray) -> tuple[np.ndarray, ...]:
    """For each array, ``tail[i] = sum_{k >= i} mass_k`` in long double, ``tail[len] = 0``.

    Sequential sums of non-negative terms: relative error at most ``len * eps`` of
    ``np.longdouble`` (a few ulps of float64 for fewer than ~10^3 terms on x86).
    """
    tails = []
    for mass in masses:
        tail = np.zeros(mass.shape[0] + 1, dtype=np.longdouble)
        tail[:-1] = np.cumsum(mass[::-1].astype(np.longdouble))[::-1]
        tails.append(tail)
    return tuple(tails)


def check_eps_grid(eps_grid: object) -> np.ndarray:
    """``eps_grid`` as a float array; ``ValueError`` unless strictly increasing in [-700, 700]."""
    grid = validation.real_array("eps_grid", eps_grid)
    if grid.size == 0:
        raise ValueError("eps_grid must hold at least one value")
    if np.any(np.diff(grid) <= 0):
        raise ValueError("eps_grid must be strictly increasing")
    if np.max(np.abs(grid)) > MAX_GRID_EPS:
        raise ValueError(f"eps_grid values must lie in [-{MAX_GRID_EPS:g}, {MAX_GRID_EPS:g}] nats")
    return grid


def _check_values(delta_values: object, size: int) -> np.ndarray:
    values = validation.real_array("delta_values", delta_values)
    if values.shape != (size,):
        raise ValueError(f"delta_values must hold one value per grid point ({size})")
    if np.any(values < 0) or np.any(values > 1):
        raise ValueError("delta_values must lie in [0, 1]")
    return values


def profile_hull(eps_grid: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The tightest valid profile implied by grid values: the hull used by eqs. (2)-(4).

    Every privacy profile ``H`` is convex and non-increasing in ``alpha``, with
    ``H(0) = 1`` and ``H >= max(1 - alpha, 0)``. So from values ``v_j`` the hull

    1. raises ``v_j`` to ``max(1 - alpha_j, 0)``,
    2. lowers ``v_j`` to ``min_{i <= j} v_i`` (non-increasing),
    3. takes the greatest convex minorant of ``(0, 1), (alpha_1, v_1), ...,
       (alpha_N, v_N)``, by weighted isotonic regression of the chord slopes
       (pool-adjacent-violators, ``scipy.optimize.isotonic_regression``).

    If ``v_j >= H(alpha_j)`` for a profile ``H``, each step keeps every value
    ``>= H(alpha_j)`` (``H`` is itself a convex, non-increasing minorant above
    ``1 - alpha``), so the hull is still an upper bound at the grid points; if
    ``v_j <= H(alpha_j)``, each step only lowers the interpolant. Values that
    already form a profile are returned unchanged.

    Parameters
    ----------
    eps_grid : ndarray
        Strictly increasing grid (nats).
    values : ndarray
        Values at the grid points, in [0, 1].

    Returns
    -------
    vertices : ndarray of int
        Indices into the grid of the hull's vertices (kinks), increasing; always
        includes the last grid point.
    hull : ndarray (long double)
        The hull's values at every grid point.
    """
    from scipy.optimize import isotonic_regression

    alpha = np.exp(np.asarray(eps_grid, dtype=np.longdouble))
    floor = np.maximum(1 - alpha, 0)
    points = np.minimum.accumulate(np.maximum(np.asarray(values, dtype=np.longdouble), floor))
    abscissa = np.concatenate((np.zeros(1, dtype=np.longdouble), alpha))
    ordinate = np.concatenate((np.ones(1, dtype=np.longdouble), points))
    widths = np.diff(abscissa)
    slopes = np.diff(ordinate) / widths
    pooled = isotonic_regression(slopes.astype(np.float64), weights=widths.astype(np.float64))
    corners = np.asarray(pooled.blocks)  # curve-point indices; 0 is the anchor (0, 1)
    point = np.arange(1, alpha.size + 1)
    right = corners[np.searchsorted(corners, point, side="left")]
    left = corners[np.searchsorted(corners, point, side="left") - 1]
    share = (abscissa[point] - abscissa[left]) / (abscissa[right] - abscissa[left])
    hull = ordinate[left] + share * (ordinate[right] - ordinate[left])
    hull[corners[1:] - 1] = points[corners[1:] - 1]
    return corners[1:] - 1, hull


#: Relative margin by which :func:`below_every_profile` lowers its values further
#: (float round-off of the long-double arithmetic and of the later float64 masses).
_BELOW_MARGIN = 1e-12


def below_every_profile(
    eps_grid: np.ndarray, lower: np.ndarray, upper: np.ndarray, at_infinity: float = 0.0
) -> np.ndarray:
    """Values whose connect-the-dots curve lies below every profile in the bracket.

    Any privacy profile ``H`` (convex, non-increasing in ``alpha = e^eps``,
    ``H(0) = 1``) with ``lower_j <= H(alpha_j) <= upper_j`` at the grid points lies
    below its chords but above the extensions of the secants of its neighbouring
    intervals. On ``[alpha_k, alpha_{k+1}]`` it is therefore above the line through
    ``(alpha_k, lower_k)`` with the smallest left secant slope the bracket allows,
    ``(lower_k - upper_{k-1}) / (alpha_k - alpha_{k-1})`` (at the anchor (0, 1): -1,
    as ``H >= 1 - alpha``), and above the line through ``(alpha_{k+1}, lower_{k+1})``
    with the largest right one, ``(upper_{k+2} - lower_{k+1}) / ...`` (on the last
    interval 0: H is non-increasing). The chord through the lower values exceeds
    the larger of the two lines by at most ``w a b / (a + b)`` (w the width, a and b
    the chord's slope minus the left one and the right one minus it, where both are
    positive), attained where they cross. Lowering the two ends of each interval so
    that its chord clears that excess (:func:`_lowerings`; the last value also to at
    most ``at_infinity``, a lower bound on ``H(+inf)``: beyond the grid the curve is
    constant; the first one to ``1 - alpha``: the chord from the fixed anchor (0, 1)
    is below H only then) puts every chord below H; the hull
    (:func:`profile_hull`) only lowers it further. So the pair built from these
    values (``pair_from_hull(..., "lower")``) is dominated by every such H's pair:
    it bounds the composition of the exact profile from below, not just that of
    its connect-the-dots interpolant on this grid. The cost is about twice the
    connect-the-dots excess ``w^2 H'' / 8`` of the grid.

    Parameters
    ----------
    eps_grid : ndarray
        Strictly increasing grid (nats).
    lower, upper : ndarray
        Bracket of the profile at the grid points, in [0, 1].
    at_infinity : float
        A lower bound on ``lim H(alpha)`` as ``alpha -> inf`` (the P-mass where
        Q = 0); 0 by default.

    Returns
    -------
    ndarray
        Lowered values (long double), in [0, 1].
    """
    alpha = np.concatenate(([0], np.exp(np.asarray(eps_grid, dtype=np.longdouble))))
    up = np.concatenate(([1], np.asarray(upper, dtype=np.longdouble)))
    low = np.minimum(np.concatenate(([1], np.asarray(lower, dtype=np.longdouble))), up)
    widths = np.diff(alpha)
    chord = np.diff(low) / widths
    left = np.concatenate(([-1], (low[1:-1] - up[:-2]) / widths[:-1]))
    right = np.concatenate(((up[2:] - low[1:-1]) / widths[1:], [0]))
    a = np.maximum(chord - left, 0)
    b = np.maximum(right - chord, 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        excess = np.where(a + b > 0, widths * a * b / (a + b), 0)
        crossing = np.where(a + b > 0, b / (a + b), 0)
    values = (low[1:] - _lowerings(excess, crossing, low[1:])) * (1 - _BELOW_MARGIN)
    values[-1] = min(values[-1], at_infinity)
    # The chord from the anchor (0, 1) lies below H only if it is 1 - alpha itself.
    values[0] = max(1 - alpha[1], 0)
    return np.clip(values, 0, 1)


def _lowerings(excess: np.ndarray, crossing: np.ndarray, values: np.ndarray) -> np.ndarray:
    """How much to lower each grid point's value (``values``, the lower ones) so that
    every chord is below its interval's two lines (:func:`below_every_profile`).

    On interval ``i`` the chord exceeds the larger line by the tent ``min(a w t, b w
    (1 - t))`` (``t`` the position in the interval), whose peak ``E = excess[i]`` is at
    ``t* = crossing[i]``. Lowering the ends by ``x`` (left) and ``y`` (right) lowers the
    chord by ``x (1 - t) + y t``, a line: it clears the tent iff ``x (1 - t*) + y t* >=
    E``. Left to right, each point is lowered by ``x = max(y_prev, E)`` (what its left
    interval already needs, or this interval's excess), and the right end by only what
    is left, ``y = max(0, (E - x (1 - t*)) / t*) <= E``; so no point is lowered by more
    than ``max(excess[i - 1], excess[i])``, and a point after an interval with a large
    excess (a wide bracket on its left) is not lowered for it again. A point lowered
    to 0 or below (its value becomes 0) is lowered by only its value ``v``: then, right
    to left, its interval's left end takes the rest, ``x >= (E - v t*) / (1 - t*)``.
    The anchor's interval (index 0) lowers the first point by its excess.
    """
    size = excess.shape[0]
    lowering = np.empty(size, dtype=np.longdouble)
    carried = excess[0]
    for i in range(1, size):
        lowering[i - 1] = left = max(carried, excess[i])
        peak, share = excess[i], crossing[i]
        carried = max(0, (peak - left * (1 - share)) / share) if share > 0 else 0
    lowering[-1] = carried
    for i in range(size - 1, 0, -1):
        if lowering[i] >= values[i] and excess[i] > 0:
            share = crossing[i]
            rest = (excess[i] - values[i] * share) / (1 - share) if share < 1 else math.inf
            lowering[i - 1] = max(lowering[i - 1], rest)
    return lowering


def lower_envelope(eps_grid: np.ndarray, curves: list[np.ndarray]) -> np.ndarray:
    """Values whose connect-the-dots curve lies below the minimum of the curves' hulls.

    Each entry of ``curves`` (values at the grid points) stands for the
    piecewise-linear hull of :func:`profile_hull`. Where two of them cross inside
    an interval, their minimum is a concave tent whose chord lies above it by the
    tent's depth at the crossing; both end values are lowered by it. A convex curve
    below the minimum of convex curves is below its greatest convex minorant (the
    "best of" profile that connect-the-dots uses).
    """
    hulls = [
        np.concatenate(([1], profile_hull(eps_grid, np.asarray(c, dtype=np.float64))[1]))
        for c in curves
    ]
    values = np.minimum.reduce(hulls)
    lowering = np.zeros(values.shape, dtype=np.longdouble)
    for i, first in enumerate(hulls):
        for second in hulls[i + 1 :]:
            gap = first - second
            cross = np.flatnonzero(gap[:-1] * gap[1:] < 0)
            share = gap[cross] / (gap[cross] - gap[cross + 1])
            meet = first[cross] + share * (first[cross + 1] - first[cross])
            chord = values[cross] + share * (values[cross + 1] - values[cross])
            depth = np.maximum(chord - meet, 0)
            np.maximum.at(lowering, cross, depth)
            np.maximum.at(lowering, cross + 1, depth)
    return np.clip((values - lowering)[1:] * (1 - _BELOW_MARGIN), 0, 1)


def _exact_loss_log_q(loss: np.ndarray, log_p: np.ndarray, log_q: np.ndarray) -> np.ndarray:
    """Lower ``log_q`` by a few ulps until ``log_p - log_q >= loss`` in float64.

    The engine computes each atom's loss as ``log_p - log_q``, whose float error
    is a few ulps of ``|log_q|`` (up to ~1e-14 nats), more than its snapping
    tolerance near small losses; an atom meant for grid point ``k h`` can then
    land just below it, and the engine's dominated (lower) discretisation moves
    it down a whole cell. Lowering Q-mass by a relative ~1e-15 puts it at or
    just above the grid point instead; the Q-mass removed goes to ``-inf``, which
    only raises the pair's curve (conservative for the upper side, and ~1e-15
    relative for the lower side).
    """
    for _ in range(8):
        below = (log_p - log_q) < loss
        if not np.any(below):
            break
        log_q = np.where(below, np.nextafter(log_q, -np.inf), log_q)
    return log_q


def pair_from_hull(
    grid: np.ndarray, vertices: np.ndarray, hull: np.ndarray, side: str
) -> DiscretePair:
    """Eqs. (2)-(4) at the vertices of a :func:`profile_hull`.

    The hull is linear between its vertices, so only they carry atoms. For the
    upper side, any float shortfall of the final (float64) masses below the hull
    at a vertex is made up by mixing the pair with the fully revealing pair
    (P-mass at ``+inf``, Q-mass at ``-inf``) with the smallest weight ``lam``
    that restores it: ``H' = (1 - lam) H + lam``, still a probability pair.
    """
    eps = grid[vertices]
    alpha = np.exp(eps.astype(np.longdouble))
    values = hull[vertices]
    abscissa = np.concatenate((np.zeros(1, dtype=np.longdouble), alpha))
    ordinate = np.concatenate((np.ones(1, dtype=np.longdouble), values))
    slopes = np.append(np.diff(ordinate) / np.diff(abscissa), np.longdouble(0))
    q_mass = np.maximum(np.diff(slopes), 0)
    keep = q_mass > 0
    with np.errstate(divide="ignore"):
        log_q = np.log(q_mass[keep].astype(np.float64))
    loss = eps[keep]
    log_p = loss + log_q
    log_q = _exact_loss_log_q(loss, log_p, log_q)
    pair = DiscretePair(loss, log_p, log_q, float(values[-1]), float(max(1 + slopes[0], 0)))
    if side == "lower":
        return pair
    curve = pair._curve(alpha)
    shortfall = values - curve
    if not np.any(shortfall > 0):
        return pair
    # lam is ~1e-19 / (1 - H): tiny unless a vertex has H within ~1e-19 of 1
    # (eps < -40); lam = 1 would give the trivial, fully revealing pair.
    lam = min(1.0, float(np.max(shortfall[shortfall > 0] / (1 - curve[shortfall > 0]))))
    with np.errstate(divide="ignore"):
        shrink = np.log1p(-lam)
    log_p = pair.log_p + shrink
    return DiscretePair(
        loss,
        log_p,
        _exact_loss_log_q(loss, log_p, pair.log_q + shrink),
        (1 - lam) * pair.p_infinity + lam,
        (1 - lam) * pair.q_minus_infinity + lam,
    )


def connect_the_dots(
    eps_grid: np.ndarray | list[float],
    delta_values: np.ndarray | list[float],
    *,
    side: str = "upper",
) -> DiscretePair:
    """The connect-the-dots pair of a profile given on a grid (eqs. 2-4 above).

    The values are first replaced by their :func:`profile_hull` (unchanged if
    they already form a privacy profile on the grid).

    Parameters
    ----------
    eps_grid : array_like
        Strictly increasing privacy-loss values ``eps_j`` (nats), in [-700, 700].
    delta_values : array_like
        Profile values ``delta(eps_j) = H(e^{eps_j})`` in [0, 1].
    side : {"upper", "lower"}
        ``"upper"``: values that bound a profile from above give a pair that
        dominates it (its curve is ``>=`` the hull at every grid point, float
        shortfalls included). ``"lower"``: values that bound a profile from below
        give a pair whose curve is below the profile's connect-the-dots curve on
        the same grid.

    Returns
    -------
    DiscretePair
        Atoms at the hull's vertices (a subset of the grid), plus ``+inf`` and ``-inf``.
    """
    if side not in _SIDES:
        raise ValueError(f"side must be 'upper' or 'lower' (got {side!r})")
    grid = check_eps_grid(eps_grid)
    values = _check_values(delta_values, grid.size)
    vertices, hull = profile_hull(grid, values)
    return pair_from_hull(grid, vertices, hull, side)


def _evaluate_profile(
    delta_of_eps: Callable[[np.ndarray], object] | Callable[[float], float], grid: np.ndarray
) -> np.ndarray:
    """``delta_of_eps`` at every grid point: one vectorised call, else one call per value."""
    if not callable(delta_of_eps):
        raise ValueError(
            f"delta_of_eps must be a callable eps -> delta (got {type(delta_of_eps).__name__})"
        )
    try:
        values = np.asarray(delta_of_eps(grid.copy()), dtype=np.float64)
    except (TypeError, ValueError, OverflowError):
        values = None
    if values is None or values.shape != grid.shape:
        try:
            values = np.array([float(delta_of_eps(float(eps))) for eps in grid])
        except (TypeError, ValueError, OverflowError) as error:
            raise ValueError(
                f"delta_of_eps must return one real number per eps in [0, 1] ({error})"
            ) from error
    if not np.all(np.isfinite(values)) or np.any(values < 0) or np.any(values > 1):
        raise ValueError("delta_of_eps must return values in [0, 1] at every eps in eps_grid")
    return values


@refinable
def from_privacy_profile(
    delta_of_eps: Callable[[np.ndarray], object] | Callable[[float], float],
    eps_grid: np.ndarray | list[float],
    *,
    loss_grid_step: float | None = None,
) -> PLD:
    """A PLD that dominates every mechanism with the given privacy profile.

    Builds the connect-the-dots pair of Doroshenko et al. (2022, Algorithm 1;
    eqs. 2-4 of this module): atoms at the grid's eps values plus ``+inf`` and
    ``-inf``, whose hockey-stick curve is the piecewise-linear interpolation, in
    ``alpha = e^eps``, of the profile through the grid points. It equals the
    profile at the grid points and lies above it in between and outside the grid.

    Parameters
    ----------
    delta_of_eps : callable
        A valid privacy profile: ``delta(eps) = H(e^eps)`` with ``H`` convex and
        non-increasing in ``alpha = e^eps``, values in [0, 1] and
        ``delta(eps) >= 1 - e^eps`` for ``eps < 0``. It must bound
        ``H_{e^eps}(M(X) || M(Y))`` for every *ordered* pair of neighbours (both
        orders): negative eps carry the reverse direction. Called once with the
        whole grid as a 1-d array; if that raises ``TypeError``/``ValueError`` or
        does not return one value per point, called once per eps with a float.
    eps_grid : array_like
        Strictly increasing eps values (nats) in [-700, 700]: the paper's
        ``log alpha_1, ..., log alpha_{n_alpha}`` (Koskela et al. 2023, §3.4). Finer grids give
        tighter pairs (the gap to the profile shrinks with the square of the spacing).
    loss_grid_step : float, optional
        Spacing of the engine's loss grid in nats (default
        ``pld.engine.DEFAULT_LOSS_GRID_STEP``).

    Returns
    -------
    PLD
        One round, ``symmetric=True`` (the single pair bounds both orders).

    Raises
    ------
    ValueError
        If the values are not a privacy profile on the grid by more than
        ``PROFILE_TOLERANCE`` (not convex or not non-increasing in alpha, or below
        ``1 - alpha``), or the grid is invalid.
    """
    from pld.distribution.construction import from_symmetric_pair

    grid = check_eps_grid(eps_grid)
    values = _evaluate_profile(delta_of_eps, grid)
    vertices, hull = profile_hull(grid, values)
    defect = float(np.max(np.abs(values - hull)))
    if defect > PROFILE_TOLERANCE:
        raise ValueError(
            "delta_of_eps is not a privacy profile on eps_grid: its values must be convex and "
            f"non-increasing in alpha = exp(eps) and >= 1 - alpha (they are {defect:.3g} away "
            f"from their convex hull; tolerance {PROFILE_TOLERANCE:g})"
        )
    if defect > 0:
        _LOGGER.debug("profile values moved by up to %.3g onto their convex hull", defect)
    pair = pair_from_hull(grid, vertices, hull, "upper")
    log_p, log_q = pair.log_pmfs()
    return from_symmetric_pair(log_p, log_q, loss_grid_step=loss_grid_step)
