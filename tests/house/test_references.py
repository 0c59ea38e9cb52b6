"""Every paper the library cites is in docs/references.md.

Docstrings and comments cite papers by authors and year ("Koskela et al. (2023), Lemma 7",
"Balle and Wang 2018, Thm 8"); docs/references.md lists each paper once, under a bold label
that starts with the same first author and year. This test extracts every (first author,
year) cited in ``pld/``, ``benchmarks/`` and the notebook sources and fails on any that has
no entry, so a new citation cannot land without its reference. It also rejects the local
file names the papers once had ("seed 004").
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
REFERENCES = ROOT / "docs" / "references.md"

_NAME = r"[A-Z][a-zà-ÿ][A-Za-zà-ÿ'\-]*"
#: An author list followed by a year: "Mironov 2017", "Balle and Wang (2018",
#: "Feldman, McMillan and Talwar (2021", "Koskela et al.'s (2023".
_CITATION = re.compile(
    rf"\b({_NAME})((?:, {_NAME})*,? (?:and|&) {_NAME}| et al\.)?(?:'s)? \(?((?:19|20)\d\d)\b"
)
#: Capitalised words that precede a year without being an author.
_NOT_AUTHORS = {"The", "November", "Security", "Algorithms", "Stochastic"}


def _sources() -> list[Path]:
    files = [*ROOT.joinpath("pld").rglob("*.py"), *ROOT.joinpath("benchmarks").glob("*.py")]
    files += [p for p in ROOT.joinpath("notebooks").glob("*.py") if p.name != "execute.py"]
    return sorted(files)


def _cited() -> dict[tuple[str, str], set[str]]:
    cited: dict[tuple[str, str], set[str]] = {}
    for path in _sources():
        text = re.sub(r"\s*\n\s*#?\s*", " ", path.read_text(encoding="utf-8"))
        for match in _CITATION.finditer(text):
            author, _, year = match.groups()
            if author not in _NOT_AUTHORS:
                cited.setdefault((author, year), set()).add(str(path.relative_to(ROOT)))
    return cited


def _listed() -> set[tuple[str, str]]:
    labels = re.findall(r"^- \*\*(.+?)\*\*", REFERENCES.read_text(encoding="utf-8"), re.M)
    listed = set()
    for label in labels:
        match = re.match(rf"({_NAME}).*?\((\d{{4}})", label)
        assert match, f"references.md label without first author and year: {label!r}"
        listed.add(match.groups())
    return listed


def test_the_extraction_finds_the_core_papers() -> None:
    cited = _cited()
    for key in [("Koskela", "2023"), ("Feldman", "2021"), ("Liew", "2022"), ("Balle", "2019")]:
        assert key in cited


def test_every_cited_paper_is_in_references() -> None:
    missing = {key: files for key, files in _cited().items() if key not in _listed()}
    assert not missing, f"cited but not in docs/references.md: {missing}"


def test_no_local_file_names_of_papers() -> None:
    pattern = re.compile(r"\bseeds?[ _]?0\d\d|shared/seeds", re.I)
    offenders = [
        str(path.relative_to(ROOT))
        for path in _sources()
        if pattern.search(path.read_text(encoding="utf-8"))
    ]
    assert not offenders
