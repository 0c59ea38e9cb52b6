"""Constants of the whole library, each defined once.

``UNIT_ROUNDOFF`` is the float64 unit round-off every error bound is written in;
``MAX_EPS0`` the largest local epsilon (nats) any mechanism or randomizer accepts: beyond
it ``e^eps0`` leaves the range where the pairs' masses (``1 / (e^eps0 + 1)``, ...)
stay meaningful in float64, and no deployment uses such a value.
"""

from __future__ import annotations

#: Unit round-off of IEEE float64, ``u = 2^-53``: a correctly rounded operation errs by at
#: most ``u`` relatively.
UNIT_ROUNDOFF = 2.0**-53

#: Largest local privacy parameter eps0 accepted anywhere (nats).
MAX_EPS0 = 50.0
