"""Random allocation: each user takes part in exactly k of T rounds chosen at random.

* :func:`random_allocation`: the bracketed PLD of one epoch of any one-round mechanism
  under random allocation (:mod:`pld.allocation.mechanism`; docs/random-allocation.md);
* the law of a sum of i.i.d. likelihood ratios, bracketed by a split and a merge
  scheme (:mod:`pld.allocation.sums`, kernels in :mod:`pld.allocation.kernels`);
* one round's dominating and dominated pairs as ratio laws (:mod:`pld.allocation.pairs`).

Names are imported lazily.
"""

from __future__ import annotations

from pld._lazy import lazy_exports

_EXPORTS = {
    "random_allocation": "pld.allocation.mechanism",
}

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
