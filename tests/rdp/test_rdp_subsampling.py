"""Wang et al. Thm 9 (subsampling without replacement) and Liew and Takahashi (2022), eq. 16."""

from __future__ import annotations

import math

import numpy as np
import pytest
from dp_accounting.rdp import rdp_privacy_accountant

from pld.rdp import gaussian, shuffle_gaussian, subsampled, subsampled_shuffle_gaussian


def wang_direct(base: dict[int, float], gamma: float, order: int, eps_inf: float) -> float:
    """Thm 9 term by term in floating point (small orders only); log1p of the sum."""
    cap2 = min(2.0, math.expm1(eps_inf) ** 2) if math.isfinite(eps_inf) else 2.0
    excess = gamma**2 * math.comb(order, 2) * min(4 * math.expm1(base[2]), math.exp(base[2]) * cap2)
    for j in range(3, order + 1):
        cap = min(2.0, math.expm1(eps_inf) ** j) if math.isfinite(eps_inf) else 2.0
        excess += gamma**j * math.comb(order, j) * math.exp((j - 1) * base[j]) * cap
    return math.log1p(excess) / (order - 1)


@pytest.mark.parametrize("gamma", [0.001, 0.05, 0.3])
@pytest.mark.parametrize("eps_inf", [math.inf, 0.8, 3.0])
def test_series_matches_direct_formula(gamma: float, eps_inf: float) -> None:
    orders = np.arange(2, 21)
    sigma = 3.0

    def base_rdp(j: np.ndarray) -> np.ndarray:
        return gaussian(sigma, j)

    ours = subsampled(base_rdp, gamma, orders, eps_infinity=eps_inf)
    base = {int(j): float(v) for j, v in zip(orders, base_rdp(orders), strict=True)}
    direct = np.array(
        [min(wang_direct(base, gamma, int(o), eps_inf), base[int(o)]) for o in orders]
    )
    # both sum the same positive terms; double rounding only
    np.testing.assert_allclose(ours, direct, rtol=1e-12)


def test_gamma_one_is_the_base_and_never_above_it() -> None:
    orders = np.arange(2, 65)
    base = shuffle_gaussian(500, 2.0, orders)
    np.testing.assert_allclose(subsampled_shuffle_gaussian(500, 500, 2.0, orders), base, rtol=0)
    for m in (1, 5, 50, 250, 500):
        sampled = subsampled_shuffle_gaussian(1000, m, 2.0, orders)
        assert np.all(sampled <= shuffle_gaussian(m, 2.0, orders))
        assert np.all(sampled > 0)
    # at a fixed number of shuffled users the bound grows with the rate
    rates = [subsampled_shuffle_gaussian(n, 20, 2.0, orders) for n in (2000, 200, 40)]
    assert np.all(rates[0] < rates[1]) and np.all(rates[1] < rates[2])


@pytest.mark.parametrize(("q", "sigma"), [(0.001, 0.7), (0.01, 1.0), (0.1, 2.0), (0.3, 5.0)])
def test_gaussian_against_dp_accounting(q: float, sigma: float) -> None:
    # dp_accounting implements Wang et al.'s strengthened Gaussian-specific bound
    # (their Thm 27), never above Thm 9: ours must be >= it, and equal where the
    # odd-order refinement does not matter (q <= 0.01 here: observed 3e-12).
    orders = np.arange(2, 65)
    ours = subsampled(lambda j: gaussian(sigma, j), q, orders)
    theirs = rdp_privacy_accountant._compute_rdp_sample_wor_gaussian(q, sigma, orders)
    assert np.all(ours >= theirs * (1 - 1e-12))
    if q <= 0.01:
        np.testing.assert_allclose(ours, theirs, rtol=1e-9)


def test_bad_input() -> None:
    with pytest.raises(ValueError, match="gamma must lie in"):
        subsampled(lambda j: gaussian(1.0, j), 1.5, [2])
    with pytest.raises(ValueError, match="base_rdp must return"):
        subsampled(lambda j: np.array([1.0]), 0.1, [2, 3])
    with pytest.raises(ValueError, match=r"m must be an integer in \[1, n\]"):
        subsampled_shuffle_gaussian(10, 11, 1.0, [2])
