"""``--mechanism shuffle`` in the CLI: randomizer options, matrix files, calibration, errors."""

from __future__ import annotations

import json

import numpy as np
import pytest

import pld
from pld.cli.commands import main


def _json(capsys, *args):
    code = main([*args, "--json", "--quiet"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return json.loads(captured.out)


def test_delta_matches_the_library(capsys):
    payload = _json(
        capsys,
        "delta", "--mechanism", "shuffle", "--n", "50", "--randomizer", "krr",
        "--k", "4", "--gamma", "0.25", "--eps", "0.5", "1.0",
    )  # fmt: skip
    expected = pld.shuffle(pld.randomizers.krr(4, gamma=0.25), 50).delta_bounds([0.5, 1.0])
    np.testing.assert_allclose(payload["delta_upper"], expected[1], rtol=1e-12)


@pytest.mark.parametrize("suffix", [".csv", ".npy"])
def test_matrix_file(capsys, tmp_path, suffix):
    probs = np.array([[0.5, 0.3, 0.2], [0.2, 0.5, 0.3], [0.3, 0.2, 0.5]])
    path = tmp_path / f"m{suffix}"
    if suffix == ".csv":
        np.savetxt(path, probs, delimiter=",")
    else:
        np.save(path, probs)
    payload = _json(
        capsys, "epsilon", "--mechanism", "shuffle", "--n", "50", "--randomizer", "matrix",
        "--matrix", str(path), "--delta", "1e-6",
    )  # fmt: skip
    expected = pld.shuffle(pld.randomizers.matrix(probs), 50).epsilon(1e-6)
    assert payload["eps_upper"] == pytest.approx(expected, rel=1e-12)


def test_calibrate_gamma_meets_the_target(capsys):
    payload = _json(
        capsys, "calibrate", "--mechanism", "shuffle", "--n", "20", "--randomizer", "rr",
        "--param", "gamma", "--target-eps", "1.0", "--target-delta", "1e-3",
        "--tolerance", "0.05",
    )  # fmt: skip
    gamma = payload["value"]
    assert pld.shuffle(pld.randomizers.krr(2, gamma=gamma), 20).delta(1.0) <= 1e-3
    assert payload["delta_upper"] <= 1e-3
    # One lattice step more generous (smaller gamma) misses the target.
    assert pld.shuffle(pld.randomizers.krr(2, gamma=gamma / 1.05), 20).delta(1.0) > 1e-3


@pytest.mark.parametrize(
    "args, message",
    [
        (["--randomizer", "matrix"], "needs --matrix"),
        (["--randomizer", "krr", "--k", "4", "--gamma", "0"], "no amplification"),
        (["--randomizer", "olh", "--eps0", "1"], "needs --domain"),
        (["--randomizer", "matrix", "--matrix", "missing.csv"], "no such file"),
        (["--randomizer", "krr", "--k", "4", "--gamma", "0.5", "--analysis", "x"], "invalid"),
    ],
)
def test_errors_are_one_line_and_exit_2(capsys, args, message):
    code = main(["epsilon", "--mechanism", "shuffle", "--n", "10", *args, "--delta", "1e-6"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("pld: error:") and message in err and err.count("\n") == 1


def test_groups_and_messages_match_the_library(capsys):
    payload = _json(
        capsys,
        "delta", "--mechanism", "shuffle", "--group", "krr,k=3,eps0=1:3",
        "--group", "krr,k=3,eps0=3:2", "--eps", "0.5",
    )  # fmt: skip
    groups = [(pld.randomizers.krr(3, eps0=1.0), 3), (pld.randomizers.krr(3, eps0=3.0), 2)]
    np.testing.assert_allclose(
        payload["delta_upper"], pld.shuffle(groups).delta_bounds([0.5])[1], rtol=1e-12
    )
    payload = _json(
        capsys,
        "delta", "--mechanism", "shuffle", "--n", "3", "--randomizer", "rr", "--eps0", "1",
        "--messages", "2", "--eps", "0.5",
    )  # fmt: skip
    expected = pld.shuffle(pld.randomizers.krr(2, eps0=1.0), 3, messages=2).delta_bounds([0.5])
    np.testing.assert_allclose(payload["delta_upper"], expected[1], rtol=1e-12)


@pytest.mark.parametrize(
    "args, message",
    [
        (["--group", "krr,k=3,eps0=1"], "NAME[,key=value...]:COUNT"),
        (["--group", "krr,k=3,eps0=1:x"], "COUNT must be a positive integer"),
        (["--group", "krr,k=3,eps0=1:0"], "count must be an integer >= 1"),
        (["--group", "krr,q=3:5"], "key=value"),
        (["--group", "krr,k=3,eps0=1:5", "--n", "5"], "drop --n"),
        (["--group", "krr,k=3,eps0=1:5", "--group", "krr,k=4,eps0=1:5"], "same inputs"),
        (["--n", "5", "--randomizer", "rr", "--eps0", "1", "--messages", "0"], "messages"),
        ([], "give --n and --randomizer"),
    ],
)
def test_group_errors_are_one_line_and_exit_2(capsys, args, message):
    code = main(["epsilon", "--mechanism", "shuffle", *args, "--delta", "1e-6"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("pld: error:") and message in err and err.count("\n") == 1
