"""What every ``pld`` command shares: the one-line-error parser, mechanism options, tables.

Used by :mod:`pld.cli.commands` (``delta``, ``epsilon``, ``calibrate``, the entry point) and
:mod:`pld.cli.curve` (``curve``); it imports neither.
"""

from __future__ import annotations

import argparse
import re
import textwrap
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from pld.cli.spec import MechanismSpec


class UsageError(Exception):
    """Bad command-line input (reported in one line, exit code 2)."""


class Parser(argparse.ArgumentParser):
    """An argument parser that raises :class:`UsageError` instead of printing usage.

    ``specs`` (optional) are the mechanisms whose options the help text lists; they
    are read only when the help is printed, so a command imports only the
    mechanism it runs.
    """

    def __init__(
        self, *args: Any, specs: Mapping[str, MechanismSpec] | None = None, **kwargs: Any
    ) -> None:
        # Abbreviations would let a mechanism's --m be read as --mechanism.
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)
        self._specs = specs

    def format_help(self) -> str:
        if self._specs is not None and self.epilog is None:
            self.epilog = _mechanism_epilog(self._specs)
        return super().format_help()

    def error(self, message: str) -> None:  # one line instead of usage + message
        raise UsageError(message)


def _mechanism_epilog(specs: Mapping[str, MechanismSpec]) -> str:
    lines = ["mechanism options (after --mechanism NAME):"]
    for name, spec in sorted(specs.items()):
        flags = " ".join(
            f"{o.flag} {o.dest.upper()}" if o.required else f"[{o.flag} {o.dest.upper()}]"
            for o in spec.options
        )
        lines.append(f"  {name}: {flags}")
        lines.append(f"      {spec.help}")
    return "\n".join(lines)


def add_command(
    commands: Any, name: str, help_text: str, specs: Mapping[str, MechanismSpec]
) -> argparse.ArgumentParser:
    return commands.add_parser(
        name,
        help=help_text,
        description=textwrap.fill(help_text, 79),
        specs=specs,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


def add_accuracy_options(parser: argparse.ArgumentParser) -> None:
    """``--loss-grid-step`` and ``--rel-accuracy``, the grid knobs of every query command."""
    parser.add_argument(
        "--loss-grid-step",
        type=float,
        default=None,
        help="privacy-loss grid spacing in nats (default: the library's)",
    )
    parser.add_argument(
        "--rel-accuracy",
        type=float,
        default=None,
        help="largest relative width (upper - lower) / upper of each answer, in (0, 1]; "
        "the grid is refined until it is met (default 0.01; 1: no refinement)",
    )


def mechanism_parser(
    spec: MechanismSpec, free: str | None = None, add_help: bool = False
) -> argparse.ArgumentParser:
    """Parser of a mechanism's options; ``free`` (being calibrated) may not be given."""
    parser = Parser(prog=f"pld ... --mechanism {spec.name}", add_help=add_help)
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
            **({"action": "append"} if option.repeat else {}),
        )
    return parser


def mechanism_options(
    spec: MechanismSpec, tokens: Sequence[str], loss_grid_step: float | None
) -> dict[str, Any]:
    options = vars(mechanism_parser(spec).parse_args(list(tokens)))
    if loss_grid_step is not None:
        options["loss_grid_step"] = loss_grid_step
    return options


def rounds_of(loss: Any, rounds: int) -> Any:
    return loss.self_compose(rounds) if rounds > 1 else loss


def write_file(path: str, writer: Any) -> None:
    """Run ``writer``; a file that cannot be written is a usage error naming it."""
    try:
        writer()
    except OSError as error:
        reason = error.strerror or str(error)
        raise UsageError(f"cannot write {path}: {reason}") from error


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


#: ``name=value`` in a library message (a keyword argument and its value).
_KEYWORD_VALUE = re.compile(r"\b([a-z][a-z0-9_]*)=('[^']*'|\([^)]*\)|[^\s,;()]+)")
#: A bare keyword with an underscore (``loss_grid_step``).
_KEYWORD = re.compile(r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b")
#: A power of ten written for Python (``10**6``).
_POWER = re.compile(r"^10\*\*(\d+)$")


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def refusal_in_flags(message: str, flags: Collection[str]) -> str:
    """A library refusal (``pld.BudgetError``) in command-line terms.

    The refusal's advice (the part after its first ``"; "``, suggestions separated by
    ``", or "``) names keyword arguments: ``name=value`` becomes ``--name value`` and a
    bare ``name_x`` becomes ``--name-x`` when the command has that option (``flags``);
    a suggestion naming a keyword the command lacks is left out, so that the line
    names only what the command line can change (and the environment variable).
    """
    head, separator, advice = message.partition("; ")
    if not separator:
        return message
    kept = []
    for clause in advice.split(", or "):
        names = [m.group(1) for m in _KEYWORD_VALUE.finditer(clause)]
        names += [m.group(0) for m in _KEYWORD.finditer(_KEYWORD_VALUE.sub("", clause))]
        if any(_flag(name) not in flags for name in names):
            continue

        def value(match: re.Match[str]) -> str:
            text = match.group(2).strip("'()").replace(", ", " ")
            power = _POWER.match(text)
            return f"{_flag(match.group(1))} {10 ** int(power.group(1)) if power else text}"

        clause = _KEYWORD_VALUE.sub(value, clause)
        kept.append(_KEYWORD.sub(lambda match: _flag(match.group(0)), clause))
    if not kept:
        return head
    if advice.startswith("use ") and not kept[0].startswith(("use ", "set ")):
        kept[0] = "use " + kept[0]
    return f"{head}; {', or '.join(kept)}"
