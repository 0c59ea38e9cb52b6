"""Shuffled check-in (each user reports with probability p) and distributed check-in.

Names are imported lazily.
"""

from __future__ import annotations

from pld._lazy import lazy_exports

_EXPORTS = {
    "checkin": "pld.shuffling.checkin.mechanism",
    "distributed_checkin": "pld.shuffling.checkin.mechanism",
    "ADJACENCIES": "pld.shuffling.checkin.mixture",
}

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
