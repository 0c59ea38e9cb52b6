"""The engine's kernels: vectorised numpy paths against their loop definitions.

Small grids run numpy (or the interpreted contraction sweep), large ones a
numba-compiled loop; both paths must give the same numbers, and the numpy
scatter must equal the per-atom loop that defines it. The log-MGF kernels
(pld.engine.mgf) are checked against mpmath within their stated margin.
"""

from __future__ import annotations

import math
import sys

import mpmath
import numpy as np
import pytest

import pld
from pld.engine import fft, kernels, mgf
from pld.engine.tails import _ends, _rates
from pld.numerics import UNIT_ROUNDOFF

mpmath.mp.dps = 40


def _masses(size: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    masses = rng.random(size) ** 6
    masses[rng.random(size) < 0.2] = 0.0
    masses[: size // 10] *= 1e-300  # a subnormal-ish tail
    return masses / masses.sum()


def _scatter_loop(loss, mass, snap, step, first_cell, n_cells):
    """The definition, one atom at a time (as the kernel's docstring states it)."""
    to_left, to_right = np.zeros(n_cells), np.zeros(n_cells)
    denominator = -math.expm1(-step)
    for x, p, s in zip(loss.tolist(), mass.tolist(), snap.tolist(), strict=True):
        if p <= 0.0:
            continue
        nearest = round(x / step)
        if abs(x - nearest * step) <= s:
            k, r = nearest, 0.0
        else:
            k = math.floor(x / step)
            r = x - k * step
            if r < 0.0:
                k -= 1
                r = x - k * step
            elif r >= step:
                k += 1
                r = x - k * step
        cell = k - first_cell
        if cell < 0:
            to_left[0] += p
            continue
        if cell >= n_cells:
            to_right[n_cells - 1] += p
            continue
        r = max(r, 0.0)
        to_right[cell] += p * min(-math.expm1(-r) / denominator, 1.0)
        to_left[cell] += p * (math.expm1(-r) - math.expm1(-step)) / denominator
    return to_left, to_right


@pytest.mark.parametrize("step", [1e-3, 0.7])
def test_scatter_matches_its_loop(step):
    rng = np.random.default_rng(4)
    loss = rng.normal(0.0, 2.0, 3000)
    loss[:40] = np.round(loss[:40] / step) * step * (1 + 1e-15)  # snapped atoms
    loss[40:45] = 1e3  # beyond the cells: moved up to the top
    mass = rng.random(3000)
    mass[rng.random(3000) < 0.1] = 0.0
    snap = 1e-12 * np.maximum(np.abs(loss), step)
    first = math.floor(loss[45:].min() / step) - 1
    n_cells = math.ceil(loss[45:].max() / step) - first + 2
    ours = kernels.scatter_cells(loss, mass, snap, step, first, n_cells)
    loop = _scatter_loop(loss, mass, snap, step, first, n_cells)
    for got, want in zip(ours, loop, strict=True):
        # Same operations in the same order; numpy's and libm's expm1 may differ by an ulp.
        np.testing.assert_allclose(got, want, rtol=4e-16 * 3000, atol=0.0)
    assert ours[1][-1] >= mass[40:45].sum()


@pytest.mark.parametrize(
    "size,step,block",
    [(kernels.COMPILED_SIZE + 777, 2e-3, 1024), (5000, 0.75, 800), (1, 1e-3, 1024)],
)
def test_suffix_sums_numpy_and_compiled_are_the_same_floats(size, step, block, monkeypatch):
    """The same sums in the same order on the same powers: bit for bit, and a loaded loop
    serves small grids with the numpy path's floats."""
    masses = _masses(size, 5)
    powers = np.arange(block + 1) * step
    down, up = np.exp(-powers), np.exp(powers)
    numpy_sums = kernels._suffix_sums_numpy(masses, down, up, block)
    compiled = (np.full(size + 1, np.nan), np.full(size + 1, np.nan))
    kernels._compiled(kernels._suffix_sums_loop)(masses, down, up, block, *compiled, size)
    for got, want in zip(numpy_sums, compiled, strict=True):
        np.testing.assert_array_equal(got, want)
    for compiled_path in (False, True):
        monkeypatch.setattr(kernels, "run_compiled", lambda seconds, c=compiled_path: c)
        for got, want in zip(kernels.suffix_sums(masses, step, block), compiled, strict=True):
            np.testing.assert_array_equal(got, want)


def _contraction_cases():
    """A large grid (near and far gaps) and small ones that, together, take every
    branch of both sweeps and of their meeting (seeds found by tracing the lines)."""
    rng = np.random.default_rng(6)
    cells = 2048
    mass = rng.random(cells) ** 4
    mass[rng.random(cells) < 0.3] = 0.0
    mass[1500:1530] = 0.0  # a gap wider than max_gap
    theta = rng.random(cells)
    theta[rng.random(cells) < 0.05] = 0.0
    yield mass, theta, 1e-3, 8
    for seed in range(20):
        rng = np.random.default_rng(seed)
        size = int(rng.integers(3, 12))
        mass = rng.random(size) ** 4
        mass[rng.random(size) < 0.3] = 0.0
        yield mass, rng.random(size), 0.3, 2


def test_contraction_interpreted_and_compiled_agree(monkeypatch):
    """Bit for bit: which path runs depends on whether numba is loaded."""
    for mass, theta, step, max_gap in _contraction_cases():
        to_right = mass * theta
        to_left = mass - to_right
        with monkeypatch.context() as patch:
            patch.setattr(kernels, "run_compiled", lambda seconds: True)
            compiled = kernels.contract_cells(to_left, to_right, step, max_gap)
            patch.setattr(kernels, "run_compiled", lambda seconds: False)
            patch.setattr(kernels, "_compiled", None)  # the interpreted sweep must run
            interpreted = kernels.contract_cells(to_left, to_right, step, max_gap)
        np.testing.assert_array_equal(interpreted, compiled)
        assert math.isclose(interpreted.sum(), (to_left + to_right).sum(), rel_tol=1e-12)


def test_rent_or_buy_loads_numba_when_the_rent_would_pass_the_price(monkeypatch):
    """Before numba is in the process, numpy runs while the estimated extra seconds,
    summed, stay within NUMBA_LOAD_SECONDS; the call that would pass them (or any
    call once numba is loaded) runs compiled."""
    monkeypatch.delitem(sys.modules, "numba")
    monkeypatch.setattr(kernels, "_rented_seconds", 0.0)
    price = kernels.NUMBA_LOAD_SECONDS
    assert not kernels.run_compiled(0.5 * price)
    assert not kernels.run_compiled(0.4 * price)
    assert kernels.run_compiled(0.2 * price)  # 1.1 x the price: buy
    assert kernels._rented_seconds == pytest.approx(0.9 * price)
    assert kernels.run_compiled(2.0 * price)  # one call dearer than the price: buy
    monkeypatch.setattr(kernels, "_rented_seconds", 0.0)
    monkeypatch.setitem(sys.modules, "numba", object())
    assert kernels.run_compiled(0.0)


def test_an_accountant_query_in_a_fresh_process_loads_no_numba():
    """The DP-SGD accountant's first query (compose 14 063 steps, eps(1e-5)) stays on
    numpy and scipy.fft: it does not import numba, and its answer is the one a
    loaded process gives (to 1e-12: the FFT backends differ in the last bits,
    within the composition's error bound)."""
    import subprocess

    code = (
        "import sys\n"
        "import pld\n"
        "loss = pld.subsampled_gaussian(1.1, 256 / 60000).self_compose(14063)\n"
        "print(repr(loss.epsilon_bounds(1e-5, rel_accuracy=1.0)[1]))\n"
        "print('numba' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split("\n")
    assert out[1].split()[0] == "False"
    import pld

    warm = pld.subsampled_gaussian(1.1, 256 / 60000).self_compose(14063)
    assert float(out[0]) == pytest.approx(warm.epsilon_bounds(1e-5, rel_accuracy=1.0)[1], rel=1e-12)


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_blocked_log_mgf_within_margin(sign):
    """The numpy row-blocked path against mpmath, tails near underflow, within the margin."""
    masses = _masses(12_000, 7)
    offset, step = -5000, 1e-3
    t = sign * np.array([0.3, 4.0, 90.0, 900.0])
    assert np.count_nonzero(masses) * t.size > mgf._MGF_DIRECT
    values = mgf._log_mgf_numpy(masses, offset, step, t)
    span = np.abs(t) * step * (abs(offset) + masses.size)
    margins = mgf.log_mgf_rounding(masses.size, span) + 2 * UNIT_ROUNDOFF * np.abs(values)
    for value, margin, rate in zip(values, margins, t, strict=True):
        terms = [
            mpmath.mpf(float(m)) * mpmath.exp(mpmath.mpf(float(rate)) * (offset + j) * step)
            for j, m in enumerate(masses.tolist())
            if m > 0
        ]
        exact = float(mpmath.log(mpmath.fsum(terms)))
        assert abs(value - exact) <= margin


def test_exact_log_mgf_sum_is_an_upper_bound(monkeypatch):
    """The margin-raised sum (compiled blocked path here) stays above the truth."""
    masses = _masses(3000, 11)
    offset, step = -1000, 1e-3
    # Lattice exponents near -900, -90, -0.2, 0.3, 4, 40 and 600 (rates t * step).
    keys = [(-1, -5), (-1, -111), (-1, -393), (1, -374), (1, -255), (1, -149), (1, -24)]
    t = _rates(keys) / step
    # The compiled path at a size the mpmath truth sums quickly.
    monkeypatch.setattr(mgf, "COMPILED_MGF_ATOMS", 2**10)
    assert masses.size > mgf.COMPILED_MGF_ATOMS
    computed = _ends([(offset, masses)], [{}], [2], step, keys, 0.0)[0]
    for value, rate in zip(computed, t, strict=True):
        terms = [
            mpmath.mpf(float(m)) * mpmath.exp(mpmath.mpf(float(rate)) * (offset + j) * step)
            for j, m in enumerate(masses.tolist())
            if m > 0
        ]
        exact = 2 * mpmath.log(mpmath.fsum(terms))
        assert exact <= value <= exact + 1e-10 * max(1.0, abs(float(exact)))


@pytest.mark.parametrize("rate", [-64.0, -8.0, 30.0, 100.0, 700.0])
def test_blocked_log_mgf_within_margin_at_large_rates(rate):
    """The compiled blocked Horner path against mpmath, subnormal masses included,
    up to rates where a single Horner chain overflows (above 86) or sums hundreds
    of rescaling constants (the former loop erred by up to 7 margins at rate 8 on
    a 41k-atom pmf)."""
    masses = _masses(6000, 12)
    offset, step = 4000, 1e-3
    t = np.array([rate / step])
    value = float(mgf._log_mgf_blocked(masses, float(offset), step, t)[0])
    span = abs(rate) * (abs(offset) + masses.size)
    margin = float(mgf.log_mgf_rounding(masses.size, np.array([span]))[0])
    terms = [
        mpmath.mpf(float(m)) * mpmath.exp(mpmath.mpf(rate) * (offset + j))
        for j, m in enumerate(masses.tolist())
        if m > 0
    ]
    exact = float(mpmath.log(mpmath.fsum(terms)))
    assert math.isfinite(value)
    assert abs(value - exact) <= margin + UNIT_ROUNDOFF * abs(exact)


def _smooth(n: int) -> bool:
    for p in (2, 3, 5):
        while n % p == 0:
            n //= p
    return n == 1


def test_fast_length_is_the_smallest_even_smooth_length():
    """Brute force below 3000, smoothness and evenness up to composition sizes."""
    for minimum in range(1, 3000):
        expected = max(minimum, 2)
        while expected % 2 or not _smooth(expected):
            expected += 1
        assert fft.fast_length(minimum) == expected
    for minimum in (84_375, 168_751, 2**20 + 1, 10**7 + 3):
        length = fft.fast_length(minimum)
        assert length >= minimum and length % 2 == 0 and _smooth(length)


def test_hockey_stick_numpy_and_compiled_are_the_same_floats(monkeypatch):
    """Elementwise the same operations on numpy's expm1 values: bit for bit, whichever
    path serves the points."""
    masses = _masses(5000, 8)
    step = 1e-3
    mass_tail, weighted_tail = kernels.suffix_sums(masses, step, 1024)
    ones = _ones(masses.size, step)
    rng = np.random.default_rng(9)
    index = rng.integers(0, masses.size + 1, 400)
    factor = np.exp(-step * rng.random(400))
    terms = (1e-12, 1e-9, 1e-13, 1e-16, 1e-12, 1e-13, 8.0)
    for upper in (True, False):
        paths = []
        for compiled_path in (False, True):
            monkeypatch.setattr(kernels, "run_compiled", lambda seconds, c=compiled_path: c)
            paths.append(
                kernels.hockey_stick_bound(
                    mass_tail, weighted_tail, ones, index, factor, upper, terms
                )
            )
        np.testing.assert_array_equal(paths[0], paths[1])


@pytest.mark.parametrize("rate", [-900.0, -3.0, 0.0, 0.4, 70.0])
def test_log_mgf_paths_agree_within_margin(rate):
    """The log-sum-exp and the compiled blocked Horner loop, both within the shared margin."""
    masses = _masses(20_000, 10)
    offset, step = -7000, 1e-3
    t = np.array([rate])
    lse = mgf._log_mgf_numpy(masses, offset, step, t)[0]
    blocked = mgf._log_mgf_blocked(masses, float(offset), step, t)[0]
    span = abs(rate) * step * (abs(offset) + masses.size)
    margin = float(mgf.log_mgf_rounding(masses.size, np.array([span]))[0])
    assert abs(lse - blocked) <= 2 * margin + 4 * UNIT_ROUNDOFF * abs(lse)


@pytest.mark.parametrize("size", [3000, 25_000])
def test_log_mgf_kept_blocks_give_the_same_values(size):
    """A pmf's rows (numpy path) or blocks (compiled path) kept between calls, as a
    window search keeps them, give the values of a fresh layout, at exponents of
    either sign."""
    masses = _masses(size, 13)
    t = np.array([-2.0, -0.1, 0.0, 0.3, 5.0] * 8)
    kept: dict = {}
    first = mgf.log_mgf(masses, -300, 1e-3, t, kept)
    np.testing.assert_array_equal(first, mgf.log_mgf(masses, -300, 1e-3, t))
    if size > mgf.COMPILED_MGF_ATOMS:
        assert ("layout", -(-size // 64)) in kept
    else:
        assert any(key[0] == "rows" for key in kept if isinstance(key, tuple))
    np.testing.assert_array_equal(mgf.log_mgf(masses, -300, 1e-3, t[::-1], kept), first[::-1])
    np.testing.assert_array_equal(mgf.log_mgf(masses, -300, 1e-3, t, kept), first)


def test_log_mgf_of_many_factors_within_margin():
    """Many factors in one stacked rows product agree with each factor's own
    log_mgf (and with mpmath on one) within the shared margin; factors off the
    rows path (small, or direct) are evaluated one by one."""
    sizes = [3000, 2500, 4100, 60, 3000]
    factors = [(_masses(size, 20 + i), -400 + 37 * i) for i, size in enumerate(sizes)]
    step = 1e-3
    t = np.concatenate([-(2.0 ** np.linspace(-4, 3, 20)), 2.0 ** np.linspace(-4, 3, 20)])
    layouts: list[dict] = [{} for _ in factors]
    stacks: dict = {}
    values = mgf.log_mgf_many(factors, step, t, layouts, stacks)
    ((_, _, batch),) = stacks  # one product of the stacked rows of at least 3 factors
    assert len(batch) >= 3
    np.testing.assert_array_equal(mgf.log_mgf_many(factors, step, t, layouts, stacks), values)
    for (masses, offset), row in zip(factors, values, strict=True):
        alone = mgf.log_mgf(masses, offset, step, t)
        span = np.abs(t) * step * (abs(offset) + masses.size)
        margin = mgf.log_mgf_rounding(masses.size, span) + UNIT_ROUNDOFF * np.abs(alone)
        assert np.all(np.abs(row - alone) <= 2 * margin)
    masses, offset = factors[1]
    for k in (0, 19, 39):
        terms = [
            mpmath.mpf(float(m)) * mpmath.exp(mpmath.mpf(float(t[k])) * (offset + j) * step)
            for j, m in enumerate(masses.tolist())
            if m > 0
        ]
        exact = float(mpmath.log(mpmath.fsum(terms)))
        margin = float(
            mgf.log_mgf_rounding(
                masses.size, np.array([abs(t[k]) * step * (abs(offset) + masses.size)])
            )[0]
        )
        assert abs(values[1, k] - exact) <= margin + UNIT_ROUNDOFF * abs(exact)


def test_contraction_carries_meeting_on_a_grid_point():
    """Atoms a hair below their right grid point (theta within 1e-12 of 1) make the
    two carries meet with one lying, after rounding, on the other's target: no pull
    then (it would divide by zero), and both paths agree and keep the mass."""
    compiled = kernels._compiled(kernels._contract)
    for seed in (525, 662, 985):
        rng = np.random.default_rng(seed)
        size = int(rng.integers(2, 8))
        mass = rng.random(size) ** 3
        theta = rng.random(size) * float(rng.choice([1.0, 0.999999999]))
        theta = np.where(rng.random(size) < 0.3, 1 - rng.random(size) * 1e-12, theta)
        step = float(rng.choice([0.1, 0.5, 1e-3, 0.7]))
        cells = np.arange(size)
        split = int(np.argmax(mass))
        interpreted = [0.0] * (size + 1)
        kernels._contract(
            cells.tolist(), mass.tolist(), theta.tolist(), split, step, 4, [0.0] * 5, interpreted
        )
        out = np.zeros(size + 1)
        compiled(cells, mass, theta, split, step, 4, np.zeros(5), out)
        np.testing.assert_array_equal(interpreted, out)
        assert out.min() >= 0.0 and math.isclose(out.sum(), mass.sum(), rel_tol=1e-12)


def test_discretise_shortcut_and_general_path_agree():
    """Atoms all placed on the grid take a shortcut; an atom at +inf and one whose
    mass underflowed send the same atoms through the general path, which must give
    the same grid masses (the underflow charge, ~2e-308, vanishes into a mass of
    ~1e-4 at its grid point) and the +inf atom's mass at +inf."""
    from pld.engine.discretisation import discretise

    rng = np.random.default_rng(12)
    loss = rng.normal(0.0, 0.3, 2000)
    mass = rng.random(2000)
    mass /= mass.sum() * 1.001
    scale = np.abs(loss) + 1.0
    step = 1e-3
    upper, lower = discretise(loss, mass, step, loss_scale=scale)
    fast = (upper, lower())
    upper, lower = discretise(
        np.append(loss, [np.inf, 0.1]),
        np.append(mass, [1e-3, 0.0]),
        step,
        loss_scale=np.append(scale, [np.inf, 1.0]),
    )
    general = (upper, lower())
    for ours, theirs in zip(fast, general, strict=True):
        assert ours.offset == theirs.offset
        np.testing.assert_array_equal(ours.masses, theirs.masses)
    assert fast[0].infinity_mass == fast[1].infinity_mass == 0.0
    assert general[0].infinity_mass == general[1].infinity_mass == 1e-3


@pytest.mark.parametrize("beyond,carry", [(True, -math.inf), (False, 0.02), (False, -math.inf)])
def test_breakpoint_maxima_paths_are_the_same_floats(beyond, carry, monkeypatch):
    """The running maxima of the bound at breakpoints, numpy or one compiled loop: bit for
    bit, and the suffix maximum of the bound evaluated point by point."""
    masses = _masses(6000, 17)
    step = 1e-3
    mass_tail, weighted_tail = kernels.suffix_sums(masses, step, 1024)
    terms = (1e-12, 1e-9, 1e-13, 1e-17, 1e-12, 1e-13, 8.0)
    index, count = 1500, 4000
    ones = _ones(masses.size, step)
    for upper in (True, False):
        paths = []
        for compiled_path in (False, True):
            monkeypatch.setattr(kernels, "run_compiled", lambda seconds, c=compiled_path: c)
            out = np.empty(count + beyond)
            kernels.breakpoint_maxima(
                mass_tail, weighted_tail, ones, index, count, beyond, step, upper, terms, carry, out
            )
            paths.append(out)
        np.testing.assert_array_equal(paths[0], paths[1])
        points = np.append(np.arange(index, index + count), [masses.size] if beyond else [])
        factor = np.where(points < masses.size, math.exp(-step), 1.0)
        direct = kernels.hockey_stick_bound(
            mass_tail, weighted_tail, ones, points.astype(np.int64), factor, upper, terms
        )
        expected = np.maximum.accumulate(np.append(direct, carry)[::-1])[::-1][:-1]
        np.testing.assert_array_equal(paths[0], expected)


def _ones(size: int, step: float) -> np.ndarray:
    ones = np.zeros(size + 1)
    kernels.geometric_sums(size, 0, size, step, ones[:size])
    return ones


def test_geometric_sums_are_the_closed_form():
    """The discounted ones, in place, against the closed form and a direct sum."""
    ones = _ones(3000, 2e-3)
    remaining = 3000 - np.arange(3001)
    np.testing.assert_array_equal(ones, -np.expm1(-2e-3 * remaining) / -math.expm1(-2e-3))
    direct = np.cumsum(np.exp(-2e-3 * np.arange(3000)))[::-1]
    np.testing.assert_allclose(ones[:-1], direct, rtol=1e-12)


@pytest.mark.parametrize("upper", [True, False])
def test_breakpoint_search_paths_are_the_same(upper, monkeypatch):
    """The compiled search visits the breakpoints of the numpy rounds: the same crossing."""
    from pld.engine.loss_pmf import LossPmf

    masses = _masses(9000, 20)
    pmf = LossPmf(1e-3, -3000, masses, 1e-9, "upper" if upper else "lower", error_l1=1e-13)
    rng = np.random.default_rng(21)
    for target in 10.0 ** rng.uniform(-12, -0.3, 40):
        low = int(rng.integers(-1, 50))
        found = []
        for compiled_path in (False, True):
            monkeypatch.setattr(kernels, "run_compiled", lambda seconds, c=compiled_path: c)
            found.append(pmf._first_at_or_below_one(float(target), low, 9000))
        assert found[0] == found[1]
        assert low < found[0] <= 9000


def test_search_loop_ends_when_the_first_breakpoint_is_negative():
    """A one-point suffix (low = -2, high = 0): breakpoint -1 meets the target. A
    sentinel -1 for "not found" once made both loops spin forever here."""
    arrays = (np.zeros(1), np.zeros(1), np.zeros(1))
    args = (*arrays, -2, 0, math.exp(-0.01), True, (0.0,) * 7, 0.5, 64, 4096)
    assert kernels._search_loop(*args) == -1
    assert kernels._compiled(kernels._search_loop)(*args) == -1


def test_epsilon_of_a_pmf_with_a_one_point_tail_is_answered():
    """The random pair hypothesis found: eps(0.42) is 0 on both paths."""
    p = np.array([0.4054533596038142, 0.41601920639878204, 0.17852743399740378])
    q = np.array([0.0, 0.41820528427872616, 0.581794715721274])
    with np.errstate(divide="ignore"):
        loss = pld.from_pmfs(np.log(p), np.log(q), loss_grid_step=1e-2)
    kernels._compiled(kernels._search_loop)  # loaded: the compiled search runs
    assert loss.epsilon_bounds(0.42017843847847397, rel_accuracy=1.0) == (0.0, 0.0)
