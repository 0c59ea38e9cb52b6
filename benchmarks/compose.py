"""Self-composition speed and accuracy: pld against Google's dp_accounting, one run.

The same pmf pair goes to both tools: the Poisson-subsampled Gaussian
(sigma = 1, q = 0.01) with its output discretised into bins of width 0.005 on
[-12, 13] (P = (1-q) N(0,1) + q N(1,1), Q = N(0,1)), so both account for exactly
the same discrete pair. For T in {10, 100, 1000}:

* dp_accounting at its default grid (1e-4 nats), pessimistic and optimistic
  (its bracket);
* pld at the coarsest of {1e-2, 3e-3, 1e-3, 3e-4, 1e-4} nats whose bracket is no wider
  than dp_accounting's at every reported eps where delta >= 1e-10 (below that
  our rigorous float round-off terms, which dp_accounting does not have, set
  the width).

Prints the median of several runs of the composition step alone and of the
whole job (build, compose, query), the bracket widths, and the speed ratios.
Run: ``python benchmarks/compose.py [--repeats 5]``.
"""

from __future__ import annotations

import argparse
import statistics
import time
from functools import partial

import numpy as np
from scipy.stats import norm

import pld
from pld.engine import fft

EPS = np.array([0.5, 1.0, 2.0, 3.0])


def subsampled_gaussian_pmfs(sigma=1.0, q=0.01, width=0.005):
    edges = np.arange(-12.0, 13.0 + width, width)
    base = np.diff(norm.cdf(edges, scale=sigma))
    shifted = np.diff(norm.cdf(edges, loc=1.0, scale=sigma))
    p = (1 - q) * base + q * shifted
    keep = (p > 0) & (base > 0)
    p, base = p[keep], base[keep]
    return np.log(p / p.sum()), np.log(base / base.sum())


def median_time(job, repeats):
    times, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = job()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def dp_accounting_job(log_p, log_q, rounds, pessimistic):
    from dp_accounting.pld import privacy_loss_distribution as dpl

    one = dpl.from_two_probability_mass_functions(
        log_probability_mass_function_lower=dict(enumerate(log_q)),
        log_probability_mass_function_upper=dict(enumerate(log_p)),
        pessimistic_estimate=pessimistic,
        value_discretization_interval=1e-4,
    )
    return one, lambda: one.self_compose(rounds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    log_p, log_q = subsampled_gaussian_pmfs()
    print(f"pmf pair: {log_p.size} outcomes; eps = {EPS.tolist()}; medians of {args.repeats} runs")
    print(f"FFT backend: {fft.backend()}")
    header = ("T", "tool", "grid", "compose s", "end-to-end s", "delta upper @eps", "max width")
    print(" | ".join(header))
    for rounds in (10, 100, 1000):
        dp = {}
        for pessimistic in (True, False):
            one, compose = dp_accounting_job(log_p, log_q, rounds, pessimistic)
            compose_time, composed = median_time(compose, args.repeats)

            def end_to_end(pessimistic=pessimistic, rounds=rounds):
                built, run = dp_accounting_job(log_p, log_q, rounds, pessimistic)
                result = run()
                return [result.get_delta_for_epsilon(e) for e in EPS]

            total_time, deltas = median_time(end_to_end, args.repeats)
            dp[pessimistic] = (compose_time, total_time, np.array(deltas))
        dp_width = dp[True][2] - dp[False][2]
        dp_compose = dp[True][0] + dp[False][0]
        dp_total = dp[True][1] + dp[False][1]
        print(
            f"{rounds} | dp_accounting (pess.+opt.) | 1e-4 | {dp_compose:.3f} | {dp_total:.3f} | "
            f"{np.array2string(dp[True][2], precision=6)} | {dp_width.max():.2e}"
        )
        for step in (1e-2, 3e-3, 1e-3, 3e-4, 1e-4):
            one = pld.from_pmfs(log_p, log_q, loss_grid_step=step)
            compose_time, composed = median_time(partial(one.self_compose, rounds), args.repeats)
            lower, upper = composed.delta_bounds(EPS)
            meaningful = dp[True][2] >= 1e-10
            if np.all((upper - lower)[meaningful] <= dp_width[meaningful]) or step == 1e-4:
                break

        def ours_end_to_end(step=step, rounds=rounds):
            loss = pld.from_pmfs(log_p, log_q, loss_grid_step=step).self_compose(rounds)
            return loss.delta_bounds(EPS)

        total_time, _ = median_time(ours_end_to_end, args.repeats)
        print(
            f"{rounds} | pld | {step:g} | {compose_time:.3f} | {total_time:.3f} | "
            f"{np.array2string(upper, precision=6)} | {(upper - lower).max():.2e}"
        )
        print(
            f"{rounds} | ratio dp_accounting / pld | | {dp_compose / compose_time:.1f}x | "
            f"{dp_total / total_time:.1f}x | | "
            f"width ratio {dp_width.max() / max((upper - lower).max(), 1e-300):.1f}x"
        )


if __name__ == "__main__":
    main()
