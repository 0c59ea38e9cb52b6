"""``dp_accounting`` events as PLDs: :func:`from_dp_event`.

Google's ``dp_accounting`` (also what TF Privacy and JAX privacy emit) describes a
pipeline as a tree of ``DpEvent`` objects. :func:`from_dp_event` turns such a tree
into a :class:`pld.PLD` built by pld's own mechanisms, so the answer carries pld's
rigorous (lower, upper) bracket. Only the events' public fields are read.

Mapping (``relation`` is ``"add-remove"`` or ``"replace"``, dp_accounting's
``ADD_OR_REMOVE_ONE`` and ``REPLACE_ONE``):

====================================  ==========================================================
event                                 PLD
====================================  ==========================================================
``NoOpDpEvent``                       all mass at loss 0 (delta(eps) = 0 for eps >= 0)
``NonPrivateDpEvent``                 all mass at loss +inf: delta(eps) = 1 for every eps
``GaussianDpEvent(z)``                ``pld.gaussian(z, sensitivity=1)``; 2 under replace (the
                                      sum moves by up to twice the clipping norm)
``LaplaceDpEvent(b)``                 ``pld.laplace(scale=b, sensitivity=1)``; 2 under replace
``DiscreteLaplaceDpEvent(a, c)``      ``pld.discrete_laplace(parameter=a, sensitivity=c)``;
                                      ``2 c`` under replace
``RandomizedResponseDpEvent(p, k)``   replace: the exact pair ``(1 - p + p/k, p/k, (k-2) p/k)``
                                      against its mirror image; refused under add/remove (one
                                      record's bucket cannot be added or removed)
``MixtureOfGaussiansDpEvent``         one non-zero sensitivity ``c`` with probability ``q``:
                                      ``pld.gaussian(sigma / c)`` (q = 1) or
                                      ``pld.subsampled_gaussian(sigma / c, q)``; add/remove only
``PoissonSampledDpEvent(q, e)``       Gaussian ``e`` under add/remove:
                                      ``pld.subsampled_gaussian(z, q)``; otherwise
                                      ``pld.poisson_subsample(base, q, adjacency=relation)``
                                      with ``base`` the PLD of ``e`` under the same relation
                                      (under replace it bounds both relations)
``SampledWithoutReplacementDpEvent``  replace only: ``pld.subsample_without_replacement(base,
                                      m / n)``, ``base`` the replace PLD of the event
``SelfComposedDpEvent(e, T)``         ``from_dp_event(e).self_compose(T)``
``ComposedDpEvent(es)``               ``pld.compose(*(from_dp_event(e) for e in es))``
``EpsilonDeltaDpEvent(eps, delta)``   ``pld.approximate_dp(eps, delta)`` (newer dp_accounting)
``RandomAllocationDpEvent(e, k, T)``  add/remove only: ``pld.random_allocation(base, rounds=T,
                                      participations=k)``, ``base`` the PLD of the one-step
                                      event ``e`` (newer dp_accounting, or pld's own class:
                                      :mod:`pld.integrations.pld_events`)
``PLDEvent(loss, relations)``         ``loss`` itself, if ``relation`` is one of the
                                      ``relations`` it is stated for (else refused):
                                      :class:`pld.integrations.pld_events.PLDEvent`
====================================  ==========================================================

Refused with a ``ValueError`` naming the event: ``UnsupportedDpEvent``,
``SampledWithReplacementDpEvent``, ``SingleEpochTreeAggregationDpEvent``,
``RepeatAndSelectDpEvent``, ``ZCDpEvent``, ``TruncatedSubsampledGaussianDpEvent``
and any event this module does not know: none has a PLD that pld's mechanisms
build exactly (zCDP and repeat-and-select are Rényi-DP statements; sampling with
replacement and truncated Poisson sampling need mechanisms pld does not have).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from pld.distribution import refinable

RELATIONS = ("add-remove", "replace")

#: dp_accounting's NeighboringRelation names, mapped to :data:`RELATIONS`.
_RELATION_NAMES = {"ADD_OR_REMOVE_ONE": "add-remove", "REPLACE_ONE": "replace"}


class UnsupportedEventError(ValueError):
    """A ``DpEvent`` that pld cannot account for; ``event`` is the offending sub-event."""

    def __init__(self, event: Any, reason: str) -> None:
        super().__init__(f"event {type(event).__name__} cannot be accounted for by pld: {reason}")
        self.event = event
        self.reason = reason


def relation_name(relation: Any) -> str:
    """``"add-remove"`` or ``"replace"`` from either that string or a dp_accounting relation.

    Raises
    ------
    ValueError
        For any other relation (``REPLACE_SPECIAL`` included).
    """
    if isinstance(relation, str) and relation in RELATIONS:
        return relation
    name = getattr(relation, "name", None)
    if name in _RELATION_NAMES:
        return _RELATION_NAMES[name]
    raise ValueError(
        "neighboring_relation must be 'add-remove' or 'replace' (or dp_accounting's "
        f"NeighboringRelation.ADD_OR_REMOVE_ONE / REPLACE_ONE); got {relation!r}"
    )


def _pld_function(name: str, event: Any) -> Any:
    """``pld.<name>``, or UnsupportedEventError if this pld has no such mechanism."""
    import pld

    try:
        return getattr(pld, name)
    except AttributeError:
        raise UnsupportedEventError(
            event, f"it needs the mechanism pld.{name}, which this version of pld lacks"
        ) from None


def no_op() -> Any:
    """The PLD of a mechanism that reveals nothing: all mass at loss 0."""
    from pld.distribution import from_pmfs

    return from_pmfs(np.zeros(1), np.zeros(1), symmetric=True)


def non_private() -> Any:
    """The PLD of a mechanism that reveals everything: delta(eps) = 1 for every eps."""
    from pld.distribution import from_pmfs

    return from_pmfs(np.array([0.0, -np.inf]), np.array([-np.inf, 0.0]), symmetric=True)


def is_non_private(loss: Any) -> bool:
    """True for a PLD whose lower side already has all its mass at +inf (delta = 1).

    The upper side is read first: its mass at +inf bounds the lower side's, so
    below 1 it settles the answer without building a deferred lower side.
    """
    if any(atoms.infinity_mass < 1.0 for atoms in loss.atoms("upper")):
        return False
    return all(atoms.infinity_mass >= 1.0 for atoms in loss.atoms("lower"))


@refinable
def k_ary_randomized_response(
    noise_parameter: float, num_buckets: int, *, loss_grid_step: float | None = None
) -> Any:
    """k-ary randomised response, replace one bucket: the exact symmetric pair.

    With probability ``1 - p`` the true bucket, otherwise a uniform one of ``k``
    (dp_accounting's ``RandomizedResponseDpEvent``): the outputs "the first
    record's bucket", "the second's" and "any other" have P-masses
    ``(1 - p + p/k, p/k, (k-2) p/k)`` and Q-masses the first two swapped.

    Parameters
    ----------
    noise_parameter : float
        p, in (0, 1).
    num_buckets : int
        k >= 2.
    loss_grid_step : float, optional
        Grid spacing in nats (default: the engine's choice for the loss's spread).
    """
    from pld import validation
    from pld.distribution import from_pmfs

    noise = validation.in_interval(
        "noise_parameter", noise_parameter, 0.0, 1.0, low_open=True, high_open=True
    )
    buckets = validation.integer_at_least("num_buckets", num_buckets, 2)
    with np.errstate(divide="ignore"):
        keep = math.log1p(-noise * (buckets - 1) / buckets)
        other = math.log(noise / buckets)
        rest = math.log((buckets - 2) * noise / buckets) if buckets > 2 else -math.inf
    return from_pmfs(
        np.array([keep, other, rest]),
        np.array([other, keep, rest]),
        symmetric=True,
        loss_grid_step=loss_grid_step,
    )


def _kind(event: Any) -> str:
    return type(event).__name__


def _check(condition: bool, event: Any, reason: str) -> None:
    if not condition:
        raise UnsupportedEventError(event, reason)


def _real(event: Any, field: str, low: float, high: float = math.inf) -> float:
    value = getattr(event, field)
    _check(
        isinstance(value, (int, float, np.integer, np.floating))
        and not isinstance(value, bool)
        and low <= float(value) <= high,
        event,
        f"{field} must be a number in [{low:g}, {high:g}] (got {value!r})",
    )
    return float(value)


def _count(event: Any, field: str) -> int:
    value = getattr(event, field)
    _check(
        isinstance(value, (int, np.integer)) and not isinstance(value, bool) and value >= 0,
        event,
        f"{field} must be an integer >= 0 (got {value!r})",
    )
    return int(value)


class _Converter:
    """One conversion: the relation, and a cache of the PLDs of identical sub-events."""

    def __init__(self, relation: str) -> None:
        self.relation = relation
        self._cache: dict[Any, Any] = {}

    def convert(self, event: Any, relation: str | None = None) -> Any | None:
        """The PLD of ``event``, or ``None`` for an event that reveals nothing."""
        relation = self.relation if relation is None else relation
        try:
            key = (relation, event)
            hash(key)
        except TypeError:  # events holding lists (ComposedDpEvent) are not hashable
            return self._build(event, relation)
        if key not in self._cache:
            self._cache[key] = self._build(event, relation)
        return self._cache[key]

    def _build(self, event: Any, relation: str) -> Any | None:
        kind = _kind(event)
        method = getattr(self, f"_{kind}", None)
        if method is None:
            raise UnsupportedEventError(event, _REFUSED.get(kind, "pld does not know this event"))
        return method(event, relation)

    # -- structure -------------------------------------------------------------

    def _NoOpDpEvent(self, event: Any, relation: str) -> None:
        return None

    def _NonPrivateDpEvent(self, event: Any, relation: str) -> Any:
        return non_private()

    def _SelfComposedDpEvent(self, event: Any, relation: str) -> Any | None:
        count = _count(event, "count")
        inner = self.convert(event.event, relation)
        if inner is None or count == 0:
            return None
        if is_non_private(inner):
            return inner
        return inner.self_compose(count) if count > 1 else inner

    def _ComposedDpEvent(self, event: Any, relation: str) -> Any | None:
        from pld.distribution import compose

        parts = [self.convert(item, relation) for item in event.events]
        parts = [part for part in parts if part is not None]
        if not parts:
            return None
        for part in parts:
            if is_non_private(part):  # composing with it reveals everything too
                return part
        return compose(*parts) if len(parts) > 1 else parts[0]

    # -- central mechanisms --------------------------------------------------------

    def _shift(self, relation: str) -> float:
        """Largest change of a sum of clipped values: 1 (add/remove) or 2 (replace) norms."""
        return 1.0 if relation == "add-remove" else 2.0

    def _GaussianDpEvent(self, event: Any, relation: str) -> Any:
        from pld.central import gaussian

        noise = _real(event, "noise_multiplier", 0.0)
        if noise == 0:
            return non_private()
        return gaussian(noise, sensitivity=self._shift(relation))

    def _LaplaceDpEvent(self, event: Any, relation: str) -> Any:
        noise = _real(event, "noise_multiplier", 0.0)
        if noise == 0:
            return non_private()
        return _pld_function("laplace", event)(scale=noise, sensitivity=self._shift(relation))

    def _DiscreteLaplaceDpEvent(self, event: Any, relation: str) -> Any:
        parameter = _real(event, "noise_parameter", 0.0)
        sensitivity = _count(event, "sensitivity")
        if sensitivity == 0:
            return None
        if parameter == 0:
            return non_private()
        return _pld_function("discrete_laplace", event)(
            parameter=parameter, sensitivity=sensitivity * round(self._shift(relation))
        )

    def _RandomizedResponseDpEvent(self, event: Any, relation: str) -> Any:
        noise = _real(event, "noise_parameter", 0.0, 1.0)
        buckets = _count(event, "num_buckets")
        _check(buckets >= 1, event, "num_buckets must be >= 1")
        if buckets == 1 or noise == 1:
            return None
        _check(
            relation == "replace",
            event,
            "randomized response is defined for replacing one record's bucket "
            "(neighboring relation 'replace' / REPLACE_ONE), not for add/remove",
        )
        if noise == 0:
            return non_private()
        return k_ary_randomized_response(noise, buckets)

    def _MixtureOfGaussiansDpEvent(self, event: Any, relation: str) -> Any | None:
        from pld.central import gaussian
        from pld.subsampling import subsampled_gaussian

        sigma = _real(event, "standard_deviation", 0.0)
        sensitivities = np.asarray(event.sensitivities, dtype=np.float64)
        probabilities = np.asarray(event.sampling_probs, dtype=np.float64)
        _check(
            sensitivities.ndim == 1
            and sensitivities.shape == probabilities.shape
            and np.all(probabilities >= 0)
            and abs(math.fsum(probabilities) - 1.0) <= 1e-9,
            event,
            "sensitivities and sampling_probs must be equally long, and the "
            "probabilities non-negative with sum 1",
        )
        moving = (sensitivities != 0) & (probabilities > 0)
        if not np.any(moving):
            return None
        _check(
            np.unique(sensitivities[moving]).size == 1,
            event,
            "pld expresses a mixture with one non-zero sensitivity (a Gaussian or a "
            "Poisson-subsampled Gaussian); this one has several",
        )
        _check(
            relation == "add-remove",
            event,
            "a mixture of Gaussians describes an add/remove pair (as in dp_accounting)",
        )
        if sigma == 0:
            return non_private()
        scale = sigma / abs(float(sensitivities[moving][0]))
        rate = float(probabilities[moving].sum())
        if rate >= 1.0:
            return gaussian(scale)
        return subsampled_gaussian(scale, rate)

    def _EpsilonDeltaDpEvent(self, event: Any, relation: str) -> Any:
        epsilon = _real(event, "epsilon", 0.0)
        delta = _real(event, "delta", 0.0, 1.0)
        return _pld_function("approximate_dp", event)(eps=epsilon, delta=delta)

    # -- sampling ----------------------------------------------------------------------

    def _PoissonSampledDpEvent(self, event: Any, relation: str) -> Any | None:
        from pld.subsampling import subsampled_gaussian

        rate = _real(event, "sampling_probability", 0.0, 1.0)
        if rate == 0:
            return None
        if rate == 1:
            return self.convert(event.event, relation)
        inner = event.event
        if _kind(inner) == "GaussianDpEvent" and relation == "add-remove":
            noise = _real(inner, "noise_multiplier", 0.0)
            return non_private() if noise == 0 else subsampled_gaussian(noise, rate)
        # Under replace the base must bound both the add/remove pairs (M(T), M(T + z))
        # and the replace pairs (M(T + z), M(T + z')) (pld.poisson_subsample): the
        # replace PLD of a shift mechanism (twice the sensitivity) bounds both.
        base = self.convert(inner, relation)
        if base is None:
            return None
        subsample = _pld_function("poisson_subsample", event)
        return subsample(base, rate=rate, adjacency=relation)

    def _SampledWithoutReplacementDpEvent(self, event: Any, relation: str) -> Any | None:
        size = _count(event, "source_dataset_size")
        sample = _count(event, "sample_size")
        _check(0 <= sample <= size and size > 0, event, "need 0 <= sample_size <= size")
        _check(
            relation == "replace",
            event,
            "a fixed-size sample is defined for replacing one record (neighboring "
            "relation 'replace' / REPLACE_ONE), as in dp_accounting",
        )
        if sample == 0:
            return None
        base = self.convert(event.event, relation)
        if base is None or sample == size:
            return base
        subsample = _pld_function("subsample_without_replacement", event)
        return subsample(base, rate=sample / size)

    # -- pld's own PLDs and random allocation -------------------------------------------

    def _PLDEvent(self, event: Any, relation: str) -> Any:
        stated = tuple(event.neighboring_relations)
        _check(
            relation in stated,
            event,
            f"its PLD is stated to hold under {' and '.join(stated)} adjacency, not under "
            f"the accountant's {relation!r} (build it with that adjacency, or account "
            "under the relation it holds for)",
        )
        return event.loss

    def _RandomAllocationDpEvent(self, event: Any, relation: str) -> Any | None:
        steps = _count(event, "num_steps")
        selected = _count(event, "num_selected")
        _check(steps >= 1 and selected <= steps, event, "need num_steps >= 1, num_selected <= it")
        if selected == 0:
            return None
        _check(
            relation == "add-remove",
            event,
            "random allocation is proved for adding or removing one record "
            "(ADD_OR_REMOVE_ONE) only",
        )
        base = self.convert(event.event, relation)
        if base is None or is_non_private(base):
            return base
        _check(
            not base.composed,
            event,
            "its event must be one step of a mechanism, not a composition "
            "(allocate one step, then compose)",
        )
        return _pld_function("random_allocation", event)(
            base, rounds=steps, participations=selected
        )


_REFUSED = {
    "UnsupportedDpEvent": "it stands for an operation nobody can account for yet",
    "SampledWithReplacementDpEvent": "pld has no mechanism for sampling with replacement",
    "SingleEpochTreeAggregationDpEvent": "pld has no tree-aggregation mechanism",
    "RepeatAndSelectDpEvent": "repeat-and-select is a Renyi-DP statement, not an exact PLD",
    "ZCDpEvent": "zCDP is a Renyi-DP statement, not an exact PLD",
    "TruncatedSubsampledGaussianDpEvent": "pld has no truncated Poisson-sampling mechanism",
}


def from_dp_event(event: Any, *, neighboring_relation: Any = "add-remove") -> Any:
    """The PLD of a ``dp_accounting`` ``DpEvent`` tree, built by pld's mechanisms.

    Parameters
    ----------
    event : dp_accounting.DpEvent
        Any supported event (module docstring), nested to any depth.
    neighboring_relation : {"add-remove", "replace"} or dp_accounting NeighboringRelation
        Adjacency of the datasets: add/remove one record (``ADD_OR_REMOVE_ONE``,
        dp_accounting's default) or replace one (``REPLACE_ONE``).

    Returns
    -------
    PLD
        The PLD of the whole event (``NoOpDpEvent`` gives all mass at loss 0;
        ``NonPrivateDpEvent`` all mass at +inf, so delta(eps) = 1).

    Raises
    ------
    ValueError
        (:class:`UnsupportedEventError`) naming the first sub-event pld cannot
        account for and why; or for an unknown ``neighboring_relation``.
    """
    relation = relation_name(neighboring_relation)
    result = _Converter(relation).convert(event)
    return no_op() if result is None else result
