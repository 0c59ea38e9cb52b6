"""Accuracy section of the benchmarks: time and bracket width at rel_accuracy 1e-2 and 1e-3.

Each workload of the accuracy acceptance tests (tests/distribution/test_accuracy.py) is run end
to end (build, compose, query eps(delta = 1e-6)) by ``pld`` at its defaults
(``rel_accuracy=1e-2``) and at ``rel_accuracy=1e-3``, and, where the mechanism can
be handed to them, by dp_accounting (pessimistic and optimistic PLDs) and
prv_accountant at their finest practical settings: dp_accounting's grid ``1e-4``
(its default) up to 100 rounds and ``1e-3`` at 1000 rounds, where ``1e-4`` needed
about 10 GB for gaussian(2); prv_accountant's ``eps_error`` 1e-3 up to 100 rounds
and 1e-2 at 1000. Widths are relative, ``(upper - lower) / upper``.

Run standalone with ``python benchmarks/accuracy.py [--repeats R]``; ``run_all.py``
includes it as its accuracy section.
"""

from __future__ import annotations

import argparse
import math
import statistics
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

import pld

DELTA = 1e-6


def _dp_accounting_grid(rounds: int) -> float:
    return 1e-4 if rounds <= 100 else 1e-3


def _prv_eps_error(rounds: int) -> float:
    return 1e-3 if rounds <= 100 else 1e-2


@dataclass
class Row:
    """One tool on one workload: median seconds and (lower, upper) of eps(DELTA)."""

    workload: str
    tool: str
    seconds: float
    lower: float
    upper: float
    note: str = ""

    @property
    def width(self) -> float:
        return (self.upper - self.lower) / self.upper if self.upper > 0 else 0.0


def _median(job: Callable[[], tuple[float, float]], repeats: int) -> tuple[float, tuple]:
    """Median time of ``repeats`` fresh runs (no warm-up: the first run is a user's)."""
    times, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = job()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def _rr_pmfs(eps0: float) -> tuple[np.ndarray, np.ndarray]:
    log_true, log_flip = -np.logaddexp(0.0, -eps0), -np.logaddexp(0.0, eps0)
    return np.array([log_true, log_flip]), np.array([log_flip, log_true])


def _clones_pmfs(n: int, eps0: float) -> tuple[np.ndarray, np.ndarray]:
    from pld.shuffling.clones import clones_cells

    cells = clones_cells(n, eps0)
    return cells.log_p, cells.log_q


#: (name, rounds, pld one-round builder, peer input): the peer input is
#: ("gaussian", sigma), ("pmfs", callable giving (log_p, log_q)) or None.
WORKLOADS = (
    (
        "randomized_response(1)",
        1000,
        lambda: pld.randomized_response(1.0),
        ("pmfs", lambda: _rr_pmfs(1.0)),
    ),
    ("gaussian(2)", 1000, lambda: pld.gaussian(2.0), ("gaussian", 2.0)),
    ("gaussian(0.5)", 100, lambda: pld.gaussian(0.5), ("gaussian", 0.5)),
    (
        "clones(1000, 1)",
        1000,
        lambda: pld.clones(1000, 1.0),
        ("pmfs", lambda: _clones_pmfs(1000, 1.0)),
    ),
    (
        "clones(1e5, 4)",
        100,
        lambda: pld.clones(100_000, 4.0),
        ("pmfs", lambda: _clones_pmfs(100_000, 4.0)),
    ),
    ("krr(1000, 4, 0.25, weak)", 1000, lambda: pld.krr(1000, 4, 0.25, "weak"), None),
    (
        "subsample(clones(1e4, 2), 0.01)",
        1000,
        lambda: pld.subsample(pld.clones(10_000, 2.0), 0.01),
        None,
    ),
    (
        "subsample(clones(1000, 1), 0.05)",
        1000,
        lambda: pld.subsample(pld.clones(1000, 1.0), 0.05),
        None,
    ),
    (
        "mix: gaussian(2) + clones(1000, 1) + rr(1)",
        100,
        lambda: pld.compose(pld.gaussian(2.0), pld.clones(1000, 1.0), pld.randomized_response(1.0)),
        None,
    ),
)


def _pld_row(name: str, rounds: int, build, rel_accuracy: float | None, repeats: int) -> Row:
    def run() -> tuple[float, float]:
        one = build()
        composed = one.self_compose(rounds) if rounds > 1 else one
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return composed.epsilon_bounds(DELTA, rel_accuracy=rel_accuracy)

    seconds, (lower, upper) = _median(run, repeats)
    label = "pld, default (1e-2)" if rel_accuracy is None else f"pld, rel_accuracy {rel_accuracy:g}"
    return Row(name, label, seconds, lower, upper)


def _dp_accounting_row(name: str, rounds: int, peer, repeats: int) -> Row:
    from dp_accounting.pld import privacy_loss_distribution as dpl

    kind, argument = peer
    pmfs = argument() if kind == "pmfs" else None

    def build(pessimistic: bool):
        if kind == "gaussian":
            return dpl.from_gaussian_mechanism(
                argument,
                pessimistic_estimate=pessimistic,
                value_discretization_interval=_dp_accounting_grid(rounds),
            )
        log_p, log_q = pmfs
        return dpl.from_two_probability_mass_functions(
            log_probability_mass_function_lower=dict(enumerate(log_q)),
            log_probability_mass_function_upper=dict(enumerate(log_p)),
            pessimistic_estimate=pessimistic,
            value_discretization_interval=_dp_accounting_grid(rounds),
        )

    def run(pessimistic: bool) -> float:
        one = build(pessimistic)
        composed = one.self_compose(rounds) if rounds > 1 else one
        return composed.get_epsilon_for_delta(DELTA)

    seconds, upper = _median(lambda: run(True), repeats)
    grid = _dp_accounting_grid(rounds)
    return Row(name, "dp_accounting", seconds, run(False), upper, f"grid {grid:g}")


def _prv_row(name: str, rounds: int, peer, repeats: int) -> Row:
    from prv_accountant import PRVAccountant
    from prv_accountant.privacy_random_variables import PrivacyRandomVariable

    kind, argument = peer
    if kind == "gaussian":
        from prv_accountant import GaussianMechanism

        prv = GaussianMechanism(noise_multiplier=argument)
    else:
        from scipy.special import logsumexp

        log_p, log_q = argument()
        loss = log_p - log_q
        order = np.argsort(loss)
        loss, mass = loss[order], np.exp(log_p[order])
        mass /= mass.sum()
        cumulative = np.concatenate([[0.0], np.cumsum(mass)])

        class DiscreteLoss(PrivacyRandomVariable):
            """The privacy loss of the pmf pair under P (a step CDF)."""

            def cdf(self, t):
                return cumulative[np.searchsorted(loss, t, side="right")]

            def mean(self) -> float:
                return float(np.dot(loss, mass))

            def rdp(self, alpha: float) -> float:
                return float(logsumexp((alpha - 1.0) * loss, b=mass) / (alpha - 1.0))

        prv = DiscreteLoss()

    def run() -> tuple[float, float]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            accountant = PRVAccountant(
                prvs=[prv],
                eps_error=_prv_eps_error(rounds),
                delta_error=1e-10,
                max_self_compositions=[rounds],
            )
            lower, _, upper = accountant.compute_epsilon(DELTA, [rounds])
        return lower, upper

    seconds, (lower, upper) = _median(run, repeats)
    note = f"eps_error {_prv_eps_error(rounds):g}"
    return Row(name, "prv_accountant", seconds, lower, upper, note)


def accuracy_rows(
    repeats: int, progress: Callable[[str], None] = lambda message: None
) -> list[Row]:
    """Every workload: pld at 1e-2 and 1e-3, and the peers that take it."""
    rows = []
    for name, rounds, build, peer in WORKLOADS:
        progress(f"accuracy: {name}, T = {rounds}")
        rows.append(_pld_row(name, rounds, build, None, repeats))
        rows.append(_pld_row(name, rounds, build, 1e-3, repeats))
        if peer is None:
            continue
        for module, job in (("dp_accounting", _dp_accounting_row), ("prv_accountant", _prv_row)):
            try:
                __import__(module)
            except ImportError:
                continue
            try:
                rows.append(job(name, rounds, peer, repeats))
            except Exception as error:  # a peer failing is a result, not a crash
                rows.append(Row(name, module, math.nan, math.nan, math.nan, f"failed: {error}"))
    return rows


def accuracy_table(rows: list[Row], rounds: dict[str, int] | None = None) -> list[str]:
    """Markdown lines of the accuracy section."""
    rounds = rounds or {name: t for name, t, _, _ in WORKLOADS}
    lines = [
        f"eps(delta = {DELTA:g}) end to end (build, compose, query); width = "
        "(upper - lower) / upper. Median of fresh runs (no warm-up).",
        "",
        "| workload | T | tool | seconds | eps lower | eps upper | width | note |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for row in rows:
        lines.append(
            f"| {row.workload} | {rounds.get(row.workload, '')} | {row.tool} | "
            f"{row.seconds:.3f} | {row.lower:.6g} | {row.upper:.6g} | "
            f"{100 * row.width:.3g} % | {row.note} |"
        )
    return [*lines, ""]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="runs per measurement (median)")
    args = parser.parse_args()
    started = time.perf_counter()
    rows = accuracy_rows(
        args.repeats, lambda m: print(f"[{time.perf_counter() - started:6.1f} s] {m}", flush=True)
    )
    print("\n".join(accuracy_table(rows)))


if __name__ == "__main__":
    main()
