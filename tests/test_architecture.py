"""The layering of docs/architecture.md, enforced: each module imports only from its own stage or
earlier ones (deferred imports inside functions included), and no two modules import each other
through any chain (no cycles)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# Stages in data-flow order: a module may import from its own stage or an earlier one.
STAGES = (
    ("dpbase",),
    ("hardware",),
    ("costmodel", "costmodel.errors", "costmodel.units", "costmodel.names"),
    ("costmodel.collectives",),
    ("costmodel.nccl",),
    ("costmodel.calibrate",),
    ("costmodel.cluster",),
    ("costmodel.training",),
    ("costmodel.planner",),
    ("costmodel.plots",),
    ("costmodel.commands",),
    ("cli",),
)
PACKAGES = ("dpbase", "hardware", "costmodel", "cli")


def _modules() -> dict[str, Path]:
    found = {"cli": ROOT / "cli.py"}
    for package in PACKAGES[:-1]:
        for path in (ROOT / package).rglob("*.py"):
            name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            found[name.removesuffix(".__init__")] = path
    return found


MODULES = _modules()


def stage_of(module: str) -> int:
    """The stage of a module: the longest stage prefix that names it or a package holding it."""
    best, length = None, -1
    for index, prefixes in enumerate(STAGES):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > length:
                best, length = index, len(prefix)
    if best is None:
        raise AssertionError(f"{module} is in no stage of docs/architecture.md")
    return best


def imports_of(module: str) -> set[str]:
    """Project modules ``module`` imports anywhere in its body (module level or deferred)."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([node.module] if node.module else []))
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base for alias in node.names]
        else:
            continue
        found |= {t for t in targets if t.split(".")[0] in PACKAGES and t != module}
    return found


def test_every_module_has_a_stage():
    for module in MODULES:
        stage_of(module)


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_only_from_its_own_or_earlier_stages(module):
    own = stage_of(module)
    later = sorted(t for t in imports_of(module) if stage_of(t) > own)
    assert not later, f"{module} (stage {own}) imports from later stages: {later}"


def test_library_code_never_imports_the_facade():
    """``costmodel/__init__`` re-exports everything lazily; inside the library it would hide a layer."""
    users = sorted(m for m in MODULES if m != "costmodel" and "costmodel" in imports_of(m))
    assert not users, f"import the defining module instead of the costmodel facade: {users}"


def test_no_import_cycles():
    graph = {m: {t for t in imports_of(m) if t in MODULES} for m in MODULES}
    state: dict[str, int] = {}  # 1 = on the current path, 2 = done
    cycles = []

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for target in sorted(graph[node]):
            if state.get(target) == 1:
                cycles.append(path[path.index(target):] + [target])
            elif target not in state:
                visit(target, path + [target])
        state[node] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    assert not cycles, f"import cycles: {cycles}"


def test_the_checker_sees_a_violation():
    """The rule bites: a stage-3 module importing the planner (stage 8) is reported."""
    assert stage_of("costmodel.collectives.evaluate") < stage_of("costmodel.planner.grid")
    assert stage_of("hardware.loader") < stage_of("costmodel.errors")
    assert "dpbase.units" in imports_of("hardware.fields")
