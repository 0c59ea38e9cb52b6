"""Command-line interface: ``pld delta``, ``epsilon``, ``calibrate``, ``curve``, ``rdp``.

Each mechanism module describes its options in ``CLI_SPECS``
(:mod:`pld.mechanisms._spec`); this module only parses, calls the library and
prints. Bad input gives a one-line message on stderr and exit code 2.
``--quiet`` (anywhere on the line) silences progress bars and notes on stderr;
without it, bars appear only on a terminal (:mod:`pld.progress`).

Mechanism modules (numba, scipy) are imported only by the commands that need
them, so ``pld --help`` and ``pld rdp ...`` start quickly.
"""

from __future__ import annotations

import argparse
import importlib
import itertools
import json
import math
import os
import sys
import textwrap
import warnings
from collections.abc import Sequence
from typing import Any

from pld import _validate
from pld.mechanisms._spec import MechanismSpec
from pld.refinement import AccuracyWarning

MECHANISM_MODULES = (
    "pld.mechanisms.randomized_response",
    "pld.mechanisms.gaussian",
    "pld.mechanisms.subsampled_gaussian",
    "pld.mechanisms.clones",
    "pld.mechanisms.krr",
    "pld.mechanisms.subsample",
    "pld.mechanisms.laplace",
    "pld.mechanisms.discrete_laplace",
    "pld.mechanisms.discrete_gaussian",
    "pld.mechanisms.generic_dp",
    "pld.mechanisms.blanket",
    "pld.mechanisms.checkin",
)

#: Commands that take ``--mechanism`` (and so import the mechanism modules).
MECHANISM_COMMANDS = ("delta", "epsilon", "calibrate", "curve")

#: Most series one ``pld curve`` draws (mechanisms x option values x round counts).
MAX_CURVE_SERIES = 40

#: Points of the default eps range of ``pld curve``.
DEFAULT_CURVE_POINTS = 41

#: The default eps range of ``pld curve`` ends where the largest upper delta reaches this.
CURVE_RANGE_DELTA = 1e-12

QUIET_FLAG = "--quiet"


class UsageError(Exception):
    """Bad command-line input (reported in one line, exit code 2)."""


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # Abbreviations would let a mechanism's --m be read as --mechanism.
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> None:  # one line instead of usage + message
        raise UsageError(message)


def mechanism_specs() -> dict[str, MechanismSpec]:
    """All mechanisms the CLI knows, by name (modules that fail to import are skipped)."""
    specs: dict[str, MechanismSpec] = {}
    for name in MECHANISM_MODULES:
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        for spec in getattr(module, "CLI_SPECS", ()):
            specs[spec.name] = spec
    return specs


def _mechanism_epilog(specs: dict[str, MechanismSpec]) -> str:
    lines = ["mechanism options (after --mechanism NAME):"]
    for name, spec in sorted(specs.items()):
        flags = " ".join(
            f"{o.flag} {o.dest.upper()}" if o.required else f"[{o.flag} {o.dest.upper()}]"
            for o in spec.options
        )
        lines.append(f"  {name}: {flags}")
        lines.append(f"      {spec.help}")
    return "\n".join(lines)


def _add_common_options(parser: argparse.ArgumentParser, names: Sequence[str]) -> None:
    parser.add_argument(
        "--mechanism",
        required=True,
        choices=sorted(names),
        metavar="NAME",
        help="the mechanism of one round (listed below)",
    )
    parser.add_argument(
        "--loss-grid-step",
        type=float,
        default=None,
        help="privacy-loss grid spacing in nats (default: the library's)",
    )
    _add_rel_accuracy(parser)
    parser.add_argument("--json", action="store_true", help="print JSON")


def _add_rel_accuracy(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--rel-accuracy",
        type=float,
        default=None,
        help="largest relative width (upper - lower) / upper of each answer, in (0, 1]; "
        "the grid is refined until it is met (default 0.01; 1: no refinement)",
    )


def _add_command(
    commands: Any, name: str, help_text: str, specs: dict[str, MechanismSpec]
) -> argparse.ArgumentParser:
    return commands.add_parser(
        name,
        help=help_text,
        description=textwrap.fill(help_text, 79),
        epilog=_mechanism_epilog(specs),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


def _build_parser(specs: dict[str, MechanismSpec]) -> argparse.ArgumentParser:
    parser = _Parser(
        prog="pld",
        description="Tight (epsilon, delta) for shuffle-model mechanisms by numerical PLD "
        "accounting. Every answer is a (lower, upper) pair; report the upper one.",
    )
    parser.add_argument(
        QUIET_FLAG,
        action="store_true",
        help="no progress bars or notes on stderr (may also follow the command)",
    )
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    names = list(specs)

    delta = _add_command(commands, "delta", "delta(eps) after T rounds", specs)
    _add_common_options(delta, names)
    delta.add_argument("--rounds", type=int, default=1, help="number of rounds T (default 1)")
    delta.add_argument("--eps", type=float, nargs="+", required=True, help="eps values (nats)")
    delta.set_defaults(handler=_run_delta)

    epsilon = _add_command(commands, "epsilon", "eps(delta) after T rounds", specs)
    _add_common_options(epsilon, names)
    epsilon.add_argument("--rounds", type=int, default=1, help="number of rounds T (default 1)")
    epsilon.add_argument("--delta", type=float, required=True, help="target delta in (0, 1]")
    epsilon.set_defaults(handler=_run_epsilon)

    calibrate = _add_command(
        commands,
        "calibrate",
        "the most generous value of one parameter (eps0, gamma, sigma, rate, n or the "
        "number of rounds) whose upper bound meets a target (eps, delta)",
        specs,
    )
    _add_common_options(calibrate, names)
    calibrate.add_argument(
        "--param",
        required=True,
        help="the free parameter: a mechanism option (eps0, gamma, sigma, rate, n) or rounds",
    )
    calibrate.add_argument(
        "--rounds", type=int, default=None, help="number of rounds T (default 1)"
    )
    calibrate.add_argument("--target-eps", type=float, required=True, help="target eps (nats)")
    calibrate.add_argument(
        "--target-delta", type=float, required=True, help="target delta in (0, 1)"
    )
    calibrate.add_argument(
        "--tolerance",
        type=float,
        default=None,
        help="relative step between tried values of a real parameter (default 1e-3)",
    )
    calibrate.add_argument(
        "--bounds",
        type=float,
        nargs=2,
        default=None,
        metavar=("LOW", "HIGH"),
        help="search range of the parameter",
    )
    calibrate.set_defaults(handler=_run_calibrate)

    curve = _add_command(
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
    curve.add_argument(
        "--loss-grid-step",
        type=float,
        default=None,
        help="privacy-loss grid spacing in nats (default: the library's)",
    )
    _add_rel_accuracy(curve)
    curve.add_argument(
        "--rounds", type=int, nargs="+", default=[1], help="one or more round counts T"
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
        type=int,
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

    try:
        from pld.rdp.cli import register
    except ImportError:
        pass
    else:
        register(commands)
    return parser


def _mechanism_parser(
    spec: MechanismSpec, free: str | None = None, add_help: bool = False
) -> argparse.ArgumentParser:
    """Parser of a mechanism's options; ``free`` (being calibrated) may not be given."""
    parser = _Parser(prog=f"pld ... --mechanism {spec.name}", add_help=add_help)
    for option in spec.options:
        if option.dest == free:
            parser.add_argument(option.flag, dest=option.dest, default=argparse.SUPPRESS)
            continue
        parser.add_argument(
            option.flag,
            dest=option.dest,
            type=option.type,
            required=option.required,
            default=option.default,
            choices=option.choices,
            help=option.help,
        )
    return parser


def _mechanism_options(
    spec: MechanismSpec, tokens: Sequence[str], loss_grid_step: float | None
) -> dict[str, Any]:
    options = vars(_mechanism_parser(spec).parse_args(list(tokens)))
    if loss_grid_step is not None:
        options["loss_grid_step"] = loss_grid_step
    return options


def _rounds_of(loss: Any, rounds: int) -> Any:
    return loss.self_compose(rounds) if rounds > 1 else loss


def _composed(args: argparse.Namespace) -> Any:
    """The T-round PLD that a ``delta``/``epsilon`` command asks about."""
    from pld.progress import progress_bar

    spec = args.specs[args.mechanism]
    options = _mechanism_options(spec, args.mechanism_args, args.loss_grid_step)
    rounds = _validate.integer_at_least("rounds", args.rounds, 1)
    with progress_bar(total=2 if rounds > 1 else 1, desc=args.mechanism, unit="step") as bar:
        bar.set_postfix_str("one round")
        loss = spec.build(**options)
        bar.update(1)
        if rounds > 1:
            bar.set_postfix_str(f"{rounds} rounds")
            loss = loss.self_compose(rounds)
            bar.update(1)
    return loss


def _run_delta(args: argparse.Namespace) -> dict[str, Any]:
    lower, upper = _composed(args).delta_bounds(args.eps, rel_accuracy=args.rel_accuracy)
    return {"eps": list(args.eps), "delta_lower": lower.tolist(), "delta_upper": upper.tolist()}


def _run_epsilon(args: argparse.Namespace) -> dict[str, Any]:
    lower, upper = _composed(args).epsilon_bounds(args.delta, rel_accuracy=args.rel_accuracy)
    return {"delta": args.delta, "eps_lower": lower, "eps_upper": upper}


def _run_calibrate(args: argparse.Namespace) -> dict[str, Any]:
    from pld.calibration import DEFAULT_TOLERANCE, PARAMETERS, calibrate
    from pld.refinement import DEFAULT_REL_ACCURACY

    spec = args.specs[args.mechanism]
    free = args.param
    allowed = [o.dest for o in spec.options if o.dest in PARAMETERS] + ["rounds"]
    if free not in allowed:
        raise UsageError(
            f"--param must be one of {', '.join(allowed)} for --mechanism {spec.name} "
            f"(got {free!r})"
        )
    fixed = vars(_mechanism_parser(spec, free=free).parse_args(list(args.mechanism_args)))
    if free in fixed:
        flag = next(o.flag for o in spec.options if o.dest == free)
        raise UsageError(f"{flag} is what --param {free} calibrates; do not give it")
    if free == "rounds" and args.rounds is not None:
        raise UsageError("--rounds is what --param rounds calibrates; do not give it")
    if args.loss_grid_step is not None:
        fixed["loss_grid_step"] = args.loss_grid_step
    result = calibrate(
        spec.build,
        free,
        target_eps=args.target_eps,
        target_delta=args.target_delta,
        rounds=args.rounds,
        tolerance=DEFAULT_TOLERANCE if args.tolerance is None else args.tolerance,
        bounds=None if args.bounds is None else tuple(args.bounds),
        rel_accuracy=DEFAULT_REL_ACCURACY if args.rel_accuracy is None else args.rel_accuracy,
        **fixed,
    )
    return {
        "param": result.param,
        "value": result.value,
        "eps_upper": result.eps_upper,
        "delta_upper": result.delta_upper,
    }


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
    rounds = [_validate.integer_at_least("rounds", value, 1) for value in args.rounds]
    series = []
    for spec in specs:
        flags = {option.flag: option.dest for option in spec.options}
        own = [(flag, values) for flag, values in groups if flag in flags]
        for values in itertools.product(*(v for _, v in own)):
            tokens = [
                item for (flag, _), value in zip(own, values, strict=True) for item in (flag, value)
            ]
            options = _mechanism_options(spec, tokens, args.loss_grid_step)
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
        return [_validate.finite_real("eps", value) for value in args.eps]
    points = _validate.integer_at_least("points", args.points, 2)
    if args.eps_range is not None:
        low = _validate.finite_real("eps-range LOW", args.eps_range[0])
        high = _validate.finite_real("eps-range HIGH", args.eps_range[1])
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
            item["loss"] = _rounds_of(built[key], item["rounds"])
            bar.set_postfix_str(item["label"])
            bar.update(1)
    if args.tradeoff:
        return _tradeoff_result(args, series)
    eps = _eps_grid(args, [item["loss"] for item in series])
    curves = {}
    for item in series:
        table = item["loss"].curve(eps, rel_accuracy=args.rel_accuracy)
        curves[item["label"]] = table
        item["delta_lower"] = table[:, 1].tolist()
        item["delta_upper"] = table[:, 2].tolist()
    _write_outputs(args, curves, ("eps", "delta_lower", "delta_upper"))
    return {
        "eps": eps,
        "series": [
            {
                "label": item["label"],
                "mechanism": item["spec"].name,
                "options": item["options"],
                "rounds": item["rounds"],
                "delta_lower": item["delta_lower"],
                "delta_upper": item["delta_upper"],
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

        _write(args.csv, lambda: save_csv(curves, args.csv, header=header))
        written.append(args.csv)
    if args.plot is not None:
        from pld.plot import plot_curves, plot_tradeoff

        plot = plot_tradeoff if header[0] == "fpr" else plot_curves
        _write(args.plot, lambda: plot(curves, path=args.plot))
        written.append(args.plot)
    if written and not args.quiet:
        print(f"pld: wrote {', '.join(written)}", file=sys.stderr)


def _tradeoff_result(args: argparse.Namespace, series: list[dict[str, Any]]) -> dict[str, Any]:
    """``pld curve --tradeoff``: FNR bounds at ``--points`` FPRs from 0 to 1."""
    import numpy as np

    from pld.tradeoff import tradeoff_table

    if args.eps is not None or args.eps_range is not None:
        raise UsageError("--tradeoff takes --points false-positive rates, not --eps/--eps-range")
    points = _validate.integer_at_least("points", args.points, 2)
    fpr = np.linspace(0.0, 1.0, points)
    curves = {}
    for item in series:
        table = tradeoff_table(item["loss"], fpr)
        curves[item["label"]] = table
        item["fnr_lower"] = table[:, 1].tolist()
        item["fnr_upper"] = table[:, 2].tolist()
    _write_outputs(args, curves, ("fpr", "fnr_lower", "fnr_upper"))
    return {
        "fpr": fpr.tolist(),
        "series": [
            {
                "label": item["label"],
                "mechanism": item["spec"].name,
                "options": item["options"],
                "rounds": item["rounds"],
                "fnr_lower": item["fnr_lower"],
                "fnr_upper": item["fnr_upper"],
            }
            for item in series
        ],
    }


def _write(path: str, writer: Any) -> None:
    """Run ``writer``; a file that cannot be written is a usage error naming it."""
    try:
        writer()
    except OSError as error:
        reason = error.strerror or str(error)
        raise UsageError(f"cannot write {path}: {reason}") from error


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


def _json_value(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return "inf" if value > 0 else "-inf" if value < 0 else "nan"
    if isinstance(value, list):
        return [_json_value(v) for v in value]
    if isinstance(value, dict):
        return {k: _json_value(v) for k, v in value.items()}
    return value


def format_table(result: dict[str, Any]) -> str:
    """A small readable table: list-valued entries as columns, scalars as ``key: value``."""
    columns = {k: v for k, v in result.items() if isinstance(v, list)}
    scalars = {k: v for k, v in result.items() if not isinstance(v, list)}
    lines = [f"{key}: {_cell(value)}" for key, value in scalars.items()]
    if columns:
        width = max(12, *(len(k) for k in columns))
        lines.append("  ".join(f"{k:>{width}}" for k in columns))
        for row in zip(*columns.values(), strict=True):
            lines.append("  ".join(f"{_cell(v):>{width}}" for v in row))
    return "\n".join(lines)


def _cell(value: Any) -> str:
    return f"{value:.6g}" if isinstance(value, float) else str(value)


def _command_of(argv: Sequence[str]) -> str | None:
    """The subcommand named on the line (the first token that is one), if any."""
    for token in argv:
        if not token.startswith("-"):
            return token
    return None


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``pld`` console script; returns the exit code."""
    from pld import progress

    argv = list(sys.argv[1:] if argv is None else argv)
    quiet = QUIET_FLAG in argv
    argv = [QUIET_FLAG] * quiet + [token for token in argv if token != QUIET_FLAG]
    previous = progress.get_default()
    if quiet:
        progress.set_default(False)
    try:
        with warnings.catch_warnings():
            warnings.showwarning = _show_warning
            return _main(argv)
    except BrokenPipeError:
        _silence_stdout()
        return 0
    except KeyboardInterrupt:
        print("pld: interrupted", file=sys.stderr)
        return 130
    finally:
        progress.set_default(previous)


def _main(argv: list[str]) -> int:
    """Parse, run and print; every failure becomes one ``pld: error:`` line and exit code 2."""
    quiet = QUIET_FLAG in argv
    try:
        specs = mechanism_specs() if _command_of(argv) in MECHANISM_COMMANDS else {}
        args, extra = _build_parser(specs).parse_known_args(argv)
        if extra and args.command not in MECHANISM_COMMANDS:
            raise UsageError(f"unrecognized arguments: {' '.join(extra)}")
        args.mechanism_args, args.specs = extra, specs
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", AccuracyWarning)
            result = args.handler(args)
        for item in caught:
            if issubclass(item.category, AccuracyWarning) and not quiet:
                print(f"pld: warning: {' '.join(str(item.message).split())}", file=sys.stderr)
            elif not issubclass(item.category, AccuracyWarning):
                warnings.warn_explicit(
                    item.message, item.category, item.filename, item.lineno, source=item.source
                )
        if getattr(args, "json", False):
            text = json.dumps({k: _json_value(v) for k, v in result.items()})
        else:
            text = getattr(args, "table", format_table)(result)
    except (UsageError, ValueError, TypeError) as error:
        return _error(str(error))
    except MemoryError:
        return _error(
            "out of memory; lower the work budget (environment variable PLD_MAX_GRID_POINTS) "
            "or coarsen --loss-grid-step"
        )
    except (BrokenPipeError, KeyboardInterrupt):
        raise
    except Exception as error:  # noqa: BLE001 - the CLI never shows a traceback
        return _error(f"internal error ({type(error).__name__}: {error}); please report it")
    print(text)
    sys.stdout.flush()
    return 0


def _show_warning(message: Any, category: Any, *args: Any, **kwargs: Any) -> None:
    """Library warnings as one ``pld: warning:`` line on stderr."""
    print(f"pld: warning: {' '.join(str(message).split())}", file=sys.stderr)


def _error(message: str) -> int:
    print(f"pld: error: {' '.join(message.split())}", file=sys.stderr)
    return 2


def _silence_stdout() -> None:
    """After a broken pipe, point stdout at /dev/null so that the exit flush is quiet."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
