"""Refinement stops at its wall-clock budget with a warning and the best bracket so far."""

from __future__ import annotations

import pytest

import pld
from pld.distribution import refinement


def test_refinement_stops_at_its_time_budget(monkeypatch):
    """A rebuild predicted to end beyond the budget is not started: with none left,
    the raw bracket comes back with an AccuracyWarning naming the budget; with the
    PLD's build time unknown (0), the first rebuild runs and the second is refused,
    its bracket narrower than the raw one and still holding the exact eps."""
    raw = pld.gaussian(1.0, loss_grid_step=0.05).epsilon_bounds(1e-6, rel_accuracy=1.0)
    exact = pld.gaussian(1.0, loss_grid_step=1e-4).epsilon_bounds(1e-6, rel_accuracy=1e-6)
    monkeypatch.setattr(refinement, "REFINEMENT_SECONDS", 0.0)
    fresh = pld.gaussian(1.0, loss_grid_step=0.05)
    assert fresh._build_seconds > 0
    with pytest.warns(pld.AccuracyWarning, match="REFINEMENT_SECONDS"):
        assert fresh.epsilon_bounds(1e-6, rel_accuracy=1e-9) == raw
    unknown = pld.gaussian(1.0, loss_grid_step=0.05)
    unknown._build_seconds = 0.0
    with pytest.warns(pld.AccuracyWarning, match="REFINEMENT_SECONDS"):
        lower, upper = unknown.epsilon_bounds(1e-6, rel_accuracy=1e-9)
    assert raw[0] <= lower <= exact[0] and exact[1] <= upper <= raw[1]
    assert upper - lower < raw[1] - raw[0]
