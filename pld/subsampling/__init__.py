"""Subsampling: a mechanism run on a random subset of the users.

* :func:`subsample`: a shuffler run on a random subset (Koskela et al. 2023, Lemma 7,
  then connect-the-dots; :mod:`pld.subsampling.subsampled_shuffler`);
* :func:`poisson_subsample` and :func:`subsample_without_replacement` of any one-round
  PLD (:mod:`pld.subsampling.poisson`, :mod:`pld.subsampling.without_replacement`);
* :func:`subsampled_gaussian`: DP-SGD's Poisson-subsampled Gaussian;
* the hockey-stick curves of mixture pairs they share (:mod:`pld.subsampling.mixture`).

Names are imported lazily.
"""

from __future__ import annotations

from pld._lazy import lazy_exports

_EXPORTS = {
    "subsample": "pld.subsampling.subsampled_shuffler",
    "lemma7_terms": "pld.subsampling.subsampled_shuffler",
    "MAX_NUM_POINTS": "pld.subsampling.subsampled_shuffler",
    "poisson_subsample": "pld.subsampling.poisson",
    "subsample_without_replacement": "pld.subsampling.poisson",
    "subsampled_gaussian": "pld.subsampling.subsampled_gaussian_mechanism",
    "base_curves": "pld.subsampling.mixture",
    "kink_reach": "pld.subsampling.mixture",
    "chi_square": "pld.subsampling.mixture",
    "subsampled_loss_std": "pld.subsampling.mixture",
}

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
