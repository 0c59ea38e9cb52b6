"""Save/load of a PLD: exact round trip, and refusal of truncated, tampered or foreign files."""

from __future__ import annotations

import dataclasses
import io
import json

import numpy as np
import pytest

import pld
from pld.distribution import storage
from pld.engine.loss_pmf import LossPmf

EPS = np.linspace(-1.0, 3.0, 81)

# Fields of a LossPmf that the file must carry (every dataclass field but the cache).
STORED_FIELDS = ("step", "offset", "masses", "infinity_mass", "bound", *storage.ERROR_FIELDS)


@pytest.fixture(scope="module")
def samples():
    rng = np.random.default_rng(3)
    p, q = rng.dirichlet(np.ones(7)), rng.dirichlet(np.ones(7))
    return {
        # symmetric, composed (non-zero FFT error terms)
        "clones x 20": pld.clones(n=1000, eps0=1.0).self_compose(20),
        # two directions, one round
        "random pair": pld.from_pmfs(np.log(p), np.log(q), loss_grid_step=1e-3),
        # mass at +inf on the upper side only, separate lower side
        "krr strong": pld.krr(n=50, k=3, gamma=0.3),
    }


def _same_pmf(a: LossPmf, b: LossPmf) -> None:
    for name in STORED_FIELDS:
        left, right = getattr(a, name), getattr(b, name)
        if isinstance(left, np.ndarray):
            assert left.dtype == right.dtype and np.array_equal(left, right), name
        else:
            assert left == right and type(left) is type(right), name


def test_every_lossp_mf_field_is_stored():
    # If the engine adds a field to LossPmf, the file format must learn it (and its
    # version must change): this test then fails until storage is updated.
    fields = {f.name for f in dataclasses.fields(LossPmf)} - {"_cache"}
    assert fields == set(STORED_FIELDS)


@pytest.mark.parametrize("name", ["clones x 20", "random pair", "krr strong"])
def test_round_trip_is_exact(samples, name, tmp_path):
    original = samples[name]
    path = tmp_path / "loss"
    original.save(path)
    assert path.exists() and not (tmp_path / "loss.npz").exists()  # no extension added
    loaded = pld.load(path)
    assert loaded.symmetric == original.symmetric
    assert loaded.composed == original.composed
    assert loaded.loss_grid_step == original.loss_grid_step
    assert loaded == original
    assert len(loaded._directions) == len(original._directions)
    for ours, theirs in zip(original._directions, loaded._directions, strict=True):
        _same_pmf(ours.upper, theirs.upper)
        _same_pmf(ours.lower, theirs.lower)
    # Identical objects give identical answers, bit for bit, also after composing.
    assert np.array_equal(
        np.array(original.delta_bounds(EPS, rel_accuracy=1)),
        np.array(loaded.delta_bounds(EPS, rel_accuracy=1)),
    )
    assert original.epsilon_bounds(1e-6, rel_accuracy=1) == loaded.epsilon_bounds(
        1e-6, rel_accuracy=1
    )
    twice, twice_loaded = original.self_compose(2), loaded.self_compose(2)
    assert np.array_equal(
        np.array(twice.delta_bounds(EPS, rel_accuracy=1)),
        np.array(twice_loaded.delta_bounds(EPS, rel_accuracy=1)),
    )


def test_file_is_small(samples, tmp_path):
    # "Small": at most the raw float64 masses plus a few kB of metadata and zip headers.
    loss = samples["clones x 20"]
    path = tmp_path / "loss.pld"
    loss.save(path)
    raw = sum(8 * getattr(d, b).masses.size for d in loss._directions for b in ("upper", "lower"))
    assert path.stat().st_size < raw + 4096


@pytest.fixture()
def saved(samples, tmp_path):
    path = tmp_path / "loss.pld"
    samples["random pair"].save(path)
    return path


@pytest.mark.parametrize("keep", [0, 10, 200, 0.5, 0.9, -1])
def test_truncated_file_is_refused(saved, keep):
    content = saved.read_bytes()
    cut = int(len(content) * keep) if isinstance(keep, float) else keep % len(content)
    saved.write_bytes(content[:cut])
    with pytest.raises(ValueError, match="cannot load .*(truncated|corrupted)"):
        pld.load(saved)


def test_any_flipped_byte_is_refused_or_harmless(samples, saved):
    # Flip bytes all over the file: each load must either fail with ValueError or
    # return the very same PLD (bytes such as zip timestamps carry no data).
    original = samples["random pair"]
    content = saved.read_bytes()
    reference = np.array(original.delta_bounds(EPS, rel_accuracy=1))
    refused = 0
    for position in np.linspace(0, len(content) - 1, 60).astype(int):
        damaged = bytearray(content)
        damaged[position] ^= 0x5A
        saved.write_bytes(bytes(damaged))
        try:
            loaded = pld.load(saved)
        except ValueError:
            refused += 1
            continue
        assert np.array_equal(np.array(loaded.delta_bounds(EPS, rel_accuracy=1)), reference)
    assert refused >= 40


def _rewrite(path, change):
    """Rewrite a valid archive with ``change(arrays)`` applied (zip CRCs recomputed)."""
    with np.load(path, allow_pickle=False) as archive:
        arrays = {name: archive[name] for name in archive.files}
    change(arrays)
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **arrays)
    path.write_bytes(buffer.getvalue())


def test_tampered_masses_fail_the_checksum(saved):
    def nudge(arrays):
        masses = arrays["masses_0_upper"].copy()
        masses[np.argmax(masses)] *= 0.5  # a smaller upper bound: the worst tampering
        arrays["masses_0_upper"] = masses

    _rewrite(saved, nudge)
    with pytest.raises(ValueError, match="checksum"):
        pld.load(saved)


def _edit_metadata(arrays, edit):
    metadata = json.loads(str(arrays["metadata"][()]))
    edit(metadata)
    text = json.dumps(metadata, sort_keys=True)
    ordered = [arrays[storage._array_name(i, b)] for i in range(2) for b in ("upper", "lower")]
    arrays["metadata"] = np.array(text)
    arrays["checksum"] = np.array(storage._checksum(text, ordered))


def test_newer_format_version_is_refused(saved):
    _rewrite(saved, lambda a: _edit_metadata(a, lambda m: m.update(version=99)))
    with pytest.raises(ValueError, match="version 99 .*newer.*upgrade pld"):
        pld.load(saved)


def test_inconsistent_content_is_refused_even_with_a_valid_checksum(saved):
    def negative_infinity_mass(metadata):
        metadata["directions"][0]["upper"]["infinity_mass"] = -0.5

    _rewrite(saved, lambda a: _edit_metadata(a, negative_infinity_mass))
    with pytest.raises(ValueError, match="infinity_mass must be finite and >= 0"):
        pld.load(saved)


def test_files_that_are_not_pld_files_are_refused(tmp_path):
    other = tmp_path / "other.npz"
    np.savez(other, a=np.arange(3.0))
    with pytest.raises(ValueError, match="not a pld file"):
        pld.load(other)
    text = tmp_path / "notes.txt"
    text.write_text("hello")
    with pytest.raises(ValueError, match="not an npz archive"):
        pld.load(text)
    with pytest.raises(FileNotFoundError):
        pld.load(tmp_path / "missing.pld")


def test_equality_is_by_value(samples, tmp_path):
    loss = samples["random pair"]
    path = tmp_path / "loss.pld"
    loss.save(path)
    assert pld.load(path) == loss and not pld.load(path) != loss
    # Rebuilt from the same inputs: equal; any other PLD, or a non-PLD: not equal.
    rng = np.random.default_rng(3)
    p, q = rng.dirichlet(np.ones(7)), rng.dirichlet(np.ones(7))
    assert pld.from_pmfs(np.log(p), np.log(q), loss_grid_step=1e-3) == loss
    assert pld.from_pmfs(np.log(p), np.log(q), loss_grid_step=2e-3) != loss
    assert pld.from_pmfs(np.log(q), np.log(p), loss_grid_step=1e-3) != loss
    assert loss.self_compose(2) != loss and samples["krr strong"] != loss
    assert loss != "a PLD"
    with pytest.raises(TypeError):
        hash(loss)
