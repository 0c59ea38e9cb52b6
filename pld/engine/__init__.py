"""The grid/PMF engine: discretisation, FFT composition and queries.

Accuracy knobs shared by the whole library live here so that every mechanism
uses the same defaults.
"""

from __future__ import annotations

#: Default spacing of the privacy-loss grid, in nats. With the second-order
#: discretisation of :mod:`pld.engine.discretise` this keeps the relative width
#: of the (lower, upper) bracket below 1 % for delta >= 1e-10 and up to 1000
#: rounds on the reference mechanisms (tests/test_accuracy_target.py).
DEFAULT_LOSS_GRID_STEP = 1e-3

#: Default bound on the probability mass outside the composition window, per
#: tail; it is charged to the upper bound (and subtracted from the lower one).
DEFAULT_TAIL_MASS = 1e-15

#: Largest grid (number of points) the engine will allocate. A composition that
#: needs more is refused with a hint instead of exhausting memory.
MAX_GRID_SIZE = 2**26

__all__ = ["DEFAULT_LOSS_GRID_STEP", "DEFAULT_TAIL_MASS", "MAX_GRID_SIZE"]
