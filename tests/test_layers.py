"""The house's rules, checked: no import circles in the package, and arrows that point down the
layers (surfaces -> ops -> formats/models -> core -> errors).

Imports are read from the source with `ast`, at module level, inside functions and under
`if TYPE_CHECKING:` alike: a lazy import is still a dependency, and a type-only import says the
importer knows the imported module's classes (a circle of them is still a circle of modules).
The one arrow allowed to point back up is `Archive.extract`'s (CONVENIENCE_IMPORTS).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "gamepak"

# Layers from the bottom up; a module may import its own layer and those below it.
LAYERS = {
    "errors": 0,
    "version": 0,
    "core": 1,
    "formats": 2,
    "models": 2,
    "ops": 3,
    # The content registry names formats, models and ops modules; the surfaces read its rows.
    "content": 4,
    "fs": 5,
    "catalog": 5,
    "web": 5,
    "cli": 6,
    "demo": 7,
    "__main__": 7,
}
# The one kind of arrow that may point up (STYLE.md): a convenience method of a lower layer that
# hands the work to the operation built for it. Each pair is (importer, imported).
CONVENIENCE_IMPORTS = {
    ("gamepak.core.archive", "gamepak.ops.extract"),  # Archive.extract / extractall
}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def all_modules() -> dict[str, Path]:
    return {module_name(path): path for path in PACKAGE.rglob("*.py")}


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def imports_of(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The gamepak modules `name` imports (resolved: `from . import x` names the submodule x)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name.startswith("gamepak"))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base_parts = package.split(".")
                base_parts = base_parts[: len(base_parts) - (node.level - 1)]
                base = ".".join(base_parts + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            if base.startswith("gamepak"):
                for alias in node.names:
                    candidate = f"{base}.{alias.name}"
                    found.add(candidate if candidate in modules else base)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    found.discard(name)
    # Importing a.b.c runs a/__init__ and a/b/__init__ as well; those edges are not choices of
    # the importer, so only the named module counts.
    return {module for module in found if module in modules}


def import_graph() -> dict[str, set[str]]:
    modules = all_modules()
    return {name: imports_of(name, path, modules) for name, path in modules.items()}


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's components with more than one module (the import circles)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph.get(node, ()):
            if target not in index:
                connect(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            connect(node)
    return circles


def _without_convenience(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    return {name: {t for t in targets if (name, t) not in CONVENIENCE_IMPORTS} for name, targets in graph.items()}


def test_the_package_has_no_import_circles() -> None:
    circles = strongly_connected(_without_convenience(import_graph()))
    assert circles == [], "modules that import each other: " + "; ".join(" <-> ".join(c) for c in circles)


def test_type_only_and_function_level_imports_count(tmp_path: Path) -> None:
    package = tmp_path / "gamepak"
    (package / "sub").mkdir(parents=True)
    for name in ("__init__.py", "sub/__init__.py", "sub/low.py", "sub/lazy.py", "sub/typed.py"):
        (package / name).write_text("")
    (package / "sub" / "high.py").write_text(
        "TYPE_CHECKING = False\n"
        "if TYPE_CHECKING:\n"
        "    from .typed import Thing\n"
        "from . import low\n"
        "def later():\n"
        "    from gamepak.sub.lazy import go\n"
    )
    modules = {"gamepak.sub." + path.stem: path for path in (package / "sub").glob("*.py") if path.stem != "__init__"}
    found = imports_of("gamepak.sub.high", package / "sub" / "high.py", modules)
    assert found == {"gamepak.sub.typed", "gamepak.sub.low", "gamepak.sub.lazy"}


def test_the_circle_finder_finds_a_circle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert strongly_connected(graph) == [["a", "b", "c"]]


def layer_of(module: str) -> int:
    parts = module.split(".")
    if len(parts) == 1:
        return LAYERS["cli"] + 1  # the package's front door re-exports every layer
    return LAYERS[parts[1]]


def test_every_module_belongs_to_a_layer() -> None:
    unknown = sorted({m.split(".")[1] for m in all_modules() if "." in m and m.split(".")[1] not in LAYERS})
    assert unknown == [], f"folders or modules with no layer in LAYERS: {unknown}"


@pytest.mark.parametrize("module", sorted(all_modules()))
def test_imports_point_down_the_layers(module: str) -> None:
    graph = import_graph() if not hasattr(test_imports_point_down_the_layers, "graph") else None
    if graph is not None:
        test_imports_point_down_the_layers.graph = graph  # type: ignore[attr-defined]
    graph = test_imports_point_down_the_layers.graph  # type: ignore[attr-defined]
    if module == "gamepak":
        return
    upward = sorted(
        target
        for target in graph[module]
        if target != "gamepak" and layer_of(target) > layer_of(module) and (module, target) not in CONVENIENCE_IMPORTS
    )
    climbs = sorted(target for target in graph[module] if target == "gamepak")
    assert upward == [], f"{module} imports a layer above it: {upward}"
    assert climbs == [], f"{module} imports the package's front door (gamepak/__init__); import from core instead"
