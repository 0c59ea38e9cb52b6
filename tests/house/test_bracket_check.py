"""The before/after bracket check (benchmarks/bracket_check.py): its flags and its truths.

The script runs whole matrices on two revisions (minutes); here only its judgement
is checked, on hand-made brackets, and its exact truths against the test suite's
own (tests/exact.py) and the library's Gaussian formula.
"""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import numpy as np
import pytest
from scipy.optimize import brentq

from pld.central.gaussian_mechanism import gaussian_delta
from tests.exact import rr_delta

_PATH = Path(__file__).resolve().parents[2] / "benchmarks" / "bracket_check.py"
_SPEC = importlib.util.spec_from_file_location("bracket_check", _PATH)
check = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(check)


def _answer(lower, upper, warned=False):
    return {"lower": lower, "upper": upper, "warned": warned}


@pytest.mark.parametrize(
    "base, head, flags",
    [
        ((1.0, 2.0), (1.0, 2.0), []),
        ((1.0, 2.0), (1.1, 1.9), []),  # narrower
        ((1.0, 2.0), (1.0, 2.0 + 1e-8), ["WIDER"]),  # upper higher by 5e-9 of it
        ((1.0, 2.0), (1.0, 2.0 + 1e-10), []),  # within 1e-9 of the value
        ((1.0, 2.0), (0.9, 2.0), ["WIDER"]),  # lower moved down: wider
        ((1.0, 2.0), (2.5, 3.0), ["WIDER", "DISJOINT"]),
        ((1.0, 2.0), (0.0, 0.5), ["DISJOINT"]),
        ((1.0, math.inf), (0.5, math.inf), ["WIDER"]),
        ((1.0, math.inf), (1.0, math.inf), []),
        ((1.0, 2.0), (1.0, math.inf), ["WIDER"]),
        ((1.0, 2.0), (2.0, 1.5), ["INVALID"]),
    ],
)
def test_flags(base, head, flags):
    assert check.compare(_answer(*base), _answer(*head))["flags"] == flags


def test_an_error_or_a_new_warning_on_the_head_is_flagged():
    assert check.compare(_answer(1.0, 2.0), {"error": "ValueError: x"})["flags"] == ["ERROR"]
    assert check.compare(_answer(1.0, 2.0), _answer(1.0, 2.0, warned=True))["flags"] == ["WARN"]


@pytest.mark.parametrize(
    "eps0, rounds, eps", [(1.0, 1, 0.5), (1.0, 1000, 633.1), (0.1, 100, 6.296)]
)
def test_randomized_response_truth_matches_the_binomial_sum_of_the_tests(eps0, rounds, eps):
    # Both are sums of the same positive terms; they differ by float noise only.
    expected = rr_delta(eps0, rounds, np.array([eps]))[0]
    assert check._rr_delta(eps, eps0, rounds) == pytest.approx(expected, rel=1e-10)


@pytest.mark.parametrize("sigma, rounds, eps", [(2.0, 1000, 3.0), (0.5, 1, 7.58), (20.0, 10, 0.1)])
def test_gaussian_truth_matches_the_library_formula(sigma, rounds, eps):
    expected = gaussian_delta(eps, sigma / math.sqrt(rounds))
    assert check._gaussian_delta(eps, sigma, rounds) == pytest.approx(expected, rel=1e-12)


def test_eps_truth_inverts_delta():
    key = "gaussian(2.0); T=100; raw; eps(1e-06)"
    expected = brentq(lambda e: gaussian_delta(e, 0.2) - 1e-6, 0.0, 100.0, xtol=1e-14)
    assert check.truth(key) == pytest.approx(expected, rel=1e-12)
    assert check.truth("randomized_response(1.0); T=1; raw; eps(1)") == 0.0  # delta(0) <= 1
    assert check.truth("clones(10_000, 1.0); T=1; raw; eps(1e-06)") is None
