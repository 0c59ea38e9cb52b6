"""Save and load the plain state of a PLD as a small, versioned, checksummed file.

This module knows files, not PLDs: :func:`save_state` writes and :func:`load_state`
reads back a *state*, a dict of plain values (:meth:`pld.PLD.save` builds it and
:func:`pld.load` builds the PLD from it), so no module imports another that
imports it back.

The file is a compressed numpy ``.npz`` archive (no pickled objects) with:

* ``metadata``: a JSON document with the format name, the format version, the
  library version that wrote it, the symmetry, whether the PLD is a
  composition, the grid step and, for every
  direction and bound, the grid offset, the mass at +inf and the error terms of
  :class:`pld.engine.loss_pmf.LossPmf`;
* ``masses_<direction>_<bound>``: the float64 masses of each direction and bound;
* ``checksum``: the SHA-256 of the metadata and of the masses' bytes.

Loading returns the identical state (every float is stored exactly: arrays as
raw float64, scalars as JSON numbers, which round-trip exactly), so every bound
queried after loading equals the bound queried before saving. A file that is
truncated, corrupted, tampered with, written by a newer format version or not a
``pld`` file at all is refused with a ``ValueError`` saying which.

The state
---------
``{"symmetric": bool, "composed": bool, "loss_grid_step": float, "directions":
[{"upper": pmf, "lower": pmf}, ...]}`` with one direction if symmetric, two
otherwise, and ``pmf = {"offset": int, "masses": float64 ndarray,
"infinity_mass": float, "junk_mass": ..., "mass_error": float}`` (the fields of
:class:`pld.engine.loss_pmf.LossPmf` but the step and the bound).
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import os
import zipfile
from typing import Any

import numpy as np

from pld.engine import LossPmf

#: Name written in every file; files without it are not ``pld`` files.
FORMAT_NAME = "pld.PLD"
#: Version of the layout written by :func:`save_state`; :func:`load_state` reads versions up to it.
FORMAT_VERSION = 1

BOUNDS = ("upper", "lower")
#: Error terms of a pmf (fields of :class:`pld.engine.loss_pmf.LossPmf`), in the state and file.
ERROR_FIELDS = ("junk_mass", "error_max", "error_l1", "loss_error", "mass_error")
#: Fields of a pmf's state besides its masses: those of the LossPmf but the step and the bound.
PMF_FIELDS = ("offset", "infinity_mass", *ERROR_FIELDS)


def pmf_state(pmf: LossPmf) -> dict[str, Any]:
    """The plain state of one pmf (module docstring): its masses and :data:`PMF_FIELDS`."""
    state: dict[str, Any] = {name: getattr(pmf, name) for name in PMF_FIELDS}
    state["masses"] = pmf.masses
    return state


def pmf_from_state(state: dict[str, Any], step: float, bound: str) -> LossPmf:
    """The pmf of a plain state read by :func:`load_state`, on the grid of ``step`` (nats)."""
    errors = {name: state[name] for name in ERROR_FIELDS}
    return LossPmf(step, state["offset"], state["masses"], state["infinity_mass"], bound, **errors)


def _array_name(direction: int, bound: str) -> str:
    return f"masses_{direction}_{bound}"


def _checksum(metadata_text: str, arrays: list[np.ndarray]) -> str:
    digest = hashlib.sha256(metadata_text.encode("utf-8"))
    for array in arrays:
        digest.update(np.ascontiguousarray(array, dtype="<f8").tobytes())
    return digest.hexdigest()


def _pmf_metadata(pmf: dict[str, Any]) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "offset": int(pmf["offset"]),
        "size": int(np.shape(pmf["masses"])[0]),
        "infinity_mass": float(pmf["infinity_mass"]),
    }
    entry.update({name: float(pmf[name]) for name in ERROR_FIELDS})
    return entry


def save_state(state: dict[str, Any], path: str | os.PathLike[str]) -> None:
    """Write a PLD's plain state (module docstring) to ``path`` (no extension is added).

    Parameters
    ----------
    state : dict
        The state, as :meth:`pld.PLD.save` builds it.
    path : str or path-like
        Destination file; written to a temporary name first and then renamed,
        so an interrupted save never leaves a half-written file under ``path``.
    """
    from pld import __version__

    directions = []
    arrays: dict[str, np.ndarray] = {}
    for index, direction in enumerate(state["directions"]):
        entry = {}
        for bound in BOUNDS:
            pmf = direction[bound]
            entry[bound] = _pmf_metadata(pmf)
            arrays[_array_name(index, bound)] = np.ascontiguousarray(pmf["masses"], dtype="<f8")
        directions.append(entry)
    metadata = {
        "format": FORMAT_NAME,
        "version": FORMAT_VERSION,
        "library_version": __version__,
        "symmetric": bool(state["symmetric"]),
        "composed": bool(state["composed"]),
        "loss_grid_step": float(state["loss_grid_step"]),
        "directions": directions,
    }
    metadata_text = json.dumps(metadata, sort_keys=True, allow_nan=False)
    checksum = _checksum(metadata_text, list(arrays.values()))
    buffer = io.BytesIO()
    np.savez_compressed(
        buffer, metadata=np.array(metadata_text), checksum=np.array(checksum), **arrays
    )
    path = os.fspath(path)
    temporary = f"{path}.tmp-{os.getpid()}"
    try:
        with open(temporary, "wb") as handle:
            handle.write(buffer.getvalue())
        os.replace(temporary, path)
    finally:
        if os.path.exists(temporary):
            os.remove(temporary)


def _refuse(path: str, reason: str) -> ValueError:
    return ValueError(f"cannot load {path!r}: {reason}")


def _read_archive(path: str) -> dict[str, np.ndarray]:
    """Every array of the file, or ValueError if the archive cannot be read."""
    with open(path, "rb") as handle:
        content = io.BytesIO(handle.read())
    if not zipfile.is_zipfile(content):
        raise _refuse(
            path, "not an npz archive (the file is truncated, corrupted or not a pld file)"
        )
    content.seek(0)
    try:
        with np.load(content, allow_pickle=False) as archive:
            return {name: archive[name] for name in archive.files}
    except Exception as error:  # numpy and zipfile raise many kinds on damaged bytes
        raise _refuse(
            path, f"the file is truncated or corrupted ({type(error).__name__}: {error})"
        ) from error


def _finite_at_least(path: str, name: str, value: Any, low: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _refuse(path, f"{name} must be a number (got {value!r})")
    value = float(value)
    if not math.isfinite(value) or value < low:
        raise _refuse(path, f"{name} must be finite and >= {low:g} (got {value!r})")
    return value


def _checked_pmf(path: str, entry: Any, masses: np.ndarray, where: str) -> dict[str, Any]:
    if not isinstance(entry, dict):
        raise _refuse(path, f"{where}: missing metadata")
    offset = entry.get("offset")
    if isinstance(offset, bool) or not isinstance(offset, int):
        raise _refuse(path, f"{where}: offset must be an integer (got {offset!r})")
    if masses.dtype != np.float64 or masses.ndim != 1 or masses.shape[0] != entry.get("size"):
        raise _refuse(path, f"{where}: masses have the wrong type or length")
    if not np.all(np.isfinite(masses)) or np.any(masses < 0):
        raise _refuse(path, f"{where}: masses must be finite and >= 0")
    infinity_mass = _finite_at_least(path, f"{where}.infinity_mass", entry.get("infinity_mass"), 0)
    errors = {
        name: _finite_at_least(path, f"{where}.{name}", entry.get(name), 0.0)
        for name in ERROR_FIELDS
    }
    return {"offset": offset, "masses": masses.copy(), "infinity_mass": infinity_mass, **errors}


def load_state(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read the state of a PLD written by :func:`save_state` (``PLD.save``).

    Parameters
    ----------
    path : str or path-like
        The file.

    Returns
    -------
    dict
        The state that was saved, value for value (module docstring).

    Raises
    ------
    ValueError
        If the file is truncated or corrupted, its checksum does not match its
        content, it was written by a newer format version, or it is not a
        ``pld`` file.
    """
    path = os.fspath(path)
    arrays = _read_archive(path)
    if "metadata" not in arrays or "checksum" not in arrays:
        raise _refuse(path, "not a pld file (no metadata); it was not written by pld.save")
    metadata_text = str(arrays.pop("metadata")[()])
    checksum = str(arrays.pop("checksum")[()])
    try:
        metadata = json.loads(metadata_text)
    except json.JSONDecodeError as error:
        raise _refuse(path, f"the metadata is not valid JSON ({error})") from error
    if not isinstance(metadata, dict) or metadata.get("format") != FORMAT_NAME:
        raise _refuse(path, f"not a pld file (format is not {FORMAT_NAME!r})")
    version = metadata.get("version")
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise _refuse(path, f"format version must be a positive integer (got {version!r})")
    if version > FORMAT_VERSION:
        raise _refuse(
            path,
            f"format version {version} was written by a newer pld "
            f"({metadata.get('library_version')}); this one reads versions <= "
            f"{FORMAT_VERSION}: upgrade pld",
        )
    directions = metadata.get("directions")
    symmetric = metadata.get("symmetric")
    composed = metadata.get("composed")
    if not isinstance(symmetric, bool) or not isinstance(composed, bool):
        raise _refuse(path, "the metadata lacks 'symmetric' or 'composed'")
    if not isinstance(directions, list):
        raise _refuse(path, "the metadata lacks 'directions'")
    if len(directions) != (1 if symmetric else 2):
        raise _refuse(
            path,
            f"a {'symmetric' if symmetric else 'non-symmetric'} PLD cannot have "
            f"{len(directions)} directions",
        )
    expected = {_array_name(i, bound) for i in range(len(directions)) for bound in BOUNDS}
    if set(arrays) != expected:
        raise _refuse(path, f"expected the arrays {sorted(expected)} (got {sorted(arrays)})")
    ordered = [arrays[_array_name(i, bound)] for i in range(len(directions)) for bound in BOUNDS]
    if _checksum(metadata_text, ordered) != checksum:
        raise _refuse(path, "the checksum does not match the content (the file was modified)")
    step = _finite_at_least(path, "loss_grid_step", metadata.get("loss_grid_step"), 0.0)
    if not 0.0 < step <= 1.0:
        raise _refuse(path, f"loss_grid_step must lie in (0, 1] (got {step!r})")
    rebuilt = []
    for index, entry in enumerate(directions):
        if not isinstance(entry, dict):
            raise _refuse(path, f"direction {index}: missing metadata")
        rebuilt.append(
            {
                bound: _checked_pmf(
                    path,
                    entry.get(bound),
                    arrays[_array_name(index, bound)],
                    f"direction {index} {bound}",
                )
                for bound in BOUNDS
            }
        )
    return {
        "symmetric": symmetric,
        "composed": composed,
        "loss_grid_step": step,
        "directions": rebuilt,
    }
