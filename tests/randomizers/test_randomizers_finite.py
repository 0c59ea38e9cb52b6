"""Finite randomizers: validation, and the presets' closed forms against their matrices."""

from __future__ import annotations

import math

import numpy as np
import pytest

import pld
from pld.randomizers import finite


def _sorted_classes(randomizer):
    out = []
    for rho_x, rho_y, mass in randomizer.blanket_classes():
        order = np.lexsort((np.round(rho_y, 9), np.round(rho_x, 9)))
        out.append((rho_x[order], rho_y[order], mass[order]))
    return out


PRESETS = [
    pld.randomizers.krr(3, gamma=0.4),
    pld.randomizers.krr(2, eps0=1.0),
    pld.randomizers.local_hashing(1.0, 3, 2),
    pld.randomizers.local_hashing(2.0, 4, 3),
    pld.randomizers.local_hashing(1.5, 2),
    pld.randomizers.hadamard(1.0, 3),
    pld.randomizers.hadamard(2.0, 6),
    pld.randomizers.unary(1.0, 3),
    pld.randomizers.unary(2.0, 4, optimized=False),
    pld.randomizers.unary(0.5, 2),
]


@pytest.mark.parametrize("preset", PRESETS, ids=repr)
def test_preset_closed_forms_match_the_matrix(preset):
    # The matrix is built independently of the closed-form classes (every hash
    # function, every Hadamard row, every bit vector written out).
    written = pld.randomizers.matrix(preset.matrix)
    assert preset.eps0 == pytest.approx(written.eps0, rel=1e-12)
    assert preset.blanket_mass == pytest.approx(written.blanket_mass, rel=1e-12)
    (got,) = _sorted_classes(preset)
    # The closed forms cover the worst pair; all pairs of a preset are alike.
    for expected in _sorted_classes(written):
        for a, b in zip(got, expected, strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-15)
    # Every dataset pair the preset proposes is one the matrix proposes too.
    written_groups = written.observer_groups()
    for groups in preset.observer_groups():
        assert any(
            all(np.allclose(a, b, rtol=1e-10, atol=1e-15) for a, b in zip(groups, ref, strict=True))
            for ref in written_groups
        )


def test_krr_parameters():
    r = pld.randomizers.krr(4, gamma=0.25)
    assert r.eps0 == pytest.approx(math.log(13.0), rel=1e-14)
    assert r.blanket_mass == pytest.approx(0.25, rel=1e-14)
    assert pld.randomizers.krr(4, eps0=r.eps0).blanket_mass == pytest.approx(0.25, rel=1e-12)


def test_olh_default_buckets_and_unary_reduction_scale():
    assert pld.randomizers.local_hashing(math.log(3.0), 100).buckets == 4
    big = pld.randomizers.unary(2.0, 10**6)
    assert big.eps0 == pytest.approx(2.0, rel=1e-12)
    assert 0 < big.blanket_mass < 1
    with pytest.raises(ValueError, match="entries"):
        big.matrix  # noqa: B018


@pytest.mark.parametrize(
    "probs, match",
    [
        ([[0.5, 0.6], [0.5, 0.5]], "row-stochastic"),
        ([[0.5, np.nan], [0.5, 0.5]], "finite"),
        ([[0.5, 0.5]], "at least 2 rows"),
        ([[1.5, -0.5], [0.5, 0.5]], "non-negative"),
        ([0.5, 0.5], "2-d"),
    ],
)
def test_bad_matrices(probs, match):
    with pytest.raises(ValueError, match=match):
        pld.randomizers.matrix(probs)


def test_bad_presets():
    with pytest.raises(ValueError, match="no amplification"):
        pld.randomizers.krr(4, gamma=0.0)
    with pytest.raises(ValueError, match="gamma"):
        pld.randomizers.krr(4, gamma=1.5)
    with pytest.raises(ValueError, match="exactly one"):
        pld.randomizers.krr(4)
    with pytest.raises(ValueError, match="eps0"):
        pld.randomizers.hadamard(-1.0, 10)
    with pytest.raises(ValueError, match="domain"):
        pld.randomizers.unary(1.0, 1)
    with pytest.raises(ValueError, match="buckets"):
        pld.randomizers.local_hashing(1.0, 10, buckets=1)


def test_row_sums_are_normalised_within_tolerance():
    r = pld.randomizers.matrix([[0.5, 0.5 + 1e-12], [0.25, 0.75]])
    assert r.matrix.sum(axis=1) == pytest.approx([1.0, 1.0], abs=1e-15)
    assert isinstance(r, finite.FiniteRandomizer)
