"""RDP of the engine's discrete pairs (pld.rdp.from_pld): closed forms and brute force."""

from __future__ import annotations

import math
from collections import defaultdict

import numpy as np
import pytest
from scipy.special import logsumexp
from scipy.stats import binom

import pld
from pld.rdp import from_pld, gaussian

ORDERS = np.array([1.5, 2.0, 3.0, 5.0, 10.0, 20.0])


def renyi(p: dict, q: dict, order: float) -> float:
    """D_order(P || Q) of two finite pmfs given as dicts (inf if P is not << Q)."""
    log_terms = []
    for outcome, mass in p.items():
        if mass == 0.0:
            continue
        if q.get(outcome, 0.0) == 0.0:
            return math.inf
        log_terms.append(order * math.log(mass) + (1 - order) * math.log(q[outcome]))
    return float(logsumexp(log_terms)) / (order - 1)


@pytest.mark.parametrize("eps0", [0.5, 1.0, 3.0])
def test_randomized_response_closed_form(eps0: float) -> None:
    p = math.exp(eps0) / (1 + math.exp(eps0))
    exact = np.log(p**ORDERS * (1 - p) ** (1 - ORDERS) + (1 - p) ** ORDERS * p ** (1 - ORDERS))
    exact /= ORDERS - 1
    # losses +-eps0 lie on the grid: the dominating atoms are the pair itself
    ours = from_pld(pld.randomized_response(eps0), ORDERS, infinity_loss=eps0)
    np.testing.assert_allclose(ours, exact, rtol=1e-12)
    # nothing is charged to +inf for randomised response, so the default agrees
    np.testing.assert_allclose(from_pld(pld.randomized_response(eps0), ORDERS), exact, rtol=1e-12)


def test_gaussian_approached_from_above() -> None:
    # truncated tails (mass 1e-20 beyond |loss| ~ 10) are placed at the largest grid
    # loss, which is harmless at orders <= 4 (1e-20 e^{30} << 1e-9); the
    # connect-the-dots atoms dominate, so the values approach lam/2 from above, O(h^2)
    orders = np.array([2.0, 3.0, 4.0])
    exact = gaussian(1.0, orders)
    errors = []
    for step in (1e-2, 1e-3):
        loss = pld.gaussian(1.0, loss_grid_step=step)
        top = max(float(a.loss.max()) for a in loss.atoms("upper"))
        value = from_pld(loss, orders, infinity_loss=top)
        assert np.all(value >= exact)
        errors.append(np.max(value / exact - 1))
    assert errors[0] < 1e-4
    assert errors[1] < errors[0] / 50


def clones_pair(n: int, eps0: float) -> tuple[dict, dict]:
    """Koskela et al. (2023), eq. 3.1 by enumerating C, A and Delta_1 (default p: Delta_2 = 1 -
    Delta_1)."""
    p = 1 / (math.exp(eps0) + 1)
    q = math.exp(eps0) * p
    big_p, big_q = defaultdict(float), defaultdict(float)
    for c in range(n):
        for a in range(c + 1):
            weight = binom.pmf(c, n - 1, 2 * p) * binom.pmf(a, c, 0.5)
            for delta1, w1 in ((1, q), (0, 1 - q)):
                delta2 = 1 - delta1
                big_p[a + delta1, c - a + delta2] += weight * w1
                big_q[a + delta2, c - a + delta1] += weight * w1
    return dict(big_p), dict(big_q)


@pytest.mark.parametrize(("n", "eps0"), [(5, 1.0), (20, 2.0)])
def test_clones_pair_brute_force(n: int, eps0: float) -> None:
    big_p, big_q = clones_pair(n, eps0)
    exact = np.array([max(renyi(big_p, big_q, o), renyi(big_q, big_p, o)) for o in ORDERS])
    loss = pld.clones(n, eps0, truncation="exact", loss_grid_step=1e-4, variant="stronger")
    ours = from_pld(loss, ORDERS, infinity_loss=eps0)
    # dominating atoms: never below; grid error O(h) in the loss
    assert np.all(ours >= exact * (1 - 1e-12))
    np.testing.assert_allclose(ours, exact, rtol=1e-3)


def test_asymmetric_pair_takes_the_larger_direction() -> None:
    p = np.array([0.5, 0.3, 0.2])
    q = np.array([0.2, 0.3, 0.5]) * 0.5 + np.array([0.7, 0.2, 0.1]) * 0.5
    loss = pld.from_pmfs(np.log(p), np.log(q), loss_grid_step=1e-5)
    exact = np.array(
        [
            max(
                renyi(dict(enumerate(p)), dict(enumerate(q)), o),
                renyi(dict(enumerate(q)), dict(enumerate(p)), o),
            )
            for o in ORDERS
        ]
    )
    top = float(np.max(np.abs(np.log(p / q))))
    ours = from_pld(loss, ORDERS, infinity_loss=top)
    assert np.all(ours >= exact * (1 - 1e-12))
    np.testing.assert_allclose(ours, exact, rtol=1e-4)


def test_bad_input() -> None:
    loss = pld.randomized_response(1.0)
    with pytest.raises(ValueError, match="orders > 1"):
        from_pld(loss, [1.0])
    with pytest.raises(ValueError, match="infinity_loss must be a finite real"):
        from_pld(loss, [2.0], infinity_loss=float("nan"))
