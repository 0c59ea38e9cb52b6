"""Command-line interface: ``pld delta``, ``epsilon``, ``calibrate``, ``curve``, ``rdp``.

Every mechanism's options are described in :mod:`pld.cli.mechanisms`
(:mod:`pld.cli.spec`); this module only parses, calls the library and
prints. Bad input gives a one-line message on stderr and exit code 2.
``--quiet`` (anywhere on the line) silences progress bars and notes on stderr;
without it, bars appear only on a terminal (:mod:`pld.progress`).

Mechanism modules (numba, scipy) are imported only by the commands that need
them, and a command imports only the family of its mechanism
(:data:`pld.cli.mechanisms.FAMILIES`), so ``pld --help``, ``pld rdp ...`` and ``pld epsilon
--mechanism clones ...`` start quickly.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import warnings
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from pld import validation
from pld.cli.common import (
    Parser,
    UsageError,
    add_accuracy_options,
    add_command,
    format_table,
    mechanism_options,
    mechanism_parser,
    refusal_in_flags,
)
from pld.cli.curve import add_curve_command
from pld.cli.mechanisms import FAMILIES
from pld.cli.spec import MechanismSpec, integer
from pld.distribution import AccuracyWarning
from pld.engine import BudgetError

#: Commands that take ``--mechanism`` (and so import the mechanism modules).
MECHANISM_COMMANDS = ("delta", "epsilon", "calibrate", "curve")

QUIET_FLAG = "--quiet"


class MechanismSpecs(Mapping[str, MechanismSpec]):
    """The mechanisms of :data:`pld.cli.mechanisms.FAMILIES` by name, each family's specs made
    (and its mechanisms imported) on first use."""

    def __init__(self) -> None:
        self._loaded: dict[str, MechanismSpec] = {}

    def __getitem__(self, name: str) -> MechanismSpec:
        if name not in self._loaded:
            for spec in FAMILIES[name]():
                self._loaded[spec.name] = spec
            if name not in self._loaded:
                raise KeyError(name)
        return self._loaded[name]

    def __iter__(self) -> Iterator[str]:
        return iter(FAMILIES)

    def __len__(self) -> int:
        return len(FAMILIES)


def _add_common_options(parser: argparse.ArgumentParser, names: Sequence[str]) -> None:
    parser.add_argument(
        "--mechanism",
        required=True,
        choices=sorted(names),
        metavar="NAME",
        help="the mechanism of one round (listed below)",
    )
    add_accuracy_options(parser)
    parser.add_argument(
        "--allocation",
        default=None,
        metavar="T:k",
        help="random allocation: each user takes part in k of T rounds chosen at random "
        "(pld.random_allocation of the mechanism, add/remove); --rounds then counts epochs",
    )
    parser.add_argument("--json", action="store_true", help="print JSON")


def _build_parser(specs: Mapping[str, MechanismSpec]) -> argparse.ArgumentParser:
    parser = Parser(
        prog="pld",
        description="Tight (epsilon, delta) for shuffle-model mechanisms by numerical PLD "
        "accounting. Every answer is a (lower, upper) pair; report the upper one.",
    )
    parser.add_argument(
        QUIET_FLAG,
        action="store_true",
        help="no progress bars or notes on stderr (may also follow the command)",
    )
    commands = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    names = list(specs)

    delta = add_command(commands, "delta", "delta(eps) after T rounds", specs)
    _add_common_options(delta, names)
    delta.add_argument("--rounds", type=integer, default=1, help="number of rounds T (default 1)")
    delta.add_argument("--eps", type=float, nargs="+", required=True, help="eps values (nats)")
    delta.set_defaults(handler=_run_delta)

    epsilon = add_command(commands, "epsilon", "eps(delta) after T rounds", specs)
    _add_common_options(epsilon, names)
    epsilon.add_argument("--rounds", type=integer, default=1, help="number of rounds T (default 1)")
    epsilon.add_argument("--delta", type=float, required=True, help="target delta in (0, 1]")
    epsilon.set_defaults(handler=_run_epsilon)

    calibrate = add_command(
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
        help="the free parameter: a mechanism option (eps0, gamma, sigma, rate, n), rounds, or "
        "participation (check-in probability p)",
    )
    calibrate.add_argument(
        "--rounds", type=integer, default=None, help="number of rounds T (default 1)"
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

    add_curve_command(commands, specs)

    try:
        from pld.cli.rdp import register
    except ImportError:
        pass
    else:
        register(commands)
    return parser


def _allocation(text: str | None) -> tuple[int, int] | None:
    """``T:k`` of ``--allocation`` (None when not given)."""
    if text is None:
        return None
    parts = text.split(":")
    if len(parts) == 1:
        parts.append("1")
    try:
        rounds, participations = (int(part) for part in parts)
    except ValueError:
        raise UsageError(
            f"--allocation must be T:k with integers 1 <= k <= T (got {text!r})"
        ) from None
    if len(parts) != 2 or not 1 <= participations <= rounds:
        raise UsageError(f"--allocation must be T:k with integers 1 <= k <= T (got {text!r})")
    return rounds, participations


def _allocated(build: Any, allocation: tuple[int, int] | None) -> Any:
    """``build`` followed by random allocation (``build`` itself without one)."""
    if allocation is None:
        return build
    from pld.allocation import random_allocation

    rounds, participations = allocation

    def allocated(**options: Any) -> Any:
        return random_allocation(build(**options), rounds=rounds, participations=participations)

    allocated.calibration_names = getattr(build, "calibration_names", {})
    return allocated


def _composed(args: argparse.Namespace) -> Any:
    """The T-round PLD that a ``delta``/``epsilon`` command asks about."""
    from pld.progress import progress_bar

    spec = args.specs[args.mechanism]
    options = mechanism_options(spec, args.mechanism_args, args.loss_grid_step)
    rounds = validation.integer_at_least("rounds", args.rounds, 1)
    with progress_bar(total=2 if rounds > 1 else 1, desc=args.mechanism, unit="step") as bar:
        bar.set_postfix_str("one round")
        loss = _allocated(spec.build, _allocation(args.allocation))(**options)
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
    from pld.distribution import DEFAULT_REL_ACCURACY

    spec = args.specs[args.mechanism]
    free = args.param
    aliases = getattr(spec.build, "calibration_names", {})
    allowed = [
        o.dest for o in spec.options if o.dest in PARAMETERS and PARAMETERS[o.dest].keyword is None
    ]
    allowed += [name for name in aliases if name in PARAMETERS] + ["rounds"]
    if free not in allowed:
        raise UsageError(
            f"--param must be one of {', '.join(allowed)} for --mechanism {spec.name} "
            f"(got {free!r})"
        )
    dest = aliases.get(free, free)
    fixed = vars(mechanism_parser(spec, free=dest).parse_args(list(args.mechanism_args)))
    if dest in fixed:
        flag = next(o.flag for o in spec.options if o.dest == dest)
        raise UsageError(f"{flag} is what --param {free} calibrates; do not give it")
    if free == "rounds" and args.rounds is not None:
        raise UsageError("--rounds is what --param rounds calibrates; do not give it")
    if args.loss_grid_step is not None:
        fixed["loss_grid_step"] = args.loss_grid_step
    result = calibrate(
        _allocated(spec.build, _allocation(args.allocation)),
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


def _json_value(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return "inf" if value > 0 else "-inf" if value < 0 else "nan"
    if isinstance(value, list):
        return [_json_value(v) for v in value]
    if isinstance(value, dict):
        return {k: _json_value(v) for k, v in value.items()}
    return value


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
        specs = MechanismSpecs() if _command_of(argv) in MECHANISM_COMMANDS else {}
        parser = _build_parser(specs)
        args, extra = parser.parse_known_args(argv)
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
    except BudgetError as error:
        return _error(refusal_in_flags(str(error), _flags(parser, args)))
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


def _flags(parser: argparse.ArgumentParser, args: argparse.Namespace) -> set[str]:
    """The options of the command run: its own and those of the mechanisms it names."""
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    flags = {
        flag for action in commands.choices[args.command]._actions for flag in action.option_strings
    }
    named = getattr(args, "mechanism", None)
    for name in [named] if isinstance(named, str) else named or []:
        flags.update(option.flag for option in args.specs[name].options)
    return flags


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
