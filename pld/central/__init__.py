"""Central mechanisms with exact or tightly bracketed privacy-loss distributions.

Randomised response, the Gaussian and Laplace mechanisms, their discrete versions, and
the worst case of any pure or approximate DP mechanism: one small module each.

Names are imported lazily.
"""

from __future__ import annotations

from pld._lazy import lazy_exports

_EXPORTS = {
    "randomized_response": "pld.central.randomized_response_mechanism",
    "gaussian": "pld.central.gaussian_mechanism",
    "gaussian_delta": "pld.central.gaussian_mechanism",
    "log_normal_interval_mass": "pld.central.gaussian_mechanism",
    "log_normal_cell_masses": "pld.central.gaussian_mechanism",
    "WORK_PER_CELL": "pld.central.gaussian_mechanism",
    "laplace": "pld.central.laplace_mechanism",
    "laplace_delta": "pld.central.laplace_mechanism",
    "discrete_laplace": "pld.central.discrete_laplace_mechanism",
    "discrete_gaussian": "pld.central.discrete_gaussian_mechanism",
    "pure_dp": "pld.central.generic_dp",
    "approximate_dp": "pld.central.generic_dp",
}

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
