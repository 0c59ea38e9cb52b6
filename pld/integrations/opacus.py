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

:class:`ShuffledAccountant` has the same interface for batches that use every
example exactly once per epoch (not Poisson): each epoch of ``T`` steps is the
random allocation of the Gaussian mechanism (``pld.random_allocation``, one
participation in ``T`` rounds; Feldman and Shenfeld 2026), and epochs compose.

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

    Every step is one Poisson-subsampled Gaussian (module docstring).

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
        self._units: dict[tuple, Any] = {}
        self._cached: tuple[tuple, Any] | None = None

    #: The name Opacus shows (``mechanism()``, ``state_dict``).
    NAME = MECHANISM

    @classmethod
    def mechanism(cls) -> str:
        """Accounting mechanism name (``"pld"`` for this class)."""
        return cls.NAME

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

        parts = []
        for key, count in self._units_counted(entries).items():
            if key not in self._units:
                self._units[key] = self._unit(*key)
            one = self._units[key]
            parts.append(one.self_compose(count, tail_mass=self._tail_mass) if count > 1 else one)
        total = compose(*parts, tail_mass=self._tail_mass)
        self._cached = (entries, total)
        return total

    def _units_counted(self, entries: tuple[tuple[float, float, int], ...]) -> dict[tuple, int]:
        """How many times each unit of accounting occurs: here one step per key."""
        counts: dict[tuple, int] = {}
        for noise_multiplier, sample_rate, steps in entries:
            key = (noise_multiplier, sample_rate)
            counts[key] = counts.get(key, 0) + steps
        return counts

    def _unit(self, noise_multiplier: float, sample_rate: float) -> Any:
        """The PLD of one unit of accounting: here one step."""
        return _step_pld(noise_multiplier, sample_rate)

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
        """The accountant's state: ``{"history": [...], "mechanism": mechanism()}``."""
        if destination is None:
            destination = OrderedDict()
        destination["history"] = list(self.history)
        destination["mechanism"] = self.NAME
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
        if mechanism != self.NAME:
            raise ValueError(
                f"state_dict of mechanism {mechanism!r} cannot be loaded into the "
                f"{self.NAME!r} accountant"
            )
        history = [_entry(e, "state_dict history entry") for e in state_dict["history"]]
        self.history = history


#: The name Opacus shows for :class:`ShuffledAccountant`.
SHUFFLED_MECHANISM = "pld-allocation"


def steps_per_epoch(sample_rate: float) -> int:
    """T from Opacus's ``sample_rate = 1 / len(data_loader)``: the steps of one epoch.

    Raises
    ------
    ValueError
        When ``1 / sample_rate`` is not an integer (to 1e-9 relative): shuffled
        batches use every example once in T steps, so the rate is ``1 / T``.
    """
    sample_rate = validation.in_interval("sample_rate", sample_rate, 0.0, 1.0, low_open=True)
    rounds = round(1.0 / sample_rate)
    if abs(rounds * sample_rate - 1.0) > 1e-9:
        raise ValueError(
            f"sample_rate must be 1/T for T steps per epoch with shuffled batches, in (0, 1] "
            f"(got {sample_rate!r}, 1/sample_rate = {1.0 / sample_rate:.6g})"
        )
    return rounds


class ShuffledAccountant(Accountant):
    """Opacus's accountant interface for shuffled batches: every example once per epoch.

    Each epoch of ``T = 1 / sample_rate`` steps (Opacus's ``sample_rate`` is ``1 /
    len(data_loader)``) uses every example in exactly one step, chosen uniformly at
    random: the random allocation of the Gaussian mechanism with one participation
    in ``T`` rounds, ``pld.random_allocation(pld.gaussian(noise_multiplier),
    rounds=T)``, under add/remove adjacency and adaptive steps (Feldman and
    Shenfeld 2026; docs/random-allocation.md states what is proved). Epochs compose
    (``self_compose``); ``get_epsilon`` returns pld's rigorous upper bound.

    What is proved, precisely: each example's step is uniform on the epoch's
    ``T`` steps and independent of the other examples' ("balls and bins" batching,
    Chua et al. 2024; batch sizes vary), so adding or removing one example leaves
    the other examples' batches unchanged. A loader that shuffles and cuts
    fixed-size batches moves other examples when one is added or removed, and
    a last, smaller batch makes the step non-uniform: this accountant does not
    cover those loaders.

    Steps are counted from the start of the history in epochs of ``T``: a
    noise multiplier that changes inside an epoch is charged at the epoch's
    smallest (the Gaussian of the smallest noise dominates every step's), and a
    last, incomplete epoch as a full one (its outputs are a prefix of the full
    epoch's, a post-processing). ``sample_rate`` may change only between epochs.

    Parameters
    ----------
    tail_mass : float, optional
        As :class:`Accountant`.
    """

    NAME = SHUFFLED_MECHANISM

    def step(self, *, noise_multiplier: float, sample_rate: float) -> None:
        """Record one optimizer step; ``sample_rate`` is ``1 / T``, T steps per epoch."""
        steps_per_epoch(sample_rate)
        super().step(noise_multiplier=noise_multiplier, sample_rate=sample_rate)

    def _units_counted(self, entries: tuple[tuple[float, float, int], ...]) -> dict[tuple, int]:
        """Epochs, keyed by (smallest noise multiplier, 1 / T), in the order taken."""
        counts: dict[tuple, int] = {}

        def close(noise: float, rounds: int) -> None:
            counts[(noise, 1.0 / rounds)] = counts.get((noise, 1.0 / rounds), 0) + 1

        open_epoch: list = []  # [T, smallest noise multiplier, steps taken]
        for noise_multiplier, sample_rate, steps in entries:
            rounds = steps_per_epoch(sample_rate)
            if open_epoch and open_epoch[0] != rounds:
                raise ValueError(
                    f"sample_rate changed from 1/{open_epoch[0]} to 1/{rounds} inside an "
                    f"epoch (after {open_epoch[2]} of its {open_epoch[0]} steps); shuffled "
                    "batches change their number only between epochs"
                )
            if open_epoch:
                taken = min(steps, rounds - open_epoch[2])
                open_epoch[1] = min(open_epoch[1], noise_multiplier)
                open_epoch[2] += taken
                steps -= taken
                if open_epoch[2] == rounds:
                    close(open_epoch[1], rounds)
                    open_epoch = []
            full, rest = divmod(steps, rounds)
            if full:
                key = (noise_multiplier, 1.0 / rounds)
                counts[key] = counts.get(key, 0) + full
            if rest:
                open_epoch = [rounds, noise_multiplier, rest]
        if open_epoch:
            close(open_epoch[1], open_epoch[0])
        return counts

    def _unit(self, noise_multiplier: float, sample_rate: float) -> Any:
        """One epoch: the random allocation of the Gaussian in ``T = 1 / sample_rate`` rounds."""
        from pld.allocation import random_allocation
        from pld.central import gaussian

        rounds = steps_per_epoch(sample_rate)
        mechanism = gaussian(noise_multiplier)
        return mechanism if rounds == 1 else random_allocation(mechanism, rounds=rounds)


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
