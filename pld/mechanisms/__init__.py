"""Every mechanism constructor of the library in one place (each returns a one-round PLD).

The constructors live with their analysis (:mod:`pld.central`, :mod:`pld.subsampling`,
:mod:`pld.shuffling` and its subpackages); this catalogue only names them, so that
``dir(pld.mechanisms)`` lists what there is. Names are imported lazily.
"""

from __future__ import annotations

from pld._lazy import lazy_exports

_EXPORTS = {
    "randomized_response": "pld.central",
    "gaussian": "pld.central",
    "laplace": "pld.central",
    "discrete_laplace": "pld.central",
    "discrete_gaussian": "pld.central",
    "pure_dp": "pld.central",
    "approximate_dp": "pld.central",
    "subsample": "pld.subsampling",
    "poisson_subsample": "pld.subsampling",
    "subsample_without_replacement": "pld.subsampling",
    "subsampled_gaussian": "pld.subsampling",
    "random_allocation": "pld.allocation",
    "clones": "pld.shuffling.clones",
    "krr": "pld.shuffling.krr",
    "shuffle": "pld.shuffling",
    "shuffle_observer": "pld.shuffling",
    "checkin": "pld.shuffling.checkin",
    "distributed_checkin": "pld.shuffling.checkin",
    "from_privacy_profile": "pld.distribution",
}

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
