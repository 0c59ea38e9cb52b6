"""Poisson subsampling and sampling without replacement of central mechanisms.

Truths: the exact mixture pairs of finite bases (brute-force sums and
enumeration of compositions), the subsampled Gaussian's hockey sticks in closed
form (normal CDFs), the subsampled Laplace's by quadrature, and the exact
mixture PLD ``pld.subsampled_gaussian``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate
from scipy.stats import norm

import pld
from tests.exact import product_delta

EPS = np.array([-0.5, -0.05, 0.0, 0.02, 0.1, 0.3, 0.7, 1.5])

#: An asymmetric three-outcome base pair (P = with the record, Q = without).
BASE_P = np.array([0.6, 0.3, 0.1])
BASE_Q = np.array([0.2, 0.5, 0.3])


def _hockey(p: np.ndarray, q: np.ndarray, eps: np.ndarray) -> np.ndarray:
    return np.array([math.fsum(np.clip(p - math.exp(e) * q, 0, None)) for e in eps])


def _poisson_truth(p: np.ndarray, q: np.ndarray, rate: float, eps: np.ndarray) -> np.ndarray:
    """max(removal, addition) of the exact mixture pair (q P + (1-q) Q, Q)."""
    mixed = rate * p + (1 - rate) * q
    return np.maximum(_hockey(mixed, q, eps), _hockey(q, mixed, eps))


def _inside(loss: pld.PLD, truth: np.ndarray, eps: np.ndarray, rel: float = 1e-9) -> None:
    lower, upper = loss.delta_bounds(eps)
    assert np.all(upper >= truth * (1 - rel) - 1e-15)
    assert np.all(lower <= truth * (1 + rel) + 1e-15)


@pytest.mark.parametrize("rate", [0.01, 0.2, 1.0])
def test_poisson_of_an_asymmetric_pair_brackets_the_mixture(rate: float) -> None:
    base = pld.from_pmfs(np.log(BASE_P), np.log(BASE_Q))
    loss = pld.poisson_subsample(base, rate=rate)
    assert not loss.symmetric
    truth = _poisson_truth(BASE_P, BASE_Q, rate, EPS)
    _inside(loss, truth, EPS)
    # Three isolated atoms: the profile has kinks between grid points, where the
    # dominated lower side is first order in the step; measured widths are at
    # most 1.3 % of the truth.
    lower, upper = loss.delta_bounds(EPS)
    assert np.all(upper - lower <= 2e-2 * truth + 1e-12)


def test_poisson_composition_brackets_the_enumerated_mixture() -> None:
    rate, rounds = 0.3, 4
    base = pld.from_pmfs(np.log(BASE_P), np.log(BASE_Q))
    loss = pld.poisson_subsample(base, rate=rate).self_compose(rounds)
    mixed = rate * BASE_P + (1 - rate) * BASE_Q
    truth = product_delta([(mixed, BASE_Q)] * rounds, EPS)
    _inside(loss, truth, EPS)


def test_poisson_of_pure_dp_is_the_randomised_response_mixture() -> None:
    eps0, rate = 2.0, 0.05
    p = np.array([math.exp(eps0), 1.0]) / (1 + math.exp(eps0))
    loss = pld.poisson_subsample(pld.pure_dp(eps0), rate=rate)
    _inside(loss, _poisson_truth(p, p[::-1], rate, EPS), EPS)


def _gaussian_mixture_truth(sigma: float, rate: float, eps: np.ndarray) -> np.ndarray:
    """Both hockey sticks of ((1-q) N(0, s^2) + q N(1, s^2), N(0, s^2)) in closed form.

    The loss ``log(1 - q + q e^{(2x-1)/(2 s^2)})`` is increasing in x, so each
    hockey stick is a difference of normal tails at the threshold output.
    """
    result = []
    for e in eps:
        alpha = math.exp(e)
        # removal: {x : loss > e}
        removal = 0.0
        if alpha - 1 + rate > 0:
            x = sigma**2 * math.log((alpha - 1 + rate) / rate) + 0.5
            removal = (
                rate * norm.sf((x - 1) / sigma)
                + (1 - rate) * norm.sf(x / sigma)
                - alpha * norm.sf(x / sigma)
            )
        else:
            removal = 1 - alpha
        # addition: {x : Q > alpha P'}  <=>  loss < -e
        addition = 0.0
        beta = math.exp(-e)
        if beta - 1 + rate > 0:
            x = sigma**2 * math.log((beta - 1 + rate) / rate) + 0.5
            addition = norm.cdf(x / sigma) - alpha * (
                rate * norm.cdf((x - 1) / sigma) + (1 - rate) * norm.cdf(x / sigma)
            )
        result.append(max(removal, addition, 0.0))
    return np.array(result)


@pytest.fixture(scope="module")
def subsampled_gaussian_pair() -> tuple[pld.PLD, pld.PLD]:
    return pld.poisson_subsample(pld.gaussian(1.0), rate=0.01), pld.subsampled_gaussian(1.0, 0.01)


def test_subsampled_gaussian_brackets_the_closed_form(subsampled_gaussian_pair) -> None:
    loss, _ = subsampled_gaussian_pair
    truth = _gaussian_mixture_truth(1.0, 0.01, EPS)
    _inside(loss, truth, EPS, rel=1e-7)


def test_subsampled_gaussian_agrees_with_the_exact_mixture_pld(subsampled_gaussian_pair) -> None:
    loss, exact = subsampled_gaussian_pair
    composed, reference = loss.self_compose(300), exact.self_compose(300)
    for eps in (0.5, 1.0, 2.0):
        lower, upper = composed.delta_bounds(eps)
        ref_lower, ref_upper = reference.delta_bounds(eps)
        # Measured: both upper bounds agree to ~1e-6 relative (same loss grid);
        # the bracket is at most 2.8e-4 of the upper bound wide (the exact
        # mixture's: 1.3e-4), and the two brackets overlap.
        assert upper == pytest.approx(ref_upper, rel=2e-5)
        assert lower <= ref_upper and ref_lower <= upper
        assert upper - lower <= 4e-4 * upper


def test_subsampled_laplace_brackets_quadrature() -> None:
    rate, scale = 0.05, 0.5
    loss = pld.poisson_subsample(pld.laplace(scale=scale), rate=rate)

    def density(x: float, centre: float) -> float:
        return math.exp(-abs(x - centre) / scale) / (2 * scale)

    def hockey(first, second, alpha: float) -> float:
        value, _ = integrate.quad(
            lambda x: max(first(x) - alpha * second(x), 0.0),
            -40.0,
            41.0,
            points=[0.0, 1.0],
            limit=400,
            epsabs=1e-13,
        )
        return value

    def mixed(x: float) -> float:
        return rate * density(x, 1.0) + (1 - rate) * density(x, 0.0)

    def without(x: float) -> float:
        return density(x, 0.0)

    truth = np.array(
        [max(hockey(mixed, without, math.exp(e)), hockey(without, mixed, math.exp(e))) for e in EPS]
    )
    lower, upper = loss.delta_bounds(EPS)
    # quad's error on these piecewise-smooth integrands is ~1e-12.
    assert np.all(upper >= truth - 1e-11)
    assert np.all(lower <= truth + 1e-11)
    assert np.all(upper - lower <= 1e-4 * truth + 1e-12)


def test_without_replacement_brackets_lemma7_of_randomised_response() -> None:
    eps0, rate = 1.5, 0.1
    p = np.array([math.exp(eps0), 1.0]) / (1 + math.exp(eps0))
    q = p[::-1]
    # Koskela et al. (2023), Lemma 7, attained for a batch of one: max of both mixtures, both
    # orders.
    first = _hockey(rate * p + (1 - rate) * q, q, EPS)
    second = _hockey(p, rate * q + (1 - rate) * p, EPS)
    truth = np.maximum(first, second)
    loss = pld.subsample_without_replacement(pld.pure_dp(eps0), rate=rate)
    assert loss.symmetric
    _inside(loss, truth, EPS)
    replace = pld.poisson_subsample(pld.pure_dp(eps0), rate=rate, adjacency="replace")
    np.testing.assert_allclose(replace.delta(EPS), loss.delta(EPS))


@pytest.mark.parametrize("rate", [0.0, -0.1, 1.5, math.nan])
def test_bad_rate(rate: float) -> None:
    base = pld.pure_dp(1.0)
    with pytest.raises(ValueError, match="rate"):
        pld.poisson_subsample(base, rate=rate)
    with pytest.raises(ValueError, match="rate"):
        pld.subsample_without_replacement(base, rate=rate)


def test_bad_base_and_adjacency() -> None:
    base = pld.pure_dp(1.0)
    with pytest.raises(ValueError, match="base"):
        pld.poisson_subsample("gaussian", rate=0.1)
    with pytest.raises(ValueError, match="base"):
        pld.poisson_subsample(base.self_compose(2), rate=0.1)
    with pytest.raises(ValueError, match="adjacency"):
        pld.poisson_subsample(base, rate=0.1, adjacency="swap")
    with pytest.raises(ValueError, match="adjacency"):
        pld.subsample_without_replacement(base, rate=0.1, adjacency="add-remove")


def _noisy_count_outputs(
    bits: tuple[int, ...], rate: float, noise: np.ndarray, n: int
) -> np.ndarray:
    """Exact pmf of (number of sampled ones) + noise, on offsets 0 .. len(noise) + n - 1."""
    count = np.array([1.0])
    for bit in bits:
        count = np.convolve(count, [1 - rate, rate]) if bit else count
    return np.convolve(np.pad(count, (0, n + 1 - count.size)), noise)


def _pairs(n: int, adjacency: str):
    """Every ordered pair of neighbouring bit datasets of size <= n."""
    import itertools

    for size in range(n + 1):
        for data in itertools.product((0, 1), repeat=size):
            if adjacency == "replace":
                for index in range(size):
                    other = list(data)
                    other[index] = 1 - data[index]
                    yield data, tuple(other)
            elif size < n:
                for extra in (0, 1):
                    yield data + (extra,), data
                    yield data, data + (extra,)


@pytest.mark.parametrize("adjacency", ["add-remove", "replace"])
def test_poisson_subsampled_noisy_count_brute_force(adjacency: str) -> None:
    """A Poisson-sampled count of bits plus discrete Laplace noise, every neighbouring pair.

    The count has sensitivity 1 under both relations, so the discrete Laplace
    pair bounds the unsampled mechanism under both, as replace-one requires.
    """
    parameter, rate, n = 0.6, 0.3, 3
    k = np.arange(-120, 121)
    noise = math.tanh(parameter / 2) * np.exp(-parameter * np.abs(k))
    worst = np.zeros(EPS.size)
    for first, second in _pairs(n, adjacency):
        p = _noisy_count_outputs(first, rate, noise, n)
        q = _noisy_count_outputs(second, rate, noise, n)
        worst = np.maximum(worst, _hockey(p, q, EPS))
    loss = pld.poisson_subsample(pld.discrete_laplace(parameter), rate=rate, adjacency=adjacency)
    lower, upper = loss.delta_bounds(EPS)
    assert np.all(upper >= worst * (1 - 1e-9) - 1e-15)
    if adjacency == "add-remove":
        # Adding a one to an all-zero dataset gives the mixture pair itself.
        assert np.all(lower <= worst * (1 + 1e-9) + 1e-15)
