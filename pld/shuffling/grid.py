"""From a one-round privacy profile to a PLD: the eps grid and connect-the-dots.

The recipe of :func:`pld.shuffling.shuffle` (module docstring of
:mod:`pld.shuffling.shuffler`), shared by every shuffle analysis that ends in a profile
(a population of groups, several messages per user, groups of eps0 values): candidate
grid ends from cheap upper values, a coarse probe that sets the default loss grid step,
an eps grid that follows the loss grid, the profile's greatest convex minorant turned
into a dominating pair (Doroshenko et al. 2022) and a lower pair below the analysis'
exact profile.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from pld.distribution import (
    DELTA_ACCURACY_FLOOR,
    PLD,
    below_every_profile,
    from_bounds,
    from_symmetric_pair,
    lower_envelope,
    pair_from_hull,
    profile_hull,
)
from pld.engine import choose_loss_grid_step
from pld.numerics import MAX_EPS0

#: Default number of eps grid points on [0, eps_top] for connect-the-dots.
DEFAULT_NUM_POINTS = 192

#: Largest number of eps grid points on [0, eps_top] (a fine ``loss_grid_step`` or
#: refinement asks for proportionally more than ``num_points``): about 10 ms each.
MAX_NUM_POINTS = 768

#: The grid ends where the upper one-round delta falls below this.
PROFILE_FLOOR = 1e-25


def _minimum_upper(components: list[tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
    return np.minimum.reduce([upper for _, upper in components])


def _top(eps0: float) -> np.ndarray:
    """Candidate ends of the eps grid: eps0 / 2^(k/2), k = 0..40, and 0."""
    high = eps0 if math.isfinite(eps0) else MAX_EPS0
    return np.concatenate(([0.0], high * 2.0 ** (-np.arange(40, -1, -1) / 2)))


#: The mirrored half of the eps grid stops at -MIRROR_LIMIT nats: beyond it
#: ``1 - delta(-t) = e^-t (1 - delta(t))`` nears the resolution of a float near 1 (the
#: hull's slopes err by ``ulp(1) e^t``, and the upper pair's float shortfall there costs
#: about ``1e-16 e^t`` of mass at +inf). One direction of the cut pair still bounds both
#: (docs/blanket-continuous.md §6).
MIRROR_LIMIT = 10.0


def _symmetric(eps: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Grid and values on [-min(top, MIRROR_LIMIT), top]: delta(-eps) = 1 - e^-eps +
    e^-eps delta(eps)."""
    kept = int(np.searchsorted(eps, MIRROR_LIMIT, side="right"))
    positive = eps[1:kept]
    mirrored = -np.expm1(-positive) + np.exp(-positive) * values[1:kept]
    grid = np.concatenate((-positive[::-1], eps))
    return grid, np.clip(np.concatenate((mirrored[::-1], values)), 0.0, 1.0)


def _pld(grid: np.ndarray, values: np.ndarray, side: str, step: float) -> PLD:
    """The connect-the-dots pair of one side on the (possibly cut) symmetric grid, one
    direction for both orders of neighbours (docs/blanket-continuous.md §6: the upper
    pair dominates the profile at every eps, below a cut too; the lower pair is below
    it at every eps once the value at a cut is the trivial ``1 - e^eps``)."""
    vertices, hull = profile_hull(grid, values)
    pair = pair_from_hull(grid, vertices, hull, side)
    return from_symmetric_pair(*pair.log_pmfs(), loss_grid_step=step)


def _trivial_at_cut(grid: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Lower values with the one at a cut grid's first point lowered to ``1 - e^eps``
    (rounded down): the lower pair's curve below the cut is then at most ``1 - e^eps``,
    below every profile, and between the cut and the next point below the exact
    mirror's chord."""
    if grid[0] != -grid[-1]:
        values = values.copy()
        values[0] = min(values[0], float(np.nextafter(-math.expm1(grid[0]), 0.0)))
    return values


def profile_pld(
    profiles: Callable[..., tuple[list[tuple[np.ndarray, np.ndarray]], bool]],
    quick_upper: Callable[[np.ndarray], np.ndarray],
    eps0: float,
    loss_grid_step: float | None,
    num_points: int = DEFAULT_NUM_POINTS,
    tail: float = 0.0,
    *,
    end: Callable[[float, float], float] | None = None,
    every_step: bool = False,
) -> PLD:
    """The PLD of a one-round profile: eps grid, connect-the-dots, bracket from below.

    Parameters
    ----------
    profiles : callable
        ``profiles(eps, lower_side=True, fineness=1.0) -> (components, convex)``: the
        (lower, upper) brackets whose minimum is the analysis' profile at each eps >= 0,
        and whether each is a convex privacy profile
        (:meth:`pld.randomizers.Randomizer.shuffle_profiles`); ``fineness`` (>= 1): how
        much finer than at its default the loss grid is, for evaluations with a
        resolution of their own.
    quick_upper : callable
        ``quick_upper(eps)``: cheap upper values, to find where the grid ends.
    eps0 : float
        Where the candidate grid ends start (the local epsilon; ``inf`` allowed), nats.
    loss_grid_step : float or None
        Loss grid spacing in nats (None: the engine's rule for the loss's spread).
    num_points : int
        Points of the eps grid at the default step (``shuffle``).
    tail : float
        A lower bound on the first component's limit at eps = +inf.
    end : callable, optional
        ``end(low, high)``: where the grid ends, given that it ends in ``(low, high]``
        (:meth:`pld.randomizers.Randomizer.profile_end`); default ``high``.
    every_step : bool
        Put an eps grid point at every multiple of the loss grid step up to the grid's
        end (``loss_grid_step`` must be given): connect-the-dots then reproduces exactly
        any profile of a pair on that loss grid, and never exceeds it.
    """
    candidates = _top(eps0)
    cheap = quick_upper(candidates)
    # Beyond the grid the profile is taken constant (connect-the-dots puts the last
    # value at +inf): end where it is within PROFILE_FLOOR of its value at the largest
    # candidate (0 unless some output is impossible under some input).
    below = np.flatnonzero(cheap <= cheap[-1] + PROFILE_FLOOR)
    top = float(candidates[below[0]]) if below.size else float(candidates[-1])
    if end is not None and below.size and below[0] > 0:
        top = end(float(candidates[below[0] - 1]), top)
    coarse = np.linspace(0.0, top, 9)
    coarse_components, _ = profiles(coarse, lower_side=False)
    grid, values = _symmetric(coarse, _minimum_upper(coarse_components))
    vertices, hull = profile_hull(grid, values)
    pair = pair_from_hull(grid, vertices, hull, "upper")
    p_mass = pair.p_mass
    total = p_mass.sum()
    mean = float(np.dot(p_mass, pair.loss) / total) if total > 0 else 0.0
    std = math.sqrt(float(np.dot(p_mass, (pair.loss - mean) ** 2) / total)) if total else 0.0
    default_step = choose_loss_grid_step(std)
    step = default_step if loss_grid_step is None else loss_grid_step
    # The eps grid follows the loss grid: num_points at the default step, proportionally
    # more on a finer one (refinement narrows the connect-the-dots part of the
    # bracket too), at most MAX_NUM_POINTS.
    multiple = max(1, math.ceil(top / (num_points * default_step)))
    multiple = max(multiple, math.ceil(top / (MAX_NUM_POINTS * step)))
    if every_step:
        multiple = 1
    spacing = step * multiple
    eps = spacing * np.arange(math.ceil(top / spacing) + 1)
    # An evaluation with a resolution of its own follows the eps grid (its error, like
    # the grid's connect-the-dots excess, shrinks with the square).
    fineness = max(
        1.0, default_step * max(1, math.ceil(top / (num_points * default_step))) / spacing
    )
    components, convex = profiles(eps, fineness=fineness)
    grid, upper_values = _symmetric(eps, _minimum_upper(components))
    if convex:
        # Below the analysis' exact profile between grid points too (module docstring):
        # the first component is the blanket profile, whose limit at eps = +inf is at
        # least ``tail``; the others tend to 0 or more.
        tails = [tail] + [0.0] * (len(components) - 1)
        lowered = [
            below_every_profile(grid, _symmetric(eps, lo)[1], _symmetric(eps, up)[1], tail)
            for (lo, up), tail in zip(components, tails, strict=True)
        ]
        # The pair is symmetric: keep eps >= 0 and mirror (the mirror of a curve below
        # the profile is below it, and maps chords to chords).
        positive = lower_envelope(grid, lowered)[grid.size - eps.size :].astype(np.float64)
        _, lower_values = _symmetric(eps, positive)
    else:
        _, lower_values = _symmetric(eps, np.minimum.reduce([lo for lo, _ in components]))
    lower_values = _trivial_at_cut(grid, lower_values)
    return from_bounds(
        upper=_pld(grid, upper_values, "upper", step),
        lower=_pld(grid, lower_values, "lower", step),
        analysis_width=_analysis_width(components),
    )


def _analysis_width(components: list[tuple[np.ndarray, np.ndarray]]) -> float:
    """Largest relative width of the minimum profile's own bracket where its upper value
    is at least ``DELTA_ACCURACY_FLOOR`` (the analysis' part of a query's width)."""
    upper = _minimum_upper(components)
    lower = np.minimum.reduce([low for low, _ in components])
    counted = upper >= DELTA_ACCURACY_FLOOR
    if not np.any(counted):
        return 0.0
    return float(np.clip(np.max((upper[counted] - lower[counted]) / upper[counted]), 0.0, 1.0))
