"""Deployment-scale targets in one run: medians, the FFT floor and the peers side by side.

Each section times one target of the deployment issue and prints whether it is met:

* ``gaussian``: the shuffled Gaussian randomizer, ``pld.shuffle(pld.randomizers.gaussian
  (sigma), n)``, build plus ``epsilon_bounds(1e-6)`` (default ``rel_accuracy``), at
  sigma = 1 on [0, 1] with n = 100 (target: at most 10 s, bracket at most 1 %, upper
  at most 0.94) and sigma = 0.25 with n = 10^4 (target: at most 30 s, upper below the
  local mechanism ``pld.gaussian(sigma, sensitivity=1)``);
* ``calibrate``: ``pld.calibrate(pld.checkin, "participation", n=10**4, eps0=2,
  rounds=100, target_eps=0.14, target_delta=1e-6)`` (target: at most 60 s, certified);
* ``compose``: the subsampled Gaussian (sigma = 1, q = 0.01) composed T = 100 and
  1000 times, the compose time per composed pmf against the FFT floor of its grid
  (one rfft, spectrum powering by squaring, one irfft at the composition's FFT
  length, on the fastest FFT installed: FFTW with reused plans; both timed in
  alternating blocks of 10 after a second of warm-up; target: at most 3x);
* ``dpsgd``: DP-SGD through ``pld.integrations.dp_accounting.Accountant`` against
  dp_accounting's ``PLDAccountant`` at its default, compose + ``get_epsilon(1e-5)``
  for (sigma = 1.1, q = 256/60000, 14063 steps) and (sigma = 1.5, q = 0.04, 2250
  steps), in a fresh process (imports done, the first call timed: what a training
  script pays) and warm (a second accountant in the same process); target: at
  least 5x faster both ways with pld's upper bound at most dp_accounting's.

Slow sections run ``--repeats`` times (default 3), the fast ones more; times are
wall-clock medians, with the load average printed (the reference machine has 2
cores shared with other work: compare runs at similar load).

Run: ``python benchmarks/deployment.py [--only gaussian,calibrate,compose,dpsgd]
[--repeats 3]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import textwrap
import warnings

from compose import floor_job as _floor_job  # benchmarks/compose.py: the same floor
from compose import median_time as _median
from compose import paired_medians as _paired_medians

import pld
from pld.engine import fft


def _verdict(ok: bool) -> str:
    return "met" if ok else "NOT met"


def gaussian_section(repeats: int) -> None:
    print("## Shuffled Gaussian randomizer: build + epsilon_bounds(1e-6)")
    print()
    print("| sigma | n | time s (median) | eps(1e-6) bracket | width | local eps | target |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for sigma, n, limit in ((1.0, 100, 10.0), (0.25, 10_000, 30.0)):
        randomizer = pld.randomizers.gaussian(sigma=sigma)

        def job(randomizer=randomizer, n=n):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return pld.shuffle(randomizer, n).epsilon_bounds(1e-6)

        elapsed, (lower, upper) = _median(job, repeats)
        local = pld.gaussian(sigma, sensitivity=1.0).epsilon_bounds(1e-6)[1]
        width = (upper - lower) / upper
        if sigma == 1.0:
            ok = elapsed <= limit and width <= 0.01 and upper <= 0.94
        else:
            ok = elapsed <= limit and upper < local
        print(
            f"| {sigma:g} | {n} | {elapsed:.2f} | [{lower:.5f}, {upper:.5f}] | "
            f"{100 * width:.2f} % | {local:.4f} | {_verdict(ok)} |"
        )
    print()


def calibrate_section(repeats: int) -> None:
    print("## Calibration of check-in participation (n = 1e4, eps0 = 2, T = 100)")
    print()

    def job():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return pld.calibrate(
                pld.checkin,
                "participation",
                n=10**4,
                eps0=2.0,
                rounds=100,
                target_eps=0.14,
                target_delta=1e-6,
                progress=False,
            )

    elapsed, result = _median(job, repeats)
    ok = elapsed <= 60.0 and result.certified
    print("| time s (median) | p | rejected | rejected delta lower | evaluations | target |")
    print("| --- | --- | --- | --- | --- | --- |")
    print(
        f"| {elapsed:.1f} | {result.value:.6g} | {result.rejected:.6g} | "
        f"{result.rejected_delta_lower:.4g} | {result.evaluations} | {_verdict(ok)} |"
    )
    print()


def compose_section(repeats: int) -> None:
    print("## Subsampled Gaussian (sigma = 1, q = 0.01): composition against the FFT floor")
    print()
    print("| T | FFT lengths | compose ms | floor ms | compose / floor per pmf | target |")
    print("| --- | --- | --- | --- | --- | --- |")
    one = pld.subsampled_gaussian(1.0, 0.01)
    for rounds in (100, 1000):
        composed = one.self_compose(rounds)  # warm-up
        pmfs = [
            getattr(direction, side)
            for side in ("upper", "lower")
            for direction in composed._directions
        ]
        lengths = [fft.fast_length(p.masses.shape[0]) for p in pmfs]
        elapsed, floor = _paired_medians(
            lambda r=rounds: one.self_compose(r), _floor_job(max(lengths), rounds), repeats
        )
        ratio = elapsed / len(pmfs) / floor
        print(
            f"| {rounds} | {'+'.join(map(str, lengths))} | {1e3 * elapsed:.2f} | "
            f"{1e3 * floor:.3f} | {ratio:.1f}x | {_verdict(ratio <= 3.0)} |"
        )
    print()


DPSGD = {
    "sigma=1.1, q=256/60000, 14063 steps": (1.1, 256 / 60000, 14063),
    "sigma=1.5, q=0.04, 2250 steps": (1.5, 0.04, 2250),
}

_FRESH = textwrap.dedent(
    """
    import sys, time
    begin = time.perf_counter()
    sigma, q, steps, tool = float(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    if tool == "pld-native":
        import pld
        start = time.perf_counter()
        loss = pld.subsampled_gaussian(sigma, q).self_compose(steps)
        eps = loss.epsilon_bounds(1e-5, rel_accuracy=1.0)[1]
    else:
        from dp_accounting import dp_event
        if tool == "pld":
            from pld.integrations.dp_accounting import Accountant as Tool
        else:
            from dp_accounting.pld.pld_privacy_accountant import PLDAccountant as Tool
        event = dp_event.PoissonSampledDpEvent(q, dp_event.GaussianDpEvent(sigma))
        start = time.perf_counter()
        accountant = Tool()
        accountant.compose(event, steps)
        eps = accountant.get_epsilon(1e-5)
    end = time.perf_counter()
    print(end - start, end - begin, repr(eps))
    """
)


def _fresh(tool: str, sigma: float, q: float, steps: int, repeats: int):
    """Medians of (first call, imports + first call) in fresh processes, and the eps."""
    first, whole, eps = [], [], None
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    # An installed package has its bytecode compiled: never time the compiler.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    for _ in range(repeats):
        out = subprocess.run(
            [sys.executable, "-c", _FRESH, str(sigma), repr(q), str(steps), tool],
            capture_output=True,
            text=True,
            check=True,
            env=env,
        ).stdout.split()
        first.append(float(out[0]))
        whole.append(float(out[1]))
        eps = float(out[2])
    return statistics.median(first), statistics.median(whole), eps


def dpsgd_section(repeats: int) -> None:
    try:
        from dp_accounting import dp_event
        from dp_accounting.pld.pld_privacy_accountant import PLDAccountant

        from pld.integrations.dp_accounting import Accountant
    except ImportError:
        print("## DP-SGD: dp_accounting is not installed; skipped")
        print()
        return
    print("## DP-SGD through the dp_accounting Accountant: compose + get_epsilon(1e-5)")
    print()
    print(
        "| workload | pld fresh s | dp_accounting fresh s | speed-up | pld warm s "
        "| dp_accounting warm s | speed-up | pld upper | dp_accounting | target |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    whole_rows = []
    for name, (sigma, q, steps) in DPSGD.items():
        ours_fresh, ours_whole, ours_eps = _fresh("pld", sigma, q, steps, repeats)
        theirs_fresh, theirs_whole, theirs_eps = _fresh("dp_accounting", sigma, q, steps, repeats)
        native_fresh, native_whole, native_eps = _fresh("pld-native", sigma, q, steps, repeats)
        whole_rows.append((name, ours_whole, theirs_whole, native_fresh, native_whole, native_eps))
        event = dp_event.PoissonSampledDpEvent(q, dp_event.GaussianDpEvent(sigma))

        def run(tool, event=event, steps=steps):
            accountant = tool()
            accountant.compose(event, steps)
            return accountant.get_epsilon(1e-5)

        run(Accountant)
        run(PLDAccountant)
        ours_warm, _ = _median(lambda: run(Accountant), 2 * repeats + 1)
        theirs_warm, _ = _median(lambda: run(PLDAccountant), 2 * repeats + 1)
        fresh_ratio, warm_ratio = theirs_fresh / ours_fresh, theirs_warm / ours_warm
        ok = fresh_ratio >= 5 and warm_ratio >= 5 and ours_eps <= theirs_eps
        print(
            f"| {name} | {ours_fresh:.3f} | {theirs_fresh:.3f} | {fresh_ratio:.1f}x | "
            f"{ours_warm:.3f} | {theirs_warm:.3f} | {warm_ratio:.1f}x | {ours_eps:.6f} | "
            f"{theirs_eps:.6f} | {_verdict(ok)} |"
        )
    print()
    print(
        "Whole fresh processes (imports + first call; both Accountants import "
        "dp_accounting, whose import dominates), and pld's own API without it "
        "(`import pld`, subsampled_gaussian(...).self_compose(T).epsilon_bounds(1e-5)):"
    )
    print()
    print(
        "| workload | pld Accountant s | dp_accounting s | pld native first call s "
        "| pld native whole s | pld native upper |"
    )
    print("| --- | --- | --- | --- | --- | --- |")
    for name, ours_whole, theirs_whole, native_fresh, native_whole, native_eps in whole_rows:
        print(
            f"| {name} | {ours_whole:.3f} | {theirs_whole:.3f} | {native_fresh:.3f} | "
            f"{native_whole:.3f} | {native_eps:.6f} |"
        )
    print()


SECTIONS = {
    "gaussian": gaussian_section,
    "calibrate": calibrate_section,
    "compose": compose_section,
    "dpsgd": dpsgd_section,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default=",".join(SECTIONS), help="comma-separated sections")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print(f"FFT backend: {fft.backend()}; load average {os.getloadavg()[0]:.2f}")
    print()
    for name in args.only.split(","):
        SECTIONS[name.strip()](args.repeats)
    print(f"load average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
