"""Execute notebook sources and write the paired, executed ``.ipynb``.

Usage, from the repository root or from ``notebooks/``::

    PYTHONPATH=$PWD python notebooks/execute.py notebooks/koskela2023_fig4_krr.py [...]

Each ``X.py`` (jupytext percent format) runs top to bottom in a fresh ``python3`` kernel
whose working directory is ``notebooks/``; the executed notebook is written to ``X.ipynb``
beside it. Set ``PLD_NOTEBOOK_QUICK=1`` for the reduced workload (never commit that run).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import jupytext
import nbformat
from nbclient import NotebookClient


def execute(source: Path, timeout: int = 1800) -> nbformat.NotebookNode:
    """The notebook of ``source`` executed in a fresh kernel run from its folder."""
    notebook = jupytext.read(source)
    notebook.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    notebook.metadata.pop("jupytext", None)
    client = NotebookClient(
        notebook,
        timeout=timeout,
        kernel_name="python3",
        record_timing=False,
        resources={"metadata": {"path": str(source.resolve().parent)}},
    )
    client.execute()
    return notebook


def main(paths: list[str]) -> None:
    for name in paths:
        source = Path(name)
        start = time.perf_counter()
        nbformat.write(execute(source), source.with_suffix(".ipynb"))
        sys.stdout.write(f"{source.stem}: {time.perf_counter() - start:.1f} s\n")


if __name__ == "__main__":
    main(sys.argv[1:])
