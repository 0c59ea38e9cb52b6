"""pld: tight numerical privacy accounting for the shuffle model.

Privacy-loss distributions (PLDs) on an equidistant loss grid, composed by FFT,
with rigorous two-sided error bounds: every answer is a pair (lower, upper) and
the upper bound is never below the truth.

Names are imported lazily so that ``import pld`` stays fast (no numba, no FFT
planning at import time).
"""

from __future__ import annotations

from pld._lazy import lazy_exports

__version__ = "0.1.0"

_EXPORTS = {
    "PLD": "pld.distribution",
    "LossAtoms": "pld.distribution",
    "from_pmfs": "pld.distribution",
    "compose": "pld.distribution",
    "load": "pld.distribution",
    "from_privacy_profile": "pld.distribution",
    "AccuracyWarning": "pld.distribution",
    "BudgetError": "pld.engine",
    "randomized_response": "pld.central",
    "gaussian": "pld.central",
    "laplace": "pld.central",
    "discrete_laplace": "pld.central",
    "discrete_gaussian": "pld.central",
    "pure_dp": "pld.central",
    "approximate_dp": "pld.central",
    "subsample": "pld.subsampling",
    "poisson_subsample": "pld.subsampling",
    "subsample_without_replacement": "pld.subsampling",
    "subsampled_gaussian": "pld.subsampling",
    "random_allocation": "pld.allocation",
    "clones": "pld.shuffling.clones",
    "krr": "pld.shuffling.krr",
    "shuffle": "pld.shuffling",
    "shuffle_observer": "pld.shuffling",
    "checkin": "pld.shuffling.checkin",
    "distributed_checkin": "pld.shuffling.checkin",
    "calibrate": "pld.calibration",
    "from_dp_event": "pld.integrations.dp_events",
}
_SUBMODULES = (
    "engine",
    "distribution",
    "central",
    "subsampling",
    "allocation",
    "shuffling",
    "mechanisms",
    "randomizers",
    "rdp",
    "integrations",
    "numerics",
    "cli",
    "plot",
    "progress",
)

__all__ = sorted([*_EXPORTS, *_SUBMODULES])


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, _SUBMODULES)
