"""The one discretisation routine: loss atoms -> masses on the loss grid.

Given the atoms of one direction of a privacy-loss distribution (privacy loss
``l_i = log p_i/q_i`` and P-mass ``p_i``), produce two distributions on the grid
``g_k = k * h``:

* **upper** — the dominating "connect-the-dots" split (Doroshenko, Ghazi, Kamath,
  Kumar and Manurangsi 2022, Algorithm 1 applied atom by atom): an atom at
  ``l in [g_k, g_{k+1}]`` is split into atoms at ``g_k`` and ``g_{k+1}`` with the
  same total P- and Q-mass. Merging the two gives the atom back, so the split
  pair dominates the original (data-processing inequality) and its hockey-stick
  divergence is at least the true one for every composition (Koskela et al. 2023, Thm 4).
  At grid values of eps the one-round hockey stick is unchanged; the composed
  error is of second order in ``h``.
* **lower** — a pair dominated by the original (merges of atoms and moves to a
  lower loss that keep the Q-mass), built by :func:`pld.engine.kernels.contract_cells`.

Mass above the retained range goes to +inf for the upper bound and is dropped
for the lower bound; mass below it is moved up to the first grid point for the
upper bound and dropped for the lower bound.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from pld.engine import check_grid_points, max_grid_points

#: Atoms within this relative distance of a grid point are placed on it (float
#: noise in a computed loss must not push an exact grid value into the cell below).
SNAP_RELATIVE = 64 * math.ulp(1.0)

#: Largest distance, in cells, between two atoms that the lower-bound
#: contraction merges onto a grid point between them. A merge is a
#: post-processing whatever the distance, and moves delta by at most what
#: rounding the carry down would; a gap counted in cells shrinks in nats as the
#: grid is refined, so a small cap turns lattice-valued losses (clones at large
#: eps0, randomised response off the grid) back to first-order rounding on fine
#: grids (measured: clones(1000, 4) after 1000 rounds, delta(118.15) ~ 1e-10:
#: 1.2 % wide with a cap of 16 cells, 0.18 % with 1024).
CONTRACTION_GAP = 1024

#: Each atom whose P-mass underflows float64 loses at most this much mass; the
#: upper bound charges it at the largest loss among such atoms.
_UNDERFLOW_MASS = float(np.finfo(np.float64).tiny)

#: Grid indices must fit in int64 with room to spare.
_LARGEST_CELL = 2.0**60


@dataclass(frozen=True)
class GridMasses:
    """Masses on consecutive grid points ``(offset + j) * step``, plus the mass at +inf."""

    offset: int
    masses: np.ndarray
    infinity_mass: float


def _trim(offset: int, masses: np.ndarray, infinity_mass: float) -> GridMasses:
    positive = masses > 0
    first = int(positive.argmax()) if positive.shape[0] else 0
    if not positive.shape[0] or not positive[first]:
        return GridMasses(0, np.zeros(0), infinity_mass)
    last = masses.shape[0] - 1 - int(positive[::-1].argmax())
    return GridMasses(offset + first, np.ascontiguousarray(masses[first : last + 1]), infinity_mass)


def _tail_cut(
    cells: np.ndarray, mass: np.ndarray, step: float, tail_mass: float
) -> tuple[int, int]:
    """Cells ``[first, last]`` to keep when the atoms span more than the budget.

    The cut drops at most ``tail_mass / 2`` of P-mass on each side (the one
    truncation rule of the engine, applied to one round). The sizes are
    estimated in floating point before anything is allocated.
    """
    order = np.argsort(cells, kind="stable")
    cumulative = np.cumsum(mass[order])
    total = cumulative[-1]
    low = int(np.searchsorted(cumulative, tail_mass / 2, side="right"))
    high = int(np.searchsorted(cumulative, total - tail_mass / 2, side="left"))
    first, last = float(cells[order[min(low, len(order) - 1)]]), float(cells[order[high]])
    check_grid_points(
        last - first + 2,
        f"a privacy loss spanning {(last - first) * step:.3g} nats (beyond its tails of "
        f"mass {tail_mass:g}) on the grid of step {step:g} nats",
        "increase loss_grid_step",
    )
    return int(first), int(last)


def discretise(
    loss: np.ndarray,
    mass: np.ndarray,
    step: float,
    *,
    loss_scale: np.ndarray | None = None,
    tail_mass: float = 0.0,
    lower: bool = True,
) -> tuple[GridMasses, Callable[[], GridMasses] | None]:
    """Discretise one direction of a PLD onto the grid ``k * step``.

    Parameters
    ----------
    loss : ndarray
        Privacy loss of each atom, in nats; ``+inf`` where the other
        distribution has no mass. Atoms with no mass in this direction (``-inf``
        loss) must be left out by the caller.
    mass : ndarray
        Each atom's mass under this direction's distribution (the exp of its
        log); 0 only where that underflowed (each such atom is charged
        ``_UNDERFLOW_MASS`` to the upper bound).
    step : float
        Grid spacing ``h`` in nats.
    loss_scale : ndarray, optional
        Magnitude of the numbers each loss was computed from (for ``log p - log q``,
        ``max(|log p|, |log q|)``): the loss is known to a few ulps of it, which
        sets how far an atom may be snapped to a grid point. Default ``|loss|``.
    tail_mass : float
        Only used when the atoms span more grid points than the budget
        (:func:`pld.engine.max_grid_points`):
        the P-mass that may then be cut from the tails (half on each side).
    lower : bool
        False: no lower-bound masses (None is returned for them).

    Returns
    -------
    upper : GridMasses
        The dominating (upper-bound) grid masses.
    lower : callable
        Returns the dominated (lower-bound) grid masses, contracted when called
        (:func:`pld.engine.kernels.contract_cells`, the costlier half of the
        work, which an upper-bound-only caller never pays).
    """
    from pld.engine import kernels

    loss = np.asarray(loss, dtype=np.float64)
    mass = np.asarray(mass, dtype=np.float64)
    scale = np.abs(loss) if loss_scale is None else np.asarray(loss_scale, dtype=np.float64)
    infinity_mass = 0.0
    underflow_charge = 0.0
    underflow_loss = 0.0
    if not (mass.min(initial=1.0) > 0.0 and loss.max(initial=0.0) < np.inf):
        at_infinity = loss == np.inf
        infinity_mass = float(mass[at_infinity].sum())
        placed = ~at_infinity & (mass > 0.0)
        underflowed = ~at_infinity & (mass == 0.0)
        underflow_charge = _UNDERFLOW_MASS * int(underflowed.sum())
        if underflow_charge:
            # The charge goes above the largest such loss plus its float error (the
            # placement error below covers only the atoms placed on the grid).
            margin = 2.0 * SNAP_RELATIVE * (scale[underflowed] + step)
            underflow_loss = float((loss[underflowed] + margin).max())
        loss, mass, scale = loss[placed], mass[placed], scale[placed]
    if loss.size == 0:
        empty = GridMasses(0, np.zeros(0), infinity_mass)
        upper = charge_mass(
            GridMasses(0, np.zeros(0), infinity_mass), underflow_loss, underflow_charge, step
        )
        return upper, (lambda: empty) if lower else None
    # The cells below are those of the kept range, not a comparison with the
    # float product first * step (an atom a float below it would be cut from the
    # lower side).
    cells = np.floor(loss / step)
    lowest, highest = float(cells.min()), float(cells.max())
    if not (-_LARGEST_CELL < lowest and highest < _LARGEST_CELL):
        raise ValueError(
            f"privacy losses up to {float(np.max(np.abs(loss))):.3g} nats are beyond "
            f"{_LARGEST_CELL:.3g} cells of loss_grid_step={step:g} nats; increase loss_grid_step"
        )
    first, last = int(lowest), int(highest)
    cut_above = cut_below = 0.0
    if highest - lowest + 2 > max_grid_points():
        first, last = _tail_cut(cells, mass, step, tail_mass)
        above = cells > last
        cut_above = float(mass[above].sum())
        below = cells < first
        cut_below = float(mass[below].sum())
        kept = ~above & ~below
        loss, mass, scale = loss[kept], mass[kept], scale[kept]
    # One spare cell on top: an atom snapped up onto g_{last+1} must land in a real cell.
    n_cells = last - first + 2
    to_left, to_right = kernels.scatter_cells(
        loss, mass, SNAP_RELATIVE * np.maximum(scale, step), step, first, n_cells
    )
    upper = np.zeros(n_cells + 1)
    upper[:-1] = to_left
    upper[1:] += to_right
    upper[0] += cut_below
    upper_masses = _trim(first, upper, infinity_mass + cut_above)
    upper_masses = charge_mass(upper_masses, underflow_loss, underflow_charge, step)
    if not lower:
        return upper_masses, None

    def lower_masses() -> GridMasses:
        contracted = kernels.contract_cells(to_left, to_right, step, CONTRACTION_GAP)
        return _trim(first, contracted, infinity_mass)

    return upper_masses, lower_masses


def charge_mass(grid: GridMasses, loss: float, mass: float, step: float) -> GridMasses:
    """Add ``mass`` at ``loss`` rounded up to the grid (``+inf`` allowed): an upper-bound charge.

    A charge below the grid's first point is placed on that point, and one that
    would stretch the grid beyond the budget (:func:`pld.engine.max_grid_points`)
    goes to ``+inf``: both only raise every delta, of any composition, because
    the hockey-stick weights ``(1 - e^(eps - l))_+`` increase with the loss ``l``.
    """
    if mass <= 0:
        return grid
    if not math.isinf(loss) and grid.masses.size:
        loss = max(loss, grid.offset * step)
    if math.isinf(loss) or abs(loss / step) >= _LARGEST_CELL:
        return GridMasses(grid.offset, grid.masses, grid.infinity_mass + mass)
    index = math.ceil(loss / step)
    while index * step < loss:
        index += 1
    if grid.masses.size == 0:
        return GridMasses(index, np.array([mass]), grid.infinity_mass)
    first = min(grid.offset, index)
    last = max(grid.offset + grid.masses.size - 1, index)
    if last - first + 1 > max(max_grid_points(), grid.masses.size):
        return GridMasses(grid.offset, grid.masses, grid.infinity_mass + mass)
    masses = np.zeros(last - first + 1)
    masses[grid.offset - first : grid.offset - first + grid.masses.size] = grid.masses
    masses[index - first] += mass
    return GridMasses(first, masses, grid.infinity_mass)


def loss_rounding_error(loss_scale: np.ndarray, step: float) -> float:
    """Bound, in nats, on how far any atom's grid placement is from its true loss.

    ``loss_scale`` holds the scales of the atoms placed on the grid (those whose
    mass does not underflow).

    A computed loss ``log p - log q`` is known to a few ulps of its scale
    ``max(|log p|, |log q|)``, and an atom is snapped to a grid point when within
    ``SNAP_RELATIVE * max(scale, step)`` of it; ``2 * SNAP_RELATIVE * (max scale + step)``
    covers both.
    """
    finite = loss_scale[np.isfinite(loss_scale)]
    largest = float(np.abs(finite).max()) if finite.size else 0.0
    return 2.0 * SNAP_RELATIVE * (largest + step)
