"""Poisson subsampling and sampling without replacement of any one-round PLD.

Conventions
-----------
A base PLD describes one run of a central mechanism M. Under add/remove
adjacency its first direction (the loss of P/Q under P) must bound
``H_alpha(M(D + z) || M(D))`` (the dataset with the record against the one
without) and its second direction the reverse; a symmetric base (Gaussian,
Laplace, ...) bounds both. This is dp_accounting's convention.

Poisson sampling, add/remove (Zhu, Dong and Wang 2022, Thm 11)
------------------------------------------------------------
Each record is kept with probability q. Conditioning on the sample T of D,
``M_S(D + z) = q M(T + z) + (1 - q) M(T)`` and ``M_S(D) = M(T)``, so (joint
convexity of hockey sticks) with (P, Q) the base's pair

* removal:  ``h_R(alpha) = H_alpha(q P + (1-q) Q || Q) = A(alpha)``, eq. (5) of
  :mod:`pld.subsampling.mixture` with the base's first direction;
* addition: ``H_alpha(Q || q P + (1-q) Q) = B(alpha)``, eq. (6) with the base's
  second direction (its curve is ``H(Q || P)``).

Both are functions of one pair, the mixture ``(q P + (1-q) Q, Q)``: its curve
on all ``alpha >= 0`` is ``h_R``, and its reverse curve is
``alpha h_R(1/alpha) + 1 - alpha``. So ``h_R`` on a symmetric eps range
``[-E, E]`` holds both directions: for ``alpha >= 1`` mostly the removal, for
``alpha < 1`` the addition. Each base direction gives a valid bound on all of
``h_R`` (directly by eq. 5, or through the reverse identity by eq. 6), and the
smaller of the two is used for the upper side, the larger for the lower side.
The connect-the-dots pair of ``h_R`` (:mod:`pld.distribution.profile`) dominates
``h_R`` at every alpha, hence also its reverse curve: the resulting PLD keeps
both directions (``symmetric=False``) and its upper side is rigorous for both.

Poisson sampling, replace-one, and sampling without replacement
---------------------------------------------------------------
Under replace-one the two sampled outputs are ``q M(T + z) + (1-q) M(T)`` and
``q M(T + z') + (1-q) M(T)``: the mixture of Koskela et al. (2023), Lemma 7 (Zhu et al. 2022,
Prop. 30), whose proof only uses that the profile bounds each of the pairs
among ``M(T)``, ``M(T + z)`` and ``M(T + z')``. For sampling without replacement
(fixed batches of ``m = q n`` records) these are all replace-one neighbours of
size m; for Poisson sampling ``(M(T), M(T + z))`` are add/remove neighbours,
so the base must then bound the mechanism under both relations (e.g. a
Gaussian sum whose sensitivity is the larger of the two). Both use
:func:`pld.subsampling.subsampled_shuffler.subsample`, shared with the subsampled shufflers.

The bracket
-----------
Poisson add/remove: the upper side is the connect-the-dots pair of an upper
bound on ``h_R`` (from the base's dominating atoms, plus float budgets) on the
eps grid ``k * loss_grid_step``: any finer eps grid would give the same upper
PLD, since the engine splits every atom between its two neighbouring grid
points. The lower side is a pair on the same grid whose curve lies below the
true ``h_R`` at every alpha (:func:`_dominated_values`: lower bounds at the
grid points, lowered by the chord's second-order excess over tangent-type
lines built from the bounds), so by Blackwell's theorem it is a
post-processing of the true mixture pair, in both directions and after any
composition: the bracket holds the mechanism's own delta. Its atoms sit on the
loss grid, where the engine's dominated discretisation loses nothing. Measured
on the subsampled Gaussian (σ = 1, q = 0.01): delta(1) after 1000 rounds
within [0.0026118, 0.0026125] (peers: 0.0026124), 2.8e-4 wide. Replace-one: as
in :mod:`pld.subsampling.subsampled_shuffler`.
"""

from __future__ import annotations

import math

import numpy as np

from pld import validation
from pld.distribution import PLD, from_bounds, from_pmfs, pair_from_hull, profile_hull, refinable
from pld.engine import choose_loss_grid_step
from pld.subsampling.mixture import Curve, base_curves, branches, kink_reach, subsampled_loss_std

#: Most points of the eps grid; beyond it the grid's spacing becomes a multiple
#: of ``loss_grid_step``.
MAX_NUM_POINTS = 2**19 + 1

#: Where the upper removal profile falls to this, the eps grid ends (its value
#: there stays as P-mass at +inf).
NEGLIGIBLE = 1e-30

_ADJACENCIES = ("add-remove", "replace")


def _check_base(base: object) -> PLD:
    if not isinstance(base, PLD):
        raise ValueError(f"base must be a pld.PLD (got {type(base).__name__})")
    if base.composed:
        raise ValueError(
            "base must be one round of a mechanism, not a composition: subsample first, "
            "then compose"
        )
    return base


def _default_step(base: PLD, rate: float, loss_grid_step: float | None) -> float:
    if loss_grid_step is None:
        loss_grid_step = choose_loss_grid_step(subsampled_loss_std(base, rate))
    return validation.loss_grid_step(loss_grid_step)


def _removal_profile(curves: list[Curve], rate: float, grid: np.ndarray, side: str) -> np.ndarray:
    """``h_R = H(q P + (1-q) Q || Q)`` at ``e^grid``, bounded from the base's directions.

    ``curves[0]`` is the base's first direction, ``curves[-1]`` its second (the
    same for a symmetric base). Upper side: the smaller of eq. (5) on the first
    and of the reverse identity on eq. (6) of the second, each plus its budget;
    lower side: the larger, each minus its budget.
    """
    alpha = np.exp(grid.astype(np.longdouble))
    values, errors = branches(curves[0], rate, alpha)
    reverse_values, reverse_errors = branches(curves[-1], rate, 1 / alpha)
    sign = 1 if side == "upper" else -1
    direct = values[0] + sign * errors[0]
    through_reverse = alpha * (reverse_values[1] + sign * reverse_errors[1]) + 1 - alpha
    combined = (
        np.minimum(direct, through_reverse)
        if side == "upper"
        else np.maximum(direct, through_reverse)
    )
    return np.clip(combined, np.maximum(1 - alpha, 0), 1)


def _dominated_values(alpha: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """Values at the grid whose connect-the-dots curve is below the true profile everywhere.

    ``lower <= h <= upper`` at ``alpha`` (long double), h convex with slopes in
    [-1, 0] and ``h >= 1 - alpha``. On the cell ``[a_j, a_{j+1}]`` h lies above
    the tangent-type lines ``L1 = lower_j + s_a (alpha - a_j)`` and
    ``L2 = lower_{j+1} + s_b (alpha - a_{j+1})``, where ``s_a`` is a lower bound
    on the slope at ``a_j`` (the previous chord's, from the bounds) and ``s_b``
    an upper bound on the slope at ``a_{j+1}`` (the next chord's). The chord
    through ``lower_j``, ``lower_{j+1}`` exceeds ``max(L1, L2)`` at most at
    their crossing, by ``e_j`` (second order in the cell width): each cell
    proposes its two end values lowered by ``e_j``, or the floor ``(1 - alpha)_+``
    at both ends if that is higher (linear on the cell, so below h), and every
    point takes the smaller proposal of its two cells. The first point is put
    on the line (h = 1 - alpha there, and the chord from ``(0, 1)`` must stay
    below h), the last at 0 (the curve is constant beyond it). Each chord is
    then below ``max(L1, L2, (1 - alpha)_+) <= h``.
    """
    one = np.longdouble(1)
    width = np.diff(alpha)
    chord_low = (lower[1:] - upper[:-1]) / width  # <= the true chord slope
    chord_high = (upper[1:] - lower[:-1]) / width  # >= the true chord slope
    s_a = np.maximum(np.concatenate(([-one], chord_low[:-1])), -one)
    s_b = np.minimum(np.concatenate((chord_high[1:], [np.longdouble(0)])), 0)
    left, right = alpha[:-1], alpha[1:]
    y_left, y_right = lower[:-1], lower[1:]
    with np.errstate(divide="ignore", invalid="ignore"):
        crossing = (y_right - y_left + s_a * left - s_b * right) / (s_a - s_b)
    inside = np.isfinite(crossing) & (crossing > left) & (crossing < right)
    crossing = np.where(inside, crossing, left)
    share = (crossing - left) / width
    chord = y_left + share * (y_right - y_left)
    bound = np.maximum(y_left + s_a * (crossing - left), y_right + s_b * (crossing - right))
    excess = np.where(inside, np.maximum(chord - bound, 0), 0)
    # The floor (1 - alpha)_+ is linear on each cell left of alpha = 1 (the line)
    # and right of it (zero); a cell across 1 keeps the line (negative on its right).
    below_one = left < 1
    line_left = np.where(below_one, one - left, 0)
    line_right = np.where(below_one, one - right, 0)
    use_line = (y_left - excess < line_left) | (y_right - excess < line_right)
    propose_left = np.where(use_line, line_left, y_left - excess)
    propose_right = np.where(use_line, line_right, y_right - excess)
    values = np.empty_like(lower)
    values[0] = propose_left[0]
    values[-1] = propose_right[-1]
    values[1:-1] = np.minimum(propose_right[:-1], propose_left[1:])
    values[0] = one - alpha[0]
    values[-1] = 0
    if np.any(values < 0) or alpha[0] >= 1:
        # Only when h nearly touches its floor around alpha = 1: the trivial
        # pair (P = Q, curve (1 - alpha)_+) is dominated by every pair.
        return np.maximum(one - alpha, 0)
    return values


def _eps_grid(curves: list[Curve], rate: float, step: float) -> np.ndarray:
    """Grid points ``k * multiple * step`` on which ``h_R`` is represented.

    From the last point at or below ``log(1 - q)`` (below it ``h_R = 1 - alpha``
    exactly, which the chord from ``(0, 1)`` reproduces) to the first point
    where the upper ``h_R`` is at most ``NEGLIGIBLE`` (beyond it the
    connect-the-dots curve stays at that value, at least ``h_R``; the lower side
    ends at 0), and never beyond every kink (:func:`kink_reach`).
    """
    reach = kink_reach(curves, rate)
    left = math.log1p(-rate) if rate < 1 else -reach
    left = max(left - step, -reach)
    multiple = max(1, math.ceil((reach - left) / ((MAX_NUM_POINTS - 3) * step)))
    spacing = multiple * step
    first, last = math.floor(left / spacing), max(1, math.ceil(reach / spacing))
    coarse = np.arange(first, last + 1, 64) * spacing
    values = _removal_profile(curves, rate, coarse, "upper")
    small = np.flatnonzero((values <= NEGLIGIBLE) & (coarse > 0))
    if small.size:
        last = min(last, math.ceil(coarse[small[0]] / spacing))
    return np.arange(first, last + 1) * spacing


def _poisson_add_remove(base: PLD, rate: float, step: float) -> PLD:
    upper_curves = base_curves(base, "upper")
    lower_curves = base_curves(base, "lower")
    grid = _eps_grid(upper_curves, rate, step)
    upper_values = _removal_profile(upper_curves, rate, grid, "upper")
    upper = pair_from_hull(grid, *profile_hull(grid, upper_values), "upper")
    lower_values = np.minimum(_removal_profile(lower_curves, rate, grid, "lower"), upper_values)
    alpha = np.exp(grid.astype(np.longdouble))
    dominated = _dominated_values(alpha, lower_values, upper_values)
    lower = pair_from_hull(grid, *profile_hull(grid, dominated), "lower")
    upper_pld = from_pmfs(*upper.log_pmfs(), loss_grid_step=step)
    lower_pld = from_pmfs(*lower.log_pmfs(), loss_grid_step=step)
    return from_bounds(upper=upper_pld, lower=lower_pld)


@refinable
def poisson_subsample(
    base: PLD,
    rate: float = 0.01,
    adjacency: str = "add-remove",
    *,
    loss_grid_step: float | None = None,
) -> PLD:
    """One round of a mechanism run on a Poisson sample (each record kept with probability q).

    Parameters
    ----------
    base : PLD
        One round (not composed) of the central mechanism, e.g.
        ``pld.gaussian(sigma)`` or ``pld.laplace(scale)``; see the module
        docstring for which direction means what.
    rate : float
        Sampling probability q, in (0, 1].
    adjacency : {"add-remove", "replace"}
        Neighbouring datasets differ by one added or removed record (both
        directions kept, ``symmetric=False``), or by one replaced record (then
        the base must bound the mechanism under both relations; the result is
        symmetric).
    loss_grid_step : float, optional
        Grid spacing of the result in nats; by default
        :func:`pld.engine.choose_loss_grid_step` of the subsampled loss's
        standard deviation. Independent of the base's.

    Returns
    -------
    PLD
        One round of the subsampled mechanism; its upper bound is rigorous
        whenever the base's is.
    """
    base = _check_base(base)
    rate = validation.in_interval("rate", rate, 0.0, 1.0, low_open=True)
    adjacency = validation.one_of("adjacency", adjacency, _ADJACENCIES)
    step = _default_step(base, rate, loss_grid_step)
    if adjacency == "replace":
        from pld.subsampling.subsampled_shuffler import subsample

        return subsample(base, rate, loss_grid_step=step)
    return _poisson_add_remove(base, rate, step)


@refinable
def subsample_without_replacement(
    base: PLD,
    rate: float = 0.01,
    adjacency: str = "replace",
    *,
    loss_grid_step: float | None = None,
) -> PLD:
    """One round of a mechanism run on a fixed-size batch drawn without replacement.

    Parameters
    ----------
    base : PLD
        One round (not composed) of the mechanism on batches of ``m`` records
        under replace-one adjacency.
    rate : float
        Batch fraction ``m / n``, in (0, 1].
    adjacency : {"replace"}
        Replace-one neighbours (a fixed batch size is not defined under
        add/remove, which changes n).
    loss_grid_step : float, optional
        As for :func:`poisson_subsample`.

    Returns
    -------
    PLD
        One round, ``symmetric=True`` (Koskela et al. 2023, Lemma 7 bounds both orders).
    """
    base = _check_base(base)
    rate = validation.in_interval("rate", rate, 0.0, 1.0, low_open=True)
    if adjacency != "replace":
        raise ValueError(
            f"adjacency must be 'replace' for sampling without replacement (got {adjacency!r}); "
            "use poisson_subsample for add/remove neighbours"
        )
    step = _default_step(base, rate, loss_grid_step)
    from pld.subsampling.subsampled_shuffler import subsample

    return subsample(base, rate, loss_grid_step=step)
