"""Shuffled check-in (``pld.checkin``) and distributed check-in: times, brackets, RDP beside.

Shuffled check-in, eps0 = 1 (any eps0-LDP randomizer, replace adjacency): for n in
{10^3, 10^5, 10^7} and p in {0.001, 0.01, 0.1}, the one-round build time, the number
of count blocks, eps(1e-6) after 1 and 1000 rounds as (lower, upper), and the Approach 2 of
Liew et al. (2022) (``pld.rdp.checkin_approach2`` with delta0 = 0, orders 2..256) for the
same settings. Approach 2 converts (eps, delta)-DP to RDP with Liew et al. (2022), Lemma 1, which is
not a valid upper bound (pld.rdp.generic_ldp): it is printed as the paper's method,
not as a guarantee (with delta0 = 0 it is far below the truth). Beside it, a certified RDP bound
on the same count mixture: per count block [a, b] the RDP of the clones pair of a users
(``pld.rdp.from_pld``), subsampled at rate b/n (Wang, Balle and Kasiviswanathan (2019), Thm 9,
``pld.rdp.subsampled``), mixed over the blocks by Liew et al. (2022), eq. 5, counts outside the
bulk charged at the eps0-DP moment ``e^((lam - 1) eps0)``.

Distributed check-in (Gaussian sum, sigma per client, replacement sensitivity 2 as in
Liew et al. (2022), Thm 4): ``pld.distributed_checkin`` against the certified RDP bound
``pld.rdp.distributed_checkin_gaussian`` after 1000 rounds.

Run ``python benchmarks/checkin.py`` (a few minutes on 2 cores); ``--quick`` skips
n = 10^7.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from scipy import stats
from scipy.special import logsumexp

import pld
from pld.rdp import to_epsilon
from pld.shuffling.checkin.mixture import (
    COUNT_TAIL_MASS,
    DEFAULT_COUNT_TOLERANCE,
    _blocks,
    bulk_counts,
)

EPS0 = 1.0
DELTA = 1e-6
ROUNDS = 1000
ORDERS = np.arange(2, 257)


def timed(function, *args, **kwargs):
    start = time.perf_counter()
    result = function(*args, **kwargs)
    return result, time.perf_counter() - start


def certified_rdp(n: int, p: float, eps0: float) -> np.ndarray:
    """Per-round RDP upper bound of shuffled check-in by count blocks (module docstring)."""
    low, high = bulk_counts(n, p, COUNT_TAIL_MASS)
    terms = []
    for block in _blocks(n, p, low, high, DEFAULT_COUNT_TOLERANCE):
        base = pld.clones(block.low, eps0)
        rdp = pld.rdp.subsampled(
            lambda orders, base=base: pld.rdp.from_pld(base, orders),
            block.high / n,
            ORDERS,
            eps_infinity=eps0,
        )
        terms.append(np.log(block.weight * (1 + 1e-10)) + (ORDERS - 1) * rdp)
    if low == 0:
        terms.append(np.full(ORDERS.size, stats.binom.logpmf(0, n, p)))
    tails = stats.binom.cdf(low - 1, n, p) + stats.binom.sf(high, n, p)
    if tails > 0:
        terms.append(np.log(tails * (1 + 1e-10)) + (ORDERS - 1) * eps0)
    return logsumexp(np.array(terms), axis=0) / (ORDERS - 1)


def shuffled(sizes: list[int]) -> None:
    print(f"\n=== shuffled check-in, eps0 = {EPS0}, eps(delta = {DELTA:g}) ===")
    print(
        f"{'n':>9} {'p':>6} {'blocks':>6} {'build s':>7} {'one round [lower, upper]':>26} "
        f"{'RDP A2':>9} {'compose s':>9} {f'T={ROUNDS} [lower, upper]':>24} {'RDP A2':>8} "
        f"{'RDP cert':>8} {'RDP s':>6}"
    )
    for n in sizes:
        for p in (0.001, 0.01, 0.1):
            blocks = len(
                _blocks(n, p, *bulk_counts(n, p, COUNT_TAIL_MASS), DEFAULT_COUNT_TOLERANCE)
            )
            one, build = timed(pld.checkin, n, p, EPS0)
            composed, compose = timed(one.self_compose, ROUNDS)
            low1, up1 = one.epsilon_bounds(DELTA)
            low, up = composed.epsilon_bounds(DELTA)
            rdp = pld.rdp.checkin_approach2(n, p, EPS0, 0.0, ORDERS, delta1=DELTA)
            rdp1 = to_epsilon(rdp, ORDERS, DELTA)[0]
            rdp_t = to_epsilon(ROUNDS * rdp, ORDERS, DELTA)[0]
            certified, rdp_seconds = timed(certified_rdp, n, p, EPS0)
            certified_t = to_epsilon(ROUNDS * certified, ORDERS, DELTA)[0]
            print(
                f"{n:>9.0e} {p:>6g} {blocks:>6d} {build:>7.2f} [{low1:.5g}, {up1:.5g}]".ljust(58)
                + f"{rdp1:>9.4g} {compose:>9.2f} [{low:.5g}, {up:.5g}]".ljust(45)
                + f"{rdp_t:>8.4g} {certified_t:>8.4g} {rdp_seconds:>6.1f}",
                flush=True,
            )


def specific() -> None:
    """k-RR (k = 4, eps0 = 1): exact small counts (pld.shuffling.checkin.exact) vs none."""
    r = pld.randomizers.krr(k=4, eps0=EPS0)
    print(f"\n=== shuffled check-in, k-RR k = 4, eps0 = {EPS0}: exact small counts vs none ===")
    print(
        f"{'n':>6} {'p':>5} {'exact':>5} {'build s':>7} {'eps(1e-6) upper':>15} {'delta(0.5)':>11}"
    )
    for n, p in ((5, 0.5), (20, 0.3), (1000, 0.01)):
        for exact in (None, 0):
            one, build = timed(pld.checkin, n, p, randomizer=r, exact_counts=exact)
            print(
                f"{n:>6d} {p:>5g} {'auto' if exact is None else 'none':>5} {build:>7.2f} "
                f"{one.epsilon_bounds(DELTA)[1]:>15.5g} {one.delta_bounds(0.5)[1]:>11.4g}",
                flush=True,
            )


def distributed() -> None:
    sigma = 1.0
    print(f"\n=== distributed check-in, sigma = {sigma}, sensitivity 2, T = {ROUNDS} ===")
    print(f"{'n':>9} {'p':>6} {'build s':>7} {'PLD eps [lower, upper]':>24} {'RDP Thm 4':>10}")
    for n, p in ((10**4, 0.01), (10**4, 0.1), (10**6, 0.01)):
        one, build = timed(pld.distributed_checkin, n, p, sigma, sensitivity=2.0)
        low, up = one.self_compose(ROUNDS).epsilon_bounds(DELTA)
        rdp = pld.rdp.distributed_checkin_gaussian(n, p, sigma, ORDERS, sensitivity=2.0)
        print(
            f"{n:>9.0e} {p:>6g} {build:>7.2f} [{low:.5g}, {up:.5g}]".ljust(50)
            + f"{to_epsilon(ROUNDS * rdp, ORDERS, DELTA)[0]:>10.4g}",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="skip n = 10^7")
    args = parser.parse_args()
    pld.checkin(100, 0.1, EPS0)  # numba compilation, imports
    shuffled([10**3, 10**5] if args.quick else [10**3, 10**5, 10**7])
    specific()
    distributed()


if __name__ == "__main__":
    main()
