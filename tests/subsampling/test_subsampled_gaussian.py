"""The Poisson-subsampled Gaussian against independent values.

* One step at eps = 0: delta(0) is the total variation q (Phi(1/(2σ)) - Phi(-1/(2σ)))
  (the remove direction; the add direction has the same TV), in closed form.
* One step at any eps: the hockey stick of the continuous pair in closed form.
  The loss is increasing in the output x, so {P > e^eps Q} is the half-line
  x > x*(eps) with x*(l) = σ² log((e^l - 1 + q) / q) + 1/2, and
  H = P(x > x*) - e^eps Q(x > x*); the add direction uses x < x*(-eps).
* 1000 steps: the value on which dp_accounting, prv_accountant and
  pld-accountant agree, delta(1) = 0.0026124 (shared/notes/measurements.md,
  printed to 5 significant digits, so rounding error 5e-8).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import norm

from pld.subsampling.subsampled_gaussian_mechanism import subsampled_gaussian


def _hockey_stick(eps, sigma, rate):
    def threshold(loss):
        excess = np.expm1(loss) + rate
        return sigma**2 * np.log(excess / rate) + 0.5 if excess > 0 else -np.inf

    above = threshold(eps)
    p_above = (1 - rate) * norm.sf(above / sigma) + rate * norm.sf((above - 1) / sigma)
    remove = p_above - np.exp(eps) * norm.sf(above / sigma)
    below = threshold(-eps)
    p_below = (1 - rate) * norm.cdf(below / sigma) + rate * norm.cdf((below - 1) / sigma)
    add = norm.cdf(below / sigma) - np.exp(eps) * p_below
    return max(remove, add, 0.0)


@pytest.mark.parametrize("sigma, rate", [(1.0, 0.01), (2.0, 0.1), (0.8, 0.5)])
def test_one_step_matches_quadrature(sigma, rate):
    one = subsampled_gaussian(sigma, rate)
    eps = np.array([0.0, 0.01, 0.05, 0.2])
    truth = np.array([_hockey_stick(e, sigma, rate) for e in eps])
    lower, upper = one.delta_bounds(eps)
    assert np.all(lower <= truth + 1e-12) and np.all(upper >= truth - 1e-12)
    tv = rate * (norm.cdf(1 / (2 * sigma)) - norm.cdf(-1 / (2 * sigma)))
    assert lower[0] <= tv <= upper[0]


def test_thousand_steps_match_the_peers_reference_value():
    composed = subsampled_gaussian(1.0, 0.01).self_compose(1000)
    lower, upper = composed.delta_bounds(1.0)
    assert lower - 5e-8 <= 0.0026124 <= upper + 5e-8
    assert (upper - lower) / upper < 1e-3
