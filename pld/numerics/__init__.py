"""Numerics shared across the library: constants, binomial laws (:mod:`pld.numerics.binomial`;
Loader's pmf with an n-free error, :mod:`pld.numerics.binomial_pmf`), sums of i.i.d.
variables (:mod:`pld.numerics.iid_sums`).

Names are imported lazily.
"""

from __future__ import annotations

from pld._lazy import lazy_exports

_EXPORTS = {
    "UNIT_ROUNDOFF": "pld.numerics.constants",
    "MAX_EPS0": "pld.numerics.constants",
}
_SUBMODULES = ("binomial", "binomial_pmf", "iid_sums")

__all__ = sorted([*_EXPORTS, *_SUBMODULES])


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, _SUBMODULES)
