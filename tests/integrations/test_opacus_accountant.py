"""The Opacus accountant (pld.integrations.opacus): interface, numbers, and Opacus itself.

Numbers are checked on the DP-SGD setting of Opacus's own accountant tests
(noise multiplier 1.5, sample rate 0.04, 2250 steps, delta 1e-5), where Opacus
asserts its RDP accountant's epsilon = 7.32911117143 (an upper bound): ours must
not exceed it. Independent estimate of the truth there: Microsoft's
prv_accountant 0.2.0 (eps_error 0.01, delta_error 1e-10) brackets epsilon in
[6.758778, 6.778785]; our bracket must overlap it. The tests that need Opacus
itself (and so torch) skip cleanly without it.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

from pld.central.gaussian_mechanism import gaussian_delta
from pld.integrations.opacus import MECHANISM, Accountant, get_noise_multiplier

OPACUS_RDP_EPSILON = 7.32911117143  # opacus/tests/accountants_test.py, test_rdp_accountant
PRV_BRACKET = (6.758777778666887, 6.778784786948644)


@pytest.fixture(scope="module")
def opacus_setting():
    accountant = Accountant()
    for _ in range(2250):
        accountant.step(noise_multiplier=1.5, sample_rate=0.04)
    return accountant


def test_steps_are_recorded_like_opacus(opacus_setting):
    assert opacus_setting.history == [(1.5, 0.04, 2250)] and len(opacus_setting) == 2250
    accountant = Accountant()
    accountant.step(noise_multiplier=1.0, sample_rate=0.01)
    accountant.step(noise_multiplier=1.0, sample_rate=0.01)
    accountant.step(noise_multiplier=2.0, sample_rate=0.01)
    accountant.step(noise_multiplier=1.0, sample_rate=0.01)
    assert accountant.history == [(1.0, 0.01, 2), (2.0, 0.01, 1), (1.0, 0.01, 1)]
    assert len(accountant) == 4 and Accountant.mechanism() == MECHANISM == "pld"


def test_epsilon_on_opacus_setting_is_below_rdp_and_brackets_the_truth(opacus_setting):
    lower, upper = opacus_setting.epsilon_bounds(1e-5)
    assert upper == opacus_setting.get_epsilon(1e-5)
    assert upper < OPACUS_RDP_EPSILON
    assert lower <= PRV_BRACKET[1] and upper >= PRV_BRACKET[0]
    assert upper - lower <= 1e-4 * upper  # measured 1.9e-5 relative


def test_full_batch_steps_are_the_gaussian_mechanism():
    # Sample rate 1: T steps of N(0, sigma^2) are one Gaussian of sigma / sqrt(T).
    accountant = Accountant()
    for _ in range(16):
        accountant.step(noise_multiplier=4.0, sample_rate=1.0)
    lower, upper = accountant.pld.delta_bounds(np.array([0.5, 1.0]))
    exact = gaussian_delta(np.array([0.5, 1.0]), 1.0)
    assert np.all(lower <= exact * (1 + 1e-9)) and np.all(upper >= exact * (1 - 1e-9))


def test_history_assigned_directly_is_what_is_accounted(opacus_setting):
    # Opacus's get_noise_multiplier sets `history` and calls get_epsilon(delta=...).
    accountant = Accountant()
    assert accountant.get_epsilon(1e-5) == 0.0 and accountant.pld is None
    accountant.history = list(opacus_setting.history)
    assert accountant.get_epsilon(delta=1e-5) == opacus_setting.get_epsilon(1e-5)
    accountant.history = [(1.5, 0.04, 0)]
    assert accountant.get_epsilon(delta=1e-5) == 0.0


def test_state_dict_round_trip_and_refusals(opacus_setting):
    state = opacus_setting.state_dict()
    assert state == {"history": [(1.5, 0.04, 2250)], "mechanism": "pld"}
    restored = Accountant()
    restored.load_state_dict(state)
    assert restored.history == opacus_setting.history and len(restored) == 2250
    destination = {"other": 1}
    assert opacus_setting.state_dict(destination) is destination and "history" in destination
    with pytest.raises(ValueError, match="empty"):
        restored.load_state_dict({})
    with pytest.raises(ValueError, match="'mechanism'"):
        restored.load_state_dict({"history": []})
    with pytest.raises(ValueError, match="mechanism 'rdp'"):
        restored.load_state_dict({"history": [], "mechanism": "rdp"})
    with pytest.raises(ValueError, match="sample_rate"):
        restored.load_state_dict({"history": [(1.0, 2.0, 3)], "mechanism": "pld"})
    with pytest.raises(ValueError, match="triple"):
        restored.load_state_dict({"history": [(1.0, 0.5)], "mechanism": "pld"})
    assert restored.history == opacus_setting.history  # a refused state changes nothing


def test_optimizer_hook_counts_accumulated_batches():
    accountant = Accountant()
    hook = accountant.get_optimizer_hook_fn(sample_rate=0.01)
    hook(SimpleNamespace(noise_multiplier=1.2, accumulated_iterations=4))
    hook(SimpleNamespace(noise_multiplier=1.2, accumulated_iterations=4))
    assert accountant.history == [(1.2, 0.04, 2)]


def test_bad_input_names_the_parameter():
    accountant = Accountant()
    with pytest.raises(ValueError, match="noise_multiplier"):
        accountant.step(noise_multiplier=0.0, sample_rate=0.1)
    with pytest.raises(ValueError, match="sample_rate"):
        accountant.step(noise_multiplier=1.0, sample_rate=0.0)
    with pytest.raises(ValueError, match="sample_rate"):
        accountant.step(noise_multiplier=1.0, sample_rate=1.5)
    with pytest.raises(ValueError, match="delta"):
        accountant.get_epsilon(0.0)
    with pytest.raises(ValueError, match="tail_mass"):
        Accountant(tail_mass=1.0)
    with pytest.raises(ValueError, match="either epochs or steps"):
        get_noise_multiplier(target_epsilon=1.0, target_delta=1e-5, sample_rate=0.1)
    with pytest.raises(ValueError, match="target_epsilon"):
        get_noise_multiplier(target_epsilon=0.0, target_delta=1e-5, sample_rate=0.1, steps=10)


def test_get_noise_multiplier_meets_the_budget_on_the_upper_bound():
    sigma = get_noise_multiplier(
        target_epsilon=2.0, target_delta=1e-5, sample_rate=0.04, steps=100, epsilon_tolerance=0.01
    )
    accountant = Accountant()
    accountant.history = [(sigma, 0.04, 100)]
    assert 2.0 - 0.01 <= accountant.get_epsilon(1e-5) <= 2.0


@pytest.mark.slow
def test_get_noise_multiplier_needs_less_noise_than_opacus_rdp():
    # Opacus's test: epsilon 8, delta 1e-5, rate 0.04, 90 epochs -> RDP sigma 1.416.
    sigma = get_noise_multiplier(target_epsilon=8, target_delta=1e-5, sample_rate=0.04, epochs=90)
    assert sigma < 1.416
    accountant = Accountant()
    accountant.history = [(sigma, 0.04, 2250)]
    assert 8 - 0.01 <= accountant.get_epsilon(1e-5) <= 8


# -- with Opacus installed (it needs torch) ---------------------------------------------------


def test_against_opacus_accountants_and_its_privacy_engine(opacus_setting):
    accountants = pytest.importorskip("opacus.accountants", exc_type=ImportError)
    torch = pytest.importorskip("torch")
    from opacus import PrivacyEngine
    from opacus.accountants.utils import get_noise_multiplier as opacus_noise_multiplier

    rdp = accountants.RDPAccountant()
    rdp.history = list(opacus_setting.history)
    ours = opacus_setting.get_epsilon(1e-5)
    assert ours < rdp.get_epsilon(delta=1e-5)
    prv = accountants.PRVAccountant()
    prv.history = list(opacus_setting.history)
    assert abs(prv.get_epsilon(delta=1e-5) - ours) <= 0.02  # PRV's default eps_error is 0.01
    # Opacus's own search, fed our accountant's rule: same budget, less noise than RDP.
    theirs = opacus_noise_multiplier(
        target_epsilon=4.0, target_delta=1e-5, sample_rate=0.04, steps=200, accountant="rdp"
    )
    mine = get_noise_multiplier(target_epsilon=4.0, target_delta=1e-5, sample_rate=0.04, steps=200)
    assert mine <= theirs

    # The one-line switch: the engine's accountant is ours; training steps are recorded.
    torch.manual_seed(0)
    engine = PrivacyEngine()
    engine.accountant = Accountant()
    model = torch.nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    data = torch.utils.data.TensorDataset(torch.randn(64, 4), torch.randn(64, 1))
    loader = torch.utils.data.DataLoader(data, batch_size=8)
    model, optimizer, loader = engine.make_private(
        module=model,
        optimizer=optimizer,
        data_loader=loader,
        noise_multiplier=1.0,
        max_grad_norm=1.0,
    )
    for features, target in loader:
        optimizer.zero_grad()
        torch.nn.functional.mse_loss(model(features), target).backward()
        optimizer.step()
    assert len(engine.accountant) == len(loader) > 0
    assert engine.accountant.history[0][:2] == (1.0, 8 / 64)
    epsilon = engine.get_epsilon(1e-5)
    assert math.isfinite(epsilon) and epsilon == engine.accountant.get_epsilon(1e-5)
