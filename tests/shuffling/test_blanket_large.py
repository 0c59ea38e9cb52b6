"""The finite blanket divergence at 10^8 - 10^10 users (pld/shuffling/blanket/smooth.py).

Independent truths used here:

* the blanket divergence of binary randomized response as a 1-d lattice sum with
  Boost's binomial tails (tests/oracles/large_populations.py), at n = 10^8 (10^9
  under ``-m slow``);
* 50-digit values of the moment generating function, for the log1p/expm1 evaluation
  and its error bound;
* the definition of stochastic order, for the laws each side evaluates.

The bracket's relative width must not grow with n (it grew like n before: 2.6e-3 at
10^9, 2.5e-2 at 10^10).
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

import pld
from pld.numerics.iid_sums import ExactLaw
from pld.shuffling import profile_bounds
from pld.shuffling.blanket import smooth
from tests.oracles import large_populations as oracle


def _check_two_value(n: int) -> None:
    r = pld.randomizers.krr(2, eps0=1.0)
    rho_x, rho_y, mass = r.blanket_classes()[0]
    for scale in (1.0, 2.0, 3.0):
        eps = 2 * scale / math.sqrt(n)
        z = rho_x - math.exp(eps) * rho_y
        truth, error = oracle.two_value_blanket(n, mass[0], z[0], mass[1], z[1])
        lower, upper = profile_bounds(r, n, np.array([eps]))
        assert lower[0] - error <= truth <= upper[0] + error, (eps, lower, truth, upper)
        assert upper[0] - lower[0] <= 1e-4 * upper[0]


def test_binary_randomized_response_at_a_hundred_million_users():
    _check_two_value(10**8)


@pytest.mark.slow
def test_binary_randomized_response_at_a_billion_users():
    _check_two_value(10**9)


@pytest.mark.parametrize(
    "randomizer",
    [pld.randomizers.local_hashing(2.0, 100), pld.randomizers.hadamard(2.0, 63)],
    ids=["olh", "hadamard"],
)
def test_bracket_width_does_not_grow_with_n(randomizer):
    widths = []
    for n in (10**5, 10**7, 10**9, 10**10):
        # delta from about 1e-4 to 1e-25 (beyond, the Chernoff bound is the answer)
        eps = np.array([0.25, 0.5, 1.0]) * math.sqrt(8 * 56 / n)
        lower, upper = profile_bounds(randomizer, n, eps)
        assert np.all(upper > 1e-30)
        widths.append(float(np.max((upper - lower) / upper)))
    assert max(widths) <= 2 * widths[0] and max(widths) < 1e-4, widths


def _tail(values: np.ndarray, masses: np.ndarray, x: float) -> float:
    """P(W >= x) of the law with the rest of the mass at 0."""
    rest = 1.0 - float(np.sum(masses))
    return float(np.sum(masses[values >= x])) + (rest if x <= 0 else 0.0)


def test_side_laws_bound_every_law_within_the_errors():
    rng = np.random.default_rng(3)
    for _ in range(50):
        values = np.append(rng.normal(size=5), 0.0)
        masses = rng.uniform(0.01, 0.15, size=6)
        errors = np.append(rng.uniform(0, 1e-3, size=5), 0.0)
        kappa = 1e-3
        upper = smooth._side_law(values, masses, errors, kappa, "upper")
        lower = smooth._side_law(values, masses, errors, kappa, "lower")
        # A law within the errors: values moved, masses scaled, the rest at 0.
        moved = values + rng.uniform(-1, 1, size=6) * errors
        scaled = masses * (1 + rng.uniform(-1, 1, size=6) * kappa)
        live = moved != 0
        for x in np.concatenate((values, values + 1e-4, values - 1e-4, [0.0])):
            middle = _tail(moved[live], scaled[live], x)
            assert _tail(upper.value, upper.mass, x) >= middle - 1e-15
            assert _tail(lower.value, lower.mass, x) <= middle + 1e-15


def test_no_mass_at_zero_to_absorb_the_errors_is_refused():
    values = np.array([1.0, -2.0])
    masses = np.array([0.6, 0.4])
    with pytest.raises(smooth.SmoothingError, match="no mass at 0"):
        smooth._side_law(values, masses, np.zeros(2), 1e-12, "upper")


def test_log_mgf_and_characteristic_function_within_their_bounds():
    law = ExactLaw(np.array([3.7, -0.9, 1e-3, -250.0]), np.array([0.01, 0.3, 0.2, 1e-9]))
    thetas = np.array([1e-6, 0.01, 0.3, 2.0])
    omegas = np.array([0.0, 1e-4, 0.5, 7.0, 300.0])
    with mpmath.workdps(50):

        def exact(z):
            total = mpmath.mpf(1)
            for v, m in zip(law.value, law.mass, strict=True):
                total += mpmath.mpf(m) * mpmath.expm1(z * mpmath.mpf(v))
            return mpmath.log(total)

        values, errors = law.log_mgf(thetas)
        for theta, value, error in zip(thetas, values, errors, strict=True):
            assert abs(value - float(exact(mpmath.mpf(theta)))) <= error
            logs, bounds = law.log_cf(float(theta), omegas)
            for omega, got, bound in zip(omegas, logs, bounds, strict=True):
                want = exact(mpmath.mpc(theta, omega))
                assert abs(complex(want) - got) <= bound + 1e-300


def test_observer_masses_against_exact_multinomials_at_a_hundred_million():
    from pld.shuffling import observer

    total = 10**8 - 1
    pi = np.array([0.11, 0.62, 0.27])
    a = np.array([total // 10 + 5000, 11 * total // 100 - 20000])
    b = np.array([62 * total // 100, 62 * total // 100 + 30000])
    got = observer._log_multinomial(total, a, b, pi).reshape(a.size, b.size)
    with mpmath.workdps(40):
        for i, ai in enumerate(a):
            for j, bj in enumerate(b):
                rest = total - ai - bj
                exact = (
                    mpmath.loggamma(total + 1)
                    - mpmath.loggamma(ai + 1)
                    - mpmath.loggamma(bj + 1)
                    - mpmath.loggamma(rest + 1)
                    + ai * mpmath.log(pi[0])
                    + bj * mpmath.log(pi[1])
                    # the third group has the rest: 1 - pi_0 - pi_1 (not the float pi_2)
                    + rest * mpmath.log(1 - mpmath.mpf(pi[0]) - mpmath.mpf(pi[1]))
                )
                # The observer declares 1e-9 relative to from_pmfs; Loader's pmfs do far better.
                assert abs(got[i, j] - float(exact)) <= 1e-11 * (1 + abs(float(exact)))


@pytest.mark.parametrize("n", [10**7, pytest.param(10**8, marks=pytest.mark.slow)])
def test_observer_at_scale_stays_below_the_upper_bound(n):
    # (refused above 10^6 before: log-factorial tables of n entries, masses off by 2e-7)
    randomizer = pld.randomizers.local_hashing(2.0, 100)
    low = pld.shuffle_observer(randomizer, n).self_compose(10)
    high = pld.shuffle(randomizer, n).self_compose(10)
    eps = np.array([0.0, 0.002, 0.005, 0.01])
    lower = low.delta_bounds(eps, rel_accuracy=1.0)[0]
    upper = high.delta_bounds(eps, rel_accuracy=1.0)[1]
    assert np.all(lower <= upper) and lower[0] > 0.5 * upper[0]
