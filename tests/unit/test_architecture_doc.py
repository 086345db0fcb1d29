"""docs/architecture.md names every module of the package, and names no module that does not exist.

A module is named by its path under `mimo_sidecar/` (`service/sessions.py`), anywhere in the
document; a module of `core/` may instead be named in the "Core modules" table by its path under
`core/` without `.py` (`estimate/jstext`, `formats/model`), as that table's first column does. Package
`__init__.py` files are not modules of their own here.

The other direction: every `.py` path the document writes (a bare file name, such as a test's,
may stand for any file of the repository with that name), every package path it writes in
backticks (`rpc/handlers/`), and every name in the first column of the "Core modules" table exists.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "mimo_sidecar"
DOC = ROOT / "docs" / "architecture.md"
CORE_TABLE = "## Core modules"

PY_PATH = re.compile(r"(?<![\w/.])((?:[\w-]+/)*[\w-]+\.py)\b")
PACKAGE_PATH = re.compile(r"`((?:[a-z_]+/)+)`")
FIRST_CELL = re.compile(r"^\| (`[^|]+`(?:, `[^|]+`)*) \|", re.MULTILINE)
CODE = re.compile(r"`([^`]+)`")


def package_modules() -> list[str]:
    """Every module of the package, as its path under mimo_sidecar/."""
    return sorted(
        p.relative_to(PACKAGE).as_posix()
        for p in PACKAGE.rglob("*.py")
        if p.name != "__init__.py" and "__pycache__" not in p.parts
    )


def repository_files() -> list[str]:
    return [p.relative_to(ROOT).as_posix() for p in ROOT.rglob("*.py") if ".venv" not in p.parts]


def core_table_names(text: str) -> list[str]:
    """The names in the first column of the "Core modules" table (its header row left out)."""
    start = text.find(CORE_TABLE)
    if start == -1:
        return []
    end = text.find("\n## ", start + 1)
    section = text[start : end if end != -1 else len(text)]
    return [n for cell in FIRST_CELL.findall(section) for n in CODE.findall(cell) if n != "module"]


def unnamed(text: str, modules: list[str]) -> list[str]:
    paths, core = set(PY_PATH.findall(text)), set(core_table_names(text))
    return [
        m
        for m in modules
        if m not in paths and not (m.startswith("core/") and m[len("core/") : -len(".py")] in core)
    ]


def nonexistent(text: str, package: Path, files: list[str]) -> list[str]:
    missing = [
        path
        for path in sorted(set(PY_PATH.findall(text)))
        if not (package / path).is_file() and not any(f == path or f.endswith("/" + path) for f in files)
    ]
    missing += [
        d for d in PACKAGE_PATH.findall(text) if not (package / d).is_dir() and not (ROOT / d).is_dir()
    ]
    missing += [
        f"core/{name}"
        for name in core_table_names(text)
        if not (package / "core" / f"{name}.py").is_file() and not (package / "core" / name).is_dir()
    ]
    return missing


def test_every_module_is_named() -> None:
    missing = unnamed(DOC.read_text(encoding="utf-8"), package_modules())
    assert not missing, f"modules missing from docs/architecture.md: {missing}"


def test_every_named_module_exists() -> None:
    stale = nonexistent(DOC.read_text(encoding="utf-8"), PACKAGE, repository_files())
    assert not stale, f"docs/architecture.md names modules that do not exist: {stale}"


def test_the_rules_catch_a_missing_and_a_removed_module() -> None:
    doc = (
        "Layout: `service/` owns `service/sessions.py`; tests in `test_layering.py`.\n\n"
        "## Core modules\n\n| module | concept |\n| --- | --- |\n"
        "| `estimate/jstext` | est |\n| `formats/model`, `formats/gemini` | turns; one renderer |\n"
        "| `desk` | the removed desk |\n\n"
        "## Tests\n\nThe flow was in `rpc/methods_rebuild.py`; state in state.py.\n"
    )
    modules = [
        "service/sessions.py",
        "core/estimate/jstext.py",
        "core/formats/model.py",
        "core/formats/gemini.py",
    ]
    extra = ["service/writers.py", "core/session/ids.py"]
    assert unnamed(doc, [*modules, *extra]) == extra
    assert nonexistent(doc, PACKAGE, repository_files()) == [
        "rpc/methods_rebuild.py",
        "state.py",
        "core/desk",
    ]
