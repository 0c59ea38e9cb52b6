"""The Opacus accountant for shuffled batches (pld.integrations.opacus.ShuffledAccountant).

Truths: ``pld.random_allocation(pld.gaussian(sigma), rounds=T).self_compose(epochs)``
computed directly (the accountant must build exactly that, so its bracket equals
that one's to float round-off, 1e-12 relative), and the Gaussian's closed form
(Balle and Wang 2018): with T = 1 every epoch is one Gaussian step, and for any T
an epoch is never worse than one full Gaussian round (the allocation hides the
step), so ``delta`` after E epochs lies below that of the Gaussian of
``sigma / sqrt(E)``. Opacus itself is not needed.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

import pld
from pld.central.gaussian_mechanism import gaussian_delta
from pld.integrations.opacus import (
    SHUFFLED_MECHANISM,
    Accountant,
    ShuffledAccountant,
    steps_per_epoch,
)

ROUND_OFF = 1e-12
DELTA = 1e-6


@pytest.fixture(scope="module")
def epochs():
    """One epoch of T = 10 steps at noise multipliers 1 and 2."""
    return {sigma: pld.random_allocation(pld.gaussian(sigma), rounds=10) for sigma in (1.0, 2.0)}


def _same(a, b):
    return all(math.isclose(x, y, rel_tol=ROUND_OFF) for x, y in zip(a, b, strict=True))


def _run(history):
    accountant = ShuffledAccountant()
    for noise_multiplier, sample_rate, steps in history:
        for _ in range(steps):
            accountant.step(noise_multiplier=noise_multiplier, sample_rate=sample_rate)
    return accountant


def test_epochs_are_random_allocations_composed(epochs):
    accountant = _run([(1.0, 0.1, 50)])
    assert accountant.history == [(1.0, 0.1, 50)] and len(accountant) == 50
    direct = epochs[1.0].self_compose(5)
    assert _same(accountant.epsilon_bounds(DELTA), direct.epsilon_bounds(DELTA))
    assert accountant.get_epsilon(DELTA) == accountant.epsilon_bounds(DELTA)[1]
    eps = np.array([0.5, 1.0, 2.0])
    upper = accountant.pld.delta_bounds(eps)[1]
    # Never worse than a full Gaussian round per epoch (measured 0.19, 0.088, 0.011
    # against 0.67, 0.59, 0.43).
    assert np.all(upper < gaussian_delta(eps, 1.0 / math.sqrt(5)))


def test_one_step_per_epoch_is_the_gaussian():
    accountant = _run([(4.0, 1.0, 16)])
    eps = np.array([0.5, 1.0])
    lower, upper = accountant.pld.delta_bounds(eps)
    exact = gaussian_delta(eps, 1.0)  # 16 steps of sigma 4: one Gaussian of sigma 1
    assert np.all(lower <= exact * (1 + 1e-9)) and np.all(upper >= exact * (1 - 1e-9))


def test_partial_epochs_and_noise_changes_are_charged_conservatively(epochs):
    # 15 steps: one epoch and a half, charged as two.
    assert _same(
        _run([(1.0, 0.1, 15)]).epsilon_bounds(DELTA),
        epochs[1.0].self_compose(2).epsilon_bounds(DELTA),
    )
    # Noise 2 then 1 inside the first epoch: charged at 1; the second epoch at 2.
    accountant = _run([(2.0, 0.1, 5), (1.0, 0.1, 5), (2.0, 0.1, 10)])
    direct = pld.compose(epochs[1.0], epochs[2.0])
    assert _same(accountant.epsilon_bounds(DELTA), direct.epsilon_bounds(DELTA))


def test_bad_rates_are_refused():
    assert steps_per_epoch(0.1) == 10 and steps_per_epoch(1 / 3) == 3
    with pytest.raises(ValueError, match="sample_rate must be 1/T"):
        ShuffledAccountant().step(noise_multiplier=1.0, sample_rate=0.3)
    with pytest.raises(ValueError, match="sample_rate"):
        ShuffledAccountant().step(noise_multiplier=1.0, sample_rate=0.0)
    accountant = ShuffledAccountant()
    accountant.history = [(1.0, 0.1, 5), (1.0, 0.25, 4)]
    with pytest.raises(ValueError, match="inside an epoch"):
        accountant.get_epsilon(DELTA)


def test_state_hook_and_name(epochs):
    accountant = ShuffledAccountant()
    hook = accountant.get_optimizer_hook_fn(sample_rate=0.05)
    for _ in range(10):
        hook(SimpleNamespace(noise_multiplier=2.0, accumulated_iterations=2))
    assert accountant.history == [(2.0, 0.1, 10)]
    state = accountant.state_dict()
    assert state == {"history": [(2.0, 0.1, 10)], "mechanism": SHUFFLED_MECHANISM}
    assert ShuffledAccountant.mechanism() == "pld-allocation" != Accountant.mechanism()
    restored = ShuffledAccountant()
    restored.load_state_dict(state)
    assert _same(restored.epsilon_bounds(DELTA), epochs[2.0].epsilon_bounds(DELTA))
    with pytest.raises(ValueError, match="mechanism 'pld'"):
        restored.load_state_dict(Accountant().state_dict())
