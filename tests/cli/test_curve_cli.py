"""The CLI's calibrate and curve commands, --quiet and progress bars.

The README's commands are run, and their output compared byte for byte, by
tests/house/test_readme.py. Everything here calls ``pld.cli.commands.main``
in-process to keep the suite fast, except the checks of a real terminal.
"""

from __future__ import annotations

import csv
import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import pld
from pld import progress
from pld.central.gaussian_mechanism import gaussian_delta
from pld.cli.commands import main
from pld.cli.curve import CURVE_RANGE_DELTA, DEFAULT_CURVE_POINTS
from tests.exact import round_off_floor_expected, rr_delta

REPO = Path(__file__).resolve().parents[2]


def _run(capsys, *arguments):
    code = main(list(arguments))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# -- curve ----------------------------------------------------------------------------


def test_curve_brackets_the_exact_randomised_response(capsys):
    eps = [0.0, 0.5, 1.0, 2.0]
    code, out, err = _run(
        capsys, "curve", "--mechanism", "rr", "--eps0", "0.5", "--rounds", "5", "20",
        "--eps", *map(str, eps), "--json",
    )  # fmt: skip
    assert code == 0, err
    payload = json.loads(out)
    assert payload["eps"] == eps
    assert [s["label"] for s in payload["series"]] == ["rr T=5", "rr T=20"]
    for item in payload["series"]:
        truth = rr_delta(0.5, item["rounds"], eps)
        assert np.all(np.array(item["delta_lower"]) <= truth * (1 + 1e-12))
        assert np.all(np.array(item["delta_upper"]) >= truth * (1 - 1e-12))


def test_curve_overlays_mechanisms_and_option_values(capsys, tmp_path):
    path = tmp_path / "curves.csv"
    code, out, err = _run(
        capsys, "curve", "--mechanism", "gaussian", "rr", "--sigma", "2,4", "--eps0", "0.3",
        "--rounds", "3", "--eps", "0.25", "1", "--csv", str(path), "--json",
    )  # fmt: skip
    assert code == 0, err
    assert err.strip() == f"pld: wrote {path}"
    payload = json.loads(out)
    labels = [s["label"] for s in payload["series"]]
    assert labels == ["gaussian sigma=2 T=3", "gaussian sigma=4 T=3", "rr T=3"]
    for item, sigma in zip(payload["series"][:2], (2.0, 4.0), strict=True):
        truth = gaussian_delta(np.array(payload["eps"]), sigma / np.sqrt(3))
        assert np.all(np.array(item["delta_lower"]) <= truth * (1 + 1e-9))
        assert np.all(np.array(item["delta_upper"]) >= truth * (1 - 1e-9))
    # The CSV holds the same numbers, exactly.
    with open(path, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 3 * 2
    for index, item in enumerate(payload["series"]):
        for row, eps, low, up in zip(
            rows[2 * index : 2 * index + 2],
            payload["eps"],
            item["delta_lower"],
            item["delta_upper"],
            strict=True,
        ):
            assert row["series"] == item["label"]
            assert (float(row["eps"]), float(row["delta_lower"]), float(row["delta_upper"])) == (
                eps,
                low,
                up,
            )


def test_curve_json_equals_the_library(capsys):
    code, out, _ = _run(
        capsys, "curve", "--mechanism", "krr", "--n", "200", "--k", "3", "--gamma", "0.3",
        "--adversary", "strong", "weak", "--rounds", "4", "--eps", "0.5", "1", "--json",
    )  # fmt: skip
    assert code == 0
    for item, adversary in zip(json.loads(out)["series"], ("strong", "weak"), strict=True):
        table = pld.krr(200, 3, 0.3, adversary).self_compose(4).curve([0.5, 1.0])
        assert item["delta_lower"] == table[:, 1].tolist()
        assert item["delta_upper"] == table[:, 2].tolist()


def test_default_eps_range_ends_where_delta_is_negligible(capsys):
    code, out, _ = _run(
        capsys, "curve", "--mechanism", "rr", "--eps0", "1", "--rounds", "4", "--json"
    )
    assert code == 0
    payload = json.loads(out)
    eps, upper = payload["eps"], payload["series"][0]["delta_upper"]
    assert len(eps) == DEFAULT_CURVE_POINTS and eps[0] == 0.0
    assert upper[-1] <= CURVE_RANGE_DELTA < upper[-2]
    assert eps[-1] <= 4.0  # the largest loss of 4 rounds at eps0 = 1


def test_curve_plot(capsys, tmp_path):
    pytest.importorskip("matplotlib")
    path = tmp_path / "curves.png"
    code, _, err = _run(
        capsys, "curve", "--mechanism", "rr", "--eps0", "1", "--rounds", "2", "8",
        "--eps-range", "0", "3", "--points", "20", "--plot", str(path),
    )  # fmt: skip
    assert code == 0, err
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_curve_plot_without_matplotlib_says_how_to_install_it(capsys, monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib now fails
    code, out, err = _run(
        capsys, "curve", "--mechanism", "rr", "--eps0", "1", "--eps", "1", "--plot",
        str(tmp_path / "x.png"),
    )  # fmt: skip
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1
    assert "pip install '.[plot]'" in err
    assert not (tmp_path / "x.png").exists()


@pytest.mark.parametrize(
    "arguments, fragment",
    [
        (["--eps0", "1", "--bogus", "3", "--eps", "1"], "unrecognized arguments: --bogus"),
        (["--eps0", "1,x", "--eps", "1"], "argument --eps0: invalid float value: 'x'"),
        (["--eps0", "1", "--eps-range", "2", "1"], "--eps-range needs LOW < HIGH"),
        (["--eps0", "1", "--eps", "1", "--eps-range", "0", "1"], "not allowed with"),
        (["--eps0", ",".join(["1"] * 41), "--eps", "1"], "at most 40"),
        (["--eps0", "-1", "--eps", "1"], "eps0"),
        (["--eps0", "1", "--rounds", "0", "--eps", "1"], "rounds"),
    ],
)
def test_curve_bad_input_is_one_line_and_exit_code_2(capsys, arguments, fragment):
    code, out, err = _run(capsys, "curve", "--mechanism", "rr", *arguments)
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("pld: error:") and fragment in lines[0]


# -- calibrate --------------------------------------------------------------------------


def test_calibrate_json_equals_the_library(capsys):
    code, out, err = _run(
        capsys, "calibrate", "--mechanism", "rr", "--rounds", "30", "--target-eps", "1",
        "--target-delta", "1e-6", "--param", "eps0", "--tolerance", "1e-2", "--json",
    )  # fmt: skip
    assert code == 0, err
    payload = json.loads(out)
    result = pld.calibrate(
        pld.randomized_response, "eps0", rounds=30, target_eps=1.0, target_delta=1e-6,
        tolerance=1e-2,
    )  # fmt: skip
    assert payload == {
        "param": "eps0",
        "value": result.value,
        "eps_upper": result.eps_upper,
        "delta_upper": result.delta_upper,
    }
    # and the value is right: exact binomial delta at it meets the target
    assert rr_delta(result.value, 30, [1.0])[0] <= 1e-6


def test_calibrate_rounds(capsys):
    code, out, _ = _run(
        capsys, "calibrate", "--mechanism", "rr", "--eps0", "0.02", "--target-eps", "1",
        "--target-delta", "1e-6", "--param", "rounds", "--json",
    )  # fmt: skip
    assert code == 0
    value = json.loads(out)["value"]
    assert isinstance(value, int)
    assert rr_delta(0.02, value, [1.0])[0] <= 1e-6


CALIBRATE_ERRORS = [
    (["--mechanism", "clones", "--n", "100", "--param", "p"], "--param must be one of n, eps0"),
    (["--mechanism", "rr", "--eps0", "1", "--param", "eps0"], "--eps0 is what --param eps0"),
    (["--mechanism", "rr", "--eps0", "1", "--rounds", "3", "--param", "rounds"], "--rounds is"),
    (["--mechanism", "rr", "--param", "eps0", "--target-delta", "2"], "target_delta must lie"),
    (["--mechanism", "rr", "--eps0", "3", "--param", "rounds"], "the most private, rounds=1"),
    (["--mechanism", "gaussian", "--param", "sigma", "--bounds", "2", "1"], "bounds"),
]


@pytest.mark.parametrize("arguments, fragment", CALIBRATE_ERRORS)
def test_calibrate_bad_input_is_one_line_and_exit_code_2(capsys, arguments, fragment):
    defaults = {"--target-eps": "0.5", "--target-delta": "1e-6"}
    for flag, value in defaults.items():
        if flag not in arguments:
            arguments = [*arguments, flag, value]
    code, out, err = _run(capsys, "calibrate", *arguments)
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("pld: error:") and fragment in lines[0]


# -- parsing, --quiet, start-up, progress -------------------------------------------------


def test_short_mechanism_options_are_not_taken_for_abbreviations(capsys):
    # --m (subsampled-clones) used to be read as an abbreviation of --mechanism.
    code, out, err = _run(
        capsys, "epsilon", "--mechanism", "subsampled-clones", "--n", "1000", "--m", "100",
        "--eps0", "1", "--delta", "1e-6", "--json",
    )  # fmt: skip
    assert code == 0, err
    assert set(json.loads(out)) == {"delta", "eps_lower", "eps_upper"}


@pytest.mark.parametrize("position", [0, 1, -1])
def test_quiet_is_accepted_anywhere(capsys, position):
    arguments = ["delta", "--mechanism", "rr", "--eps0", "1", "--eps", "1", "--json"]
    arguments.insert(position if position >= 0 else len(arguments), "--quiet")
    code, out, err = _run(capsys, *arguments)
    assert code == 0 and err == ""
    assert json.loads(out)["eps"] == [1.0]
    assert progress.get_default() is None  # restored after the command


def test_help_does_not_import_the_mechanisms():
    code = (
        "import sys\nfrom pld.cli.commands import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "heavy = ('numba', 'scipy.stats', 'pld.shuffling.clones.mechanism')\n"
        "print('HEAVY', [m for m in heavy if m in sys.modules])\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert "usage: pld" in result.stdout and "calibrate" in result.stdout
    assert "HEAVY []" in result.stdout


def _stderr_on_a_terminal(arguments):
    controller, terminal = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "pld", *arguments],
        stdout=subprocess.PIPE,
        stderr=terminal,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO), "PLD_PROGRESS": ""},
    )
    os.close(terminal)
    chunks = []
    while True:
        try:
            data = os.read(controller, 4096)
        except OSError:  # the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    stdout, _ = process.communicate(timeout=300)
    os.close(controller)
    return process.returncode, stdout.decode(), b"".join(chunks).decode(errors="replace")


CALIBRATION = [
    "calibrate", "--mechanism", "clones", "--n", "10000", "--rounds", "100", "--target-eps",
    "1", "--target-delta", "1e-6", "--param", "eps0", "--tolerance", "0.05", "--json",
]  # fmt: skip


def test_long_work_shows_a_progress_bar_on_a_terminal_unless_quiet():
    pytest.importorskip("tqdm")
    code, out, bar = _stderr_on_a_terminal(CALIBRATION)
    assert code == 0 and json.loads(out)["param"] == "eps0"
    assert "calibrating eps0" in bar and "eval" in bar
    code, out, bar = _stderr_on_a_terminal([*CALIBRATION, "--quiet"])
    assert code == 0 and json.loads(out)["param"] == "eps0"
    assert bar == ""


def test_progress_switches(monkeypatch):
    pytest.importorskip("tqdm")
    monkeypatch.delenv(progress.ENVIRONMENT_VARIABLE, raising=False)
    assert progress.is_enabled() is False  # pytest captures stderr: not a terminal
    assert progress.is_enabled(True) is True
    monkeypatch.setenv(progress.ENVIRONMENT_VARIABLE, "1")
    assert progress.is_enabled() is True
    assert progress.is_enabled(False) is False
    monkeypatch.setenv(progress.ENVIRONMENT_VARIABLE, "0")
    assert progress.is_enabled() is False
    progress.set_default(True)
    try:
        assert progress.is_enabled() is True
    finally:
        progress.set_default(None)
    with pytest.raises(ValueError, match="enabled must be True, False or None"):
        progress.set_default("yes")
    assert list(progress.track(range(5), enabled=False)) == [0, 1, 2, 3, 4]
    assert list(progress.track(iter("abc"), enabled=True)) == ["a", "b", "c"]
    with progress.progress_bar(total=3, enabled=True) as bar:
        bar.update(2)
        assert bar.n == 2  # a real tqdm bar


def test_plot_module_draws_a_line_and_a_band_per_curve(tmp_path):
    pytest.importorskip("matplotlib")
    from pld.plot import plot_curves, save_csv

    eps = np.linspace(0.0, 2.0, 9)
    with round_off_floor_expected():  # T = 4: delta is 0 at eps = 2
        curves = {
            f"T={t}": pld.randomized_response(0.5).self_compose(t).curve(eps) for t in (4, 16)
        }
    figure = plot_curves(curves, title="rr")
    (axes,) = figure.axes
    assert [line.get_label() for line in axes.get_lines()] == ["T=4", "T=16"]
    assert len(axes.collections) == 2  # the two brackets
    assert axes.get_yscale() == "log"
    # the drawn upper line is the curve's upper column, zeros left out on the log axis
    upper = curves["T=16"][:, 2]
    drawn = axes.get_lines()[1].get_ydata()
    assert np.array_equal(np.isnan(drawn), upper <= 0)
    assert np.array_equal(drawn[upper > 0], upper[upper > 0])
    with pytest.raises(ValueError, match="table of \\(eps, delta_lower, delta_upper\\) rows"):
        save_csv({"bad": np.zeros((3, 2))}, tmp_path / "x.csv")
    with pytest.raises(ValueError, match="non-empty mapping"):
        plot_curves({})
