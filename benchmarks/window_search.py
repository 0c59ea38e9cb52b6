"""First window search of a fresh PLD, and the one-shot job it is part of.

The Chernoff window search (``pld.engine.tails``) is memoised per pmf: a repeated
composition pays nothing, but a one-shot job (build, compose, query) pays the
first search of every (direction, bound) pmf. For each workload and T this
prints the minimum over repeats of

* ``search``: the first searches of all pmfs of the PLD, as ``compose_bounds``
  runs them (the upper bound's full search, the lower bound's at the upper one's
  exponents), with fresh memos; ``per pmf`` divides by the number of pmfs;
* ``one-shot``: build + ``self_compose(T)`` + ``epsilon(1e-6)``.

Minima, not medians: the machine is shared. Run: ``python
benchmarks/window_search.py [--repeats 9]``.
"""

from __future__ import annotations

import argparse
import math
import time

import pld
from pld.engine import tails
from pld.engine.compose import _SAME_SUPPORT

WORKLOADS = {
    "subsampled_gaussian(1, 0.01)": lambda: pld.subsampled_gaussian(1.0, 0.01),
    "gaussian(2.0)": lambda: pld.gaussian(2.0),
    "clones(10_000, 1.0)": lambda: pld.clones(10_000, 1.0),
    'krr(1000, 4, 0.25, "weak")': lambda: pld.krr(1000, 4, 0.25, "weak"),
}


def searches(loss: pld.PLD, rounds: int, tail: float = 1e-15) -> int:
    """The first window searches of every pmf of ``loss`` composed ``rounds`` times."""
    count = 0
    for upper, lower in zip(loss.directions("upper"), loss.directions("lower"), strict=True):
        window = tails.composition_window(
            [(upper.offset, upper.masses)], [rounds], upper.step, tail, memos=[{}]
        )
        size = upper.masses.shape[0]
        similar = (
            abs(upper.offset - lower.offset) <= _SAME_SUPPORT * size
            and abs(size - lower.masses.shape[0]) <= _SAME_SUPPORT * size
        )
        found = (window.t_up, window.t_down)
        tails.composition_window(
            [(lower.offset, lower.masses)],
            [rounds],
            lower.step,
            tail,
            hint=found if similar else None,
            near=None if similar else found,
            memos=[{}],
        )
        count += 2
    return count


def fastest(job, repeats: int) -> float:
    best = math.inf
    for _ in range(repeats):
        start = time.perf_counter()
        job()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=9)
    args = parser.parse_args()
    print("| workload | T | search (ms) | per pmf (ms) | one-shot (ms) |")
    print("| --- | --- | --- | --- | --- |")
    for name, build in WORKLOADS.items():
        loss = build()
        for rounds in (10, 100, 1000, 10_000):
            pmfs = searches(loss, rounds)  # also loads the compiled kernels
            search = fastest(lambda r=rounds, o=loss: searches(o, r), args.repeats)
            one_shot = fastest(
                lambda r=rounds, b=build: b().self_compose(r).epsilon(1e-6),
                max(1, args.repeats // 3),
            )
            print(
                f"| {name} | {rounds} | {1e3 * search:.2f} | {1e3 * search / pmfs:.2f} | "
                f"{1e3 * one_shot:.1f} |"
            )


if __name__ == "__main__":
    main()
