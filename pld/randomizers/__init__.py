"""Local randomizers: finite (row-stochastic matrices and presets), continuous, vector.

Names are imported lazily so that ``import pld`` stays fast.
"""

from __future__ import annotations

from pld._lazy import lazy_exports

_EXPORTS = {
    "Randomizer": "pld.randomizers.base",
    "check_randomizer": "pld.randomizers.base",
    "GaussianRandomizer": "pld.randomizers.continuous",
    "LaplaceRandomizer": "pld.randomizers.continuous",
    "VectorGaussianRandomizer": "pld.randomizers.vector",
    "vector_gaussian": "pld.randomizers.vector",
    "FiniteRandomizer": "pld.randomizers.finite",
    "matrix": "pld.randomizers.finite",
    "krr": "pld.randomizers.presets",
    "local_hashing": "pld.randomizers.presets",
    "hadamard": "pld.randomizers.presets",
    "unary": "pld.randomizers.presets",
    "sampled": "pld.randomizers.sampling",
    "binary_sum_coins": "pld.randomizers.messages",
    "CoinMessages": "pld.randomizers.messages",
    "gaussian": "pld.randomizers.continuous",
    "laplace": "pld.randomizers.continuous",
    "from_options": "pld.randomizers.by_name",
    "NAMES": "pld.randomizers.by_name",
}

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
