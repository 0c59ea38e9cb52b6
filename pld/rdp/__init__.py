"""The Rényi-DP cross-check path.

Every function returns ``eps(lam)`` in nats as a numpy array over an array of orders
``lam`` (integers where the formula is a binomial or multinomial expansion). Compose
rounds with :class:`RdpAccountant` (or by adding curves) and convert with
:func:`to_epsilon` / :func:`to_delta`.

What each result is — read before quoting a number:

* Valid upper bounds: ``gaussian`` (exact), ``poisson_subsampled_gaussian`` (exact at integer
  orders, quadrature capped by a rigorous interpolation otherwise), ``from_pld`` (RDP of the
  engine's dominating pair), ``to_epsilon`` / ``to_delta`` (Liew and Takahashi 2022, Lemma 2),
  ``subsampled`` (Wang, Balle and Kasiviswanathan 2019, Thm 9, given a valid base RDP),
  ``distributed_checkin_gaussian`` (Liew et al. 2022, Thm 4, sum aggregate), ``RdpAccountant``
  (composition).
* As valid as the paper they come from: ``girgis_subsampled_shuffle`` (Girgis, Data
  and Diggavi 2021, Thm 2, quoted by Liew et al. 2022, suppl. eq. 17; one constant
  unverifiable here).
* Divergence of ONE pair of datasets: ``shuffle_gaussian`` (Liew and Takahashi 2022, Thm 1 calls it
  the RDP; Liew et al. (2022), Thm 3 calls it a lower bound, which is what it is), and the
  bounds built on it, ``subsampled_shuffle_gaussian`` and
  ``shuffled_checkin_gaussian``.
* Not certified: ``shuffled_checkin_gaussian_conjectured`` (Liew and Takahashi 2022, eq. 18: its
  proof does not cover counts above ``n gamma``), ``distributed_checkin_gaussian_removal``
  (Liew et al. 2022, suppl. Thm 5 uses one direction of the base pair), and everything built on
  the DP -> RDP conversion of Liew et al. (2022), Lemma 1, which is not an upper bound:
  ``from_dp``, ``checkin_baseline``, ``checkin_approach1``, ``checkin_approach2``.

Names are imported lazily so that ``import pld.rdp`` (and the CLI) stay fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pld._lazy import lazy_exports

_EXPORTS = {
    "shuffle_gaussian": "pld.rdp.shuffle",
    "subsampled": "pld.rdp.subsampling",
    "subsampled_shuffle_gaussian": "pld.rdp.subsampling",
    "shuffled_checkin_gaussian": "pld.rdp.checkin",
    "shuffled_checkin_gaussian_conjectured": "pld.rdp.checkin",
    "distributed_checkin_gaussian": "pld.rdp.checkin",
    "distributed_checkin_gaussian_removal": "pld.rdp.checkin",
    "checkin_baseline": "pld.rdp.generic_ldp",
    "checkin_approach1": "pld.rdp.generic_ldp",
    "checkin_approach2": "pld.rdp.generic_ldp",
    "shuffle_dp": "pld.rdp.generic_ldp",
    "subsampled_shuffle_dp": "pld.rdp.generic_ldp",
    "girgis_subsampled_shuffle": "pld.rdp.girgis",
    "gaussian": "pld.rdp.gaussian_mechanism",
    "poisson_subsampled_gaussian": "pld.rdp.poisson",
    "from_pld": "pld.rdp.discrete",
    "to_epsilon": "pld.rdp.conversions",
    "to_delta": "pld.rdp.conversions",
    "OrderRangeWarning": "pld.rdp.conversions",
    "from_dp": "pld.rdp.conversions",
    "RdpAccountant": "pld.rdp.accountant",
}

__all__ = [
    "OrderRangeWarning",
    "RdpAccountant",
    "checkin_approach1",
    "checkin_approach2",
    "checkin_baseline",
    "distributed_checkin_gaussian",
    "distributed_checkin_gaussian_removal",
    "from_dp",
    "from_pld",
    "gaussian",
    "girgis_subsampled_shuffle",
    "poisson_subsampled_gaussian",
    "shuffle_dp",
    "shuffle_gaussian",
    "shuffled_checkin_gaussian",
    "shuffled_checkin_gaussian_conjectured",
    "subsampled",
    "subsampled_shuffle_dp",
    "subsampled_shuffle_gaussian",
    "to_delta",
    "to_epsilon",
]

if TYPE_CHECKING:  # pragma: no cover
    from pld.rdp.accountant import RdpAccountant
    from pld.rdp.checkin import (
        distributed_checkin_gaussian,
        distributed_checkin_gaussian_removal,
        shuffled_checkin_gaussian,
        shuffled_checkin_gaussian_conjectured,
    )
    from pld.rdp.conversions import from_dp, to_delta, to_epsilon
    from pld.rdp.discrete import from_pld
    from pld.rdp.gaussian_mechanism import gaussian
    from pld.rdp.generic_ldp import (
        checkin_approach1,
        checkin_approach2,
        checkin_baseline,
        shuffle_dp,
        subsampled_shuffle_dp,
    )
    from pld.rdp.girgis import girgis_subsampled_shuffle
    from pld.rdp.poisson import poisson_subsampled_gaussian
    from pld.rdp.shuffle import shuffle_gaussian
    from pld.rdp.subsampling import subsampled, subsampled_shuffle_gaussian


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
