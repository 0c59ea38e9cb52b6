"""RDP of the Poisson-subsampled Gaussian: closed form, mpmath quadrature and dp_accounting."""

from __future__ import annotations

import numpy as np
import pytest

import pld
from pld.rdp import poisson_subsampled_gaussian, to_epsilon

INTEGER_ORDERS = np.array([2, 3, 4, 5, 8, 10, 16, 32, 64, 256])


def _mpmath_rdp(sigma: float, rate: float, order: float, power: float) -> float:
    """log ∫ phi (1 - q + q e^{(2z-1)/(2σ²)})^power / (order - 1), 30 digits."""
    mp = pytest.importorskip("mpmath")
    mp.mp.dps = 30
    s, q = mp.mpf(sigma), mp.mpf(rate)

    def integrand(z):
        return mp.npdf(z, 0, s) * ((1 - q) + q * mp.exp((2 * z - 1) / (2 * s**2))) ** power

    value = mp.quad(integrand, [-mp.inf, -10 * s, 0, 0.5, order, order + 10 * s, mp.inf])
    return float(mp.log(value) / (order - 1))


@pytest.mark.parametrize(("sigma", "rate"), [(1.0, 0.01), (0.8, 0.05), (2.0, 0.5)])
def test_integer_orders_match_dp_accounting(sigma: float, rate: float) -> None:
    dp_event = pytest.importorskip("dp_accounting.dp_event")
    rdp_accountant = pytest.importorskip("dp_accounting.rdp")
    rounds, delta = 1000, 1e-6
    accountant = rdp_accountant.RdpAccountant(orders=INTEGER_ORDERS.tolist())
    event = dp_event.PoissonSampledDpEvent(rate, dp_event.GaussianDpEvent(sigma))
    accountant.compose(event, rounds)
    theirs = accountant.get_epsilon(delta)
    ours, _ = to_epsilon(
        rounds * poisson_subsampled_gaussian(sigma, rate, INTEGER_ORDERS), INTEGER_ORDERS, delta
    )
    # Same closed form and the same RDP -> DP conversion: agreement to round-off.
    assert ours == pytest.approx(theirs, rel=1e-9)


@pytest.mark.parametrize(
    ("sigma", "rate", "order"), [(1.0, 0.01, 1.25), (0.8, 0.05, 2.5), (2.0, 0.3, 7.3)]
)
def test_fractional_orders_match_mpmath(sigma: float, rate: float, order: float) -> None:
    remove = poisson_subsampled_gaussian(sigma, rate, [order], direction="remove")[0]
    add = poisson_subsampled_gaussian(sigma, rate, [order], direction="add")[0]
    # Quadrature to 1e-12 relative on the moment plus a 1e-11 slack on its log:
    # at most ~4e-7 of these RDP values, always on the upper side.
    truth_remove = _mpmath_rdp(sigma, rate, order, order)
    truth_add = _mpmath_rdp(sigma, rate, order, 1 - order)
    assert truth_remove <= remove <= truth_remove * (1 + 1e-6)
    assert truth_add <= add <= truth_add * (1 + 1e-6)


def test_integer_closed_form_matches_mpmath() -> None:
    for order in (2, 7):
        value = poisson_subsampled_gaussian(1.5, 0.02, [order], direction="remove")[0]
        assert value == pytest.approx(_mpmath_rdp(1.5, 0.02, order, order), rel=1e-11)


@pytest.mark.parametrize(("sigma", "rate"), [(0.5, 0.01), (1.0, 0.1), (3.0, 0.5), (1.0, 0.9)])
def test_addition_is_below_removal(sigma: float, rate: float) -> None:
    orders = np.array([1.5, 2, 3.5, 8, 20])
    add = poisson_subsampled_gaussian(sigma, rate, orders, direction="add")
    remove = poisson_subsampled_gaussian(sigma, rate, orders, direction="remove")
    both = poisson_subsampled_gaussian(sigma, rate, orders)
    assert np.all(add <= remove * (1 + 1e-9))
    np.testing.assert_array_equal(both, np.maximum(add, remove))


def test_full_rate_is_the_gaussian_mechanism() -> None:
    values = poisson_subsampled_gaussian(1.3, 1.0, INTEGER_ORDERS, direction="remove")
    np.testing.assert_allclose(values, pld.rdp.gaussian(1.3, INTEGER_ORDERS), rtol=1e-12)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"sigma": 0.0}, "sigma"),
        ({"sigma": -1.0}, "sigma"),
        ({"rate": 0.0}, "rate"),
        ({"rate": 1.2}, "rate"),
        ({"orders": [1.0]}, "orders"),
        ({"direction": "up"}, "direction"),
    ],
)
def test_bad_input(kwargs: dict, name: str) -> None:
    arguments = {"sigma": 1.0, "rate": 0.01, "orders": [2, 3]} | kwargs
    with pytest.raises(ValueError, match=name):
        poisson_subsampled_gaussian(**arguments)
