"""The shuffled clipped d-dimensional Gaussian (docs/vector-gaussian.md) against independent truths.

* bound B's ideal term ``D_n`` against quadrature (tests/oracles/vector_gaussian.py) for
  n = 1, 2 over a grid of (s, eps, q): the lattice bracket must contain it;
* n = 1 is the Gaussian mechanism with sensitivity 2 clip, exactly, for every dim;
* the real protocol's hockey stick for concrete pairs (d = 2, 3; n = 2, 3; others on
  other axes), by Monte Carlo: a lower bound, so the certified upper must exceed it;
* dim = 1 is the scalar Gaussian on [-clip, clip];
* the observer is the sum of the reports; the ball's blanket mass against quadrature;
* bad input names the parameter; the seed FL setting (slow).
"""

from __future__ import annotations

import math
import time

import numpy as np
import pytest

import pld
from pld.central import gaussian_delta
from pld.shuffling.blanket import clone_probabilities, pairwise_profile_bounds
from pld.shuffling.blanket.pairwise import MASS_ERROR, _cells, default_grid_step
from tests.oracles import vector_gaussian as oracle


@pytest.mark.parametrize("s", [0.1, 1.0, 3.0])
@pytest.mark.parametrize("eps", [0.0, 0.3, 1.0])
@pytest.mark.parametrize("q", [0.3, 1.0])
def test_pairwise_term_brackets_the_quadrature_truth(s, eps, q):
    for n in (1, 2):
        truth = oracle.pairwise_divergence(n, s, eps, q)
        lower, upper = pairwise_profile_bounds(s, n, np.array([eps]), q)
        charge = 0.0 if n == 1 else (1 + math.exp(eps)) * q * gaussian_delta(-math.log(q), 1, s)
        # Quadrature to ~1e-11 relative; the lattice's own bracket is what is tested.
        assert lower[0] <= (truth + charge) * (1 + 1e-9) + 1e-15
        assert upper[0] >= min((truth + charge) * (1 - 1e-9), 1.0)
        # Second order in the step: at most a few 1e-4 of the value (measured 6e-4 at s = 3),
        # plus the charged position error, about 8 (1 + alpha) MASS_ERROR / q at small n.
        floor = 16 * (1 + math.exp(eps)) * MASS_ERROR / q
        assert upper[0] - lower[0] <= 2e-3 * truth + floor


def test_lower_side_too_long_for_one_sum_keeps_the_charge(monkeypatch):
    """A lower lattice sum refused as too long (a BudgetError) leaves the shortfall
    charge as bound B's lower value, below it, instead of failing the build; the
    upper values are those of an unrefused evaluation."""
    from pld.engine import BudgetError
    from pld.shuffling.blanket import pairwise

    eps = np.array([0.0, 0.5, 1.0])
    s, n, q = 1.0, 5, 0.05
    lower, upper = pairwise_profile_bounds(s, n, eps, q)
    plain = pairwise.ideal_term

    def refused_below(n, s, alpha, q, step, side):
        if side == "lower":
            raise BudgetError("too long")
        return plain(n, s, alpha, q, step, side)

    monkeypatch.setattr(pairwise, "ideal_term", refused_below)
    refused_lower, same_upper = pairwise_profile_bounds(s, n, eps, q)
    np.testing.assert_array_equal(same_upper, upper)
    charges = [pairwise.shortfall_charge(n, s, math.exp(e), q, "lower") for e in eps]
    np.testing.assert_array_equal(refused_lower, np.minimum.accumulate(charges))
    assert np.all(refused_lower < lower)
    assert np.all(refused_lower > 0)


@pytest.mark.parametrize("s", [0.01, 0.1, 1.0, 3.0])
@pytest.mark.parametrize("eps", [0.0, 1.0, 4.0])
def test_cell_masses_against_mpmath(s, eps):
    """The declared MASS_ERROR holds with a margin of 10 on the cells as placed (their
    float y-edges), in the bulk and the far tails."""
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 60
    alpha = math.exp(eps)
    step = default_grid_step(s) * (1 + alpha) / 2
    index, mass, moment, _, _ = _cells(s, alpha, step, 1000)
    u = np.clip((np.arange(index[0], index[-1] + 2) * step - (1 - alpha)) / (1 + alpha), -1, 1)
    with np.errstate(divide="ignore"):
        y = (2 / s) * np.arctanh(u)
    picks = np.unique(np.concatenate([np.linspace(0, index.size - 1, 40).astype(int), [0, 1]]))
    for k in picks:
        low, high = mpmath.mpf(y[index[k] - index[0]]), mpmath.mpf(y[index[k] - index[0] + 1])

        def tail(c, low=low, high=high):
            if low > c:
                return mpmath.ncdf(c - low) - mpmath.ncdf(c - high)
            return mpmath.ncdf(high - c) - mpmath.ncdf(low - c)

        plus, minus = tail(mpmath.mpf(s) / 2), tail(-mpmath.mpf(s) / 2)
        exact = (plus + minus) / 2
        if exact < 1e-200:
            continue
        assert abs(mass[k] / exact - 1) <= MASS_ERROR / 10
        assert abs(moment[k] - (plus - alpha * minus)) <= MASS_ERROR / 10 * (plus + alpha * minus)


@pytest.mark.parametrize("dim", [1, 2, 10**6])
def test_one_user_is_the_gaussian_mechanism(dim):
    randomizer = pld.randomizers.vector_gaussian(2.0, dim, clip=0.5)
    eps = np.array([0.0, 0.1, 0.5, 1.0, 2.0])
    lower, upper = pld.shuffle(randomizer, 1).delta_bounds(eps)
    exact = gaussian_delta(eps, 2.0, 1.0)
    assert np.all(lower <= exact * (1 + 1e-9)) and np.all(upper >= exact * (1 - 1e-9))
    assert np.all(upper <= exact * (1 + 1e-3) + 1e-12)
    # Bound B alone at n = 1 is the Gaussian mechanism too (no charge, D_1 = H_alpha).
    low_b, up_b = pairwise_profile_bounds(0.5, 1, eps, 0.5)
    assert np.all(low_b <= exact * (1 + 1e-9)) and np.all(up_b >= exact * (1 - 1e-9))


@pytest.mark.parametrize(("dim", "n"), [(2, 2), (3, 3)])
def test_real_protocol_is_below_the_certified_profile(dim, n):
    """Monte Carlo truth of one concrete pair: target at +clip e_1 versus -clip e_1, the
    others at clip e_i (other axes), sigma = 1, clip = 0.5 (s = 1)."""
    randomizer = pld.randomizers.vector_gaussian(1.0, dim, clip=0.5)
    eps = np.array([0.0, 0.2, 0.5])
    components, _ = randomizer.shuffle_profiles(n, eps, "best")
    upper = np.minimum.reduce([high for _, high in components])
    inputs_p = 0.5 * np.eye(n, dim)
    inputs_q = inputs_p.copy()
    inputs_q[0, 0] = -0.5
    for value, bound in zip(eps, upper, strict=True):
        estimate, error = oracle.protocol_delta_mc(inputs_p, inputs_q, value, samples=100_000)
        assert bound >= estimate - 5 * error


def test_shuffle_upper_is_above_its_profile_and_below_local():
    randomizer = pld.randomizers.vector_gaussian(1.0, 2, clip=0.5)
    built = pld.shuffle(randomizer, 2)
    eps = np.array([0.0, 0.2, 0.5])
    lower, upper = built.delta_bounds(eps)
    truth = [
        oracle.protocol_delta_mc(0.5 * np.eye(2), np.diag([-0.5, 0.5]), e, samples=100_000)
        for e in eps
    ]
    for up, (estimate, error) in zip(upper, truth, strict=True):
        assert up >= estimate - 5 * error
    local = gaussian_delta(eps, 1.0, 1.0)
    assert np.all(upper <= local * (1 + 1e-3))
    assert np.all(lower <= upper)


@pytest.mark.slow
def test_dim_one_is_the_scalar_gaussian_on_the_interval():
    """clip = 0.5, sigma = 9.48: the same upper bound as gaussian(sigma) on [0, 1] (50 s)."""
    vector = pld.shuffle(pld.randomizers.vector_gaussian(9.48, 1, clip=0.5), 100)
    scalar = pld.shuffle(pld.randomizers.gaussian(9.48), 100)
    for delta in (1e-3, 1e-6, 1e-9):
        ours = vector.epsilon_bounds(delta)[1]
        theirs = scalar.epsilon_bounds(delta)[1]
        assert abs(ours - theirs) <= 0.005 * theirs


def test_dim_one_profiles_are_the_intervals():
    """The fast part of the check above: the same one-round profiles at n = 100."""
    eps = np.array([0.0, 0.01, 0.03])
    vector, _ = pld.randomizers.vector_gaussian(9.48, 1, 0.5).shuffle_profiles(100, eps, "best")
    scalar, _ = pld.randomizers.gaussian(9.48).shuffle_profiles(100, eps, "best")
    upper = np.minimum.reduce([high for _, high in vector])
    assert np.allclose(upper, np.minimum.reduce([high for _, high in scalar]), rtol=1e-12)


def test_observer_is_the_sum_of_reports():
    randomizer = pld.randomizers.vector_gaussian(3.0, 50, clip=2.0)
    observer = pld.shuffle_observer(randomizer, 400)
    eps = np.array([0.0, 0.05, 0.2])
    exact = gaussian_delta(eps, 3.0 * 20.0, 4.0)
    lower, upper = observer.delta_bounds(eps)
    assert np.all(lower <= exact * (1 + 1e-9)) and np.all(upper >= exact * (1 - 1e-9))


@pytest.mark.parametrize("dim", [1, 2, 10, 1000])
def test_ball_blanket_mass(dim):
    randomizer = pld.randomizers.vector_gaussian(2.0, dim, clip=0.7)
    truth = oracle.blanket_mass(0.35, dim)
    assert randomizer.blanket_mass == pytest.approx(truth, rel=1e-8)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"sigma": -1.0, "dim": 3}, "sigma"),
        ({"sigma": 1.0, "dim": 0}, "dim"),
        ({"sigma": 1.0, "dim": 10**12}, "dim"),
        ({"sigma": 1.0, "dim": 2.5}, "dim"),
        ({"sigma": 1.0, "dim": 3, "clip": math.inf}, "clip"),
        ({"sigma": 1.0, "dim": 3, "clip": 0.0}, "clip"),
    ],
)
def test_bad_input_names_the_parameter(kwargs, name):
    with pytest.raises(ValueError, match=name):
        pld.randomizers.vector_gaussian(**kwargs)


def test_clones_analysis_is_refused():
    with pytest.raises(ValueError, match="eps0"):
        pld.shuffle(pld.randomizers.vector_gaussian(1.0, 3), 10, analysis="clones")


def test_clone_probabilities_are_on_the_ladder():
    chosen = clone_probabilities(1 / 9.48, 60_000)
    assert 1 <= len(chosen) <= 3
    for q in chosen:
        k = math.log(q) / math.log(2.0 ** (-1 / 8))
        assert abs(k - round(k)) < 1e-9 and 0 < q <= 1


@pytest.mark.slow
@pytest.mark.parametrize("dim", [1, 10**3, 10**6])
def test_seed_fl_setting(dim):
    """n = 60 000, sigma / (2 clip) = 9.48, delta = 1/n: finite, 10x below the local
    mechanism, above the protocol's lower bound, built in under a minute."""
    n, delta = 60_000, 1 / 60_000
    randomizer = pld.randomizers.vector_gaussian(9.48, dim, clip=0.5)
    start = time.perf_counter()
    built = pld.shuffle(randomizer, n)
    assert time.perf_counter() - start < 60
    low, up = built.epsilon_bounds(delta)
    local = randomizer.local_mechanism().epsilon_bounds(delta)[0]
    observer = pld.shuffle_observer(randomizer, n).epsilon_bounds(delta)[0]
    assert math.isfinite(up) and up <= local / 10
    assert observer <= low <= up


@pytest.mark.slow
@pytest.mark.parametrize("dim", [2, 3])
def test_theorem_a_countermonotone_dominates_antipodal(dim):
    """docs/vector-gaussian.md §3: the antipodal pair's blanket divergence is below that of
    the countermonotone variable (independent Monte Carlo, common pool)."""
    for eps in (0.0, 0.3):
        anti, e1 = oracle.blanket_mc(0.5, dim, 8, eps, coupling="antipodal", seed=3)
        counter, e2 = oracle.blanket_mc(0.5, dim, 8, eps, coupling="countermonotone", seed=3)
        assert anti <= counter + 4 * math.hypot(e1, e2)


@pytest.mark.slow
def test_calibrate_sigma_and_compose_with_subsampling():
    """pld.calibrate finds sigma for a target; pld.subsample takes the shuffled round."""

    def round_of(sigma: float) -> pld.PLD:
        return pld.shuffle(pld.randomizers.vector_gaussian(sigma, 100, clip=0.5), 1000)

    found = pld.calibrate(
        round_of, "sigma", target_eps=0.05, target_delta=1e-5, tolerance=0.1, progress=False
    )
    assert round_of(found.value).epsilon_bounds(1e-5)[1] <= 0.05
    assert round_of(found.value / 1.1).epsilon_bounds(1e-5)[1] > 0.05 * 0.99
    sampled = pld.subsample(round_of(found.value), 0.1)
    assert sampled.epsilon_bounds(1e-5)[1] < 0.05
