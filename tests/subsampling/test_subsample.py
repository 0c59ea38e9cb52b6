"""Subsampled shufflers: Lemma 7 (Koskela et al. 2023, eq. 2.3) plus connect-the-dots.

Truths: the hockey sticks of the mixtures of eq. 2.3 summed directly, and a brute
force of the real mechanism for tiny n: draw a uniform subset of m of the n users,
each applies k-ary randomised response, the shuffler releases the histogram of the
m reports; enumerate every dataset pair differing in one user and take the largest
hockey stick (both orders).
"""

from __future__ import annotations

import functools
import itertools
import logging
import math

import numpy as np
import pytest

import pld
from pld.cli.mechanisms import FAMILIES
from pld.distribution.profile import connect_the_dots
from pld.subsampling import subsampled_shuffler as subsample_module
from pld.subsampling.mixture import base_curves, kink_reach
from pld.subsampling.subsampled_shuffler import lemma7_delta, subsample

# --------------------------------------------------------------------------------
# Brute force of the subsampled shuffled k-RR


def counts_summing_to(total: int, parts: int) -> list[tuple[int, ...]]:
    """Every tuple of ``parts`` non-negative integers with the given sum."""
    return [c for c in itertools.product(range(total + 1), repeat=parts) if sum(c) == total]


def with_one_more(counts: tuple[int, ...], value: int) -> tuple[int, ...]:
    grown = list(counts)
    grown[value] += 1
    return tuple(grown)


@functools.cache
def shuffled_krr(counts: tuple[int, ...], gamma: float) -> dict[tuple[int, ...], float]:
    """Law of the histogram of the reports of users holding ``counts[v]`` copies of v.

    Each user reports its value with probability 1 - gamma + gamma / k and each other
    value with probability gamma / k (Koskela et al. 2023, §4).
    """
    k = len(counts)
    law = {tuple([0] * k): 1.0}
    for value, copies in enumerate(counts):
        for _ in range(copies):
            grown: dict[tuple[int, ...], float] = {}
            for histogram, mass in law.items():
                for report in range(k):
                    weight = (1 - gamma) * (report == value) + gamma / k
                    key = with_one_more(histogram, report)
                    grown[key] = grown.get(key, 0.0) + mass * weight
            law = grown
    return law


def subsets(others: tuple[int, ...], size: int):
    """Counts drawn without replacement from the multiset ``others`` (hypergeometric)."""
    total = sum(others)
    for drawn in counts_summing_to(size, len(others)):
        if all(d <= o for d, o in zip(drawn, others, strict=True)):
            ways = math.prod(math.comb(o, d) for o, d in zip(others, drawn, strict=True))
            yield drawn, ways / math.comb(total, size)


def subsampled_law(others, target, n, m, gamma):
    """Output law when the n-th user holds ``target`` and the others hold ``others``."""
    law: dict[tuple[int, ...], float] = {}
    parts = [(m / n, m - 1, True), (1 - m / n, m, False)]
    for weight, size, included in parts:
        if weight == 0 or size < 0 or size > n - 1:
            continue
        for drawn, chance in subsets(others, size):
            sample = with_one_more(drawn, target) if included else drawn
            for histogram, mass in shuffled_krr(sample, gamma).items():
                law[histogram] = law.get(histogram, 0.0) + weight * chance * mass
    return law


def product_law(law, rounds):
    composed = {(): 1.0}
    for _ in range(rounds):
        composed = {a + (b,): pa * pb for a, pa in composed.items() for b, pb in law.items()}
    return composed


def hockey_stick(p_law, q_law, eps: np.ndarray) -> np.ndarray:
    keys = sorted(set(p_law) | set(q_law))
    p = np.array([p_law.get(x, 0.0) for x in keys])
    q = np.array([q_law.get(x, 0.0) for x in keys])
    return np.array([math.fsum(np.maximum(p - math.exp(e) * q, 0.0)) for e in eps])


def real_delta(k, gamma, n, m, eps, rounds=1):
    """delta(eps) of the real mechanism: the worst dataset pair, both orders."""
    worst = np.zeros(len(eps))
    for others in counts_summing_to(n - 1, k):
        for x, y in ((0, 1), (1, 0)):
            p_law = product_law(subsampled_law(others, x, n, m, gamma), rounds)
            q_law = product_law(subsampled_law(others, y, n, m, gamma), rounds)
            worst = np.maximum(worst, hockey_stick(p_law, q_law, eps))
    return worst


def base_profile(k, gamma, m, beta: np.ndarray) -> np.ndarray:
    """Exact privacy profile of the shuffled k-RR on m users: worst pair, both orders."""
    worst = np.zeros(len(beta))
    with np.errstate(divide="ignore"):
        eps = np.log(beta)
    for others in counts_summing_to(m - 1, k):
        for x, y in ((0, 1), (1, 0)):
            p_law = shuffled_krr(with_one_more(others, x), gamma)
            q_law = shuffled_krr(with_one_more(others, y), gamma)
            worst = np.maximum(worst, hockey_stick(p_law, q_law, eps))
    return worst


def lemma7_from_profile(k, gamma, n, m, eps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(A, B) of eq. 2.3 for the exact base profile, via eqs. (5)-(6) of the module."""
    rate = m / n
    alpha = np.exp(eps)
    beta_a = np.maximum(1 + (alpha - 1) / rate, 0.0)
    a_term = np.where(alpha < 1 - rate, 1 - alpha, rate * base_profile(k, gamma, m, beta_a))
    c = 1 - alpha * (1 - rate)
    beta_b = np.where(c > 0, alpha * rate / np.where(c > 0, c, 1.0), 0.0)
    b_term = np.where(c > 0, c * base_profile(k, gamma, m, beta_b), 0.0)
    return a_term, b_term


def krr_eps0(k: int, gamma: float) -> float:
    """Local epsilon of k-RR: log((1 - gamma + gamma/k) / (gamma/k))."""
    return math.log((1 - gamma + gamma / k) / (gamma / k))


EPS = np.linspace(-1.5, 2.0, 36)
CASES = [(3, 0.5, 6, 3), (2, 0.3, 6, 2), (3, 0.2, 5, 4), (2, 0.5, 4, 1)]

# --------------------------------------------------------------------------------
# Lemma 7 as a formula


def test_lemma7_delta_matches_mixture_hockey_sticks() -> None:
    rng = np.random.default_rng(11)
    p = rng.random(7) * np.array([1, 1, 1, 1, 1, 0, 1])  # one outcome where P is 0
    q = rng.random(7) * np.array([1, 1, 0, 1, 1, 1, 1])  # one outcome where Q is 0
    p, q = p / p.sum(), q / q.sum()
    both = (p > 0) & (q > 0)
    loss = np.log(p[both] / q[both])
    eps = np.linspace(-3.0, 3.0, 121)
    for rate in (0.05, 0.3, 0.9, 1.0):
        mixed = {
            "A": (rate * p + (1 - rate) * q, q),
            "B": (p, rate * q + (1 - rate) * p),
        }
        truth = np.max(
            [
                [math.fsum(np.maximum(top - math.exp(e) * bottom, 0.0)) for e in eps]
                for top, bottom in mixed.values()
            ],
            axis=0,
        )
        values = lemma7_delta(loss, p[both], float(p[q == 0].sum()), rate, eps)
        np.testing.assert_allclose(values, truth, rtol=0, atol=1e-15)


@pytest.mark.parametrize(("k", "gamma", "n", "m"), CASES)
def test_lemma7_bounds_the_real_subsampled_shuffler(k, gamma, n, m) -> None:
    real = real_delta(k, gamma, n, m, EPS)
    a_term, b_term = lemma7_from_profile(k, gamma, n, m, EPS)
    bound = np.maximum(a_term, b_term)
    assert np.all(real <= bound + 1e-14)  # float sums of at most ~100 terms
    if m == 1:
        # One sampled user: the mechanism is the base on a random user, and the
        # bound is attained (Lemma 7 is tight here).
        np.testing.assert_allclose(bound, real, rtol=0, atol=1e-14)
    else:
        assert np.max(bound - real) > 1e-3  # a bound, not an identity


def test_both_terms_of_eq_2_3_are_needed() -> None:
    k, gamma, n, m = CASES[0]
    real = real_delta(k, gamma, n, m, EPS)
    a_term, b_term = lemma7_from_profile(k, gamma, n, m, EPS)
    # Only the max of A and B bounds the mechanism: A alone fails for eps < 0 here,
    # so the brute-force test above can tell a wrong B from a right one.
    assert np.max(real - a_term) > 1e-3
    assert np.max(real - b_term) > 1e-3


def test_a_two_direction_base_is_bounded_in_both_directions() -> None:
    # An asymmetric pair with losses on the engine's 1e-3 grid, mass at +inf (P-only
    # outcome) and at -inf (Q-only outcome); pld keeps both of its directions.
    loss = np.array([1.0, 0.3, -0.5])
    p = np.array([0.35, 0.3, 0.25, 0.1, 0.0])
    q = np.append(p[:3] * np.exp(-loss), [0.0, 0.0])
    q[4] = 1 - q.sum()
    with np.errstate(divide="ignore"):
        base = pld.from_pmfs(np.log(p), np.log(q))
    assert not base.symmetric
    rate = 0.2
    eps = np.arange(-600, 601, 20) * 1e-3  # on the loss grid
    forward = lemma7_delta(loss, p[:3], 0.1, rate, eps)
    backward = lemma7_delta(-loss, q[:3], q[4], rate, eps)
    assert np.max(backward - forward) > 1e-3  # the reverse direction matters
    truth = np.maximum(forward, backward)
    upper = subsample(base, rate).delta(eps)
    assert np.all(upper >= truth - 1e-15)
    np.testing.assert_allclose(upper, truth, rtol=0, atol=1e-9)


def test_connect_the_dots_is_exact_when_the_grid_holds_every_kink() -> None:
    eps0, rate = 1.2, 0.1
    p_true = math.exp(eps0) / (1 + math.exp(eps0))
    loss, mass = np.array([-eps0, eps0]), np.array([1 - p_true, p_true])
    kinks = [
        math.log1p(rate * math.expm1(eps0)),
        math.log1p(rate * math.expm1(-eps0)),
        -math.log1p(rate * math.expm1(eps0)),
        -math.log1p(rate * math.expm1(-eps0)),
        0.0,
    ]
    grid = np.unique(kinks)
    pair = connect_the_dots(grid, lemma7_delta(loss, mass, 0.0, rate, grid))
    fine = np.linspace(-1.0, 1.0, 2001)
    curve = [math.fsum(np.maximum(pair.p_mass - math.exp(e) * pair.q_mass, 0)) for e in fine]
    np.testing.assert_allclose(curve, lemma7_delta(loss, mass, 0.0, rate, fine), atol=1e-15)


# --------------------------------------------------------------------------------
# The PLD against the real mechanism


@pytest.mark.parametrize(("k", "gamma", "n", "m"), CASES)
@pytest.mark.parametrize("base_name", ["krr", "clones"])
def test_subsampled_pld_bounds_the_real_mechanism(k, gamma, n, m, base_name) -> None:
    if base_name == "krr":
        base = pld.krr(m, k, gamma)
    else:
        base = pld.clones(m, krr_eps0(k, gamma), variant="stronger")  # proven for k-RR
    loss = subsample(base, m / n)
    real = real_delta(k, gamma, n, m, EPS)
    lower, upper = loss.delta_bounds(EPS)
    assert np.all(upper >= real)
    assert np.all(lower <= upper)
    assert np.all(upper[EPS >= 0] < 1)  # not the trivial bound


def test_pipeline_on_the_exact_base_profile_reproduces_lemma7() -> None:
    k, gamma, n, m = CASES[0]
    kinks = set()
    for others in counts_summing_to(m - 1, k):
        p_law = shuffled_krr(with_one_more(others, 0), gamma)
        q_law = shuffled_krr(with_one_more(others, 1), gamma)
        for outcome in p_law:
            ratio = math.log(p_law[outcome] / q_law[outcome])
            kinks.update((round(ratio, 12), round(-ratio, 12)))
    # The tight base: connect-the-dots through every kink of the exact base profile.
    base = pld.from_privacy_profile(
        lambda e: base_profile(k, gamma, m, np.exp(e)), np.array(sorted(kinks))
    )
    eps = np.arange(-1000, 2001, 50) * 1e-3  # on the engine's loss grid
    lower, upper = subsample(base, m / n).delta_bounds(eps)
    bound = np.maximum(*lemma7_from_profile(k, gamma, n, m, eps))
    assert np.all(upper >= real_delta(k, gamma, n, m, eps))
    # At loss-grid points the only gaps are the base's cells that hold a kink and
    # float slack: measured 1e-12.
    assert np.all(upper >= bound - 1e-15)
    assert np.all(upper <= bound + 1e-9)
    assert np.all(lower <= bound + 1e-15)


@pytest.mark.parametrize("rounds", [2, 3])
def test_composed_subsampled_pld_bounds_the_real_mechanism(rounds) -> None:
    k, gamma, n, m = 3, 0.5, 5, 2
    eps = np.linspace(0.0, 3.0, 13)
    loss = subsample(pld.krr(m, k, gamma), m / n).self_compose(rounds)
    real = real_delta(k, gamma, n, m, eps, rounds=rounds)
    assert np.all(loss.delta(eps) >= real)


# --------------------------------------------------------------------------------
# Against the unsubsampled mechanism


@pytest.fixture(scope="module")
def krr_base() -> pld.PLD:
    return pld.krr(20, 3, 0.4)


def test_never_above_the_unsubsampled_bound_and_tends_to_it(krr_base) -> None:
    eps = np.array([-0.5, 0.0, 0.2, 0.5, 1.0, 2.0])
    base_delta = krr_base.delta(eps)
    previous = np.zeros(eps.size)
    for rate in (0.05, 0.2, 0.5, 0.9, 0.99, 1.0):
        delta = subsample(krr_base, rate).delta(eps)
        # Float-error budgets (loss-position shifts of ~1e-12 nats) of the base and of the
        # subsampled pair add up, hence 1e-11 relative.
        assert np.all(delta <= base_delta * (1 + 1e-11) + 1e-15)
        assert np.all(delta >= previous)  # amplification fades as the rate grows
        previous = delta
    # rate = 1: h is the base's own curve, taken on the same loss grid.
    np.testing.assert_allclose(previous, base_delta, rtol=1e-9, atol=1e-15)


def test_composition_never_above_the_unsubsampled_one(krr_base) -> None:
    eps = np.array([0.5, 1.0, 2.0, 4.0])
    base = krr_base.self_compose(10).delta(eps)
    sub = subsample(krr_base, 0.3).self_compose(10).delta(eps)
    assert np.all(sub <= base)
    assert np.all(sub < 0.9 * base)  # and the amplification is real


def test_bracket_is_tight_on_coarse_and_fine_loss_grids() -> None:
    eps = np.array([0.0, 0.05, 0.1, 0.2])
    brackets = []
    for step in (1e-3, 1e-4):
        base = pld.krr(20, 3, 0.4, loss_grid_step=step)
        lower, upper = subsample(base, 0.1, loss_grid_step=step).delta_bounds(eps, rel_accuracy=1)
        assert np.all(lower <= upper)
        # The lower side lies on the loss grid, lowered by the chord excess of the
        # finer pair's curve: first order in the step at the kinks of a profile
        # with few atoms like this one. Measured 5.9e-4 at 1e-3 and 6.0e-5 at 1e-4.
        assert np.all((upper - lower) / upper <= 0.8 * step)
        brackets.append((lower, upper))
    # Both are brackets of the same profile's delta: they overlap.
    assert np.all(
        np.maximum(brackets[0][0], brackets[1][0]) <= np.minimum(brackets[0][1], brackets[1][1])
    )


# --------------------------------------------------------------------------------
# The eps grid


def test_default_grid_is_the_limit_of_finer_grids(krr_base) -> None:
    rate = 0.1
    default = subsample(krr_base, rate)
    reach = kink_reach(base_curves(krr_base, "upper"), rate)
    half = math.ceil(reach / 1e-3)
    finer = subsample(krr_base, rate, eps_grid=np.arange(-2 * half, 2 * half + 1) * 5e-4)
    eps = np.linspace(-0.3, 0.3, 61)
    # Identical up to float round-off of the two constructions (measured 3e-12 relative).
    np.testing.assert_allclose(finer.delta(eps), default.delta(eps), rtol=1e-11, atol=1e-16)
    composed_eps = np.array([0.5, 1.0])
    np.testing.assert_allclose(
        finer.self_compose(20).delta(composed_eps),
        default.self_compose(20).delta(composed_eps),
        rtol=1e-9,
    )


def test_coarse_grids_are_looser_and_refinement_converges(krr_base) -> None:
    rate, tolerance = 0.1, 1e-6
    default = subsample(krr_base, rate)
    coarse = subsample(krr_base, rate, num_points=5)
    refined = subsample(krr_base, rate, eps_grid=np.linspace(-0.4, 0.4, 5), tolerance=tolerance)
    on_loss_grid = np.arange(-300, 301) * 1e-3  # the engine's points: no split there
    exact = default.delta(on_loss_grid)
    # Both are upper bounds of h at these points; the engine's float slack differs
    # between pairs by up to ~1e-12 relative.
    assert np.all(coarse.delta(on_loss_grid) >= exact - 1e-12)
    assert np.max(coarse.delta(on_loss_grid) - exact) > 1e-4
    gap = refined.delta(on_loss_grid) - exact
    assert gap.min() >= -1e-12
    # Interpolation error ~ spacing^2: the last step's change bounds what is left.
    assert gap.max() <= tolerance
    # From a coarse default grid, refinement ends at the loss-grid spacing at the latest.
    reached = subsample(krr_base, rate, num_points=5, tolerance=1e-12)
    np.testing.assert_allclose(reached.delta(on_loss_grid), exact, rtol=1e-12, atol=1e-16)


def test_refinement_warns_when_the_grid_cap_is_hit(krr_base, monkeypatch, caplog) -> None:
    monkeypatch.setattr(subsample_module, "MAX_NUM_POINTS", 20)
    with caplog.at_level(logging.WARNING, logger="pld.subsampling.subsampled_shuffler"):
        subsample(krr_base, 0.1, eps_grid=np.linspace(-0.4, 0.4, 5), tolerance=1e-12)
    assert "refinement stopped" in caplog.text


# --------------------------------------------------------------------------------
# Input checks and the CLI


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"rate": 0.0}, "rate"),
        ({"rate": 1.5}, "rate"),
        ({"rate": 0.5, "num_points": 2}, "num_points"),
        ({"rate": 0.5, "tolerance": 0.0}, "tolerance"),
        ({"rate": 0.5, "loss_grid_step": -1.0}, "loss_grid_step"),
        ({"rate": 0.5, "eps_grid": [0.1, 0.0]}, "eps_grid"),
        ({"rate": 0.5, "eps_grid": [0.0, 0.1], "num_points": 5}, "not both"),
    ],
)
def test_invalid_input_is_rejected(krr_base, kwargs, message) -> None:
    with pytest.raises(ValueError, match=message):
        subsample(krr_base, **kwargs)


def test_base_must_be_a_pld() -> None:
    with pytest.raises(ValueError, match="base"):
        subsample("clones", 0.5)


def test_cli_specs_build_the_documented_mechanisms() -> None:
    specs = {spec.name: spec for spec in FAMILIES["subsampled-clones"]()}
    assert set(specs) == {"subsampled-clones", "subsampled-krr"}
    flags = [o.flag for o in specs["subsampled-clones"].options]
    assert flags == ["--n", "--m", "--eps0", "--variant"]
    eps = np.array([0.0, 0.1, 0.3])
    built = specs["subsampled-clones"].build(n=1000, m=10, eps0=1.0)
    direct = subsample(pld.clones(10, 1.0), 0.01)
    np.testing.assert_array_equal(built.delta(eps), direct.delta(eps))
    built = specs["subsampled-krr"].build(n=50, m=5, k=3, gamma=0.5, adversary="weak")
    direct = subsample(pld.krr(5, 3, 0.5, "weak"), 0.1)
    np.testing.assert_array_equal(built.delta(eps), direct.delta(eps))
    with pytest.raises(ValueError, match="m must be"):
        specs["subsampled-clones"].build(n=10, m=11, eps0=1.0)


# --------------------------------------------------------------------------------
# The lower side on the loss grid


@pytest.mark.parametrize("base_name", ["clones", "krr"])
def test_lower_pair_is_dominated_by_the_finer_grids_pair(base_name) -> None:
    # The lower side's pair (atoms on the loss grid) must have a curve below the
    # connect-the-dots pair of the lower profile on the finer grid at every point
    # of that grid (both are linear in alpha between them), exactly in long double.
    from pld.distribution.profile import pair_from_hull, profile_hull

    step = 2.5e-4
    base = (
        pld.clones(1000, 2.0, variant="stronger")
        if base_name == "clones"
        else pld.krr(1000, 4, 0.25)
    )
    curves = base_curves(base, "lower")
    reach = kink_reach(base_curves(base, "upper"), 0.05)
    grid, _ = next(subsample_module._default_grids(reach, step, None))
    fine = subsample_module._lower_grid(grid, step)
    fine_pair = pair_from_hull(
        fine, *profile_hull(fine, subsample_module._profile(curves, 0.05, fine, "lower")), "lower"
    )
    pair = subsample_module._lower_pair(curves, 0.05, grid, step)
    # On the loss grid (not the finer pair returned as a fallback).
    assert pair.loss.size < fine_pair.loss.size
    np.testing.assert_allclose(pair.loss / step, np.round(pair.loss / step), atol=1e-6)
    alpha = np.exp(fine.astype(np.longdouble))
    assert np.all(pair._curve(alpha) <= fine_pair._curve(alpha))


def test_long_composition_bracket_meets_one_percent_on_the_first_grid() -> None:
    # subsample(clones(1000, 2), 0.05) after 1000 rounds, delta at eps ~ eps(1e-3):
    # with the engine rounding the finer pair's isolated tail atoms the lower side
    # was first order in the step (7.3 %, 2.3 %, 2.3 %, 1.0 % wide at steps 2.5e-4
    # to 3.1e-5; refinement stalled). The finer pair composed on a loss grid 8 times
    # finer (no rounding at all) gives 9.9859e-4 at this eps, converged to 1e-6
    # relative over steps 2.5e-4 .. 3.1e-5: the lower bound must stay below it.
    step = 2.5e-4
    eps = np.array([0.35377766795860405])
    composed = pld.subsample(
        pld.clones(1000, 2.0, variant="stronger", loss_grid_step=step), 0.05, loss_grid_step=step
    ).self_compose(1000)
    lower, upper = composed.delta_bounds(eps, rel_accuracy=1)
    assert lower[0] <= 9.98589e-4 <= upper[0]
    # Measured 2.4e-3.
    assert (upper[0] - lower[0]) / upper[0] <= 3e-3
    lower, upper = composed.delta_bounds(eps, rel_accuracy=1e-3)
    assert lower[0] <= 9.98589e-4 <= upper[0]
    assert (upper[0] - lower[0]) / upper[0] <= 1e-3


def test_no_float_shortfall_at_infinity_so_eps_at_1e_15_is_finite() -> None:
    # The base's upper masses sum to 1 - 1.7e-16 in float64: within the curve's
    # relative error budget, so nothing is charged to +inf (it was ~1.2e-17 per
    # round, 1.2e-14 after 1000 rounds, and eps(1e-15) was [0.47, inf]).
    one = pld.subsample(pld.clones(1000, 1.0, variant="stronger", tail_mass=1e-20), 0.05)
    for atoms in one.atoms("upper"):
        assert atoms.infinity_mass <= 1e-19
    composed = pld.subsample(pld.clones(1000, 1.0, variant="stronger"), 0.05).self_compose(1000)
    lower, upper = composed.epsilon_bounds(1e-15)
    # Measured [0.470801, 0.471011]: 4.5e-4 wide; eps(1e-12) is 0.4086 .. 0.4088.
    assert math.isfinite(upper) and (upper - lower) / upper <= 1e-2
    assert 0.4 < lower <= upper < 0.5


def test_a_real_shortfall_is_still_charged_to_infinity() -> None:
    from pld.subsampling.mixture import curve_from_atoms

    loss = np.array([-0.5, 0.0, 0.5])
    mass = np.array([0.2, 0.3, 0.5])
    # A missing 1e-6 of P-mass is not float rounding: it goes to +inf.
    curve = curve_from_atoms(loss, mass * (1 - 1e-6), 0.0, fill=True)
    assert curve.p_infinity == pytest.approx(1e-6, rel=1e-6)
    # One ulp short of 1 is within the relative error budget of the masses.
    curve = curve_from_atoms(loss, np.array([0.2, 0.3, np.nextafter(0.5, 0)]), 0.0, fill=True)
    assert curve.p_infinity == 0.0


def test_the_bases_mass_error_is_charged_by_lemma_7() -> None:
    # clones' merged masses carry a relative error of 1e-11 (MERGED_MASS_RELATIVE_ERROR):
    # the atoms report it and the curves Lemma 7 is evaluated from budget at least that
    # much, on top of their own long-double summation error.
    from pld.subsampling.mixture import base_curves

    base = pld.clones(1000, 1.0, variant="stronger")
    assert [atoms.mass_error for atoms in base.atoms("upper")] == [1e-11]
    for curve in base_curves(base, "upper") + base_curves(base, "lower"):
        assert 1e-11 < curve.relative_error < 1.1e-11
