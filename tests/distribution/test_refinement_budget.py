"""Refinement stops at its wall-clock budget with a warning and the best bracket so far."""

from __future__ import annotations

import pytest

import pld
from pld.distribution import refinement


def test_refinement_stops_at_its_time_budget(monkeypatch):
    """With no time left after the first rebuild, the second is not started: the
    bracket of the first refinement is returned (narrower than the raw one, still
    containing the exact eps of the Gaussian mechanism) with an AccuracyWarning that
    names the budget."""
    loss = pld.gaussian(1.0, loss_grid_step=0.05)
    raw = loss.epsilon_bounds(1e-6, rel_accuracy=1.0)
    exact = pld.gaussian(1.0, loss_grid_step=1e-4).epsilon_bounds(1e-6, rel_accuracy=1e-6)
    monkeypatch.setattr(refinement, "REFINEMENT_SECONDS", 0.0)
    fresh = pld.gaussian(1.0, loss_grid_step=0.05)
    with pytest.warns(pld.AccuracyWarning, match="REFINEMENT_SECONDS"):
        lower, upper = fresh.epsilon_bounds(1e-6, rel_accuracy=1e-9)
    assert raw[0] <= lower <= exact[0] and exact[1] <= upper <= raw[1]
    assert upper - lower < raw[1] - raw[0]
