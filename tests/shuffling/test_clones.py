"""pld.clones: the shuffled ε0-LDP "clones" pair (Koskela et al. 2023 §3, §3.1, §3.2, App A, App B).

Independent truths used here:

* brute-force enumeration of C, A, Δ1, Δ2 (Koskela et al. 2023 eq 3.1-3.2) for the lattice pmfs;
* the exact one-round δ(ε) = Σ (P - e^ε Q)_+ summed over the whole lattice (n <= 2000);
* the grid-free row-sum δ(ε) of :func:`clones_delta_bounds` (large n), itself
  checked against the lattice and against the published Feldman et al. (2021) value;
* the real shuffled k-RR, enumerated histogram by histogram (tests/oracles);
* exact products of the pmfs for T = 2, 3 (tests/exact.py) and dp_accounting on
  the same exact pmfs for T = 10, 100.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import time

import numpy as np
import pytest
from scipy.stats import binom

import pld
from pld.cli.mechanisms import FAMILIES
from pld.shuffling.clones import cells as _clones_cells
from pld.shuffling.clones import kernels as _clones_kernels
from pld.shuffling.clones import pair as _clones_pair
from pld.shuffling.clones.mechanism import (
    clones,
    clones_cells,
    clones_delta_bounds,
    clones_epsilon_bounds,
    clones_pmfs,
)
from tests.exact import product_delta
from tests.oracles.shuffled_krr_histogram import krr_eps0, worst_case_delta

STEP = pld.engine.DEFAULT_LOSS_GRID_STEP

#: The engine widens its bracket for the float error of each atom's loss
#: log p - log q, a few ulps of |log p| <= 745: it evaluates the upper bound at
#: ε - η with η < 1e-10 nats. Tightness checks compare with the truth at ε - SHIFT.
SHIFT = 1e-10

#: ... and scales the finite part by 1 + (claimed relative mass error), <= 1e-9 here.
MASS_SLACK = 1e-9


# -- helpers --------------------------------------------------------------------------


def enumerate_pair(n: int, eps0: float, p: float | None = None, variant: str | None = None):
    """Laws of P = (K+Δ, C-K+1-Δ) and Q = (K+1-Δ, C-K+Δ) by summing over C, K, Δ.

    C ~ Bin(n - 1, 2p), K | C ~ Bin(C, 1/2), Δ ~ Bern(e^ε0 / (e^ε0 + 1)); p defaults
    to the variant's: e^-ε0 / 2 ("standard", the default) or 1/(e^ε0 + 1) ("stronger").
    """
    if p is None:
        p = 1.0 / (math.exp(eps0) + 1.0) if variant == "stronger" else math.exp(-eps0) / 2.0
    q = math.exp(eps0) / (math.exp(eps0) + 1.0)
    law_p: dict[tuple[int, int], float] = {}
    law_q: dict[tuple[int, int], float] = {}
    for c in range(n):
        weight_c = binom.pmf(c, n - 1, 2 * p) if n > 1 else 1.0
        for a in range(c + 1):
            weight_a = weight_c * binom.pmf(a, c, 0.5)
            for d, weight_d in ((1, q), (0, 1 - q)):
                mass = weight_a * weight_d
                key_p, key_q = (a + d, c - a + 1 - d), (a + 1 - d, c - a + d)
                law_p[key_p] = law_p.get(key_p, 0.0) + mass
                law_q[key_q] = law_q.get(key_q, 0.0) + mass
    return law_p, law_q


def lattice_coordinates(n: int) -> tuple[np.ndarray, np.ndarray]:
    t = np.repeat(np.arange(n + 1), np.arange(1, n + 2))
    a = np.arange(t.size) - t * (t + 1) // 2
    return a, t - a


def lattice_delta(
    n: int, eps0: float, eps, p: float | None = None, variant: str | None = None
) -> np.ndarray:
    """Exact one-round δ(ε) = Σ_(a,b) (P - e^ε Q)_+ over the whole lattice.

    P - e^ε Q = m (u a + v b) with m = P / (a + r b) (module docstring),
    u = 1 - e^(ε-ε0), v = e^-ε0 - e^ε, each without cancellation, so that tiny ε0
    (P ≈ Q) keeps full relative accuracy.
    """
    log_p, _ = clones_pmfs(n, eps0, p, variant=variant)
    a, b = lattice_coordinates(n)
    pair = _clones_pair._pair(n, eps0, p, variant)
    with np.errstate(divide="ignore", invalid="ignore"):
        log_m = log_p - np.log(a + pair.r * b)
    finite = np.isfinite(log_m)
    m, a, b = np.exp(log_m[finite]), a[finite], b[finite]
    result = []
    for e in np.atleast_1d(eps):
        u, v = -math.expm1(e - eps0), -math.exp(e) * -math.expm1(-eps0 - e)
        result.append(np.sum(m * np.maximum(u * a + v * b, 0.0)))
    return np.array(result)


def closed_form_loss(a: np.ndarray, b: np.ndarray, pair) -> np.ndarray:
    """s(a, b) as the kernel computes it: log1p form near 0, difference of logs otherwise."""
    denominator = pair.r * a + b
    with np.errstate(divide="ignore", invalid="ignore"):
        relative = pair.one_minus_r * (a - b) / denominator
        logs = np.log(a + pair.r * b) - np.log(denominator)
        return np.where(np.abs(relative) < 0.5, np.log1p(relative), logs)


# -- the lattice pmfs (App A, with its errata) --------------------------------------

PAIRS = [
    (1, 1.0, None),
    (2, 1.0, None),
    (2, 1.0, 1 / (math.e + 1)),
    (6, 1.5, 1 / (math.exp(1.5) + 1)),
    (5, 0.5, None),
    (9, 3.0, None),
    (7, 2.0, 0.05),
    (6, 1.0, 0.1),
    (1, 1.0, 0.1),
]


@pytest.mark.parametrize("n, eps0, p", PAIRS)
def test_lattice_pmfs_match_enumeration(n, eps0, p):
    law_p, law_q = enumerate_pair(n, eps0, p)
    log_p, log_q = clones_pmfs(n, eps0, p)
    a, b = lattice_coordinates(n)
    expected_p = np.array([law_p.get((i, j), 0.0) for i, j in zip(a, b, strict=True)])
    expected_q = np.array([law_q.get((i, j), 0.0) for i, j in zip(a, b, strict=True)])
    # Every mass is a sum of at most 2 products of ~10 float64 factors: ~1e-15 absolute.
    np.testing.assert_allclose(np.exp(log_p), expected_p, rtol=0, atol=1e-15)
    np.testing.assert_allclose(np.exp(log_q), expected_q, rtol=0, atol=1e-15)
    assert set(law_p) <= {(int(i), int(j)) for i, j in zip(a, b, strict=True)}


def test_appendix_a_errata():
    """Lemma A.2 has a spurious factor 2 and Lemma A.4 a spurious 1/2^i: checked on P0, P2."""
    n, p = 9, 0.12
    n_minus_1 = n - 1

    def component(shift_a):  # law of (A + shift_a, C - A) from the trinomial
        law = {}
        for c in range(n):
            for j in range(c + 1):
                law[(j + shift_a, c - j)] = binom.pmf(c, n_minus_1, 2 * p) * binom.pmf(j, c, 0.5)
        return law

    p0, p2 = component(1), component(0)
    for (a, b), mass in p0.items():
        if a > 0 and b > 0 and (a, b) in p2:
            corrected = (1 - 2 * p) * a / ((n - a - b) * p)
            assert mass / p2[(a, b)] == pytest.approx(corrected, rel=1e-12)
            paper = 2 * corrected
            assert abs(mass / p2[(a, b)] - paper) > 0.4 * corrected
        i, j = a + b - 1, a - 1  # C = i, A = j
        corrected_a4 = math.comb(n - 1, i) * math.comb(i, j) * p**i * (1 - 2 * p) ** (n - 1 - i)
        assert mass == pytest.approx(corrected_a4, rel=1e-12)
        paper_a4 = math.comb(n - 1, i) * math.comb(i, j) * p**i * (1 - p) ** (n - 1 - i) / 2**i
        if i > 0:
            assert abs(mass - paper_a4) > 1e-3 * mass


@pytest.mark.parametrize(
    "n, eps0, p", [(40, 1.0, None), (25, 3.0, 0.01), (60, 0.05, None), (30, 8.0, None)]
)
def test_loss_bounded_symmetric_and_monotone(n, eps0, p):
    log_p, log_q = clones_pmfs(n, eps0, p)
    a, b = lattice_coordinates(n)
    finite = np.isfinite(log_p)
    loss = log_p[finite] - log_q[finite]
    # |s| <= ε0 (the max_loss given to the engine), up to log round-off.
    assert np.abs(loss).max() <= eps0 + 1e-12
    assert np.abs(loss).max() >= eps0 - 1e-12  # attained at (a, 0) / (0, b) rows
    # Q(a, b) = P(b, a): the pair is symmetric.
    t = a + b
    mirror = t * (t + 1) // 2 + b
    np.testing.assert_allclose(log_q, log_p[mirror], rtol=1e-12, atol=0)
    # The kernel's closed form agrees with log P - log Q (and the numpy copy used below).
    pair = _clones_pair._pair(n, eps0, p)
    closed = np.array(
        [
            _clones_kernels._row_loss(i, i + j, pair.r, pair.one_minus_r)
            for i, j in zip(a[finite].tolist(), b[finite].tolist(), strict=True)
        ]
    )
    np.testing.assert_allclose(closed, loss, rtol=0, atol=1e-12)
    np.testing.assert_allclose(closed, closed_form_loss(a, b, pair)[finite], rtol=1e-15, atol=1e-16)
    # For fixed t the loss increases strictly with a (the kernel's row walk relies on it).
    for total in range(1, n + 1):
        row = (t == total) & finite
        assert np.all(np.diff(log_p[row] - log_q[row]) > 0)


def test_variants_are_values_of_p_and_p_absorbs_rounding():
    eps0 = 1.3
    standard = _clones_pair._pair(100, eps0)
    assert standard == _clones_pair._pair(100, eps0, None, "standard")
    assert standard.rho == pytest.approx(math.exp(-eps0), rel=1e-15)
    stronger = _clones_pair._pair(100, eps0, None, "stronger")
    assert stronger.rho == pytest.approx(2 / (math.exp(eps0) + 1), rel=1e-15)
    assert stronger.weight_a == standard.weight_a  # the target's split is the same
    user_stronger = _clones_pair._pair(100, eps0, 1 / (math.exp(eps0) + 1))
    assert user_stronger == stronger
    nudged = _clones_pair._pair(100, eps0, (1 / (math.exp(eps0) + 1)) * (1 + 1e-13))
    assert nudged == stronger
    with pytest.raises(ValueError, match="p must lie"):
        _clones_pair._pair(100, eps0, (1 / (math.exp(eps0) + 1)) * (1 + 1e-9))


# -- truncated, merged construction (Lemma 11, App B) -------------------------------

CELL_CASES = [
    (50, 1.0, None),
    (500, 1.0, None),
    (300, 3.0, 0.02),
    (2000, 0.3, None),
    (1000, 4.0, None),
    (40, 0.01, 0.3),
    (1, 1.0, None),
    (1, 2.0, 0.05),
]


def binned_lattice(n, eps0, p, step):
    """Exact lattice masses, coordinates, loss s (closed form) and cell floor(s/step)."""
    log_p, log_q = clones_pmfs(n, eps0, p)
    a, b = lattice_coordinates(n)
    pair = _clones_pair._pair(n, eps0, p)
    loss = closed_form_loss(a, b, pair)
    finite = np.isfinite(log_p)
    cells = np.floor(loss[finite] / step).astype(np.int64)
    masses = np.exp(log_p[finite]), np.exp(log_q[finite])
    return cells, *masses, a[finite], b[finite], loss[finite]


@pytest.mark.parametrize("truncation", ["quantile", "hoeffding"])
@pytest.mark.parametrize("n, eps0, p", CELL_CASES)
def test_merged_cells_equal_the_binned_lattice(n, eps0, p, truncation):
    tail_mass = 1e-12
    merged = clones_cells(n, eps0, p, truncation=truncation, tail_mass=tail_mass)
    cells, mass_p, mass_q, a, b, loss = binned_lattice(n, eps0, p, merged.step)
    # The kept region, recomputed from the windows: its complement is the truncated mass.
    rows = _clones_pair._rows(_clones_pair._pair(n, eps0, p), truncation, tail_mass)
    t = a + b
    index = np.clip(t - rows.first, 0, rows.low.size - 1)
    in_rows = (t >= rows.first) & (t < rows.first + rows.low.size)
    kept = in_rows & (a >= rows.low[index]) & (a <= t - rows.low[index])
    assert merged.lattice_points == int(kept.sum())
    outside_p, outside_q = mass_p[~kept].sum(), mass_q[~kept].sum()
    # Outside masses from binomial tails vs from the lattice: Boost's relative
    # accuracy (1e-12) on a quantity <= 1e-12, plus lattice round-off (1e-15 each).
    assert merged.truncated_mass == pytest.approx(outside_p, rel=1e-6, abs=1e-16)
    assert merged.truncated_mass == pytest.approx(outside_q, rel=1e-6, abs=1e-16)
    assert merged.truncated_mass <= tail_mass
    # A point whose loss is a grid value up to rounding (a = b, or b = 0 with c = 0:
    # loss ε0) may fall on either side of that edge: cells on both sides of such an
    # edge are compared as one group.
    scaled = loss / merged.step
    fuzzy = np.unique(np.round(scaled[np.abs(scaled - np.round(scaled)) < 1e-6]).astype(np.int64))

    def group(cell):
        return cell - np.searchsorted(fuzzy, cell, side="right")

    offset = int(min(group(cells).min(), group(merged.cells).min()))
    size = int(max(group(cells).max(), group(merged.cells).max())) - offset + 1
    expected_p = np.bincount(group(cells[kept]) - offset, mass_p[kept], minlength=size)
    expected_q = np.bincount(group(cells[kept]) - offset, mass_q[kept], minlength=size)
    got_p = np.bincount(group(merged.cells) - offset, np.exp(merged.log_p), minlength=size)
    got_q = np.bincount(group(merged.cells) - offset, np.exp(merged.log_q), minlength=size)
    # Relative 1e-9 per cell: the kernel's β recurrence drifts by ~1e-13 over a
    # row and is renormalised; cells of negligible mass get an absolute 1e-20.
    np.testing.assert_allclose(got_p, expected_p, rtol=1e-9, atol=1e-20)
    np.testing.assert_allclose(got_q, expected_q, rtol=1e-9, atol=1e-20)


#: (n, eps0, loss-grid step, truncation, tail mass): the README's n = 10^4, small
#: and large eps0, a coarse and a fine grid, and Hoeffding windows with a tiny
#: tail mass (wide rows whose tail points carry masses near underflow).
SCATTER_CASES = [
    (10**4, 1.0, 1e-3, "quantile", 1e-12),
    (10**4, 1.0, 1.3e-4, "quantile", 1e-12),
    (3000, 0.05, 2e-5, "hoeffding", 1e-300),
    (500, 4.0, 0.01, "hoeffding", 1e-300),
    (40, 0.7, 1e-3, "quantile", 1e-12),
]


@pytest.mark.parametrize("n, eps0, step, truncation, tail_mass", SCATTER_CASES)
def test_numpy_scatter_equals_the_kernel(monkeypatch, n, eps0, step, truncation, tail_mass):
    """The vectorised pass and the numba kernel merge the same masses: the same β
    recurrence, run sums and accumulation order, so equal to 1e-15 relative (they
    are bit-identical when both are compiled without fast-math, as here)."""
    pair = _clones_pair._pair(n, eps0, None)
    rows = _clones_pair._rows(pair, truncation, tail_mass)
    monkeypatch.setattr(_clones_cells, "_kernel_loaded", lambda: False)
    monkeypatch.setattr(_clones_cells, "NUMPY_SCATTER_CELLS", 2**40)
    monkeypatch.setattr(_clones_cells, "NUMPY_SCATTER_BUDGET", 2**40)
    monkeypatch.setattr(_clones_cells, "_numpy_scattered", 0)
    vectorised = _clones_cells._merged_cells(pair, rows, step)
    assert _clones_cells._numpy_scattered > 0  # the numpy pass ran
    monkeypatch.setattr(_clones_cells, "NUMPY_SCATTER_CELLS", -1)
    compiled = _clones_cells._merged_cells(pair, rows, step)
    assert vectorised.lattice_points == compiled.lattice_points
    np.testing.assert_array_equal(vectorised.cells, compiled.cells)
    for ours, theirs in ((vectorised.log_p, compiled.log_p), (vectorised.log_q, compiled.log_q)):
        # Logs of masses >= 1e-300 (<= 691 in size): 1e-15 relative is 1e-15 here,
        # plus the log's own rounding (1 ulp of 691, 1.1e-13).
        np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-15 + 2.3e-13)
        assert np.max(np.abs(np.expm1(ours - theirs))) <= 1e-15


def test_readme_command_compiles_nothing(tmp_path):
    """The README's first command, in a fresh process with an empty numba cache,
    compiles no kernel (a compile writes an index file there): its scatter, queries
    and contraction run in numpy, so its first run is as fast as later ones."""
    command = [sys.executable, "-m", "pld", "epsilon", "--mechanism", "clones", "--n", "10000"]
    command += ["--eps0", "1", "--rounds", "100", "--delta", "1e-6", "--json"]
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    result = subprocess.run(command, capture_output=True, text=True, timeout=120, env=env)
    assert result.returncode == 0, result.stderr
    assert sorted(path.name for path in tmp_path.rglob("*.nbi")) == []
    direct = clones(10_000, 1.0).self_compose(100).epsilon_bounds(1e-6)
    assert json.loads(result.stdout)["eps_upper"] == pytest.approx(direct[1], rel=1e-12)


#: (n, eps0, row totals t, loss-grid step, first cell, cells): rows whose every
#: point keeps a positive mass (t <= 600), grids that cover the row's losses,
#: one with a = b on an edge (loss 0), and grids too short on either side (the
#: end cells take the points beyond).
CELL_ASSIGNMENT_CASES = [
    (10**4, 1.0, [1, 2, 37, 250, 600], 1e-3, -1001, 2003),
    (10**4, 1.0, [101, 400], 2.5e-4, -30, 61),
    (2000, 0.05, [3, 64, 599], 1e-5, -5001, 10003),
    (300, 4.0, [5, 120, 299], 0.02, -201, 403),
    (300, 4.0, [120], 0.02, 10, 7),
]


@pytest.mark.parametrize("n, eps0, totals, step, first_cell, n_cells", CELL_ASSIGNMENT_CASES)
def test_numpy_scatter_assigns_every_point_the_kernels_cell(
    n, eps0, totals, step, first_cell, n_cells
):
    """Cell of every lattice point (a, t - a), exactly. The kernel's cell of a is
    read off a one-row call whose window is [a, t - a] (lowest occupied cell: the
    loss increases with a) or [t - a, a] (highest)."""
    pair = _clones_pair._pair(n, eps0, None)
    edges = np.exp((first_cell + np.arange(n_cells + 1)) * step)
    for t in totals:
        a = np.arange(t + 1)
        ours = _clones_cells._point_cells(np.full(t + 1, t), a, pair.r, step, edges, first_cell)
        theirs = np.empty(t + 1, dtype=np.int64)
        for low in range(t // 2 + 1):
            cell_p, cell_q = np.zeros(n_cells), np.zeros(n_cells)
            _clones_kernels._scatter_rows(
                np.array([t]), np.array([low]), np.ones(1), np.ones(1), pair.r,
                step, edges, first_cell, cell_p, cell_q,
            )  # fmt: skip
            occupied = np.flatnonzero(cell_p)
            theirs[low], theirs[t - low] = occupied[0], occupied[-1]
        np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("n, eps0", [(10**4, 1.0), (10**5, 4.0), (10**5, 0.2)])
def test_quantile_keeps_fewer_points_than_hoeffding(n, eps0):
    tail_mass = 1e-12
    quantile = clones_cells(n, eps0, truncation="quantile", tail_mass=tail_mass)
    hoeffding = clones_cells(n, eps0, truncation="hoeffding", tail_mass=tail_mass)
    assert quantile.lattice_points < hoeffding.lattice_points
    assert quantile.truncated_mass <= tail_mass and hoeffding.truncated_mass <= tail_mass
    # Lemma 11's count: at most (2 c_n (n-1) + 2) rows of at most sqrt(2 n log(4/τ)) + 3 points.
    width = math.sqrt(2 * n * math.log(4 / tail_mass))
    assert hoeffding.lattice_points <= (width + 2) * (width + 3)


# -- one-round delta against the exact lattice and the grid-free sum ----------------

EPS = np.array([0.0, 0.01, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0])


@pytest.mark.parametrize("truncation", ["quantile", "hoeffding"])
@pytest.mark.parametrize(
    "n, eps0, p",
    [
        (2, 1.0, None),
        (10, 0.5, None),
        (200, 1.0, None),
        (200, 4.0, None),
        (2000, 1.0, None),
        (2000, 4.0, None),
        (500, 2.0, 0.03),
    ],
)
def test_truncated_pld_brackets_the_exact_lattice(n, eps0, p, truncation):
    loss = clones(n, eps0, p, truncation=truncation)
    merged = clones_cells(n, eps0, p, truncation=truncation)
    eps = np.round(EPS[EPS < eps0] / STEP) * STEP  # grid values: connect-the-dots is exact there
    exact = lattice_delta(n, eps0, eps, p)
    lower, upper = loss.delta_bounds(eps)
    assert np.all(lower <= exact * (1 + 1e-12) + 1e-16)
    assert np.all(exact <= upper)
    # At grid ε the upper bound is the exact value plus the truncated mass charged
    # at ε0 (weight <= 1), up to the engine's float slack (SHIFT, MASS_SLACK).
    shifted = lattice_delta(n, eps0, eps - SHIFT, p)
    assert np.all(upper <= shifted * (1 + MASS_SLACK) + merged.truncated_mass + 1e-15)


@pytest.mark.parametrize(
    "n, eps0, p",
    [(1, 1.0, None), (30, 2.0, None), (700, 1.0, None), (2000, 0.3, None), (400, 3.0, 0.01)],
)
def test_grid_free_delta_brackets_the_exact_lattice(n, eps0, p):
    eps = np.array([0.0, 0.003, 0.03, 0.1, 0.25, 0.7])
    exact = lattice_delta(n, eps0, eps, p)
    lower, upper = clones_delta_bounds(n, eps0, eps, p)
    # The lattice sum is exact up to its masses' log-space rounding (gammaln of up to
    # n!, a relative 7e-12 at n = 700): the grid-free bracket is narrower than that.
    slack = exact * _clones_pair._lattice_mass_error(_clones_pair._pair(n, eps0, p))
    assert np.all(lower <= exact + slack + 1e-17) and np.all(exact - slack <= upper + 1e-17)
    # Width by design: 2e-18 of left-out C-mass plus twice the round-off slack
    # 1e-10 (P-tail + e^ε Q-tail), and each tail is at most 1.
    assert np.all(upper - lower <= 2e-10 * (1 + np.exp(eps)) + 3e-18)


@pytest.mark.parametrize("n, eps0", [(10**5, 4.0), (10**6, 1.0), (10**4, 0.1)])
def test_pld_agrees_with_grid_free_delta_at_large_n(n, eps0):
    loss = clones(n, eps0)
    merged = clones_cells(n, eps0)
    eps = np.array([0.0, 0.001, 0.002, 0.004, 0.05, 0.1, 0.15])
    exact_lower, exact_upper = clones_delta_bounds(n, eps0, eps)
    lower, upper = loss.delta_bounds(eps)
    assert np.all(lower <= exact_upper) and np.all(exact_lower <= upper)
    # eps are grid points: the upper bound exceeds the truth by at most the truncated
    # mass, up to the engine's float slack.
    shifted = clones_delta_bounds(n, eps0, eps - SHIFT)[1]
    assert np.all(upper <= shifted * (1 + MASS_SLACK) + merged.truncated_mass + 1e-15)


def test_feldman_2021_published_value():
    """FMT21's README: n = 1e5, ε0 = 4, δ = 1e-6 gives ε in [0.1675, 0.1728] for their pair.

    Their pair (C ~ Bin(n-1, e^-ε0)) is pld.clones' default, the standard pair; the
    stronger pair (C ~ Bin(n-1, 2/(e^ε0+1))) must give a smaller ε.
    """
    lower, upper = clones_delta_bounds(10**5, 4.0, [0.1675, 0.1728])
    assert lower[0] > 1e-6 > upper[1]
    assert clones_delta_bounds(10**5, 4.0, 0.17, variant="standard")[0] == pytest.approx(
        clones_delta_bounds(10**5, 4.0, 0.17)[0], rel=0
    )
    standard_lower, _ = clones_epsilon_bounds(10**5, 4.0, 1e-6)
    assert 0.1675 < standard_lower
    assert standard_lower <= clones(10**5, 4.0).epsilon(1e-6)
    ours_lower, ours_upper = clones_epsilon_bounds(10**5, 4.0, 1e-6, variant="stronger")
    assert ours_upper < 0.1675
    assert ours_upper - ours_lower < 1e-8
    assert ours_lower <= clones(10**5, 4.0, variant="stronger").epsilon(1e-6)


# -- the real shuffled k-RR never exceeds the bound ----------------------------------


@pytest.mark.parametrize("k", [2, 3])
@pytest.mark.parametrize("gamma", [0.2, 0.5, 0.9])
def test_shuffled_krr_brute_force_is_dominated(k, gamma):
    eps0 = krr_eps0(k, gamma)
    eps = np.linspace(0.0, eps0, 6)
    for n in range(1, 7):
        truth = np.array([worst_case_delta(n, k, gamma, e) for e in eps])
        bound = lattice_delta(n, eps0, eps, variant="stronger")
        # Both sides are sums of <= 28 float terms: 1e-15 absolute round-off.
        assert np.all(truth <= bound + 1e-15), (n, truth, bound)
        assert np.all(bound <= lattice_delta(n, eps0, eps) + 1e-15)
        assert np.all(truth <= clones(n, eps0, variant="stronger").delta(eps) + 1e-15)
        if k == 2 and n <= 2:
            # Binary RR with one or two users: the clones pair is tight.
            np.testing.assert_allclose(truth, bound, rtol=1e-12, atol=1e-15)


# -- compositions -------------------------------------------------------------------


@pytest.mark.parametrize("n, eps0, rounds", [(3, 1.0, 2), (3, 1.0, 3), (8, 2.0, 2), (6, 0.5, 2)])
def test_composition_against_exact_products(n, eps0, rounds):
    log_p, log_q = clones_pmfs(n, eps0)
    pair = (np.exp(log_p), np.exp(log_q))
    eps = np.array([0.0, 0.2, 0.5, 1.0, 2.0])
    truth = product_delta([pair] * rounds, eps)
    lower, upper = clones(n, eps0).self_compose(rounds).delta_bounds(eps)
    assert np.all(lower <= truth + 1e-15) and np.all(truth <= upper + 1e-15)


def _dp_accounting(log_pmfs, rounds, pessimistic):
    dp = pytest.importorskip("dp_accounting.pld.privacy_loss_distribution")
    composed = None
    for log_p, log_q in log_pmfs:
        support = np.flatnonzero(np.isfinite(log_p))
        built = dp.from_two_probability_mass_functions(
            log_probability_mass_function_lower={int(i): float(log_q[i]) for i in support},
            log_probability_mass_function_upper={int(i): float(log_p[i]) for i in support},
            pessimistic_estimate=pessimistic,
            value_discretization_interval=1e-4,
        )
        built = built.self_compose(rounds) if rounds > 1 else built
        composed = built if composed is None else composed.compose(built)
    return composed


def _assert_agrees_with_dp_accounting(ours, log_pmfs, rounds, eps):
    pessimistic = _dp_accounting(log_pmfs, rounds, True)
    optimistic = _dp_accounting(log_pmfs, rounds, False)
    for value in eps:
        lower, upper = ours.delta_bounds(value)
        low = optimistic.get_delta_for_epsilon(value)
        high = pessimistic.get_delta_for_epsilon(value)
        if high < 1e-12:  # dp_accounting floors its values near 1e-15
            continue
        # Both are brackets of the same quantity: they must overlap.
        assert lower <= high and low <= upper
        # Connect-the-dots at h = 1e-3 against dp_accounting's pessimistic rounding
        # at 1e-4: ours measured 0.03-0.4 % below theirs; never more than 0.1 % above.
        assert upper <= high * 1.001


@pytest.mark.parametrize("rounds", [2, 10, 100])
def test_composition_against_dp_accounting(rounds):
    # The stronger pair (its pmfs as before the standard one became the default).
    n, eps0 = 30, 1.0
    ours = clones(n, eps0, variant="stronger").self_compose(rounds)
    eps = [0.1, 0.5, 1.0, 2.0, 4.0]
    _assert_agrees_with_dp_accounting(ours, [clones_pmfs(n, eps0, variant="stronger")], rounds, eps)


def test_heterogeneous_rounds():
    """Rounds with different (n, ε0, p) compose through the engine.

    Koskela et al. (2023), remark after Cor 10.
    """
    settings = [(30, 1.0, None), (50, 2.0, None), (20, 0.5, 0.2)]
    ours = pld.compose(*[clones(*s) for s in settings])
    pmfs = [clones_pmfs(*s) for s in settings]
    _assert_agrees_with_dp_accounting(ours, pmfs, 1, [0.1, 0.5, 1.0, 2.0])
    tiny = [(3, 1.0, None), (4, 2.0, 0.05)]
    pairs = [tuple(np.exp(x) for x in clones_pmfs(*s)) for s in tiny]
    truth = product_delta(pairs, [0.0, 0.5, 1.5])
    lower, upper = pld.compose(*[clones(*s) for s in tiny]).delta_bounds([0.0, 0.5, 1.5])
    assert np.all(lower <= truth + 1e-15) and np.all(truth <= upper + 1e-15)


def test_varying_population_per_round():
    populations = [1000, 1200, 800, 1500]
    composed = pld.compose(*[clones(n, 2.0) for n in populations])
    same = clones(800, 2.0).self_compose(len(populations))
    # More users per round never weakens the guarantee (n = 800 is the smallest).
    eps = np.array([0.1, 0.3, 0.6])
    assert np.all(composed.delta(eps) <= same.delta(eps))


# -- edge cases ---------------------------------------------------------------------


@pytest.mark.parametrize("eps0", [0.1, 1.0, 5.0])
def test_one_user_is_randomised_response(eps0):
    eps = np.array([0.0, eps0 / 3, eps0 / 2])
    exact = (math.exp(eps0) - np.exp(eps)) / (math.exp(eps0) + 1)
    lower, upper = clones(1, eps0).delta_bounds(eps)
    assert np.all(lower <= exact + 1e-15) and np.all(exact <= upper)
    np.testing.assert_allclose(lattice_delta(1, eps0, eps), exact, rtol=1e-13)


@pytest.mark.parametrize("eps0", [20.0, 50.0])
def test_large_eps0_gives_little_amplification(eps0):
    eps = np.array([1.0, eps0 / 2, eps0 - 1])
    no_shuffle = (math.exp(eps0) - np.exp(eps)) / (math.exp(eps0) + 1)
    exact = lattice_delta(1000, eps0, eps)
    # Data processing: the clones pair is (Δ1, Δ2) plus independent noise, never worse.
    assert np.all(exact <= no_shuffle * (1 + 1e-12))
    # p < 2e-9: C = 0 with probability > 1 - 2e-6, so hardly any amplification.
    assert np.all(exact >= no_shuffle * (1 - 1e-5))
    lower, upper = clones(1000, eps0).delta_bounds(eps)
    assert np.all(lower <= exact * (1 + 1e-12)) and np.all(exact <= upper)


@pytest.mark.parametrize("eps0", [1e-3, 1e-6])
def test_tiny_eps0(eps0):
    n = 1000
    loss = clones(n, eps0)
    merged = clones_cells(n, eps0)
    exact = lattice_delta(n, eps0, [0.0])[0]
    lower, upper = loss.delta_bounds(0.0)
    assert lower <= exact <= upper
    # Every loss is inside one grid cell next to 0: the upper bound at ε = 0 is
    # the exact value plus the truncated mass; beyond ε0 only the truncated mass is left.
    shifted = lattice_delta(n, eps0, [-SHIFT])[0]
    assert upper <= shifted * (1 + MASS_SLACK) + merged.truncated_mass + 1e-15
    assert loss.delta(2 * STEP) <= merged.truncated_mass + 1e-15
    assert exact == pytest.approx(clones_delta_bounds(n, eps0, 0.0)[0][0], rel=1e-8)


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"n": 0, "eps0": 1.0}, "n"),
        ({"n": 2.5, "eps0": 1.0}, "n"),
        ({"n": 10, "eps0": 0.0}, "eps0"),
        ({"n": 10, "eps0": -1.0}, "eps0"),
        ({"n": 10, "eps0": float("nan")}, "eps0"),
        ({"n": 10, "eps0": 51.0}, "eps0"),
        ({"n": 10, "eps0": 1.0, "p": 0.0}, "p"),
        ({"n": 10, "eps0": 1.0, "p": -0.1}, "p"),
        ({"n": 10, "eps0": 1.0, "p": 0.27}, "p"),
        ({"n": 10, "eps0": 1.0, "truncation": "chernoff"}, "truncation"),
        ({"n": 10, "eps0": 1.0, "tail_mass": 0.0}, "tail_mass"),
        ({"n": 10, "eps0": 1.0, "tail_mass": 0.01}, "tail_mass"),
        ({"n": 10, "eps0": 1.0, "loss_grid_step": 0.0}, "loss_grid_step"),
        ({"n": 5000, "eps0": 1.0, "truncation": "exact"}, "n"),
    ],
)
def test_bad_input_names_the_parameter(kwargs, name):
    with pytest.raises(ValueError, match=rf"^{name} must"):
        clones(**kwargs)


def test_bad_input_of_the_helpers():
    with pytest.raises(ValueError, match="^n must"):
        clones_pmfs(5000, 1.0)
    with pytest.raises(ValueError, match="^eps must"):
        clones_delta_bounds(10, 1.0, [float("inf")])
    with pytest.raises(ValueError, match="^delta must"):
        clones_epsilon_bounds(10, 1.0, 0.0)
    with pytest.raises(ValueError, match="^truncation must"):
        clones_cells(10, 1.0, truncation="exact")


def test_exact_truncation_matches_the_default():
    n, eps0 = 300, 1.0
    eps = np.array([0.0, 0.05, 0.1, 0.2])
    exact_lower, exact_upper = clones(n, eps0, truncation="exact").delta_bounds(eps)
    lower, upper = clones(n, eps0).delta_bounds(eps)
    truncated = clones_cells(n, eps0).truncated_mass
    # They differ by the truncation (charged at ε0 or dropped, <= 2 τ) and by the
    # engine's float slack for the two atom sets (SHIFT nats times a mass <= 1).
    np.testing.assert_allclose(upper, exact_upper, rtol=MASS_SLACK, atol=2 * truncated + SHIFT)
    np.testing.assert_allclose(lower, exact_lower, rtol=MASS_SLACK, atol=2 * truncated + SHIFT)


def test_cli_spec():
    (spec,) = FAMILIES["clones"]()
    assert spec.name == "clones"
    assert [option.flag for option in spec.options] == ["--n", "--eps0", "--variant", "--p"]
    assert [option.required for option in spec.options] == [True, True, False, False]
    built = spec.build(n=100, eps0=1.0, variant=None, p=None, loss_grid_step=STEP)
    assert built.delta_bounds(0.1) == clones(100, 1.0).delta_bounds(0.1)
    stronger = spec.build(n=100, eps0=1.0, variant="stronger", p=None, loss_grid_step=STEP)
    assert stronger.delta_bounds(0.1) == clones(100, 1.0, variant="stronger").delta_bounds(0.1)


def test_million_users_build_quickly():
    start = time.perf_counter()
    clones(10**6, 1.0)
    # Measured 0.15 s on the 2-core machine (numba cache warm); 10x margin for load.
    assert time.perf_counter() - start < 5.0


# -- slow, exhaustive ----------------------------------------------------------------


@pytest.mark.slow
def test_ten_million_users_and_a_thousand_rounds():
    clones(10**6, 4.0)  # warm the numba cache
    start = time.perf_counter()
    one_round = clones(10**7, 1.0)
    built = time.perf_counter()
    one_round.self_compose(1000).delta(0.1)
    composed = time.perf_counter()
    assert built - start < 10.0
    assert composed - built < 1.0


@pytest.mark.slow
@pytest.mark.parametrize("eps0", [0.05, 0.5, 1.0, 2.0, 4.0, 8.0])
@pytest.mark.parametrize("p_fraction", [1.0, 0.5, 0.05])
def test_exhaustive_truncations_bracket_the_lattice(eps0, p_fraction):
    p = None if p_fraction == 1.0 else p_fraction / (math.exp(eps0) + 1)
    for n in (3, 31, 256, 1500):
        eps = np.round(np.linspace(0, eps0, 9)[:-1] / STEP) * STEP
        exact = lattice_delta(n, eps0, eps, p)
        for truncation in ("quantile", "hoeffding", "exact"):
            lower, upper = clones(n, eps0, p, truncation=truncation).delta_bounds(eps)
            assert np.all(lower <= exact * (1 + 1e-12) + 1e-16) and np.all(exact <= upper)


@pytest.mark.slow
@pytest.mark.parametrize("rounds", [10, 100, 1000])
def test_slow_composition_against_dp_accounting(rounds):
    n, eps0 = 200, 2.0
    ours = clones(n, eps0).self_compose(rounds)
    eps = [0.5, 1.0, 2.0, 4.0, 8.0]
    _assert_agrees_with_dp_accounting(ours, [clones_pmfs(n, eps0)], rounds, eps)


def test_variant_switch_rejects_unknown_values_and_p_with_a_variant():
    with pytest.raises(ValueError, match="variant"):
        clones_delta_bounds(100, 1.0, 0.5, variant="2022")
    with pytest.raises(ValueError, match="p or variant"):
        clones_delta_bounds(100, 1.0, 0.5, p=0.1, variant="standard")
    with pytest.raises(ValueError, match="p or variant"):
        clones(100, 1.0, 0.1, variant="stronger")
