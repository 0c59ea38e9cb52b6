"""The truncated clones pair merged per loss-grid cell: numpy pass or numba kernel over its rows.

The construction is described in the docstring of :mod:`pld.shuffling.clones.mechanism`
(truncation windows of Koskela et al. (2023), §3.2 and Lemma 11, one merged atom per grid cell,
docs/architecture.md "Merged atoms"); its public entry is
:func:`pld.shuffling.clones.mechanism.clones_cells`.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass, replace

import numpy as np

from pld.engine import (
    DEFAULT_LOSS_GRID_STEP,
    MAX_REFINEMENT,
    check_grid_points,
    choose_loss_grid_step,
    max_grid_points,
)
from pld.numerics import UNIT_ROUNDOFF
from pld.shuffling.clones.pair import (
    _ClonesPair,
    _outside_mass,
    _outside_rows,
    _row_weights,
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

#: Cost of one cell-row step of the row recurrence (:mod:`pld.shuffling.clones.recurrence`)
#: in walked points: about 6-8 ns, as a point of the walk (measured at
#: n = 10^8 - 10^9). The recurrence is used where it is cheaper.
RECURRENCE_STEP_POINTS = 1.0

#: The walk is kept below this many points (about 0.2 s), and wherever a cell holds
#: few points of a row: there its exact per-point sums are as fast and carry the
#: smaller error bound (the recurrence's bound grows where a cell holds few points).
RECURRENCE_MIN_POINTS = 2**25

#: Rows between fresh sums of the recurrence (as :data:`recurrence.ANCHOR_ROWS`,
#: which imports numba; used here only for the work estimate).
ANCHOR_ROWS = 4096


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
    ``truncated_mass`` bounds the P-mass (equal to the Q-mass) of the points left
    out, ``lattice_points`` is the number of points kept (each counted once) and
    ``mass_error`` a bound on the relative error of every merged mass.
    """

    log_p: np.ndarray
    log_q: np.ndarray
    cells: np.ndarray
    step: float
    truncated_mass: float
    lattice_points: int
    mass_error: float = MERGED_MASS_RELATIVE_ERROR


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
    """Upper estimates of the rows and of the lattice points that a walk would visit.

    At most (rows) x (widest row), with both windows in closed form. For
    X ~ Bin(N, ρ) and L = log(4/τ), Hoeffding's window (``truncation="hoeffding"``)
    has half-width sqrt(N L / 2); the quantile windows lie inside it and inside
    Bernstein's, P(|X - Nρ| > t) <= τ/4 per side for
    t = sqrt(2 N ρ (1 - ρ) L) + 2 L / 3, so the smaller of the two is used.
    """
    rows, widest, _ = _windows(pair, truncation, tail_mass)
    return rows, rows * widest


def _windows(pair: _ClonesPair, truncation: str, tail_mass: float) -> tuple[float, float, float]:
    """(rows, widest row, half-width of the widest row's a-window), all upper estimates."""
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
    half = half_width(largest, 0.5)
    widest = min(largest + 1.0, 2.0 * half) + 2.0
    return rows, widest, half


def _recurrence_estimate(
    pair: _ClonesPair, truncation: str, tail_mass: float, step: float | None
) -> float:
    """Upper estimate of the work of the row recurrence (:mod:`recurrence`), in walk points.

    Rows x cells of the kept loss range (the loss at the widest row's window end,
    2 (1 - r) h / ((1 + r) t) near a = b with h the a-window's half-width, on the
    given grid or, by default, 64 cells per standard deviation of the loss, about
    1 / (4 sqrt(L)) of that range), each cell-row about ``RECURRENCE_STEP_POINTS``
    points, plus a walk over one row every ``ANCHOR_ROWS`` rows and the probe.
    """
    rows, widest, half = _windows(pair, truncation, tail_mass)
    if step is None:
        cells = 2.0 * 64.0 * math.sqrt(2.0 * math.log(4.0 / tail_mass)) * 1.2
    else:
        t = max(pair.rho * (pair.n - 1.0), 1.0)
        reach = 2.0 * pair.one_minus_r * half / ((1.0 + pair.r) * t)
        cells = 2.0 * min(1.5 * reach, pair.eps0) / step + 4.0
    anchors = rows / ANCHOR_ROWS + 1.0
    return rows * cells * RECURRENCE_STEP_POINTS + (anchors + PROBE_ROWS) * widest


def _work_points(pair: _ClonesPair, truncation: str, tail_mass: float, step: float | None) -> float:
    """The work of a construction in grid points: the cheaper of the walk (each lattice
    point of :func:`_work_estimate`) and the row recurrence (:func:`_recurrence_estimate`)
    costs ``1 / LATTICE_POINTS_PER_GRID_POINT`` grid point per point, plus the per-row
    arrays and the cells of [-ε0, ε0]."""
    rows, lattice = _work_estimate(pair, truncation, tail_mass)
    work = min(lattice, _recurrence_estimate(pair, truncation, tail_mass, step))
    cells = DEFAULT_MAX_CELLS if step is None else 2 * pair.eps0 / step
    return work / LATTICE_POINTS_PER_GRID_POINT + 8 * rows + cells


def _largest_n(pair: _ClonesPair, truncation: str, tail_mass: float, step: float | None) -> int:
    """The largest n whose construction fits the budget (0 if none), other settings kept."""
    limit = max_grid_points()

    def fits(n: int) -> bool:
        return _work_points(replace(pair, n=n), truncation, tail_mass, step) <= limit

    if not fits(1):
        return 0
    low, high = 1, pair.n  # fits(low), not fits(high): the work grows with n
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if fits(middle) else (low, middle)
    return low


def _check_work(pair: _ClonesPair, truncation: str, tail_mass: float, step: float | None) -> None:
    """Refuse, before any allocation, a construction beyond the work and memory budget.

    The refusal names what fits the budget with the other settings kept: the largest
    n (a bound for n users holds for any larger population), the quantile windows
    when Hoeffding's were asked, a larger ``tail_mass`` or ``loss_grid_step`` when
    they suffice (:func:`_work_points`).
    """
    points = _work_points(pair, truncation, tail_mass, step)
    if points <= max_grid_points():
        return
    rows, lattice = _work_estimate(pair, truncation, tail_mass)
    limit = max_grid_points()
    knobs = []
    if step is not None and 2 * pair.eps0 / step > limit / 2:
        # The cells of [-eps0, eps0] alone take half the budget: a grid of limit / 16 cells.
        step = 32 * pair.eps0 / limit
        knobs.append(f"loss_grid_step={step:.3g} or larger")
    largest = _largest_n(pair, truncation, tail_mass, step)
    if 0 < largest < pair.n:
        clause = f"n={largest} or less (the bound for n users also holds for any larger population)"
        knobs.append(f"{knobs.pop()} with {clause}" if knobs else clause)
    if truncation == "hoeffding" and _work_points(pair, "quantile", tail_mass, step) <= limit:
        knobs.append("truncation='quantile'")
    if truncation != "exact":
        larger = [1e-3 * 10.0**-k for k in range(9, -1, -1) if 1e-3 * 10.0**-k > tail_mass]
        fitting = [t for t in larger if _work_points(pair, truncation, t, step) <= limit]
        if fitting:
            knobs.append(f"tail_mass={fitting[0]:g} (a looser bound)")
    check_grid_points(
        points,
        f"clones(n={pair.n}, eps0={pair.eps0:g}) (about {lattice:.3g} lattice points in "
        f"{rows:.3g} rows)",
        "use " + ", or ".join(knobs) if knobs else "no other setting of clones fits",
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
    first_cell, n_cells = _grid(pair, step)
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
    """The merged atoms of every kept row on the grid of ``step``: walked point by point,
    or by the row recurrence where it is the cheaper (many points per cell)."""
    walk = float(np.sum(rows.totals - 2 * rows.low + 1))
    span = _kept_cells(pair, rows, step)
    recurrence_work = rows.low.size * (span[1] - span[0]) * RECURRENCE_STEP_POINTS
    if walk > RECURRENCE_MIN_POINTS and 4 * recurrence_work < walk:
        return _merged_recurrence(pair, rows, step, span)
    return _merged(pair, rows, _scatter(pair, rows, step))


def _grid(pair: _ClonesPair, step: float) -> tuple[int, int]:
    """(first cell, number of cells) of the grid of ``step`` over [-ε0, ε0], within the budget."""
    eps0 = pair.eps0
    first_cell = math.floor(-eps0 / step) - 1
    n_cells = math.floor(eps0 / step) - first_cell + 2
    check_grid_points(
        n_cells,
        f"[-eps0, eps0] = [-{eps0:g}, {eps0:g}] on the grid of step {step:g} nats",
        f"increase loss_grid_step (to at least {2 * eps0 / max_grid_points():.3g})",
    )
    return first_cell, n_cells


def _kept_cells(pair: _ClonesPair, rows: _Rows, step: float) -> tuple[int, int]:
    """[low, high) indices (into the grid of :func:`_grid`) of the cells holding the loss
    of every row's a-window, one cell of margin each side."""
    first_cell, n_cells = _grid(pair, step)
    t = rows.totals.astype(np.float64)
    low = rows.low.astype(np.float64)

    def loss(a: np.ndarray) -> np.ndarray:
        return np.log((a + pair.r * (t - a)) / (pair.r * a + (t - a)))

    with np.errstate(divide="ignore"):
        bottom, top = float(np.min(loss(low))), float(np.max(loss(t - low)))
    bottom, top = max(bottom, -pair.eps0), min(top, pair.eps0)
    low_cell = max(0, math.floor(bottom / step) - first_cell - 1)
    high_cell = min(n_cells, math.floor(top / step) - first_cell + 2)
    return low_cell, max(high_cell, low_cell + 1)


def _merged_recurrence(
    pair: _ClonesPair, rows: _Rows, step: float, span: tuple[int, int]
) -> ClonesCells:
    """The merged atoms by the row recurrence (:mod:`pld.shuffling.clones.recurrence`).

    Every point of the kept rows whose loss lies in the cells ``span`` is kept (a
    superset of the a-windows); the row weights come from Loader's pmf
    (:mod:`pld.numerics.binomial_pmf`), the error bounds from the recurrence, and
    the left-out mass is the recurrence's bound within the rows plus the exact mass
    of the rows left out. Runs in chunks of whole anchor periods (Ctrl-C between them).
    """
    from pld.shuffling.clones.recurrence import ANCHOR_ROWS, scatter_rows

    first_cell, n_cells = _grid(pair, step)
    low_cell, high_cell = span
    edges = np.exp((first_cell + np.arange(n_cells + 1)) * step)
    totals = rows.totals
    weight, weight_error = _row_weights(pair, totals)
    cell_p, cell_q, error_p, error_q = (np.zeros(n_cells) for _ in range(4))
    per_row = max(high_cell - low_cell, 1) * RECURRENCE_STEP_POINTS
    chunk = ANCHOR_ROWS * max(1, int(KERNEL_CHUNK_POINTS // (ANCHOR_ROWS * per_row)))
    outside = 0.0
    for start in range(0, totals.size, chunk):
        stop = min(start + chunk, totals.size)
        outside += scatter_rows(
            int(totals[start]),
            weight[start:stop],
            weight_error[start:stop],
            pair.r,
            edges,
            low_cell,
            high_cell,
            cell_p,
            cell_q,
            error_p,
            error_q,
            ANCHOR_ROWS,
        )
    keep = np.flatnonzero(cell_p > 0)
    # The sums over rows add positive terms: rows u of each total on top of the bounds.
    accumulation = totals.size * UNIT_ROUNDOFF
    mass_error = max(
        float(np.max(error_p[keep] / cell_p[keep], initial=0.0)),
        float(np.max(error_q[keep] / cell_q[keep], initial=0.0)),
    )
    return ClonesCells(
        log_p=np.log(cell_p[keep]),
        log_q=np.log(cell_q[keep]),
        cells=keep + first_cell,
        step=step,
        # Boost's tails of C (values near 1e-13) to a relative 1e-9, with margin.
        truncated_mass=outside * (1.0 + 1e-12) + _outside_rows(pair, rows) * (1.0 + 1e-9),
        lattice_points=int(np.sum(totals + 1)),
        mass_error=max(mass_error + accumulation, MERGED_MASS_RELATIVE_ERROR),
    )
