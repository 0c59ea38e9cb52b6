"""The truncated clones pair merged per loss-grid cell: the numba kernel that walks its rows.

The construction is described in the docstring of :mod:`pld.mechanisms.clones`
(truncation windows of seed 004 §3.2 and Lemma 11, one merged atom per grid cell,
docs/architecture.md "Merged atoms"); its public entry is
:func:`pld.mechanisms.clones.clones_cells`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numba
import numpy as np

from pld.engine import (
    DEFAULT_LOSS_GRID_STEP,
    MAX_REFINEMENT,
    check_grid_points,
    choose_loss_grid_step,
    max_grid_points,
)
from pld.mechanisms._clones_pair import (
    _clone_pmf,
    _ClonesPair,
    _half_cdf,
    _outside_mass,
    _Rows,
    _rows,
)

#: Relative accuracy claimed for the merged masses handed to the engine: Boost's
#: pmf and cdf (<= 1.4e-12 measured at n = 5e6, 1e7) times the β recurrence,
#: renormalised per row (<= 2 ulp per step from the median: 2e-12 at 1e4 steps).
MERGED_MASS_RELATIVE_ERROR = 1e-11

#: Rows walked by the probe that measures the loss's standard deviation for the
#: default grid (a row stride of rows // PROBE_ROWS).
PROBE_ROWS = 512

#: The default grid is coarsened until [-ε0, ε0] spans at most this many cells
#: (two float64 arrays of this length are accumulated: 64 MiB).
DEFAULT_MAX_CELLS = 2**22

#: Lattice points the kernel walks per grid point of the work budget
#: (:func:`pld.engine.check_grid_points`): a point costs about 8 ns (3.8e8 points
#: in 2.8-3.5 s at n = 10^7 on the shared reference machine), a grid point of a
#: composition several times more (transforms, powering, queries). The default
#: budget thus allows about 5e8 points (~4 s; n ~ 1.3e7 at eps0 = 1).
LATTICE_POINTS_PER_GRID_POINT = 8

#: Lattice points walked per call of the numba kernel: calls of ~0.1 s, between
#: which Python sees Ctrl-C.
KERNEL_CHUNK_POINTS = 20_000_000


@numba.njit(cache=True)
def _at_or_above(a: int, t: int, r: float, blanket_t: float, edge: float) -> bool:
    """e^s(a, t - a) >= edge, as (a + r b + c_t) >= edge (r a + b + c_t)."""
    return a + r * (t - a) + blanket_t >= edge * (r * a + (t - a) + blanket_t)


@numba.njit(cache=True)
def _scatter_rows(
    totals: np.ndarray,
    lows: np.ndarray,
    row_weight: np.ndarray,
    row_window_mass: np.ndarray,
    n: int,
    r: float,
    one_minus_r: float,
    blanket: float,
    step: float,
    edges: np.ndarray,
    first_cell: int,
    cell_p: np.ndarray,
    cell_q: np.ndarray,
) -> int:
    """Add the P- and Q-mass of every kept lattice point to its loss cell; return the count.

    Row t (t >= 1) keeps a in [lo, t - lo]. With β the Bin(t - 1, 1/2) pmf, the
    point's masses are ``row_weight[t] * (β(a-1) + r β(a) + γ (β(a-1) + β(a)))``
    and ``row_weight[t] * (r β(a-1) + β(a) + γ (β(a-1) + β(a)))`` (module
    docstring). β is built by the ratio recurrence from the row's median outward
    and rescaled so that its sum over the window equals ``row_window_mass[t]``
    (exact, from binomial cdfs), which removes the drift of the recurrence.

    The point (a, b) lies in cell ``first_cell + j`` when ``edges[j] <= e^s <
    edges[j + 1]`` with ``edges[j] = exp((first_cell + j) step)`` and
    e^s = (a + r b + c_t) / (r a + b + c_t); the comparisons are made without
    division or logarithm. The loss increases with a, so each cell is one run of
    a; its end is the closed-form root a* = (x (t + c) - (r t + c)) / ((1 - r)(1 + x))
    of e^s = x, corrected by comparisons. Each run's β-sums are summed directly
    (not as differences of prefix sums, which would lose the relative accuracy
    of the small tail runs).
    """
    widest = 0
    for row in range(totals.shape[0]):
        widest = max(widest, totals[row] - 2 * lows[row] + 2)
    beta = np.empty(widest)
    last = cell_p.shape[0] - 1
    points = 0
    for row in range(totals.shape[0]):
        t = totals[row]
        lo = lows[row]
        hi = t - lo
        trials = t - 1
        # beta[k - base] = β(k) for k in [lo - 1, hi] (the a - 1 and a of every kept a),
        # built on the support [k0, k1] and zero outside it.
        base = lo - 1
        k0 = max(base, 0)
        k1 = min(hi, trials)
        beta[0] = 0.0
        beta[hi - base] = 0.0
        centre = min(max(trials // 2, k0), k1)
        value = 1.0
        beta[centre - base] = value
        total = value
        for k in range(centre, k1):
            value *= (trials - k) / (k + 1)
            beta[k + 1 - base] = value
            total += value
        value = 1.0
        for k in range(centre, k0, -1):
            value *= k / (trials - k + 1)
            beta[k - 1 - base] = value
            total += value
        weight = row_weight[row] * row_window_mass[row] / total
        gamma = blanket * (n - t) / t
        blanket_t = blanket * (n - t)
        # Cell of a = lo from its loss, then made consistent with the edge comparisons.
        numerator = lo + r * (t - lo) + blanket_t
        denominator = r * lo + (t - lo) + blanket_t
        j = min(max(math.floor(math.log(numerator / denominator) / step) - first_cell, 0), last)
        while j > 0 and numerator < edges[j] * denominator:
            j -= 1
        while j < last and numerator >= edges[j + 1] * denominator:
            j += 1
        a = lo
        while True:
            # The run of cell j ends before the first a' > a with e^s(a') >= edges[j + 1]:
            # the closed-form root of s = (first_cell + j + 1) step, corrected by comparisons.
            stop = hi + 1
            if j < last:
                edge = edges[j + 1]
                if edge > 1.0:
                    guess = ((t + blanket_t) - (r * t + blanket_t) / edge) / (
                        one_minus_r * (1.0 + 1.0 / edge)
                    )
                else:
                    guess = (edge * (t + blanket_t) - (r * t + blanket_t)) / (
                        one_minus_r * (1.0 + edge)
                    )
                stop = int(min(max(math.ceil(min(max(guess, a + 1.0), hi + 1.0)), a + 1), hi + 1))
                while stop > a + 1 and _at_or_above(stop - 1, t, r, blanket_t, edge):
                    stop -= 1
                while stop <= hi and not _at_or_above(stop, t, r, blanket_t, edge):
                    stop += 1
            unshifted = 0.0  # sum of β(a') over the run
            for k in range(a - base, stop - base):
                unshifted += beta[k]
            shifted = unshifted - beta[stop - 1 - base] + beta[a - 1 - base]  # sum of β(a' - 1)
            both = gamma * (shifted + unshifted)
            cell_p[j] += weight * (shifted + r * unshifted + both)
            cell_q[j] += weight * (r * shifted + unshifted + both)
            if stop > hi:
                break
            a = stop
            j += 1
            while j < last and _at_or_above(a, t, r, blanket_t, edges[j + 1]):
                j += 1
        points += hi - lo + 1
    return points


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


def _merged_loss_std(merged: ClonesCells) -> float:
    """Standard deviation (nats) under P of the merged atoms' privacy losses."""
    finite = np.isfinite(merged.log_q)
    weights = np.exp(merged.log_p[finite])
    loss = merged.log_p[finite] - merged.log_q[finite]
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
    probe = _merged_cells(pair, rows, probe_step, row_stride=stride)
    step = choose_loss_grid_step(_merged_loss_std(probe))
    while 2.0 * pair.eps0 / step > DEFAULT_MAX_CELLS:
        step *= 2.0
    if step == probe_step and stride == 1:
        return probe
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


def _merged_cells(pair: _ClonesPair, rows: _Rows, step: float, row_stride: int = 1) -> ClonesCells:
    """Run the kernel on the kept rows (every ``row_stride``-th one, for a probe)."""
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
    row_weight = pair.weight_a * _clone_pmf(pair, totals - 1)
    k0 = np.maximum(low - 1, 0)
    k1 = np.minimum(totals - low, totals - 1)
    window_mass = 1.0 - _half_cdf(k0 - 1, totals - 1) - _half_cdf(totals - 2 - k1, totals - 1)
    # The kernel runs on chunks of rows of about KERNEL_CHUNK_POINTS points each, so
    # that a KeyboardInterrupt is seen between calls.
    chunk = np.cumsum(totals - 2 * low + 1) // KERNEL_CHUNK_POINTS
    starts = np.flatnonzero(np.diff(chunk, prepend=-1)).tolist()
    points = 0
    for start, stop in zip(starts, [*starts[1:], totals.size], strict=True):
        points += _scatter_rows(
            totals[start:stop],
            low[start:stop],
            row_weight[start:stop],
            window_mass[start:stop],
            pair.n,
            pair.r,
            pair.one_minus_r,
            pair.blanket,
            step,
            edges,
            first_cell,
            cell_p,
            cell_q,
        )
    if rows.include_origin:
        # Row t = 0: only (0, 0), from P2 with C = 0; loss 0.
        origin = pair.w2 * math.exp((pair.n - 1) * pair.log_one_minus_rho)
        cell_p[-first_cell] += origin
        cell_q[-first_cell] += origin
        points += 1
    keep = np.flatnonzero(cell_p > 0)
    return ClonesCells(
        log_p=np.log(cell_p[keep]),
        log_q=np.log(cell_q[keep]),
        cells=keep + first_cell,
        step=step,
        truncated_mass=_outside_mass(pair, rows),
        lattice_points=int(points),
    )
