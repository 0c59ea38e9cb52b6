"""Local randomizers: finite (row-stochastic matrices and presets) and continuous.

Names are imported lazily so that ``import pld`` stays fast.
"""

from __future__ import annotations

import importlib
from typing import Any

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


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        value = getattr(importlib.import_module(_EXPORTS[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'pld.randomizers' has no attribute {name!r}")


def __dir__() -> list[str]:
    return __all__
