"""``pld curve``: delta(eps) or trade-off curves of several mechanisms, option values and
round counts at once, as a table, JSON, CSV or a plot."""

from __future__ import annotations

import argparse
import itertools
import math
import os
import sys
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

from pld import validation
from pld.cli.common import (
    UsageError,
    add_accuracy_options,
    add_command,
    format_table,
    mechanism_options,
    rounds_of,
    write_file,
)
from pld.cli.spec import MechanismSpec, integer

#: Most series one ``pld curve`` draws (mechanisms x option values x round counts).
MAX_CURVE_SERIES = 40

#: Points of the default eps range of ``pld curve``.
DEFAULT_CURVE_POINTS = 41

#: The default eps range of ``pld curve`` ends where the largest upper delta reaches this.
CURVE_RANGE_DELTA = 1e-12


def add_curve_command(commands: Any, specs: Mapping[str, MechanismSpec]) -> None:
    """Add the ``curve`` subcommand to ``commands`` (argparse subparsers)."""
    names = list(specs)
    curve = add_command(
        commands,
        "curve",
        "delta(eps) curves with their (lower, upper) bracket, overlaying several "
        "mechanisms, option values (comma-separated, e.g. --adversary strong,weak) or round "
        "counts; as a table, JSON, CSV or a plot",
        specs,
    )
    curve.add_argument(
        "--mechanism",
        required=True,
        nargs="+",
        choices=sorted(names),
        metavar="NAME",
        help="one or more mechanisms (listed below); each takes the options it knows",
    )
    add_accuracy_options(curve)
    curve.add_argument(
        "--rounds", type=integer, nargs="+", default=[1], help="one or more round counts T"
    )
    where = curve.add_mutually_exclusive_group()
    where.add_argument("--eps", type=float, nargs="+", help="eps values (nats)")
    where.add_argument(
        "--eps-range",
        type=float,
        nargs=2,
        metavar=("LOW", "HIGH"),
        help=f"eps from LOW to HIGH (default: 0 to where delta_upper falls to "
        f"{CURVE_RANGE_DELTA:g})",
    )
    curve.add_argument(
        "--points",
        type=integer,
        default=DEFAULT_CURVE_POINTS,
        help=f"points of the eps range (default {DEFAULT_CURVE_POINTS})",
    )
    curve.add_argument(
        "--tradeoff",
        action="store_true",
        help="the hypothesis-testing view instead: bounds on the smallest false-negative "
        "rate at --points false-positive rates in [0, 1] (f-DP trade-off curve)",
    )
    curve.add_argument("--csv", metavar="FILE", help="also write the curves to a CSV file")
    curve.add_argument(
        "--plot",
        metavar="FILE",
        help="also plot the curves (format from the extension, e.g. .png); needs matplotlib",
    )
    curve.add_argument("--json", action="store_true", help="print JSON")
    curve.set_defaults(handler=_run_curve, table=_curve_table)


def _option_groups(
    tokens: Sequence[str], specs: Sequence[MechanismSpec]
) -> list[tuple[str, list[str]]]:
    """Split mechanism tokens into (flag, values); values may be comma-separated lists."""
    known = {option.flag for spec in specs for option in spec.options}
    groups: list[tuple[str, list[str]]] = []
    for token in tokens:
        if token.startswith("--"):
            flag, has_value, value = token.partition("=")
            if flag not in known:
                raise UsageError(f"unrecognized arguments: {token}")
            groups.append((flag, [value] if has_value else []))
        elif not groups:
            raise UsageError(f"unrecognized arguments: {token}")
        else:
            groups[-1][1].append(token)
    merged: dict[str, list[str]] = {}
    for flag, values in groups:
        items = [item for value in values for item in value.split(",") if item != ""]
        if not items:
            raise UsageError(f"argument {flag}: expected a value")
        merged.setdefault(flag, []).extend(items)
    return list(merged.items())


def _curve_series(args: argparse.Namespace) -> list[dict[str, Any]]:
    """Every (mechanism, option values, rounds) combination of a ``curve`` command."""
    specs = [args.specs[name] for name in dict.fromkeys(args.mechanism)]
    groups = _option_groups(args.mechanism_args, specs)
    rounds = [validation.integer_at_least("rounds", value, 1) for value in args.rounds]
    series = []
    for spec in specs:
        flags = {option.flag: option.dest for option in spec.options}
        own = [(flag, values) for flag, values in groups if flag in flags]
        for values in itertools.product(*(v for _, v in own)):
            tokens = [
                item for (flag, _), value in zip(own, values, strict=True) for item in (flag, value)
            ]
            options = mechanism_options(spec, tokens, args.loss_grid_step)
            varying = [
                f"{flags[flag]}={value}"
                for (flag, choices), value in zip(own, values, strict=True)
                if len(choices) > 1
            ]
            for count in rounds:
                label = " ".join([spec.name, *varying, f"T={count}"])
                series.append({"label": label, "spec": spec, "options": options, "rounds": count})
    if len(series) > MAX_CURVE_SERIES:
        raise UsageError(
            f"the curve command asks for {len(series)} series; at most {MAX_CURVE_SERIES}"
        )
    return series


def _eps_grid(args: argparse.Namespace, losses: Sequence[Any]) -> list[float]:
    import numpy as np

    if args.eps is not None:
        return [validation.finite_real("eps", value) for value in args.eps]
    points = validation.integer_at_least("points", args.points, 2)
    if args.eps_range is not None:
        low = validation.finite_real("eps-range LOW", args.eps_range[0])
        high = validation.finite_real("eps-range HIGH", args.eps_range[1])
        if high <= low:
            raise UsageError(f"--eps-range needs LOW < HIGH (got {low:g} {high:g})")
    else:
        low, high = 0.0, 0.0
        for loss in losses:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                reach = loss.epsilon(CURVE_RANGE_DELTA)
            if not math.isfinite(reach):
                reach = max(float(np.max(a.loss, initial=0.0)) for a in loss.atoms("upper"))
            high = max(high, reach)
        if high <= 0.0:
            high = 1.0
    return np.linspace(low, high, points).tolist()


def _run_curve(args: argparse.Namespace) -> dict[str, Any]:
    from pld.progress import progress_bar

    if args.plot is not None:
        from pld.plot import require_matplotlib

        try:
            require_matplotlib()
        except ImportError as error:
            raise UsageError(f"--plot: {error}") from error
    for path in (args.csv, args.plot):
        if path is not None:
            folder = os.path.dirname(os.path.abspath(path))
            if not os.path.isdir(folder) or not os.access(folder, os.W_OK):
                raise UsageError(f"cannot write {path}: {folder} is not a writable directory")
    series = _curve_series(args)
    built: dict[int, Any] = {}
    with progress_bar(total=len(series), desc="curves", unit="curve") as bar:
        for item in series:
            key = id(item["options"])
            if key not in built:
                built[key] = item["spec"].build(**item["options"])
            item["loss"] = rounds_of(built[key], item["rounds"])
            bar.set_postfix_str(item["label"])
            bar.update(1)
    if args.tradeoff:
        return _tradeoff_result(args, series)
    eps = _eps_grid(args, [item["loss"] for item in series])
    return _tabulated(
        args,
        series,
        eps,
        ("eps", "delta_lower", "delta_upper"),
        lambda loss: loss.curve(eps, rel_accuracy=args.rel_accuracy),
    )


def _tabulated(
    args: argparse.Namespace,
    series: list[dict[str, Any]],
    x_values: list[float],
    header: tuple[str, str, str],
    table_of: Any,
) -> dict[str, Any]:
    """Each series' ``(x, lower, upper)`` table by ``table_of(loss)``, written out, returned."""
    x, lower, upper = header
    curves = {}
    for item in series:
        table = table_of(item["loss"])
        curves[item["label"]] = table
        item[lower], item[upper] = table[:, 1].tolist(), table[:, 2].tolist()
    _write_outputs(args, curves, header)
    return {
        x: x_values,
        "series": [
            {
                "label": item["label"],
                "mechanism": item["spec"].name,
                "options": item["options"],
                "rounds": item["rounds"],
                lower: item[lower],
                upper: item[upper],
            }
            for item in series
        ],
    }


def _write_outputs(
    args: argparse.Namespace, curves: dict[str, Any], header: tuple[str, str, str]
) -> None:
    written = []
    if args.csv is not None:
        from pld.plot import save_csv

        write_file(args.csv, lambda: save_csv(curves, args.csv, header=header))
        written.append(args.csv)
    if args.plot is not None:
        from pld.plot import plot_curves, plot_tradeoff

        plot = plot_tradeoff if header[0] == "fpr" else plot_curves
        write_file(args.plot, lambda: plot(curves, path=args.plot))
        written.append(args.plot)
    if written and not args.quiet:
        print(f"pld: wrote {', '.join(written)}", file=sys.stderr)


def _tradeoff_result(args: argparse.Namespace, series: list[dict[str, Any]]) -> dict[str, Any]:
    """``pld curve --tradeoff``: FNR bounds at ``--points`` FPRs from 0 to 1."""
    import numpy as np

    from pld.distribution import tradeoff_table

    if args.eps is not None or args.eps_range is not None:
        raise UsageError("--tradeoff takes --points false-positive rates, not --eps/--eps-range")
    points = validation.integer_at_least("points", args.points, 2)
    fpr = np.linspace(0.0, 1.0, points)
    return _tabulated(
        args,
        series,
        fpr.tolist(),
        ("fpr", "fnr_lower", "fnr_upper"),
        lambda loss: tradeoff_table(loss, fpr),
    )


def _curve_table(result: dict[str, Any]) -> str:
    flat: dict[str, Any] = {}
    numbered = len(result["series"]) > 1
    for index, item in enumerate(result["series"], start=1):
        flat[f"series {index}" if numbered else "series"] = item["label"]
    x, lower, upper = (
        ("fpr", "fnr_lower", "fnr_upper")
        if "fpr" in result
        else ("eps", "delta_lower", "delta_upper")
    )
    flat[x] = result[x]
    for index, item in enumerate(result["series"], start=1):
        suffix = f" {index}" if numbered else ""
        flat[f"{lower}{suffix}"] = item[lower]
        flat[f"{upper}{suffix}"] = item[upper]
    return format_table(flat)
