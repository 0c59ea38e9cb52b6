"""Requested accuracy: refine a PLD's grid until a query's bracket meets a target.

Every query of a :class:`pld.PLD` takes ``rel_accuracy``: the largest relative
width ``(upper - lower) / upper`` of the bracket it may return. When a bracket is
wider, :func:`refine` first asks what causes the width, by evaluating the same
query on copies of the PLD without its floating-point error terms and without
its tails (docs/error-bounds.md §6):

* the floating-point error bounds (round-off of the composition, evaluation of
  the mechanism's losses and masses), or a PLD whose round-off floor is near the
  delta asked: recompute the composition exponentially tilted towards the
  queried tail (:mod:`pld.engine.tilted`, once per grid), whose round-off is
  relative to that tail; if that does not meet the target either, warn;
* tail and truncation budgets larger than the delta asked allows: rebuild the
  PLD with smaller budgets on the same grid;
* the grid: rebuild with every loss grid step divided by a power of two,
  predicted from the width and the convergence order observed so far.

Rebuilding uses the PLD's recipe (how its mechanism, and each composition on
top of it, was made; :func:`pld.distribution.recipes.refinable`). Refinement stops
when the target is met, when the next grid would exceed
:data:`pld.engine.MAX_REFINED_GRID_SIZE` points, when the recipe is refused, or
when refinements stop narrowing the bracket; in every case but the first the
best bracket found is returned with an :class:`AccuracyWarning` naming the limit.

Every upper bound computed along the way is a valid upper bound on the
mechanism, so the answer's upper bound is the smallest of them: refinement never
moves an upper bound up. Lower bounds are not intersected across grids: a
mechanism built from a privacy profile (``pld.shuffle``, ``pld.subsample``,
``pld.checkin``, ``pld.from_privacy_profile``) is a connect-the-dots pair on an
eps grid that follows the loss grid, so each grid's lower bound brackets its own
pair (one that converges to the analysis from above); the answer's lower bound
is the one of the most refined PLD (and of its tilted compositions, which share
its pair). With nested grids that pair lies below every coarser one, so the
bracket stays ordered. The most refined PLD is cached on the queried object, so
later queries start from it.
"""

from __future__ import annotations

import math
import sys
import time
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from pld import validation
from pld.engine import MAX_REFINED_GRID_SIZE, MIN_LOSS_GRID_STEP, BudgetError

if TYPE_CHECKING:
    from pld.distribution.loss_distribution import PLD

#: Default relative accuracy of every query: ``(upper - lower) / upper <= 1e-2``.
DEFAULT_REL_ACCURACY = 1e-2

#: delta values (upper bounds) below this are not refined: the target applies to
#: delta >= 1e-15 (a delta bracket there is still sound, only possibly wide).
DELTA_ACCURACY_FLOOR = 1e-15

#: Smallest tail / truncation budget a refinement asks for (per round and side).
MIN_TAIL_MASS = 1e-30

#: A refinement that leaves more than this fraction of the worst width makes no
#: progress; after ``_PATIENCE`` such refinements in a row the width is taken not
#: to be a grid effect (an absolute floor). Lower bounds of lattice-valued losses
#: are not monotone in the step, hence more than one try.
_NO_PROGRESS = 0.8
_PATIENCE = 2
#: One refinement by at least this factor that makes no progress is conclusive.
_CONCLUSIVE_FACTOR = 8

#: Tilted compositions are tried first when the PLD's error floor exceeds this
#: fraction of the allowed absolute width (``rel_accuracy`` times the delta asked).
_FLOOR_SHARE = 4

#: Largest refinement factor taken in one rebuild.
_MAX_FACTOR_LOG2 = 6

#: Convergence order assumed before one is observed.
_INITIAL_ORDER = 1.5

#: Wall-clock budget of one query's refinement, in seconds: a rebuild predicted to
#: end beyond it (from the duration of the last one, or of the PLD's own build, times
#: the grid's growth) is not started, and the best bracket so far is returned with an
#: AccuracyWarning.
REFINEMENT_SECONDS = 60.0


class AccuracyWarning(UserWarning):
    """A query could not meet its ``rel_accuracy``; the message names the limit."""


def check_rel_accuracy(rel_accuracy: object) -> float:
    """``rel_accuracy`` as a float in (0, 1] (1 accepts any bracket: no refinement)."""
    return validation.in_interval("rel_accuracy", rel_accuracy, 0.0, 1.0, low_open=True)


def relative_width(lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """``(upper - lower) / upper`` elementwise (0 where upper is 0, 1 where it is inf)."""
    lower = np.asarray(lower, dtype=np.float64)
    upper = np.asarray(upper, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        width = np.where(upper > 0, (upper - lower) / upper, 0.0)
    return np.where(np.isinf(upper), np.where(np.isinf(lower), 0.0, 1.0), width)


def tail_budget(level: float, rel_accuracy: float, rounds: int) -> float:
    """Per-round, per-side budget for tail and truncation mass when delta ~ ``level`` is asked.

    The budgets of all rounds add up to at most ``rel_accuracy * level / 8``, so
    they take at most an eighth of the allowed width (recipes only ever lower
    their budgets to it, never raise them).
    """
    budget = rel_accuracy * max(level, 0.0) / (8.0 * max(rounds, 1))
    return float(min(1e-3, max(MIN_TAIL_MASS, budget)))


def _absolute_width(
    widths: Callable[[np.ndarray, np.ndarray], np.ndarray], lower: np.ndarray, upper: np.ndarray
) -> float:
    """``upper - lower`` at the relatively widest point."""
    worst = int(np.argmax(widths(lower, upper)))
    return float(np.atleast_1d(upper)[worst] - np.atleast_1d(lower)[worst])


def _warn(message: str) -> None:
    """Warn at the caller's line: the first frame outside the ``pld`` package."""
    frame, level = sys._getframe(1), 2
    while frame is not None and frame.f_globals.get("__name__", "").startswith("pld."):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, AccuracyWarning, stacklevel=level)


#: ``tilt_points(bracket, estimate)``: (target, cut) losses of tilted compositions and
#: the delta level there.
TiltPoints = Callable[
    [tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]],
    list[tuple[float, float, float]],
]

#: A tilted composition may move the factors' highest atoms, of composed mass at
#: most ``rel_accuracy * level / _CLIP_SHARE``, to +inf (:func:`pld.engine.tilted.clip_tails`).
_CLIP_SHARE = 4


def _tilted(
    loss: PLD,
    current: PLD,
    measure: Callable[[PLD], tuple[np.ndarray, np.ndarray]],
    tilt_points: TiltPoints,
    bracket: tuple[np.ndarray, np.ndarray],
    estimate: tuple[np.ndarray, np.ndarray],
    rel_accuracy: float,
    used: list[float],
) -> tuple[np.ndarray, np.ndarray]:
    """``bracket`` intersected with the brackets of tilted compositions of ``current``.

    Every tilted composition bounds the same quantity at every point, so the
    intersection is a bracket (tightest near its target). The targets of the
    compositions made are appended to ``used``; the compositions are remembered
    on ``loss`` for later queries.
    """
    lower, upper = bracket
    for target, cut, level in tilt_points(bracket, estimate):
        view = current._tilted(target, cut, rel_accuracy * level / _CLIP_SHARE)
        if view is None:
            continue
        new_lower, new_upper = measure(view)
        lower, upper = np.maximum(lower, new_lower), np.minimum(upper, new_upper)
        used.append(target)
        loss._remember_view(view)
    return np.minimum(lower, upper), upper


def refine(
    loss: PLD,
    measure: Callable[[PLD], tuple[np.ndarray, np.ndarray]],
    widths: Callable[[np.ndarray, np.ndarray], np.ndarray],
    levels: Callable[[np.ndarray, np.ndarray], float],
    rel_accuracy: float,
    what: str,
    tilt_points: TiltPoints | None = None,
    *,
    first: tuple[np.ndarray, np.ndarray] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The bracket of a query, refined until ``max(widths(...)) <= rel_accuracy``.

    Parameters
    ----------
    loss : PLD
        The PLD queried.
    measure : callable
        ``measure(pld) -> (lower, upper)`` arrays: the query on one PLD.
    widths : callable
        Relative widths of the points that count (0 for points exempt from the target).
    levels : callable
        The smallest delta the query concerns (sets the tail budgets).
    rel_accuracy : float
        Target, in (0, 1].
    what : str
        The query, for warnings (e.g. ``"epsilon_bounds(1e-06)"``).
    tilt_points : callable, optional
        ``tilt_points(bracket, estimate) -> [(target, cut, level), ...]``: losses
        (nats) towards which to tilt, and from which to be tight, and the delta
        there (it sets how much far tail may go to +inf), when floating-point
        bounds dominate the width (``bracket`` is the current bracket,
        ``estimate`` the one without floating-point error terms). The tilted
        compositions (:meth:`PLD._tilted <pld.distribution.loss_distribution.PLD._tilted>`)
        are measured and intersected with the bracket.
    first : tuple of ndarray, optional
        ``measure(loss._finest())`` when the caller already has it.

    Returns
    -------
    lower, upper : ndarray
        The smallest upper bound of every PLD tried; the lower bound of the most
        refined one (and of tilted compositions on its grid).
    """
    current = loss._finest()
    lower, upper = measure(current) if first is None else first
    for other in ((loss,) if current is not loss else ()) + loss._views:
        other_lower, other_upper = measure(other)
        upper = np.minimum(upper, other_upper)
        if other.loss_grid_step == current.loss_grid_step:
            lower = np.maximum(lower, other_lower)
    lower = np.minimum(lower, upper)
    order = _INITIAL_ORDER
    stalled = 0
    tilted = tilt_points is None
    used: list[float] = []
    started = time.monotonic()
    last_seconds = 0.0  # duration of the last rebuild (none yet)
    from pld.progress import progress_bar

    def tilt(estimate: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        """The bracket so far intersected with tilted compositions of the current PLD."""
        return _tilted(
            loss, current, measure, tilt_points, (lower, upper), estimate, rel_accuracy, used
        )

    with progress_bar(desc=f"refining {what}", unit="grid") as bar:
        while True:
            worst = float(np.max(widths(lower, upper), initial=0.0))
            if worst <= rel_accuracy:
                return lower, upper
            estimate = measure(current._without_error_terms(keep_tails=True))
            # Near the round-off floor the masses themselves are noise, so the estimate
            # cannot tell what dominates: tilt first.
            level = levels(lower, upper)
            floored = current.error_floor > rel_accuracy * level / _FLOOR_SHARE
            rounding = float(np.max(widths(*estimate), initial=0.0)) <= rel_accuracy / 2
            if (floored or rounding) and not tilted:
                tilted = True
                lower, upper = tilt(estimate)
                continue
            # After a tilt, what remains may be a far tail of truncated mass that the
            # tilt could not clip: smaller budgets, then another tilt, can remove it.
            smaller_budgets = (
                bool(used)
                and current.refinable
                and tail_budget(level, rel_accuracy, current.rounds) < current.tail_budget
            )
            if rounding and not smaller_budgets:
                absolute = _absolute_width(widths, lower, upper)
                _warn(
                    f"{what}: relative width {worst:.3g} > rel_accuracy={rel_accuracy:g} "
                    f"(absolute width {absolute:.3g}) is due to the bounds on floating-point "
                    "error (round-off of the composition, evaluation of the mechanism's losses "
                    "and masses), not to the grid or the tails: refining cannot narrow it "
                    f"(PLD.error_floor = {current.error_floor:.3g}"
                    + (", also under exponential tilting)" if used else ")")
                )
                return lower, upper
            if not current.refinable:
                _warn(
                    f"{what}: relative width {worst:.3g} > rel_accuracy={rel_accuracy:g}; this PLD "
                    "cannot be refined (it was not built by a mechanism or composition that "
                    "records its recipe); build it with a smaller loss_grid_step"
                )
                return lower, upper
            grid_part = widths(*measure(current._without_error_terms(keep_tails=False)))
            grid_worst = float(np.max(grid_part, initial=0.0))
            budget = tail_budget(levels(lower, upper), rel_accuracy, current.rounds)
            if budget < current.tail_budget:
                # Truncation charged inside the grid looks like grid error: lower the
                # budgets first, on the same grid, then judge the grid.
                factor_log2 = 0
            elif grid_worst <= rel_accuracy / 4:
                absolute = _absolute_width(widths, lower, upper)
                _warn(
                    f"{what}: relative width {worst:.3g} > rel_accuracy={rel_accuracy:g} "
                    f"(absolute width {absolute:.3g}) is due to tail and truncation budgets "
                    f"already at {current.tail_budget:.3g} per round"
                )
                return lower, upper
            elif stalled:
                factor_log2 = 1
            else:
                wanted = (1.25 * grid_worst / rel_accuracy) ** (1.0 / order)
                factor_log2 = min(_MAX_FACTOR_LOG2, max(1, math.ceil(math.log2(wanted))))
            size = current.grid_size
            while factor_log2 > 0 and size * 2**factor_log2 > MAX_REFINED_GRID_SIZE:
                factor_log2 -= 1
            while factor_log2 > 0 and current.loss_grid_step / 2**factor_log2 < MIN_LOSS_GRID_STEP:
                factor_log2 -= 1
            if (
                factor_log2 == 0
                and budget >= current.tail_budget
                and size <= MAX_REFINED_GRID_SIZE / 2
            ):
                _warn(
                    f"{what}: relative width {worst:.3g} > rel_accuracy={rel_accuracy:g} at "
                    f"loss_grid_step={current.loss_grid_step:.3g}, the finest grid step accepted "
                    f"being {MIN_LOSS_GRID_STEP:g} nats"
                )
                return lower, upper
            if factor_log2 == 0 and budget >= current.tail_budget:
                _warn(
                    f"{what}: relative width {worst:.3g} > rel_accuracy={rel_accuracy:g} at "
                    f"loss_grid_step={current.loss_grid_step:.3g}; the next refinement would need "
                    f"about {2 * size} grid points, above the memory guard "
                    f"pld.engine.MAX_REFINED_GRID_SIZE={MAX_REFINED_GRID_SIZE}"
                )
                return lower, upper
            factor = 2**factor_log2
            elapsed = time.monotonic() - started
            # The last rebuild's duration (or the PLD's own build's, before any) times the
            # growth of the grid.
            predicted = (last_seconds or current._build_seconds) * factor
            if predicted and elapsed + predicted > REFINEMENT_SECONDS:
                absolute = _absolute_width(widths, lower, upper)
                _warn(
                    f"{what}: relative width {worst:.3g} > rel_accuracy={rel_accuracy:g} "
                    f"(absolute width {absolute:.3g}) at loss_grid_step="
                    f"{current.loss_grid_step:.3g}: the next refinement would take about "
                    f"{predicted:.0f} s more after {elapsed:.0f} s, beyond the budget of "
                    f"pld.distribution.refinement.REFINEMENT_SECONDS={REFINEMENT_SECONDS:g} s"
                )
                return lower, upper
            bar.set_postfix_str(f"width {worst:.3g}, step {current.loss_grid_step / factor:.3g}")
            rebuild_start = time.monotonic()
            try:
                candidate = current.rebuilt(current.loss_grid_step / factor, tail_mass=budget)
            except (BudgetError, MemoryError) as error:
                _warn(
                    f"{what}: relative width {worst:.3g} > rel_accuracy={rel_accuracy:g} at "
                    f"loss_grid_step={current.loss_grid_step:.3g}; refinement refused: {error}"
                )
                return lower, upper
            new_lower, new_upper = measure(candidate)
            last_seconds = time.monotonic() - rebuild_start
            bar.update(1)
            upper = np.minimum(upper, new_upper)
            lower = np.minimum(new_lower, upper)
            loss._remember(candidate)
            current = candidate
            tilted = tilt_points is None
            new_worst = float(np.max(widths(lower, upper), initial=0.0))
            if new_worst <= rel_accuracy:
                return lower, upper
            if factor > 1:
                stalled = stalled + 1 if new_worst > _NO_PROGRESS * worst else 0
            # A stall is conclusive after a long refinement, or where the analysis' own
            # bracket is wider than the target (a finer grid leaves it as it is).
            analysis_limited = current._analysis_width > rel_accuracy
            conclusive = factor >= _CONCLUSIVE_FACTOR or analysis_limited
            if stalled >= _PATIENCE or (stalled and conclusive):
                if not tilted:
                    tilted = True
                    estimate = measure(current._without_error_terms(keep_tails=True))
                    lower, upper = tilt(estimate)
                    new_worst = float(np.max(widths(lower, upper), initial=0.0))
                    if new_worst <= rel_accuracy:
                        return lower, upper
                absolute = _absolute_width(widths, lower, upper)
                cause = (
                    "the analysis' own one-round bracket (up to "
                    f"{100 * current._analysis_width:.3g} % wide)"
                    if analysis_limited
                    else "an error floor independent of the grid (floating-point round-off of "
                    "the composition, tail or truncation budgets)"
                )
                _warn(
                    f"{what}: relative width {new_worst:.3g} > rel_accuracy={rel_accuracy:g}; "
                    f"refining the grid to {candidate.loss_grid_step:.3g} no longer narrows the "
                    f"bracket (absolute width {absolute:.3g}): {cause} dominates"
                )
                return lower, upper
            if not stalled and factor > 1:
                order = min(2.0, max(0.5, math.log(worst / new_worst) / math.log(factor)))
