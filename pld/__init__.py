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
    "PLD": "pld.loss_distribution",
    "AccuracyWarning": "pld.refinement",
    "LossAtoms": "pld.loss_distribution",
    "from_pmfs": "pld.construction",
    "compose": "pld.loss_distribution",
    "randomized_response": "pld.mechanisms.randomized_response",
    "gaussian": "pld.mechanisms.gaussian",
    "subsampled_gaussian": "pld.mechanisms.subsampled_gaussian",
    "clones": "pld.mechanisms.clones",
    "krr": "pld.mechanisms.krr",
    "from_privacy_profile": "pld.mechanisms.profile",
    "subsample": "pld.mechanisms.subsample",
    "laplace": "pld.mechanisms.laplace",
    "discrete_laplace": "pld.mechanisms.discrete_laplace",
    "discrete_gaussian": "pld.mechanisms.discrete_gaussian",
    "pure_dp": "pld.mechanisms.generic_dp",
    "approximate_dp": "pld.mechanisms.generic_dp",
    "poisson_subsample": "pld.mechanisms.sampling",
    "subsample_without_replacement": "pld.mechanisms.sampling",
    "shuffle": "pld.mechanisms.blanket",
    "shuffle_observer": "pld.mechanisms.blanket",
    "checkin": "pld.mechanisms.checkin",
    "distributed_checkin": "pld.mechanisms.checkin",
    "calibrate": "pld.calibration",
    "load": "pld.loss_distribution",
    "from_dp_event": "pld.integrations.dp_events",
}
_SUBMODULES = (
    "rdp",
    "engine",
    "mechanisms",
    "randomizers",
    "plot",
    "progress",
    "integrations",
)

__all__ = sorted([*_EXPORTS, *_SUBMODULES])


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, _SUBMODULES)
