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


# The rooms of core/, lowest first (docs/architecture.md, "Core modules"): a room imports only the
# rooms before it and the shared vocabulary of core's top level; the vocabulary imports no room; only
# the engine and its outcomes (the top level's orchestration) may import every room.
CORE = PACKAGE / "core"
CORE_ROOMS = ["estimate", "session", "memory", "checkpoint", "formats", "rebuild", "request", "model_tools"]
CORE_VOCABULARY = {"words", "texts", "errors", "config", "tool_pointers"}
CORE_TOP = {"engine", "outcomes"}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def core_imports(path: Path, module: str) -> set[str]:
    """Every `mimo_sidecar.core` module that `path`, the source of `module`, imports, relative imports
    resolved; a name imported from a package counts as that package's module of the name
    (`from .. import texts`)."""
    here = module.split(".")
    package = here if path.name == "__init__.py" else here[:-1]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            target = ".".join(base + ([node.module] if node.module else []))
            if target.startswith("mimo_sidecar.core"):
                named = {f"{target}.{a.name}" for a in node.names}
                found |= named if target == "mimo_sidecar.core" else {target}
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("mimo_sidecar.core")}
    return found


def core_room(module: str) -> str | None:
    parts = module.split(".")
    return parts[2] if len(parts) > 2 else None


def room_violations(path: Path, module: str | None = None) -> list[str]:
    module = module or module_name(path)
    mine = core_room(module)
    if mine is None or mine in CORE_TOP:
        return []
    bad = []
    for target in sorted(core_imports(path, module)):
        theirs = core_room(target)
        if theirs is None or theirs == mine:
            continue
        if mine in CORE_VOCABULARY:
            ok = theirs in CORE_VOCABULARY
        else:
            ok = theirs in CORE_VOCABULARY or (
                theirs in CORE_ROOMS and CORE_ROOMS.index(theirs) < CORE_ROOMS.index(mine)
            )
        if not ok:
            bad.append(target)
    return bad


def test_every_module_of_core_is_in_a_known_place() -> None:
    known = set(CORE_ROOMS) | CORE_VOCABULARY | CORE_TOP
    places = {core_room(module_name(p)) for p in CORE.rglob("*.py")} - {None}
    assert places == known, f"core/ has places the layering does not know: {sorted(places - known)}"


@pytest.mark.parametrize("path", sorted(CORE.rglob("*.py")), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_core_rooms_import_only_the_rooms_below_them(path: Path) -> None:
    assert not room_violations(path), f"{path}: imports a room above its own: {room_violations(path)}"


def test_the_room_check_sees_an_upward_import(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text(
        "from ..rebuild.render import render\nfrom .. import texts, engine\n"
        "from ..estimate.jstext import est\n"
        "from .message import Message\nimport mimo_sidecar.core.request.size\n"
    )
    assert room_violations(probe, "mimo_sidecar.core.session.probe") == [
        "mimo_sidecar.core.engine",
        "mimo_sidecar.core.rebuild.render",
        "mimo_sidecar.core.request.size",
    ]
    assert room_violations(probe, "mimo_sidecar.core.request.probe") == ["mimo_sidecar.core.engine"]
    assert room_violations(probe, "mimo_sidecar.core.engine") == []


# A `type: ignore` silences the checker for a whole line, so each one is an edge the types cannot
# describe (pygls's own signatures, typeshed's IO), kept few and said why on its line.
IGNORE_BOUND = 6


def type_ignores(path: Path) -> list[tuple[int, str]]:
    """The `type: ignore` comments of `path`: line number and the text after the marker."""
    found = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        marker = line.find("# type: ignore")
        if marker >= 0:
            found.append((number, line[marker + len("# type: ignore") :]))
    return found


def test_type_ignores_are_few_and_each_says_why() -> None:
    ignores = {(p.relative_to(PACKAGE), n): rest for p in MODULES for n, rest in type_ignores(p)}
    assert len(ignores) <= IGNORE_BOUND, sorted(ignores)
    # the reason: a comment after the error code, `# type: ignore[code]  # why`
    unexplained = [where for where, rest in ignores.items() if "#" not in rest]
    assert not unexplained


def test_the_ignore_check_sees_one_without_a_reason(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("x = f()  # type: ignore[misc]\ny = g()  # type: ignore[misc]  # g is untyped\n")
    found = type_ignores(module)
    assert [n for n, _ in found] == [1, 2] and ["#" in rest for _, rest in found] == [False, True]
