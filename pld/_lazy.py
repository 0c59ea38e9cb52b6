"""Lazy public names of a package (PEP 562), so that ``import pld`` stays fast.

A package lists its public names and the module each lives in, and its
submodules; :func:`lazy_exports` returns the package's ``__getattr__`` (which
imports a name's module on first use and caches the name in the package) and
``__dir__``.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any


def lazy_exports(
    package: str, exports: Mapping[str, str], submodules: Sequence[str] = ()
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``.

    Parameters
    ----------
    package : str
        The package's ``__name__``.
    exports : mapping
        Public name -> dotted name of the module that defines it.
    submodules : sequence of str
        Submodules reachable as attributes (``package.name``).
    """
    namespace = sys.modules[package].__dict__
    names = sorted([*exports, *submodules])

    def __getattr__(name: str) -> Any:
        if name in exports:
            value = getattr(importlib.import_module(exports[name]), name)
        elif name in submodules:
            value = importlib.import_module(f"{package}.{name}")
        else:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*names, *(key for key in namespace if not key.startswith("_"))})

    return __getattr__, __dir__
