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
from scipy.interpolate import CubicSpline
from scipy.optimize import brentq
from scipy.special import roots_legendre
from scipy.stats import laplace, norm

import pld
from pld.central.gaussian_mechanism import gaussian_delta
from pld.shuffling import blanket


def continuous_profile_bounds(randomizer, n, eps, **options):
    """The blanket profile of a continuous randomizer, from its blanket law."""
    return blanket.continuous_profile_bounds(randomizer.blanket_law(), n, eps, **options)


class _Blanket:
    """``(1/(n gamma)) E[(sum B_i Z_i)_+]`` from the definition, for a pair (x, x').

    Integrals over the output y use Gauss-Legendre rules on pieces of width at
    most ``spread / 2`` between the kinks (the interval's midpoint, where
    ``omega_min`` switches end point, and every root of ``c + Z(y)``, found by a
    sign scan and Brent's method): the integrand is smooth on every piece.
    """

    def __init__(self, log_density, low, high, x, x_prime, eps, spread, reach, node_width=2.0):
        self.node_width = node_width
        self.log_density = log_density
        self.alpha = math.exp(eps)
        self.x, self.x_prime = x, x_prime
        self.low, self.high = low, high
        self.mid = (low + high) / 2
        self.spread = spread
        self.bounds = (low - reach * spread, high + reach * spread)
        # Kinks of omega_min and of the densities (the Laplace's at its centre).
        self.kinks = sorted({self.mid, low, high, x, x_prime})
        self.gamma = self._integrate(lambda y: np.exp(self.log_omega_min(y)), self.kinks)

    def _integrate(self, function, kinks):
        edges = np.unique(np.clip([*self.bounds, *kinks], *self.bounds))
        xi, w = roots_legendre(48)
        total = 0.0
        for a, b in zip(edges[:-1], edges[1:], strict=False):
            pieces = max(1, math.ceil((b - a) / (self.spread / 2)))
            cuts = np.linspace(a, b, pieces + 1)
            half = (cuts[1:] - cuts[:-1])[:, None] / 2
            y = (cuts[:-1, None] + cuts[1:, None]) / 2 + half * xi[None, :]
            total += float(np.sum(function(y) * half * w[None, :]))
        return total

    def log_omega_min(self, y):
        return np.minimum(self.log_density(y - self.low), self.log_density(y - self.high))

    def z(self, y):
        base = self.log_omega_min(y)
        first = np.exp(self.log_density(y - self.x) - base)
        second = np.exp(self.log_density(y - self.x_prime) - base)
        return self.gamma * (first - self.alpha * second)

    def roots(self, c):
        """Every root of ``c + Z(y)`` (sign scan, then Brent's method)."""
        scan = np.linspace(*self.bounds, 4001)
        values = c + self.z(scan)
        return [
            brentq(lambda y: c + float(self.z(np.array(y))), scan[i], scan[i + 1], xtol=1e-14)
            for i in np.flatnonzero(np.sign(values[:-1]) * np.sign(values[1:]) < 0)
        ]

    def g(self, c):
        """``E_omega[(c + Z)_+]``."""
        roots = self.roots(c)

        def integrand(y):
            return np.maximum(c + self.z(y), 0.0) * np.exp(self.log_omega_min(y)) / self.gamma

        return self._integrate(integrand, [*self.kinks, *roots])

    def nodes(self, per_piece=16):
        """Gauss-Legendre nodes and omega-weights (smooth pieces, width <= 2 spread).

        ``g(Z(y))`` also has kinks where ``Z(y)`` meets minus a value that ``Z``
        takes on a set of positive measure (the Laplace's flat ends).
        """
        xi, w = roots_legendre(per_piece)
        ys, ws = [], []
        flats = [float(self.z(np.array(b))) for b in self.bounds]
        extra = [root for flat in flats for root in self.roots(flat)]
        edges = sorted({self.bounds[0], *self.kinks, *extra, self.bounds[1]})
        for a, b in zip(edges[:-1], edges[1:], strict=False):
            if b <= a:
                continue
            pieces = max(1, math.ceil((b - a) / (self.node_width * self.spread)))
            cuts = np.linspace(a, b, pieces + 1)
            half = (cuts[1:] - cuts[:-1])[:, None] / 2
            ys.append(((cuts[:-1, None] + cuts[1:, None]) / 2 + half * xi[None, :]).ravel())
            ws.append((half * w[None, :]).ravel())
        y = np.concatenate(ys)
        return y, np.concatenate(ws) * np.exp(self.log_omega_min(y)) / self.gamma

    def delta(self, n):
        gamma = self.gamma
        one = self.g(0.0)
        if n == 1:
            return one
        y, w = self.nodes()
        keep = w > 1e-30 * w.max()
        y, w = y[keep], w[keep]
        z = self.z(y)
        if n == 2:
            two = float(np.dot(w, [self.g(c) for c in z]))
            return (2 * gamma * (1 - gamma) * one + gamma**2 * two) / (2 * gamma)
        # g is smooth and convex; tabulate it on a grid that is dense near 0.
        scale = math.sqrt(float(np.dot(w, z * z)))
        ends = np.arcsinh(np.array([2 * z.min(), 2 * z.max()]) / scale)
        grid = scale * np.sinh(np.linspace(ends[0], ends[1], 801))
        spline = CubicSpline(grid, [self.g(c) for c in grid])
        two = float(np.dot(w, spline(z)))
        three = float(w @ spline(z[:, None] + z[None, :]) @ w)
        return (
            3 * gamma * (1 - gamma) ** 2 * one + 3 * gamma**2 * (1 - gamma) * two + gamma**3 * three
        ) / (3 * gamma)


def _gaussian_truth(sigma, n, eps, x=1.0, x_prime=0.0):
    def log_density(y):
        return norm.logpdf(y, scale=sigma)

    return _Blanket(log_density, 0.0, 1.0, x, x_prime, eps, sigma, 14).delta(n)


def _laplace_truth(scale, n, eps):
    def log_density(y):
        return laplace.logpdf(y, scale=scale)

    return _Blanket(log_density, 0.0, 1.0, 1.0, 0.0, eps, scale, 40, node_width=5.0).delta(n)


@pytest.mark.parametrize("sigma", [2.0, 4.0, 9.48])
def test_gaussian_one_user_is_the_local_gaussian_mechanism(sigma):
    eps = np.array([0.0, 0.05, 0.2, 0.5, 1.0])
    lower, upper = continuous_profile_bounds(pld.randomizers.gaussian(sigma), 1, eps)
    truth = gaussian_delta(eps, sigma)
    keep = truth > 1e-12
    assert np.all(lower <= truth) and np.all(truth <= upper)
    # Second-order lattice laws with 64 steps per standard deviation: < 0.2 %.
    assert np.all((upper - lower)[keep] <= 2e-3 * truth[keep])


def _symmetric_profile(eps, values):
    """Grid and values on [-max, max]: the sup over ordered pairs is symmetric, so
    ``delta(-t) = 1 - e^{-t} + e^{-t} delta(t)``."""
    mirror = np.exp(-eps[:0:-1])
    grid = np.concatenate((-eps[:0:-1], eps))
    return grid, np.concatenate((1 - mirror + mirror * values[:0:-1], values))


def test_one_user_composed_through_connect_the_dots():
    """Profile, connect-the-dots, 10 rounds: the Gaussian mechanism with sigma / sqrt(10)."""
    sigma = 3.0
    positive = np.linspace(0.0, 2.5, 100)
    grid, values = _symmetric_profile(
        positive, continuous_profile_bounds(pld.randomizers.gaussian(sigma), 1, positive)[1]
    )
    composed = pld.from_privacy_profile(lambda _: values, grid).self_compose(10)
    eps = np.array([0.5, 1.0, 2.0, 3.0])
    lower, upper = composed.delta_bounds(eps)
    truth = gaussian_delta(eps, sigma / math.sqrt(10))
    assert np.all(truth <= upper)
    # Connect-the-dots on 199 points and the engine's grid: within 0.6 % after 10 rounds.
    assert np.all(upper <= truth * 1.006)


def test_gaussian_other_interval_depends_on_its_length_only():
    eps = np.array([0.1, 0.4])
    a = continuous_profile_bounds(pld.randomizers.gaussian(6.0, low=-3.0, high=-1.0), 5, eps)
    b = continuous_profile_bounds(pld.randomizers.gaussian(3.0), 5, eps)
    np.testing.assert_allclose(a, b, rtol=1e-12)


def test_laplace_one_user_is_the_local_laplace_mechanism():
    scale = 0.8
    eps0 = 1 / scale
    eps = np.array([0.0, 0.3, 0.8, 1.2])
    lower, upper = continuous_profile_bounds(pld.randomizers.laplace(scale), 1, eps)
    truth = np.maximum(1 - np.exp((eps - eps0) / 2), 0.0)
    assert np.all(lower <= truth) and np.all(truth <= upper)
    assert np.all(upper - lower <= 2e-3 * truth)
    assert continuous_profile_bounds(pld.randomizers.laplace(scale), 1, [eps0 + 0.1])[1][0] == 0.0


@pytest.mark.parametrize("n", [2, pytest.param(3, marks=pytest.mark.slow)])
def test_gaussian_small_n_against_quadrature(n):
    sigma = 2.0
    eps = np.array([0.2, 0.6])
    lower, upper = continuous_profile_bounds(pld.randomizers.gaussian(sigma), n, eps)
    truth = np.array([_gaussian_truth(sigma, n, e) for e in eps])
    # The quadrature is accurate to ~1e-9 relative; the bracket is ~1e-4 wide.
    assert np.all(lower <= truth * (1 + 1e-7)) and np.all(truth <= upper * (1 + 1e-7))
    assert np.all(upper - lower <= 1e-3 * truth)


def test_laplace_two_users_against_quadrature():
    scale = 1.0
    eps = np.array([0.1, 0.5])
    lower, upper = continuous_profile_bounds(pld.randomizers.laplace(scale), 2, eps)
    truth = np.array([_laplace_truth(scale, 2, e) for e in eps])
    assert np.all(lower <= truth * (1 + 1e-7)) and np.all(truth <= upper * (1 + 1e-7))
    assert np.all(upper - lower <= 1e-3 * truth)


def _any_pair_truth(kind, scale, n, eps, x, x_prime):
    log_pdf = norm.logpdf if kind == "gaussian" else laplace.logpdf
    reach, width = (14, 2.0) if kind == "gaussian" else (40, 5.0)
    oracle = _Blanket(
        lambda y: log_pdf(y, scale=scale), 0.0, 1.0, x, x_prime, eps, scale, reach, width
    )
    return oracle.delta(n)


@pytest.mark.parametrize(
    ("kind", "scale", "pairs"),
    [
        ("gaussian", 1.5, [(0.5, 0.0), (1.0, 0.5), (0.25, 0.75)]),
        ("laplace", 1.0, [(1.0, 0.5), (0.25, 0.75)]),
    ],
)
def test_any_pair_of_two_users_is_below_the_certified_bound(kind, scale, pairs):
    """Quadrature of eq. (1) for interior pairs (n = 2) never exceeds our upper bound."""
    randomizer = getattr(pld.randomizers, kind)(scale)
    eps = 0.3
    upper = continuous_profile_bounds(randomizer, 2, [eps])[1][0]
    for x, x_prime in pairs:
        # The quadrature is accurate to ~1e-9 relative.
        assert _any_pair_truth(kind, scale, 2, eps, x, x_prime) <= upper * (1 + 1e-7)


@pytest.mark.slow
@pytest.mark.parametrize(("kind", "scale"), [("gaussian", 1.5), ("laplace", 1.0)])
def test_every_pair_of_a_grid_is_below_the_certified_bound(kind, scale):
    """n = 2 over a 5 x 5 grid of pairs, n = 3 over interior pairs."""
    randomizer = getattr(pld.randomizers, kind)(scale)
    eps = 0.3
    grid = np.linspace(0.0, 1.0, 5)
    for n, pairs in (
        (2, [(x, y) for x in grid for y in grid]),
        (3, [(0.25, 0.0), (0.75, 0.25), (1.0, 0.5), (0.0, 0.75)]),
    ):
        upper = continuous_profile_bounds(randomizer, n, [eps])[1][0]
        for x, x_prime in pairs:
            assert _any_pair_truth(kind, scale, n, eps, x, x_prime) <= upper * (1 + 1e-7)


def _stop_loss(kind, half_width, x, x_prime, alpha, t):
    """``E[(W - t)_+]``, ``W = r_x(Y) - alpha r_{x'}(Y)``, ``Y ~ omega``, for each t.

    Inputs in ``[-half_width, half_width]`` in noise units; computed in the output
    space from the densities (Gauss-Legendre on pieces between the kinks and the
    roots of ``R_x - alpha R_x' - c omega_min``, found on a fine scan).
    """
    if kind == "gaussian":
        pdf = norm.pdf
    else:

        def pdf(y):
            return 0.5 * np.exp(-np.abs(y))

    reach = half_width + (40 if kind == "gaussian" else 60)
    scan = np.linspace(-reach, reach, 8001)
    kinks = np.array([0.0, -half_width, half_width, x, x_prime])
    xi, weights = roots_legendre(20)
    out = np.empty(len(t))
    for i, c in enumerate(t):

        def integrand(y, c=c):
            m = np.minimum(pdf(y - half_width), pdf(y + half_width))
            return pdf(y - x) - alpha * pdf(y - x_prime) - c * m

        values = integrand(scan)
        crossing = np.flatnonzero(np.sign(values[:-1]) * np.sign(values[1:]) < 0)
        roots = [brentq(integrand, scan[j], scan[j + 1], xtol=1e-13) for j in crossing]
        edges = np.unique(np.concatenate((scan[::40], kinks, roots)))
        half = np.diff(edges)[:, None] / 2
        y = (edges[:-1, None] + edges[1:, None]) / 2 + half * xi[None, :]
        out[i] = float(np.sum(np.maximum(integrand(y), 0.0) * half * weights[None, :]))
    return out


@pytest.mark.parametrize("kind", ["gaussian", "laplace"])
@pytest.mark.parametrize("half_width", [0.1, 1.0])
def test_every_pair_is_below_the_end_points_in_increasing_convex_order(kind, half_width):
    """The heart of the proof (docs/blanket-continuous.md §3): for every pair and alpha,
    ``E[(W_{x,x'} - t)_+] <= E[(W_{a,-a} - t)_+]`` for all t (in units of
    ``1/gamma``: ``t`` multiplies ``omega_min``); alpha = 0 is Step 3 (one input
    against the blanket). A pair from outside the interval must violate it."""
    a = half_width
    t = np.concatenate((-np.geomspace(1e-2, 1e2, 5), [0.0], np.geomspace(1e-2, 1e3, 9)))
    points = np.array([-a, 0.3 * a, a])
    for alpha in (0.0, math.exp(0.3), math.exp(2.0)):
        ends = _stop_loss(kind, a, a, -a, alpha, t)
        for x in points:
            for x_prime in points:
                pair = _stop_loss(kind, a, x, x_prime, alpha, t)
                # Quadrature error below 1e-13 at these values (measured: the
                # largest excess over all pairs, equality cases included, is 3e-14).
                assert np.all(pair <= ends + 1e-10), (alpha, x, x_prime)
    outside = _stop_loss(kind, a, 1.5 * a, -a, math.exp(0.3), t)
    assert np.any(outside > _stop_loss(kind, a, a, -a, math.exp(0.3), t) + 1e-6)


@pytest.mark.parametrize(
    "randomizer", [pld.randomizers.gaussian(9.48), pld.randomizers.laplace(1.0)]
)
def test_monotone_in_eps_and_n(randomizer):
    eps = np.linspace(0.0, 0.6, 13)
    previous = None
    for n in (10, 100, 1000):
        lower, upper = continuous_profile_bounds(randomizer, n, eps)
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
    _, upper = continuous_profile_bounds(randomizer, n, eps)
    low, _ = pld.shuffle_observer(randomizer, n).delta_bounds(eps)
    assert np.all(low <= upper + 1e-15)


def test_gaussian_observer_is_the_sum_of_reports():
    sigma, n = 9.48, 1000
    eps = np.array([0.001, 0.01])
    low, high = pld.shuffle_observer(pld.randomizers.gaussian(sigma), n).delta_bounds(eps)
    truth = gaussian_delta(eps, sigma * math.sqrt(n))
    assert np.all(low <= truth) and np.all(truth <= high)


def test_large_n_bracket_is_tight():
    eps = np.array([1.3e-3, 2.6e-3])  # delta about 3e-7 and 3e-13 at n = 60 000
    lower, upper = continuous_profile_bounds(pld.randomizers.gaussian(9.48), 60_000, eps)
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
        (lambda: continuous_profile_bounds(pld.randomizers.gaussian(1.0), 0, [0.1]), "n must"),
        (lambda: continuous_profile_bounds(pld.randomizers.gaussian(1.0), 10, [-0.1]), "eps must"),
        (
            lambda: continuous_profile_bounds(pld.randomizers.gaussian(1.0), 10, [float("nan")]),
            "eps",
        ),
        (
            lambda: continuous_profile_bounds(
                pld.randomizers.gaussian(1.0), 10, [1.0], grid_step=1e-9
            ),
            "grid",
        ),
        (lambda: pld.shuffling.profile_bounds("gaussian", 10, [0.1]), "randomizer"),
        (
            lambda: continuous_profile_bounds(pld.randomizers.gaussian(1e-3), 10, [0.1]),
            "almost no blanket",
        ),
        (
            lambda: continuous_profile_bounds(pld.randomizers.laplace(1e-3), 10, [0.1]),
            "almost no blanket",
        ),
        (lambda: pld.shuffle_observer("laplace", 10), "randomizer"),
        (lambda: pld.shuffle_observer(pld.randomizers.laplace(1.0), 0), "n must"),
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


@pytest.mark.parametrize(("sigma", "n"), [(0.2, 1000), (0.24, 100), (0.05, 10)])
def test_tiny_blanket_falls_back_to_the_local_gaussian_mechanism(sigma, n):
    """Below sigma = (high - low) / 4, "best" is the local mechanism (post-processing):
    exactly pld.gaussian's bracket, no refusal."""
    randomizer = pld.randomizers.gaussian(sigma)
    eps = np.array([0.0, 1.0, 4.0])
    shuffled = pld.shuffle(randomizer, n).delta_bounds(eps)
    local = pld.gaussian(sigma).delta_bounds(eps)
    np.testing.assert_array_equal(shuffled[0], local[0])
    np.testing.assert_array_equal(shuffled[1], local[1])
    assert np.all(local[1] <= gaussian_delta(eps, sigma) * (1 + 1e-9) + 1e-12)


def test_best_profile_is_the_minimum_of_blanket_and_local_mechanism():
    sigma, n = 2.0, 3
    randomizer = pld.randomizers.gaussian(sigma)
    eps = np.array([0.1, 1.0, 3.0])
    local = randomizer.local_mechanism(blanket.LOCAL_LOSS_STEP)
    lower, upper = blanket.best_profile_bounds(randomizer.blanket_law(), n, eps, local)
    (b_lower, b_upper), (l_lower, l_upper) = blanket.best_profile_components(
        randomizer.blanket_law(), n, eps, local
    )[0]
    local_bounds = pld.gaussian(sigma, loss_grid_step=1e-3).delta_bounds(eps)
    np.testing.assert_array_equal(l_lower, local_bounds[0])
    np.testing.assert_array_equal(l_upper, local_bounds[1])
    np.testing.assert_array_equal(upper, np.minimum(b_upper, l_upper))
    np.testing.assert_array_equal(lower, np.minimum(b_lower, l_lower))
    # The blanket component (one eps at a time, each reach aimed by its neighbour's
    # value) brackets what the evaluation of all eps at once brackets.
    blanket_bounds = continuous_profile_bounds(randomizer, n, eps)
    assert np.all(b_lower <= blanket_bounds[1]) and np.all(blanket_bounds[0] <= b_upper)
    assert np.all(upper <= gaussian_delta(eps, sigma) * (1 + 1e-9) + 1e-15)
    # From the first value at the floor on, that value is held (non-increasing).
    held = blanket.best_profile_bounds(randomizer.blanket_law(), n, eps, local, floor=0.5)
    first = min(b_upper[0], l_upper[0])
    np.testing.assert_array_equal(held[1], np.full(3, first))
    np.testing.assert_array_equal(held[0][1:], 0.0)  # [0, held value]: a valid bracket


def test_best_shuffle_gaussian_is_within_eight_percent_of_the_protocol_lower_bound():
    """pld.shuffle's default (best) PLD against the observer's lower bound on the protocol.

    Measured at n = 1e4, sigma = 9.48, inputs [0, 1]: eps(1e-6) is 0.003122 (upper)
    against 0.002876 (observer, lower): the true value lies in this 8.6 % band. A grid
    of eps for connect-the-dots that ends too far out (one point every 0.01 nats) gives
    0.069 here.
    """
    randomizer = pld.randomizers.gaussian(9.48)
    n = 10_000
    upper = pld.shuffle(randomizer, n, num_points=16).epsilon_bounds(1e-6)[1]
    lower = pld.shuffle_observer(randomizer, n).epsilon_bounds(1e-6)[0]
    assert lower <= upper <= 1.09 * lower


def test_gaussian_shuffle_bracket_contains_finer_grids_upper_bound():
    """The bracket holds the composition of the exact one-round profile, not only of its
    connect-the-dots interpolant: a finer eps grid's upper bound (valid, and nearer the
    exact profile) must not fall below the coarse grid's lower bound. With the lower
    side taken at the grid values alone, it did (48 points: coarse lower 0.4 % above the
    96-point upper)."""
    randomizer = pld.randomizers.gaussian(sigma=9.48)
    coarse = pld.shuffle(randomizer, 100, num_points=48)
    fine = pld.shuffle(randomizer, 100, num_points=96)
    for rounds in (1, 100):
        c = coarse.self_compose(rounds) if rounds > 1 else coarse
        f = fine.self_compose(rounds) if rounds > 1 else fine
        c_low, c_up = c.epsilon_bounds(1e-6, rel_accuracy=1.0)
        f_low, f_up = f.epsilon_bounds(1e-6, rel_accuracy=1.0)
        assert c_low <= f_up and f_low <= c_up
        assert f_up <= c_up * (1 + 1e-9)  # the finer grid is tighter
        assert c_up - c_low <= 0.05 * c_up  # and the coarse bracket stays useful


def _two_users_on_a_grid(sigma, eps, nodes=100_000):
    """``delta`` of eq. (1) for n = 2, Gaussian, inputs [0, 1], pair (1, 0), on Simpson
    nodes in the output space (``nodes`` per half, the kink of ``omega_min`` a node):
    ``E[(Z_1 + Z_2)_+]`` is summed exactly over the node measure by sorting the values
    of ``Z``. Independent of the nested quadrature above, whose node width (two
    deviations) is too coarse for sigma < 1 (its value is 3e-4 high at sigma = 0.5,
    eps = 3, where this converges to 1e-12 from 1e5 to 4e5 nodes per half)."""
    alpha = math.exp(eps)
    reach = 14 * sigma
    halves = []
    for a, b in ((-reach, 0.5), (0.5, 1 + reach)):
        y = np.linspace(a, b, 2 * nodes + 1)
        w = np.ones_like(y)
        w[1:-1:2], w[2:-1:2] = 4, 2
        halves.append((y, w * (b - a) / (6 * nodes)))
    (y1, w1), (y2, w2) = halves
    y = np.concatenate([y1, y2[1:]])
    w = np.concatenate([w1[:-1], [w1[-1] + w2[0]], w2[1:]])
    log_low, log_high = norm.logpdf(y, scale=sigma), norm.logpdf(y - 1, scale=sigma)
    log_min = np.minimum(log_low, log_high)
    gamma = float(np.dot(w, np.exp(log_min)))
    weight = w * np.exp(log_min) / gamma
    z = gamma * (np.exp(log_high - log_min) - alpha * np.exp(log_low - log_min))
    one = float(np.dot(weight, np.maximum(z, 0.0)))
    order = np.argsort(z)
    sorted_z, sorted_w = z[order], weight[order]
    mass = np.append(np.cumsum(sorted_w[::-1])[::-1], 0.0)
    moment = np.append(np.cumsum((sorted_w * sorted_z)[::-1])[::-1], 0.0)
    above = np.searchsorted(sorted_z, -z, side="right")
    two = float(np.dot(weight, z * mass[above] + moment[above]))
    return (2 * gamma * (1 - gamma) * one + gamma**2 * two) / (2 * gamma)


@pytest.mark.parametrize(("sigma", "eps"), [(0.5, 3.0), (0.5, 4.0), (0.35, 5.0)])
def test_one_jump_bounds_alone_bracket_two_users(sigma, eps, monkeypatch):
    """The one-jump bounds (docs/blanket-continuous.md §4d) on their own, the remainder
    route of §4b switched off, still bracket the truth of n = 2 (at small noise and
    large eps, where they serve)."""
    from pld.shuffling.blanket import continuous_terms

    truth = _two_users_on_a_grid(sigma, eps)
    monkeypatch.setattr(continuous_terms.Tails, "upper_term", lambda self, n: math.inf)
    monkeypatch.setattr(continuous_terms.Tails, "lower_term", lambda self, n: -math.inf)
    lower, upper = continuous_profile_bounds(pld.randomizers.gaussian(sigma), 2, [eps])
    # The node sums converge to 1e-12 relative; the bounds are wide but valid.
    assert lower[0] <= truth * (1 + 1e-9) and truth <= upper[0] * (1 + 1e-9)
    assert upper[0] <= 2.0 * truth and lower[0] >= 0.5 * truth


@pytest.mark.parametrize("eps", [3.0, 4.0])
def test_small_noise_two_users_against_the_grid_truth(eps):
    """The default bracket at sigma = 0.5 (below the nested quadrature's reach)."""
    truth = _two_users_on_a_grid(0.5, eps)
    lower, upper = continuous_profile_bounds(pld.randomizers.gaussian(0.5), 2, [eps])
    assert lower[0] <= truth * (1 + 1e-9) and truth <= upper[0] * (1 + 1e-9)
    assert upper[0] - lower[0] <= 5e-4 * truth  # measured 1.8e-4 at eps = 3


@pytest.mark.parametrize(("n", "eps"), [(100, 7.0), (100, 8.0), (10_000, 3.0), (10_000, 4.0)])
def test_one_jump_bounds_close_small_noise_brackets(n, eps, monkeypatch):
    """sigma = 0.5: where the other users' drift is far below zero the remainder route
    alone leaves the lower value at 0 and the upper one near the local mechanism's;
    the one-jump bounds give a positive lower value and at most half the upper one,
    inside the remainder route's bracket (measured at the default lattice: n = 100,
    eps = 7: [2.23e-7, 7.70e-7]; eps = 8: [2.57e-9, 9.66e-8]; n = 1e4, eps = 4: [1.28e-9,
    7.92e-9] against [0, 1.41e-6])."""
    from pld.shuffling.blanket import continuous as module

    monkeypatch.setattr(module, "far_bracket", lambda *args: (0.0, math.inf))  # lattice only
    randomizer = pld.randomizers.gaussian(0.5)
    lower, upper = continuous_profile_bounds(randomizer, n, [eps])
    monkeypatch.setattr(module, "one_jump_upper", lambda *args: math.inf)
    monkeypatch.setattr(module, "one_jump_lower", lambda *args: 0.0)
    old_lower, old_upper = continuous_profile_bounds(randomizer, n, [eps])
    assert old_lower[0] <= lower[0] <= upper[0] <= old_upper[0]
    assert lower[0] > 0.0 and upper[0] <= 40.0 * lower[0]
    assert upper[0] <= 0.5 * old_upper[0]


def test_small_noise_blanket_shuffle_builds_past_the_mirror_limit():
    """sigma = 0.5, n = 2, analysis="blanket": the profile reaches 1e-15 only near eps =
    30, beyond which the candidate ends were refused (a lattice index past 2^52) and the
    eps grid collapsed to 0 (scipy's isotonic regression raised), and its mirrored half
    lost the slopes of the hull in float round-off (a pair off by 2e-5 in mass). The
    grid now ends at the last evaluable candidate and mirrors down to -MIRROR_LIMIT:
    the upper pair bounds both directions (docs/blanket-continuous.md §6), and the PLD
    is never above the local mechanism by more than its connect-the-dots step
    (measured 10.995 against 10.997)."""
    sigma = 0.5
    loss = pld.shuffle(pld.randomizers.gaussian(sigma), 2, analysis="blanket")
    assert loss.symmetric
    low, high = loss.epsilon_bounds(1e-6, rel_accuracy=1.0)
    local = pld.gaussian(sigma, sensitivity=1.0).epsilon_bounds(1e-6)[1]
    assert 10.5 <= low <= high <= local * (1 + 1e-3)
