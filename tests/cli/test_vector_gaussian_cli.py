"""``--randomizer vector-gaussian --dim --clip`` on the command line, and its failures."""

from __future__ import annotations

import json
import subprocess
import sys

from pld.central import gaussian_delta


def _run(*args):
    return subprocess.run(
        [sys.executable, "-m", "pld", *args], capture_output=True, text=True, timeout=120
    )


def test_one_user_is_the_gaussian_mechanism_on_the_command_line():
    result = _run(
        "delta", "--mechanism", "shuffle", "--n", "1", "--randomizer", "vector-gaussian",
        "--sigma", "2", "--dim", "1000", "--clip", "0.5", "--eps", "0.5", "--json",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    payload = json.loads(result.stdout)
    exact = float(gaussian_delta(0.5, 2.0, 1.0))
    assert payload["delta_lower"][0] <= exact * (1 + 1e-9) <= payload["delta_upper"][0] * (1 + 2e-9)


def test_missing_dim_and_bad_clip_are_one_line_errors():
    base = ("epsilon", "--mechanism", "shuffle", "--n", "10", "--randomizer", "vector-gaussian")
    missing = _run(*base, "--sigma", "1", "--delta", "1e-5")
    assert missing.returncode == 2
    assert missing.stderr.strip() == "pld: error: --randomizer vector-gaussian needs --dim"
    bad = _run(*base, "--sigma", "1", "--dim", "3", "--clip", "-1", "--delta", "1e-5")
    assert bad.returncode == 2 and bad.stderr.startswith("pld: error: clip")
    assert len(bad.stderr.strip().splitlines()) == 1
