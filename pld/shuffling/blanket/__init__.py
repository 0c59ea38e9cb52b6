"""The privacy blanket of a specific local randomizer: one round's delta(eps), bracketed.

* finite randomizers: :mod:`pld.shuffling.blanket.finite` (exact enumeration, or the
  smoothed characteristic-function evaluator of :mod:`pld.shuffling.blanket.smooth`);
* continuous randomizers (Gaussian, Laplace on an interval): the law of their blanket
  ratio (:mod:`pld.shuffling.blanket.continuous_law`), one term on a lattice
  (:mod:`pld.shuffling.blanket.continuous_terms`), its lattice laws
  (:mod:`pld.shuffling.blanket.continuous_sum`), the tilted n-fold sum on a window
  (:mod:`pld.shuffling.blanket.continuous_window`) and the profile
  (:mod:`pld.shuffling.blanket.continuous`);
* the Gaussian on a set of diameter Delta in any dimension (the clipped vector
  Gaussian): the pairwise blanket with its shortfall charged
  (:mod:`pld.shuffling.blanket.pairwise`, docs/vector-gaussian.md §2).

The evaluators take the randomizer's blanket description (classes of a finite
randomizer, the law of a continuous one), never a randomizer: the randomizer classes
(:mod:`pld.randomizers`) call them.

Names are imported lazily.
"""

from __future__ import annotations

from pld._lazy import lazy_exports

_EXPORTS = {
    "positive_part_bounds": "pld.shuffling.blanket.finite",
    "chernoff_upper": "pld.shuffling.blanket.finite",
    "finite_profile_bounds": "pld.shuffling.blanket.finite",
    "finite_quick_upper": "pld.shuffling.blanket.finite",
    "merge_classes": "pld.shuffling.blanket.finite",
    "continuous_profile_bounds": "pld.shuffling.blanket.continuous",
    "best_profile_bounds": "pld.shuffling.blanket.continuous",
    "best_profile_components": "pld.shuffling.blanket.continuous",
    "BEST_MAX_RATIO": "pld.shuffling.blanket.continuous",
    "SHUFFLE_STEPS_PER_STD": "pld.shuffling.blanket.continuous",
    "REMAINDER_SHARE": "pld.shuffling.blanket.continuous",
    "LOCAL_LOSS_STEP": "pld.shuffling.blanket.continuous",
    "VLaw": "pld.shuffling.blanket.continuous_law",
    "gaussian_law": "pld.shuffling.blanket.continuous_law",
    "laplace_law": "pld.shuffling.blanket.continuous_law",
    "NoBlanketError": "pld.shuffling.blanket.continuous_law",
    "GroupBlanket": "pld.shuffling.blanket.population",
    "pairwise_profile_bounds": "pld.shuffling.blanket.pairwise",
    "clone_probabilities": "pld.shuffling.blanket.pairwise",
    "PAIRWISE_STEPS_PER_STD": "pld.shuffling.blanket.pairwise",
    "PAIRWISE_MAX_RATIO": "pld.shuffling.blanket.pairwise",
}

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
