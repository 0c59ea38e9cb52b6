"""Command-line interface: ``pld delta``, ``pld epsilon``, ``pld rdp``.

Each mechanism module describes its options in ``CLI_SPECS``
(:mod:`pld.mechanisms._spec`); this module only parses, calls the library and
prints. Bad input gives a one-line message on stderr and exit code 2.
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import sys
from collections.abc import Sequence
from typing import Any

from pld import _validate
from pld.mechanisms._spec import MechanismSpec

MECHANISM_MODULES = (
    "pld.mechanisms.randomized_response",
    "pld.mechanisms.gaussian",
    "pld.mechanisms.clones",
    "pld.mechanisms.krr",
    "pld.mechanisms.subsample",
)


class UsageError(Exception):
    """Bad command-line input (reported in one line, exit code 2)."""


class _Parser(argparse.ArgumentParser):
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


def _add_accountant_options(parser: argparse.ArgumentParser, names: Sequence[str]) -> None:
    parser.add_argument(
        "--mechanism", required=True, choices=sorted(names), help="the mechanism of one round"
    )
    parser.add_argument("--rounds", type=int, default=1, help="number of rounds T (default 1)")
    parser.add_argument(
        "--loss-grid-step",
        type=float,
        default=None,
        help="privacy-loss grid spacing in nats (default: the library's)",
    )
    parser.add_argument("--json", action="store_true", help="print JSON")


def _build_parser(specs: dict[str, MechanismSpec]) -> argparse.ArgumentParser:
    parser = _Parser(
        prog="pld",
        description="Tight (epsilon, delta) for shuffle-model mechanisms by numerical PLD "
        "accounting. Every answer is a (lower, upper) pair; report the upper one.",
    )
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    names = list(specs)
    delta = commands.add_parser("delta", help="delta(eps) after T rounds")
    _add_accountant_options(delta, names)
    delta.add_argument("--eps", type=float, nargs="+", required=True, help="eps values (nats)")
    delta.set_defaults(handler=_run_delta)
    epsilon = commands.add_parser("epsilon", help="eps(delta) after T rounds")
    _add_accountant_options(epsilon, names)
    epsilon.add_argument("--delta", type=float, required=True, help="target delta in (0, 1]")
    epsilon.set_defaults(handler=_run_epsilon)
    try:
        from pld.rdp.cli import register
    except ImportError:
        pass
    else:
        register(commands)
    return parser


def _mechanism_parser(spec: MechanismSpec) -> argparse.ArgumentParser:
    parser = _Parser(prog=f"pld ... --mechanism {spec.name}", add_help=False)
    for option in spec.options:
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


def _composed(args: argparse.Namespace):
    """The T-round PLD that a ``delta``/``epsilon`` command asks about."""
    spec = args.specs[args.mechanism]
    options = vars(_mechanism_parser(spec).parse_args(list(args.mechanism_args)))
    if args.loss_grid_step is not None:
        options["loss_grid_step"] = args.loss_grid_step
    rounds = _validate.integer_at_least("rounds", args.rounds, 1)
    loss = spec.build(**options)
    return loss.self_compose(rounds) if rounds > 1 else loss


def _run_delta(args: argparse.Namespace) -> dict[str, Any]:
    lower, upper = _composed(args).delta_bounds(args.eps)
    return {"eps": list(args.eps), "delta_lower": lower.tolist(), "delta_upper": upper.tolist()}


def _run_epsilon(args: argparse.Namespace) -> dict[str, Any]:
    lower, upper = _composed(args).epsilon_bounds(args.delta)
    return {"delta": args.delta, "eps_lower": lower, "eps_upper": upper}


def _json_value(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return "inf" if value > 0 else "-inf" if value < 0 else "nan"
    if isinstance(value, list):
        return [_json_value(v) for v in value]
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


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``pld`` console script; returns the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        specs = mechanism_specs()
        args, extra = _build_parser(specs).parse_known_args(argv)
        if extra and args.command not in ("delta", "epsilon"):
            raise UsageError(f"unrecognized arguments: {' '.join(extra)}")
        args.mechanism_args, args.specs = extra, specs
        result = args.handler(args)
    except (UsageError, ValueError) as error:
        message = " ".join(str(error).split())
        print(f"pld: error: {message}", file=sys.stderr)
        return 2
    if getattr(args, "json", False):
        print(json.dumps({k: _json_value(v) for k, v in result.items()}))
    else:
        print(format_table(result))
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
