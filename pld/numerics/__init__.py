"""Numerics shared across the library: binomial laws (:mod:`pld.numerics.binomial`).

Names are imported lazily.
"""

from __future__ import annotations

from pld._lazy import lazy_exports

_EXPORTS = {}
_SUBMODULES = ("binomial",)

__all__ = sorted([*_EXPORTS, *_SUBMODULES])


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, _SUBMODULES)
