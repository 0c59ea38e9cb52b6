"""The grid/PMF engine: discretisation, FFT composition and queries.

This module is the engine's public contract: the accuracy knobs and the work budget
shared by the whole library (so that every mechanism uses the same defaults), and,
imported lazily, what mechanisms may use of the engine: :class:`LossPmf` (one
direction, one bound), :func:`discretise` and its rounding charges, the composition
routines, the tilted composition and the one FFT wrapper (:mod:`pld.engine.fft`).
"""

from __future__ import annotations

import math
import os

from pld._lazy import lazy_exports

#: Coarsest default spacing of the privacy-loss grid, in nats. Default grids are
#: this step divided by a power of two (:func:`choose_loss_grid_step`), so any two
#: default grids nest and PLDs built on them compose exactly.
DEFAULT_LOSS_GRID_STEP = 1e-3

#: Grid steps per standard deviation of the one-round privacy loss that the
#: default grid aims for. The bracket's width shrinks with the square of the
#: step; with this many steps it stays below 1 % of delta for delta >= 1e-10 and
#: T <= 1000 rounds (tests/central/test_reference_mechanisms.py).
STEPS_PER_LOSS_STD = 64

#: Finest grid accepted, in nats: grid indices of losses and of queried eps, and
#: the queries' discount rates, must stay far inside float64 and int64.
MIN_LOSS_GRID_STEP = 1e-12

#: Finest default grid: DEFAULT_LOSS_GRID_STEP / 2**MAX_REFINEMENT.
MAX_REFINEMENT = 12

#: Default bound on the probability mass outside the composition window, per
#: tail; it is charged to the upper bound (and subtracted from the lower one).
DEFAULT_TAIL_MASS = 1e-15

#: Default work and memory budget, in grid points: the largest grid the engine
#: allocates (one float64 array of this length is 512 MiB; an FFT of it takes
#: about a second on the reference machine). Work that would need more is
#: refused up front, before any allocation, with the estimate and the knob
#: (:func:`check_grid_points`). Raise it with the environment variable
#: ``PLD_MAX_GRID_POINTS``.
MAX_GRID_SIZE = 2**26

#: Memory guard of automatic refinement (``rel_accuracy``, :mod:`pld.distribution.refinement`):
#: a query stops refining, with a warning, rather than rebuild a PLD whose grid
#: would exceed this many points (2**23 points: 64 MiB per float64 array, a few
#: hundred MiB for the whole composition).
MAX_REFINED_GRID_SIZE = 2**23

#: Environment variable that overrides ``MAX_GRID_SIZE`` (an integer >= 1024).
GRID_BUDGET_VARIABLE = "PLD_MAX_GRID_POINTS"


class BudgetError(ValueError):
    """Work or memory above the budget, refused before it starts.

    The message names the estimate, the budget and a knob that reduces the work. A
    subclass of ``ValueError``, so code that catches bad input still catches it; code
    that falls back to another method when one is too costly catches this type only,
    so that a genuine bad-input error is never mistaken for "unavailable".

    Attributes
    ----------
    estimate : float
        The work estimate in grid points (``nan`` where the refusal has none).
    budget : float
        The budget it exceeds (``nan`` where the refusal has none).
    """

    def __init__(self, message: str, *, estimate: float = math.nan, budget: float = math.nan):
        super().__init__(message)
        self.estimate = estimate
        self.budget = budget


#: Largest budget the variable sets; work beyond it gets no advice to raise it.
_LARGEST_BUDGET = 2**62


def max_grid_points() -> int:
    """The work and memory budget in grid points: ``$PLD_MAX_GRID_POINTS`` or ``MAX_GRID_SIZE``.

    Read at every check, so a running program may change it.

    Raises
    ------
    ValueError
        If the environment variable is set but not an integer >= 1024.
    """
    text = os.environ.get(GRID_BUDGET_VARIABLE, "").strip()
    if not text:
        return MAX_GRID_SIZE
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (1024 <= value < math.inf) or not value.is_integer():
        raise ValueError(f"{GRID_BUDGET_VARIABLE} must be an integer >= 1024 (got {text!r})")
    return int(min(value, _LARGEST_BUDGET))


def check_grid_points(points: float, what: str, knob: str) -> None:
    """Refuse work of ``points`` grid points (or their equivalent) beyond the budget.

    Every constructor and composition calls this once with its estimate, before
    allocating or starting a long loop.

    Parameters
    ----------
    points : float
        Estimated size in grid points (float64 values held, or work measured in
        the same unit); ``inf`` or NaN when the estimate itself overflows.
    what : str
        What needs it, e.g. ``"sigma=0.001 with loss_grid_step=1e-05"``.
    knob : str
        How the caller can need less, e.g. ``"increase loss_grid_step"``.

    Raises
    ------
    BudgetError
        If ``points`` exceeds :func:`max_grid_points`.
    """
    limit = max_grid_points()
    if points <= limit:
        return
    size = f"about {points:.3g}" if math.isfinite(points) else "unboundedly many"
    budget = f"{knob}, or {budget_advice(points)}" if points <= _LARGEST_BUDGET else knob
    raise BudgetError(
        f"{what} needs {size} grid points of work and memory, above the budget of {limit}; "
        f"{budget}",
        estimate=points,
        budget=limit,
    )


def budget_advice(points: float) -> str:
    """How to allow work of ``points`` grid points: the variable and a value that suffices.

    The value is ``points`` rounded up to three significant digits, written as the
    variable accepts it (``"set the environment variable PLD_MAX_GRID_POINTS to 5.37e+08"``).
    """
    needed = max(1024, math.ceil(points))
    unit = 10 ** max(0, len(str(needed)) - 3)
    needed = -(-needed // unit) * unit
    return f"set the environment variable {GRID_BUDGET_VARIABLE} to {needed:.3g} (or more)"


def choose_loss_grid_step(loss_std: float, steps_per_std: float = STEPS_PER_LOSS_STD) -> float:
    """Default grid step for a mechanism whose one-round loss has this standard deviation.

    Returns ``DEFAULT_LOSS_GRID_STEP / 2**j`` for the smallest ``j`` (at most
    ``MAX_REFINEMENT``) that puts at least ``steps_per_std`` steps in one
    standard deviation (in nats).
    """
    if not loss_std > 0 or not math.isfinite(loss_std):
        return DEFAULT_LOSS_GRID_STEP
    # In logs: the ratio itself overflows for a subnormal loss_std.
    exponent = math.log2(DEFAULT_LOSS_GRID_STEP * steps_per_std) - math.log2(loss_std)
    refinement = min(MAX_REFINEMENT, max(0, math.ceil(exponent)))
    return DEFAULT_LOSS_GRID_STEP / 2**refinement


_EXPORTS = {
    "LossPmf": "pld.engine.loss_pmf",
    "discretise": "pld.engine.discretisation",
    "charge_mass": "pld.engine.discretisation",
    "loss_rounding_error": "pld.engine.discretisation",
    "SNAP_RELATIVE": "pld.engine.discretisation",
    "compose_bounds": "pld.engine.compose",
    "spectrum_power": "pld.engine.compose",
    "dot": "pld.engine.linalg",
    "tiltable": "pld.engine.tilted",
    "tilt_exponent": "pld.engine.tilted",
    "tilted_compose_bounds": "pld.engine.tilted",
    "TiltOverflowError": "pld.engine.tilted",
    "clip_tails": "pld.engine.tilted",
}
_SUBMODULES = ("fft",)

__all__ = sorted(
    [
        *_EXPORTS,
        *_SUBMODULES,
        "BudgetError",
        "DEFAULT_LOSS_GRID_STEP",
        "DEFAULT_TAIL_MASS",
        "GRID_BUDGET_VARIABLE",
        "MAX_GRID_SIZE",
        "MAX_REFINED_GRID_SIZE",
        "MAX_REFINEMENT",
        "MIN_LOSS_GRID_STEP",
        "STEPS_PER_LOSS_STD",
        "budget_advice",
        "check_grid_points",
        "choose_loss_grid_step",
        "max_grid_points",
    ]
)


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, _SUBMODULES)
