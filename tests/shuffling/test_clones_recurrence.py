"""The clones pair by row recurrences (pld/shuffling/clones/recurrence.py) against independent sums.

Independent truths used here:

* the point-by-point walk of the scatter kernel (pld/shuffling/clones/kernels.py),
  which adds every lattice point of every kept row, for the cell masses;
* the exact mass of a row, w_t (1 + r), for the mass left out;
* Boost's binomial tails summed row by row (tests/oracles/large_populations.py), for
  the grid-free hockey stick, at n = 10^6 - 10^7 and, beyond the reach of any walk,
  at n = 10^8 (10^9 under ``-m slow``).

Every comparison asserts that the recurrence's own error bound covers the difference.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from pld.shuffling.clones import cells as _cells
from pld.shuffling.clones import recurrence
from pld.shuffling.clones.pair import _clone_quantiles, _pair, _row_weights, _rows
from tests.oracles import large_populations as oracle

#: Relative accuracy of the walk's merged masses (its MERGED_MASS_RELATIVE_ERROR).
WALK_ERROR = _cells.MERGED_MASS_RELATIVE_ERROR

STRONGER = 1.0 / (math.e + 1.0)  # the stronger pair's clone probability at eps0 = 1


def _recurrence_cells(pair, rows, step, first_cell, n_cells, anchor_rows):
    edges = np.exp((first_cell + np.arange(n_cells + 1)) * step)
    totals = rows.totals
    weight, weight_error = _row_weights(pair, totals)
    out = [np.zeros(n_cells) for _ in range(4)]
    outside = recurrence.scatter_rows(
        int(totals[0]),
        weight,
        weight_error,
        pair.r,
        edges,
        0,
        n_cells,
        *out,
        anchor_rows,
    )
    return (*out, outside, weight)


@pytest.mark.parametrize(
    ("n", "eps0", "p", "step"),
    [
        (10**5, 1.0, None, 1e-3),
        (10**5, 0.3, None, 2.5e-4),
        (10**6, 1.0, STRONGER, 2.5e-4),
        (10**6, 3.0, None, 1e-3),
        (3 * 10**6, 1.0, 0.05, 5e-4),
    ],
)
@pytest.mark.parametrize("anchor_rows", [7, recurrence.ANCHOR_ROWS])
def test_cells_equal_the_point_walk(n, eps0, p, step, anchor_rows):
    pair = _pair(n, eps0, p)
    rows = _rows(pair, "quantile", 1e-12)
    walk = _cells._scatter(pair, rows, step)
    cell_p, cell_q, error_p, error_q, outside, weight = _recurrence_cells(
        pair, rows, step, walk.first_cell, walk.cell_p.size, anchor_rows
    )
    live = walk.cell_p > 0
    # The recurrence keeps every point of the rows (cells 0..end), the walk the a-window.
    for ours, bound, theirs in ((cell_p, error_p, walk.cell_p), (cell_q, error_q, walk.cell_q)):
        heavy = live & (theirs > 1e-9 * theirs.max())
        assert np.max(np.abs(ours[heavy] / theirs[heavy] - 1)) < 1e-12
        assert np.all(
            np.abs(ours[heavy] - theirs[heavy]) <= bound[heavy] + WALK_ERROR * theirs[heavy]
        )
        assert np.all(bound[heavy] <= 1e-8 * ours[heavy])  # the bound is small, not vacuous
    # Mass left out: at most the bound, which is at most a few times the truth (or ~0).
    rows_mass = float(np.sum(weight * (1 + pair.r)))
    true_outside = rows_mass - float(np.sum(cell_p))
    assert outside >= true_outside - 1e-14
    assert outside <= 10 * max(true_outside, 1e-16) + 1e-15


def _grid_free(pair, eps):
    c_lo, c_hi = _clone_quantiles(pair, 1e-18)
    totals = np.arange(max(c_lo, 1), c_hi + 2, dtype=np.int64)
    weight, weight_error = _row_weights(pair, totals)
    return recurrence.hockey_stick_rows(
        float(eps),
        int(totals[0]),
        weight,
        weight_error,
        pair.r,
        pair.one_minus_r,
        pair.eps0,
    )


def _check_against_oracle(n, eps0, p, scales, tight):
    pair = _pair(n, eps0, p)
    sd = 2 * pair.one_minus_r / ((1 + pair.r) * math.sqrt(pair.rho * n))
    for scale in scales:
        eps = scale * sd
        total, slack = _grid_free(pair, eps)
        truth, error = oracle.clones_delta(n, eps0, eps, p)
        assert abs(total - truth) <= slack + error + 1e-19, (n, eps, total, truth, slack, error)
        if truth > 1e-15:
            assert slack <= tight * truth


@pytest.mark.parametrize(
    ("n", "eps0", "p"), [(10**6, 1.0, None), (10**6, 1.0, STRONGER), (10**7, 2.0, None)]
)
def test_grid_free_rows_equal_boost_row_sums(n, eps0, p):
    _check_against_oracle(n, eps0, p, [0.0, 1.0, 3.0, 6.0], 1e-7)


def test_grid_free_rows_at_a_hundred_million_users():
    _check_against_oracle(10**8, 1.0, STRONGER, [0.0, 2.0, 4.0], 1e-7)


@pytest.mark.slow
def test_grid_free_rows_at_a_billion_users():
    _check_against_oracle(10**9, 1.0, None, [0.0, 2.0, 4.0], 1e-7)


@pytest.mark.parametrize(("k", "m"), [(0, 10), (5, 10), (6, 10), (11, 10), (120, 200), (90, 200)])
def test_binomial_tail(k, m):
    from scipy.stats import binom

    value, error = recurrence.upper_tail(k, m)
    truth = float(binom.sf(k - 1, m, 0.5))
    assert abs(value - truth) <= error + 1e-15 * truth


def _check_pld_against_oracle(n, eps0, p):
    import pld

    pair = _pair(n, eps0, p)
    merged = pld.shuffling.clones.clones_cells(n, eps0, p)
    assert merged.mass_error > _cells.MERGED_MASS_RELATIVE_ERROR  # the recurrence built it
    assert merged.mass_error < 1e-9
    loss = pld.clones(n, eps0, p)
    sd = 2 * pair.one_minus_r / ((1 + pair.r) * math.sqrt(pair.rho * n))
    eps = np.array([0.0, 1.0, 3.0]) * sd
    lower, upper = loss.delta_bounds(eps, rel_accuracy=1.0)
    for value, low, high in zip(eps, lower, upper, strict=True):
        truth, error = oracle.clones_delta(n, eps0, float(value), p)
        assert low <= truth + error and truth - error <= high, (value, low, truth, high)
        if truth > 1e-9:  # above the truncated mass (1e-12)
            assert high - low <= 0.05 * truth  # one round on the default grid


def test_pld_at_a_hundred_million_users():
    _check_pld_against_oracle(10**8, 1.0, STRONGER)


@pytest.mark.slow
def test_pld_at_a_billion_users():
    _check_pld_against_oracle(10**9, 1.0, None)
