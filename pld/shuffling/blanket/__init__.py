"""The privacy blanket of a specific local randomizer: one round's delta(eps), bracketed.

* finite randomizers: :mod:`pld.shuffling.blanket.finite` (exact enumeration, or the
  smoothed characteristic-function evaluator of :mod:`pld.shuffling.blanket.smooth`);
* continuous randomizers (Gaussian, Laplace on an interval):
  :mod:`pld.shuffling.blanket.continuous` with its lattice sum evaluator
  :mod:`pld.shuffling.blanket.continuous_sum`.

Names are imported lazily.
"""

from __future__ import annotations

from pld._lazy import lazy_exports

_EXPORTS = {
    "positive_part_bounds": "pld.shuffling.blanket.finite",
    "chernoff_upper": "pld.shuffling.blanket.finite",
    "continuous_profile_bounds": "pld.shuffling.blanket.continuous",
    "best_profile_bounds": "pld.shuffling.blanket.continuous",
    "best_profile_components": "pld.shuffling.blanket.continuous",
    "blanket_available": "pld.shuffling.blanket.continuous",
    "local_mechanism": "pld.shuffling.blanket.continuous",
    "observer": "pld.shuffling.blanket.continuous",
}

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
