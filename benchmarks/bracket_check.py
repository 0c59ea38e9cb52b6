"""Before/after check that no bracket widened: one matrix of queries on two revisions.

Each side (``--base`` and ``--head``) is exported with ``git archive`` into a
temporary directory and runs the same matrix in its own process (``PYTHONPATH``
at that tree, ``NUMBA_NUM_THREADS=1``); the sides run one after the other, so
their wall times compare. The matrix takes the workloads of the accuracy
acceptance tests (tests/distribution/test_accuracy.py) and of ``benchmarks/compose.py``, the
clones pmf pair of ``benchmarks/run_all.py`` through ``from_pmfs`` and a
heterogeneous composition of different clones, each composed T times, and asks

* eps(delta) at delta in {1e-3, 1e-6, 1e-10, 1e-12},
* delta(eps) at the two eps where the base's raw-grid eps(1e-3) and eps(1e-10)
  upper bounds lie (4 significant digits; the head is asked at the same eps),
* ``epsilon_bounds`` of the array of those deltas, where a side accepts an array
  (a side that refuses one is compared through its scalar answers),

each at ``rel_accuracy=1.0`` (the raw grid, no refinement), at the default and
(not with ``--quick``) at 1e-3, the acceptance tests' finer target.

Flags per case:

* ``WIDER``: the head's width ``upper - lower`` exceeds the base's by more than
  1e-9 of the value, or its upper bound is higher by more than that (or infinite
  where the base's is finite);
* ``DISJOINT``: the two brackets do not intersect (beyond 1e-12 of the value);
  one side is wrong, which is a privacy alarm;
* ``TRUTH`` (``BASE-TRUTH``): the head's (base's) bracket misses the exact answer
  by more than 1e-9 of it, where one is known: randomised response (binomial
  sums) and the Gaussian mechanism (Balle and Wang's closed form), eps(delta) by
  root finding on it;
* ``INVALID``: lower above upper (beyond 1e-12) or NaN on the head;
* ``ERROR``: the query raised on the head but not on the base;
* ``WARN``: the head warned (``AccuracyWarning``) where the base did not.

The exit status is 1 when a case is WIDER, DISJOINT, TRUTH, INVALID or ERROR.

Run: ``python benchmarks/bracket_check.py --base REV [--head PATH_OR_REV] [--quick]
[--flagged-only] [--json FILE]``. ``--head`` is a revision of this repository or
the path of a git work tree whose committed HEAD is taken (``--worktree`` takes
the files as they are instead); default: this repository's HEAD. ``--quick`` runs
a subset in 15-25 s a side; the full matrix takes 60-100 s a side (2-core
machine shared with other work; numba's compilation in each fresh tree included).
``--from-json FILE`` prints the report of a saved ``--json`` run again.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
import warnings
from pathlib import Path

DELTAS = (1e-3, 1e-6, 1e-10, 1e-12)
#: The deltas whose raw-grid eps upper bound (on the base) gives the delta(eps) points.
EPS_FROM_DELTAS = (1e-3, 1e-10)
#: delta(eps) points when the base gives no positive finite eps.
FALLBACK_EPS = (0.5, 2.0)
#: rel_accuracy of the queries: the raw grid (no refinement), the default target and,
#: in the full matrix, the acceptance tests' finer one.
ACCURACIES, QUICK_ACCURACIES = (1.0, None, 1e-3), (1.0, None)
WIDER_RTOL = 1e-9
DISJOINT_RTOL = 1e-12
#: A bracket misses an exact truth when it misses it by more than this, relatively
#: (the truths' own float error is about 1e-12; eps truths by root finding to 1e-15).
TRUTH_RTOL = 1e-9

#: T = 10 000 is in the full matrix where composing takes well under 2 s (measured on main).
FULL = (1, 10, 100, 1000, 10_000)
#: workload -> (T of the full matrix, T of the quick one)
ROUNDS = {
    "subsampled_gaussian(1, 0.01)": (FULL, (10, 1000)),
    "clones(10_000, 1.0)": (FULL, (1, 100)),
    "gaussian(2.0)": (FULL, (1, 1000)),
    'krr(1000, 4, 0.25, "weak")': (FULL, (10,)),
    "from_pmfs(clones pair n=1000, eps0=2)": (FULL, (10, 1000)),
    "randomized_response(1.0)": (FULL, (1000,)),
    "subsample(clones(1000, 1), 0.05)": (FULL, (1000,)),
    # T = 10 000: queries refined at 1e-3 take 15-35 s there.
    "compose(clones 1000/1, 2000/1, 5000/0.5, 10_000/2)": (FULL[:-1], (10,)),
    "randomized_response(0.1)": (FULL, ()),
    "gaussian(0.5)": (FULL, ()),
    "gaussian(20.0)": (FULL, ()),
    "clones(1000, 0.01)": (FULL, ()),
    "clones(1000, 4.0)": (FULL, ()),
    "clones(100_000, 1.0)": (FULL, ()),
    'krr(1000, 4, 0.25, "strong")': (FULL, ()),
    "subsample(clones(10_000, 2), 0.01)": (FULL, ()),
    "subsample(clones(1000, 2), 0.001)": (FULL, ()),
    "mix: gaussian(2) + clones(1000, 1) + rr(1)": (FULL, ()),
}


# -- the worker: runs in the exported tree's interpreter --------------------------------


def _builders(pld):
    """workload -> function of T giving the composed PLD (imports only public names)."""

    def self_composed(build):
        return lambda rounds: build().self_compose(rounds) if rounds > 1 else build()

    def clones_pair():
        try:
            from pld.shuffling.clones import clones_cells
        except ImportError:  # a revision before the package was laid out by concept
            from pld.mechanisms.clones import clones_cells

        cells = clones_cells(1000, 2.0)
        return pld.from_pmfs(
            cells.log_p,
            cells.log_q,
            symmetric=True,
            truncated_mass_p=cells.truncated_mass,
            truncated_mass_q=cells.truncated_mass,
            max_loss=2.0,
        )

    def heterogeneous(rounds):
        parts = [pld.clones(1000, 1.0), pld.clones(2000, 1.0)]
        parts += [pld.clones(5000, 0.5), pld.clones(10_000, 2.0)]
        return pld.compose(*parts, rounds=rounds)

    return {
        "subsampled_gaussian(1, 0.01)": self_composed(lambda: pld.subsampled_gaussian(1.0, 0.01)),
        "clones(10_000, 1.0)": self_composed(lambda: pld.clones(10_000, 1.0)),
        "gaussian(2.0)": self_composed(lambda: pld.gaussian(2.0)),
        'krr(1000, 4, 0.25, "weak")': self_composed(lambda: pld.krr(1000, 4, 0.25, "weak")),
        "from_pmfs(clones pair n=1000, eps0=2)": self_composed(clones_pair),
        "randomized_response(1.0)": self_composed(lambda: pld.randomized_response(1.0)),
        "subsample(clones(1000, 1), 0.05)": self_composed(
            lambda: pld.subsample(pld.clones(1000, 1.0), rate=0.05)
        ),
        "compose(clones 1000/1, 2000/1, 5000/0.5, 10_000/2)": heterogeneous,
        "randomized_response(0.1)": self_composed(lambda: pld.randomized_response(0.1)),
        "gaussian(0.5)": self_composed(lambda: pld.gaussian(0.5)),
        "gaussian(20.0)": self_composed(lambda: pld.gaussian(20.0)),
        "clones(1000, 0.01)": self_composed(lambda: pld.clones(1000, 0.01)),
        "clones(1000, 4.0)": self_composed(lambda: pld.clones(1000, 4.0)),
        "clones(100_000, 1.0)": self_composed(lambda: pld.clones(100_000, 1.0)),
        'krr(1000, 4, 0.25, "strong")': self_composed(lambda: pld.krr(1000, 4, 0.25, "strong")),
        "subsample(clones(10_000, 2), 0.01)": self_composed(
            lambda: pld.subsample(pld.clones(10_000, 2.0), rate=0.01)
        ),
        "subsample(clones(1000, 2), 0.001)": self_composed(
            lambda: pld.subsample(pld.clones(1000, 2.0), rate=0.001)
        ),
        "mix: gaussian(2) + clones(1000, 1) + rr(1)": lambda rounds: pld.compose(
            pld.gaussian(2.0), pld.clones(1000, 1.0), pld.randomized_response(1.0), rounds=rounds
        ),
    }


def _ask(query, argument, accuracy):
    """``query(argument, rel_accuracy=accuracy)`` as lower, upper, warned, or error."""
    from pld import AccuracyWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            lower, upper = query(argument, rel_accuracy=accuracy)
        except Exception as error:  # recorded and compared, not hidden
            return {"error": f"{type(error).__name__}: {error}"}
    warned = any(issubclass(w.category, AccuracyWarning) for w in caught)
    return {"lower": _plain(lower), "upper": _plain(upper), "warned": warned}


def _plain(value):
    import numpy as np

    array = np.asarray(value, dtype=float)
    return array.tolist() if array.ndim else float(array)


def _accuracy_name(accuracy):
    if accuracy is None:
        return "default"
    return "raw" if accuracy == 1.0 else f"{accuracy:g}"


def _eps_points(results, workload, rounds):
    points = []
    for delta in EPS_FROM_DELTAS:
        answer = results.get(f"{workload}; T={rounds}; raw; eps({delta:g})", {})
        upper = answer.get("upper")
        if isinstance(upper, float) and math.isfinite(upper) and upper > 0:
            points.append(float(f"{upper:.4g}"))
    return sorted(set(points)) or list(FALLBACK_EPS)


def run_side(tree: str, spec: dict) -> dict:
    """Run the matrix of ``spec`` with the ``pld`` of ``tree``; the JSON-able results."""
    import numpy as np

    import pld

    where = Path(pld.__file__).resolve()
    if Path(tree).resolve() not in where.parents:
        raise RuntimeError(f"pld imported from {where}, not from {tree}")
    builders = _builders(pld)
    results, seconds, eps_used = {}, {}, {}
    side_start = time.perf_counter()
    for workload, all_rounds in spec["rounds"].items():
        for rounds in all_rounds:
            key = f"{workload}; T={rounds}"
            start = time.perf_counter()
            try:
                composed = builders[workload](rounds)
            except Exception as error:
                results[f"{key}; build"] = {"error": f"{type(error).__name__}: {error}"}
                continue
            compose_seconds = time.perf_counter() - start
            given = spec.get("eps", {}).get(key)
            for accuracy in spec["accuracies"]:
                name = f"{key}; {_accuracy_name(accuracy)}"
                for delta in DELTAS:
                    results[f"{name}; eps({delta:g})"] = _ask(
                        composed.epsilon_bounds, delta, accuracy
                    )
                if given is None:
                    given = _eps_points(results, workload, rounds)
                eps_used[key] = given
                for eps in eps_used[key]:
                    results[f"{name}; delta({eps:g})"] = _ask(composed.delta_bounds, eps, accuracy)
                answer = _ask(composed.epsilon_bounds, np.array(DELTAS), accuracy)
                if "error" not in answer and isinstance(answer["upper"], list):
                    for i, delta in enumerate(DELTAS):
                        results[f"{name}; eps[array]({delta:g})"] = {
                            "lower": answer["lower"][i],
                            "upper": answer["upper"][i],
                            "warned": answer["warned"],
                        }
            seconds[key] = (compose_seconds, time.perf_counter() - start)
    return {
        "results": results,
        "seconds": seconds,
        "eps": eps_used,
        "total_seconds": time.perf_counter() - side_start,
        "pld": str(where.parent),
    }


# -- the driver: exports the trees, runs the sides, compares -----------------------------


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True
    ).stdout.strip()


def export(repo: Path, rev: str, into: Path) -> str:
    """Extract ``rev`` of ``repo`` into ``into`` with git archive; its full commit id."""
    try:
        commit = _git(repo, "rev-parse", "--verify", f"{rev}^{{commit}}")
    except subprocess.CalledProcessError:
        raise SystemExit(f"bracket_check: error: no revision {rev!r} in {repo}") from None
    archive = into.with_suffix(".tar")
    _git(repo, "archive", "--format=tar", "-o", str(archive), commit)
    into.mkdir(parents=True)
    with tarfile.open(archive) as tar:
        tar.extractall(into, filter="data")
    archive.unlink()
    return commit


def run_tree(tree: Path, spec: dict, scratch: Path, timeout: float) -> dict:
    """Run the matrix in a fresh interpreter whose ``pld`` is ``tree``'s."""
    spec_file, out_file = scratch / "spec.json", scratch / "out.json"
    spec_file.write_text(json.dumps(spec))
    env = dict(os.environ, PYTHONPATH=str(tree), NUMBA_NUM_THREADS="1", OMP_NUM_THREADS="1")
    env["NUMBA_CACHE_DIR"] = str(scratch / "numba_cache")
    command = [sys.executable, str(Path(__file__).resolve()), "--worker", str(tree)]
    command += [str(spec_file), str(out_file)]
    start = time.perf_counter()
    done = subprocess.run(command, env=env, cwd=tree, timeout=timeout, capture_output=True)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"side {tree} failed:\n{done.stderr.decode(errors='replace')[-3000:]}")
    side = json.loads(out_file.read_text())
    side["wall_seconds"] = wall
    return side


def _scale(*values: float) -> float:
    finite = [abs(v) for v in values if math.isfinite(v)]
    return max(finite, default=0.0)


def _relative_width(lower: float, upper: float) -> float:
    if upper == math.inf:
        return math.inf
    return (upper - lower) / upper if upper > 0 else 0.0


def compare(base: dict | None, head: dict | None) -> dict:
    """Flags and changes of one case (each side a result of :func:`_ask`)."""
    row = {"flags": [], "base": base, "head": head}
    if head is None or "error" in head:
        if base is not None and "error" not in base:
            row["flags"].append("ERROR")
        return row
    b_low, b_up = (base["lower"], base["upper"]) if base and "error" not in base else (None, None)
    h_low, h_up = head["lower"], head["upper"]
    if math.isnan(h_low) or math.isnan(h_up) or h_low > h_up + DISJOINT_RTOL * _scale(h_up):
        row["flags"].append("INVALID")
    if b_low is None:
        return row
    scale = _scale(b_up, h_up, b_low, h_low)
    wider = h_up > b_up + WIDER_RTOL * scale
    if math.isfinite(b_up) and math.isfinite(h_up):
        b_width, h_width = b_up - b_low, h_up - h_low
        wider = wider or h_width > b_width + WIDER_RTOL * scale
        if b_width > 0:
            row["width_change"] = (h_width - b_width) / b_width
        row["narrower"] = h_width < b_width - WIDER_RTOL * scale
    elif b_up == h_up == math.inf:  # both uppers infinite: the lower decides
        wider = h_low < b_low - WIDER_RTOL * scale
    if wider:
        row["flags"].append("WIDER")
    tolerance = DISJOINT_RTOL * scale + 1e-300
    if h_low > b_up + tolerance or b_low > h_up + tolerance:
        row["flags"].append("DISJOINT")
    if math.isfinite(b_up) and b_up > 0:
        row["upper_change"] = (h_up - b_up) / b_up
    if head.get("warned") and not base.get("warned"):
        row["flags"].append("WARN")
    return row


def _fmt(value: float | None, digits: int = 6) -> str:
    if value is None:
        return "-"
    return f"{value:.{digits}g}"


def _bracket(answer: dict | None) -> str:
    if answer is None:
        return "(absent)"
    if "error" in answer:
        return f"error: {answer['error'][:60]}"
    return f"[{_fmt(answer['lower'], 10)}, {_fmt(answer['upper'], 10)}]"


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:+.3g} %"


def _width_percent(answer: dict | None) -> str:
    if answer is None or "error" in answer:
        return "-"
    return f"{100 * _relative_width(answer['lower'], answer['upper']):.4g} %"


# -- exact truths where they are known in closed form ------------------------------------


def _gaussian_delta(eps: float, sigma: float, rounds: int) -> float:
    """delta(eps) of the Gaussian mechanism (sensitivity 1) composed ``rounds`` times.

    Balle and Wang (2018), Thm 8, with ``a = sqrt(rounds) / sigma``:
    ``Phi(-eps/a + a/2) - e^eps Phi(-eps/a - a/2)``, in log space.
    """
    from scipy.special import log_ndtr

    a = math.sqrt(rounds) / sigma
    log_first = float(log_ndtr(-eps / a + a / 2))
    log_second = eps + float(log_ndtr(-eps / a - a / 2))
    if log_first == -math.inf:
        return 0.0
    return math.exp(log_first) * -math.expm1(min(log_second - log_first, 0.0))


def _rr_delta(eps: float, eps0: float, rounds: int) -> float:
    """delta(eps) of eps0-randomised response composed ``rounds`` times (binomial sum).

    The loss is ``eps0 (2K - rounds)`` with ``K ~ Bin(rounds, e^eps0 / (1 + e^eps0))``
    under P; ``delta = sum_k P(k) (1 - e^(eps - loss_k))_+`` (both directions alike).
    """
    import numpy as np
    from scipy.stats import binom

    k = np.arange(rounds + 1)
    loss = eps0 * (2 * k - rounds)
    keep = loss > eps
    log_p = binom.logpmf(k[keep], rounds, 1.0 / (1.0 + math.exp(-eps0)))
    return float(np.sum(np.exp(log_p) * -np.expm1(eps - loss[keep])))


#: workload -> delta(eps, rounds), for the workloads whose truth is exact.
TRUTHS = {
    "randomized_response(1.0)": lambda eps, rounds: _rr_delta(eps, 1.0, rounds),
    "randomized_response(0.1)": lambda eps, rounds: _rr_delta(eps, 0.1, rounds),
    "gaussian(2.0)": lambda eps, rounds: _gaussian_delta(eps, 2.0, rounds),
    "gaussian(0.5)": lambda eps, rounds: _gaussian_delta(eps, 0.5, rounds),
    "gaussian(20.0)": lambda eps, rounds: _gaussian_delta(eps, 20.0, rounds),
}


def truth(key: str) -> float | None:
    """The exact answer of a case, where :data:`TRUTHS` knows it; else None."""
    from scipy.optimize import brentq

    parts = key.split("; ")
    if len(parts) != 4:  # a failed build: no query
        return None
    workload, rounds, _, query = parts
    if workload not in TRUTHS or "(" not in query:
        return None
    delta_of = TRUTHS[workload]
    rounds = int(rounds[2:])
    name, value = query[:-1].split("(")
    value = float(value)
    if name == "delta":
        return delta_of(value, rounds)
    if delta_of(0.0, rounds) <= value:
        return 0.0
    high = 1.0
    while delta_of(high, rounds) > value:
        high *= 2.0
    return brentq(lambda e: delta_of(e, rounds) - value, 0.0, high, xtol=1e-14, rtol=1e-15)


def _outside(answer: dict | None, exact: float) -> bool:
    if answer is None or "error" in answer:
        return False
    slack = TRUTH_RTOL * abs(exact) + 1e-300
    return answer["lower"] > exact + slack or answer["upper"] < exact - slack


def _scalar_answer(results: dict, array_key: str) -> dict | None:
    """A side's scalar answer standing for an array element; warned if any scalar warned."""
    answer = results.get(array_key.replace("eps[array]", "eps"))
    if answer is None or "error" in answer:
        return answer
    prefix = array_key[: array_key.index("eps[array]")]
    warned = any(results.get(f"{prefix}eps({d:g})", {}).get("warned") for d in DELTAS)
    return {**answer, "warned": warned}


def report(base: dict, head: dict, labels: tuple[str, str], flagged_only: bool) -> int:
    """Print the markdown table and the summary; the exit status."""
    base_results, head_results = base["results"], head["results"]
    keys = list(head_results) + [k for k in base_results if k not in head_results]
    rows = {}
    for key in keys:
        base_answer = base_results.get(key)
        if base_answer is None and "eps[array]" in key:
            base_answer = _scalar_answer(base_results, key)
        rows[key] = compare(base_answer, head_results.get(key))
        exact = truth(key)
        if exact is not None:
            rows[key]["truth"] = exact
            if _outside(head_results.get(key), exact):
                rows[key]["flags"].append("TRUTH")
            if _outside(base_answer, exact):
                rows[key]["flags"].append("BASE-TRUTH")
    print(f"# Bracket check: base {labels[0]} -> head {labels[1]}")
    print()
    print(
        "| case | base [lower, upper] | head [lower, upper] | truth | base width | head width "
        "| width change | upper change | flags |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for key, row in rows.items():
        if flagged_only and not row["flags"]:
            continue
        print(
            f"| {key} | {_bracket(row['base'])} | {_bracket(row['head'])} "
            f"| {_fmt(row.get('truth'), 10)} "
            f"| {_width_percent(row['base'])} | {_width_percent(row['head'])} "
            f"| {_percent(row.get('width_change'))} | {_percent(row.get('upper_change'))} "
            f"| {' '.join(row['flags'])} |"
        )
    print()
    count = {flag: sum(flag in r["flags"] for r in rows.values()) for flag in _FLAGS}
    changes = [r["width_change"] for r in rows.values() if "width_change" in r]
    worst = max(rows, key=lambda k: rows[k].get("width_change", -math.inf), default=None)
    narrower = sum(bool(r.get("narrower")) for r in rows.values())
    print(
        f"**Summary**: {len(rows)} cases; "
        + ", ".join(f"{n} {flag}" for flag, n in count.items())
        + f", {narrower} narrower; "
        + f"{sum('truth' in r for r in rows.values())} checked against exact truths; "
        + (
            f"worst width change {_percent(rows[worst]['width_change'])} ({worst}); "
            f"median width change {_percent(statistics.median(changes))}"
            if changes
            else "no comparable widths"
        )
    )
    print()
    _timing(base, head, labels)
    alarms = ("WIDER", "DISJOINT", "TRUTH", "INVALID", "ERROR")
    return 1 if any(count[flag] for flag in alarms) else 0


_FLAGS = ("WIDER", "DISJOINT", "TRUTH", "BASE-TRUTH", "INVALID", "ERROR", "WARN")


def _timing(base: dict, head: dict, labels: tuple[str, str]) -> None:
    print(
        f"Wall time: base {base['wall_seconds']:.1f} s, head {head['wall_seconds']:.1f} s "
        f"(matrix alone {base['total_seconds']:.1f} s / {head['total_seconds']:.1f} s)."
    )
    print()
    print("| workload, T | base build+compose s | head | base all queries s | head |")
    print("| --- | --- | --- | --- | --- |")
    for key, (b_compose, b_total) in base["seconds"].items():
        h_compose, h_total = head["seconds"].get(key, (math.nan, math.nan))
        print(
            f"| {key} | {b_compose:.3f} | {h_compose:.3f} | {b_total - b_compose:.3f} "
            f"| {h_total - h_compose:.3f} |"
        )


def _resolve_head(repo: Path, head: str, worktree: bool, scratch: Path) -> tuple[Path, str]:
    path = Path(head)
    if path.is_dir():
        if worktree:
            return path.resolve(), f"{path} (work tree as is)"
        commit = export(path, "HEAD", scratch / "head")
        return scratch / "head", f"{path} HEAD {commit[:9]}"
    commit = export(repo, head, scratch / "head")
    return scratch / "head", f"{head} ({commit[:9]})"


def main() -> None:
    if len(sys.argv) == 5 and sys.argv[1] == "--worker":
        tree, spec_file, out_file = sys.argv[2:]
        result = run_side(tree, json.loads(Path(spec_file).read_text()))
        Path(out_file).write_text(json.dumps(result))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", help="revision of this repository")
    parser.add_argument("--head", default="HEAD", help="revision, or path of a git work tree")
    parser.add_argument("--worktree", action="store_true", help="--head PATH taken as is")
    parser.add_argument("--quick", action="store_true", help="a subset, < 2 min a side")
    parser.add_argument("--flagged-only", action="store_true", help="table of flagged cases")
    parser.add_argument("--json", type=Path, help="write both sides' raw results here")
    parser.add_argument("--timeout", type=float, default=1200.0, help="seconds a side")
    parser.add_argument("--from-json", type=Path, help="report a saved --json file, no runs")
    args = parser.parse_args()
    if args.from_json:
        saved = json.loads(args.from_json.read_text())
        sys.exit(report(saved["base"], saved["head"], saved["labels"], args.flagged_only))
    if not args.base:
        parser.error("--base is required (or --from-json)")
    repo = Path(_git(Path(__file__).resolve().parent, "rev-parse", "--show-toplevel"))
    rounds = {name: both[1 if args.quick else 0] for name, both in ROUNDS.items()}
    rounds = {name: chosen for name, chosen in rounds.items() if chosen}
    with tempfile.TemporaryDirectory(prefix="bracket_check_") as scratch_name:
        scratch = Path(scratch_name)
        base_commit = export(repo, args.base, scratch / "base")
        head_tree, head_label = _resolve_head(repo, args.head, args.worktree, scratch)
        (scratch / "run_base").mkdir()
        (scratch / "run_head").mkdir()
        spec = {"rounds": rounds, "accuracies": QUICK_ACCURACIES if args.quick else ACCURACIES}
        base = run_tree(scratch / "base", spec, scratch / "run_base", args.timeout)
        head_spec = {**spec, "eps": base["eps"]}
        head = run_tree(head_tree, head_spec, scratch / "run_head", args.timeout)
    labels = (f"{args.base} ({base_commit[:9]})", head_label)
    if args.json:
        args.json.write_text(json.dumps({"base": base, "head": head, "labels": labels}))
    sys.exit(report(base, head, labels, args.flagged_only))


if __name__ == "__main__":
    main()
