"""Random allocation of the Gaussian mechanism against Feldman and Shenfeld's accountant.

For sigma in {0.8, 1, 2}, T in {10, 100, 1000}, k in {1, 4} and delta in {1e-5, 1e-8}:
our bracket ``pld.random_allocation(pld.gaussian(sigma), rounds=T, participations=k)
.epsilon_bounds(delta)`` (default ``rel_accuracy``) with its build and query time,
next to the peers' brackets and times on the same settings:

* ``--fs PATH``: a checkout of github.com/moshenfeld/PLD_accounting (the authors'
  code of Feldman and Shenfeld 2026), run through its recommended entry point
  ``gaussian_allocation_epsilon_range`` (adaptive refinement to about 10 % of eps,
  their default), one call per delta;
* ``--dpa PATH``: a checkout of google/differential-privacy's ``python/dp_accounting``
  whose ``dp_accounting.pld.random_allocation`` exists (the development tree; the
  released wheel does not have it): ``gaussian_allocation_pld`` with its default
  configuration, an upper (DOMINATES) and a lower (IS_DOMINATED) PLD, both deltas
  queried on each.

A peer is skipped when its path is not given or does not import. ``--max-rounds``
leaves out the larger T for the peers (the authors' code took about 5 minutes per
delta at T = 1000 on the shared machine). Columns: ``ours [lower, upper]``,
``peer [lower, upper]``, ``upper ratio`` (ours / theirs, the issue's target is
<= 1.001), ``contains`` (ours inside theirs), seconds.

Run ``python benchmarks/random_allocation.py --fs /path/to/PLD_accounting``.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time

import pld

SIGMAS = (0.8, 1.0, 2.0)
ROUNDS = (10, 100, 1000)
PARTICIPATIONS = (1, 4)
DELTAS = (1e-5, 1e-8)


def ours(sigma: float, rounds: int, participations: int) -> tuple[list, float]:
    start = time.perf_counter()
    allocated = pld.random_allocation(
        pld.gaussian(sigma), rounds=rounds, participations=participations
    )
    brackets = [tuple(float(v) for v in allocated.epsilon_bounds(delta)) for delta in DELTAS]
    return brackets, time.perf_counter() - start


def _import_from(path: str, module: str):
    sys.path.insert(0, path)
    try:
        return importlib.import_module(module)
    except ImportError as error:
        print(f"# {module} from {path}: not importable ({error}); skipped")
        return None
    finally:
        sys.path.remove(path)


def feldman_shenfeld(api, sigma: float, rounds: int, participations: int) -> tuple[list, float]:
    start = time.perf_counter()
    brackets = []
    for delta in DELTAS:
        upper, lower = api.gaussian_allocation_epsilon_range(
            delta, sigma, rounds, num_selected=participations
        )
        brackets.append((float(lower), float(upper)))
    return brackets, time.perf_counter() - start


def dp_accounting_dev(module, sigma: float, rounds: int, participations: int):
    start = time.perf_counter()
    params = module.PrivacyParams(sigma=sigma, num_steps=rounds, num_selected=participations)
    config = module.AllocationSchemeConfig()
    upper = module.gaussian_allocation_pld(params, config, module.BoundType.DOMINATES)
    lower = module.gaussian_allocation_pld(params, config, module.BoundType.IS_DOMINATED)
    brackets = [
        (float(lower.get_epsilon_for_delta(d)), float(upper.get_epsilon_for_delta(d)))
        for d in DELTAS
    ]
    return brackets, time.perf_counter() - start


def _row(name, sigma, rounds, k, delta, mine, theirs, seconds, their_seconds):
    ratio = mine[1] / theirs[1] if theirs[1] > 0 else float("nan")
    inside = theirs[0] <= mine[0] and mine[1] <= theirs[1]
    print(
        f"{name:>6} {sigma:>4} {rounds:>5} {k:>2} {delta:>6.0e} "
        f"[{mine[0]:.6f}, {mine[1]:.6f}] [{theirs[0]:.6f}, {theirs[1]:.6f}] "
        f"{ratio:10.5f} {inside!s:>8} {seconds:7.2f} {their_seconds:8.2f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--fs", help="checkout of moshenfeld/PLD_accounting")
    parser.add_argument("--dpa", help="checkout of the dp_accounting development tree")
    parser.add_argument("--max-rounds", type=int, default=max(ROUNDS), help="peers up to this T")
    args = parser.parse_args()
    peers = []
    if args.fs:
        api = _import_from(args.fs, "PLD_accounting.random_allocation_api")
        if api is not None:
            peers.append(("FS", lambda s, t, k: feldman_shenfeld(api, s, t, k)))
    if args.dpa:
        module = _import_from(args.dpa, "dp_accounting.pld.random_allocation")
        if module is not None:
            peers.append(("dpa", lambda s, t, k: dp_accounting_dev(module, s, t, k)))
    pld.random_allocation(pld.gaussian(1.0), rounds=3)  # load the compiled kernels
    print(
        f"{'peer':>6} {'sig':>4} {'T':>5} {'k':>2} {'delta':>6} {'ours [lower, upper]':>22} "
        f"{'peer [lower, upper]':>22} {'up ratio':>10} {'contains':>8} {'ours s':>7} "
        f"{'peer s':>8}"
    )
    for sigma in SIGMAS:
        for rounds in ROUNDS:
            for k in PARTICIPATIONS:
                mine, seconds = ours(sigma, rounds, k)
                if not peers or rounds > args.max_rounds:
                    for delta, bracket in zip(DELTAS, mine, strict=True):
                        print(
                            f"{'-':>6} {sigma:>4} {rounds:>5} {k:>2} {delta:>6.0e} "
                            f"[{bracket[0]:.6f}, {bracket[1]:.6f}] {seconds:7.2f}"
                        )
                    continue
                for name, peer in peers:
                    theirs, their_seconds = peer(sigma, rounds, k)
                    for delta, a, b in zip(DELTAS, mine, theirs, strict=True):
                        _row(name, sigma, rounds, k, delta, a, b, seconds, their_seconds)
                sys.stdout.flush()


if __name__ == "__main__":
    main()
