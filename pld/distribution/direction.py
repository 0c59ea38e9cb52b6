"""One direction of a :class:`~pld.distribution.loss_distribution.PLD`: its upper- and
lower-bound pmfs, the lower one possibly built on first use."""

from __future__ import annotations

from collections.abc import Callable

from pld.engine import LossPmf


class _Direction:
    """The upper- and lower-bound pmfs of one direction of a PLD.

    The lower pmf may be given as a function that builds it on first use
    (``build_lower``): callers that report upper bounds only (an accountant's
    ``get_epsilon``) never pay for it, and it is built from the same inputs,
    so its floats do not depend on when.
    """

    __slots__ = ("upper", "_lower", "_build_lower")

    def __init__(
        self,
        upper: LossPmf,
        lower: LossPmf | None = None,
        *,
        build_lower: Callable[[], LossPmf] | None = None,
    ) -> None:
        if (lower is None) == (build_lower is None):
            raise TypeError("give exactly one of lower and build_lower")
        self.upper = upper
        self._lower = lower
        self._build_lower = build_lower

    @property
    def lower(self) -> LossPmf:
        """The lower-bound pmf (built now if it was deferred)."""
        if self._lower is None:
            self._lower = self._build_lower()
            self._build_lower = None
        return self._lower
