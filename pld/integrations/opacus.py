"""An Opacus privacy accountant that accounts with pld (``pip install opacus``).

Opacus (PyTorch's DP-SGD library) keeps its accountant as a small object with a
known interface: ``step(noise_multiplier=, sample_rate=)`` after every optimizer
step, ``get_epsilon(delta)``, ``history`` (a list of ``(noise_multiplier,
sample_rate, steps)``), ``__len__``, ``mechanism()``, ``state_dict`` /
``load_state_dict`` and ``get_optimizer_hook_fn(sample_rate)``. :class:`Accountant`
implements exactly that interface without importing torch or Opacus, so it is
also usable where neither is installed. Each history entry is ``steps`` rounds of
the Poisson-subsampled Gaussian mechanism under add/remove adjacency
(``pld.subsampled_gaussian``; ``pld.gaussian`` at sample rate 1), composed by FFT;
``get_epsilon`` returns the rigorous upper bound of pld's bracket.

The one-line switch, with Opacus's ``PrivacyEngine`` (which builds its own
accountant from a name)::

    engine = PrivacyEngine()
    engine.accountant = pld.integrations.opacus.Accountant()   # before make_private

and :func:`get_noise_multiplier` is Opacus's function of the same name and
arguments, searching on pld's upper bound.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, MutableMapping
from typing import Any

from pld import validation

#: The name Opacus shows for this accountant (``mechanism()``, ``state_dict``).
MECHANISM = "pld"


def _step_pld(noise_multiplier: float, sample_rate: float) -> Any:
    """One DP-SGD step: Poisson-subsampled Gaussian, sensitivity 1, add/remove."""
    if sample_rate == 1.0:
        from pld.central import gaussian

        return gaussian(noise_multiplier)
    from pld.subsampling import subsampled_gaussian

    return subsampled_gaussian(noise_multiplier, sample_rate)


def _entry(entry: Any, where: str) -> tuple[float, float, int]:
    """A validated history entry ``(noise_multiplier, sample_rate, steps)``."""
    try:
        noise_multiplier, sample_rate, steps = entry
    except (TypeError, ValueError) as error:
        raise ValueError(
            f"{where} must be a (noise_multiplier, sample_rate, steps) triple (got {entry!r})"
        ) from error
    return (
        validation.positive("noise_multiplier", noise_multiplier),
        validation.in_interval("sample_rate", sample_rate, 0.0, 1.0, low_open=True),
        validation.integer_at_least("steps", steps, 0),
    )


class Accountant:
    """Opacus's accountant interface, answered by pld's PLD composition.

    Parameters
    ----------
    tail_mass : float, optional
        Bound on the mass outside the composition window, per side, in (0, 1e-3]
        (``pld.compose``; default ``pld.engine.DEFAULT_TAIL_MASS``).

    Attributes
    ----------
    history : list of (float, float, int)
        ``(noise_multiplier, sample_rate, steps)`` in the order taken, consecutive
        identical steps merged (as Opacus's RDP accountant keeps it). Opacus's
        ``get_noise_multiplier`` assigns it directly; the accountant reads it
        afresh at every query.
    """

    def __init__(self, *, tail_mass: float | None = None) -> None:
        from pld.engine import DEFAULT_TAIL_MASS

        self.history: list[tuple[float, float, int]] = []
        self._tail_mass = validation.in_interval(
            "tail_mass",
            DEFAULT_TAIL_MASS if tail_mass is None else tail_mass,
            0.0,
            1e-3,
            low_open=True,
        )
        self._steps: dict[tuple[float, float], Any] = {}
        self._cached: tuple[tuple, Any] | None = None

    @classmethod
    def mechanism(cls) -> str:
        """Accounting mechanism name, ``"pld"``."""
        return MECHANISM

    def step(self, *, noise_multiplier: float, sample_rate: float) -> None:
        """Record one optimizer step.

        Parameters
        ----------
        noise_multiplier : float
            Noise standard deviation over the clipping norm, > 0.
        sample_rate : float
            Poisson sampling probability of each record, in (0, 1].
        """
        noise_multiplier = validation.positive("noise_multiplier", noise_multiplier)
        sample_rate = validation.in_interval("sample_rate", sample_rate, 0.0, 1.0, low_open=True)
        if self.history and self.history[-1][:2] == (noise_multiplier, sample_rate):
            self.history[-1] = (noise_multiplier, sample_rate, self.history[-1][2] + 1)
        else:
            self.history.append((noise_multiplier, sample_rate, 1))

    def __len__(self) -> int:
        """Number of optimizer steps recorded."""
        return sum(int(steps) for _, _, steps in self.history)

    @property
    def pld(self) -> Any:
        """The PLD of every recorded step (``None`` before the first)."""
        entries = tuple(_entry(e, "history entry") for e in self.history)
        entries = tuple(e for e in entries if e[2] > 0)
        if not entries:
            return None
        if self._cached is not None and self._cached[0] == entries:
            return self._cached[1]
        from pld.distribution import compose

        counts: dict[tuple[float, float], int] = {}
        for noise_multiplier, sample_rate, steps in entries:
            key = (noise_multiplier, sample_rate)
            counts[key] = counts.get(key, 0) + steps
        parts = []
        for key, steps in counts.items():
            if key not in self._steps:
                self._steps[key] = _step_pld(*key)
            one = self._steps[key]
            parts.append(one.self_compose(steps, tail_mass=self._tail_mass) if steps > 1 else one)
        total = compose(*parts, tail_mass=self._tail_mass)
        self._cached = (entries, total)
        return total

    def epsilon_bounds(self, delta: float) -> tuple[float, float]:
        """Lower and upper bounds on epsilon at ``delta``, in nats."""
        delta = validation.in_interval("delta", delta, 0.0, 1.0, low_open=True)
        total = self.pld
        return (0.0, 0.0) if total is None else total.epsilon_bounds(delta)

    def get_epsilon(self, delta: float) -> float:
        """Privacy budget spent so far: pld's upper bound on epsilon at ``delta``."""
        return self.epsilon_bounds(delta)[1]

    def get_optimizer_hook_fn(self, sample_rate: float) -> Callable[[Any], None]:
        """A hook for Opacus's ``DPOptimizer``: one :meth:`step` per optimizer step.

        With gradient accumulation the optimizer takes a step every
        ``accumulated_iterations`` batches, so the rate per step is that multiple
        of ``sample_rate`` (as in Opacus).
        """

        def hook(optimizer: Any) -> None:
            self.step(
                noise_multiplier=optimizer.noise_multiplier,
                sample_rate=sample_rate * optimizer.accumulated_iterations,
            )

        return hook

    def state_dict(self, destination: MutableMapping[str, Any] | None = None) -> Any:
        """The accountant's state: ``{"history": [...], "mechanism": "pld"}``."""
        if destination is None:
            destination = OrderedDict()
        destination["history"] = list(self.history)
        destination["mechanism"] = MECHANISM
        return destination

    def load_state_dict(self, state_dict: MutableMapping[str, Any]) -> None:
        """Restore a state written by :meth:`state_dict` (of this accountant only).

        Raises
        ------
        ValueError
            If the state is empty, lacks ``history`` or ``mechanism``, belongs to
            another mechanism, or holds an invalid history entry.
        """
        if not state_dict:
            raise ValueError("state_dict is empty; it cannot be loaded into the accountant")
        for key in ("history", "mechanism"):
            if key not in state_dict:
                raise ValueError(f"state_dict lacks the key {key!r}")
        mechanism = state_dict["mechanism"]
        if callable(mechanism):  # Opacus's own accountants store the classmethod
            mechanism = mechanism()
        if mechanism != MECHANISM:
            raise ValueError(
                f"state_dict of mechanism {mechanism!r} cannot be loaded into the "
                f"{MECHANISM!r} accountant"
            )
        history = [_entry(e, "state_dict history entry") for e in state_dict["history"]]
        self.history = history


def get_noise_multiplier(
    *,
    target_epsilon: float,
    target_delta: float,
    sample_rate: float,
    epochs: float | None = None,
    steps: int | None = None,
    epsilon_tolerance: float = 0.01,
) -> float:
    """Smallest noise multiplier (to ``epsilon_tolerance``) meeting a budget, on pld's upper bound.

    Same arguments as Opacus's ``opacus.accountants.utils.get_noise_multiplier``:
    either ``epochs`` (steps = ``int(epochs / sample_rate)``) or ``steps``.

    Returns
    -------
    float
        A noise multiplier whose upper bound on epsilon at ``target_delta`` is at
        most ``target_epsilon`` and, unless the bisection has shrunk to 1e-9 of
        it, at least ``target_epsilon - epsilon_tolerance``.

    Raises
    ------
    ValueError
        For a budget no noise multiplier up to 1e6 meets, or bad arguments.
    """
    target_epsilon = validation.positive("target_epsilon", target_epsilon)
    target_delta = validation.in_interval("target_delta", target_delta, 0.0, 1.0, low_open=True)
    sample_rate = validation.in_interval("sample_rate", sample_rate, 0.0, 1.0, low_open=True)
    epsilon_tolerance = validation.positive("epsilon_tolerance", epsilon_tolerance)
    if (steps is None) == (epochs is None):
        raise ValueError("get_noise_multiplier takes either epochs or steps (exactly one)")
    if steps is None:
        steps = int(validation.positive("epochs", epochs) / sample_rate)
    steps = validation.integer_at_least("steps", steps, 1)
    accountant = Accountant()

    def epsilon(noise_multiplier: float) -> float:
        accountant.history = [(noise_multiplier, sample_rate, steps)]
        return accountant.get_epsilon(target_delta)

    low, high = 0.0, 1.0
    high_epsilon = epsilon(high)
    while high_epsilon > target_epsilon:
        low, high = high, 2 * high
        if high > 1e6:
            raise ValueError(
                f"no noise multiplier up to 1e6 reaches target_epsilon={target_epsilon!r} "
                f"at target_delta={target_delta!r}"
            )
        high_epsilon = epsilon(high)
    while target_epsilon - high_epsilon > epsilon_tolerance and high - low > 1e-9 * high:
        middle = (low + high) / 2
        value = epsilon(middle)
        if value <= target_epsilon:
            high, high_epsilon = middle, value
        else:
            low = middle
    return high
