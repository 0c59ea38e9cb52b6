"""pld.shuffle (privacy blanket, best of blanket and clones) against pld.clones and pld.krr.

Run from the repository root: ``python benchmarks/shuffle.py`` (``--quick``: n <= 10^5;
``--n 1000000`` for one size). Each (workload, n) runs in a fresh process so that its
peak memory (``ru_maxrss``) is its own. Per row: build time of one round, time of the
100-round composition, eps(1e-6) after 100 rounds as (lower, upper), the bracket
width, and the peak RSS of the process.

Workloads (all finite, at most 100 outputs): k-RR (k = 4, gamma = 0.25, Koskela et al. (2023),
Fig. 4), OLH (eps0 = 2, domain 100, g = 8 buckets), Hadamard response (eps0 = 2,
domain 63: 64 outputs), a random asymmetric 4 x 6 matrix; beside them, on the same
(n, eps0), ``pld.clones`` and, for k-RR, ``pld.krr(..., "weak")`` (the same analysis
as the blanket bound for k-RR, by an independent construction); the shuffled Gaussian
(``gaussian``: sigma = 9.48, inputs [0, 1]) and, on request (``--workloads gaussian1``:
sigma = 1, about two minutes per size), the Gaussian at sigma of the input range.

Public research codes (``--research``): the variation-ratio bound of Wang et al. (2024)
(``wangsw/PrivacyAmplification``, VLDB 2024: ``unifiedamplification.Delta``, its upper bound
adds ``tol * n`` as its ``amplificationUB`` does) and the privacy-blanket bounds of Balle et al.
(2019) (``BorjaBalle/amplification-by-shuffling``, CRYPTO 2019: ``Hoeffding`` and
``BennettExact`` with ``RRMechanism``) on k-RR (k = 4) for one round. They are not pip packages
and are not vendored: point the script at local checkouts with ``--wang DIR`` / ``--balle DIR``
(or the environment variables ``PLD_WANG_CODE`` / ``PLD_BALLE_CODE``). Per row: our one-round
eps(delta) bracket (blanket and best-of analyses), Wang's eps (geometric bisection of its delta
on [0.8 lower, 1.25 upper] of our bracket, so "<" / ">" mark an answer outside it), Balle's eps,
and the time of one delta(eps) evaluation of each code (ours: one eps of
``pld.shuffling.profile_bounds``).
"""

from __future__ import annotations

import argparse
import json
import math
import os
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
WORKLOADS = ("krr", "olh", "hadamard", "matrix4x6", "clones", "krr_weak", "gaussian", "gaussian1")


def _randomizer(name: str):
    import numpy as np

    import pld

    if name == "krr":
        return pld.randomizers.krr(4, gamma=0.25)
    if name == "olh":
        return pld.randomizers.local_hashing(2.0, 100)
    if name == "gaussian":  # Liew and Takahashi's (2022) setting: sigma = 9.48, inputs [0, 1]
        return pld.randomizers.gaussian(9.48)
    if name == "gaussian1":  # sigma of the order of the input range
        return pld.randomizers.gaussian(1.0)
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


RESEARCH_SIZES = (10**3, 10**4, 10**5, 10**6)
RESEARCH_EPS0 = (1.0, 4.0)
RESEARCH_DELTAS = (1e-6, 1e-8, 1e-10)
#: Bisection steps on Wang's delta (relative precision about 0.45 / 2^steps).
WANG_STEPS = 10


def _timed(function, *args):
    start = time.perf_counter()
    value = function(*args)
    return value, time.perf_counter() - start


def _research_row(n: int, eps0: float, delta: float, wang: str | None, balle: str | None) -> dict:
    """One (n, eps0, delta) comparison of k-RR (k = 4) against the research codes."""
    import numpy as np

    import pld
    from pld.shuffling import profile_bounds

    randomizer = pld.randomizers.krr(4, eps0=eps0)
    blanket = pld.shuffle(randomizer, n, analysis="blanket").epsilon_bounds(delta)
    best = pld.shuffle(randomizer, n).epsilon_bounds(delta)
    _, ours_time = _timed(profile_bounds, randomizer, n, np.array([blanket[1]]))
    row = {"n": n, "eps0": eps0, "delta": delta, "blanket": blanket, "best": best}
    row["ours_s"] = ours_time
    if wang:
        sys.path.insert(0, wang)
        from unifiedamplification import Delta

        p = math.exp(eps0)
        beta = math.expm1(eps0) / (p + 3)
        alpha = beta / (p - 1)
        r = alpha * p / p
        tol = max(1e-19, min(1e-14, delta / n / 10.0))

        def wang_delta(eps: float) -> float:
            return Delta(eps, alpha, r, r, n, p, tol) + tol * n

        low, high = 0.8 * blanket[0], 1.25 * blanket[1]
        times = []
        for _ in range(WANG_STEPS):
            middle = math.sqrt(low * high)
            value, seconds = _timed(wang_delta, middle)
            times.append(seconds)
            low, high = (middle, high) if value > delta else (low, middle)
        row["wang"] = high
        row["wang_edge"] = (
            ">" if high == 1.25 * blanket[1] else "<" if low == 0.8 * blanket[0] else ""
        )
        row["wang_s"] = float(np.median(times))
    if balle:
        sys.path.insert(0, balle)
        from shuffleddp.amplification_bounds import BennettExact, Hoeffding
        from shuffleddp.mechanisms import RRMechanism

        for name, bound in (("hoeffding", Hoeffding), ("bennett", BennettExact)):
            analysis = bound(RRMechanism(eps0=eps0, k=4))
            try:
                row[name] = analysis.get_eps(eps0, n, delta)
            except AssertionError:  # their root finder's precondition: no bound below eps0
                row[name] = math.nan
            _, row[name + "_s"] = _timed(analysis.get_delta, blanket[1], eps0, n)
    return row


def _research(sizes: list[int], deltas: list[float], wang: str | None, balle: str | None) -> None:
    print("k-RR (k = 4), one round: eps(delta), ours as [lower, upper]; time of one delta(eps)")
    print(
        f"{'n':>8} {'eps0':>4} {'delta':>6} {'blanket [lower, upper]':>24} {'best upper':>10} "
        f"{'Wang':>10} {'Balle-H':>9} {'Balle-B':>9} {'ours s':>7} {'Wang s':>7} {'Balle s':>7}"
    )
    for n in sizes:
        for eps0 in RESEARCH_EPS0:
            for delta in deltas:
                arguments = [str(n), str(eps0), str(delta), wang or "", balle or ""]
                result = subprocess.run(
                    [sys.executable, __file__, "--research-child", *arguments],
                    capture_output=True,
                    text=True,
                    cwd=ROOT,
                )
                if result.returncode != 0:
                    print(f"{n:>8} {eps0:4g} {delta:6.0e} failed: {result.stderr.strip()[-200:]}")
                    continue
                row = json.loads(result.stdout.strip().splitlines()[-1])
                wang_text = f"{row.get('wang_edge', '')}{row.get('wang', math.nan):.5f}"
                print(
                    f"{n:>8} {eps0:4g} {delta:6.0e} [{row['blanket'][0]:10.6f}, "
                    f"{row['blanket'][1]:10.6f}] {row['best'][1]:10.6f} {wang_text:>10} "
                    f"{row.get('hoeffding', math.nan):9.5f} {row.get('bennett', math.nan):9.5f} "
                    f"{row['ours_s']:7.3f} {row.get('wang_s', math.nan):7.2f} "
                    f"{row.get('bennett_s', math.nan):7.3f}",
                    flush=True,
                )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="n <= 10^5 only")
    parser.add_argument("--n", type=int, nargs="+", help="sizes to run")
    parser.add_argument("--workloads", nargs="+", default=list(WORKLOADS[:-1]), choices=WORKLOADS)
    parser.add_argument(
        "--research", action="store_true", help="k-RR one round against the research codes"
    )
    parser.add_argument(
        "--wang",
        default=os.environ.get("PLD_WANG_CODE"),
        help="checkout of wangsw/PrivacyAmplification (default: $PLD_WANG_CODE)",
    )
    parser.add_argument(
        "--balle",
        default=os.environ.get("PLD_BALLE_CODE"),
        help="checkout of BorjaBalle/amplification-by-shuffling (default: $PLD_BALLE_CODE)",
    )
    parser.add_argument(
        "--deltas", type=float, nargs="+", default=list(RESEARCH_DELTAS), help="--research deltas"
    )
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("--research-child", nargs=5, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(_one(args.child[0], int(args.child[1]))))
        return
    if args.research_child:
        n, eps0, delta, wang, balle = args.research_child
        row = _research_row(int(n), float(eps0), float(delta), wang or None, balle or None)
        print(json.dumps(row))
        return
    if args.research:
        if not (args.wang or args.balle):
            parser.error("--research needs --wang DIR and/or --balle DIR (or PLD_*_CODE)")
        sizes = args.n or [n for n in RESEARCH_SIZES if not args.quick or n <= 10**5]
        _research(sizes, args.deltas, args.wang, args.balle)
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
