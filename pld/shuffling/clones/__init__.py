"""Shuffled eps0-LDP randomizers: the clones dominating pair (Feldman, McMillan and Talwar 2023).

Names are imported lazily.
"""

from __future__ import annotations

from pld._lazy import lazy_exports

_EXPORTS = {
    "clones": "pld.shuffling.clones.mechanism",
    "clones_pmfs": "pld.shuffling.clones.mechanism",
    "clones_cells": "pld.shuffling.clones.mechanism",
    "clones_delta_bounds": "pld.shuffling.clones.mechanism",
    "clones_epsilon_bounds": "pld.shuffling.clones.mechanism",
    "check_clones_work": "pld.shuffling.clones.mechanism",
    "ClonesCells": "pld.shuffling.clones.mechanism",
    "EXACT_MAX_N": "pld.shuffling.clones.mechanism",
    "MAX_EPS0": "pld.shuffling.clones.mechanism",
    "TRUNCATIONS": "pld.shuffling.clones.mechanism",
    "CloneCount": "pld.shuffling.clones.counts",
    "clones_profile": "pld.shuffling.clones.counts",
    "clones_population": "pld.shuffling.clones.counts",
    "VARIANTS": "pld.shuffling.clones.mechanism",
}

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
