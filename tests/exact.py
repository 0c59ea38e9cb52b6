"""Independent truths for the engine tests: closed forms and brute-force enumeration."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
from scipy.stats import binom


@contextmanager
def round_off_floor_expected() -> Iterator[None]:
    """Around a query that reaches eps where delta is at the round-off floor (~1e-13):
    the only warnings allowed are AccuracyWarnings that name floating-point error as
    what keeps the bracket wider than asked (the tests bound that width themselves)."""
    from pld import AccuracyWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield
    for item in caught:
        assert issubclass(item.category, AccuracyWarning), item
        assert "floating-point" in str(item.message), item.message


def rr_delta(eps0: float, rounds: int, eps: np.ndarray) -> np.ndarray:
    """delta(eps) of ``rounds`` compositions of eps0-randomised response (binomial sum).

    The loss is eps0 (2K - T) with K ~ Bin(T, e^eps0 / (1 + e^eps0)) under P.
    """
    p = np.exp(eps0) / (1 + np.exp(eps0))
    k = np.arange(rounds + 1)
    loss = eps0 * (2 * k - rounds)
    weight = binom.pmf(k, rounds, p)
    eps = np.atleast_1d(np.asarray(eps, dtype=float))
    with np.errstate(over="ignore"):
        gains = [np.clip(-np.expm1(e - loss), 0, None) for e in eps]
    return np.array([np.sum(weight * g) for g in gains])


def product_delta(pairs: list[tuple[np.ndarray, np.ndarray]], eps: np.ndarray) -> np.ndarray:
    """max over both directions of H_{e^eps}(prod P_i || prod Q_i), by enumerating outcomes."""
    eps = np.atleast_1d(np.asarray(eps, dtype=float))
    p_joint = np.array([1.0])
    q_joint = np.array([1.0])
    for p, q in pairs:
        p_joint = np.outer(p_joint, p).ravel()
        q_joint = np.outer(q_joint, q).ravel()
    forward = [np.sum(np.clip(p_joint - np.exp(e) * q_joint, 0, None)) for e in eps]
    backward = [np.sum(np.clip(q_joint - np.exp(e) * p_joint, 0, None)) for e in eps]
    return np.maximum(forward, backward)
