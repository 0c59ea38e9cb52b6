"""Local randomizers: finite (row-stochastic matrices and presets) and continuous.

Names are imported lazily so that ``import pld`` stays fast.
"""

from __future__ import annotations

from pld._lazy import lazy_exports

_EXPORTS = {
    "Randomizer": "pld.randomizers.base",
    "GaussianRandomizer": "pld.randomizers.continuous",
    "LaplaceRandomizer": "pld.randomizers.continuous",
    "FiniteRandomizer": "pld.randomizers.finite",
    "matrix": "pld.randomizers.finite",
    "krr": "pld.randomizers.finite",
    "local_hashing": "pld.randomizers.finite",
    "hadamard": "pld.randomizers.finite",
    "unary": "pld.randomizers.finite",
    "gaussian": "pld.randomizers.continuous",
    "laplace": "pld.randomizers.continuous",
}

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
