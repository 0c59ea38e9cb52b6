"""The shuffle model: one subpackage per analysis of a shuffled protocol.

* :mod:`pld.shuffling.clones`: the clones dominating pair of any shuffled eps0-LDP randomizer;
* :mod:`pld.shuffling.krr`: shuffled k-ary randomised response, strong and weak adversary;
* :mod:`pld.shuffling.blanket`: the privacy-blanket profile of a specific randomizer
  (finite and continuous);
* :mod:`pld.shuffling.checkin`: shuffled and distributed check-in;
* :func:`shuffle` (:mod:`pld.shuffling.shuffler`): a specific randomizer shuffled, the best
  of the valid analyses (:mod:`pld.shuffling.shuffler`); :func:`shuffle_observer`: the
  protocol's lower bound (:mod:`pld.shuffling.observer`).

Names are imported lazily.
"""

from __future__ import annotations

from pld._lazy import lazy_exports

_EXPORTS = {
    "shuffle": "pld.shuffling.shuffler",
    "shuffle_observer": "pld.shuffling.observer",
    "ANALYSES": "pld.shuffling.shuffler",
    "profile_bounds": "pld.shuffling.shuffler",
    "worst_group": "pld.shuffling.population",
    "DEFAULT_NUM_POINTS": "pld.shuffling.shuffler",
    "observer_pmfs": "pld.shuffling.observer",
    "finite_observer": "pld.shuffling.observer",
    "laplace_count_pmfs": "pld.shuffling.observer",
}

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
