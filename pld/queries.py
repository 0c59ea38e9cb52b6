"""The delta and epsilon queries of a PLD, each refined until its bracket meets a target.

:meth:`pld.PLD.delta_bounds` and :meth:`pld.PLD.epsilon_bounds` are these
functions: they read the PLD's bracket on its current grid (the maximum over its
directions of the upper and of the lower hockey-stick divergences, seed 004
Definition 1 and eq 2.1) and hand it to :func:`pld.refinement.refine`, which
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

from pld import _validate
from pld.refinement import DELTA_ACCURACY_FLOOR, refine, relative_width

if TYPE_CHECKING:
    from pld.loss_distribution import PLD

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
    values = _validate.real_array("eps", eps)
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


def epsilon_bounds(loss: PLD, delta: float, rel_accuracy: float | None) -> tuple[float, float]:
    """Lower and upper bounds on eps(delta) of ``loss`` (see :meth:`pld.PLD.epsilon_bounds`).

    The tail budgets of a refinement are set by ``delta`` itself. The bracket
    intersects those of every PLD the refinement tried, but a later
    :meth:`pld.PLD.delta_bounds` consults only the first, the finest and the tilted
    compositions remembered on ``loss``; where none of them verifies
    ``delta_upper(eps_upper) <= delta``, ``eps_upper`` is raised to the finest
    PLD's own (still a valid upper bound), so the two queries agree.
    """
    delta = _validate.in_interval("delta", delta, 0.0, 1.0, low_open=True)
    target = loss._target(rel_accuracy)

    def tilt_points(bracket: tuple, estimate: tuple) -> list[tuple[float, float, float]]:
        # Towards the crossing estimated without float error terms, tight from
        # one estimated width below it.
        low, high = float(estimate[0][0]), float(estimate[1][0])
        if not (low > 0.0 and math.isfinite(low)):
            return []
        return [(low, low - (high - low) if math.isfinite(high) else low, delta)]

    lower, upper = refine(
        loss,
        lambda p: p._epsilon_bracket(delta),
        relative_width,
        lambda lower, upper: delta,
        target,
        f"epsilon_bounds({delta:g})",
        tilt_points,
    )
    eps_lower, eps_upper = float(lower[0]), float(upper[0])
    finest = loss._finest()
    # With nothing but ``loss`` queried, its own epsilon already verified eps_upper.
    if math.isfinite(eps_upper) and (finest is not loss or loss._views):
        at = np.array([eps_upper])
        checked = min(p._delta_upper(at)[0] for p in (finest, loss, *loss._views))
        if checked > delta:
            eps_upper = max(eps_upper, float(finest._epsilon_bracket(delta)[1][0]))
    return eps_lower, eps_upper
