"""The delta and epsilon queries of a PLD, each refined until its bracket meets a target.

:meth:`pld.PLD.delta_bounds` and :meth:`pld.PLD.epsilon_bounds` are these
functions: they read the PLD's bracket on its current grid (the maximum over its
directions of the upper and of the lower hockey-stick divergences, Koskela et al. (2023)
Definition 1 and eq 2.1) and hand it to :func:`pld.distribution.refinement.refine`, which
rebuilds the PLD on finer grids until the relative width ``(upper - lower) / upper``
is at most the target, and tells it where to tilt a composition when round-off
dominates (the eps asked, or the crossing of the delta asked). They take any
object with the PLD's query interface, so this module imports no PLD.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from pld import validation
from pld.distribution.refinement import DELTA_ACCURACY_FLOOR, refine, relative_width

if TYPE_CHECKING:
    from pld.distribution.loss_distribution import PLD

#: Most tilted compositions one delta query computes.
_MAX_TILTS = 4
#: eps whose deltas lie within this factor share one tilted composition.
_TILT_SPAN = 10.0


def delta_bounds(
    loss: PLD, eps: float | Sequence[float] | np.ndarray, rel_accuracy: float | None
) -> tuple:
    """Lower and upper bounds on delta(eps) of ``loss`` (see :meth:`pld.PLD.delta_bounds`).

    Only delta values whose upper bound is at least ``DELTA_ACCURACY_FLOOR`` count
    towards the target; the smallest upper bound that misses it sets the tail
    budgets of a refinement. Floats for a scalar eps (nats), arrays otherwise.
    """
    values = validation.real_array("eps", eps)
    scalar = np.ndim(eps) == 0
    target = loss._target(rel_accuracy)

    def widths(lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
        return np.where(upper >= DELTA_ACCURACY_FLOOR, relative_width(lower, upper), 0.0)

    def levels(lower: np.ndarray, upper: np.ndarray) -> float:
        wide = widths(lower, upper) > target
        return float(np.min(upper[wide])) if np.any(wide) else 1.0

    def tilt_points(bracket: tuple, estimate: tuple) -> list[tuple[float, float, float]]:
        # Too-wide eps in increasing order, grouped while delta stays within a factor
        # _TILT_SPAN of the group's first: one tilt towards, and tight from, the
        # first eps of each group (its round-off is relative to the largest delta
        # of the group); at most _MAX_TILTS groups, spread over the range.
        wide = np.flatnonzero(widths(*bracket) > target)
        wide = wide[np.argsort(values[wide], kind="stable")]
        level = np.minimum(bracket[1], np.maximum(estimate[1], bracket[0]))
        groups: list[list[int]] = []
        for i in wide:
            if groups and level[i] * _TILT_SPAN >= level[groups[-1][0]]:
                groups[-1].append(int(i))
            else:
                groups.append([int(i)])
        if len(groups) > _MAX_TILTS:
            chosen = np.linspace(0, len(groups) - 1, _MAX_TILTS).round().astype(int)
            groups = [groups[k] for k in chosen]
        return [
            (float(values[g[0]]), float(values[g[0]]), float(min(level[i] for i in g)))
            for g in groups
        ]

    what = f"delta_bounds({values[0]:g})" if scalar else f"delta_bounds of {values.size} eps"
    lower, upper = refine(
        loss, lambda p: p._delta_bracket(values), widths, levels, target, what, tilt_points
    )
    if scalar:
        return float(lower[0]), float(upper[0])
    return lower, upper


def _deltas(delta: object) -> np.ndarray:
    """``delta`` (a float or an array) as a 1-d array of values in (0, 1], or raise."""
    if np.ndim(delta) == 0:
        return np.array([validation.in_interval("delta", delta, 0.0, 1.0, low_open=True)])
    values = validation.real_array("delta", delta)
    outside = values[(values <= 0.0) | (values > 1.0)]
    if outside.size:
        raise ValueError(f"delta must lie in (0, 1] (got {float(outside[0])!r})")
    return values


def epsilon_bounds(
    loss: PLD, delta: float | Sequence[float] | np.ndarray, rel_accuracy: float | None
) -> tuple:
    """Lower and upper bounds on eps(delta) of ``loss`` (see :meth:`pld.PLD.epsilon_bounds`).

    Floats for a scalar delta, arrays otherwise. Every delta is solved in one sweep
    over the suffix sums (:meth:`pld.engine.loss_pmf.LossPmf.epsilon`); only the
    deltas whose bracket misses the target are refined, together, with tail
    budgets set by the smallest of them. The bracket intersects those of every PLD
    the refinement tried, but a later :meth:`pld.PLD.delta_bounds` consults only
    the first, the finest and the tilted compositions remembered on ``loss``;
    where none of them verifies ``delta_upper(eps_upper) <= delta``, ``eps_upper``
    is raised to the finest PLD's own (still a valid upper bound), so the two
    queries agree. Without refinement, each delta of an array gets exactly the
    bracket it gets alone.
    """
    values = _deltas(delta)
    scalar = np.ndim(delta) == 0
    target = loss._target(rel_accuracy)
    if loss._finest() is loss and not loss._views:
        # Nothing cached: the bracket on ``loss`` itself is the answer wherever it
        # meets the target, and the refinement sees only the other deltas.
        lower, upper = loss._epsilon_bracket(values)
        wide = np.flatnonzero(relative_width(lower, upper) > target)
        if wide.size == 0:
            return (float(lower[0]), float(upper[0])) if scalar else (lower, upper)
        refined = _refined_epsilon(loss, values[wide], target, (lower[wide], upper[wide]))
        lower[wide], upper[wide] = refined
    else:
        lower, upper = _refined_epsilon(loss, values, target, None)
    return (float(lower[0]), float(upper[0])) if scalar else (lower, upper)


def _refined_epsilon(
    loss: PLD, values: np.ndarray, target: float, first: tuple | None
) -> tuple[np.ndarray, np.ndarray]:
    """The refined brackets on eps at ``values`` (delta), ``first`` the bracket on
    ``loss`` itself when already known, with the finest PLD's check (see
    :func:`epsilon_bounds`)."""

    def levels(lower: np.ndarray, upper: np.ndarray) -> float:
        wide = relative_width(lower, upper) > target
        return float(np.min(values[wide])) if np.any(wide) else float(np.min(values))

    def tilt_points(bracket: tuple, estimate: tuple) -> list[tuple[float, float, float]]:
        # Towards each too-wide crossing estimated without float error terms (at
        # most _MAX_TILTS of them, spread over the deltas), tight from one
        # estimated width below it.
        wide = np.flatnonzero(relative_width(*bracket) > target)
        if wide.size > _MAX_TILTS:
            wide = wide[np.linspace(0, wide.size - 1, _MAX_TILTS).round().astype(int)]
        points = []
        for i in wide.tolist():
            low, high = float(estimate[0][i]), float(estimate[1][i])
            if low > 0.0 and math.isfinite(low):
                cut = low - (high - low) if math.isfinite(high) else low
                points.append((low, cut, float(values[i])))
        return points

    what = (
        f"epsilon_bounds({values[0]:g})"
        if values.size == 1
        else f"epsilon_bounds of {values.size} delta"
    )
    lower, upper = refine(
        loss,
        lambda p: p._epsilon_bracket(values),
        relative_width,
        levels,
        target,
        what,
        tilt_points,
        first=first,
    )
    finest = loss._finest()
    finite = np.flatnonzero(np.isfinite(upper))
    # With nothing but ``loss`` queried, its own epsilon already verified eps_upper.
    if finite.size and (finest is not loss or loss._views):
        at = upper[finite]
        checked = np.min([p._delta_upper(at) for p in (finest, loss, *loss._views)], axis=0)
        unverified = finite[checked > values[finite]]
        if unverified.size:
            own = finest._epsilon_bracket(values[unverified])[1]
            upper[unverified] = np.maximum(upper[unverified], own)
    return lower, upper
