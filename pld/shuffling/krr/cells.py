"""The k-RR components' atoms summed per loss-grid cell, and the PLD built from them.

Each component F(s, c) is truncated to a window of h1 whose dropped mass is
computed exactly (docstring of :mod:`pld.shuffling.krr.mechanism`), and its atoms are
summed per grid cell [j h, (j + 1) h) with the engine's snapping
(docs/architecture.md, "Merged atoms") before :func:`pld.from_pmfs`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numba
import numpy as np

from pld.distribution import PLD, from_symmetric_pair
from pld.engine import (
    DEFAULT_LOSS_GRID_STEP,
    SNAP_RELATIVE,
    check_grid_points,
    choose_loss_grid_step,
    max_grid_points,
)
from pld.numerics import UNIT_ROUNDOFF
from pld.numerics import binomial as binom
from pld.shuffling.krr.components import (
    _ANCHOR_RELATIVE_ERROR,
    _Components,
    _window_low,
)


@dataclass(frozen=True)
class _Cells:
    """Merged atoms: P- and Q-mass per loss cell ``first_cell + j``, plus the infinite ones.

    Every mass is exact up to a relative ``mass_error``; ``dropped`` is the mass
    (same under P and Q) that truncation left out.
    """

    first_cell: int
    p: np.ndarray
    q: np.ndarray
    p_infinite: float
    q_infinite: float
    dropped: float
    mass_error: float


@numba.njit(cache=True)
def _cell_of(loss, step, snap):  # pragma: no cover - compiled
    """Grid cell [j h, (j + 1) h) of a loss, with the engine's snapping to grid points."""
    nearest = round(loss / step)
    if abs(loss - nearest * step) <= snap * max(abs(loss), step):
        return int(nearest)
    cell = math.floor(loss / step)
    if loss < cell * step:
        cell -= 1
    elif loss >= (cell + 1) * step:
        cell += 1
    return int(cell)


@numba.njit(cache=True)
def _finite_range(size, offset, low):  # pragma: no cover - compiled
    """Smallest and largest finite loss over the components' windows [low, size - low]."""
    smallest, largest = np.inf, -np.inf
    for i in range(size.shape[0]):
        s, c, lo = size[i], offset[i], low[i]
        first = lo if lo + c > 0 else lo + 1
        last = s - first
        if first > last:
            continue
        smallest = min(smallest, math.log((first + c) / (s - first + c)))
        largest = max(largest, math.log((last + c) / (s - last + c)))
    return smallest, largest


@numba.njit(cache=True)
def _cell_masses(
    size, offset, centre, centre_scale, low, steps, first_cells, starts, snap
):  # pragma: no cover - compiled
    """P- and Q-mass per loss cell of the components' atoms h1 in [low, size - low].

    Atom h1 of component i, (s, c) = (size_i, offset_i), has P-mass
    w_i Bin(s, 1/2)(h1) (h1 + c) / (s/2 + c) and Q-mass w_i Bin(s, 1/2)(h1)
    (s - h1 + c) / (s/2 + c); ``centre_scale_i`` is w_i Bin(s, 1/2)(centre_i) /
    (s/2 + c), from which the binomial masses run outwards. Each atom's loss is
    evaluated once and summed into the cell ``first_cells[g] + j`` of every grid g
    of step ``steps[g]``, stored at ``starts[g] + j``. Returns (P per cell, Q per
    cell, P-mass at +inf, Q-mass at -inf, atoms summed per cell).

    Each run of atoms (a component, one direction from its centre) is done in
    passes over small buffers: masses and likelihood ratios, then their logs (a
    tight loop of ``log`` calls), then the sums per cell of each grid. Every cell
    receives its terms in the order of a single atom-by-atom walk, so the sums are
    the same to the bit.
    """
    p_cells = np.zeros(starts[-1])
    q_cells = np.zeros(starts[-1])
    terms = np.zeros(starts[-1], dtype=np.int64)
    p_infinite = 0.0
    q_infinite = 0.0
    longest = 0
    for i in range(size.shape[0]):
        longest = max(longest, size[i] - 2 * low[i] + 1)
    p_run = np.empty(longest)
    q_run = np.empty(longest)
    loss_run = np.empty(longest)
    for i in range(size.shape[0]):
        s, c, lo = size[i], offset[i], low[i]
        for direction in (1, -1):
            value = centre_scale[i]
            h1 = centre[i]
            if direction == -1:
                h1 -= 1
                value *= (h1 + 1.0) / (s - h1)
            atoms = 0
            while lo <= h1 <= s - lo:
                p_run[atoms] = value * (h1 + c)
                q_run[atoms] = value * (s - h1 + c)
                if h1 + c > 0 and s - h1 + c > 0:
                    loss_run[atoms] = (h1 + c) / (s - h1 + c)
                else:
                    loss_run[atoms] = 1.0
                atoms += 1
                if direction == 1:
                    value *= (s - h1) / (h1 + 1.0)
                else:
                    value *= h1 / (s - h1 + 1.0)
                h1 += direction
            for atom in range(atoms):
                loss_run[atom] = math.log(loss_run[atom])
            for atom in range(atoms):
                p, q = p_run[atom], q_run[atom]
                if q == 0.0:
                    p_infinite += p
                elif p == 0.0:
                    q_infinite += q
            for g in range(steps.shape[0]):
                step, shift = steps[g], starts[g] - first_cells[g]
                for atom in range(atoms):
                    p, q = p_run[atom], q_run[atom]
                    if p != 0.0 and q != 0.0:
                        cell = shift + _cell_of(loss_run[atom], step, snap)
                        p_cells[cell] += p
                        q_cells[cell] += q
                        terms[cell] += 1
    return p_cells, q_cells, p_infinite, q_infinite, terms


@dataclass(frozen=True)
class _Windows:
    """The step-independent part of a merge: each component's window and its anchor.

    Component i keeps h1 in [low_i, size_i - low_i]; its binomial masses run outwards
    from ``centre_i``, where the scaled mass is ``centre_scale_i``. ``dropped`` is the
    mass (same under P and Q) left out, ``smallest`` and ``largest`` the extreme finite
    losses kept (nats) and ``steps`` the longest run from a centre.
    """

    low: np.ndarray
    centre: np.ndarray
    centre_scale: np.ndarray
    dropped: float
    smallest: float
    largest: float
    steps: int


def _distinct(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sorted distinct values of an array of non-negative integers and each one's index.

    The same as ``np.unique(values, return_inverse=True)``, by a table over the range.
    """
    base = int(values.min())
    present = np.zeros(int(values.max()) - base + 1, dtype=bool)
    present[values - base] = True
    distinct = np.flatnonzero(present)
    position = np.cumsum(present) - 1
    return distinct + base, position[values - base]


def _windows(components: _Components, tail_mass: float) -> _Windows:
    """Truncate each component to a window of h1 (see :func:`_merge`).

    The window's end and the binomial values that depend on the size only are
    evaluated once per distinct size.
    """
    size, offset, weight = components.size, components.offset, components.weight
    sizes, index = _distinct(size)
    low_of_size = _window_low(sizes, tail_mass)
    share = (size / 2) / (size / 2 + offset)
    below_2 = binom.cdf(low_of_size - 2, sizes - 1, 0.5)[index]
    below_1 = binom.cdf(low_of_size - 1, sizes - 1, 0.5)[index]
    below = binom.cdf(low_of_size - 1, sizes, 0.5)[index]
    window_dropped = share * (below_2 + below_1) + 2 * (1 - share) * below
    dropped = components.dropped + float(np.dot(weight, window_dropped))
    centre_of_size = np.minimum(np.maximum(sizes // 2, low_of_size), sizes - low_of_size)
    low, centre = low_of_size[index], centre_of_size[index]
    centre_scale = weight * binom.pmf(centre_of_size, sizes, 0.5)[index] / (size / 2 + offset)
    smallest, largest = _finite_range(size, offset, low)
    steps = int(np.max(sizes // 2 - low_of_size + 1))
    return _Windows(low, centre, centre_scale, dropped, smallest, largest, steps)


def _cell_range(windows: _Windows, step: float) -> tuple[int, int, float]:
    """First and last cell of the grid of ``step`` nats that the windows' losses need.

    Also returns the number of grid points to charge against the budget.
    """
    smallest, largest = windows.smallest, windows.largest
    low_cell = min(smallest / step - 1, 0.0) if math.isfinite(smallest) else 0.0
    high_cell = max(largest / step + 1, 0.0) if math.isfinite(largest) else 0.0
    first = min(math.floor(smallest / step) - 1, 0) if math.isfinite(smallest) else 0
    last = max(math.floor(largest / step) + 1, 0) if math.isfinite(largest) else 0
    return first, last, high_cell - low_cell + 2


def _scatter(components: _Components, windows: _Windows, steps: tuple[float, ...]) -> list[_Cells]:
    """Sum the windows' atoms per loss cell on grids of ``steps`` nats, in one walk.

    See :func:`_merge`. Each grid's cells are those a walk with that grid alone gives.
    """
    firsts, starts = [], [0]
    for step in steps:
        first, last, points = _cell_range(windows, step)
        check_grid_points(
            points,
            f"shuffled k-RR losses in [{windows.smallest:.3g}, {windows.largest:.3g}] nats "
            f"on the grid of step {step:g} nats",
            "increase loss_grid_step",
        )
        firsts.append(first)
        starts.append(starts[-1] + last - first + 1)
    size = components.size
    p, q, p_inf, q_inf, terms = _cell_masses(
        size,
        components.offset,
        windows.centre,
        windows.centre_scale,
        windows.low,
        np.array(steps, dtype=np.float64),
        np.array(firsts, dtype=np.int64),
        np.array(starts, dtype=np.int64),
        SNAP_RELATIVE,
    )
    merged = []
    for first, start, end in zip(firsts, starts[:-1], starts[1:], strict=True):
        p_grid, q_grid = p[start:end].copy(), q[start:end].copy()
        p_grid[-first] += components.null_mass
        q_grid[-first] += components.null_mass
        summed = max(int(terms[start:end].max()), size.size)
        mass_error = (
            components.weight_error
            + _ANCHOR_RELATIVE_ERROR
            + UNIT_ROUNDOFF * (3 * windows.steps + summed + 16)
        )
        merged.append(_Cells(first, p_grid, q_grid, p_inf, q_inf, windows.dropped, mass_error))
    return merged


def _merge(components: _Components, step: float, tail_mass: float) -> _Cells:
    """Truncate each component to a window of h1 and sum its atoms per loss cell.

    The window [lo, s - lo] of F(s, c) is chosen with P(Bin(s - 1, 1/2) < lo) <
    tail_mass / 4; the P-mass it drops, lambda [F_{s-1}(lo - 2) + F_{s-1}(lo - 1)] +
    2 (1 - lambda) F_s(lo - 1) with F_t the Bin(t, 1/2) CDF, equals the Q-mass by
    symmetry and is at most tail_mass / 2.

    Relative error of a cell's mass: the weight's, the anchor's, three roundings per
    step of the run from the centre and one per term of the cell's sum (or of the
    sums at +-inf, at most one term per component).
    """
    return _scatter(components, _windows(components, tail_mass), (step,))[0]


def _loss_std(cells: _Cells) -> float:
    """Standard deviation (nats) of the merged cells' loss under P; inf with mass at +inf."""
    if cells.p_infinite > 0:
        return math.inf
    finite = (cells.p > 0) & (cells.q > 0)
    if not finite.any():
        return 0.0
    loss = np.log(cells.p[finite] / cells.q[finite])
    mean = np.average(loss, weights=cells.p[finite])
    return float(np.sqrt(np.average((loss - mean) ** 2, weights=cells.p[finite])))


def _guess_step(components: _Components, windows: _Windows) -> float:
    """The step :func:`_merge_on_default_grid` will likely choose, from the components alone.

    F(s, c)'s loss is about 2 (h1 - s/2) / M with M = s/2 + c, whose first two
    moments under P are s / (2 M^2) and s / M^2; with an atom at +inf (c = 0 and
    an untruncated window) the loss's deviation is infinite. Only a guess: the
    choice is made on the merged cells.
    """
    if np.any((components.offset == 0) & (windows.low == 0)):
        return DEFAULT_LOSS_GRID_STEP
    half = components.size / 2 + components.offset
    total = float(components.weight.sum()) + components.null_mass
    if not total > 0:
        return DEFAULT_LOSS_GRID_STEP
    mean = float(np.dot(components.weight, components.size / (2 * half * half))) / total
    second = float(np.dot(components.weight, components.size / (half * half))) / total
    return choose_loss_grid_step(math.sqrt(max(second - mean * mean, 0.0)))


def _merge_on_default_grid(
    components: _Components, loss_grid_step: float | None, tail_mass: float
) -> tuple[_Cells, float]:
    """Merge on ``loss_grid_step``, or on the engine's default for the loss's spread.

    The default is ``pld.engine.choose_loss_grid_step`` of the loss's standard
    deviation, measured on the cells of the coarsest default grid. The walk that
    merges on that grid also merges on the grid of :func:`_guess_step` (when it
    fits the budget), so that a right guess costs one walk, not two.
    """
    windows = _windows(components, tail_mass)
    if loss_grid_step is not None:
        return _scatter(components, windows, (loss_grid_step,))[0], loss_grid_step
    steps = (DEFAULT_LOSS_GRID_STEP,)
    guess = _guess_step(components, windows)
    if guess != DEFAULT_LOSS_GRID_STEP and _cell_range(windows, guess)[2] <= max_grid_points():
        steps = (DEFAULT_LOSS_GRID_STEP, guess)
    merged = _scatter(components, windows, steps)
    step = choose_loss_grid_step(_loss_std(merged[0]))
    if step == DEFAULT_LOSS_GRID_STEP:
        return merged[0], step
    if step == guess and len(merged) == 2:
        return merged[1], step
    return _scatter(components, windows, (step,))[0], step


def _pld_from_cells(cells: _Cells, step: float, max_loss: float | None) -> PLD:
    used = (cells.p > 0) | (cells.q > 0)
    p = np.concatenate((cells.p[used], [cells.p_infinite, 0.0]))
    q = np.concatenate((cells.q[used], [0.0, cells.q_infinite]))
    with np.errstate(divide="ignore"):
        log_p, log_q = np.log(p), np.log(q)
    return from_symmetric_pair(
        log_p,
        log_q,
        loss_grid_step=step,
        truncated_mass_p=cells.dropped,
        truncated_mass_q=cells.dropped,
        max_loss=max_loss,
        mass_relative_error=min(cells.mass_error, 1e-3),
    )
