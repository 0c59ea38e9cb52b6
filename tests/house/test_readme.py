"""The README, executed: what it shows is what the code prints.

* every ``$ pld ...`` line of a ```console block is run (in this process, through the
  CLI's entry point) and its output compared byte for byte with the lines below it;
* every ```python block is executed, in order (a block that starts with an import
  starts afresh, the others continue the one before, so a snippet that forgets an
  import fails), with warnings as errors: an example that warns is a bad example;
* a statement ending in ``# -> VALUE`` is evaluated and ``VALUE`` must be its value
  as :func:`shown` prints it (floats to 6 significant digits).

The default run skips the statements of :data:`SLOW_STATEMENTS` and the console
examples of :data:`SLOW_COMMANDS` (seconds each); ``-m slow`` runs everything. The
README's numbers are written by ``python tests/house/test_readme.py --write``, which
fills every ``# -> `` comment from the same evaluation: they are never typed.
"""

from __future__ import annotations

import ast
import math
import re
import shlex
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"

#: The marker of an expected value at the end of a Python line.
EXPECTED = re.compile(r"  # -> (.*)$")

#: Statements of the Python blocks that take seconds each: run with ``-m slow`` only
#: (each is the start of exactly one statement; nothing later uses their results).
SLOW_STATEMENTS = (
    'pld.krr(n=1000, k=4, gamma=0.25, adversary="weak")',
    "pld.shuffle(r, n=10_000)",
    "pld.shuffle(r, n=60_000)",
    "pld.checkin(n=10_000, p=0.01, eps0=2.0)",
    "pld.checkin(n=10_000, p=0.01, randomizer=",
    "pld.distributed_checkin(",
    "rdp = pld.rdp.shuffle_gaussian(",
    "pld.rdp.to_epsilon(rdp,",
)

#: Console examples that take seconds: run with ``-m slow`` only.
SLOW_COMMANDS = ("pld calibrate",)


def shown(value: Any) -> str:
    """How the README shows a value: floats to 6 significant digits (as the CLI)."""
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        value = float(value)
        return f"{value:.6g}" if math.isfinite(value) else str(value)
    if isinstance(value, tuple):
        return "(" + ", ".join(shown(item) for item in value) + ")"
    if isinstance(value, np.ndarray):
        return "[" + ", ".join(shown(item) for item in value.tolist()) + "]"
    if isinstance(value, list):
        return "[" + ", ".join(shown(item) for item in value) + "]"
    return repr(value)


def _fenced(kind: str) -> list[tuple[int, str]]:
    """(first line number, text) of every fenced block of ``kind``."""
    lines = README.read_text(encoding="utf-8").splitlines()
    blocks, start = [], None
    for number, line in enumerate(lines, 1):
        if start is None and line.strip() == f"```{kind}":
            start, body = number + 1, []
        elif start is not None and line.strip() == "```":
            blocks.append((start, "\n".join(body) + "\n"))
            start = None
        elif start is not None:
            body.append(line)
    return blocks


def _commands() -> list[tuple[str, str]]:
    """(command line, expected output) of every ``$ pld`` line of the console blocks."""
    examples = []
    for _, text in _fenced("console"):
        command, output = None, []
        for line in text.splitlines():
            if line.startswith("$ "):
                if command is not None:
                    examples.append((command, "".join(f"{o}\n" for o in output)))
                command, output = line[2:], []
            else:
                output.append(line)
        if command is not None:
            examples.append((command, "".join(f"{o}\n" for o in output)))
    return examples


def _statements() -> list[tuple[int, bool, str, ast.stmt, str | None]]:
    """(line, fresh, block, statement, expected value or None) in README order."""
    result = []
    for start, text in _fenced("python"):
        tree = ast.parse(text)
        lines = text.splitlines()
        fresh = bool(tree.body) and isinstance(tree.body[0], (ast.Import, ast.ImportFrom))
        for node in tree.body:
            match = EXPECTED.search(lines[node.end_lineno - 1])
            expected = match.group(1) if match else None
            if expected is not None and not isinstance(node, ast.Expr):
                raise AssertionError(
                    f"README line {start + node.lineno - 1}: '# ->' on a statement"
                )
            result.append((start + node.end_lineno - 1, fresh, text, node, expected))
            fresh = False
    return result


def _is_slow(block: str, node: ast.stmt) -> bool:
    source = ast.get_source_segment(block, node) or ""
    return source.startswith(SLOW_STATEMENTS)


def _run_python(slow: bool) -> list[tuple[int, str, str]]:
    """Execute the README's Python; return (line, expected, shown) of every checked value."""
    checked = []
    namespace: dict[str, Any] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for line, fresh, block, node, expected in _statements():
            if fresh:
                namespace = {}
            if _is_slow(block, node) and not slow:
                continue
            code = compile(ast.Module([node], []), f"README.md:{line}", "exec")
            if isinstance(node, ast.Expr):
                expression = compile(ast.Expression(node.value), f"README.md:{line}", "eval")
                value = eval(expression, namespace)  # noqa: S307 - the README's own code
                if expected is not None:
                    checked.append((line, expected, shown(value)))
            else:
                exec(code, namespace)  # noqa: S102 - the README's own code
    return checked


@pytest.fixture(autouse=True)
def _quiet_progress(monkeypatch):
    monkeypatch.setenv("PLD_PROGRESS", "0")


def test_the_slow_lists_name_readme_lines():
    sources = [ast.get_source_segment(b, n) or "" for _, _, b, n, _ in _statements()]
    for prefix in SLOW_STATEMENTS:
        assert sum(s.startswith(prefix) for s in sources) == 1, prefix
    commands = [command for command, _ in _commands()]
    assert len(commands) >= 5
    for prefix in SLOW_COMMANDS:
        assert any(c.startswith(prefix) for c in commands), prefix


def _console(capsys, command: str) -> str:
    from pld.cli.commands import main

    argv = shlex.split(command)
    assert argv[0] == "pld"
    capsys.readouterr()
    code = main(argv[1:])
    out, err = capsys.readouterr()
    assert code == 0 and err == "", err
    return out


@pytest.mark.parametrize(
    "command, output",
    [
        pytest.param(c, o, marks=[pytest.mark.slow] if c.startswith(SLOW_COMMANDS) else [])
        for c, o in _commands()
    ],
    ids=lambda value: value.split(" --")[0] if value.startswith("pld") else "",
)
def test_console_example_prints_what_the_readme_shows(capsys, command, output):
    assert _console(capsys, command) == output


def test_python_blocks_run_and_show_their_values():
    checked = _run_python(slow=False)
    assert len(checked) >= 10
    assert [(line, expected) for line, expected, _ in checked] == [
        (line, value) for line, _, value in checked
    ]


@pytest.mark.slow
def test_python_blocks_run_whole_and_show_their_values():
    checked = _run_python(slow=True)
    assert [(line, expected) for line, expected, _ in checked] == [
        (line, value) for line, _, value in checked
    ]


def _write() -> None:
    """Fill every ``# -> `` comment of the README with the value its statement shows."""
    values = {line: value for line, _, value in _run_python(slow=True)}
    lines = README.read_text(encoding="utf-8").splitlines()
    for line, value in values.items():
        lines[line - 1] = EXPECTED.sub(lambda _, shown=value: f"  # -> {shown}", lines[line - 1])
    README.write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    if sys.argv[1:] == ["--write"]:
        _write()
    else:
        print("usage: python tests/house/test_readme.py --write", file=sys.stderr)
        sys.exit(2)
