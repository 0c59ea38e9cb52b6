"""How the command-line interface describes a mechanism: its name, options and builder.

:mod:`pld.cli.mechanisms` lists one :class:`MechanismSpec` per mechanism; the
library's mechanisms know nothing of the CLI.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


def integer(text: str) -> int:
    """An integer option's value: an integer, or a number equal to one (``1e4``, ``10000.0``).

    Raises ``argparse.ArgumentTypeError`` for anything else (``1.5``, ``ten``, ``inf``),
    which the parser reports in one line naming the option.
    """
    try:
        return int(text)
    except ValueError:
        pass
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or not value.is_integer():
        raise argparse.ArgumentTypeError(f"expected an integer, e.g. 10000 or 1e4 (got {text!r})")
    return int(value)


@dataclass(frozen=True)
class Option:
    """One command-line option of a mechanism, e.g. ``--eps0``.

    ``dest`` is the keyword argument of the mechanism's builder that receives it.
    """

    flag: str
    dest: str
    type: Callable[[str], Any]
    help: str
    required: bool = True
    default: Any = None
    choices: tuple[Any, ...] | None = None
    #: The option may be given several times; the builder receives the list.
    repeat: bool = False


@dataclass(frozen=True)
class MechanismSpec:
    """A mechanism as the CLI sees it: a name, its options and a builder.

    ``build`` receives the options as keyword arguments (plus ``loss_grid_step``
    when the user gives ``--loss-grid-step``) and returns a one-round ``pld.PLD``.
    """

    name: str
    help: str
    options: tuple[Option, ...]
    build: Callable[..., Any]
