"""The grid/PMF engine: discretisation, FFT composition and queries.

Accuracy knobs shared by the whole library live here so that every mechanism
uses the same defaults.
"""

from __future__ import annotations

import math

#: Coarsest default spacing of the privacy-loss grid, in nats. Default grids are
#: this step divided by a power of two (:func:`choose_loss_grid_step`), so any two
#: default grids nest and PLDs built on them compose exactly.
DEFAULT_LOSS_GRID_STEP = 1e-3

#: Grid steps per standard deviation of the one-round privacy loss that the
#: default grid aims for. The bracket's width shrinks with the square of the
#: step; with this many steps it stays below 1 % of delta for delta >= 1e-10 and
#: T <= 1000 rounds (tests/test_reference_mechanisms.py).
STEPS_PER_LOSS_STD = 64

#: Finest default grid: DEFAULT_LOSS_GRID_STEP / 2**MAX_REFINEMENT.
MAX_REFINEMENT = 12

#: Default bound on the probability mass outside the composition window, per
#: tail; it is charged to the upper bound (and subtracted from the lower one).
DEFAULT_TAIL_MASS = 1e-15

#: Largest grid (number of points) the engine will allocate. A composition that
#: needs more is refused with a hint instead of exhausting memory.
MAX_GRID_SIZE = 2**26

#: Memory guard of automatic refinement (``rel_accuracy``, :mod:`pld.refinement`):
#: a query stops refining, with a warning, rather than rebuild a PLD whose grid
#: would exceed this many points (2**23 points: 64 MiB per float64 array, a few
#: hundred MiB for the whole composition).
MAX_REFINED_GRID_SIZE = 2**23


def choose_loss_grid_step(loss_std: float, steps_per_std: float = STEPS_PER_LOSS_STD) -> float:
    """Default grid step for a mechanism whose one-round loss has this standard deviation.

    Returns ``DEFAULT_LOSS_GRID_STEP / 2**j`` for the smallest ``j`` (at most
    ``MAX_REFINEMENT``) that puts at least ``steps_per_std`` steps in one
    standard deviation (in nats).
    """
    if not loss_std > 0 or not math.isfinite(loss_std):
        return DEFAULT_LOSS_GRID_STEP
    ratio = DEFAULT_LOSS_GRID_STEP * steps_per_std / loss_std
    refinement = min(MAX_REFINEMENT, max(0, math.ceil(math.log2(ratio))))
    return DEFAULT_LOSS_GRID_STEP / 2**refinement


__all__ = [
    "DEFAULT_LOSS_GRID_STEP",
    "DEFAULT_TAIL_MASS",
    "MAX_GRID_SIZE",
    "MAX_REFINED_GRID_SIZE",
    "MAX_REFINEMENT",
    "STEPS_PER_LOSS_STD",
    "choose_loss_grid_step",
]
