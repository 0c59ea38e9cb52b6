"""Shuffled random check-ins: each user checks in to exactly k of the next T rounds.

The protocol (Balle et al. 2020's random check-ins, with each round's reports
shuffled as in Liew et al. 2022). Each of ``n`` users draws a uniformly random
k-subset of the T rounds of a window, independently of the others and of the
data, and sends in each of them a fresh report of a local randomizer ``R``;
round t releases the multiset of the reports sent to it (so its size is public).

Reduction (replace-one neighbours). The T multisets are the same thing as one
multiset of labelled reports ``(t, r)``. Attach to each user the tuple of its k
reports with its label set: the released multiset is a post-processing of the
shuffled multiset of the n tuples (forget which reports came together). The
label sets are independent of the data and of the reports, so the shuffled
tuples are the shuffled unlabelled tuples ``R(x)^{(k)}`` (k independent reports)
with independent uniform label sets attached: a post-processing again. Hence
one window is dominated by one shuffle of n users, each applying the product
randomizer ``R^{(k)}``:

* k = 1: exactly one shuffle of n users with R (each direction of the reduction
  is a post-processing: the window's T rounds leak nothing beyond it, and cost
  nothing either); the bound does not depend on T;
* k > 1: ``R^{(k)}`` is ``k eps0``-LDP when R is eps0-LDP (basic composition),
  so ``pld.clones(n, k eps0)`` (the standard pair of Feldman, McMillan and Talwar
  (2021), Thm 3.2; docs/clones-validity.md) bounds it for every eps0-LDP R; for a finite R the
  product matrix (``d^k`` outputs) is analysed by ``pld.shuffle`` itself when it
  has at most ``MAX_PRODUCT_OUTPUTS`` outputs. This keeps the amplification by
  all n users but pays ``k eps0`` locally; composing k shuffles of ``eps0``
  instead is not proved for this protocol (the k reports of a user land in
  distinct rounds, which links them), so it is not used.

Add/remove neighbours are refused: every user sends exactly k reports, so the
total count ``k n`` reveals whether the record is present.
"""

from __future__ import annotations

import numpy as np

from pld import validation
from pld.distribution import PLD
from pld.numerics import MAX_EPS0
from pld.randomizers import FiniteRandomizer, Randomizer

#: Largest output alphabet of a finite product randomizer analysed as such.
MAX_PRODUCT_OUTPUTS = 4096


def product_randomizer(probs: np.ndarray, participations: int) -> FiniteRandomizer:
    """The randomizer that applies the matrix ``probs`` ``participations`` times independently."""
    from pld.randomizers import matrix

    product = probs
    for _ in range(participations - 1):
        product = np.einsum("xi,xj->xij", product, probs).reshape(probs.shape[0], -1)
    return matrix(product)


def random_schedule_round(
    n: int,
    eps0: float | None,
    randomizer: Randomizer | None,
    analysis: str,
    window: int,
    participations: int,
    adjacency: str,
    loss_grid_step: float | None,
    variant: str | None = None,
) -> PLD:
    """One window of shuffled random check-ins (module docstring).

    Without a randomizer, ``variant`` names the clones pair of ``pld.clones`` (default
    the standard pair, proven for every ``k eps0``-LDP product randomizer).
    """
    from pld.shuffling.clones import clones

    n = validation.integer_at_least("n", n, 1, validation.MAX_USERS)
    window = validation.integer_at_least("window", window, 1)
    participations = validation.integer_at_least("participations", participations, 1, window)
    if adjacency != "replace":
        raise ValueError(
            "adjacency must be 'replace' for schedule='random' (got "
            f"{adjacency!r}): every user sends exactly participations reports, so the total "
            "count reveals whether a user is present"
        )
    if randomizer is None:
        local = participations * eps0
        if local > MAX_EPS0:
            raise ValueError(
                f"participations * eps0 must be <= {MAX_EPS0:g} nats for schedule='random' "
                f"(got {local:g})"
            )
        return clones(n, local, variant=variant, loss_grid_step=loss_grid_step)
    from pld.shuffling.shuffler import shuffle

    if participations == 1:
        return shuffle(randomizer, n, analysis, loss_grid_step=loss_grid_step)
    probs = randomizer.exact_matrix()
    if probs is not None and probs.shape[1] ** participations <= MAX_PRODUCT_OUTPUTS:
        product = product_randomizer(probs, participations)
        return shuffle(product, n, analysis, loss_grid_step=loss_grid_step)
    local = participations * randomizer.eps0
    if not local <= MAX_EPS0:
        raise ValueError(
            f"participations * eps0 of the randomizer must be <= {MAX_EPS0:g} nats for "
            f"schedule='random' (got {local:g}); a finite randomizer with at most "
            f"{MAX_PRODUCT_OUTPUTS} product outputs is analysed exactly"
        )
    return clones(n, local, loss_grid_step=loss_grid_step)
