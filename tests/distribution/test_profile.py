"""Connect-the-dots pairs from privacy profiles (pld.distribution.profile).

Truths: the randomised-response pair (its profile is piecewise linear, so the
connect-the-dots pair must give it back exactly), the Gaussian profile of Balle &
Wang (2018, Thm 8) in closed form, and direct sums ``sum (p - alpha q)_+``
written here, independent of the library's evaluation.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import norm

import pld
from pld.distribution.profile import (
    PROFILE_TOLERANCE,
    below_every_profile,
    connect_the_dots,
    lower_envelope,
    pair_from_hull,
    profile_hull,
)

EPS0 = 1.0
P_TRUE = math.exp(EPS0) / (1 + math.exp(EPS0))

# Profile values computed in float64 carry a few ulps of error; masses from second
# differences of them are then off by ~1e-16 / (grid spacing in alpha) at most.
FLOAT_TOLERANCE = 1e-14


def rr_profile(eps: np.ndarray) -> np.ndarray:
    """H_{e^eps} of the pair P = (p, 1-p), Q = (1-p, p): max over both outcomes."""
    alpha = np.exp(np.asarray(eps, dtype=float))
    return np.maximum(P_TRUE - alpha * (1 - P_TRUE), 0) + np.maximum(
        (1 - P_TRUE) - alpha * P_TRUE, 0
    )


def gaussian_profile(eps: np.ndarray, mu: float = 1.0) -> np.ndarray:
    """Balle & Wang (2018, Thm 8): Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)."""
    eps = np.asarray(eps, dtype=float)
    return norm.cdf(-eps / mu + mu / 2) - np.exp(eps) * norm.cdf(-eps / mu - mu / 2)


def direct_hockey_stick(pair, eps: np.ndarray) -> np.ndarray:
    """sum over atoms of (p - alpha q)_+ plus the P-mass at +inf, one eps at a time."""
    p, q = pair.p_mass, pair.q_mass
    return np.array(
        [math.fsum(np.maximum(p - math.exp(e) * q, 0.0)) + pair.p_infinity for e in eps]
    )


def test_randomized_response_is_recovered_exactly() -> None:
    grid = np.linspace(-2.0, 2.0, 41)  # contains +-eps0 = +-1: every kink of the profile
    pair = connect_the_dots(grid, rr_profile(grid))
    big = pair.p_mass > 1e-10
    np.testing.assert_allclose(pair.loss[big], [-EPS0, EPS0], rtol=0, atol=1e-15)
    np.testing.assert_allclose(pair.p_mass[big], [1 - P_TRUE, P_TRUE], rtol=1e-14)
    np.testing.assert_allclose(pair.q_mass[big], [P_TRUE, 1 - P_TRUE], rtol=1e-14)
    # Everything else is float dust of the profile values (ulps of 1).
    assert pair.p_mass[~big].sum() + pair.p_infinity < FLOAT_TOLERANCE
    assert pair.q_mass[~big].sum() + pair.q_minus_infinity < FLOAT_TOLERANCE


@pytest.mark.parametrize(
    ("profile", "grid"),
    [
        (rr_profile, np.linspace(-1.6, 1.6, 9)),  # kinks at +-1 fall between grid points
        (gaussian_profile, np.linspace(-3.0, 3.0, 25)),
        (gaussian_profile, np.array([-0.3, 0.1, 0.2, 1.7])),  # irregular, one-sided range
    ],
)
def test_pair_matches_profile_on_grid_and_dominates_between(profile, grid) -> None:
    pair = connect_the_dots(grid, profile(grid))
    assert math.fsum(pair.p_mass) + pair.p_infinity == pytest.approx(1.0, abs=FLOAT_TOLERANCE)
    assert math.fsum(pair.q_mass) + pair.q_minus_infinity == pytest.approx(1.0, abs=FLOAT_TOLERANCE)
    assert np.all(pair.p_mass >= 0) and np.all(pair.q_mass >= 0)
    np.testing.assert_allclose(direct_hockey_stick(pair, grid), profile(grid), rtol=0, atol=1e-15)
    fine = np.linspace(grid[0] - 2.0, grid[-1] + 2.0, 4001)
    excess = direct_hockey_stick(pair, fine) - profile(fine)
    assert excess.min() >= -1e-15
    # The gap is real between grid points (the test would see a pair that is too tight).
    assert excess.max() > 1e-4


def test_gaussian_gap_shrinks_with_square_of_spacing() -> None:
    gaps = []
    for points in (31, 61, 121, 241):
        grid = np.linspace(-3.0, 3.0, points)
        pair = connect_the_dots(grid, gaussian_profile(grid))
        inside = np.linspace(-3.0, 3.0, 20011)
        gaps.append(np.max(direct_hockey_stick(pair, inside) - gaussian_profile(inside)))
    ratios = np.array(gaps[:-1]) / np.array(gaps[1:])
    # Linear interpolation of a C^2 function: error ~ h^2 |H''| / 8, so halving h
    # divides it by 4 (up to the discrete sampling of where the maximum is).
    np.testing.assert_allclose(ratios, 4.0, rtol=0.1)
    assert gaps[-1] < 1e-4


def test_lower_side_is_below_the_interpolant() -> None:
    grid = np.linspace(-2.0, 2.0, 21)
    exact = gaussian_profile(grid)
    lowered = exact * (1 - 0.05 * np.cos(7 * grid) ** 2)  # below the profile, not convex
    lower = connect_the_dots(grid, lowered, side="lower")
    upper = connect_the_dots(grid, exact)
    fine = np.linspace(-4.0, 4.0, 8001)
    assert np.all(direct_hockey_stick(lower, fine) <= direct_hockey_stick(upper, fine) + 1e-15)
    # Values below 1 - alpha are first raised to it (every profile is above it).
    floor = np.maximum(lowered, 1 - np.exp(grid))
    assert np.all(direct_hockey_stick(lower, grid) <= floor + 1e-15)


def test_hull_repairs_round_off_and_keeps_upper_bounds() -> None:
    grid = np.linspace(-2.0, 2.0, 401)
    exact = gaussian_profile(grid)
    rng = np.random.default_rng(5)
    noisy = exact * (1 + 1e-12 * rng.random(grid.size))  # upper bounds, not quite convex
    vertices, hull = profile_hull(grid, noisy)
    hull = hull.astype(float)
    assert np.all(hull >= exact - 1e-16)  # still above the convex truth
    assert np.all(hull <= noisy + 1e-16)
    assert np.max(noisy - hull) < PROFILE_TOLERANCE


def test_from_privacy_profile_through_the_engine() -> None:
    grid = np.linspace(-3.0, 3.0, 601)  # grid points on the engine's 1e-3 loss grid
    loss = pld.from_privacy_profile(gaussian_profile, grid)
    eps = np.array([-1.0, 0.0, 0.37, 1.0, 2.0, 2.5])
    lower, upper = loss.delta_bounds(eps)
    truth = gaussian_profile(eps)
    assert np.all(upper >= truth)
    # Off-grid eps add the interpolation gap (< 1e-4 at this spacing, see above).
    np.testing.assert_allclose(upper, truth, rtol=0, atol=1e-4)
    assert np.all(lower <= upper)


def lattice_composition_delta(pair, spacing: float, rounds: int, eps: float) -> float:
    """Exact delta(eps) of ``rounds`` compositions of a pair with losses on ``k * spacing``.

    The composed loss pmf is the ``rounds``-fold convolution of the P-masses on the
    integer lattice; the P-mass at +inf after T rounds is ``1 - (1 - p_inf)^T``.
    """
    index = np.rint(pair.loss / spacing).astype(int)
    np.testing.assert_allclose(index * spacing, pair.loss, rtol=0, atol=1e-12)
    offset = index.min()
    masses = np.zeros(index.max() - offset + 1)
    np.add.at(masses, index - offset, pair.p_mass)
    composed = np.array([1.0])
    for _ in range(rounds):
        composed = np.convolve(composed, masses)
    loss = (np.arange(composed.size) + rounds * offset) * spacing
    finite = math.fsum(composed * np.maximum(-np.expm1(eps - loss), 0.0))
    return finite + -math.expm1(rounds * math.log1p(-pair.p_infinity))


def test_composition_against_exact_lattice_sum_and_dp_accounting() -> None:
    dp_pld = pytest.importorskip("dp_accounting.pld.privacy_loss_distribution")
    grid = np.linspace(-2.0, 2.0, 41)  # losses on the lattice k / 10
    pair = connect_the_dots(grid, gaussian_profile(grid, mu=0.5))
    ours = pld.from_privacy_profile(lambda e: gaussian_profile(e, mu=0.5), grid)
    log_p, log_q = pair.log_pmfs()
    keep_p, keep_q = np.isfinite(log_p), np.isfinite(log_q)
    theirs = dp_pld.from_two_probability_mass_functions(
        {i: float(v) for i, v in enumerate(log_q) if keep_q[i]},
        {i: float(v) for i, v in enumerate(log_p) if keep_p[i]},
        value_discretization_interval=1e-4,
    )
    rounds = 10
    composed = ours.self_compose(rounds)
    theirs = theirs.self_compose(rounds)
    for eps in (0.5, 1.0, 2.0):
        exact = lattice_composition_delta(pair, 0.1, rounds, eps)
        lower, upper = composed.delta_bounds(eps)
        # The atoms sit on the engine's loss grid, so only FFT round-off and the
        # 1e-15 tail budget separate the bounds from the exact value.
        assert lower - 1e-9 <= exact <= upper <= exact + 1e-9
        # dp_accounting rounds every loss up to its 1e-4 grid: above, within 0.1 %.
        reference = theirs.get_delta_for_epsilon(eps)
        assert exact <= reference <= exact * (1 + 1e-3)


def test_scalar_only_callable_is_accepted() -> None:
    grid = np.linspace(-1.0, 1.0, 11)

    def scalar_profile(eps: float) -> float:
        return float(gaussian_profile(np.array([math.fsum([eps])]))[0])

    vectorised = pld.from_privacy_profile(gaussian_profile, grid)
    one_by_one = pld.from_privacy_profile(scalar_profile, grid)
    eps = np.array([0.0, 0.55])
    np.testing.assert_allclose(one_by_one.delta(eps), vectorised.delta(eps), rtol=1e-12)


@pytest.mark.parametrize(
    ("grid", "values", "message"),
    [
        ([0.0, 0.0, 1.0], [0.5, 0.4, 0.1], "strictly increasing"),
        ([0.0, 1.0], [0.5, 1.5], r"\[0, 1\]"),
        ([0.0, 1.0], [0.5, np.nan], r"\[0, 1\]"),
        ([0.0, 800.0], [0.5, 0.0], "700"),
        ([0.0, 0.5, 1.0], [0.1, 0.3, 0.0], "privacy profile"),  # increasing: not a profile
        ([-1.0, 0.0, 1.0], [0.3, 0.2, 0.0], "privacy profile"),  # below 1 - alpha at eps = -1
    ],
)
def test_invalid_input_is_rejected(grid, values, message) -> None:
    table = dict(zip(grid, values, strict=True))
    with pytest.raises(ValueError, match=message):
        pld.from_privacy_profile(lambda e: np.array([table[x] for x in e]), grid)


def test_connect_the_dots_rejects_unknown_side() -> None:
    with pytest.raises(ValueError, match="side"):
        connect_the_dots([0.0], [0.1], side="middle")


@pytest.mark.parametrize("mu, slack", [(1.0, 0.0), (0.5, 1e-3), (2.0, 1e-2)])
def test_values_below_every_profile_in_the_bracket(mu, slack) -> None:
    # The Gaussian profile (analytic) bracketed at 25 grid points by [H (1 - slack), H];
    # the lowered values' pair must lie below H at every alpha (dense check), and
    # within a few times the connect-the-dots excess of it.
    grid = np.linspace(-3.0, 3.0, 25)
    exact = gaussian_profile(grid, mu)
    values = below_every_profile(grid, exact * (1 - slack), exact)
    vertices, hull = profile_hull(grid, values.astype(np.float64))
    pair = pair_from_hull(grid, vertices, hull, "lower")
    dense = np.linspace(-4.0, 4.0, 4001)
    below = pair.hockey_stick(np.exp(dense))
    assert np.all(below <= gaussian_profile(dense, mu) + FLOAT_TOLERANCE)
    upper = connect_the_dots(grid, exact).hockey_stick(np.exp(dense))
    excess = float(np.max(upper - gaussian_profile(dense, mu)))
    shortfall = float(np.max((gaussian_profile(dense, mu) - below)[np.abs(dense) <= 3.0]))
    # Measured: 1.7 to 3.9 times (excess + slack): the bound allows for a kink of H
    # anywhere in an interval; 5 allowed.
    assert shortfall <= 5 * (excess + slack)


def _symmetric_rule(eps, low, up):
    """The values of the rule the lowering replaced, unclipped: each lower value less
    the larger excess of its two intervals (below_every_profile's docstring)."""
    alpha = np.concatenate(([0.0], np.exp(eps)))
    lo = np.concatenate(([1.0], np.minimum(low, up)))
    hi = np.concatenate(([1.0], up))
    widths = np.diff(alpha)
    chord = np.diff(lo) / widths
    left = np.concatenate(([-1.0], (lo[1:-1] - hi[:-2]) / widths[:-1]))
    right = np.concatenate(((hi[2:] - lo[1:-1]) / widths[1:], [0.0]))
    over, under = np.maximum(chord - left, 0), np.maximum(right - chord, 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        excess = np.where(over + under > 0, widths * over * under / (over + under), 0)
    return lo[1:] - np.maximum(excess, np.append(excess[1:], 0))


def _interval_floors(alpha, low, up, x):
    """The larger of each interval's two lines (below_every_profile's docstring) and of
    its right end's lower value (a profile is non-increasing), at the fractions ``x``
    of each interval: the lowest a profile in the bracket can be there."""
    a = np.concatenate(([0.0], alpha))
    lo = np.concatenate(([1.0], np.minimum(low, up)))
    hi = np.concatenate(([1.0], up))
    floors = []
    for k in range(alpha.size):
        left_slope = -1.0 if k == 0 else (lo[k] - hi[k - 1]) / (a[k] - a[k - 1])
        if k + 2 < a.size:
            right_slope = (hi[k + 2] - lo[k + 1]) / (a[k + 2] - a[k + 1])
        else:
            right_slope = 0.0
        points = a[k] + x * (a[k + 1] - a[k])
        line1 = lo[k] + left_slope * (points - a[k]) if k else 1.0 - points
        line2 = lo[k + 1] + right_slope * (points - a[k + 1])
        floors.append(np.maximum(np.maximum(line1, line2), max(lo[k + 1], 0.0)))
    return floors


@pytest.mark.parametrize("widest", [1.0, 3.4])
def test_lowered_chords_clear_the_extreme_profiles_and_never_lower_more(widest) -> None:
    """On random brackets (a convex decreasing profile's values widened by up to e or
    30 times at some points): every chord of the lowered values lies below the larger
    of its interval's two lines, the lowest any profile in the bracket can be there
    (values lowered to 0 included); where no value reaches 0, none is lowered by more
    than the larger excess of its two intervals (the symmetric rule this one
    replaced)."""
    rng = np.random.default_rng(3)
    x = np.linspace(0.0, 1.0, 201)
    compared = 0
    for _ in range(200):
        size = int(rng.integers(5, 30))
        eps = np.sort(rng.uniform(0.0, 4.0, size))
        eps = eps[np.concatenate(([True], np.diff(eps) > 1e-3))]
        exact = gaussian_profile(eps, float(rng.uniform(0.3, 3.0)))
        widen = np.exp(rng.uniform(0.0, 1.0, eps.size) * rng.choice([0.05, widest], eps.size))
        low = exact / widen
        up = np.minimum(exact * np.exp(rng.uniform(0.0, 0.5, eps.size)), 1.0)
        values = below_every_profile(eps, low, up).astype(np.float64)
        alpha = np.exp(eps)
        ends = np.concatenate(([1.0], values))
        grid = np.concatenate(([0.0], alpha))
        for k, floor in enumerate(_interval_floors(alpha, low, up, x)):
            if k == 0:
                continue  # the anchor's interval: the first value is 1 - alpha exactly
            chord = ends[k] + x * (ends[k + 1] - ends[k])
            assert np.all(chord <= floor + 1e-15 * (1 + grid[k + 1])), (k, eps)
        raw = _symmetric_rule(eps, low, up)
        if np.any(raw[1:] <= 0):
            # A value lowered to 0 there: the symmetric rule's chord into it could rise
            # above the lines (the rule now lowers its left neighbour for it).
            continue
        symmetric = np.clip(raw * (1 - 1e-12), 0, 1)
        symmetric[-1] = min(symmetric[-1], 0.0)
        symmetric[0] = max(1 - alpha[0], 0)
        assert np.all(values >= symmetric * (1 - 1e-12))
        compared += 1
    if widest <= 1.0:
        assert compared >= 10  # measured: 18 of the 200 brackets reach no 0


def test_a_wide_bracket_costs_its_neighbours_less() -> None:
    """One wide bracket on a regular grid (its lower value 30 times below the profile,
    the upper value before it 1.5 times above): the symmetric rule lowered the point
    before it to 0.78 of its value; now it keeps all of it, and no value is lower."""
    eps = np.linspace(0.0, 3.0, 13)
    exact = gaussian_profile(eps, 1.0)
    low, up = exact.copy(), exact.copy()
    low[9] /= 30
    up[8] *= 1.5
    values = below_every_profile(eps, low, up).astype(np.float64)
    assert values[8] >= 0.99 * exact[8]
    symmetric = _symmetric_rule(eps, low, up)
    assert symmetric[8] <= 0.8 * exact[8]
    assert np.all(values[1:-1] >= symmetric[1:-1] * (1 - 1e-11))


def test_lower_envelope_is_below_both_curves_where_they_cross() -> None:
    grid = np.linspace(-3.0, 3.0, 25)
    first, second = gaussian_profile(grid, 1.0), rr_profile(grid)
    values = lower_envelope(grid, [first, second])
    vertices, hull = profile_hull(grid, values.astype(np.float64))
    pair = pair_from_hull(grid, vertices, hull, "lower")
    dense = np.linspace(-3.0, 3.0, 6001)
    both = np.minimum(connect_the_dots(grid, first).hockey_stick(np.exp(dense)), rr_profile(dense))
    assert np.all(pair.hockey_stick(np.exp(dense)) <= both + FLOAT_TOLERANCE)
