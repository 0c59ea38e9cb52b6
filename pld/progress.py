"""Progress bars for long work: shown on a terminal or in a notebook, silent otherwise.

Bars are drawn by tqdm, a dependency of pld (``pip install .`` installs it; without
it, e.g. a source tree on ``sys.path``, no bar is drawn). A bar is shown only when all
of these hold:

* the caller did not ask for silence (``enabled=False``, the CLI's ``--quiet``,
  :func:`set_default` ``(False)`` or the environment variable ``PLD_PROGRESS=0``);
* tqdm is installed;
* stderr is a terminal, or the code runs in a Jupyter kernel (then
  ``tqdm.auto`` picks the notebook widget when ipywidgets is installed).

``enabled=True`` (or ``PLD_PROGRESS=1``) forces a bar whenever tqdm is
installed. Bars appear only after :data:`DELAY_SECONDS`, so quick work prints
nothing, and they are erased when the work ends.

Use :func:`track` around the loop of a sweep (``for n in track(sizes): ...``)
and :func:`progress_bar` where the number of steps is not known in advance.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Iterator
from typing import Any, TypeVar

#: Environment variable: "0" silences every bar, "1" forces them (tqdm permitting).
ENVIRONMENT_VARIABLE = "PLD_PROGRESS"

#: Seconds of work before a bar is drawn.
DELAY_SECONDS = 0.5

_Item = TypeVar("_Item")
_default: bool | None = None


def set_default(enabled: bool | None) -> None:
    """Set the process-wide default: ``False`` silences bars, ``True`` forces them,
    ``None`` restores the automatic choice (terminal or notebook only)."""
    if enabled is not None and not isinstance(enabled, bool):
        raise ValueError(f"enabled must be True, False or None (got {enabled!r})")
    global _default
    _default = enabled


def get_default() -> bool | None:
    """The process-wide default set by :func:`set_default`."""
    return _default


def _in_notebook() -> bool:
    return type(sys.stderr).__module__.startswith("ipykernel")


def is_enabled(enabled: bool | None = None) -> bool:
    """Whether a bar would be drawn for a request ``enabled`` (``None``: automatic)."""
    if enabled is None:
        enabled = _default
    if enabled is None:
        setting = os.environ.get(ENVIRONMENT_VARIABLE, "").strip()
        if setting == "0":
            return False
        enabled = True if setting == "1" else None
    if enabled is False:
        return False
    try:
        import tqdm  # noqa: F401
    except ImportError:
        return False
    if enabled is True:
        return True
    stream_is_terminal = getattr(sys.stderr, "isatty", lambda: False)()
    return bool(stream_is_terminal) or _in_notebook()


def _stderr_size() -> tuple[int, int]:
    """Columns and lines of the terminal on stderr; 80 x 24 where it reports 0 x 0
    (some pseudo-terminals do, and tqdm would then hide the bar)."""
    try:
        size = os.get_terminal_size(sys.stderr.fileno())
    except (AttributeError, OSError, ValueError):
        return 80, 24
    return size.columns or 80, size.lines or 24


class _SilentBar:
    """Stands in for a tqdm bar when no bar is shown."""

    def update(self, steps: int = 1) -> None:
        """Do nothing."""

    def set_postfix_str(self, text: str) -> None:
        """Do nothing."""

    def close(self) -> None:
        """Do nothing."""

    def __enter__(self) -> _SilentBar:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def progress_bar(
    *, total: int | None = None, desc: str = "", unit: str = "it", enabled: bool | None = None
) -> Any:
    """A progress bar (a tqdm object, or a silent stand-in) to use as a context manager.

    Parameters
    ----------
    total : int, optional
        Number of steps, if known; otherwise the bar counts steps.
    desc : str
        Label shown before the bar.
    unit : str
        Name of one step.
    enabled : bool, optional
        ``True``/``False`` to force or silence; ``None`` for the automatic choice.

    Returns
    -------
    object
        Has ``update(steps)``, ``set_postfix_str(text)`` and ``close()``.
    """
    if not is_enabled(enabled):
        return _SilentBar()
    options: dict[str, Any] = {"total": total, "desc": desc, "unit": unit, "leave": False}
    if _in_notebook():
        from tqdm.auto import tqdm

        return tqdm(**options)
    from tqdm import tqdm

    columns, lines = _stderr_size()
    return tqdm(**options, delay=DELAY_SECONDS, file=sys.stderr, ncols=columns, nrows=lines)


def track(
    iterable: Iterable[_Item],
    *,
    total: int | None = None,
    desc: str = "",
    enabled: bool | None = None,
) -> Iterator[_Item]:
    """Iterate over ``iterable`` with a progress bar (for the loop of a sweep).

    ``total`` defaults to ``len(iterable)`` when it has one.
    """
    if total is None and hasattr(iterable, "__len__"):
        total = len(iterable)  # type: ignore[arg-type]
    with progress_bar(total=total, desc=desc, enabled=enabled) as bar:
        for item in iterable:
            yield item
            bar.update(1)
