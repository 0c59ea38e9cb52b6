"""All benchmarks in one process and one run: pld against the peer accountants, PLD vs RDP, scaling.

Run ``python benchmarks/run_all.py`` from the repository root (``--quick`` for a
smoke run with fewer repeats and smaller workloads). It writes
``benchmarks/results.md`` and three plots, ``benchmarks/peers.png``,
``benchmarks/pld_vs_rdp.png`` and ``benchmarks/scaling.png``.

1. **Peers on shared workloads.** Each tool gets the same mechanism:

   * the Poisson-subsampled Gaussian, sigma = 1, q = 0.01, T in {1000, 10000}
     (``pld.subsampled_gaussian``; dp_accounting's ``from_gaussian_mechanism``;
     prv_accountant's ``PoissonSubsampledGaussianMechanism``; Koskela's
     ``fourier_accountant.get_delta_R`` and ``get_epsilon_R``), queries delta(eps = 1)
     (shown) and eps(delta = 1e-6);
   * the clones pair of ``pld.clones`` (eps0 = 2) handed to every tool as the same
     pmfs (the merged atoms of ``pld.shuffling.clones.clones_cells``), n in
     {1e3, 1e4}, T in {1, 10, 100}, queries eps(delta = 1e-6) (shown) and
     delta(eps = 1). prv_accountant takes
     it as a discrete privacy random variable (step CDF); fourier_accountant has no
     pmf input and is skipped there.

   Times are medians of ``--repeats`` runs of the whole job (build, compose,
   one eps and one delta query), after one warm-up run of each tool. dp_accounting's bracket is its
   (optimistic, pessimistic) pair; its time is that of the pessimistic run alone
   (what a user runs), which favours it. prv_accountant's bracket is its own
   (lower, upper). pld runs at the fastest grid step default * 2^j
   (-4 <= j <= 4) whose bracket is no wider than the narrowest peer bracket
   (the coarsest such step and the default are timed), and at its default grid
   for reference. Next to pld's time: the FFT floor of its
   composition (one rfft of the composed grid, spectrum powering by squaring, one
   irfft, per composed pmf), the least any FFT accountant could spend.

2. **PLD vs RDP** on shuffle workloads: eps at delta = 1e-6 across T, for the PLD
   and for the RDP of the same one-round dominating pair (``pld.rdp.from_pld``),
   and for subsampled shufflers also Girgis et al.'s RDP bound.

3. **Scaling**: build time against n (clones), composition time against T and
   against the grid size, with the exponent of a least-squares fit on log-log axes.

4. **Accuracy** (``benchmarks/accuracy.py``): each workload of the accuracy
   acceptance tests at the default ``rel_accuracy`` (1e-2) and at 1e-3, time and
   bracket width of eps(1e-6) side by side with dp_accounting and prv_accountant
   at their finest practical settings.

Peers are optional (``pip install ".[bench]"`` plus ``pip install pld-accountant``
for Koskela's): a missing peer is skipped with a note.
"""

from __future__ import annotations

import argparse
import datetime
import importlib.metadata
import math
import os
import platform
import statistics
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from scipy.special import logsumexp

import pld
from pld.engine import fft
from pld.shuffling.clones import clones_cells

HERE = Path(__file__).resolve().parent
SIGMA, RATE, GAUSSIAN_EPS, GAUSSIAN_DELTA = 1.0, 0.01, 1.0, 1e-6
CLONES_EPS0, CLONES_DELTA, CLONES_EPS = 2.0, 1e-6, 1.0
RDP_DELTA = 1e-6
ORDERS = np.concatenate([1.0 + np.geomspace(0.05, 1.0, 12)[:-1], np.arange(2, 257)])


@dataclass
class Result:
    """One tool on one workload: median time (s), value, bracket (lower, upper), note."""

    tool: str
    seconds: float = math.nan
    value: float = math.nan
    bracket: tuple[float, float] | None = None
    note: str = ""
    extra: dict = field(default_factory=dict)

    @property
    def width(self) -> float:
        return math.nan if self.bracket is None else self.bracket[1] - self.bracket[0]


def median_time(job: Callable[[], object], repeats: int) -> tuple[float, object]:
    """Median wall time of ``repeats`` runs of ``job`` after one warm-up run, and its result."""
    result = job()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        result = job()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def version(distribution: str) -> str | None:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def peer_missing(module: str) -> str | None:
    """None if ``module`` imports, else the reason it is skipped."""
    try:
        __import__(module)
    except ImportError as error:
        return f"not installed ({error.name})"
    return None


# -- workload 1: Poisson-subsampled Gaussian -------------------------------------------


def gaussian_dp_accounting(rounds: int, repeats: int) -> Result:
    from dp_accounting.pld import privacy_loss_distribution as dpl

    def run(pessimistic: bool) -> float:
        one = dpl.from_gaussian_mechanism(
            SIGMA, sampling_prob=RATE, pessimistic_estimate=pessimistic
        )
        composed = one.self_compose(rounds)
        composed.get_epsilon_for_delta(GAUSSIAN_DELTA)
        return composed.get_delta_for_epsilon(GAUSSIAN_EPS)

    seconds, upper = median_time(lambda: run(True), repeats)
    lower = run(False)
    return Result("dp_accounting", seconds, upper, (lower, upper), "grid 1e-4, connect-the-dots")


def gaussian_prv(rounds: int, repeats: int, eps_error: float) -> Result:
    from prv_accountant import PoissonSubsampledGaussianMechanism, PRVAccountant

    def run():
        prv = PoissonSubsampledGaussianMechanism(sampling_probability=RATE, noise_multiplier=SIGMA)
        accountant = PRVAccountant(
            prvs=[prv], eps_error=eps_error, delta_error=1e-10, max_self_compositions=[rounds]
        )
        accountant.compute_epsilon(GAUSSIAN_DELTA, [rounds])
        return accountant.compute_delta(GAUSSIAN_EPS, [rounds])

    seconds, (lower, estimate, upper) = median_time(run, repeats)
    return Result(
        "prv_accountant",
        seconds,
        estimate,
        (lower, upper),
        f"eps_error {eps_error:g}, delta_error 1e-10",
    )


def gaussian_koskela(rounds: int, repeats: int) -> Result:
    from fourier_accountant import get_delta_R, get_epsilon_R

    def run():
        get_epsilon_R(
            target_delta=GAUSSIAN_DELTA, sigma=SIGMA, q=RATE, ncomp=rounds, nx=10**6, L=20.0
        )
        return get_delta_R(
            target_eps=GAUSSIAN_EPS, sigma=SIGMA, q=RATE, ncomp=rounds, nx=10**6, L=20.0
        )

    seconds, value = median_time(run, repeats)
    return Result("pld-accountant", seconds, float(value), None, "nx 1e6, L 20; no bracket")


def gaussian_ours(rounds: int, repeats: int, target_width: float) -> list[Result]:
    default = pld.subsampled_gaussian(SIGMA, RATE).loss_grid_step
    return ours(
        lambda step: pld.subsampled_gaussian(SIGMA, RATE, loss_grid_step=step),
        lambda loss: (
            loss.epsilon_bounds(GAUSSIAN_DELTA, rel_accuracy=1.0),
            loss.delta_bounds(GAUSSIAN_EPS, rel_accuracy=1.0),
        )[1],
        rounds,
        repeats,
        target_width,
        default,
    )


def ours(
    build: Callable[[float], pld.PLD],
    query: Callable[[pld.PLD], tuple[float, float]],
    rounds: int,
    repeats: int,
    target_width: float,
    default_step: float,
) -> list[Result]:
    """pld at its default grid, and at the fastest step default * 2^j (-4 <= j <= 4)
    whose bracket is no wider than ``target_width`` (the narrowest peer bracket): the
    coarsest such step and the default one are timed, the faster is the ``pld`` row. The
    queries pass ``rel_accuracy=1`` so that each grid is measured as it is (section 4
    measures the refinement)."""

    def run(step: float) -> tuple[float, float]:
        loss = build(step)
        return query(loss.self_compose(rounds) if rounds > 1 else loss)

    def timed(step: float) -> Result:
        seconds, (lower, upper) = median_time(lambda: run(step), repeats)
        loss = build(step)
        composed = loss.self_compose(rounds) if rounds > 1 else loss
        floor = fft_floor(composed, rounds, repeats)
        return Result("pld", seconds, upper, (lower, upper), f"grid {step:.3g}", {"floor": floor})

    coarsest = default_step / 2**4
    for power in range(4, -5, -1):
        step = default_step * 2.0**power
        lower, upper = run(step)
        if not upper - lower > target_width:
            coarsest = step
            break
    default = timed(default_step)
    default.tool = "pld, default grid"
    candidates = [default] if coarsest == default_step else [timed(coarsest), default]
    qualifying = [r for r in candidates if not r.width > target_width] or candidates[:1]
    fastest = min(qualifying, key=lambda r: r.seconds)
    return [
        Result("pld", fastest.seconds, fastest.value, fastest.bracket, fastest.note, fastest.extra),
        default,
    ]


def fft_floor(composed: pld.PLD, rounds: int, repeats: int) -> float:
    """The FFT floor of a composition: one rfft of the composed grid, powering by
    squaring and one irfft at its FFT length, times the number of composed pmfs
    (bounds and directions)."""
    from pld.engine import spectrum_power

    step = composed.loss_grid_step
    sizes = [
        round((a.loss[-1] - a.loss[0]) / step) + 1 if a.loss.size else 1
        for bound in ("upper", "lower")
        for a in composed.atoms(bound)
    ]
    length = fft.fast_length(max(sizes))
    pmf = np.random.default_rng(0).random(length)
    pmf /= pmf.sum()
    with np.errstate(all="ignore"):
        seconds, _ = median_time(
            lambda: fft.irfft(spectrum_power(fft.rfft(pmf), rounds), length), repeats
        )
    return seconds * len(sizes)


def gaussian_workload(rounds: int, repeats: int, quick: bool) -> list[Result]:
    peers = []
    for module, job in (
        ("dp_accounting", lambda: gaussian_dp_accounting(rounds, repeats)),
        ("prv_accountant", lambda: gaussian_prv(rounds, repeats, 0.01)),
        ("fourier_accountant", lambda: gaussian_koskela(rounds, repeats)),
    ):
        name = {"fourier_accountant": "pld-accountant"}.get(module, module)
        missing = peer_missing(module)
        peers.append(Result(name, note=missing) if missing else job())
    widths = [p.width for p in peers if p.bracket is not None]
    target = min(widths) if widths else math.inf
    return [*gaussian_ours(rounds, repeats, target), *peers]


# -- workload 2: the clones pair as pmfs ----------------------------------------------


def clones_pmfs(n: int) -> tuple[np.ndarray, np.ndarray, float]:
    """The merged atoms pld.clones hands to the engine (log P, log Q) and the truncated mass."""
    cells = clones_cells(n, CLONES_EPS0)
    return cells.log_p, cells.log_q, cells.truncated_mass


def clones_dp_accounting(log_p, log_q, rounds: int, repeats: int) -> Result:
    from dp_accounting.pld import privacy_loss_distribution as dpl

    def run(pessimistic: bool) -> float:
        one = dpl.from_two_probability_mass_functions(
            log_probability_mass_function_lower=dict(enumerate(log_q)),
            log_probability_mass_function_upper=dict(enumerate(log_p)),
            pessimistic_estimate=pessimistic,
        )
        composed = one.self_compose(rounds) if rounds > 1 else one
        composed.get_delta_for_epsilon(CLONES_EPS)
        return composed.get_epsilon_for_delta(CLONES_DELTA)

    seconds, upper = median_time(lambda: run(True), repeats)
    lower = run(False)
    return Result("dp_accounting", seconds, upper, (lower, upper), "grid 1e-4, symmetric pmf pair")


def clones_prv(log_p, log_q, rounds: int, repeats: int, eps_error: float) -> Result:
    from prv_accountant import PRVAccountant
    from prv_accountant.privacy_random_variables import PrivacyRandomVariable

    loss = log_p - log_q
    order = np.argsort(loss)
    loss = loss[order]
    mass = np.exp(log_p[order])
    mass /= mass.sum()

    class DiscreteLoss(PrivacyRandomVariable):
        """The privacy loss of the pmf pair under P, as prv_accountant's interface wants it."""

        cumulative = np.concatenate([[0.0], np.cumsum(mass)])

        def cdf(self, t):
            return self.cumulative[np.searchsorted(loss, t, side="right")]

        def mean(self) -> float:
            return float(np.dot(loss, mass))

        def rdp(self, alpha: float) -> float:
            return float(logsumexp((alpha - 1.0) * loss, b=mass) / (alpha - 1.0))

    def run():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # quad warns on the step CDF
            accountant = PRVAccountant(
                prvs=[DiscreteLoss()],
                eps_error=eps_error,
                delta_error=1e-10,
                max_self_compositions=[rounds],
            )
            accountant.compute_delta(CLONES_EPS, [rounds])
            return accountant.compute_epsilon(CLONES_DELTA, [rounds])

    seconds, (lower, estimate, upper) = median_time(run, repeats)
    return Result(
        "prv_accountant", seconds, upper, (lower, upper), f"step-CDF PRV, eps_error {eps_error:g}"
    )


def clones_workload(n: int, rounds: int, repeats: int) -> list[Result]:
    log_p, log_q, truncated = clones_pmfs(n)
    peers = []
    for module, job in (
        ("dp_accounting", lambda: clones_dp_accounting(log_p, log_q, rounds, repeats)),
        ("prv_accountant", lambda: clones_prv(log_p, log_q, rounds, repeats, 0.01)),
    ):
        missing = peer_missing(module)
        peers.append(Result(module, note=missing) if missing else job())
    peers.append(Result("pld-accountant", note="takes only the subsampled Gaussian (no pmf input)"))
    widths = [p.width for p in peers if p.bracket is not None]
    target = min(widths) if widths else math.inf

    def build(step: float) -> pld.PLD:
        return pld.from_pmfs(
            log_p,
            log_q,
            symmetric=True,
            loss_grid_step=step,
            truncated_mass_p=truncated,
            truncated_mass_q=truncated,
            max_loss=CLONES_EPS0,
        )

    mine = ours(
        build,
        lambda loss: (
            loss.delta_bounds(CLONES_EPS, rel_accuracy=1.0),
            loss.epsilon_bounds(CLONES_DELTA, rel_accuracy=1.0),
        )[1],
        rounds,
        repeats,
        target,
        pld.engine.DEFAULT_LOSS_GRID_STEP,
    )
    return [*mine, *peers]


# -- section 2: PLD against RDP ---------------------------------------------------------


def pld_vs_rdp(all_rounds: tuple[int, ...], quick: bool) -> list[tuple]:
    """Rows (workload, T, eps PLD upper, eps RDP of the same pair, eps other RDP bound)."""
    from pld.shuffling.krr import ldp_epsilon

    workloads = [
        ("clones n=1e4 eps0=1", pld.clones(10**4, 1.0), 1.0, None),
        ("clones n=1e4 eps0=4", pld.clones(10**4, 4.0), 4.0, None),
        (
            "k-RR n=1e3 k=4 gamma=0.25 weak",
            pld.krr(1000, 4, 0.25, "weak"),
            ldp_epsilon(4, 0.25),
            None,
        ),
    ]
    if not quick:
        girgis = pld.rdp.girgis_subsampled_shuffle(10**4, 100, 3.0, np.arange(2, 257))
        workloads.append(
            (
                "subsampled clones n=1e4 m=100 eps0=3",
                pld.subsample(pld.clones(100, 3.0), 0.01),
                3.0,
                girgis,
            )
        )
    rows = []
    for name, one, max_loss, other in workloads:
        rdp = pld.rdp.from_pld(one, ORDERS, infinity_loss=max_loss)
        for rounds in all_rounds:
            composed = one.self_compose(rounds) if rounds > 1 else one
            eps_pld = composed.epsilon(RDP_DELTA)
            eps_rdp = pld.rdp.to_epsilon(rounds * rdp, ORDERS, RDP_DELTA)[0]
            eps_other = (
                math.nan
                if other is None
                else pld.rdp.to_epsilon(rounds * other, np.arange(2, 257), RDP_DELTA)[0]
            )
            rows.append((name, rounds, eps_pld, eps_rdp, eps_other))
    return rows


# -- section 3: scaling ---------------------------------------------------------------


def fitted_exponent(x: list[float], seconds: list[float]) -> float:
    return float(np.polyfit(np.log(x), np.log(seconds), 1)[0])


def scaling(repeats: int, quick: bool) -> dict[str, list[tuple[float, float, str]]]:
    """Series name -> [(x, median seconds, detail)]."""
    users = (10**3, 10**4, 10**5) if quick else (10**3, 10**4, 10**5, 10**6, 10**7)
    series: dict[str, list[tuple[float, float, str]]] = {
        "build vs n": [],
        "compose vs T": [],
        "compose vs grid": [],
    }
    for n in users:
        seconds, loss = median_time(lambda n=n: pld.clones(n, 1.0), max(1, repeats // 2))
        series["build vs n"].append((n, seconds, f"{loss.atoms()[0].loss.size} atoms"))
    one = pld.clones(10**4, 1.0)
    for rounds in (10, 100, 1000, 10_000) if not quick else (10, 100, 1000):
        seconds, composed = median_time(lambda r=rounds: one.self_compose(r), repeats)
        series["compose vs T"].append(
            (rounds, seconds, f"{composed.atoms()[0].loss.size} grid points")
        )
    for step in (4e-3, 2e-3, 1e-3, 5e-4, 2.5e-4, 1.25e-4):
        loss = pld.subsampled_gaussian(SIGMA, RATE, loss_grid_step=step)
        seconds, composed = median_time(lambda loss=loss: loss.self_compose(1000), repeats)
        size = sum(a.loss.size for a in composed.atoms())
        series["compose vs grid"].append((size, seconds, f"step {step:g}"))
    return series


# -- report ----------------------------------------------------------------------------


def fmt(value: float, digits: int = 6) -> str:
    return (
        "—"
        if value is None or (isinstance(value, float) and math.isnan(value))
        else f"{value:.{digits}g}"
    )


def peer_table(title: str, query: str, blocks: list[tuple[str, list[Result]]]) -> list[str]:
    lines = [
        f"### {title}",
        "",
        f"| workload | tool | settings | median s | FFT floor s | {query} | bracket | width "
        "| time ratio peer/pld |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for workload, results in blocks:
        mine = results[0]
        for result in results:
            if math.isnan(result.seconds):
                lines.append(f"| {workload} | {result.tool} | skipped: {result.note} | | | | | | |")
                continue
            floor = result.extra.get("floor")
            floor_cell = "" if floor is None else f"{floor:.2e}"
            bracket = (
                "—"
                if result.bracket is None
                else f"[{fmt(result.bracket[0])}, {fmt(result.bracket[1])}]"
            )
            ratio = "1" if result is mine else f"{result.seconds / mine.seconds:.1f}×"
            lines.append(
                f"| {workload} | {result.tool} | {result.note} | {result.seconds:.4f} | "
                f"{floor_cell} | {fmt(result.value)} | {bracket} | {fmt(result.width, 2)} | "
                f"{ratio} |"
            )
    return [*lines, ""]


def targets(blocks: list[tuple[str, list[Result]]]) -> list[str]:
    """The targets: >= 5x faster than dp_accounting and >= 10x faster than
    prv_accountant, at the same or tighter bracket."""
    lines = [
        "| workload | vs dp_accounting (target ≥ 5×) | vs prv_accountant (target ≥ 10×) |",
        "| --- | --- | --- |",
    ]
    for workload, results in blocks:
        mine = results[0]
        cells = []
        for tool, goal in (("dp_accounting", 5.0), ("prv_accountant", 10.0)):
            peer = next((r for r in results if r.tool == tool), None)
            if peer is None or math.isnan(peer.seconds):
                cells.append("peer skipped")
                continue
            ratio = peer.seconds / mine.seconds
            tighter = mine.width <= peer.width * (1 + 1e-9)
            verdict = "met" if ratio >= goal and tighter else "NOT met"
            cells.append(
                f"{ratio:.1f}× faster, bracket {'≤' if tighter else '>'} peer's: {verdict}"
            )
        lines.append(f"| {workload} | {cells[0]} | {cells[1]} |")
    return [*lines, ""]


def plot(gaussian_blocks, clones_blocks, rdp_rows, series, output: Path) -> list[str]:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return ["(matplotlib missing: no plots)"]
    figure, axis = plt.subplots(figsize=(7, 4))
    blocks = gaussian_blocks + clones_blocks
    tools = ["pld", "dp_accounting", "prv_accountant", "pld-accountant"]
    x = np.arange(len(blocks))
    for index, tool in enumerate(tools):
        times = [
            next((r.seconds for r in results if r.tool == tool), math.nan) for _, results in blocks
        ]
        axis.bar(x + (index - 1.5) * 0.2, times, 0.2, label=tool)
    axis.set_xticks(x, [name for name, _ in blocks], rotation=30, ha="right", fontsize=7)
    axis.set_yscale("log")
    axis.set_ylabel("median seconds (build + compose + query)")
    axis.legend(fontsize=7)
    figure.tight_layout()
    figure.savefig(output / "peers.png", dpi=100)
    plt.close(figure)

    figure, axis = plt.subplots(figsize=(6, 4))
    for name in dict.fromkeys(row[0] for row in rdp_rows):
        rows = [row for row in rdp_rows if row[0] == name]
        line = axis.loglog([r[1] for r in rows], [r[2] for r in rows], "o-", label=f"PLD: {name}")
        axis.loglog(
            [r[1] for r in rows],
            [r[3] for r in rows],
            "s--",
            color=line[0].get_color(),
            label="RDP, same pair",
        )
    axis.set_xlabel("rounds T")
    axis.set_ylabel(f"eps at delta = {RDP_DELTA:g}")
    axis.legend(fontsize=6)
    figure.tight_layout()
    figure.savefig(output / "pld_vs_rdp.png", dpi=100)
    plt.close(figure)

    figure, axes = plt.subplots(1, 3, figsize=(12, 3.5))
    for axis, (name, points) in zip(axes, series.items(), strict=True):
        axis.loglog([p[0] for p in points], [p[1] for p in points], "o-")
        axis.set_title(
            f"{name} (slope {fitted_exponent([p[0] for p in points], [p[1] for p in points]):.2f})"
        )
        axis.set_ylabel("seconds")
    axes[0].set_xlabel("n (clones, eps0 = 1)")
    axes[1].set_xlabel("T (clones n = 1e4, eps0 = 1)")
    axes[2].set_xlabel("composed grid points (subsampled Gaussian, T = 1000)")
    figure.tight_layout()
    figure.savefig(output / "scaling.png", dpi=100)
    plt.close(figure)
    return [
        "![peers](peers.png)",
        "",
        "![PLD vs RDP](pld_vs_rdp.png)",
        "",
        "![scaling](scaling.png)",
        "",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--repeats", type=int, default=5, help="timed runs per measurement (median)"
    )
    parser.add_argument(
        "--quick", action="store_true", help="smoke run: fewer and smaller workloads"
    )
    parser.add_argument(
        "--output", type=Path, default=HERE, help="directory for results.md and plots"
    )
    args = parser.parse_args()
    repeats = 1 if args.quick else args.repeats
    args.output.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    load_at_start = os.getloadavg()[0]

    def progress(message: str) -> None:
        print(f"[{time.perf_counter() - started:7.1f} s] {message}", flush=True)

    gaussian_blocks = []
    for rounds in (1000,) if args.quick else (1000, 10_000):
        progress(f"subsampled Gaussian, T = {rounds}")
        gaussian_blocks.append(
            (f"subsampled Gaussian T={rounds}", gaussian_workload(rounds, repeats, args.quick))
        )
    clones_blocks = []
    for n in (10**3,) if args.quick else (10**3, 10**4):
        for rounds in (1, 10) if args.quick else (1, 10, 100):
            progress(f"clones pmfs, n = {n}, T = {rounds}")
            clones_blocks.append(
                (f"clones n={n:.0e} T={rounds}", clones_workload(n, rounds, repeats))
            )
    progress("PLD vs RDP")
    rdp_rows = pld_vs_rdp((1, 10, 100) if args.quick else (1, 10, 100, 1000), args.quick)
    progress("scaling")
    series = scaling(repeats, args.quick)
    from accuracy import accuracy_rows, accuracy_table

    accuracy = accuracy_rows(repeats, progress)

    peers = {
        "dp-accounting": version("dp-accounting"),
        "prv-accountant": version("prv-accountant"),
        "pld-accountant": version("pld-accountant"),
    }
    lines = [
        "# Benchmarks: pld against the peer accountants",
        "",
        f"Generated by `python benchmarks/run_all.py{' --quick' if args.quick else ''}` on "
        f"{datetime.date.today().isoformat()}, {platform.machine()}, "
        f"Python {platform.python_version()}, numpy {np.__version__}, FFT backend "
        f"{fft.backend()}; one process, medians of {repeats} runs after a warm-up. Load "
        f"average (1 min) {load_at_start:.1f} at the start and {os.getloadavg()[0]:.1f} at "
        f"the end on {os.cpu_count()} cores: a shared machine, times are wall clock.",
        "Peers: " + ", ".join(f"{name} {ver or 'missing'}" for name, ver in peers.items()) + ".",
        "",
        "## 1. Peers on shared workloads",
        "",
        "Times are end to end (build, compose, one eps and one delta query: the table shows "
        "the one named in its header). dp_accounting's time is its pessimistic "
        "run alone; its bracket is (optimistic, pessimistic). `pld` runs at the fastest grid "
        "step default·2^j (-4 <= j <= 4) whose bracket is no wider than the narrowest peer "
        "bracket (the coarsest such step and the default are timed); `pld, default grid` is "
        "the library's default, for reference. 'FFT floor' is "
        "one rfft of pld's composed grid, powering by squaring and one irfft, per composed "
        "pmf (bounds and directions).",
        "",
    ]
    lines += peer_table(
        f"Poisson-subsampled Gaussian (sigma = {SIGMA}, q = {RATE})",
        f"delta(eps = {GAUSSIAN_EPS:g})",
        gaussian_blocks,
    )
    lines += peer_table(
        f"Clones pair as pmfs (eps0 = {CLONES_EPS0:g})",
        f"eps(delta = {CLONES_DELTA:g})",
        clones_blocks,
    )
    lines += ["### Targets", "", *targets(gaussian_blocks + clones_blocks)]
    lines += [
        "## 2. PLD against RDP on shuffle workloads",
        "",
        f"eps at delta = {RDP_DELTA:g}. 'RDP, same pair' is the Rényi DP of the same one-round "
        "dominating pair (`pld.rdp.from_pld`, orders 1.05…256) composed by addition and converted "
        "with Liew and Takahashi (2022), Lemma 2; 'other RDP' is Girgis et al.'s bound where "
        "it applies.",
        "",
        "| workload | T | PLD (upper) | RDP, same pair | other RDP | eps saved vs RDP |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for name, rounds, eps_pld, eps_rdp, eps_other in rdp_rows:
        lines.append(
            f"| {name} | {rounds} | {eps_pld:.4f} | {eps_rdp:.4f} | {fmt(eps_other, 5)} | "
            f"{100 * (eps_rdp - eps_pld) / eps_rdp:.1f} % |"
        )
    lines += [
        "",
        "## 3. Scaling",
        "",
        "| series | x | median s | detail |",
        "| --- | --- | --- | --- |",
    ]
    for name, points in series.items():
        for x, seconds, detail in points:
            lines.append(f"| {name} | {x:g} | {seconds:.4f} | {detail} |")
    lines.append("")
    for name, points in series.items():
        exponent = fitted_exponent([p[0] for p in points], [p[1] for p in points])
        lines.append(f"* {name}: fitted exponent {exponent:.2f} (time ∝ x^{exponent:.2f})")
    lines.append("")
    lines += ["## 4. Accuracy", "", *accuracy_table(accuracy)]
    lines += plot(gaussian_blocks, clones_blocks, rdp_rows, series, args.output)
    lines.append(f"Total run time: {time.perf_counter() - started:.0f} s.")
    (args.output / "results.md").write_text("\n".join(lines) + "\n")
    progress(f"wrote {args.output / 'results.md'}")


if __name__ == "__main__":
    main()
