"""Composition and query speed against the FFT floor and against dp_accounting, one run.

**1. Against the floor.** For each workload of the speed issue and T in
{1, 10, 100, 1000, 10000}: the median time to build the one-round PLD, to
compose it T times (both bounds, every direction), to answer the first
eps(1e-6) query and the first delta(1) query on a freshly composed PLD (suffix
sums included), next to the *floor*: one rfft of the composed grid, spectrum
powering by repeated squaring and one irfft, at the FFT length the composition
uses, on the fastest FFT installed (FFTW with its plans reused, made outside the
timing); composition and floor are timed in alternating blocks of 10 runs
(:func:`paired_medians`). ``compose / floor``
divides by the number of (direction, bound) pmfs, so 3x means "three floors per
composed pmf".

**2. Same pmf pair as dp_accounting.** The Poisson-subsampled Gaussian
(sigma = 1, q = 0.01) with its output discretised into bins of width 0.005 on
[-12, 13] (P = (1-q) N(0,1) + q N(1,1), Q = N(0,1)) goes to both tools. For T in
{10, 100, 1000}: dp_accounting at its default grid (1e-4 nats), pessimistic and
optimistic (its bracket); pld at the coarsest of {1e-2, 3e-3, 1e-3, 3e-4, 1e-4}
nats whose bracket is no wider than dp_accounting's at every reported eps where
delta >= 1e-10; the floor at pld's composed length.

Run: ``python benchmarks/compose.py [--repeats 5] [--quick] [--cpu]`` (``--cpu``
measures process time instead of wall time, for a loaded machine).
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
CLOCK = time.perf_counter

WORKLOADS = {
    "subsampled_gaussian(1, 0.01)": lambda: pld.subsampled_gaussian(1.0, 0.01),
    "clones(10_000, 1.0)": lambda: pld.clones(10_000, 1.0),
    "gaussian(2.0)": lambda: pld.gaussian(2.0),
    'krr(1000, 4, 0.25, "weak")': lambda: pld.krr(1000, 4, 0.25, "weak"),
}


def median_time(job, repeats):
    times, result = [], None
    for _ in range(repeats):
        start = CLOCK()
        result = job()
        times.append(CLOCK() - start)
    return statistics.median(times), result


def _fastest_transforms(length: int):
    """rfft and irfft of this length on the fastest backend installed: FFTW with its
    plans made once, outside the timing, and reused; their results are the plans'
    own arrays (valid until the next call), so a run allocates nothing."""
    if fft.backend() != "pyfftw":
        return fft.rfft, lambda spectrum: fft.irfft(spectrum, length)
    import pyfftw

    real = pyfftw.empty_aligned(length, dtype="float64")
    spectrum = pyfftw.empty_aligned(length // 2 + 1, dtype="complex128")
    forward = pyfftw.FFTW(real, spectrum, flags=("FFTW_ESTIMATE",))
    back_in = pyfftw.empty_aligned(length // 2 + 1, dtype="complex128")
    back_out = pyfftw.empty_aligned(length, dtype="float64")
    inverse = pyfftw.FFTW(back_in, back_out, direction="FFTW_BACKWARD", flags=("FFTW_ESTIMATE",))

    def rfft(values):
        forward.input_array[:] = values
        forward.execute()
        return forward.output_array

    def irfft(values):
        inverse.input_array[:] = values
        inverse.execute()
        result = inverse.output_array
        result /= length
        return result

    return rfft, irfft


def _power_into(spectrum: np.ndarray, exponent: int, out: np.ndarray) -> np.ndarray:
    """``spectrum ** exponent`` by the squarings and products of
    :func:`pld.engine.compose.spectrum_power`, into ``out`` (``spectrum`` overwritten)."""
    started = False
    while exponent:
        if exponent & 1:
            if started:
                np.multiply(out, spectrum, out=out)
            else:
                np.copyto(out, spectrum)
                started = True
        exponent >>= 1
        if exponent:
            np.multiply(spectrum, spectrum, out=spectrum)
    return out


def floor_job(length: int, rounds: int):
    """rfft + powering by squaring + irfft of a pmf of this length, on the fastest FFT
    installed (:func:`_fastest_transforms`), as a job to time (run once already). It
    allocates nothing: a composition's temporaries that the C allocator hands back to
    the system and faults in again count against the composition, not the floor."""
    pmf = np.random.default_rng(0).random(length)
    pmf /= pmf.sum()
    rfft, irfft = _fastest_transforms(length)
    power = np.empty(length // 2 + 1, dtype=complex)

    def run():
        with np.errstate(all="ignore"):
            return irfft(_power_into(rfft(pmf), rounds, power))

    run()
    return run


def fft_floor(length: int, rounds: int, repeats: int) -> float:
    """Median time of :func:`floor_job`."""
    return median_time(floor_job(length, rounds), repeats)[0]


def paired_medians(job, floor, blocks: int, warm_up: float = 1.0) -> tuple[float, float]:
    """Median times of ``job`` and of ``floor`` (e.g. a composition and its FFT floor),
    timed in ``blocks`` alternating blocks of 10 runs each after ``warm_up`` seconds of
    the floor: a floor run once after the job finds cold caches, and a lone short block
    runs at whatever clock the idle core had (the floor at T = 100 read 0.2-0.66 ms
    between runs timed so)."""
    start = CLOCK()
    while CLOCK() - start < warm_up:
        floor()
    job_times, floor_times = [], []
    for _ in range(blocks):
        for times, run in ((job_times, job), (floor_times, floor)):
            for _ in range(10):
                begin = CLOCK()
                run()
                times.append(CLOCK() - begin)
    return statistics.median(job_times), statistics.median(floor_times)


def composed_lengths(loss: pld.PLD) -> list[int]:
    """FFT length of each composed pmf (direction, bound) of a PLD."""
    return [fft.fast_length(pmf.masses.shape[0]) for pmf in _pmfs(loss)]


def _pmfs(loss: pld.PLD):
    for bound in ("upper", "lower"):
        yield from loss.directions(bound)


def first_query_time(fresh, query, repeats: int) -> float:
    """Median time of a query on a PLD from ``fresh()`` (nothing cached), ``fresh`` untimed."""
    times = []
    for _ in range(repeats):
        loss = fresh()
        start = CLOCK()
        query(loss)
        times.append(CLOCK() - start)
    return statistics.median(times)


def floor_table(repeats: int, quick: bool) -> None:
    print("## Against the FFT floor (medians; ms)")
    print()
    print(
        "| workload | T | grid | build | compose | eps(1e-6) | delta(1) | floor "
        "| compose / floor per pmf | eps / floor |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    all_rounds = (1, 10, 100, 1000) if quick else (1, 10, 100, 1000, 10_000)
    for name, build in WORKLOADS.items():
        build_time, one = median_time(build, repeats)
        for rounds in all_rounds:
            if rounds > 1:
                compose = partial(one.self_compose, rounds)
            else:
                compose = partial(lambda o: o, one)
            composed = compose()
            lengths = composed_lengths(composed)
            compose_time, floor = paired_medians(
                compose, floor_job(max(lengths), rounds), repeats, warm_up=0.3
            )
            fresh = (lambda r=rounds, o=one: o.self_compose(r)) if rounds > 1 else build
            eps_time = first_query_time(fresh, lambda c: c.epsilon_bounds(1e-6), repeats)
            delta_time = first_query_time(fresh, lambda c: c.delta_bounds(1.0), repeats)
            sizes = "+".join(str(p.masses.shape[0]) for p in _pmfs(composed))
            per_pmf = compose_time / len(lengths) / floor if rounds > 1 else float("nan")
            print(
                f"| {name} | {rounds} | {sizes} | {1e3 * build_time:.2f} | "
                f"{1e3 * compose_time:.2f} | {1e3 * eps_time:.2f} | {1e3 * delta_time:.2f} | "
                f"{1e3 * floor:.3f} | {per_pmf:.1f}x | {eps_time / floor:.1f}x |"
            )
    print()


def subsampled_gaussian_pmfs(sigma=1.0, q=0.01, width=0.005):
    edges = np.arange(-12.0, 13.0 + width, width)
    base = np.diff(norm.cdf(edges, scale=sigma))
    shifted = np.diff(norm.cdf(edges, loc=1.0, scale=sigma))
    p = (1 - q) * base + q * shifted
    keep = (p > 0) & (base > 0)
    p, base = p[keep], base[keep]
    return np.log(p / p.sum()), np.log(base / base.sum())


def dp_accounting_job(log_p, log_q, rounds, pessimistic):
    from dp_accounting.pld import privacy_loss_distribution as dpl

    one = dpl.from_two_probability_mass_functions(
        log_probability_mass_function_lower=dict(enumerate(log_q)),
        log_probability_mass_function_upper=dict(enumerate(log_p)),
        pessimistic_estimate=pessimistic,
        value_discretization_interval=1e-4,
    )
    return one, lambda: one.self_compose(rounds)


def peer_table(repeats: int) -> None:
    log_p, log_q = subsampled_gaussian_pmfs()
    print("## Same pmf pair as dp_accounting (medians; s)")
    print()
    print(f"pmf pair: {log_p.size} outcomes; eps = {EPS.tolist()}")
    print()
    print(
        "| T | tool | grid | compose s | end-to-end s | FFT floor s | delta upper @eps "
        "| max width |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for rounds in (10, 100, 1000):
        dp = {}
        for pessimistic in (True, False):
            one, compose = dp_accounting_job(log_p, log_q, rounds, pessimistic)
            compose_time, composed = median_time(compose, repeats)

            def end_to_end(pessimistic=pessimistic, rounds=rounds):
                built, run = dp_accounting_job(log_p, log_q, rounds, pessimistic)
                result = run()
                return [result.get_delta_for_epsilon(e) for e in EPS]

            total_time, deltas = median_time(end_to_end, repeats)
            dp[pessimistic] = (compose_time, total_time, np.array(deltas))
        dp_width = dp[True][2] - dp[False][2]
        dp_compose = dp[True][0] + dp[False][0]
        dp_total = dp[True][1] + dp[False][1]
        print(
            f"| {rounds} | dp_accounting (pess.+opt.) | 1e-4 | {dp_compose:.4f} | "
            f"{dp_total:.4f} | | {np.array2string(dp[True][2], precision=6)} | "
            f"{dp_width.max():.2e} |"
        )
        for step in (1e-2, 3e-3, 1e-3, 3e-4, 1e-4):
            one = pld.from_pmfs(log_p, log_q, loss_grid_step=step)
            compose_time, composed = median_time(partial(one.self_compose, rounds), repeats)
            lower, upper = composed.delta_bounds(EPS)
            meaningful = dp[True][2] >= 1e-10
            if np.all((upper - lower)[meaningful] <= dp_width[meaningful]) or step == 1e-4:
                break

        def ours_end_to_end(step=step, rounds=rounds):
            loss = pld.from_pmfs(log_p, log_q, loss_grid_step=step).self_compose(rounds)
            return loss.delta_bounds(EPS), loss.epsilon_bounds(1e-6)

        total_time, _ = median_time(ours_end_to_end, repeats)
        floor = fft_floor(max(composed_lengths(composed)), rounds, repeats)
        print(
            f"| {rounds} | pld | {step:g} | {compose_time:.4f} | {total_time:.4f} | "
            f"{floor:.2e} | {np.array2string(upper, precision=6)} | "
            f"{(upper - lower).max():.2e} |"
        )
        print(
            f"| {rounds} | ratio dp_accounting / pld | | {dp_compose / compose_time:.1f}x | "
            f"{dp_total / total_time:.1f}x | | | "
            f"width ratio {dp_width.max() / max((upper - lower).max(), 1e-300):.1f}x |"
        )
    print()


def main() -> None:
    global CLOCK
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="T <= 1000, no peer section")
    parser.add_argument("--cpu", action="store_true", help="process time instead of wall time")
    args = parser.parse_args()
    if args.cpu:
        CLOCK = time.process_time
    print(f"FFT backend: {fft.backend()}; clock: {'process' if args.cpu else 'wall'} time")
    print()
    floor_table(args.repeats, args.quick)
    if not args.quick:
        peer_table(args.repeats)


if __name__ == "__main__":
    main()
