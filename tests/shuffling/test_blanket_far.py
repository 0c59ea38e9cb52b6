"""The lattice-free blanket bracket (docs/blanket-continuous.md §4e) and cut eps grids (§6).

Truths: the lattice bracket of ``continuous_profile_bounds`` with the lattice-free bound
switched off (checked against quadrature and Monte Carlo elsewhere,
tests/oracles/test_blanket_small_noise_mc.py), the analytic Gaussian and Laplace
hockey sticks for one user, and the exact Gaussian mechanism for cut grids.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import ndtr

import pld
from pld.shuffling.blanket import continuous, continuous_profile_bounds
from pld.shuffling.blanket.continuous_far import far_bracket
from pld.shuffling.grid import MIRROR_LIMIT, profile_pld


def _gaussian_delta(sigma: float, eps: np.ndarray) -> np.ndarray:
    """Hockey stick of N(1, sigma^2) against N(0, sigma^2) (Balle and Wang 2018, Thm 8)."""
    return ndtr(0.5 / sigma - eps * sigma) - np.exp(eps) * ndtr(-0.5 / sigma - eps * sigma)


def _lattice_only(law, n, eps, monkeypatch):
    monkeypatch.setattr(continuous, "far_bracket", lambda *args: (0.0, math.inf))
    return continuous_profile_bounds(law, n, np.array([eps]))


@pytest.mark.parametrize(
    ("randomizer", "n", "eps"),
    [
        (pld.randomizers.gaussian(1.0), 2, 0.5),
        (pld.randomizers.gaussian(1.0), 100, 1.0),
        (pld.randomizers.gaussian(0.5), 100, 4.0),
        (pld.randomizers.gaussian(0.5), 20, 6.0),
        (pld.randomizers.laplace(0.5), 2, 1.0),
        (pld.randomizers.laplace(0.5), 100, 0.5),
        (pld.randomizers.laplace(1.0), 100, 0.1),
    ],
)
def test_lattice_free_bracket_overlaps_the_lattice_one(randomizer, n, eps, monkeypatch):
    law = randomizer.blanket_law()
    lower, upper = far_bracket(law, n, math.exp(eps))
    lattice_lower, lattice_upper = _lattice_only(law, n, eps, monkeypatch)
    # Both are valid brackets of the same number (float slack 1e-9).
    assert 0.0 <= lower <= upper
    assert lower <= lattice_upper[0] * (1 + 1e-9)
    assert upper >= lattice_lower[0] * (1 - 1e-9)


@pytest.mark.parametrize("eps", [0.5, 2.0, 6.0])
def test_one_user_brackets_the_local_gaussian_tightly(eps):
    law = pld.randomizers.gaussian(0.5).blanket_law()
    lower, upper = far_bracket(law, 1, math.exp(eps))
    exact = float(_gaussian_delta(0.5, np.array([eps]))[0])
    assert lower <= exact * (1 + 1e-9) and exact <= upper
    # Buckets of ratio 1.02 and 96 exponents: measured 0.3 % high.
    assert upper <= 1.01 * exact


def test_one_user_brackets_the_local_laplace():
    law = pld.randomizers.laplace(0.5).blanket_law()
    eps = 1.0
    # Laplace(b) with sensitivity 2b' ... here (high - low) / b = 2: delta = 1 - e^{(eps - 2)/2}.
    exact = 1.0 - math.exp((eps - 2.0) / 2.0)
    lower, upper = far_bracket(law, 1, math.exp(eps))
    assert lower <= exact * (1 + 1e-9) and exact <= upper <= 1.01 * exact


def test_small_noise_shuffle_is_far_below_the_local_mechanism():
    # sigma = (high - low) / 4, n = 10^4: the lattice alone left the local mechanism's
    # 26.36; Monte Carlo puts the blanket's eps(1e-6) near 17.6 (delta(18) = 7.8e-7).
    loss = pld.shuffle(pld.randomizers.gaussian(0.25), 10_000)
    lower, upper = loss.epsilon_bounds(1e-6, rel_accuracy=0.05)
    local = pld.gaussian(0.25, sensitivity=1.0).epsilon_bounds(1e-6)[1]
    assert local == pytest.approx(26.357, abs=1e-2)
    assert 17.0 <= lower <= upper <= 18.0


def _cut_grid_pld(sigma: float):
    def profiles(eps, lower_side=True, fineness=1.0):
        exact = _gaussian_delta(sigma, np.asarray(eps))
        return [(exact, exact)], True

    return profile_pld(profiles, lambda eps: _gaussian_delta(sigma, eps), math.inf, None)


def test_a_cut_grid_bounds_both_directions_at_every_eps():
    # sigma = 0.25: delta(MIRROR_LIMIT) ~ 1e-3, so the cut matters; the exact Gaussian
    # mechanism is symmetric, its profile the truth of both directions.
    loss = _cut_grid_pld(0.25)
    eps = np.linspace(0.0, 40.0, 81)
    truth = _gaussian_delta(0.25, eps)
    lower, upper = loss.delta_bounds(eps, rel_accuracy=1.0)
    assert _gaussian_delta(0.25, np.array([MIRROR_LIMIT]))[0] > 1e-4
    assert np.all(upper >= truth * (1 - 1e-9))
    assert np.all(lower <= truth * (1 + 1e-9) + 1e-300)
    # No mass held at +inf beyond float round-off of the cut (measured 8e-13).
    assert upper[-1] <= 1e-11
    # Ten rounds: the Gaussian with sigma / sqrt(10).
    composed = loss.self_compose(10)
    exact = _gaussian_delta(0.25 / math.sqrt(10), np.array([40.0, 60.0]))
    lower, upper = composed.delta_bounds(np.array([40.0, 60.0]), rel_accuracy=1.0)
    assert np.all(lower <= exact * (1 + 1e-9)) and np.all(exact <= upper)


def test_the_lattice_free_bracket_never_stops_the_lattice_from_reaching_further():
    # sigma = 1, n = 100 at delta ~ 1e-12: the lattice's first reach is wide, the
    # lattice-free bracket lies inside it, and a longer reach then narrows the bracket
    # to 8e-5 relative (stopping at the lattice-free bracket left [4.6e-12, 1.0e-11],
    # and eps(1e-12) of pld.shuffle at [2.598, 2.816] instead of [2.772, 2.774]).
    law = pld.randomizers.gaussian(1.0).blanket_law()
    step = continuous.default_grid_step(law) * continuous.STEPS_PER_STD
    step /= continuous.SHUFFLE_STEPS_PER_STD
    lower, upper = continuous_profile_bounds(law, 100, np.array([2.5, 3.0]), grid_step=step)
    assert np.all(upper - lower <= 1e-3 * upper)
