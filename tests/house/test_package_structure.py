"""House rules that hold for the whole package.

* no import cycle (names a package exports lazily are followed to the module that
  defines them);
* a module inside a subpackage is imported from outside it only through the
  subpackage's ``__init__`` (or as one of the submodules it declares public);
* no package exports a name that is also one of its submodules (the submodule would
  shadow the name once imported);
* no folder holds more than 16 modules; no module outside the engine passes ~600 lines;
* ``import pld`` stays light, and every name it exported before the layout still is;
* no module outside ``pld.distribution`` reads a private member of a PLD (it uses the
  public contract: ``PLD.directions``, ``from_pmfs``, ``from_symmetric_pair``, ...).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "pld"

#: Every public name of ``pld`` before the package was laid out by concept.
EXPORTED_BEFORE = (
    "AccuracyWarning LossAtoms PLD approximate_dp calibrate checkin clones compose "
    "discrete_gaussian discrete_laplace distributed_checkin engine from_dp_event from_pmfs "
    "from_privacy_profile gaussian integrations krr laplace load mechanisms plot "
    "poisson_subsample progress pure_dp randomized_response randomizers rdp shuffle "
    "shuffle_observer subsample subsample_without_replacement subsampled_gaussian"
).split()

#: Largest module outside the engine, in lines ("split a module past ~600 lines").
MAX_MODULE_LINES = 650

#: Most modules in one folder.
MAX_FOLDER_MODULES = 16


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _paths() -> dict[str, Path]:
    return {_module_name(p): p for p in PACKAGE.rglob("*.py")}


def _lazy_tables(paths: dict[str, Path]) -> dict[str, tuple[dict[str, str], tuple[str, ...]]]:
    """Package -> (``_EXPORTS`` name -> module, ``_SUBMODULES``) read from its ``__init__``."""
    tables = {}
    for name, path in paths.items():
        if path.name != "__init__.py":
            continue
        exports: dict[str, str] = {}
        submodules: tuple[str, ...] = ()
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                target = getattr(node.targets[0], "id", None)
                if target == "_EXPORTS":
                    exports = ast.literal_eval(node.value)
                elif target == "_SUBMODULES":
                    submodules = tuple(ast.literal_eval(node.value))
        tables[name] = (exports, submodules)
    return tables


def _imports(path: Path, name: str) -> list[tuple[str, str | None]]:
    """(module, imported name or None) of every import that runs (not under TYPE_CHECKING)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    typing_only = {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
        for statement in node.body
        for inner in ast.walk(statement)
    }
    found: list[tuple[str, str | None]] = []
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            found += [(alias.name, None) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            found += [(base, alias.name) for alias in node.names]
    return found


def _import_graph() -> dict[str, set[str]]:
    """Module -> pld modules it imports anywhere (module level or inside functions).

    ``from package import name`` counts as an import of the module that defines
    ``name`` when the package exports it lazily, and of the submodule ``name`` when it
    is one; ``pld`` itself is left out (its names resolve on first use).
    """
    paths = _paths()
    tables = _lazy_tables(paths)
    graph: dict[str, set[str]] = {name: set() for name in paths}
    for name, path in paths.items():
        for module, imported in _imports(path, name):
            targets = [module]
            if imported is not None:
                exports, _ = tables.get(module, ({}, ()))
                targets += [f"{module}.{imported}", exports.get(imported, "")]
            graph[name].update(t for t in targets if t in paths and t not in (name, "pld"))
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle, as a list of modules, or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for target in sorted(graph[node]):
            if state.get(target) == 1:
                return stack[stack.index(target) :] + [target]
            if target not in state and (found := visit(target)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def _reaches_inside(importer: str, module: str, tables: dict) -> bool:
    """Whether ``importer`` imports ``module`` past the ``__init__`` of a package it is outside."""
    parent = module.rpartition(".")[0]
    if parent == "pld" or importer == parent or importer.startswith(parent + "."):
        return False
    _, public = tables.get(parent, ({}, ()))
    return module.rpartition(".")[2] not in public


def test_no_module_imports_another_that_imports_it_back():
    graph = _import_graph()
    assert "pld.distribution.loss_distribution" in graph
    assert graph["pld.integrations.dp_accounting"]
    assert _cycle(graph) is None, " -> ".join(_cycle(graph) or [])


def test_the_cycle_finder_finds_cycles():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_only_a_subpackage_init_is_imported_from_outside_it():
    paths = _paths()
    tables = _lazy_tables(paths)
    inits = {name for name, path in paths.items() if path.name == "__init__.py"}
    reached = []
    for name, path in paths.items():
        for module, imported in _imports(path, name):
            if imported is not None and module in inits:
                module = f"{module}.{imported}"  # from package import submodule
            if module in paths and module not in inits and _reaches_inside(name, module, tables):
                reached.append(f"{name} imports {module}")
    assert reached == []


def test_the_rule_sees_a_reach_inside():
    tables = {"pld.shuffling.clones": ({}, ())}
    assert _reaches_inside("pld.central.gaussian_mechanism", "pld.shuffling.clones.pair", tables)
    assert not _reaches_inside("pld.shuffling.clones.mechanism", "pld.shuffling.clones.pair", {})
    assert not _reaches_inside("pld.central.laplace_mechanism", "pld.validation", {})


def test_no_export_is_shadowed_by_a_submodule():
    paths = _paths()
    clashes = [
        f"{package}.{name}"
        for package, (exports, _) in _lazy_tables(paths).items()
        for name in exports
        if f"{package}.{name}" in paths
    ]
    assert clashes == []


def test_lazy_exports_name_real_objects():
    import importlib

    for package, (exports, submodules) in _lazy_tables(_paths()).items():
        module = importlib.import_module(package)
        for name in [*exports, *submodules]:
            assert getattr(module, name) is not None, f"{package}.{name}"


def test_folders_and_modules_stay_small():
    folders: dict[Path, int] = {}
    long = []
    for path in PACKAGE.rglob("*.py"):
        if path.name != "__init__.py":
            folders[path.parent] = folders.get(path.parent, 0) + 1
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if "engine" not in path.parts and lines > MAX_MODULE_LINES:
            long.append(f"{path.relative_to(ROOT)}: {lines} lines")
    assert max(folders.values()) <= MAX_FOLDER_MODULES, folders
    assert long == []


def test_every_name_exported_before_is_still_exported():
    import pld

    assert set(EXPORTED_BEFORE) <= set(pld.__all__)
    for name in pld.__all__:
        assert getattr(pld, name) is not None


def test_import_pld_stays_light():
    # Public names are lazy: importing the package loads no numerical or optional stack.
    code = (
        "import sys, pld; pld.integrations; pld.engine; pld.shuffling; "
        "print(sorted(m for m in ('numba', 'scipy', 'pyfftw', 'numpy', 'dp_accounting', 'torch', "
        "'pld.distribution.loss_distribution') if m in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert result.stdout.strip() == "[]"


def _pld_private_members() -> set[str]:
    """The private attributes and methods of :class:`pld.PLD` (``_directions``, ...)."""
    from pld.distribution import PLD

    tree = ast.parse((PACKAGE / "distribution" / "loss_distribution.py").read_text("utf-8"))
    assigned = {
        node.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == "self"
        and isinstance(node.ctx, ast.Store)
    }
    names = assigned | set(vars(PLD))
    return {name for name in names if name.startswith("_") and not name.startswith("__")}


def _private_reads(path: Path, private: set[str], root: Path = ROOT) -> list[str]:
    """``x._name`` reads of a PLD private name in a module, ``self._name`` excepted."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        f"{path.relative_to(root)}:{node.lineno}: .{node.attr}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and node.attr in private
        and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))
    ]


def test_no_module_outside_the_distribution_reads_a_private_member_of_a_pld():
    private = _pld_private_members()
    assert {"_directions", "_recipe", "_tilted", "_finest"} <= private
    outside = [
        p for p in PACKAGE.rglob("*.py") if "distribution" not in p.relative_to(PACKAGE).parts
    ]
    found = [line for path in outside for line in _private_reads(path, private)]
    assert found == []


def test_the_private_member_rule_sees_a_read(tmp_path):
    module = tmp_path / "reader.py"
    module.write_text("def f(loss):\n    return loss._directions[0], self._directions\n")
    found = _private_reads(module, _pld_private_members(), root=tmp_path)
    assert found == ["reader.py:2: ._directions"]


def test_console_scripts_name_functions_that_exist():
    # The layout moved the CLI's entry point once without its script line.
    import importlib
    import re

    text = (ROOT / "pyproject.toml").read_text("utf-8")
    section = text.partition("[project.scripts]")[2].partition("\n[")[0]
    scripts = re.findall(r'^\S+ = "([\w.]+):(\w+)"$', section, re.M)
    assert scripts
    for module, function in scripts:
        assert callable(getattr(importlib.import_module(module), function)), (module, function)
