"""The engine's numerical kernels against independent high-precision truths.

Each kernel states a rounding-error bound (docs/error-bounds.md §3–5); these
tests compute the same quantity with mpmath at 40 digits and check that the
error is within the stated bound, and that the one-pass eps(delta) query agrees
with a bisection of delta(eps) on the bound it inverts.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

import pld
from pld.engine import compose as compose_module
from pld.engine import fft, hot_bins, kernels, loss_pmf
from pld.engine.loss_pmf import LossPmf
from pld.engine.tails import _ends, _rates

U = math.ulp(1.0) / 2
mpmath.mp.dps = 40


def _random_masses(size: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    masses = rng.random(size) ** 6
    masses[rng.random(size) < 0.2] = 0.0
    return masses / masses.sum()


def test_suffix_sums_within_stated_bound():
    """Plain and discounted suffix sums, with block crossings, within their unit counts."""
    masses = _random_masses(700, 1)
    step, block = 3e-3, 64
    mass_tail, weighted_tail = kernels.suffix_sums(masses, step, block)
    crossings = -(-masses.size // block) - 1
    exact_tail = mpmath.mpf(0)
    exact_weighted = mpmath.mpf(0)
    decay = mpmath.exp(-mpmath.mpf(step))
    for i in range(masses.size - 1, -1, -1):
        exact_tail += mpmath.mpf(float(masses[i]))
        exact_weighted = mpmath.mpf(float(masses[i])) + decay * exact_weighted
        if i % 37 == 0 or i < 3:
            plain = abs(mpmath.mpf(mass_tail[i]) - exact_tail)
            discounted = abs(mpmath.mpf(weighted_tail[i]) - exact_weighted)
            assert plain <= (block - 1 + crossings) * U * exact_tail
            assert discounted <= (block + 6 + 4 * crossings) * U * exact_weighted
    assert mass_tail[-1] == 0.0 and weighted_tail[-1] == 0.0


@pytest.mark.parametrize("t", [-4000.0, -30.0, -0.7, 0.02, 1.5, 60.0, 900.0, 1e7])
def test_log_mgf_within_margin(t):
    """The exact Chernoff MGF (Horner or log-sum-exp) is an upper bound after its margin."""
    masses = _random_masses(900, 2)
    masses[:25] = 0.0
    offset, step = -300, 2e-3
    # The lattice exponent nearest t, where the search evaluates the MGF.
    key = (int(np.sign(t)), round(32 * math.log2(abs(t) * step)))
    t = float(_rates([key])[0]) / step
    computed = _ends([(offset, masses)], [{}], [3], step, [key], 0.0)[0][0]
    terms = [
        mpmath.mpf(float(m)) * mpmath.exp(mpmath.mpf(t) * (offset + j) * mpmath.mpf(step))
        for j, m in enumerate(masses)
        if m > 0
    ]
    exact = 3 * mpmath.log(mpmath.fsum(terms))
    assert computed >= exact
    assert computed - exact <= 1e-9 * max(1.0, abs(float(exact)))


def _exact(value: np.longdouble) -> mpmath.mpf:
    """A long double as an mpmath number, exactly (its 64-bit significand is two doubles)."""
    high = float(value)
    return mpmath.mpf(high) + mpmath.mpf(float(value - np.longdouble(high)))


def test_twiddle_tables_within_stated_bound():
    """Octant-reduced unit roots: within 4 u_ext of exp(-2 pi i m / N) (measured <= 1.5)."""
    unit = fft.EXTENDED_UNIT_ROUNDOFF
    for length in (1000, 69120, 7, 2**20):
        rng = np.random.default_rng(length)
        multiples = np.unique(
            np.concatenate(
                (
                    np.arange(min(length, 200)),
                    rng.integers(0, length, 400),
                    length - 1 - np.arange(min(length, 100)),
                    np.arange(8) * length // 8,
                )
            )
        )
        roots = hot_bins._unit_roots(multiples, length)
        for m, root in zip(multiples, roots, strict=True):
            exact = mpmath.expjpi(-2 * mpmath.mpf(int(m)) / length)
            error = abs(mpmath.mpc(_exact(root.real), _exact(root.imag)) - exact)
            assert error <= hot_bins._TABLE_UNITS * unit


@pytest.mark.parametrize(
    "method,units",
    [
        ("_direct_spectrum", 23),
        ("sliced/128", 33),
        ("sliced/512", 33),
        ("sliced/128/direct", 19),
        ("sliced/512/inner", 26),
        ("pruned/8", 16 + 24 + 7),
        ("pruned/40", 16 + 8 * math.log2(40) + 5),
    ],
)
def test_extended_spectrum_within_stated_bound(method, units):
    """Hot bins by direct, blocked or output-pruned extended sums: within their bounds.

    The computed long doubles are compared exactly with 40-digit sums; the
    bounds are about 25-90 u_ext of the 1-norm and the measured errors 1-3 u_ext.
    """
    masses = _random_masses(300, 3)
    pmf = LossPmf(1e-3, -120, masses, 0.0, "upper")
    length = 1000
    bins = np.array([0, 1, 2, 7, 333, 500])
    if method.startswith("pruned"):
        rows = int(method.split("/")[1])
        values, bound = hot_bins._pruned_spectrum(pmf, length, bins, rows)
    elif method.startswith("sliced"):
        block = int(method.split("/")[1])
        inner, outer = method.endswith("direct") or method.endswith("inner"), "direct" in method
        values, bound = hot_bins._sliced_spectrum(pmf, length, bins, block, inner, outer)
    else:
        values, bound = getattr(hot_bins, method)(pmf, length, bins)
    unit = fft.EXTENDED_UNIT_ROUNDOFF
    assert bound <= units * unit * 1.000001
    worst = 0.0
    for value, k in zip(values, bins, strict=True):
        exact = _exact_transform(pmf.offset, masses, int(k), length)
        error = abs(mpmath.mpc(_exact(value.real), _exact(value.imag)) - exact)
        assert error <= bound
        worst = max(worst, float(error))
    assert worst > 0.0  # the comparison resolves extended-precision errors


def _exact_transform(offset: int, masses: np.ndarray, k: int, length: int):
    """Bin k of the length-``length`` DFT of masses at grid indices offset + j, in mpmath."""
    turns = [mpmath.mpf((offset + j) * k) / length for j in range(masses.size)]
    return mpmath.fsum(
        mpmath.mpf(float(m)) * mpmath.expjpi(-2 * turn)
        for m, turn in zip(masses, turns, strict=True)
        if m > 0
    )


@pytest.mark.parametrize(
    "block,spiky,direct",
    [(128, False, False), (512, False, False), (512, True, False)]
    + [(128, False, True), (512, True, True)],
)
def test_sliced_sums_within_stated_bound(block, spiky, direct):
    """Sliced sums over several blocks: masses from 1e-250 to 1 (each block scaled
    by its own largest) or, spiky, one large mass per 64 points among masses
    2^-10 to 2^-60 of it (whose products sit in the lower slices), an empty block
    skipped, a support longer than the transform (positions wrap around) and
    arbitrary bins, within the stated bound and within a few u_ext of the
    40-digit sums; with both twiddles from the tables (31 units and the depth) or
    both computed directly (17 units and the depth)."""
    masses = _random_masses(1300, 8) * np.logspace(0, -250, 1300) ** np.linspace(0, 1, 1300)
    if spiky:
        rng = np.random.default_rng(8)
        masses = 2.0 ** -rng.integers(10, 60, 1300) * (1 + rng.random(1300))
        masses[::64] = 1.0
    masses[600:760] = 0.0
    pmf = LossPmf(1e-3, -437, masses, 0.0, "upper")
    length = 1000
    bins = np.array([0, 1, 3, 499])
    values, bound = hot_bins._sliced_spectrum(pmf, length, bins, block, direct, direct)
    blocks = -(-1300 // block) - (block == 128)
    unit = fft.EXTENDED_UNIT_ROUNDOFF
    units = 17 if direct else 31
    stated = bound / (unit * hot_bins.mass_bound(pmf))
    assert stated == pytest.approx(units + math.ceil(math.log2(blocks)), rel=1e-12)
    for value, k in zip(values, bins, strict=True):
        exact = _exact_transform(pmf.offset, masses, int(k), length)
        error = abs(mpmath.mpc(_exact(value.real), _exact(value.imag)) - exact)
        assert error <= bound
        assert error <= 4 * unit * hot_bins.mass_bound(pmf)


def test_several_pmfs_at_once():
    """The sliced spectra of several pmfs computed together (their blocks in the
    same matrix products) are those computed one by one, bounds included."""
    rng = np.random.default_rng(1)
    pmfs = []
    for seed in range(5):
        masses = _random_masses(int(rng.integers(200, 3000)), 20 + seed)
        pmfs.append(LossPmf(1e-3, int(rng.integers(-3000, 3000)), masses, 0.0, "upper"))
    bins = np.arange(12)
    for block, direct in ((128, False), (512, False), (256, True)):
        together = hot_bins._sliced_spectra(pmfs, 4000, bins, block, direct, direct)
        for pmf, (values, bound) in zip(pmfs, together, strict=True):
            alone, alone_bound = hot_bins._sliced_spectrum(pmf, 4000, bins, block, direct, direct)
            assert bound == alone_bound
            assert np.array_equal(values, alone)
    # Computed together, a pmf may take another method (shared costs): the two
    # results agree within their bounds.
    for pmf, (values, bound) in zip(pmfs, hot_bins.extended_spectra(pmfs, 4000, bins), strict=True):
        alone, alone_bound = hot_bins.extended_spectrum(pmf, 4000, bins)
        assert np.all(np.abs(values - alone) <= bound + alone_bound)


def test_cold_bins_stay_within_their_share():
    """The hot bins are the candidates above 1e-20 except the smallest, whose bounds
    with the other cold bins' add at most _COLD_SHARE of the inverse transform's term in
    both norms; one more cold bin would exceed it."""
    rng = np.random.default_rng(4)
    magnitude = np.exp(-(np.linspace(0.0, 60.0, 3000) ** 1.5))
    error = magnitude * 1e-12 * (1 + rng.random(3000))
    weights = np.full(3000, 2.0)
    weights[0] = 1.0
    # an inverse-transform term large enough that some candidates stay cold
    inverse = 1.8e-14 / compose_module._COLD_SHARE * 1e-3
    hot, square = compose_module._hot_bins(error, magnitude, weights, inverse)
    assert square == pytest.approx(np.dot(weights, magnitude**2), rel=1e-12)
    candidates = np.flatnonzero(error > compose_module._HOT_BIN_ERROR)
    assert set(hot) < set(candidates)
    cold = np.ones(3000, bool)
    cold[hot] = False
    share = compose_module._COLD_SHARE * inverse

    def within(mask):
        return np.dot(weights[mask], error[mask]) <= share * np.dot(weights, magnitude) and (
            np.dot(weights[mask], error[mask] ** 2) <= share**2 * np.dot(weights, magnitude**2)
        )

    assert within(cold)
    smallest_hot = hot[np.argmin(error[hot])]
    cold[smallest_hot] = True
    assert not within(cold)


def test_tight_choice_prefers_the_smaller_bound():
    """Where the composition amplifies the hot bins' bound, the sliced sums with
    directly computed twiddles (21 units here) are used instead of the cheaper ones
    with table twiddles (35 units); the direct sum (25 units) costs more than both."""
    masses = _random_masses(1500, 9)
    pmf = LossPmf(1e-3, -700, masses, 0.0, "upper")
    bins = np.arange(16)
    unit = fft.EXTENDED_UNIT_ROUNDOFF * hot_bins.mass_bound(pmf)
    _, loose = hot_bins.extended_spectrum(pmf, 20000, bins)
    _, tight = hot_bins.extended_spectrum(pmf, 20000, bins, tight=True)
    assert loose / unit == pytest.approx(35, rel=1e-9)
    assert tight / unit == pytest.approx(21, rel=1e-9)


def test_extended_fold_of_a_long_pmf():
    """A pmf longer than the transform folds in extended precision, its sums charged."""
    masses = _random_masses(2500, 6)
    pmf = LossPmf(1e-3, -700, masses, 0.0, "upper")
    length = 1000
    bins = np.array([0, 3, 250])
    values, bound = hot_bins._pruned_spectrum(pmf, length, bins, 8)
    assert bound <= (16 + 24 + 7 + 2) * fft.EXTENDED_UNIT_ROUNDOFF * 1.000001
    for value, k in zip(values, bins, strict=True):
        exact = _exact_transform(pmf.offset, masses, int(k), length)
        assert abs(mpmath.mpc(_exact(value.real), _exact(value.imag)) - exact) <= bound


@pytest.mark.parametrize(
    "bound,search_points,search_all,chunk",
    [
        ("upper", 64, 4096, 1024),
        ("upper", 64, 0, 1024),
        ("upper", 2, 0, 1024),
        ("lower", 64, 4096, 1024),
        ("lower", 64, 4096, 7),
    ],
)
def test_one_pass_epsilon_matches_bisection(bound, search_points, search_all, chunk, monkeypatch):
    """eps(delta) in one pass: valid (verified against delta) and as tight as a bisection,
    whatever the search's points per round and the lower maxima's chunk."""
    monkeypatch.setattr(loss_pmf, "_SEARCH_POINTS", search_points)
    monkeypatch.setattr(loss_pmf, "_SEARCH_ALL", search_all)
    monkeypatch.setattr(loss_pmf, "_MAXIMA_CHUNK", chunk)
    masses = _random_masses(2000, 4) * (1 - 1e-4)
    pmf = LossPmf(
        2e-3,
        -700,
        masses,
        1e-4 if bound == "upper" else 0.0,
        bound,
        junk_mass=1e-13 if bound == "lower" else 0.0,
        error_max=1e-17,
        error_l1=1e-14,
        loss_error=1e-12,
        mass_error=1e-12,
    )
    targets = np.array([0.5, 0.1, 1e-2, 1e-3, 2e-4, 1.0001e-4])
    found = pmf.epsilon(targets)
    for target, eps in zip(targets, found, strict=True):
        assert pmf.epsilon(float(target)) == eps
        value = pmf.delta(np.array([eps]))[0]
        if bound == "upper":
            assert value <= target
        else:
            assert value > target or eps == 0.0
        low, high = 0.0, 4.0
        for _ in range(80):
            middle = (low + high) / 2
            if pmf.delta(np.array([middle]))[0] <= target:
                high = middle
            else:
                low = middle
        assert abs(eps - high) <= 1e-10 * max(1.0, high)
    if bound == "upper":
        assert pmf.epsilon(0.5e-4) == math.inf


def test_hot_bin_paths_agree(monkeypatch):
    """Direct sums, sliced sums, the pruned FFT and the extended FFT give the same composition."""
    one = pld.clones(2000, 1.0)
    results = []
    for chosen in ("_DIRECT_COST", "_SLICED_COST", "_COLUMNS_COST", "_FFT_COST"):
        for name in ("_DIRECT_COST", "_SLICED_COST", "_COLUMNS_COST", "_FFT_COST"):
            monkeypatch.setattr(hot_bins, name, 0.0 if name == chosen else math.inf)
        results.append(one.self_compose(300))
    for eps in (0.5, 1.0, 1.5):
        brackets = [loss.delta_bounds(eps) for loss in results]
        assert max(b[0] for b in brackets) <= min(b[1] for b in brackets)
        uppers = [b[1] for b in brackets]
        assert max(uppers) - min(uppers) <= 1e-13 + 1e-9 * max(uppers)


@pytest.mark.parametrize("bound", ["upper", "lower"])
def test_error_floor_bounds_the_slack(bound):
    """What a query adds or subtracts beyond the exact hockey stick is at most the floor."""
    masses = _random_masses(3000, 5)
    pmf = LossPmf(
        1e-3,
        -1000,
        masses,
        0.0,
        bound,
        junk_mass=2e-15 if bound == "lower" else 0.0,
        error_max=3e-18,
        error_l1=4e-14,
    )
    assert pmf.error_floor == pytest.approx(3e-18 * 3000 + pmf.junk_mass, rel=1e-12)
    losses = pmf.losses
    for eps in (0.0, 0.4, 1.1, 1.9):
        exact = math.fsum(masses * np.maximum(0.0, -np.expm1(eps - losses)))
        # The query's own summation slack is relative to the mass beyond eps.
        relative = (pmf._summation_error + 10 * U) * math.fsum(masses[losses > eps])
        value = pmf.delta(np.array([eps]))[0]
        if bound == "upper":
            assert exact <= value <= exact + pmf.error_floor + relative
        else:
            assert max(0.0, exact - pmf.error_floor - relative) <= value <= exact


def test_all_mass_at_infinity():
    """Disjoint supports: no finite atoms; delta is the mass at +inf, before and after composing."""
    with np.errstate(divide="ignore"):
        loss = pld.from_pmfs(np.log([1.0, 0.0]), np.log([0.0, 1.0]))
    for composed in (loss, loss.self_compose(3), pld.compose(loss, pld.randomized_response(1.0))):
        lower, upper = composed.delta_bounds(np.array([0.0, 1.0, 50.0]))
        assert np.all(lower >= 1.0 - 1e-14) and np.all(upper == 1.0)
        assert composed.epsilon_bounds(0.5) == (math.inf, math.inf)
        assert composed.epsilon_bounds(1.0) == (0.0, 0.0)


def test_window_shortcuts_keep_the_window(monkeypatch):
    """The lower bound's hinted window and the end-mass shortcut match the full search.

    Gaussian(2) after 10 rounds: the lower pmf's window from the upper one's two
    best exponents is within 0.1 % of its own full search; the subsampled
    Gaussian's lower end after 2 rounds (its end point, 2.6e-15, holds more than
    the tail target) is the support's end, exactly what the exact MGF finds.
    """
    from pld.engine import tails

    direction = pld.gaussian(2.0)._directions[0]
    upper, lower = direction.upper, direction.lower
    window = tails.composition_window([(upper.offset, upper.masses)], [10], upper.step, 1e-15)
    full = tails.composition_window([(lower.offset, lower.masses)], [10], lower.step, 1e-15)
    hinted = tails.composition_window(
        [(lower.offset, lower.masses)], [10], lower.step, 1e-15, (window.t_up, window.t_down)
    )
    width = full.high - full.low + 1
    assert abs(hinted.low - full.low) + abs(hinted.high - full.high) <= 1e-3 * width
    assert hinted.mass_above <= 1e-15 and hinted.mass_below <= 1e-15

    pmf = pld.subsampled_gaussian(1.0, 0.01)._directions[0].upper
    factors = [(pmf.offset, pmf.masses)]
    short = tails.composition_window(factors, [2], pmf.step, 1e-15)
    assert short.low == 2 * pmf.offset and short.mass_below == 0.0
    monkeypatch.setattr(tails, "_end_mass_exceeds", lambda *args: False)
    searched = tails.composition_window(factors, [2], pmf.step, 1e-15)
    assert (searched.low, searched.high) == (short.low, short.high)


@pytest.mark.parametrize("offset,step", [(-70_001, 1e-4), (3, 2.5e-4), (-12_345, 1.0 / 3.0)])
def test_arithmetic_grid_index_is_searchsorted(offset, step):
    """Large grids locate indices without building their losses: the same indices as
    ``np.searchsorted(losses, ...)`` at grid values, a few ulps off them, between
    them, beyond both ends, at +-inf and NaN."""
    size = loss_pmf._LOSSES_BUILT + 5000
    pmf = LossPmf(step, offset, np.full(size, 1.0 / size), 0.0, "upper")
    losses = (offset + np.arange(size)) * step
    picks = np.random.default_rng(5).integers(0, size, 300)
    grid = losses[picks]
    values = np.concatenate(
        [
            grid,
            np.nextafter(grid, np.inf),
            np.nextafter(grid, -np.inf),
            grid + step / 2,
            losses[[0, -1]],
            losses[[0, -1]] + np.array([-step, step]),
            [np.inf, -np.inf, np.nan, 0.0, -0.0],
        ]
    )
    for side in ("left", "right"):
        assert "losses" not in pmf.__dict__
        found = pmf._index(values, side)
        np.testing.assert_array_equal(found, np.searchsorted(losses, values, side=side))
        one = [pmf._index_one(float(value), side) for value in values]
        np.testing.assert_array_equal(one, found)
    np.testing.assert_array_equal(pmf._loss_at(picks), grid)


@pytest.mark.parametrize(
    "step,size", [(1e-3, 20_000), (0.75, 20_000), (1e-3, kernels.COMPILED_SIZE + 7_000)]
)
def test_suffix_sums_from_the_top_are_the_whole_grids(step, size):
    """Suffix sums computed from the top down, as far as queries need, are the sums
    of the whole grid (blocks aligned at the top; block 1024, and 800 which does not
    divide the first segment; numpy and compiled), bit for bit, whatever the order
    of the requests."""
    masses = _random_masses(size, 6)
    whole_mass, whole_weighted = kernels.suffix_sums(
        masses, step, LossPmf(step, 0, masses, 0.0, "upper")._block
    )
    for starts in ([size - 10, 15_000, 3_000, 0], [0], [12_345, 12_344, 0]):
        pmf = LossPmf(step, -7_000, masses, 0.0, "upper")
        for start in starts:
            first, mass_tail, weighted_tail = pmf._suffix_from(start)
            assert first <= start
            np.testing.assert_array_equal(mass_tail, whole_mass[first:])
            np.testing.assert_array_equal(weighted_tail, whole_weighted[first:])


def test_queries_on_a_large_grid_do_not_depend_on_their_order():
    """A grid beyond the compiled-kernel size computes its suffix sums and lower
    maxima in segments: equal pmfs queried in different orders give the same bits,
    and the bounds bracket the hockey stick summed exactly."""
    masses = _random_masses(70_000, 7)
    step, offset = 1e-4, -30_000
    eps = np.array([-1.0, 0.0, 0.5, 1.5, 2.5, 3.9])
    deltas = np.array([0.5, 1e-3, 1e-6, 1e-9])
    answers = []
    for order in (slice(None), slice(None, None, -1)):
        pmfs = {b: LossPmf(step, offset, masses, 0.0, b) for b in ("upper", "lower")}
        found = {}
        for b, pmf in pmfs.items():
            for value in eps[order]:
                found[(b, "delta", value)] = pmf.delta(np.array([value]))[0]
            for value in deltas[order]:
                found[(b, "eps", value)] = pmf.epsilon(float(value))
        answers.append(found)
    assert answers[0] == answers[1]
    losses = (offset + np.arange(masses.size)) * step
    for value in eps:
        weights = np.maximum(-np.expm1(value - losses), 0.0)
        exact = math.fsum((masses * weights).tolist())
        upper, lower = answers[0][("upper", "delta", value)], answers[0][("lower", "delta", value)]
        assert lower <= exact <= upper
        # The width is the stated summation bound on each side (total mass 1).
        assert upper - lower <= 2.5 * LossPmf(step, offset, masses, 0.0, "upper")._summation_error


def test_a_copy_with_other_error_terms_shares_the_suffix_sums_only():
    """``with_terms`` keeps the masses' suffix sums (not the bound's maxima): its
    queries equal those of a fresh pmf with the same fields."""
    import dataclasses

    masses = _random_masses(30_000, 8)
    eps = np.array([-0.5, 0.0, 0.3, 2.0])
    for bound in ("upper", "lower"):
        pmf = LossPmf(1e-4, -9_000, masses, 1e-9, bound, junk_mass=1e-12, error_l1=1e-13)
        pmf.delta(eps)
        changes = {"error_l1": 0.0, "junk_mass": 0.0, "infinity_mass": 2e-9}
        copy = pmf.with_terms(**changes)
        assert copy._suffixes is pmf._suffixes
        fresh = dataclasses.replace(pmf, **changes)
        np.testing.assert_array_equal(copy.delta(eps), fresh.delta(eps))
        assert copy.epsilon(1e-6) == fresh.epsilon(1e-6)


def _nudge_one_step_at_a_time(pmf, candidate, target, fallback, upward):
    """The nudge as first written: move, clamp, verify, one step at a time."""
    candidate = candidate.copy()

    def failing(values, goal):
        bound = pmf.delta(values)
        return bound > goal if upward else (bound <= goal) & (values > 0.0)

    bad = np.flatnonzero(failing(candidate, target))
    step = 4 * U * np.maximum(1.0, np.abs(candidate))
    for _ in range(loss_pmf._MAX_NUDGES):
        if bad.size == 0:
            break
        moved = candidate[bad] + (step[bad] if upward else -step[bad])
        clamp = np.minimum if upward else np.maximum
        candidate[bad] = np.maximum(clamp(moved, fallback[bad]), 0.0)
        step[bad] *= loss_pmf._NUDGE_GROWTH
        bad = bad[failing(candidate[bad], target[bad])]
    return candidate, bad


@pytest.mark.parametrize("bound", ["upper", "lower"])
def test_nudge_ladder_is_the_one_step_walk(bound):
    """The nudges verified as a ladder in one evaluation land on the same floats as
    moving and verifying one step at a time, for candidates that pass at once,
    after a few moves, at the clamp, or not at all within the ladder."""
    masses = _random_masses(3000, 12) * (1 - 1e-6)
    pmf = LossPmf(
        1e-3,
        -1200,
        masses,
        1e-6,
        bound,
        error_max=1e-17,
        error_l1=1e-13,
        loss_error=1e-12,
        mass_error=1e-12,
    )
    rng = np.random.default_rng(13)
    targets = 10.0 ** rng.uniform(-7, -0.5, 300)
    exact = pmf.epsilon(targets)
    finite = np.isfinite(exact) & (exact > 0)
    targets, exact = targets[finite], exact[finite]
    # Candidates around the verified answers: a few ulps to 1e-6 relative either side.
    offsets = rng.choice([-1e-6, -1e-10, -1e-13, -4 * U, 0.0, 4 * U, 1e-12], targets.size)
    candidate = exact * (1 + offsets)
    fallback = exact * (
        1 + rng.choice([1e-14, 1e-9, 1e-3], targets.size) * (1 if bound == "upper" else -1)
    )
    upward = bound == "upper"
    walked, still = _nudge_one_step_at_a_time(pmf, candidate, targets, fallback, upward)
    ladder = pmf._nudge(candidate, targets, fallback, upward=upward)
    keep = np.setdiff1d(np.arange(targets.size), still)
    np.testing.assert_array_equal(ladder[keep], walked[keep])
    moved = np.flatnonzero(ladder != candidate)
    assert moved.size > 10 and keep.size > 0.9 * targets.size


def test_search_of_one_target_is_the_search_of_many():
    """The breakpoint search of one target (its own loop) finds what the search of an
    array of targets finds for it, however different their brackets."""
    masses = _random_masses(50_000, 14)
    pmf = LossPmf(1e-4, -20_000, masses, 0.0, "upper", error_l1=1e-14)
    targets = np.array([0.3, 1e-3, 1e-6, 1e-9, 1e-12])
    low = np.array([-1, 10, 20_000, 29_000, 40_000])
    high = np.full(targets.size, masses.size)
    many = pmf._first_at_or_below(targets, low, high)
    for i in range(targets.size):
        alone = pmf._first_at_or_below(targets[i : i + 1], low[i : i + 1], high[i : i + 1])
        assert alone[0] == many[i]
        assert pmf._first_at_or_below_one(float(targets[i]), low[i], high[i]) == many[i]


@pytest.mark.parametrize("bound", ["upper", "lower"])
def test_delta_of_one_eps_is_its_value_in_an_array(bound):
    """One eps is answered in Python floats: bit for bit its value in an array, on grid
    points, between them, beyond both ends and where the error terms dominate."""
    masses = _random_masses(5000, 15) * (1 - 1e-7)
    pmf = LossPmf(
        1e-3,
        -2000,
        masses,
        1e-7 if bound == "upper" else 0.0,
        bound,
        junk_mass=1e-14 if bound == "lower" else 0.0,
        error_max=1e-18,
        error_l1=1e-13,
        loss_error=1e-12,
        mass_error=1e-12,
    )
    rng = np.random.default_rng(16)
    grid = (pmf.offset + rng.integers(0, masses.size, 200)) * pmf.step
    eps = np.concatenate([grid, grid + 1e-12, rng.uniform(-3.0, 3.5, 300), [-50.0, 0.0, 40.0]])
    together = pmf.delta(eps)
    alone = np.array([pmf.delta(np.array([value]))[0] for value in eps])
    np.testing.assert_array_equal(alone, together)
    assert np.count_nonzero(together) > 100


@pytest.mark.parametrize("bound", ["upper", "lower"])
@pytest.mark.parametrize("infinity", [0.0, 3e-9])
def test_epsilon_of_one_delta_is_its_value_in_an_array(bound, infinity):
    """One delta is answered in Python floats: bit for bit its value in an array, from
    delta = 1 to below the mass at +inf and the error floor."""
    masses = _random_masses(6000, 18) * (1 - infinity)
    pmf = LossPmf(
        5e-4,
        -2500,
        masses,
        infinity if bound == "upper" else 0.0,
        bound,
        junk_mass=1e-15 if bound == "lower" else 0.0,
        error_max=1e-18,
        error_l1=1e-13,
        loss_error=1e-12,
        mass_error=1e-12,
    )
    rng = np.random.default_rng(19)
    targets = np.concatenate([10.0 ** rng.uniform(-16, 0, 200), [1.0, 0.5, infinity or 1e-300]])
    together = pmf.epsilon(targets)
    alone = np.array([pmf.epsilon(float(target)) for target in targets])
    np.testing.assert_array_equal(alone, together)
    assert np.count_nonzero(np.isfinite(together) & (together > 0)) > 100


def test_placed_transform_folds_a_long_pmf():
    """``rfft_placed`` of masses longer than the length adds the rest a row at a time
    onto the placed ones: the transform of the folded vector (np.add.at), within
    the FFT's bound (8 u log2 N of the 1-norm plus the fold's (w - 1) u)."""
    rng = np.random.default_rng(12)
    masses = rng.random(2350)
    for length, start in ((1000, 0), (1000, 937), (960, 500)):
        folded = np.zeros(length)
        np.add.at(folded, (start + np.arange(masses.size)) % length, masses)
        expected = np.fft.rfft(folded)
        placed = fft.rfft_placed(masses, start, length).copy()
        rows = -(-(start + masses.size) // length)
        bound = (8 * math.log2(length) + rows) * 2.0**-53 * masses.sum()
        assert np.max(np.abs(placed - expected)) <= 2 * bound


def test_sliced_sums_of_a_long_support_run_in_the_largest_block():
    """On a long support the sliced sums chosen in blocks of 128 or 256 run in blocks
    of 512 (fewer outer terms, no larger bound); on a short one the chosen block
    stays (the larger table of twiddle slices would cost more than it saves)."""
    long_pmf = LossPmf(1e-3, 0, _random_masses(41_385, 13), 0.0, "upper")
    short_pmf = LossPmf(1e-3, 0, _random_masses(3000, 14), 0.0, "upper")
    for block in (128, 256):
        method = ("sliced", block, False, False)
        assert hot_bins._largest_block(method, long_pmf) == ("sliced", 512, False, False)
        assert hot_bins._largest_block(method, short_pmf) == method
    assert hot_bins._largest_block(("direct", 0), long_pmf) == ("direct", 0)
    bins = np.arange(24)
    unit = fft.EXTENDED_UNIT_ROUNDOFF * hot_bins.mass_bound(long_pmf)
    _, chosen = hot_bins.extended_spectrum(long_pmf, 67_500, bins)
    _, in_256 = hot_bins._sliced_spectrum(long_pmf, 67_500, bins, 256)
    # 31 units and the outer tree's depth: 81 blocks of 512 (7), 162 of 256 (8)
    assert chosen / unit == pytest.approx(38, rel=1e-9)
    assert in_256 / unit == pytest.approx(39, rel=1e-9)


@pytest.mark.parametrize("backend", ["pyfftw", "scipy"])
def test_inverse_transform_window_is_the_whole_transforms_entries(backend, monkeypatch):
    """``irfft_sparse`` with a window returns the entries ``(start + j) mod N`` of the
    whole inverse transform bit for bit, wrapping around or not, with all bins or
    a few, on either backend."""
    if backend == "pyfftw" and fft.backend() != "pyfftw":
        pytest.skip("pyFFTW is not installed")
    monkeypatch.setattr(fft, "backend", lambda: backend)
    rng = np.random.default_rng(15)
    length = 960
    spectrum = fft.rfft(rng.random(length))
    for indices in (None, np.arange(3, 40), np.array([0, 5, 17, 200])):
        values = spectrum if indices is None else spectrum[indices]
        whole = fft.irfft_sparse(indices, values, length)
        assert whole.shape == (length,)
        for start, width in ((0, length), (100, 500), (700, 500), (-5, 300), (959, 960)):
            window = fft.irfft_sparse(indices, values, length, start, width)
            expected = whole[(start + np.arange(width)) % length]
            np.testing.assert_array_equal(window, expected)


def test_sliced_sums_beyond_the_workspace_are_the_same(monkeypatch):
    """Slices too large for the reused workspace go into a new array: the same sums
    bit for bit, and a later call within the workspace is not disturbed by them."""
    pmf = LossPmf(1e-3, -300, _random_masses(5000, 16), 0.0, "upper")
    other = LossPmf(1e-3, 40, _random_masses(900, 17), 0.0, "upper")
    bins = np.arange(10)
    within = hot_bins._sliced_spectrum(pmf, 6000, bins, 512)
    small = hot_bins._sliced_spectrum(other, 6000, bins, 512)
    monkeypatch.setattr(hot_bins, "_WORKSPACE_SIZE", 4 * 512 * 3)
    beyond = hot_bins._sliced_spectrum(pmf, 6000, bins, 512)
    assert beyond[1] == within[1]
    np.testing.assert_array_equal(beyond[0], within[0])
    again = hot_bins._sliced_spectrum(other, 6000, bins, 512)
    np.testing.assert_array_equal(again[0], small[0])
