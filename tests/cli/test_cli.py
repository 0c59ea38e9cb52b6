"""The command-line interface end to end (subprocess), including its failures."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.exact import rr_delta


def _run(*args):
    return subprocess.run(
        [sys.executable, "-m", "pld", *args], capture_output=True, text=True, timeout=120
    )


def test_delta_json_matches_the_exact_binomial_sum():
    result = _run(
        "delta", "--mechanism", "rr", "--eps0", "0.5", "--rounds", "20", "--eps", "1", "2", "--json"
    )
    assert result.returncode == 0, result.stderr
    payload = json.loads(result.stdout)
    assert payload["eps"] == [1.0, 2.0]
    truth = rr_delta(0.5, 20, [1.0, 2.0])
    for low, up, exact in zip(payload["delta_lower"], payload["delta_upper"], truth, strict=True):
        assert low <= exact * (1 + 1e-12) and up >= exact * (1 - 1e-12)
        assert up - low < 1e-9


def test_epsilon_json_and_table():
    result = _run(
        "epsilon",
        "--mechanism",
        "gaussian",
        "--sigma",
        "2",
        "--rounds",
        "10",
        "--delta",
        "1e-5",
        "--json",
    )
    assert result.returncode == 0, result.stderr
    payload = json.loads(result.stdout)
    assert set(payload) == {"delta", "eps_lower", "eps_upper"}
    assert payload["eps_lower"] <= payload["eps_upper"] < payload["eps_lower"] * 1.001
    table = _run(
        "epsilon", "--mechanism", "gaussian", "--sigma", "2", "--rounds", "10", "--delta", "1e-5"
    )
    assert "eps_upper:" in table.stdout


@pytest.mark.parametrize(
    "args, fragment",
    [
        (["delta", "--mechanism", "rr", "--eps0", "nan", "--eps", "1"], "eps0"),
        (["delta", "--mechanism", "rr", "--eps0", "-1", "--eps", "1"], "eps0"),
        (["delta", "--mechanism", "rr", "--eps0", "1", "--rounds", "0", "--eps", "1"], "rounds"),
        (["delta", "--mechanism", "rr", "--eps", "1"], "--eps0"),
        (["delta", "--mechanism", "nope", "--eps", "1"], "mechanism"),
        (["epsilon", "--mechanism", "gaussian", "--sigma", "1", "--delta", "2"], "delta"),
        (
            [
                "delta",
                "--mechanism",
                "gaussian",
                "--sigma",
                "0.01",
                "--loss-grid-step",
                "1e-5",
                "--rounds",
                "100000",
                "--eps",
                "1",
            ],
            "--loss-grid-step",
        ),
    ],
)
def test_bad_input_gives_one_line_and_exit_code_2(args, fragment):
    result = _run(*args)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("pld: error:") and fragment in lines[0]


def test_the_mechanism_table_names_what_each_family_declares():
    from pld.cli.commands import MechanismSpecs
    from pld.cli.mechanisms import FAMILIES

    declared = {spec.name: family for family in set(FAMILIES.values()) for spec in family()}
    assert declared == FAMILIES
    specs = MechanismSpecs()
    assert list(specs) == list(FAMILIES)
    assert all(specs[name].name == name for name in specs)


def test_a_command_imports_only_its_mechanism():
    """The README's main command loads neither numba nor the other mechanisms;
    the help of a command still lists every mechanism's options."""
    code = (
        "import sys\nfrom pld.cli.commands import main\n"
        "main(['epsilon', '--mechanism', 'clones', '--n', '10000', '--eps0', '1', "
        "'--rounds', '100', '--delta', '1e-6', '--json'])\n"
        "heavy = ('numba', 'scipy.stats', 'pld.shuffling.krr.mechanism', 'pld.shuffling.shuffler', "
        "'pld.shuffling.checkin.mechanism', 'pld.shuffling.blanket.continuous_sum')\n"
        "print('HEAVY', [m for m in heavy if m in sys.modules])\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert "HEAVY []" in result.stdout
    assert json.loads(result.stdout.splitlines()[0])["eps_upper"] > 0
    listed = _run("epsilon", "--help")
    assert listed.returncode == 0
    assert "krr: --n N --k K --gamma GAMMA" in listed.stdout
    assert "distributed-checkin:" in listed.stdout
