"""pld-side dp_accounting events (PLDEvent) and random allocation in the Accountant.

Truths: pld.compose of the same PLDs (an event tree holding a PLDEvent is
converted by the very operations the user would write, so its bracket must equal
that composition's to float round-off, 1e-12 relative); the Gaussian's closed
form (Balle and Wang 2018) for random allocation with T = 1 (the mechanism
itself) and k = T (T-fold composition: the Gaussian of sigma / sqrt(T)).
Where the accountant rebuilds a central event on its finer grid the two
brackets are computed on different grids: both hold the truth, so they must
overlap, and the uppers can differ by no more than the wider bracket.
"""

from __future__ import annotations

import math

import attr
import pytest

import pld
from pld.central.gaussian_mechanism import gaussian_delta

dp_event = pytest.importorskip("dp_accounting.dp_event")
from dp_accounting import privacy_accountant  # noqa: E402

from pld.integrations import pld_events  # noqa: E402
from pld.integrations.dp_accounting import (  # noqa: E402
    Accountant,
    PLDEvent,
    RandomAllocationDpEvent,
)

ADD_REMOVE = privacy_accountant.NeighboringRelation.ADD_OR_REMOVE_ONE
REPLACE = privacy_accountant.NeighboringRelation.REPLACE_ONE
DELTA = 1e-6
ROUND_OFF = 1e-12


@pytest.fixture(scope="module")
def shuffled():
    """A shuffled round (clones, replace-one) and a random check-in round (replace-one)."""
    return (
        pld.clones(n=1000, eps0=1.0),
        pld.checkin(n=1000, eps0=1.0, schedule="random", window=10),
    )


@pytest.fixture(scope="module")
def allocated():
    return pld.random_allocation(pld.gaussian(2.0), rounds=10)


def _close(a, b, tolerance=ROUND_OFF):
    return all(math.isclose(x, y, rel_tol=tolerance) for x, y in zip(a, b, strict=True))


def test_a_mixed_pipeline_composes_as_pld_compose(shuffled):
    clones, checkin = shuffled
    central = dp_event.PoissonSampledDpEvent(0.01, dp_event.GaussianDpEvent(1.0))
    pipeline = dp_event.ComposedDpEvent(
        [
            dp_event.SelfComposedDpEvent(PLDEvent(clones, "replace"), 3),
            PLDEvent(checkin, REPLACE),
            dp_event.SelfComposedDpEvent(central, 20),
        ]
    )
    accountant = Accountant(REPLACE).compose(pipeline)
    theirs = pld.from_dp_event(central, neighboring_relation="replace")
    reference = pld.compose(clones.self_compose(3), checkin, theirs.self_compose(20))
    ours = accountant.epsilon_bounds(DELTA)
    assert _close(ours, reference.epsilon_bounds(DELTA))
    assert 0 < ours[0] <= ours[1] == accountant.get_epsilon(DELTA)


def test_top_level_events_overlap_the_composition_on_default_grids(allocated):
    """The central event is rebuilt on the accountant's grid, the PLDEvent kept as built."""
    central = dp_event.PoissonSampledDpEvent(0.01, dp_event.GaussianDpEvent(1.0))
    accountant = Accountant().compose(PLDEvent(allocated, ADD_REMOVE), 3).compose(central, 100)
    ours = accountant.epsilon_bounds(DELTA)
    reference = pld.compose(
        allocated.self_compose(3), pld.subsampled_gaussian(1.0, 0.01).self_compose(100)
    ).epsilon_bounds(DELTA)
    assert ours[0] <= reference[1] and reference[0] <= ours[1]
    width = max(ours[1] - ours[0], reference[1] - reference[0])
    assert abs(ours[1] - reference[1]) <= width
    assert width < 1e-3 * ours[1]  # both brackets are tight: the check above has teeth


def test_an_event_under_another_relation_is_refused(shuffled, allocated):
    clones, _ = shuffled
    assert not Accountant(ADD_REMOVE).supports(PLDEvent(clones, "replace"))
    assert not Accountant(REPLACE).supports(PLDEvent(allocated, "add-remove"))
    nested = dp_event.SelfComposedDpEvent(PLDEvent(clones, "replace"), 2)
    with pytest.raises(Exception, match="stated to hold under replace"):
        Accountant(ADD_REMOVE).compose(nested)
    both = PLDEvent(clones, ["replace", ADD_REMOVE])
    assert both.neighboring_relations == ("add-remove", "replace")
    assert Accountant(ADD_REMOVE).supports(both) and Accountant(REPLACE).supports(both)


@pytest.mark.parametrize(
    ("loss", "relations", "match"),
    [
        (3.0, "replace", "loss must be a pld.PLD"),
        (None, "sideways", "neighboring_relation must be"),
        (None, [], "at least one relation"),
    ],
)
def test_pld_event_arguments_are_checked(allocated, loss, relations, match):
    with pytest.raises(ValueError, match=match):
        PLDEvent(allocated if loss is None else loss, relations)


def test_pld_events_compare_by_the_identity_of_their_loss(allocated):
    event = PLDEvent(allocated, "add-remove")
    assert event == PLDEvent(allocated, [ADD_REMOVE]) and hash(event) == hash(
        PLDEvent(allocated, ADD_REMOVE)
    )
    assert event != PLDEvent(pld.gaussian(2.0), "add-remove")
    twice = Accountant().compose(event).compose(PLDEvent(allocated, "add-remove"))
    assert _close(twice.epsilon_bounds(DELTA), allocated.self_compose(2).epsilon_bounds(DELTA))


# -- dp_accounting's random-allocation event ----------------------------------------------


def test_random_allocation_event_is_pld_random_allocation(allocated):
    event = RandomAllocationDpEvent(dp_event.GaussianDpEvent(2.0), 1, 10)
    accountant = Accountant().compose(dp_event.SelfComposedDpEvent(event, 3))
    reference = allocated.self_compose(3)
    assert _close(accountant.epsilon_bounds(DELTA), reference.epsilon_bounds(DELTA))
    # Allocation hides the round: below three full rounds of the Gaussian (closed form).
    assert accountant.get_delta(1.0) < gaussian_delta(1.0, 2.0 / math.sqrt(3))


@pytest.mark.parametrize(("selected", "steps"), [(1, 1), (3, 3)])
def test_random_allocation_event_edges_hold_the_closed_form(selected, steps):
    """k = T = 1 is the Gaussian; k = T = 3 its 3-fold composition (sigma / sqrt 3)."""
    event = RandomAllocationDpEvent(dp_event.GaussianDpEvent(1.0), selected, steps)
    lower, upper = Accountant().compose(event).delta_bounds(1.0)
    exact = float(gaussian_delta(1.0, 1.0 / math.sqrt(steps)))
    assert lower <= exact <= upper and upper - lower <= 1e-2 * exact


def test_random_allocation_events_refused_or_empty():
    gaussian = dp_event.GaussianDpEvent(1.0)
    assert not Accountant(REPLACE).supports(RandomAllocationDpEvent(gaussian, 1, 10))
    assert not Accountant().supports(RandomAllocationDpEvent(gaussian, 11, 10))
    composed = dp_event.SelfComposedDpEvent(gaussian, 2)
    assert not Accountant().supports(RandomAllocationDpEvent(composed, 1, 10))
    nothing = Accountant().compose(RandomAllocationDpEvent(gaussian, 0, 10))
    assert nothing.get_delta(0.0) <= 1e-15  # no loss: 0 up to the round-off allowance


@attr.s(frozen=True, slots=True, auto_attribs=True)
class _StandIn(dp_event.DpEvent):
    """A class of dp_accounting's name and fields, as a newer dp_accounting defines it."""

    event: dp_event.DpEvent
    num_selected: int
    num_steps: int


_StandIn.__name__ = _StandIn.__qualname__ = "RandomAllocationDpEvent"


def test_dp_accountings_own_event_is_detected_and_mapped(monkeypatch, allocated):
    installed = getattr(dp_event, "RandomAllocationDpEvent", None)  # None in 0.6.0
    assert RandomAllocationDpEvent is (installed or pld_events.detected_allocation_event())
    monkeypatch.setattr(dp_event, "RandomAllocationDpEvent", _StandIn, raising=False)
    assert pld_events.detected_allocation_event() is _StandIn
    event = _StandIn(event=dp_event.GaussianDpEvent(2.0), num_selected=1, num_steps=10)
    accountant = Accountant().compose(event, 2)
    assert _close(accountant.epsilon_bounds(DELTA), allocated.self_compose(2).epsilon_bounds(DELTA))
