"""The PLD object and its operations: build, compose, query, refine, store, trade-off.

* :class:`PLD` (both directions, upper and lower bounds, its queries), :func:`compose`,
  :func:`load` (:mod:`pld.distribution.loss_distribution`);
* :func:`from_pmfs`, :func:`from_bounds`: the contract every mechanism builds on, and
  :func:`from_symmetric_pair` for the library's pairs symmetric by construction, and
  :func:`upper_only` (:mod:`pld.distribution.construction`);
* :func:`from_privacy_profile` and the connect-the-dots pair of a privacy profile
  (:mod:`pld.distribution.profile`);
* :func:`refinable`, the recipe that lets a query rebuild a PLD on a finer grid, and
  :class:`AccuracyWarning` (:mod:`pld.distribution.refinement`).

Names are imported lazily.
"""

from __future__ import annotations

from pld._lazy import lazy_exports

_EXPORTS = {
    "PLD": "pld.distribution.loss_distribution",
    "LossAtoms": "pld.distribution.atoms",
    "TailMoments": "pld.distribution.atoms",
    "compose": "pld.distribution.loss_distribution",
    "load": "pld.distribution.loss_distribution",
    "from_pmfs": "pld.distribution.construction",
    "from_symmetric_pair": "pld.distribution.construction",
    "from_bounds": "pld.distribution.construction",
    "upper_only": "pld.distribution.construction",
    "refinable": "pld.distribution.recipes",
    "AccuracyWarning": "pld.distribution.refinement",
    "DEFAULT_REL_ACCURACY": "pld.distribution.refinement",
    "DELTA_ACCURACY_FLOOR": "pld.distribution.refinement",
    "check_rel_accuracy": "pld.distribution.refinement",
    "from_privacy_profile": "pld.distribution.profile",
    "DiscretePair": "pld.distribution.profile",
    "below_every_profile": "pld.distribution.profile",
    "check_eps_grid": "pld.distribution.profile",
    "connect_the_dots": "pld.distribution.profile",
    "lower_envelope": "pld.distribution.profile",
    "pair_from_hull": "pld.distribution.profile",
    "profile_hull": "pld.distribution.profile",
    "tail_sums": "pld.distribution.profile",
    "tradeoff_table": "pld.distribution.tradeoff",
}

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
