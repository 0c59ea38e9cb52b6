"""The Gaussian blanket bracket at small noise and large eps against Monte Carlo.

Truth: the blanket expectation of docs/blanket-continuous.md eq. (1) (Balle et
al. (2019), §5) for the end-point pair x = 1, x' = 0 of a Gaussian randomizer on
[0, 1] with noise sigma, written from its definition in the output space y
(``omega_min = min(p_0, p_1)``, no reduction to the library's variable V):

    delta(eps) = (1/n) E[(X_1 + ... + X_n)_+],   X_i = B_i Z(Y_i) / gamma,
    Z = gamma (p_1 - e^eps p_0) / omega_min,  B_i ~ Bernoulli(gamma),  Y_i ~ omega.

At sigma = 0.5 and eps >= 5 the positive part comes from one report far in the
tail, so plain Monte Carlo is hopeless. The estimator is conditional Monte Carlo
on the largest summand (Asmussen and Kroese (2006), "Improved algorithms for rare
event simulation with heavy tails"): on ``{S > 0}`` the largest ``X_i`` is
positive and continuous, hence a.s. unique, so by exchangeability

    delta = E[h(S', M')],   h(s, m) = E[(X + s)_+; X > m],

with ``S'``, ``M'`` the sum and the maximum of the other n - 1 users' X (sampled)
and ``h`` in closed form: only ``B = 1`` and ``y > 1/2`` contribute (elsewhere
``X <= 1 - e^eps <= 0`` while ``X + s > 0`` would need ``s > 0`` and so
``m > 0``); there ``omega_min = p_0``, and with ``c = e^eps - s``,
``w = max(c, e^eps + m, 1)``, ``y_w = 1/2 + sigma^2 log w``:
``h = Phi((1 - y_w)/sigma) - c Phi(-y_w/sigma)``. ``h`` is checked against
quadrature of the definition, and for n = 1 the estimator is the analytic local
Gaussian hockey stick.

Tolerances. The interval is mean +- 3.29 standard errors (two-sided 99.9 %,
normal approximation): with a correct library, a random seed fails one side with
probability about 5e-4. The seed is fixed, so the test is deterministic. The
normal approximation needs a trustworthy standard error: the terms are bounded
(``h <= n`` times the local hockey stick) and in practice light-tailed (the
largest term is below 1e-3 of the sum here); each test also checks the
standard error against the spread of 40 batch means (their ratio has standard
deviation about 1/sqrt(78) = 0.11 for well-behaved terms; it must lie in
[0.6, 1.6]; over 30 seeds the spread of the estimates was 0.8-1.1 times the
standard error). The interval is about +-1 % of delta (200 000 replicates; 4000
at n = 10^4), so at n = 20, eps = 6 (bracket width 1.6 %) it tests the bracket's
position (an upper bound 2 % too small fails) and at the other two settings, where
the bracket spans a factor 3-6, it would catch an upper bound 1 % below the truth.
(A second, independent estimator -- defensive-mixture importance sampling --
agreed with this one within its interval at every setting here.) The settings at
sigma = 0.25 and 0.3 (n = 10^4 and 10^5, eps 16-22: delta 4e-9 to 9e-12) are where only
the lattice-free bracket reaches (docs/blanket-continuous.md §4e); there the test also
bounds its distance to the truth (upper within 25 %, lower within a factor 0.6).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate
from scipy.special import log_ndtr, ndtr, ndtri

import pld
from pld.shuffling.blanket import continuous_profile_bounds

SIGMA = 0.5
Z999 = 3.2905  # two-sided 99.9 % normal quantile
SEED = 20261122
BATCHES = 40


def _logp(x: float, y: np.ndarray, sigma: float = SIGMA) -> np.ndarray:
    """log N(y; x, sigma^2) up to the constant shared by both inputs."""
    return -0.5 * ((y - x) / sigma) ** 2


def _gamma(sigma: float = SIGMA) -> float:
    return 2.0 * float(ndtr(-0.5 / sigma))


def _sample_omega(rng: np.random.Generator, size: int, sigma: float = SIGMA) -> np.ndarray:
    """Y ~ omega: a fair side; N(0, s^2) given y > 1/2 or N(1, s^2) given y < 1/2."""
    u = 1.0 - rng.random(size)  # in (0, 1]
    z = -ndtri(u * ndtr(-0.5 / sigma))  # N(0, 1) given z > 1/(2 sigma)
    upper = rng.random(size) < 0.5
    return np.where(upper, sigma * z, 1.0 - sigma * z)


def _x_of_y(y: np.ndarray, alpha: float, sigma: float = SIGMA) -> np.ndarray:
    """Z(y) / gamma = (p_1 - alpha p_0) / omega_min."""
    l0, l1 = _logp(0.0, y, sigma), _logp(1.0, y, sigma)
    lmin = np.minimum(l0, l1)
    return np.exp(l1 - lmin) - alpha * np.exp(l0 - lmin)


def _h(alpha: float, s: np.ndarray, m: np.ndarray, sigma: float = SIGMA) -> np.ndarray:
    """h(s, m) = E[(X + s)_+; X > m] in closed form (log space)."""
    c = alpha - s
    w = np.maximum(np.maximum(c, alpha + m), 1.0)
    yw = 0.5 + sigma**2 * np.log(w)
    la = log_ndtr((1.0 - yw) / sigma)
    lb = log_ndtr(-yw / sigma)
    positive = c > 0
    log_c = np.log(np.where(positive, c, 1.0))
    with np.errstate(over="ignore"):
        value = np.where(
            positive,
            np.exp(la) * -np.expm1(np.minimum(log_c + lb - la, 0.0)),
            np.exp(la) - c * np.exp(lb),
        )
    return np.maximum(value, 0.0)


def _terms(
    n: int, eps: float, reps: int, rng: np.random.Generator, sigma: float = SIGMA
) -> np.ndarray:
    """i.i.d. terms h(S', M') whose mean is delta(eps)."""
    alpha = math.exp(eps)
    if n == 1:
        return _h(alpha, np.zeros(reps), np.full(reps, -np.inf), sigma)
    k = rng.binomial(n - 1, _gamma(sigma), size=reps)  # others with B = 1
    x = _x_of_y(_sample_omega(rng, int(k.sum()), sigma), alpha, sigma)
    s = np.zeros(reps)
    m = np.full(reps, -np.inf)
    some = k > 0
    starts = (np.cumsum(k) - k)[some]
    if starts.size:
        s[some] = np.add.reduceat(x, starts)
        m[some] = np.maximum.reduceat(x, starts)
    m = np.where(k < n - 1, np.maximum(m, 0.0), m)  # a user with B = 0 has X = 0
    return _h(alpha, s, m, sigma)


def _quadrature_h(alpha: float, s: float, m: float) -> float:
    """E[(X + s)_+; X > m] by adaptive quadrature of the definition over y."""
    yw = 0.5 + SIGMA**2 * math.log(max(alpha - s, alpha + m, 1.0))
    ref = -0.5 * (yw / SIGMA) ** 2

    def integrand(y: float) -> float:
        l0, l1 = -0.5 * (y / SIGMA) ** 2, -0.5 * ((y - 1.0) / SIGMA) ** 2
        lmin = min(l0, l1)
        x = math.exp(l1 - lmin) - alpha * math.exp(l0 - lmin)
        return math.exp(lmin - ref) * max(x + s, 0.0) * (x > m)

    top = yw + 20 * SIGMA
    value, _ = integrate.quad(integrand, 0.5, top, points=[yw], limit=400, epsrel=1e-11)
    return value * math.exp(ref) / (math.sqrt(2 * math.pi) * SIGMA)


@pytest.mark.parametrize(
    ("eps", "s", "m"),
    [(5.0, -2e3, 0.0), (7.0, -1e5, 30.0), (4.0, 50.0, 80.0), (6.0, 10.0, -5.0)],
)
def test_closed_form_h_matches_quadrature(eps, s, m):
    ours = float(_h(math.exp(eps), np.array([s]), np.array([m]))[0])
    assert ours > 0
    assert ours == pytest.approx(_quadrature_h(math.exp(eps), s, m), rel=1e-8)


@pytest.mark.parametrize("eps", [1.0, 4.0, 7.0])
def test_one_user_is_the_local_gaussian(eps):
    local = ndtr(0.5 / SIGMA - eps * SIGMA) - math.exp(eps) * ndtr(-0.5 / SIGMA - eps * SIGMA)
    ours = _terms(1, eps, 1, np.random.default_rng(SEED))[0]
    assert ours == pytest.approx(local, rel=1e-10)


@pytest.mark.parametrize(
    ("sigma", "n", "eps", "reps"),
    [
        (SIGMA, 20, 6.0, 200_000),
        (SIGMA, 100, 7.0, 200_000),
        (SIGMA, 10_000, 4.0, 4_000),
        (0.25, 10_000, 18.0, 4_000),
        (0.25, 10_000, 22.0, 4_000),
        (0.3, 100_000, 16.0, 400),
    ],
)
def test_bracket_is_consistent_with_monte_carlo(sigma, n, eps, reps):
    terms = _terms(n, eps, reps, np.random.default_rng(SEED), sigma)
    mean = terms.mean()
    se = terms.std(ddof=1) / math.sqrt(reps)
    batch_means = np.array([b.mean() for b in np.array_split(terms, BATCHES)])
    batch_se = batch_means.std(ddof=1) / math.sqrt(BATCHES)
    assert 0.6 <= se / batch_se <= 1.6
    assert terms.max() < 1e-2 * terms.sum()

    law = pld.randomizers.gaussian(sigma).blanket_law()
    lower, upper = continuous_profile_bounds(law, n, np.array([eps]))
    # The truth is below the certified upper bound, above the lower one.
    assert mean - Z999 * se <= upper[0]
    assert mean + Z999 * se >= lower[0]
    if sigma < SIGMA:
        # Where only the lattice-free bracket reaches (docs/blanket-continuous.md §4e):
        # measured upper 1.06-1.15 and lower 0.74-0.91 times the truth.
        assert upper[0] <= 1.25 * (mean + Z999 * se)
        assert lower[0] >= 0.6 * (mean - Z999 * se)
