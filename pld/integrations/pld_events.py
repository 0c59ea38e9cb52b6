"""``dp_accounting`` events that carry what dp_accounting cannot describe.

Optional: needs ``dp_accounting`` (``pip install dp-accounting``). Both classes are
``dp_accounting.DpEvent`` subclasses, so they nest in ``SelfComposedDpEvent`` and
``ComposedDpEvent`` and compose in one :class:`pld.integrations.dp_accounting.Accountant`
with dp_accounting's central events.

:class:`PLDEvent`
    Any :class:`pld.PLD`: a shuffled round (``pld.shuffle``, ``pld.clones``,
    ``pld.checkin``), a random allocation (``pld.random_allocation``), a composition
    of them. A ``PLD`` does not record its neighbouring relation, so the event
    states it and the accountant refuses the event under any other relation.
:data:`RandomAllocationDpEvent`
    dp_accounting's random-allocation event (each record takes part in exactly
    ``num_selected`` of ``num_steps`` steps chosen uniformly at random, every step
    running ``event``) where the installed dp_accounting has one, read from
    ``dp_accounting.dp_event`` at import; otherwise pld's own class with the same
    name and fields, so code written today keeps working after an upgrade.
    Converted by ``pld.random_allocation`` (Feldman and Shenfeld 2026).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import attr

from pld.distribution import PLD
from pld.integrations.dp_events import relation_name

try:
    from dp_accounting import dp_event
except ImportError as error:  # pragma: no cover - the extra is installed in the tests
    raise ImportError(
        "pld.integrations.pld_events needs dp_accounting: pip install dp-accounting"
    ) from error

__all__ = ["PLDEvent", "RandomAllocationDpEvent"]


def _loss(value: Any) -> PLD:
    if not isinstance(value, PLD):
        raise ValueError(f"loss must be a pld.PLD (got {type(value).__name__})")
    return value


def _relations(value: Any) -> tuple[str, ...]:
    """Sorted relation names from one relation or an iterable of them (not empty)."""
    items = [value] if isinstance(value, str) or hasattr(value, "name") else value
    if not isinstance(items, Iterable):
        items = [items]
    names = tuple(sorted({relation_name(item) for item in items}))
    if not names:
        raise ValueError("neighboring_relations must name at least one relation")
    return names


@attr.s(frozen=True, slots=True, eq=False, repr=False)
class PLDEvent(dp_event.DpEvent):
    """A ``DpEvent`` holding a :class:`pld.PLD`, valid under the neighbouring relations it names.

    Built as ``PLDEvent(loss, neighboring_relations)``. Equality and hashing are by
    the identity of ``loss`` (a PLD's masses are not hashed), so one object
    composed many times is converted once.

    Attributes
    ----------
    loss : PLD
        Any PLD, one round or composed (the accountant composes it as given, on
        its own grid).
    neighboring_relations : str, NeighboringRelation, or an iterable of them
        The relations under which ``loss`` bounds the privacy loss: ``"replace"``
        (``REPLACE_ONE``), ``"add-remove"`` (``ADD_OR_REMOVE_ONE``), or both. The
        caller is responsible for this statement, which pld cannot check (a PLD
        records no relation): it is the ``adjacency`` the PLD was built with
        (``pld.shuffle`` and ``pld.clones`` are replace-one; ``pld.checkin`` and
        ``pld.poisson_subsample`` take ``adjacency=``; ``pld.random_allocation``
        and ``pld.subsampled_gaussian`` are add/remove). The accountant refuses
        the event under a relation it does not name.
    """

    loss: PLD = attr.ib(converter=_loss)
    neighboring_relations: tuple[str, ...] = attr.ib(converter=_relations)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PLDEvent):
            return NotImplemented
        return other.loss is self.loss and other.neighboring_relations == self.neighboring_relations

    def __hash__(self) -> int:
        return hash((id(self.loss), self.neighboring_relations))

    def __repr__(self) -> str:
        return f"PLDEvent({self.loss!r}, neighboring_relations={self.neighboring_relations!r})"


@attr.s(frozen=True, slots=True, auto_attribs=True)
class _OwnRandomAllocationDpEvent(dp_event.DpEvent):
    """Each record is used in exactly ``num_selected`` of ``num_steps`` steps, chosen at random.

    pld's stand-in for dp_accounting's event of the same name and fields (for
    dp_accounting versions without it). Every step runs ``event``.

    Attributes
    ----------
    event : DpEvent
        One step's mechanism (one round: a Gaussian, a Poisson-sampled
        Gaussian, ...).
    num_selected : int
        k, the steps each record takes part in, in [0, num_steps].
    num_steps : int
        T, the number of steps, >= 1.
    """

    event: dp_event.DpEvent
    num_selected: int
    num_steps: int


# pld's converter reads events by class name, as it reads dp_accounting's.
_OwnRandomAllocationDpEvent.__name__ = "RandomAllocationDpEvent"
_OwnRandomAllocationDpEvent.__qualname__ = "RandomAllocationDpEvent"


def detected_allocation_event() -> type:
    """dp_accounting's ``RandomAllocationDpEvent`` where installed, else pld's own."""
    return getattr(dp_event, "RandomAllocationDpEvent", _OwnRandomAllocationDpEvent)


#: The random-allocation event class: dp_accounting's, or pld's own of the same fields.
RandomAllocationDpEvent: type = detected_allocation_event()
