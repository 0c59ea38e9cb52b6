"""Shuffled k-ary randomised response against the strong and the weak adversary.

Names are imported lazily.
"""

from __future__ import annotations

from pld._lazy import lazy_exports

_EXPORTS = {
    "krr": "pld.shuffling.krr.mechanism",
    "krr_view_pmfs": "pld.shuffling.krr.mechanism",
    "krr_tail_delta": "pld.shuffling.krr.mechanism",
    "ldp_epsilon": "pld.shuffling.krr.mechanism",
    "ADVERSARIES": "pld.shuffling.krr.mechanism",
}

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
