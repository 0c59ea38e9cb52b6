"""The truncated clones pair merged per loss-grid cell: numpy pass or numba kernel over its rows.

The construction is described in the docstring of :mod:`pld.shuffling.clones.mechanism`
(truncation windows of Koskela et al. (2023), §3.2 and Lemma 11, one merged atom per grid cell,
docs/architecture.md "Merged atoms"); its public entry is
:func:`pld.shuffling.clones.mechanism.clones_cells`.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass

import numpy as np

from pld.engine import (
    DEFAULT_LOSS_GRID_STEP,
    MAX_REFINEMENT,
    check_grid_points,
    choose_loss_grid_step,
    max_grid_points,
)
from pld.shuffling.clones.pair import (
    _ClonesPair,
    _outside_mass,
    _Rows,
    _rows,
)

#: Relative accuracy claimed for the merged masses handed to the engine: Boost's
#: pmf and cdf (<= 1.4e-12 measured at n = 5e6, 1e7) times the β recurrence,
#: renormalised per row (<= 2 ulp per step from the median: 2e-12 at 1e4 steps).
MERGED_MASS_RELATIVE_ERROR = 1e-11

#: Rows walked by the probe that measures the loss's standard deviation for the
#: default grid (a row stride of rows // PROBE_ROWS). Against a probe of 512 rows
#: the deviation moved by at most 2.4e-5 relatively (quantile windows; 7.4e-5
#: Hoeffding's) and the default step never changed, over 1680 pairs (n from 50 to
#: 3e6, eps0 from 0.05 to 8); at n = 10^4, eps0 = 1 the probe costs a fifth of a
#: full pass instead of about 0.6 of one.
PROBE_ROWS = 128

#: The default grid is coarsened until [-ε0, ε0] spans at most this many cells
#: (two float64 arrays of this length are accumulated: 64 MiB).
DEFAULT_MAX_CELLS = 2**22

#: Lattice points the kernel walks per grid point of the work budget
#: (:func:`pld.engine.check_grid_points`): a point costs about 8 ns (3.8e8 points
#: in 2.8-3.5 s at n = 10^7 on the shared reference machine), a grid point of a
#: composition several times more (transforms, powering, queries). The default
#: budget thus allows about 5e8 points (~4 s; n ~ 1.3e7 at eps0 = 1).
LATTICE_POINTS_PER_GRID_POINT = 8

#: Rows x widest row up to which the kept points are scattered by a vectorised
#: numpy pass, unless the numba kernel is already loaded: a fresh process pays
#: ~0.7 s to import numba and load even a cached kernel (~0.23 s when numba is
#: already imported), the numpy pass ~100 ns per table entry (~0.1 s at this size;
#: about 40 ms a build at n = 10^4, eps0 = 1) against the kernel's 4-6 ns per point
#: (about 6 ms a build). About 8 float64 arrays of this size (64 MiB) are allocated.
NUMPY_SCATTER_CELLS = 2**20

#: Table entries scattered by numpy in one process after which the kernel takes
#: over (about 0.3-0.6 s spent, the cost of loading it): many small builds in
#: one process then run at the kernel's speed.
NUMPY_SCATTER_BUDGET = 2**22

#: Table entries scattered by numpy so far in this process.
_numpy_scattered = 0

#: Lattice points walked per call of the numba kernel: calls of ~0.1 s, between
#: which Python sees Ctrl-C.
KERNEL_CHUNK_POINTS = 20_000_000


def _window_betas(totals: np.ndarray, lows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row, the kernel's β (unnormalised) and its sum (:mod:`pld.shuffling.clones.kernels`).

    Returns ``(beta, total)``: ``beta[row, k - (lo - 1)]`` for k in [lo - 1, t - lo]
    (zero-padded to the widest row) and the row's sum. The ratio recurrence runs
    from the median outward as sequential products (``np.multiply.accumulate``
    along a row, padded with exact ones) and the sum in the kernel's order (median,
    upward, downward; ``np.cumsum`` along a row, padded with zeros), so both equal
    the kernel's bit for bit.
    """
    size = totals.shape[0]
    base = lows - 1
    trials = totals - 1
    k0 = np.maximum(base, 0)
    k1 = np.minimum(totals - lows, trials)
    centre = np.minimum(np.maximum(trials // 2, k0), k1)
    rows = np.arange(size)[:, np.newaxis]
    # Upward: β(k + 1) = β(k) (trials - k) / (k + 1) for k in [centre, k1).
    up_k = centre[:, np.newaxis] + np.arange(max(int(np.max(k1 - centre)), 0))
    up_ok = up_k < k1[:, np.newaxis]
    up = np.multiply.accumulate(
        np.where(up_ok, (trials[:, np.newaxis] - up_k) / (up_k + 1), 1.0), axis=1
    )
    up = np.where(up_ok, up, 0.0)
    # Downward: β(k - 1) = β(k) k / (trials - k + 1) for k in (k0, centre].
    down_k = centre[:, np.newaxis] - np.arange(max(int(np.max(centre - k0)), 0))
    down_ok = down_k > k0[:, np.newaxis]
    down = np.multiply.accumulate(
        np.where(down_ok, down_k / (trials[:, np.newaxis] - down_k + 1), 1.0), axis=1
    )
    down = np.where(down_ok, down, 0.0)
    total = np.cumsum(np.concatenate([np.ones((size, 1)), up, down], axis=1), axis=1)[:, -1]
    width = int(np.max(totals - 2 * lows + 2))
    beta = np.zeros((size, width + 1))  # a spare column takes the padding
    spare = width
    beta[np.arange(size), centre - base] = 1.0
    beta[rows, np.where(up_ok, up_k + 1 - base[:, np.newaxis], spare)] = up
    beta[rows, np.where(down_ok, down_k - 1 - base[:, np.newaxis], spare)] = down
    return beta[:, :width], total


def _point_cells(
    t: np.ndarray,
    a: np.ndarray,
    r: float,
    step: float,
    edges: np.ndarray,
    first_cell: int,
) -> np.ndarray:
    """Cell index (into ``edges``) of each lattice point (a, t - a), t >= 1.

    The kernel's rule (:mod:`pld.shuffling.clones.kernels`): the largest j in
    [1, last] with ``e^s >= edges[j]``, compared as (a + r b) >= edges[j] (r a + b)
    with the same float operations, else 0. The loss's floor is the first guess.
    """
    last = edges.shape[0] - 2
    numerator = a + r * (t - a)
    denominator = r * a + (t - a)
    guess = np.floor(np.log(numerator / denominator) / step) - first_cell
    j = np.clip(guess, 0, last).astype(np.int64)
    # Only the few points whose guess moves are compared again (edges[last + 1] exists).
    down = (j > 0) & (numerator < edges[j] * denominator)
    up = (j < last) & (numerator >= edges[j + 1] * denominator)
    moving = np.flatnonzero(down | up)
    shift = up[moving].astype(np.int64) - down[moving]
    while moving.size:
        j[moving] += shift
        cell, above, below = j[moving], numerator[moving], denominator[moving]
        down = (cell > 0) & (above < edges[cell] * below)
        up = (cell < last) & (above >= edges[cell + 1] * below)
        keep = down | up
        moving, shift = moving[keep], (up.astype(np.int64) - down)[keep]
    return j


def _scatter_rows_numpy(
    totals: np.ndarray,
    lows: np.ndarray,
    row_weight: np.ndarray,
    row_window_mass: np.ndarray,
    r: float,
    step: float,
    edges: np.ndarray,
    first_cell: int,
    cell_p: np.ndarray,
    cell_q: np.ndarray,
) -> int:
    """The kernel's scatter (:mod:`pld.shuffling.clones.kernels`) vectorised over all points.

    The same β, cell of every point and run sums, in the same order (``np.bincount``
    adds in input order, row by row and a by a), so the merged masses equal the
    kernel's. Memory: about 8 float64 arrays of (rows x widest row).
    """
    beta, total = _window_betas(totals, lows)
    width = beta.shape[1]
    columns = np.arange(width)
    hi = totals - lows
    # Column c of a row holds β(lo - 1 + c); kept a = lo - 1 + c for c in [1, hi - lo + 1].
    kept = (columns >= 1) & (columns <= (hi - lows + 1)[:, np.newaxis])
    row_of = np.broadcast_to(np.arange(totals.shape[0])[:, np.newaxis], kept.shape)[kept]
    a = (lows[:, np.newaxis] - 1 + columns)[kept]
    beta_a = beta[kept]
    beta_before = beta[:, :-1][kept[:, 1:]]  # β(a - 1), column c - 1
    t = totals[row_of]
    cell = _point_cells(t, a, r, step, edges, first_cell)
    first = (np.diff(cell, prepend=-1) != 0) | (np.diff(row_of, prepend=-1) != 0)
    starts = np.flatnonzero(first)
    run = np.cumsum(first) - 1
    unshifted = np.bincount(run, weights=beta_a)
    ends = np.append(starts[1:], a.size) - 1
    shifted = unshifted - beta_a[ends] + beta_before[starts]
    run_row = row_of[starts]
    weight = (row_weight * row_window_mass / total)[run_row]
    run_cell = cell[starts]
    cell_p += np.bincount(
        run_cell, weights=weight * (shifted + r * unshifted), minlength=cell_p.size
    )
    cell_q += np.bincount(
        run_cell, weights=weight * (r * shifted + unshifted), minlength=cell_q.size
    )
    return int(a.size)


# -- the merged construction -------------------------------------------------------


@dataclass(frozen=True)
class ClonesCells:
    """The clones pair with its kept lattice points merged per loss-grid cell.

    ``log_p[i]``, ``log_q[i]`` are the logs of the P- and Q-mass of the kept
    points whose privacy loss lies in ``[cells[i] * step, (cells[i] + 1) * step)``.
    ``truncated_mass`` is the P-mass (equal to the Q-mass) of the points left
    out, ``lattice_points`` the number of points kept (each counted once).
    """

    log_p: np.ndarray
    log_q: np.ndarray
    cells: np.ndarray
    step: float
    truncated_mass: float
    lattice_points: int


def _loss_std(cell_p: np.ndarray, cell_q: np.ndarray) -> float:
    """Standard deviation (nats) under P of the privacy losses of merged atoms (non-empty cells)."""
    keep = np.flatnonzero(cell_p > 0)
    log_p, log_q = np.log(cell_p[keep]), np.log(cell_q[keep])
    finite = np.isfinite(log_q)
    weights = np.exp(log_p[finite])
    loss = log_p[finite] - log_q[finite]
    mean = np.average(loss, weights=weights)
    return float(np.sqrt(np.average((loss - mean) ** 2, weights=weights)))


def _cells_on_default_grid(pair: _ClonesPair, truncation: str, tail_mass: float) -> ClonesCells:
    """Merged atoms on the engine's default grid for this pair's loss.

    The engine's rule (:func:`pld.engine.choose_loss_grid_step`) needs the loss's
    standard deviation, which needs the atoms. A probe pass uses a grid about 8
    times finer than the analytic estimate 2 (1 - r) / ((1 + r) sqrt(E[a + b]))
    (the loss is about 2 (1 - r)(a - b) / ((1 + r) t) near a = b, and a - b has
    variance about t given t); within-cell spread then changes the measured
    deviation by under 1 %. The probe walks about ``PROBE_ROWS`` evenly spaced
    rows of a + b only (the deviation is a smooth function of the row), and is
    reused as the result when it walked every row on the final grid.
    Both are coarsened by powers of two until [-ε0, ε0] spans at most
    ``DEFAULT_MAX_CELLS`` cells (a large ε0 with a tiny loss deviation).
    """
    coarsest = DEFAULT_LOSS_GRID_STEP
    while 2.0 * pair.eps0 / coarsest > DEFAULT_MAX_CELLS:
        coarsest *= 2.0
    expected_total = pair.rho * (pair.n - 1) + 1.0
    estimate = 2.0 * pair.one_minus_r / ((1.0 + pair.r) * math.sqrt(expected_total))
    probe_step = max(choose_loss_grid_step(8.0 * estimate), coarsest / 2**MAX_REFINEMENT)
    while 2.0 * pair.eps0 / probe_step > DEFAULT_MAX_CELLS:
        probe_step *= 2.0
    rows = _rows(pair, truncation, tail_mass)
    stride = max(1, rows.low.size // PROBE_ROWS)
    probe = _scatter(pair, rows, probe_step, stride)
    step = choose_loss_grid_step(_loss_std(probe.cell_p, probe.cell_q))
    while 2.0 * pair.eps0 / step > DEFAULT_MAX_CELLS:
        step *= 2.0
    if step == probe_step and stride == 1:
        return _merged(pair, rows, probe)
    return _merged_cells(pair, rows, step)


def _work_estimate(pair: _ClonesPair, truncation: str, tail_mass: float) -> tuple[float, float]:
    """Upper estimates of the rows and of the lattice points that the kernel walks.

    At most (rows) x (widest row), with both windows in closed form. For
    X ~ Bin(N, ρ) and L = log(4/τ), Hoeffding's window (``truncation="hoeffding"``)
    has half-width sqrt(N L / 2); the quantile windows lie inside it and inside
    Bernstein's, P(|X - Nρ| > t) <= τ/4 per side for
    t = sqrt(2 N ρ (1 - ρ) L) + 2 L / 3, so the smaller of the two is used.
    """
    log_tail = math.log(4.0 / tail_mass)
    trials = pair.n - 1.0

    def half_width(count: float, prob: float) -> float:
        hoeffding = math.sqrt(count * log_tail / 2.0)
        if truncation == "hoeffding":
            return hoeffding + 1.0
        bernstein = math.sqrt(2.0 * count * prob * (1.0 - prob) * log_tail) + 2.0 * log_tail / 3
        return min(bernstein, hoeffding) + 1.0

    spread = half_width(trials, pair.rho)
    rows = min(trials + 1.0, 2.0 * spread) + 2.0
    largest = min(trials, pair.rho * trials + spread) + 1.0
    widest = min(largest + 1.0, 2.0 * half_width(largest, 0.5)) + 2.0
    return rows, rows * widest


def _check_work(pair: _ClonesPair, truncation: str, tail_mass: float, step: float | None) -> None:
    """Refuse, before any allocation, a construction beyond the work and memory budget.

    Each lattice point walked (:func:`_work_estimate`) costs
    ``1 / LATTICE_POINTS_PER_GRID_POINT`` grid point, plus the per-row arrays and
    the cells of [-ε0, ε0].
    """
    rows, lattice = _work_estimate(pair, truncation, tail_mass)
    cells = DEFAULT_MAX_CELLS if step is None else 2 * pair.eps0 / step
    check_grid_points(
        lattice / LATTICE_POINTS_PER_GRID_POINT + 8 * rows + cells,
        f"clones(n={pair.n}, eps0={pair.eps0:g}) (about {lattice:.3g} lattice points to walk "
        f"in {rows:.3g} rows)",
        "use a smaller n (the result for n users also bounds any larger n) or "
        "truncation='quantile'",
    )


def _cells(pair: _ClonesPair, truncation: str, tail_mass: float, step: float | None) -> ClonesCells:
    """The merged atoms of the truncated pair, after the work estimate."""
    _check_work(pair, truncation, tail_mass, step)
    if step is None:
        return _cells_on_default_grid(pair, truncation, tail_mass)
    return _merged_cells(pair, _rows(pair, truncation, tail_mass), step)


def _kernel_loaded() -> bool:
    """Whether this process has already loaded the numba scatter kernel (then it is
    also the faster path for small work; both paths give the same masses)."""
    kernels = sys.modules.get("pld.shuffling.clones.kernels")
    return kernels is not None and bool(kernels._scatter_rows.signatures)


def _scatter_with_kernel(
    pair: _ClonesPair,
    totals: np.ndarray,
    low: np.ndarray,
    row_weight: np.ndarray,
    window_mass: np.ndarray,
    step: float,
    edges: np.ndarray,
    first_cell: int,
    cell_p: np.ndarray,
    cell_q: np.ndarray,
) -> int:
    """Run the numba kernel on chunks of rows of about ``KERNEL_CHUNK_POINTS`` points
    each, so that a KeyboardInterrupt is seen between calls; return the points walked."""
    from pld.shuffling.clones.kernels import _scatter_rows

    chunk = np.cumsum(totals - 2 * low + 1) // KERNEL_CHUNK_POINTS
    starts = np.flatnonzero(np.diff(chunk, prepend=-1)).tolist()
    points = 0
    for start, stop in zip(starts, [*starts[1:], totals.size], strict=True):
        points += _scatter_rows(
            totals[start:stop],
            low[start:stop],
            row_weight[start:stop],
            window_mass[start:stop],
            pair.r,
            step,
            edges,
            first_cell,
            cell_p,
            cell_q,
        )
    return points


@dataclass(frozen=True)
class _Scattered:
    """Masses summed per cell ``first_cell + j`` (j indexes ``cell_p``, ``cell_q``)."""

    cell_p: np.ndarray
    cell_q: np.ndarray
    first_cell: int
    step: float
    points: int


def _scatter(pair: _ClonesPair, rows: _Rows, step: float, row_stride: int = 1) -> _Scattered:
    """Scatter the kept rows (every ``row_stride``-th one, for a probe) onto the grid."""
    eps0 = pair.eps0
    first_cell = math.floor(-eps0 / step) - 1
    n_cells = math.floor(eps0 / step) - first_cell + 2
    check_grid_points(
        n_cells,
        f"[-eps0, eps0] = [-{eps0:g}, {eps0:g}] on the grid of step {step:g} nats",
        f"increase loss_grid_step (to at least {2 * eps0 / max_grid_points():.3g})",
    )
    totals = np.ascontiguousarray(rows.totals[::row_stride])
    low = np.ascontiguousarray(rows.low[::row_stride])
    cell_p = np.zeros(n_cells)
    cell_q = np.zeros(n_cells)
    edges = np.exp((first_cell + np.arange(n_cells + 1)) * step)
    row_weight = pair.weight_a * rows.clone_pmf[::row_stride]
    # The window [lo - 1, t - lo] of X ~ Bin(t - 1, 1/2) leaves P(X <= lo - 2) on each side.
    below = rows.below[::row_stride]
    window_mass = 1.0 - below - below
    global _numpy_scattered
    # Decided on all the rows: a probe whose full pass will need the kernel uses it too.
    full_table = rows.totals.size * int(np.max(rows.totals - 2 * rows.low + 2, initial=0))
    table = totals.size * int(np.max(totals - 2 * low + 2, initial=0))
    if (
        full_table <= NUMPY_SCATTER_CELLS
        and _numpy_scattered < NUMPY_SCATTER_BUDGET
        and not _kernel_loaded()
    ):
        _numpy_scattered += table
        points = _scatter_rows_numpy(
            totals,
            low,
            row_weight,
            window_mass,
            pair.r,
            step,
            edges,
            first_cell,
            cell_p,
            cell_q,
        )
    else:
        points = _scatter_with_kernel(
            pair, totals, low, row_weight, window_mass, step, edges, first_cell, cell_p, cell_q
        )
    return _Scattered(cell_p, cell_q, first_cell, step, int(points))


def _merged(pair: _ClonesPair, rows: _Rows, scattered: _Scattered) -> ClonesCells:
    """The merged atoms of a scatter of every kept row, with the mass left out."""
    keep = np.flatnonzero(scattered.cell_p > 0)
    return ClonesCells(
        log_p=np.log(scattered.cell_p[keep]),
        log_q=np.log(scattered.cell_q[keep]),
        cells=keep + scattered.first_cell,
        step=scattered.step,
        truncated_mass=_outside_mass(pair, rows),
        lattice_points=scattered.points,
    )


def _merged_cells(pair: _ClonesPair, rows: _Rows, step: float) -> ClonesCells:
    """The merged atoms of every kept row on the grid of ``step``."""
    return _merged(pair, rows, _scatter(pair, rows, step))
