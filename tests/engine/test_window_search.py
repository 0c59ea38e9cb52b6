"""The composition window's Chernoff search (pld.engine.tails): against the former
coarse-then-exact search, a dense scan of every lattice exponent, and the true
tail masses of small compositions."""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest

import pld
from pld.engine import tails


@functools.cache
def _pmf(name: str):
    build = {
        "krr": lambda: pld.krr(1000, 4, 0.25, "weak"),
        "sg": lambda: pld.subsampled_gaussian(1.0, 0.01),
        "cl": lambda: pld.clones(10_000, 1.0, variant="stronger"),
        "g": lambda: pld.gaussian(2.0),
        "rr": lambda: pld.randomized_response(1.0),
    }[name[:-2]]()
    direction = build._directions[int(name[-2])]
    return direction.upper if name[-1] == "u" else direction.lower


#: (pmf, count, tail target, low, high) of the search before the lattice one (its
#: 512-bin outward-coarsened MGFs on 41 exponents, then the exact MGF at 9
#: exponents a quarter of an octave apart), measured on the same pmfs.
FORMER_WINDOWS = [
    ("krr0u", 1, 1e-15, -1152, 2565),
    ("krr0u", 1, 1e-06, -724, 1380),
    ("krr0u", 10, 1e-15, -3476, 4408),
    ("krr0u", 10, 1e-06, -2159, 2438),
    ("krr0u", 100, 1e-15, -10277, 12091),
    ("krr0u", 100, 1e-06, -6181, 7991),
    ("krr0u", 1000, 1e-15, -26298, 44374),
    ("krr0u", 1000, 1e-06, -13361, 31432),
    ("krr0l", 1, 1e-15, -1152, 1168),
    ("krr0l", 10, 1e-15, -3476, 3664),
    ("krr0l", 100, 1e-06, -6181, 7990),
    ("krr0l", 1000, 1e-15, -26305, 44366),
    ("sg0u", 1, 1e-15, -81, 30001),
    ("sg0u", 1, 1e-06, -81, 12427),
    ("sg0u", 10, 1e-15, -810, 34288),
    ("sg0u", 10, 1e-06, -810, 14371),
    ("sg0u", 100, 1e-15, -4979, 36701),
    ("sg0u", 100, 1e-06, -3721, 15301),
    ("sg0u", 1000, 1e-15, -21737, 45997),
    ("sg0u", 1000, 1e-06, -14520, 23316),
    ("sg1u", 1, 1e-15, -27945, 81),
    ("sg1u", 10, 1e-06, -12034, 810),
    ("sg1u", 100, 1e-15, -32187, 4999),
    ("sg1u", 1000, 1e-06, -20065, 15410),
    ("cl0u", 1, 1e-15, -740, 8000),
    ("cl0u", 1, 1e-06, -530, 4293),
    ("cl0u", 10, 1e-15, -2644, 11390),
    ("cl0u", 100, 1e-06, -5248, 6693),
    ("cl0u", 1000, 1e-15, -25864, 27315),
    ("cl0l", 1, 1e-15, -740, 740),
    ("cl0l", 10, 1e-06, -1674, 1687),
    ("cl0l", 1000, 1e-15, -25874, 27125),
    ("g0u", 1, 1e-15, -4020, 4270),
    ("g0u", 10, 1e-06, -7081, 9581),
    ("g0u", 100, 1e-15, -29060, 54060),
    ("g0u", 1000, 1e-15, -6422, 256423),
    ("g0u", 1000, 1e-06, 41698, 208302),
    ("rr0u", 10, 1e-15, -10000, 10000),
    ("rr0u", 100, 1e-15, -33718, 100000),
    ("rr0u", 1000, 1e-15, 219036, 683218),
    ("rr0u", 1000, 1e-06, 310574, 604856),
]


def _window(name: str, count: int, target: float, memo: dict | None = None):
    pmf = _pmf(name)
    memos = None if memo is None else [memo]
    return tails.composition_window(
        [(pmf.offset, pmf.masses)], [count], pmf.step, target, memos=memos
    )


@pytest.mark.parametrize("name, count, target, low, high", FORMER_WINDOWS)
def test_window_no_wider_than_the_former_search(name, count, target, low, high):
    """Each window is at most 0.15 % (and 2 points) wider than the former search's
    (measured worst: 0.14 %, sg0u at T = 1, where the end is a sharp V in log t and
    the former search hit a point between two lattice exponents), its tail charges
    are within the target, and the memoised search returns the same window."""
    window = _window(name, count, target)
    assert window.high - window.low <= (high - low) * 1.0015 + 2
    assert window.mass_above <= target and window.mass_below <= target
    memo: dict = {}
    assert _window(name, count, target, memo) == window
    assert _window(name, count, target, memo) == window  # from the memo


@pytest.mark.parametrize("name", ["krr0u", "cl0l", "g0u", "sg1u"])
@pytest.mark.parametrize("count", [1, 10, 1000])
def test_window_ends_are_the_best_lattice_exponents(name, count):
    """Against every lattice exponent up to |t| h = 64: the search's ends are the
    best ones (the end is quasi-convex in t, so the search cannot miss them), they
    lie above the scan's lower bound, and each charge is the smallest lattice
    Chernoff bound at its threshold (up to the rounding of the margin-raised sums,
    1e-9 relatively)."""
    pmf = _pmf(name)
    target = 1e-15
    memo: dict = {}
    window = _window(name, count, target, memo)
    points, _ = tails._starts(
        [(pmf.offset, pmf.masses)], [count], [memo], math.log(target), [1, -1]
    )
    ks = range(-640, tails._TOP + 1)
    for side, end, charge in (
        (1, window.high, window.mass_above),
        (-1, window.low, window.mass_below),
    ):
        keys = [(side, k) for k in ks]
        logs, ends = tails._ends(
            [(pmf.offset, pmf.masses)], [memo], [count], pmf.step, keys, math.log(target)
        )
        support = count * (pmf.offset + (pmf.masses.shape[0] - 1 if side == 1 else 0))
        if side == 1:
            best = min(support, math.ceil(float(np.min(ends)) / pmf.step))
        else:
            best = max(support, math.floor(float(np.max(ends)) / pmf.step))
        assert end == best
        if end != support:
            assert ks[int(np.argmin(side * ends))] >= points[side][0] + tails._SCAN_STEP - 1
            threshold = (end + side) * pmf.step
            lattice = min(
                1.0, math.exp(float(np.min(logs - tails._rates(keys) / pmf.step * threshold)))
            )
            assert lattice <= charge <= lattice * (1 + 1e-9)


def _dense_check(name: str, count: int, target: float) -> None:
    """The window's ends are the best lattice exponents' and its charges the smallest
    lattice Chernoff bounds at their thresholds, against every lattice exponent."""
    pmf = _pmf(name)
    memo: dict = {}
    window = _window(name, count, target, memo)
    pair = [(pmf.offset, pmf.masses)]
    for side, end, charge in (
        (1, window.high, window.mass_above),
        (-1, window.low, window.mass_below),
    ):
        keys = [(side, k) for k in range(-640, tails._TOP + 1)]
        logs, ends = tails._ends(pair, [memo], [count], pmf.step, keys, math.log(target))
        support = count * (pmf.offset + (pmf.masses.shape[0] - 1 if side == 1 else 0))
        if side == 1:
            assert end == min(support, math.ceil(float(np.min(ends)) / pmf.step))
        else:
            assert end == max(support, math.floor(float(np.max(ends)) / pmf.step))
        if end != support:
            threshold = (end + side) * pmf.step
            lattice = math.exp(float(np.min(logs - tails._rates(keys) / pmf.step * threshold)))
            assert min(1.0, lattice) <= charge <= lattice * (1 + 1e-9)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["krr0u", "krr0l", "sg0u", "sg0l", "cl0u", "cl0l", "g0u", "rr0u"])
@pytest.mark.parametrize("count", [1, 3, 10, 100, 1000, 10_000])
@pytest.mark.parametrize("target", [1e-15, 1e-6])
def test_window_against_every_lattice_exponent_exhaustive(name, count, target):
    """The dense-lattice check of ends and charges on 96 (pmf, T, tail) cases."""
    _dense_check(name, count, target)


@pytest.mark.parametrize("counts", [(1, 1), (3, 5), (40, 200)])
def test_heterogeneous_window_ends_and_charges_are_the_best_lattice_ones(counts):
    """Two different factors (k-RR's upper and lower pmfs, on one grid): each end is
    the best lattice exponent's and each charge the smallest lattice Chernoff
    bound at its threshold, against every lattice exponent."""
    pmfs = [_pmf("krr0u"), _pmf("krr0l")]
    pairs = [(p.offset, p.masses) for p in pmfs]
    step, target = pmfs[0].step, 1e-12
    memos: list[dict] = [{}, {}]
    window = tails.composition_window(pairs, list(counts), step, target, memos=memos)
    support = {
        1: sum(c * (p.offset + p.masses.shape[0] - 1) for p, c in zip(pmfs, counts, strict=True)),
        -1: sum(c * p.offset for p, c in zip(pmfs, counts, strict=True)),
    }
    for side, end, charge in (
        (1, window.high, window.mass_above),
        (-1, window.low, window.mass_below),
    ):
        keys = [(side, k) for k in range(-640, tails._TOP + 1)]
        logs, ends = tails._ends(pairs, memos, list(counts), step, keys, math.log(target))
        if side == 1:
            assert end == min(support[1], math.ceil(float(np.min(ends)) / step))
        else:
            assert end == max(support[-1], math.floor(float(np.max(ends)) / step))
        if end != support[side]:
            threshold = (end + side) * step
            lattice = math.exp(float(np.min(logs - tails._rates(keys) / step * threshold)))
            assert min(1.0, lattice) <= charge <= lattice * (1 + 1e-9)
            assert charge <= target


@pytest.mark.parametrize("name, count, target", [("sg0u", 3, 1e-6), ("sg1u", 3, 1e-6)])
def test_charge_near_the_support_end_is_the_best_lattice_bound(name, count, target):
    """Where an end stops near the support's end, its charge's best exponent lies
    away from the end's (the scan's and zoom's points alone charge 2.1 % more on
    sg0u's lower end): the charge is the smallest lattice Chernoff bound at its
    threshold."""
    _dense_check(name, count, target)


@pytest.mark.parametrize(
    "name, count", [("krr0u", 1), ("krr0u", 3), ("krr0l", 3), ("cl0l", 1), ("cl0l", 3), ("sg0u", 1)]
)
def test_window_charges_bound_the_true_tails(name, count):
    """The charged masses outside the window bound the true composed masses there
    (the composition computed by exact convolution, target 1e-6)."""
    pmf = _pmf(name)
    composed = pmf.masses
    for _ in range(count - 1):
        composed = np.convolve(composed, pmf.masses)
    offset = count * pmf.offset
    window = _window(name, count, 1e-6)
    above = math.fsum(composed[window.high + 1 - offset :])
    below = math.fsum(composed[: max(0, window.low - offset)])
    assert above <= window.mass_above * (1 + 1e-9)
    assert below <= window.mass_below * (1 + 1e-9)
    assert window.mass_above <= 1e-6 and window.mass_below <= 1e-6


@pytest.mark.parametrize("mechanism", ["krr0", "cl0", "sg0"])
@pytest.mark.parametrize("count", [1, 10, 1000])
def test_window_started_at_the_other_bound_matches_the_full_search(mechanism, count):
    """The lower bound's search started at the upper window's exponents (another
    support, so no hint) finds the window of its own full search."""
    upper, lower = _pmf(mechanism + "u"), _pmf(mechanism + "l")
    found = _window(mechanism + "u", count, 1e-15)
    full = _window(mechanism + "l", count, 1e-15)
    near = tails.composition_window(
        [(lower.offset, lower.masses)], [count], lower.step, 1e-15, near=(found.t_up, found.t_down)
    )
    assert (near.low, near.high) == (full.low, full.high)
    assert near.mass_above <= 1e-15 and near.mass_below <= 1e-15
    assert upper.step == lower.step
