"""Adapters to the accounting libraries people already use (each an optional extra).

* :mod:`pld.integrations.dp_events`: :func:`pld.from_dp_event`, Google
  ``dp_accounting`` events as PLDs (reads only the events' fields).
* :mod:`pld.integrations.dp_accounting`: a drop-in ``dp_accounting``
  ``PrivacyAccountant`` and PLD export/import (``pip install dp-accounting``, or
  ``pip install '.[dp-accounting]'`` in a checkout of pld).
* :mod:`pld.integrations.pld_events`: ``DpEvent`` subclasses for what dp_accounting
  cannot describe (a :class:`pld.PLD` of any pld mechanism; random allocation
  where the installed dp_accounting lacks its event).
* :mod:`pld.integrations.opacus`: an Opacus accountant (``pip install opacus``, or
  ``pip install '.[opacus]'`` in a checkout of pld).

Submodules are imported on first use, so ``import pld`` never imports them.
"""

from __future__ import annotations

from pld._lazy import lazy_exports

_SUBMODULES = ("dp_events", "dp_accounting", "pld_events", "opacus")

__all__ = list(_SUBMODULES)


__getattr__, __dir__ = lazy_exports(__name__, {}, _SUBMODULES)
