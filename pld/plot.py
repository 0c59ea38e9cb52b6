"""Privacy curves delta(eps) with their (lower, upper) bracket: plots and CSV tables.

A curve is the table returned by :meth:`pld.PLD.curve`: rows ``(eps, delta_lower,
delta_upper)`` with eps in nats. Several curves (mechanisms, round counts) are
passed as a mapping from a label to its table::

    eps = numpy.linspace(0, 2, 81)
    curves = {f"T={t}": pld.clones(10_000, 1.0).self_compose(t).curve(eps) for t in (10, 100)}
    pld.plot.plot_curves(curves, path="curves.png")
    pld.plot.save_csv(curves, "curves.csv")

Plotting needs matplotlib, an optional extra (``pip install 'pld[plot]'``); it
is imported only when a plot is drawn. CSV needs nothing beyond numpy.
"""

from __future__ import annotations

import csv
import os
from collections.abc import Mapping
from typing import Any

import numpy as np

#: How to get matplotlib, quoted in the error raised when it is missing.
INSTALL_HINT = "plotting needs matplotlib: pip install 'pld[plot]' (or pip install matplotlib)"


def require_matplotlib() -> None:
    """Raise ``ImportError`` with :data:`INSTALL_HINT` unless matplotlib can be imported."""
    try:
        import matplotlib  # noqa: F401
    except ImportError as error:
        raise ImportError(INSTALL_HINT) from error


def _checked(curves: Mapping[str, Any]) -> dict[str, np.ndarray]:
    if not isinstance(curves, Mapping) or not curves:
        raise ValueError("curves must be a non-empty mapping from a label to a curve table")
    tables = {}
    for label, table in curves.items():
        array = np.asarray(table, dtype=np.float64)
        if array.ndim != 2 or array.shape[1] != 3 or array.shape[0] == 0:
            raise ValueError(
                f"curve {label!r} must be a table of (eps, delta_lower, delta_upper) rows "
                f"(got shape {array.shape})"
            )
        tables[str(label)] = array
    return tables


def plot_curves(
    curves: Mapping[str, Any],
    *,
    path: str | os.PathLike[str] | None = None,
    ax: Any = None,
    title: str | None = None,
    log_delta: bool = True,
) -> Any:
    """Draw delta(eps) for each curve: the upper bound as a line, the bracket as a band.

    Parameters
    ----------
    curves : mapping of str to array_like
        Label -> table of ``(eps, delta_lower, delta_upper)`` rows (:meth:`pld.PLD.curve`).
    path : str or path-like, optional
        Save the figure there (format from the extension, e.g. ``.png``, ``.pdf``).
    ax : matplotlib Axes, optional
        Draw into these axes; default a new figure (no pyplot state is touched).
    title : str, optional
        Figure title.
    log_delta : bool
        Logarithmic delta axis (default); deltas of 0 are then not drawn.

    Returns
    -------
    matplotlib.figure.Figure
        The figure drawn on.
    """
    require_matplotlib()
    from matplotlib.figure import Figure

    tables = _checked(curves)
    if ax is None:
        figure = Figure(figsize=(6.4, 4.4), layout="constrained")
        ax = figure.add_subplot()
    else:
        figure = ax.figure
    for label, table in tables.items():
        eps, lower, upper = table[:, 0], table[:, 1], table[:, 2]
        if log_delta:
            lower = np.where(lower > 0, lower, np.nan)
            upper = np.where(upper > 0, upper, np.nan)
        (line,) = ax.plot(eps, upper, label=label)
        ax.fill_between(eps, lower, upper, color=line.get_color(), alpha=0.3, linewidth=0)
    if log_delta:
        ax.set_yscale("log")
    ax.set_xlabel("ε (nats)")
    ax.set_ylabel("δ(ε): upper bound, bracket shaded")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend()
    if title:
        ax.set_title(title)
    if path is not None:
        figure.savefig(os.fspath(path), dpi=150)
    return figure


def save_csv(curves: Mapping[str, Any], path: str | os.PathLike[str]) -> None:
    """Write the curves as one CSV table, a row per (curve, eps).

    Columns: ``series, eps, delta_lower, delta_upper``; floats are written in
    their shortest form that reads back exactly.
    """
    tables = _checked(curves)
    with open(os.fspath(path), "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["series", "eps", "delta_lower", "delta_upper"])
        for label, table in tables.items():
            for eps, lower, upper in table:
                writer.writerow([label, repr(float(eps)), repr(float(lower)), repr(float(upper))])
