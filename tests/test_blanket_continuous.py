"""The blanket bound of shuffled Gaussian and Laplace randomizers against independent truths.

Truths: the analytic hockey-stick of the local Gaussian (Balle & Wang 2018) and
Laplace (``1 - exp((eps - eps0) / 2)``) mechanisms for n = 1, and, for n = 2 and
3, the blanket expectation computed by nested quadrature directly from its
definition in the output space (``omega_min`` as the pointwise minimum of the
two end-point densities, no reduction to the variable V used by the library).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate
from scipy.interpolate import CubicSpline
from scipy.special import roots_legendre
from scipy.stats import laplace, norm

import pld
from pld.mechanisms.blanket_continuous import observer, profile_bounds
from pld.mechanisms.gaussian import gaussian_delta


class _Blanket:
    """``(1/(n gamma)) E[(sum B_i Z_i)_+]`` from the definition, for a pair (x, x')."""

    def __init__(self, density, low, high, x, x_prime, eps, spread):
        self.density = density
        self.alpha = math.exp(eps)
        self.x, self.x_prime = x, x_prime
        self.low, self.high = low, high
        self.mid = (low + high) / 2
        self.bounds = (low - 40 * spread, high + 40 * spread)
        self.gamma = integrate.quad(self.omega_min, *self.bounds, points=[self.mid], limit=400)[0]

    def omega_min(self, y):
        return np.minimum(self.density(y - self.low), self.density(y - self.high))

    def z(self, y):
        ratio = self.density(y - self.x) - self.alpha * self.density(y - self.x_prime)
        return self.gamma * ratio / self.omega_min(y)

    def omega(self, y):
        return self.omega_min(y) / self.gamma

    def g(self, c):
        """``E_omega[(c + Z)_+]``."""

        def integrand(y):
            return max(c + self.z(y), 0.0) * self.omega(y)

        points = [self.mid, self.x, self.x_prime]
        return integrate.quad(integrand, *self.bounds, points=points, limit=800, epsabs=1e-15)[0]

    def nodes(self, count=300):
        """Gauss-Legendre nodes and omega-weights on the two smooth pieces of omega."""
        xi, w = roots_legendre(count)
        ys, ws = [], []
        for a, b in ((self.bounds[0], self.mid), (self.mid, self.bounds[1])):
            ys.append((a + b) / 2 + (b - a) / 2 * xi)
            ws.append((b - a) / 2 * w)
        y = np.concatenate(ys)
        return y, np.concatenate(ws) * self.omega(y)

    def delta(self, n):
        gamma = self.gamma
        one = self.g(0.0)
        if n == 1:
            return one
        y, w = self.nodes()
        z = self.z(y)
        two = float(np.dot(w, [self.g(c) for c in z]))
        if n == 2:
            return (2 * gamma * (1 - gamma) * one + gamma**2 * two) / (2 * gamma)
        grid = np.linspace(2 * z.min(), 2 * z.max(), 1500)
        spline = CubicSpline(grid, [self.g(c) for c in grid])
        pair = z[:, None] + z[None, :]
        three = float(w @ spline(pair) @ w)
        return (
            3 * gamma * (1 - gamma) ** 2 * one + 3 * gamma**2 * (1 - gamma) * two + gamma**3 * three
        ) / (3 * gamma)


def _gaussian_truth(sigma, n, eps, x=1.0, x_prime=0.0):
    def density(y):
        return norm.pdf(y, scale=sigma)

    return _Blanket(density, 0.0, 1.0, x, x_prime, eps, sigma).delta(n)


def _laplace_truth(scale, n, eps):
    def density(y):
        return laplace.pdf(y, scale=scale)

    return _Blanket(density, 0.0, 1.0, 1.0, 0.0, eps, scale).delta(n)


@pytest.mark.parametrize("sigma", [2.0, 4.0, 9.48])
def test_gaussian_one_user_is_the_local_gaussian_mechanism(sigma):
    eps = np.array([0.0, 0.05, 0.2, 0.5, 1.0])
    lower, upper = profile_bounds(pld.randomizers.gaussian(sigma), 1, eps)
    truth = gaussian_delta(eps, sigma)
    keep = truth > 1e-12
    assert np.all(lower <= truth) and np.all(truth <= upper)
    # Second-order lattice laws with 64 steps per standard deviation: < 0.2 %.
    assert np.all((upper - lower)[keep] <= 2e-3 * truth[keep])


def test_gaussian_other_interval_depends_on_its_length_only():
    eps = np.array([0.1, 0.4])
    a = profile_bounds(pld.randomizers.gaussian(6.0, low=-3.0, high=-1.0), 5, eps)
    b = profile_bounds(pld.randomizers.gaussian(3.0), 5, eps)
    np.testing.assert_allclose(a, b, rtol=1e-12)


def test_laplace_one_user_is_the_local_laplace_mechanism():
    scale = 0.8
    eps0 = 1 / scale
    eps = np.array([0.0, 0.3, 0.8, 1.2])
    lower, upper = profile_bounds(pld.randomizers.laplace(scale), 1, eps)
    truth = np.maximum(1 - np.exp((eps - eps0) / 2), 0.0)
    assert np.all(lower <= truth) and np.all(truth <= upper)
    assert np.all(upper - lower <= 2e-3 * truth)
    assert profile_bounds(pld.randomizers.laplace(scale), 1, [eps0 + 0.1])[1][0] == 0.0


@pytest.mark.parametrize("n", [2, 3])
def test_gaussian_small_n_against_quadrature(n):
    sigma = 2.0
    eps = np.array([0.2, 0.6])
    lower, upper = profile_bounds(pld.randomizers.gaussian(sigma), n, eps)
    truth = np.array([_gaussian_truth(sigma, n, e) for e in eps])
    # The quadrature is accurate to ~1e-9 relative; the bracket is ~1e-4 wide.
    assert np.all(lower <= truth * (1 + 1e-7)) and np.all(truth <= upper * (1 + 1e-7))
    assert np.all(upper - lower <= 1e-3 * truth)


def test_laplace_two_users_against_quadrature():
    scale = 1.0
    eps = np.array([0.1, 0.5])
    lower, upper = profile_bounds(pld.randomizers.laplace(scale), 2, eps)
    truth = np.array([_laplace_truth(scale, 2, e) for e in eps])
    assert np.all(lower <= truth * (1 + 1e-7)) and np.all(truth <= upper * (1 + 1e-7))
    assert np.all(upper - lower <= 1e-3 * truth)


def test_end_points_are_the_worst_pair_for_two_users():
    """Every pair on a 5-point grid of [0, 1] gives at most the end points' delta (n = 2)."""
    sigma, eps = 1.5, 0.3
    worst = _gaussian_truth(sigma, 2, eps)
    grid = np.linspace(0.0, 1.0, 5)
    for x in grid:
        for x_prime in grid:
            if x != x_prime:
                assert _gaussian_truth(sigma, 2, eps, x, x_prime) <= worst * (1 + 1e-9)


@pytest.mark.parametrize(
    "randomizer", [pld.randomizers.gaussian(9.48), pld.randomizers.laplace(1.0)]
)
def test_monotone_in_eps_and_n(randomizer):
    eps = np.linspace(0.0, 0.6, 13)
    previous = None
    for n in (10, 100, 1000):
        lower, upper = profile_bounds(randomizer, n, eps)
        assert np.all(lower <= upper)
        assert np.all(np.diff(upper) <= 0) and np.all(np.diff(lower) <= 0)
        if previous is not None:
            # More users, more blanket: the true value decreases in n; the brackets
            # must not contradict that.
            assert np.all(lower <= previous[1])
        previous = (lower, upper)


@pytest.mark.parametrize(
    "randomizer", [pld.randomizers.gaussian(9.48), pld.randomizers.laplace(0.5)]
)
@pytest.mark.parametrize("n", [1, 50, 10_000])
def test_observer_lower_bracket_below_the_blanket_upper_bound(randomizer, n):
    eps = np.linspace(0.0, 1.0, 21) / math.sqrt(n) * (3 if n > 1 else 1)
    _, upper = profile_bounds(randomizer, n, eps)
    low, _ = observer(randomizer, n).delta_bounds(eps)
    assert np.all(low <= upper + 1e-15)


def test_gaussian_observer_is_the_sum_of_reports():
    sigma, n = 9.48, 1000
    eps = np.array([0.001, 0.01])
    low, high = observer(pld.randomizers.gaussian(sigma), n).delta_bounds(eps)
    truth = gaussian_delta(eps, sigma * math.sqrt(n))
    assert np.all(low <= truth) and np.all(truth <= high)


def test_large_n_bracket_is_tight():
    eps = np.array([1.3e-3, 2.6e-3])  # delta about 3e-7 and 3e-13 at n = 60 000
    lower, upper = profile_bounds(pld.randomizers.gaussian(9.48), 60_000, eps)
    assert np.all(lower > 0)
    assert np.all(upper - lower <= 3e-3 * upper)


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: pld.randomizers.gaussian(0.0), "sigma"),
        (lambda: pld.randomizers.gaussian(-1.0), "sigma"),
        (lambda: pld.randomizers.gaussian(float("nan")), "sigma"),
        (lambda: pld.randomizers.gaussian(1.0, low=1.0, high=1.0), "low < high"),
        (lambda: pld.randomizers.gaussian(1.0, low=0.0, high=float("inf")), "high"),
        (lambda: pld.randomizers.laplace(0.0), "scale"),
        (lambda: pld.randomizers.laplace(1.0, low=2.0, high=1.0), "low < high"),
        (lambda: profile_bounds(pld.randomizers.gaussian(1.0), 0, [0.1]), "n must"),
        (lambda: profile_bounds(pld.randomizers.gaussian(1.0), 10, [-0.1]), "eps must"),
        (lambda: profile_bounds(pld.randomizers.gaussian(1.0), 10, [float("nan")]), "eps"),
        (lambda: profile_bounds(pld.randomizers.gaussian(0.05), 10, [1.0]), "grid_step"),
        (lambda: profile_bounds("gaussian", 10, [0.1]), "randomizer"),
        (lambda: observer(pld.randomizers.laplace(1.0), 0), "n must"),
    ],
)
def test_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_properties():
    g = pld.randomizers.gaussian(2.0, low=-1.0, high=1.0)
    assert g.eps0 == math.inf
    assert g.blanket_mass == pytest.approx(2 * norm.cdf(-0.5), rel=1e-15)
    lap = pld.randomizers.laplace(0.5, low=0.0, high=2.0)
    assert lap.eps0 == pytest.approx(4.0)
    assert lap.blanket_mass == pytest.approx(math.exp(-2.0), rel=1e-15)
