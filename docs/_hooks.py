"""Build-time pages for the documentation site (an MkDocs hook, see mkdocs.yml).

* ``index.md`` is the repository's README.md, so the front page never drifts from it.
* ``reference/<module>.md``: one API page per public module of the ``pld`` package
  (every module whose dotted name has no part starting with ``_``, the CLI aside),
  rendered by mkdocstrings; a new module gets its page without editing anything.
"""

from __future__ import annotations

from pathlib import Path

from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parent.parent
_SKIPPED = {"pld.cli.commands", "pld.cli.rdp"}


def public_modules() -> list[str]:
    """Dotted names of the public modules of ``pld``, sorted."""
    names = []
    for path in sorted((ROOT / "pld").rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if any(part.startswith("_") for part in parts):
            continue
        name = ".".join(parts)
        if name not in _SKIPPED:
            names.append(name)
    return names


def on_files(files: Files, config) -> Files:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    files.append(File.generated(config, "index.md", content=readme))
    for name in public_modules():
        page = f"# `{name}`\n\n::: {name}\n"
        files.append(File.generated(config, f"reference/{name}.md", content=page))
    return files
