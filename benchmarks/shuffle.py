"""pld.shuffle (privacy blanket, best of blanket and clones) against pld.clones and pld.krr.

Run from the repository root: ``python benchmarks/shuffle.py`` (``--quick``: n <= 10^5;
``--n 1000000`` for one size). Each (workload, n) runs in a fresh process so that its
peak memory (``ru_maxrss``) is its own. Per row: build time of one round, time of the
100-round composition, eps(1e-6) after 100 rounds as (lower, upper), the bracket
width, and the peak RSS of the process.

Workloads (all finite, at most 100 outputs): k-RR (k = 4, gamma = 0.25, seed 004
Fig. 4), OLH (eps0 = 2, domain 100, g = 8 buckets), Hadamard response (eps0 = 2,
domain 63: 64 outputs), a random asymmetric 4 x 6 matrix; beside them, on the same
(n, eps0), ``pld.clones`` and, for k-RR, ``pld.krr(..., "weak")`` (the same analysis
as the blanket bound for k-RR, by an independent construction).

Public research codes (``wangsw/PrivacyAmplification``, ``BorjaBalle/amplification-by-shuffling``)
are not pip packages and are not vendored; this script does not run them.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

ROUNDS = 100
DELTA = 1e-6
SIZES = (10**3, 10**4, 10**5, 10**6, 10**7)
WORKLOADS = ("krr", "olh", "hadamard", "matrix4x6", "clones", "krr_weak")


def _randomizer(name: str):
    import numpy as np

    import pld

    if name == "krr":
        return pld.randomizers.krr(4, gamma=0.25)
    if name == "olh":
        return pld.randomizers.local_hashing(2.0, 100)
    if name == "hadamard":
        return pld.randomizers.hadamard(2.0, 63)
    rng = np.random.default_rng(5)
    probs = rng.uniform(0.2, 1.0, size=(4, 6))
    return pld.randomizers.matrix(probs / probs.sum(axis=1, keepdims=True))


def _one(name: str, n: int) -> dict:
    """Build, compose and query one workload (in this process)."""
    import pld

    krr = pld.randomizers.krr(4, gamma=0.25)
    pld.shuffle(krr, 50)  # compile the numba kernels and plan the FFTs outside the timing
    start = time.perf_counter()
    if name == "clones":
        one = pld.clones(n, krr.eps0)
    elif name == "krr_weak":
        one = pld.krr(n, 4, 0.25, "weak")
    else:
        one = pld.shuffle(_randomizer(name), n)
    built = time.perf_counter()
    many = one.self_compose(ROUNDS)
    composed = time.perf_counter()
    lower, upper = many.epsilon_bounds(DELTA)
    queried = time.perf_counter()
    return {
        "workload": name,
        "n": n,
        "build_s": built - start,
        "compose_s": composed - built,
        "query_s": queried - composed,
        "eps_lower": lower,
        "eps_upper": upper,
        "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="n <= 10^5 only")
    parser.add_argument("--n", type=int, nargs="+", help="sizes to run")
    parser.add_argument("--workloads", nargs="+", default=list(WORKLOADS), choices=WORKLOADS)
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(_one(args.child[0], int(args.child[1]))))
        return
    sizes = args.n or [n for n in SIZES if not args.quick or n <= 10**5]
    print(f"eps({DELTA:g}) after {ROUNDS} rounds; times in s; peak RSS of the process in MB")
    header = (
        f"{'workload':>10} {'n':>9} {'build':>7} {'compose':>8} {'query':>6} "
        f"{'eps lower':>10} {'eps upper':>10} {'width':>7} {'peak':>7}"
    )
    print(header)
    for n in sizes:
        for name in args.workloads:
            result = subprocess.run(
                [sys.executable, __file__, "--child", name, str(n)],
                capture_output=True,
                text=True,
                cwd=ROOT,
            )
            if result.returncode != 0:
                print(f"{name:>10} {n:>9} failed: {result.stderr.strip().splitlines()[-1]}")
                continue
            row = json.loads(result.stdout.strip().splitlines()[-1])
            width = (row["eps_upper"] - row["eps_lower"]) / row["eps_upper"]
            print(
                f"{name:>10} {n:>9} {row['build_s']:7.2f} {row['compose_s']:8.3f} "
                f"{row['query_s']:6.3f} {row['eps_lower']:10.5f} {row['eps_upper']:10.5f} "
                f"{width:7.2%} {row['peak_mb']:7.0f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
