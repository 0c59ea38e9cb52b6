"""Subsampled shufflers: Koskela et al. (2023), Lemma 7, plus connect-the-dots.

A mechanism samples a uniformly random subset of ``m = gamma n`` of the ``n``
users (fixed size, without replacement) and runs a mechanism M, e.g. a
shuffler, on it. If (P, Q) dominates M on datasets of size ``m`` under the
substitute relation, Koskela et al. (2023), Lemma 7 (Zhu et al. 2022, Prop. 30) bounds the
subsampled mechanism by (Koskela et al. 2023, eq. 2.3)

    h(alpha) = max{ H_alpha(gamma P + (1 - gamma) Q || Q),  H_alpha(P || gamma Q + (1 - gamma) P) },

a privacy profile (convex, non-increasing, ``h(0) = 1``), to which the
connect-the-dots construction of Doroshenko et al. (2022, Algorithm 1;
:mod:`pld.distribution.profile`) is applied on an eps grid (Koskela et al. 2023, §3.4).
The lemma as printed (A for alpha >= 1, B for alpha < 1, the max of both in
eq. 2.3) was checked by brute force on the real subsampled shuffled k-RR
(n <= 6, every neighbouring dataset pair, both orders) with the exact base
profile: it holds, it is attained for m = 1, and neither term alone suffices
(tests/subsampling/test_subsample.py).

h from the base's hockey-stick curve
------------------------------------
h is ``max(A, B)`` of eqs. (5)-(6) in :mod:`pld.subsampling.mixture`, which
evaluates both from the base's atoms. Both are increasing functions of the curve
``H`` of the base, so h depends on the base only through its privacy profile. A
base PLD with two directions bounds every ordered pair of neighbours by
``max(H_1, H_2)``, a profile, which some pair attains exactly (any profile does),
so Lemma 7 applies to it and ``h = max over directions of max(A_d, B_d)``.

The bracket
-----------
The upper side is the connect-the-dots pair of ``h_upper >= h`` on the chosen
eps grid G, computed from the base's upper atoms (a dominating pair) plus the
float budget: its PLD is a rigorous upper bound for the subsampled mechanism.

The lower side starts from ``F = CTD(h_lower, G_f)``, the connect-the-dots
curve of ``h_lower <= h`` on a finer grid G_f containing G (spacing <=
``loss_grid_step / LOWER_REFINEMENT``), from the base's lower atoms (a dominated
pair) minus the budget, made convex by
:func:`~pld.distribution.profile.profile_hull`. F's atoms lie between loss-grid
points; the engine's dominated rounding of them is first order in the step where
they are isolated (the upper tail), which left 1000 rounds of
``subsample(clones(1000, 2), 0.05)`` 2.3 % wide at delta ~ 1e-3 on three
successive grids. So the lower pair is built on G itself: F at the points of G,
lowered by the chord's excess over F on the adjacent intervals, then hulled; its
curve is checked to lie below F's at every point of G_f (:func:`_lower_pair`),
so it is dominated by F's pair. Interpolants are ordered, so
``lower <= CTD(h_lower, G_f) <= CTD(h, G_f) <= CTD(h, G) <= CTD(h_upper, G)``:
the bracket (lower, upper) contains the composed delta of ``CTD(h, G_f)``, whose
curve is within ~``(step / 4)^2 h'' / 8`` of h. It therefore shows the three
numerical errors between the reported bound and Lemma 7's h: the base's own
discretisation, a coarse eps grid G (twice: the lowering mirrors the upper
side's excess), and the engine's loss grid. The last one
matters for small rates: the subsampled privacy loss is of the order of
``rate (e^L - 1)`` (L the base's loss), so it needs a ``loss_grid_step`` well
below that (e.g. Koskela et al. 2023, Fig. 3, n = 10^6, m = 1000, eps0 = 2: 1e-3 gives an
upper eps(1e-7) three times the converged one after 10^4 rounds, 1e-5 is within
a few percent). A wide bracket says so.

The connect-the-dots pair bounds both orders of neighbours (h is the same for
both), so the PLDs are built with ``symmetric=True``.
"""

from __future__ import annotations

import logging
import math
import warnings
from collections.abc import Iterator

import numpy as np

from pld import validation
from pld.distribution import (
    PLD,
    DiscretePair,
    check_eps_grid,
    from_bounds,
    from_symmetric_pair,
    pair_from_hull,
    profile_hull,
    refinable,
)
from pld.engine import MIN_LOSS_GRID_STEP, choose_loss_grid_step
from pld.subsampling.mixture import (
    Curve,
    base_curves,
    branches,
    curve_from_atoms,
    kink_reach,
    subsampled_loss_std,
)

_LOGGER = logging.getLogger(__name__)

#: Largest eps grid: the default grid gets coarser, and refinement stops (with a
#: warning), rather than exceed it.
MAX_NUM_POINTS = 2**18 + 1

#: Default loss grid: this many steps per standard deviation of the subsampled
#: loss (estimated by :func:`pld.subsampling.mixture.subsampled_loss_std`). Measured: meets a 1 %
#: bracket on eps(1e-6) after 1000 rounds of subsampled clones (rates 0.01-0.05) on the
#: first grid; queries refine further when asked (:mod:`pld.distribution.refinement`).
SUBSAMPLED_STEPS_PER_STD = 16

#: The lower side's eps grid is refined until its spacing is at most
#: ``loss_grid_step / LOWER_REFINEMENT``: its connect-the-dots excess over h is
#: then ~LOWER_REFINEMENT^2 = 16 times smaller than that of a grid at the
#: loss-grid spacing.
LOWER_REFINEMENT = 4

#: A user's ``eps_grid`` draws a warning when, at some eps in [0, reach], its
#: one-round upper delta exceeds Lemma 7's h by more than this and by more than h
#: itself (the bound is then loose by over a factor of two, up to vacuous).
LOOSE_GRID_EXCESS = 1e-2

#: Relative amount by which the lower side's values on the loss grid are lowered
#: beyond the chord excess, so that float64 rounding of the pair's masses keeps its
#: curve below the finer pair's (checked, :func:`_lower_pair`).
_FLOAT_MARGIN = 1e-12

#: Rounds of lowering the lower side's values where its curve is still above the
#: finer pair's (float rounding, the floor ``1 - alpha``) before falling back to
#: the finer pair.
_LOWER_REPAIRS = 4

#: Smallest subsampling rate computed (a smaller one is computed as this one).
_SMALLEST_RATE = 1e-12

#: Points of [0, reach] at which a user's eps grid is checked.
LOOSE_GRID_CHECKS = 65


def lemma7_delta(
    loss: np.ndarray,
    p_mass: np.ndarray,
    p_infinity: float,
    rate: float,
    eps: np.ndarray,
) -> np.ndarray:
    """h(e^eps) of Koskela et al. (2023), eq. 2.3 for one pair given by its privacy-loss atoms.

    Parameters
    ----------
    loss : ndarray
        Privacy losses ``log P/Q`` of the atoms (nats).
    p_mass : ndarray
        P-mass of each atom; its Q-mass is ``p_mass * exp(-loss)`` and the rest of
        Q sits where P is zero.
    p_infinity : float
        P-mass where Q is zero.
    rate : float
        Subsampling ratio gamma in (0, 1].
    eps : ndarray
        Where to evaluate (nats), ``alpha = e^eps``.

    Returns
    -------
    ndarray
        ``max{H_alpha(gamma P + (1-gamma) Q || Q), H_alpha(P || gamma Q + (1-gamma) P)}``
        by eqs. (5)-(6), without the error budget.
    """
    rate = validation.in_interval("rate", rate, 0.0, 1.0, low_open=True)
    loss = _validate_loss(loss)
    p_mass = validation.real_array("p_mass", p_mass)
    if p_mass.shape != loss.shape or np.any(p_mass < 0):
        raise ValueError("p_mass must hold one non-negative mass per loss value")
    p_infinity = validation.in_interval("p_infinity", p_infinity, 0.0, 1.0)
    eps = validation.real_array("eps", eps)
    curve = curve_from_atoms(loss, p_mass, p_infinity, fill=False)
    values, _ = branches(curve, rate, np.exp(eps.astype(np.longdouble)))
    return np.clip(np.max(values, axis=0), 0, 1).astype(np.float64)


def lemma7_terms(
    base: PLD, rate: float, eps: np.ndarray, side: str = "upper"
) -> tuple[np.ndarray, np.ndarray]:
    """A(e^eps) and B(e^eps) of eqs. (5)-(6) for a base PLD, each with its error budget.

    Parameters
    ----------
    base : PLD
        One round of the base mechanism (see :func:`subsample`).
    rate : float
        Subsampling ratio gamma in (0, 1].
    eps : ndarray
        Where to evaluate (nats), ``alpha = e^eps``; any real values.
    side : {"upper", "lower"}
        "upper": from the base's upper atoms (a dominating pair) plus the float
        budget, each term maximised over the base's directions: at least
        ``H_alpha(gamma P + (1-gamma) Q || Q)`` (A) and
        ``H_alpha(P || gamma Q + (1-gamma) P)`` (B) for every pair the base
        dominates, in either order. "lower": from the lower atoms minus the budget.

    Returns
    -------
    a, b : ndarray (long double)
        The two terms at every eps, clipped to [0, 1]. Lemma 7's profile is their maximum.
    """
    if side not in ("upper", "lower"):
        raise ValueError(f"side must be 'upper' or 'lower' (got {side!r})")
    rate = validation.in_interval("rate", rate, 0.0, 1.0, low_open=True)
    alpha = np.exp(np.asarray(eps, dtype=np.longdouble))
    terms = np.zeros((2, alpha.size), dtype=np.longdouble)
    for curve in base_curves(base, side):
        values, errors = branches(curve, rate, alpha)
        terms = np.maximum(terms, values + errors if side == "upper" else values - errors)
    terms = np.clip(terms, 0, 1)
    return terms[0], terms[1]


def _validate_loss(loss: object) -> np.ndarray:
    try:
        array = np.atleast_1d(np.asarray(loss, dtype=np.float64))
    except (TypeError, ValueError) as error:
        raise ValueError("loss must be an array of real numbers or +inf") from error
    if array.ndim != 1 or np.any(np.isnan(array)) or np.any(np.isneginf(array)):
        raise ValueError("loss must be a 1-d array of real numbers or +inf")
    return array


def _profile(curves: list[Curve], rate: float, grid: np.ndarray, side: str) -> np.ndarray:
    """h at the grid (eq. 2.3, max over directions), plus (upper) or minus (lower) its budget."""
    alpha = np.exp(grid.astype(np.longdouble))
    result = np.zeros(grid.size, dtype=np.longdouble)
    for curve in curves:
        values, errors = branches(curve, rate, alpha)
        bounded = values + errors if side == "upper" else values - errors
        result = np.maximum(result, np.max(bounded, axis=0))
    return np.clip(result, 0, 1)


def _aligned_grid(reach: float, step: float, multiple: int) -> np.ndarray:
    """Points ``k * multiple * step`` covering ``[-reach, reach]``: engine grid points."""
    half = max(1, math.ceil(reach / (multiple * step)))
    return (np.arange(-half, half + 1) * multiple) * step


def _default_grids(
    reach: float, step: float, num_points: int | None
) -> Iterator[tuple[np.ndarray, bool]]:
    """The default grid, then its refinements: spacing ``multiple * step``, halved to ``step``.

    Yields ``(grid, is_limit)``. The engine splits every atom between its two
    neighbouring loss-grid points, which turns any pair into the connect-the-dots
    pair of its own curve on the loss grid. So on a grid of spacing ``step`` (the
    default) the result is the limit of finer eps grids (``is_limit``);
    ``num_points`` only serves to take a coarser grid. Grids stay within
    ``MAX_NUM_POINTS`` points.
    """
    finest = max(1, math.ceil(2 * reach / ((MAX_NUM_POINTS - 3) * step)))
    multiple = finest
    if num_points is not None:
        multiple = max(finest, math.ceil(2 * reach / ((num_points - 1) * step)))
    while True:
        yield _aligned_grid(reach, step, multiple), multiple == 1
        if multiple == finest:
            return
        multiple = max(finest, multiple // 2)


def _midpoint_grids(grid: np.ndarray) -> Iterator[tuple[np.ndarray, bool]]:
    """``(grid, False)``, then refinements with the midpoint of every interval inserted."""
    yield grid, False
    while 2 * grid.size - 1 <= MAX_NUM_POINTS:
        fine = np.empty(2 * grid.size - 1)
        fine[0::2] = grid
        fine[1::2] = (grid[:-1] + grid[1:]) / 2
        grid = fine
        yield grid, False


def _lower_grid(grid: np.ndarray, step: float) -> np.ndarray:
    """The grid with midpoints inserted until every interval is <= ``step / LOWER_REFINEMENT``.

    The lower side is built on this finer grid (a superset of the upper side's)
    so that the engine's dominated discretisation onto its loss grid, and a
    coarse eps grid, both show in the bracket (module docstring).
    """
    for fine, _ in _midpoint_grids(grid):
        if fine.size == 1 or np.max(np.diff(fine)) <= step / LOWER_REFINEMENT:
            return fine
    return fine


def _lower_pair(curves: list[Curve], rate: float, grid: np.ndarray, step: float) -> DiscretePair:
    """A pair dominated by ``F = CTD(h_lower, G_f)``, supported on ``grid`` when possible.

    ``F`` is the connect-the-dots interpolant of the lower profile on the finer
    grid ``G_f`` of :func:`_lower_grid` (linear in alpha between its points). Its
    atoms lie between loss-grid points, and the engine's dominated rounding of
    isolated atoms there is first order in the step (it stalled refinement of
    long compositions). Instead, the values at the points of ``grid`` (a subset
    of ``G_f``, on the loss grid) are lowered by the largest excess, on either
    adjacent interval, of the chord of ``F`` over ``F``: a chord through points
    lowered by at least its interval's excess lies below ``F`` there (both are
    linear in alpha between points of ``G_f``, so the excess is attained on
    them). The hull of these values only lowers them further. The result is
    checked at every point of ``G_f`` (long double); if it is not below ``F``
    everywhere (the hull's floor ``1 - alpha`` can raise a value), ``F``'s own
    pair is returned, for the engine to round. A curve below ``F`` everywhere is
    the profile of a pair dominated by ``F``'s, so every composed delta of the
    result is at most that of ``F``'s pair.
    """
    fine = _lower_grid(grid, step)
    fine_vertices, fine_hull = profile_hull(fine, _profile(curves, rate, fine, "lower"))
    fine_pair = pair_from_hull(fine, fine_vertices, fine_hull, "lower")
    if fine.size == grid.size:
        return fine_pair
    stride = (fine.size - 1) // (grid.size - 1)
    alpha = np.exp(fine.astype(np.longdouble))
    ends = np.arange(0, fine.size, stride)
    left = np.repeat(ends[:-1], stride)
    right = left + stride
    share = (alpha[:-1] - alpha[left]) / (alpha[right] - alpha[left])
    chord = fine_hull[left] + share * (fine_hull[right] - fine_hull[left])
    excess = np.max(np.maximum(chord - fine_hull[:-1], 0).reshape(-1, stride), axis=1)
    lowering = np.maximum(np.append(excess, 0), np.insert(excess, 0, 0))
    values = np.clip((fine_hull[ends] - lowering) * (1 - _FLOAT_MARGIN), 0, 1)
    target = fine_pair._curve(alpha)
    for _ in range(_LOWER_REPAIRS):
        coarse = pair_from_hull(grid, *profile_hull(grid, values), "lower")
        violation = np.maximum(coarse._curve(alpha) - target, 0)
        if not np.any(violation > 0):
            return coarse
        # Lowering one end of an interval by d lowers its chord by d times the
        # share of that end; either end alone must make up for the violation (the
        # other may be held up by the floor 1 - alpha).
        inner = violation[:-1].reshape(-1, stride)
        weight = share.reshape(-1, stride)
        with np.errstate(divide="ignore", invalid="ignore"):
            by_right = np.max(np.where(weight > 0, inner / weight, 0), axis=1)
            by_left = np.max(np.where(weight < 1, inner / (1 - weight), 0), axis=1)
        extra = np.maximum(np.append(by_left, violation[-1]), np.insert(by_right, 0, 0))
        values = np.clip(values - 2 * extra, 0, 1)
    return fine_pair


def _upper_pair(curves: list[Curve], rate: float, grid: np.ndarray) -> DiscretePair:
    vertices, hull = profile_hull(grid, _profile(curves, rate, grid, "upper"))
    return pair_from_hull(grid, vertices, hull, "upper")


def _choose_grid(
    curves: list[Curve],
    rate: float,
    grids: Iterator[tuple[np.ndarray, bool]],
    tolerance: float | None,
) -> tuple[np.ndarray, DiscretePair]:
    """The first grid, or with a tolerance the first refinement that moves delta by <= it.

    Two connect-the-dots curves are piecewise linear in alpha with kinks on the
    union of their grids (constant beyond), so the largest change of the
    one-round delta(eps) over all eps is attained on that union.
    """
    grid, at_limit = next(grids)
    pair = _upper_pair(curves, rate, grid)
    if tolerance is None:
        return grid, pair
    change = math.inf  # no refinement seen yet
    for fine, fine_is_limit in grids:
        finer_pair = _upper_pair(curves, rate, fine)
        alpha = np.exp(np.union1d(grid, fine))
        change = float(np.max(np.abs(pair.hockey_stick(alpha) - finer_pair.hockey_stick(alpha))))
        grid, pair, at_limit = fine, finer_pair, fine_is_limit
        _LOGGER.debug("eps grid of %d points: delta moved by %.3g", grid.size, change)
        if change <= tolerance:
            return grid, pair
    if change > tolerance and not at_limit:
        _LOGGER.warning(
            "subsample: eps grid refinement stopped at %d points, delta moved by %.3g > %g",
            grid.size,
            change,
            tolerance,
        )
    return grid, pair


@refinable
def subsample(
    base: PLD,
    rate: float,
    *,
    eps_grid: np.ndarray | list[float] | None = None,
    num_points: int | None = None,
    tolerance: float | None = None,
    loss_grid_step: float | None = None,
) -> PLD:
    """One round of a mechanism run on a random fixed-size subset (Koskela et al. 2023, Lemma 7).

    Parameters
    ----------
    base : PLD
        One round (not composed) of the mechanism on datasets of the subset's
        size ``m = rate * n`` under the substitute relation, e.g.
        ``pld.clones(n=m, eps0=...)`` or ``pld.krr(n=m, ...)``.
    rate : float
        Subsampling ratio gamma = m / n in (0, 1].
    eps_grid : array_like, optional
        Strictly increasing eps values (nats) for connect-the-dots: the paper's
        ``log alpha_1 .. log alpha_{n_alpha}`` (Koskela et al. 2023, Fig. 2 uses
        ``np.linspace(-0.25, 0.25, n_alpha)``).
    num_points : int, optional
        Without ``eps_grid``: at most this many points (>= 3) on the default
        symmetric range, which covers every kink of h (``_reach``). By default
        every loss-grid point of the range is used, which gives the same PLD as
        any finer eps grid (``_default_grids``).
    tolerance : float, optional
        Refine the grid (midpoints inserted, or the default grid's spacing
        halved down to ``loss_grid_step``) until the one-round delta(eps) of the
        upper pair moves by at most ``tolerance`` for every eps (absolute, in
        (0, 1)). A warning is logged if ``MAX_NUM_POINTS`` points do not suffice.
    loss_grid_step : float, optional
        Spacing of the engine's loss grid for the result (nats). Default:
        ``pld.engine.choose_loss_grid_step`` with ``SUBSAMPLED_STEPS_PER_STD`` steps per
        standard deviation of the subsampled loss (about ``rate`` times the base's
        spread, :func:`pld.subsampling.mixture.subsampled_loss_std`), so it follows the rate.
        Independent of the base's.

    Returns
    -------
    PLD
        One round of the subsampled mechanism, ``symmetric=True``. Its upper
        bound is rigorous for the subsampled mechanism; its (lower, upper)
        bracket measures the accounting error of the connect-the-dots pair on the
        final grid, including the base's own discretisation (module docstring).
    """
    if not isinstance(base, PLD):
        raise ValueError(f"base must be a pld.PLD (got {type(base).__name__})")
    rate = validation.in_interval("rate", rate, 0.0, 1.0, low_open=True)
    # A larger rate dominates: (gamma P + (1 - gamma) Q, Q) is a post-processing of the
    # mixture at gamma' > gamma (keep the output w.p. gamma/gamma', else draw from Q),
    # and likewise for eq. (6); below _SMALLEST_RATE the terms overflow float64.
    rate = max(rate, _SMALLEST_RATE)
    if loss_grid_step is not None:
        validation.in_interval("loss_grid_step", loss_grid_step, MIN_LOSS_GRID_STEP, 1.0)
    if tolerance is not None:
        tolerance = validation.in_interval(
            "tolerance", tolerance, 0.0, 1.0, low_open=True, high_open=True
        )
    upper_curves = base_curves(base, "upper")
    step = loss_grid_step
    if step is None:
        step = choose_loss_grid_step(subsampled_loss_std(base, rate), SUBSAMPLED_STEPS_PER_STD)
    if eps_grid is not None:
        if num_points is not None:
            raise ValueError("give eps_grid or num_points, not both")
        grids = _midpoint_grids(check_eps_grid(eps_grid))
    else:
        if num_points is not None:
            num_points = validation.integer_at_least("num_points", num_points, 3)
        grids = _default_grids(kink_reach(upper_curves, rate), step, num_points)
    grid, upper = _choose_grid(upper_curves, rate, grids, tolerance)
    if eps_grid is not None:
        _warn_if_loose(upper_curves, rate, upper)
    lower = _lower_pair(base_curves(base, "lower"), rate, grid, step)
    upper_pld = from_symmetric_pair(*upper.log_pmfs(), loss_grid_step=step)
    lower_pld = from_symmetric_pair(*lower.log_pmfs(), loss_grid_step=step)
    return from_bounds(upper=upper_pld, lower=lower_pld)


def _warn_if_loose(curves: list[Curve], rate: float, upper: DiscretePair) -> None:
    """Warn when a user's eps grid makes the one-round upper delta loose (up to vacuous)."""
    reach = kink_reach(curves, rate)
    if reach <= 0:
        return
    eps = np.linspace(0.0, reach, LOOSE_GRID_CHECKS)
    exact = _profile(curves, rate, eps, "upper").astype(np.float64)
    excess = upper.hockey_stick(np.exp(eps)) - exact
    worst = int(np.argmax(excess - np.maximum(exact, LOOSE_GRID_EXCESS)))
    if excess[worst] > max(exact[worst], LOOSE_GRID_EXCESS):
        warnings.warn(
            f"eps_grid is too coarse for this mechanism: the one-round upper delta is "
            f"{exact[worst] + excess[worst]:.3g} at eps={eps[worst]:.3g} where Lemma 7 gives "
            f"{exact[worst]:.3g}; add points to eps_grid (or omit it for the default grid)",
            UserWarning,
            stacklevel=3,
        )
