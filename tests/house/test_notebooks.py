"""The paper-reproduction notebooks: reviewable sources, executed copies, quick runs.

Each notebook is a jupytext percent-format source ``notebooks/X.py`` paired with the
executed ``notebooks/X.ipynb`` (``notebooks/README.md``). Sources are found by globbing, so
a new notebook is checked as soon as it is added. This file asserts that every source has
its executed notebook and no executed notebook lacks a source, that the committed cells are
exactly the source's cells, that the committed notebook was run in full mode without errors
and shows a figure, and that every source runs top to bottom in a fresh kernel with
``PLD_NOTEBOOK_QUICK=1`` (a reduced workload) and ``PLD_FIGURE_DIR`` pointing at a
temporary directory (the committed figures are not overwritten), writing its figure there.
The notebooks check their own numbers against independent truths where one exists (the
exact Gaussian delta for n = 1 in the Monte Carlo notebook, the printed digits of Liew and
Takahashi (2022), Table 1, overlapping brackets of two independent computations in Koskela
et al. (2023), Fig. 1, connect-the-dots never below the profile in its Fig. 2) with
``assert`` statements, so a drift fails here. Measured: the ten notebooks take about 60 s in
quick mode on the 2-core machine, kernel start-up included.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"
# A jupytext percent-format source starts with this YAML header (other .py files, such as
# notebooks/execute.py, are tools, not notebooks).
_HEADER = "# ---\n# jupyter:\n"

_MISSING = [
    m
    for m in ("jupytext", "nbclient", "nbformat", "ipykernel", "matplotlib")
    if not importlib.util.find_spec(m)
]
pytestmark = pytest.mark.skipif(
    bool(_MISSING),
    reason=f"notebook tests need {', '.join(_MISSING)} (pip install '.[notebooks]')",
)


def _sources() -> list[str]:
    return sorted(
        path.stem
        for path in NOTEBOOKS.glob("*.py")
        if path.read_text(encoding="utf-8").startswith(_HEADER)
    )


def _cells(notebook) -> list[tuple[str, str]]:
    return [(cell.cell_type, cell.source) for cell in notebook.cells]


def test_every_source_has_its_executed_notebook_and_no_stale_notebook() -> None:
    sources = _sources()
    assert sources, "no notebook source found"
    assert sources == sorted(path.stem for path in NOTEBOOKS.glob("*.ipynb"))


@pytest.mark.parametrize("name", _sources())
def test_committed_notebook_has_the_cells_of_its_source(name: str) -> None:
    import jupytext
    import nbformat

    committed = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
    assert _cells(committed) == _cells(jupytext.read(NOTEBOOKS / f"{name}.py"))


@pytest.mark.parametrize("name", _sources())
def test_committed_notebook_was_executed_in_full_and_shows_its_figure(name: str) -> None:
    import nbformat

    committed = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
    code = [c for c in committed.cells if c.cell_type == "code"]
    assert all(c.get("execution_count") for c in code), "committed notebook was not executed"
    errors = [o for c in code for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors
    assert "QUICK = False" in code[0].outputs[0]["text"], "committed outputs must be the full run"
    images = [o for c in code for o in c.get("outputs", []) if "image/png" in o.get("data", {})]
    assert images, "the committed notebook shows no figure"


@pytest.mark.parametrize("name", _sources())
def test_notebook_runs_in_quick_mode(name: str, tmp_path: Path, monkeypatch) -> None:
    import jupytext
    from nbclient import NotebookClient

    monkeypatch.setenv("PLD_NOTEBOOK_QUICK", "1")
    monkeypatch.setenv("PLD_FIGURE_DIR", str(tmp_path))
    paths = [str(ROOT), os.environ.get("PYTHONPATH", "")]
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in paths if p))
    notebook = jupytext.read(NOTEBOOKS / f"{name}.py")
    client = NotebookClient(
        notebook,
        timeout=300,
        kernel_name="python3",
        resources={"metadata": {"path": str(NOTEBOOKS)}},
    )
    client.execute()
    code = [c for c in notebook.cells if c.cell_type == "code"]
    assert "QUICK = True" in code[0].outputs[0]["text"]
    assert len(list(tmp_path.glob("*.png"))) >= 1
