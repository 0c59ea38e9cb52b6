"""Randomizers by name, from keyword options: how the command line builds one.

Each name maps to its factory and the options it needs; :func:`from_options` checks
the options and calls the factory, so the CLI (``--randomizer NAME --k ... --eps0 ...``)
needs no knowledge of the randomizers.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pld.randomizers.base import Randomizer


@dataclass(frozen=True)
class _Named:
    """A factory, the options it needs, those it may take, and fixed keyword values."""

    factory: str
    required: tuple[str, ...]
    optional: tuple[str, ...] = ()
    fixed: tuple[tuple[str, Any], ...] = ()


#: Every randomizer the command line can build, by name.
NAMED: dict[str, _Named] = {
    "krr": _Named("krr", ("k",), ("gamma", "eps0")),
    "rr": _Named("krr", (), ("gamma", "eps0"), (("k", 2),)),
    "olh": _Named("local_hashing", ("eps0", "domain"), ("buckets",)),
    "hadamard": _Named("hadamard", ("eps0", "domain")),
    "unary": _Named("unary", ("eps0", "domain")),
    "gaussian": _Named("gaussian", ("sigma",), ("low", "high")),
    "laplace": _Named("laplace", ("scale",), ("low", "high")),
    "vector-gaussian": _Named("vector_gaussian", ("sigma", "dim"), ("clip",)),
    "matrix": _Named("matrix", ("probs",)),
}

#: The names of :data:`NAMED`, in a stable order (the CLI's choices).
NAMES = tuple(NAMED)


def from_options(name: str, **options: Any) -> Randomizer:
    """The randomizer called ``name`` (one of :data:`NAMES`) built from keyword options.

    Options set to None count as not given; an option the randomizer does not take is
    refused, and so is a missing one it needs.

    Raises
    ------
    ValueError
        Naming the randomizer and the option.
    """
    import pld.randomizers

    if name not in NAMED:
        raise ValueError(f"randomizer must be one of {NAMES} (got {name!r})")
    named = NAMED[name]
    given = {key: value for key, value in options.items() if value is not None}
    for key in named.required:
        if key not in given:
            raise ValueError(f"randomizer {name!r} needs the option {key}")
    unknown = sorted(set(given) - set(named.required) - set(named.optional))
    if unknown:
        raise ValueError(f"randomizer {name!r} does not take the option {unknown[0]}")
    factory: Callable[..., Randomizer] = getattr(pld.randomizers, named.factory)
    return factory(**dict(named.fixed), **given)
