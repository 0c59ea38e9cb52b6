"""RDP <-> DP conversions: Liew and Takahashi (2022), Lemma 2 against dp_accounting, Liew et al.
(2022), Lemma 1's flaws."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from dp_accounting.rdp import rdp_privacy_accountant

from pld.rdp import OrderRangeWarning, RdpAccountant, from_dp, gaussian, to_delta, to_epsilon

ORDERS = np.concatenate([np.linspace(1.1, 10.9, 99), np.arange(11, 257)])


def _converted(convert, rdp: np.ndarray, target: float) -> tuple[float, float]:
    """``convert(rdp, ORDERS, target)``, which warns exactly when its order is an end of
    :data:`ORDERS` (:class:`OrderRangeWarning`)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        value, order = convert(rdp, ORDERS, target)
    at_end = bool(order == ORDERS.max())  # the smallest, 1.1, leaves no room towards 1
    assert [w.category for w in caught] == [OrderRangeWarning] * at_end
    return value, order


@pytest.mark.parametrize("sigma", [0.5, 1.0, 5.0, 30.0])
@pytest.mark.parametrize("rounds", [1, 100, 10000])
@pytest.mark.parametrize("delta", [1e-3, 1e-5, 1e-10])
def test_to_epsilon_matches_dp_accounting(sigma: float, rounds: int, delta: float) -> None:
    # identical inputs (Gaussian RDP on the same orders); dp_accounting's
    # compute_epsilon uses the same conversion, so only rounding differs
    rdp = rounds * gaussian(sigma, ORDERS)
    theirs, their_order = rdp_privacy_accountant.compute_epsilon(ORDERS, rdp, delta)
    ours, order = _converted(to_epsilon, rdp, delta)
    assert ours == pytest.approx(theirs, rel=1e-12)
    assert order == their_order


@pytest.mark.parametrize("sigma", [1.0, 5.0, 30.0])
@pytest.mark.parametrize("epsilon", [0.5, 2.0, 10.0])
def test_to_delta_matches_dp_accounting(sigma: float, epsilon: float) -> None:
    rdp = 50 * gaussian(sigma, ORDERS)
    theirs, _ = rdp_privacy_accountant.compute_delta(ORDERS, rdp, epsilon)
    ours, _ = _converted(to_delta, rdp, epsilon)
    if ours < 1.0:
        assert ours == pytest.approx(theirs, rel=1e-10)
    else:
        # dp_accounting also returns a bound just below 1 where ours caps at 1
        assert theirs > 0.999


def test_round_trip() -> None:
    rdp = 10 * gaussian(3.0, ORDERS)
    eps, _ = to_epsilon(rdp, ORDERS, 1e-6)
    delta, _ = to_delta(rdp, ORDERS, eps)
    assert delta == pytest.approx(1e-6, rel=1e-9)


def test_conversion_is_an_upper_bound_for_the_gaussian() -> None:
    # the exact delta(eps) of the Gaussian mechanism (Balle & Wang 2018) never
    # exceeds the delta certified from its exact RDP curve
    from scipy.stats import norm

    sigma = 2.0
    for eps in (0.1, 0.5, 1.0, 2.0):
        exact = norm.cdf(0.5 / sigma - eps * sigma) - math.exp(eps) * norm.cdf(
            -0.5 / sigma - eps * sigma
        )
        certified, _ = to_delta(gaussian(sigma, ORDERS), ORDERS, eps)
        assert exact <= certified


def test_infinite_rdp_and_bad_input() -> None:
    orders = np.array([2.0, 3.0])
    assert to_epsilon([math.inf, math.inf], orders, 1e-5) == (
        math.inf,
        pytest.approx(math.nan, nan_ok=True),
    )
    with pytest.warns(OrderRangeWarning, match="largest order supplied"):
        assert to_epsilon([math.inf, 1.0], orders, 1e-5)[1] == 3.0
    with pytest.raises(ValueError, match="delta must lie in"):
        to_epsilon([1.0, 1.0], orders, 0.0)
    with pytest.raises(ValueError, match="one value per order"):
        to_epsilon([1.0], orders, 1e-5)
    with pytest.raises(ValueError, match="orders > 1"):
        to_epsilon([1.0], [1.0], 1e-5)
    with pytest.raises(ValueError, match="reals >= 0"):
        to_delta([-1.0, 1.0], orders, 1.0)


def test_accountant_heterogeneous_composition() -> None:
    acc = RdpAccountant(ORDERS)
    acc.compose(gaussian(2.0, ORDERS), rounds=30).compose(lambda o: gaussian(5.0, o), rounds=70)
    expected = 30 * gaussian(2.0, ORDERS) + 70 * gaussian(5.0, ORDERS)
    np.testing.assert_allclose(acc.rdp, expected, rtol=1e-15)
    assert acc.epsilon(1e-5) == to_epsilon(expected, ORDERS, 1e-5)
    assert acc.delta(3.0) == to_delta(expected, ORDERS, 3.0)
    with pytest.raises(ValueError, match="rounds must be an integer >= 0"):
        acc.compose(gaussian(2.0, ORDERS), rounds=-1)


def brute_min(epsilon: float, delta: float, order: float) -> float:
    r = delta + np.logspace(-14, 0, 400001) * (1 - delta)
    r = r[r < 1]
    log_m = np.logaddexp(
        order * np.log(r) + (1 - order) * np.log(r - delta),
        order * np.log1p(-r) + (1 - order) * np.log(math.exp(epsilon) - r + delta),
    )
    return epsilon + log_m.min() / (order - 1)


@pytest.mark.parametrize(("epsilon", "delta"), [(1.0, 1e-5), (8.0, 1e-8), (0.5, 0.1)])
def test_from_dp_is_liew2022_lemma1(epsilon: float, delta: float) -> None:
    # golden-section search against a fine grid over r (grid can only be above)
    orders = np.array([2.0, 5.0, 20.0])
    ours = from_dp(epsilon, delta, orders)
    brute = np.array([brute_min(epsilon, delta, o) for o in orders])
    assert np.all(ours <= brute + 1e-12)
    np.testing.assert_allclose(ours, brute, rtol=1e-5)


def test_from_dp_is_not_an_upper_bound() -> None:
    # (i) randomised response with eps = 1 is (1, 1e-5)-DP; its exact RDP is far
    # above what Lemma 1 assigns to (1, 1e-5)-DP mechanisms
    epsilon, delta = 1.0, 1e-5
    orders = np.array([2.0, 5.0, 20.0])
    p = math.exp(epsilon) / (1 + math.exp(epsilon))
    rr = np.log(p**orders * (1 - p) ** (1 - orders) + (1 - p) ** orders * p ** (1 - orders)) / (
        orders - 1
    )
    lemma1 = from_dp(epsilon, delta, orders)
    assert np.all(lemma1 < rr)
    assert lemma1[0] < rr[0] / 1000  # 6.9e-5 against 0.735 at order 2
    # (ii) the pair P = (delta, (1-delta) p, (1-delta)(1-p), 0) and its mirror Q is
    # (eps, delta)-DP in both directions but P puts mass delta where Q is 0: its Rényi
    # divergence is infinite at every order, while Lemma 1 is finite
    big_p = np.array([delta, (1 - delta) * p, (1 - delta) * (1 - p), 0.0])
    big_q = big_p[::-1]
    for first, second in ((big_p, big_q), (big_q, big_p)):
        hockey_stick = np.sum(np.maximum(first - math.exp(epsilon) * second, 0.0))
        assert hockey_stick == pytest.approx(delta, rel=1e-12)
    assert big_p[0] > 0 and big_q[0] == 0  # D_lam(P || Q) = inf for every lam > 1
    assert np.all(np.isfinite(lemma1))


def test_an_optimum_at_an_end_of_the_orders_warns_and_an_inner_one_does_not() -> None:
    from pld.rdp import OrderRangeWarning

    # Gaussian sigma = 1, T = 1: eps(lam) = lam / 2, the best order at delta = 1e-6 is ~6.
    orders = np.arange(2, 4)
    with pytest.warns(OrderRangeWarning, match="largest order supplied"):
        eps, order = to_epsilon(gaussian(1.0, orders), orders, 1e-6)
    assert order == 3.0 and math.isfinite(eps)
    orders = np.arange(40, 60)
    with pytest.warns(OrderRangeWarning, match="smallest order supplied"):
        assert to_delta(gaussian(1.0, orders), orders, 30.0)[1] == 40.0
    orders = np.arange(2, 64)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        eps, order = to_epsilon(gaussian(1.0, orders), orders, 1e-6)
        assert 2 < order < 63
        assert to_epsilon(gaussian(1.0, [5.0]), [5.0], 1e-6)[1] == 5.0  # one order: no range
