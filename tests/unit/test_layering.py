"""The layering, checked on every module by its imports (AST): `core/` imports neither pygls nor
asyncio nor pydantic; only `rpc/` imports pygls (and lsprotocol, its types); the service imports
no pydantic either (it speaks core types)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "mimo_sidecar"
MODULES = sorted(PACKAGE.rglob("*.py"))


def imported_roots(path: Path) -> set[str]:
    """Top-level names of every module `path` imports, anywhere in it (type-checking blocks too)."""
    roots: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            roots |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            roots.add(node.module.split(".")[0])
    return roots


def area(path: Path) -> str:
    rel = path.relative_to(PACKAGE)
    return rel.parts[0] if len(rel.parts) > 1 else rel.stem


def test_every_module_is_checked() -> None:
    areas = {area(p) for p in MODULES}
    assert {"core", "service", "rpc", "wire"} <= areas and len(MODULES) > 40


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_respect_the_layers(path: Path) -> None:
    roots = imported_roots(path)
    where = area(path)
    if where != "rpc":
        assert not roots & {"pygls", "lsprotocol", "cattrs"}, f"{path}: only rpc/ may import pygls"
    if where == "core":
        assert not roots & {"asyncio", "pydantic", "pydantic_core"}, f"{path}: core/ must stay pure"
    if where == "service":
        assert not roots & {"pydantic", "pydantic_core"}, f"{path}: the service speaks core types"


def test_the_check_sees_a_violation(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text(
        "from __future__ import annotations\nif True:\n    import pygls.server\nfrom asyncio import Lock\n"
    )
    assert {"pygls", "asyncio"} <= imported_roots(bad)


# The package's top level keeps only its entry points; everything else lives in a subpackage of
# one concern (the transport, the command line, the clients, ...), so that a reader finds a module
# by its area. `rules.py` is the public name of the provider-rules checker for hosts
# (`mimo_sidecar.rules.check`): a thin re-export of `core/formats/rules.py`, whose path is internal.
TOP_LEVEL_ENTRY_POINTS = {"__init__.py", "__main__.py", "rules.py"}


def test_the_top_level_holds_only_entry_points() -> None:
    top = {p.name for p in PACKAGE.glob("*.py")}
    assert top == TOP_LEVEL_ENTRY_POINTS, f"move {sorted(top - TOP_LEVEL_ENTRY_POINTS)} into a subpackage"
