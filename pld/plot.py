"""Privacy curves delta(eps) with their (lower, upper) bracket: plots and CSV tables.

A curve is the table returned by :meth:`pld.PLD.curve`: rows ``(eps, delta_lower,
delta_upper)`` with eps in nats. Several curves (mechanisms, round counts) are
passed as a mapping from a label to its table::

    eps = numpy.linspace(0, 2, 81)
    curves = {f"T={t}": pld.clones(10_000, 1.0).self_compose(t).curve(eps) for t in (10, 100)}
    pld.plot.plot_curves(curves, path="curves.png")
    pld.plot.save_csv(curves, "curves.csv")

Trade-off curves (the hypothesis-testing view, :mod:`pld.distribution.tradeoff`) are drawn
the same way by :func:`plot_tradeoff` from tables of ``(fpr, fnr_lower,
fnr_upper)`` rows.

Plotting needs matplotlib, an optional extra (``pip install matplotlib``, or
``pip install '.[plot]'`` in a checkout of pld); it is imported only when a plot is
drawn. CSV needs nothing beyond numpy.
"""

from __future__ import annotations

import csv
import os
from collections.abc import Mapping
from typing import Any

import numpy as np

#: How to get matplotlib, quoted in the error raised when it is missing.
INSTALL_HINT = (
    "plotting needs matplotlib: pip install matplotlib (or, in a checkout of pld, "
    "pip install '.[plot]')"
)


def require_matplotlib() -> None:
    """Raise ``ImportError`` with :data:`INSTALL_HINT` unless matplotlib can be imported."""
    try:
        import matplotlib  # noqa: F401
    except ImportError as error:
        raise ImportError(INSTALL_HINT) from error


def _checked(
    curves: Mapping[str, Any], columns: str = "eps, delta_lower, delta_upper"
) -> dict[str, np.ndarray]:
    """Each table as a float array of three columns (x, lower, upper)."""
    if not isinstance(curves, Mapping) or not curves:
        raise ValueError("curves must be a non-empty mapping from a label to a curve table")
    tables = {}
    for label, table in curves.items():
        array = np.asarray(table, dtype=np.float64)
        if array.ndim != 2 or array.shape[1] != 3 or array.shape[0] == 0:
            raise ValueError(
                f"curve {label!r} must be a table of ({columns}) rows (got shape {array.shape})"
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
    return _finish(figure, ax, title, path)


def _finish(figure: Any, ax: Any, title: str | None, path: str | os.PathLike[str] | None) -> Any:
    """Legend, optional title, optional PNG file (150 dpi); returns the figure."""
    ax.legend()
    if title:
        ax.set_title(title)
    if path is not None:
        figure.savefig(os.fspath(path), dpi=150)
    return figure


def plot_tradeoff(
    curves: Mapping[str, Any],
    *,
    path: str | os.PathLike[str] | None = None,
    ax: Any = None,
    title: str | None = None,
) -> Any:
    """Draw trade-off curves: the false-negative rate against the false-positive rate.

    The lower bound on the smallest false-negative rate (the safe one) is the
    line, the bracket the band; the diagonal ``1 - fpr`` (no information) is
    dotted.

    Parameters
    ----------
    curves : mapping of str to array_like
        Label -> table of ``(fpr, fnr_lower, fnr_upper)`` rows
        (:func:`pld.distribution.tradeoff.tradeoff_table`).
    path, ax, title
        As for :func:`plot_curves`.

    Returns
    -------
    matplotlib.figure.Figure
        The figure drawn on.
    """
    require_matplotlib()
    from matplotlib.figure import Figure

    tables = _checked(curves, "fpr, fnr_lower, fnr_upper")
    if ax is None:
        figure = Figure(figsize=(5.2, 5.0), layout="constrained")
        ax = figure.add_subplot()
    else:
        figure = ax.figure
    ax.plot([0, 1], [1, 0], linestyle=":", color="grey", linewidth=1)
    for label, table in tables.items():
        fpr, lower, upper = table[:, 0], table[:, 1], table[:, 2]
        (line,) = ax.plot(fpr, lower, label=label)
        ax.fill_between(fpr, lower, upper, color=line.get_color(), alpha=0.3, linewidth=0)
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_aspect("equal")
    ax.set_xlabel("false-positive rate (type I error)")
    ax.set_ylabel("false-negative rate: lower bound, bracket shaded")
    ax.grid(True, alpha=0.3)
    return _finish(figure, ax, title, path)


def save_csv(
    curves: Mapping[str, Any],
    path: str | os.PathLike[str],
    *,
    header: tuple[str, str, str] = ("eps", "delta_lower", "delta_upper"),
) -> None:
    """Write the curves as one CSV table, a row per (curve, eps).

    Columns: ``series, eps, delta_lower, delta_upper`` (or the given ``header``,
    e.g. ``("fpr", "fnr_lower", "fnr_upper")`` for trade-off tables); floats
    are written in their shortest form that reads back exactly.
    """
    tables = _checked(curves, ", ".join(header))
    with open(os.fspath(path), "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["series", *header])
        for label, table in tables.items():
            for eps, lower, upper in table:
                writer.writerow([label, repr(float(eps)), repr(float(lower)), repr(float(upper))])
