"""A multi-message protocol with blanket messages: binary summation with coin messages.

Balcer and Cheu (2020, the binary-sum protocol with a coin of probability p; p = 1/2
is the uniform coin): every user sends two messages, its bit ``x_i`` and a
coin ``c_i ~ Bernoulli(p)`` independent of it. The shuffler releases the multiset of the
2n bits, i.e. the number of ones ``sum_i x_i + sum_i c_i``. Neighbouring datasets differ
in one user's bit; an adversary who knows every other bit sees exactly

    P = 1 + U,   Q = U,   U ~ Bin(n, p)

(or the reverse order), so this pair is the protocol's exact PLD, not only a bound:
``log P(k)/Q(k) = log(k (1 - p) / ((n - k + 1) p))`` for ``1 <= k <= n``, ``+inf`` at
``k = n + 1`` (P-mass ``p^n``) and ``-inf`` at ``k = 0``. Wang et al. (2024) bound it
with their variation-ratio parameters ``(p = inf, beta = 1, q = max(1/p, 1/(1 - p)))``.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from pld import validation
from pld.numerics import binomial
from pld.randomizers.base import Randomizer

if TYPE_CHECKING:
    from pld.distribution import PLD

#: Mass of U ~ Bin(n, p) left out per tail of the window (charged to the upper side).
COIN_TAIL = 1e-30


class CoinMessages(Randomizer):
    """Each user's bit and one coin message (module docstring); exact when shuffled."""

    def __init__(self, p: float):
        self.p = p

    def __repr__(self) -> str:
        return f"binary_sum_coins(p={self.p!r})"

    @property
    def eps0(self) -> float:
        """The bit message is the input itself: no local privacy."""
        return math.inf

    @property
    def blanket_mass(self) -> float:
        """The coin message has the same law under every input: half the messages."""
        return 0.5

    def _log_pmfs(self, n: int) -> tuple[np.ndarray, np.ndarray, float]:
        lo, hi = (int(v) for v in binomial.window(COIN_TAIL, n, self.p))
        k = np.arange(lo, hi + 2)
        left_out = float(binomial.cdf(lo - 1, n, self.p) + binomial.sf(hi, n, self.p))
        return binomial.logpmf(k - 1, n, self.p), binomial.logpmf(k, n, self.p), left_out

    def shuffled_pld(self, n: int, analysis: str, loss_grid_step: float | None) -> PLD:
        """The exact pair ``(1 + U, U)``; every analysis is this one."""
        from pld.distribution import from_pmfs
        from pld.engine import choose_loss_grid_step

        log_p, log_q, left_out = self._log_pmfs(n)
        if loss_grid_step is None:
            # The engine's rule for the spread of the loss under P (finite atoms).
            mass = np.exp(log_p)
            finite = np.isfinite(log_p) & np.isfinite(log_q)
            loss = log_p[finite] - log_q[finite]
            mean = float(np.dot(mass[finite], loss) / mass[finite].sum())
            spread = math.sqrt(float(np.dot(mass[finite], (loss - mean) ** 2) / mass[finite].sum()))
            loss_grid_step = choose_loss_grid_step(spread)
        return from_pmfs(
            log_p,
            log_q,
            loss_grid_step=loss_grid_step,
            truncated_mass_p=left_out,
            truncated_mass_q=left_out,
        )

    def blanket_profile(
        self, n: int, eps: np.ndarray, *, lower_side: bool = True
    ) -> tuple[np.ndarray, np.ndarray]:
        """The pair's hockey stick, both orders (the larger), from its exact atoms."""
        log_p, log_q, left_out = self._log_pmfs(n)
        p, q = np.exp(log_p), np.exp(log_q)
        alpha = np.exp(eps)[:, None]
        forward = np.maximum(p[None, :] - alpha * q[None, :], 0.0).sum(axis=1)
        backward = np.maximum(q[None, :] - alpha * p[None, :], 0.0).sum(axis=1)
        value = np.maximum(forward, backward)
        slack = 1e-12 * value
        return np.maximum(value - slack, 0.0), np.minimum(value + slack + left_out, 1.0)

    def quick_blanket_upper(self, n: int, eps: np.ndarray) -> np.ndarray:
        return self.blanket_profile(n, eps)[1]

    def observer(self, n: int, loss_grid_step: float | None = None) -> PLD:
        """The exact pair is one concrete pair of datasets (all others known)."""
        return self.shuffled_pld(n, "best", loss_grid_step)


def binary_sum_coins(p: float = 0.5) -> CoinMessages:
    """Binary summation where every user also sends a Bernoulli(p) coin (Balcer and Cheu 2020).

    ``pld.shuffle(binary_sum_coins(p), n)`` is the protocol's exact one-round PLD
    (module docstring).

    Parameters
    ----------
    p : float
        Probability that a coin message is 1, in (0, 1); default 1/2 (the uniform coin).
    """
    p = validation.in_interval("p", p, 0.0, 1.0, low_open=True, high_open=True)
    return CoinMessages(p)
