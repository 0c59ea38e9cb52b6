"""Build-time pages for the documentation site (an MkDocs hook, see mkdocs.yml).

* ``index.md`` is the repository's README.md, so the front page never drifts from it.
* ``reference/*.md``: the API reference, one page per public area (:data:`PAGES`): what
  ``import pld`` exports, the distribution contract that mechanisms build on, the
  engine's contract, the mechanism subpackages, randomizers, RDP, integrations and
  utilities. A page lists the names its packages export (their ``__all__``), so a name
  added to an ``_EXPORTS`` map gets its entry without editing this file, and nothing
  else: a module's internals never appear. Each object is rendered once, by
  mkdocstrings, under the public name it has on that page (``pld.PLD``, not
  ``pld.distribution.loss_distribution.PLD``); a name exported by several areas is
  rendered on the first page and linked from the others.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from mkdocs.structure.files import File, Files
from mkdocs.structure.nav import Section

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Page:
    """One API page: its file stem, title, introduction and the packages it documents.

    ``groups`` orders the names of the first package into titled sections; exported
    names that no group lists are added in a last section, so none is dropped.
    """

    stem: str
    title: str
    intro: str
    packages: tuple[str, ...]
    groups: tuple[tuple[str, tuple[str, ...]], ...] = field(default=())
    submodules: bool = True


PAGES = (
    Page(
        "index",
        "API reference: `pld`",
        "Everything `import pld` exports. Every constructor returns a one-round "
        "[`PLD`][pld.distribution.loss_distribution.PLD]; compose it, then query "
        "(lower, upper) brackets on delta(eps) and eps(delta). The other pages document "
        "the subpackages: the contract a new mechanism is built from, the engine, the "
        "mechanism families, randomizers, Rényi DP and the integrations.",
        ("pld",),
        (
            ("The PLD object", ("PLD", "compose", "load", "AccuracyWarning", "BudgetError")),
            ("Building a PLD", ("from_pmfs", "from_privacy_profile", "LossAtoms")),
            (
                "Central mechanisms",
                (
                    "randomized_response",
                    "gaussian",
                    "laplace",
                    "discrete_laplace",
                    "discrete_gaussian",
                    "pure_dp",
                    "approximate_dp",
                ),
            ),
            (
                "Subsampling",
                (
                    "subsample",
                    "poisson_subsample",
                    "subsample_without_replacement",
                    "subsampled_gaussian",
                ),
            ),
            (
                "The shuffle model",
                ("shuffle", "shuffle_observer", "clones", "krr", "checkin", "distributed_checkin"),
            ),
            ("Calibration and other accountants' events", ("calibrate", "from_dp_event")),
        ),
        submodules=False,
    ),
    Page(
        "distribution",
        "Writing a mechanism: the distribution contract",
        "What a new analysis is built from (`pld.distribution`): a mechanism computes a "
        "pair of pmfs or a privacy profile and hands it to "
        "[`from_pmfs`][pld.distribution.construction.from_pmfs], "
        "[`from_bounds`][pld.distribution.construction.from_bounds] or "
        "[`from_privacy_profile`][pld.distribution.profile.from_privacy_profile] "
        "(connect-the-dots), and decorates its constructor with "
        "[`refinable`][pld.distribution.recipes.refinable] so that `rel_accuracy` "
        "refinement works. Mechanisms never reach into the engine's internals "
        "(docs/architecture.md).",
        ("pld.distribution",),
        (
            ("Constructors", ("from_pmfs", "from_bounds", "LossAtoms", "TailMoments")),
            ("Refinement", ("refinable", "check_rel_accuracy", "DEFAULT_REL_ACCURACY")),
            (
                "Privacy profiles and connect-the-dots",
                (
                    "from_privacy_profile",
                    "connect_the_dots",
                    "DiscretePair",
                    "check_eps_grid",
                    "profile_hull",
                    "lower_envelope",
                    "below_every_profile",
                    "pair_from_hull",
                    "tail_sums",
                ),
            ),
            ("Trade-off curves (f-DP)", ("tradeoff_table",)),
        ),
    ),
    Page(
        "engine",
        "The engine's public contract",
        "`pld.engine`: the accuracy knobs and the work budget shared by the whole library, "
        "and what mechanisms may use of the grid engine (one direction, one bound: "
        "[`LossPmf`][pld.engine.loss_pmf.LossPmf]; the one discretisation routine, the "
        "composition routines and the one FFT wrapper). Work above the budget is refused "
        "up front with [`BudgetError`][pld.engine.BudgetError].",
        ("pld.engine",),
        (
            (
                "Budget and defaults",
                (
                    "BudgetError",
                    "check_grid_points",
                    "max_grid_points",
                    "choose_loss_grid_step",
                    "DEFAULT_LOSS_GRID_STEP",
                    "STEPS_PER_LOSS_STD",
                    "MIN_LOSS_GRID_STEP",
                    "MAX_REFINEMENT",
                    "DEFAULT_TAIL_MASS",
                    "MAX_GRID_SIZE",
                    "MAX_REFINED_GRID_SIZE",
                    "GRID_BUDGET_VARIABLE",
                ),
            ),
            (
                "Discretisation",
                ("LossPmf", "discretise", "charge_mass", "loss_rounding_error", "SNAP_RELATIVE"),
            ),
            (
                "Composition",
                (
                    "compose_bounds",
                    "spectrum_power",
                    "tilted_compose_bounds",
                    "tiltable",
                    "tilt_exponent",
                    "clip_tails",
                    "fft",
                ),
            ),
        ),
    ),
    Page(
        "mechanisms",
        "Mechanism families",
        "The subpackages that hold the analyses, with the names they export beyond "
        "the constructors `import pld` re-exports (those are linked to the main page).",
        (
            "pld.central",
            "pld.subsampling",
            "pld.shuffling",
            "pld.shuffling.clones",
            "pld.shuffling.krr",
            "pld.shuffling.blanket",
            "pld.shuffling.checkin",
        ),
    ),
    Page(
        "randomizers",
        "Local randomizers",
        "`pld.randomizers`: the local randomizers that `pld.shuffle` accepts. A randomizer "
        "carries its behaviour (blanket profile, clone probability, observer, default "
        "grid); a new kind is a new [`Randomizer`][pld.randomizers.base.Randomizer] "
        "subclass.",
        ("pld.randomizers",),
        (
            ("The interface", ("Randomizer", "check_randomizer")),
            (
                "Finite randomizers",
                ("FiniteRandomizer", "matrix", "krr", "local_hashing", "hadamard", "unary"),
            ),
            (
                "Continuous randomizers",
                ("GaussianRandomizer", "LaplaceRandomizer", "gaussian", "laplace"),
            ),
            ("By name (the CLI's construction)", ("from_options", "NAMES")),
        ),
    ),
    Page(
        "rdp",
        "Rényi DP",
        "`pld.rdp`: Rényi-DP accountants of the papers, for comparison with the PLD "
        "bounds. Read each function's validity note: some are upper bounds, some bound "
        "one pair of datasets only, some are not certified (docs/references.md, errata).",
        ("pld.rdp",),
        (
            ("Composition and conversion", ("RdpAccountant", "to_epsilon", "to_delta", "from_pld")),
            (
                "Upper bounds",
                (
                    "gaussian",
                    "poisson_subsampled_gaussian",
                    "subsampled",
                    "distributed_checkin_gaussian",
                ),
            ),
            ("As valid as the paper they come from", ("girgis_subsampled_shuffle",)),
            (
                "The divergence of one pair of datasets (lower bounds)",
                ("shuffle_gaussian", "subsampled_shuffle_gaussian", "shuffled_checkin_gaussian"),
            ),
            ("(eps, delta) building blocks", ("shuffle_dp", "subsampled_shuffle_dp")),
            (
                "Not certified (reproductions of the papers' methods)",
                (
                    "shuffled_checkin_gaussian_conjectured",
                    "distributed_checkin_gaussian_removal",
                    "from_dp",
                    "checkin_baseline",
                    "checkin_approach1",
                    "checkin_approach2",
                ),
            ),
        ),
    ),
    Page(
        "integrations",
        "Integrations",
        "Adapters to the accounting libraries people already use, each an optional "
        "extra: Google's `dp_accounting` (events and a drop-in accountant) and Opacus.",
        ("pld.integrations",),
    ),
    Page(
        "utilities",
        "Utilities",
        "Plots, progress bars and the numerics shared across the library.",
        ("pld.plot", "pld.progress", "pld.numerics"),
    ),
)


def _source(module: str) -> ast.Module | None:
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        return None
    return ast.parse(Path(spec.origin).read_text(encoding="utf-8"))


def _is_package(module: str) -> bool:
    spec = importlib.util.find_spec(module)
    return spec is not None and spec.submodule_search_locations is not None


@cache
def _lazy_maps(module: str) -> tuple[dict[str, str], tuple[str, ...]]:
    """The ``_EXPORTS`` map and ``_SUBMODULES`` of a module, read from its source."""
    tree = _source(module)
    exports: dict[str, str] = {}
    submodules: tuple[str, ...] = ()
    for node in tree.body if tree else ():
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            if node.targets[0].id == "_EXPORTS":
                exports = ast.literal_eval(node.value)
            elif node.targets[0].id == "_SUBMODULES":
                submodules = tuple(ast.literal_eval(node.value))
    return exports, submodules


def canonical(module: str, name: str) -> str:
    """Dotted path of the module-level object ``module.name`` where it is defined.

    Follows ``_EXPORTS`` maps and ``from X import name`` statically (nothing is
    imported); a submodule resolves to itself.
    """
    exports, submodules = _lazy_maps(module)
    if name in submodules or (_is_package(module) and _is_package(f"{module}.{name}")):
        return f"{module}.{name}"
    if exports.get(name, module) != module:
        return canonical(exports[name], name)
    tree = _source(module)
    for node in tree.body if tree else ():
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if any((alias.asname or alias.name) == name for alias in node.names):
                original = next(a.name for a in node.names if (a.asname or a.name) == name)
                return canonical(node.module, original)
    return f"{module}.{name}"


def exported_names(package: str) -> list[str]:
    """The public names of ``package``: its ``__all__`` (importing it is light)."""
    return list(importlib.import_module(package).__all__)


def _sections(page: Page, package: str) -> list[tuple[str, list[str]]]:
    names = exported_names(package)
    if not page.submodules:
        names = [n for n in names if n not in _lazy_maps(package)[1]]
    sections = [(title, [n for n in group if n in names]) for title, group in page.groups]
    listed = {n for _, group in sections for n in group}
    rest = [n for n in names if n not in listed]
    if rest:
        sections.append(("Other names" if sections else "", rest))
    return [(title, group) for title, group in sections if group]


def _entry(public: str, target: str) -> str:
    short = public.rsplit(".", 1)[-1]
    return (
        f"::: {target}\n"
        "    options:\n"
        f'      heading: "{public}"\n'
        f'      toc_label: "{short}"\n'
        "      heading_level: 3\n"
    )


def _is_module(package: str) -> bool:
    """A plain module without ``__all__``: documented whole (its public members)."""
    return not hasattr(importlib.import_module(package), "__all__")


def owners() -> dict[str, str]:
    """``{defining path: public path}``: the one public name each object is rendered under.

    ``pld`` owns everything it exports; any other object belongs to the package nearest
    to where it is defined (``MAX_EPS0`` to ``pld.numerics``, not to the clones package
    that re-exports it), the first one in page order on a tie.
    """
    candidates: dict[str, list[str]] = {}
    for page in PAGES:
        for package in page.packages:
            if _is_module(package):
                candidates.setdefault(package, []).append(package)
                continue
            for _, names in _sections(page, package):
                for name in names:
                    candidates.setdefault(canonical(package, name), []).append(f"{package}.{name}")

    def rank(target: str, public: str) -> tuple[int, int]:
        package = public.rsplit(".", 1)[0]
        if package == "pld":
            return (0, 0)
        return (1, -len(package) if target.startswith(package + ".") else 0)

    return {
        target: min(publics, key=lambda public: rank(target, public))
        for target, publics in candidates.items()
    }


def page_markdown(page: Page, owner: dict[str, str]) -> str:
    """The page's markdown: each name rendered, or linked to the page that renders it."""
    lines = [f"# {page.title}", "", page.intro, ""]
    for package in page.packages:
        if len(page.packages) > 1:
            lines += [f"## `{package}`", ""]
            doc = ast.get_docstring(_source(package) or ast.Module(body=[], type_ignores=[]))
            if doc:
                lines += [doc.split("\n\n")[0], ""]
        if _is_module(package):
            lines.append(_entry(package, package))
            continue
        links = []
        for title, names in _sections(page, package):
            entries = []
            for name in names:
                target, public = canonical(package, name), f"{package}.{name}"
                if owner[target] == public:
                    entries.append(_entry(public, target))
                else:
                    links.append(f"[`{name}`][{target}] (`{owner[target]}`)")
            if entries:
                level = "###" if len(page.packages) > 1 else "##"
                lines += ([f"{level} {title}", ""] if title else []) + entries
        if links:
            lines += ["Also exported here, documented under another name: " + ", ".join(links)]
            lines.append("")
    return "\n".join(lines)


def reference_pages() -> dict[str, str]:
    """``{file name: markdown}`` of the API pages, in the order of :data:`PAGES`."""
    owner = owners()
    return {f"reference/{page.stem}.md": page_markdown(page, owner) for page in PAGES}


def on_files(files: Files, config) -> Files:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    files.append(File.generated(config, "index.md", content=readme))
    for path, content in reference_pages().items():
        files.append(File.generated(config, path, content=content))
    return files


def on_nav(nav, config, files):
    """Order the API section as :data:`PAGES` (the default order is alphabetical)."""
    order = {f"reference/{page.stem}.md": i for i, page in enumerate(PAGES)}
    for item in nav.items:
        if isinstance(item, Section) and any(
            getattr(child, "file", None) is not None and child.file.src_uri in order
            for child in item.children
        ):
            item.children.sort(key=lambda child: order.get(child.file.src_uri, len(order)))
    return nav
