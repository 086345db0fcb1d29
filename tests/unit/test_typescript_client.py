"""The TypeScript client's types are the wire models': clients/typescript/src/protocol.ts and
src/methods.ts are generated from schemas/ (`make docs`), and this test fails when the checked-in
files differ from what the generator writes now. It needs Node and the client's dev dependencies
(`npm ci` in clients/typescript, which CI runs before the suite); without them it is skipped.
`npm test` there runs the same check, then the client against the real sidecar."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from mimo_sidecar.client.methods import client_methods, python_name

CLIENT = Path(__file__).resolve().parents[2] / "clients" / "typescript"


def _generator() -> list[str]:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not on PATH")
    if not (CLIENT / "node_modules" / "json-schema-to-typescript").is_dir():
        pytest.skip("clients/typescript has no node_modules: run `npm ci` there")
    if not (CLIENT / "dist" / "src" / "index.js").is_file():
        # `npm ci` builds dist/ last; without it, tests/e2e/test_node_client.py runs `npm ci` here,
        # perhaps on another xdist worker at this very moment, replacing node_modules under us.
        pytest.skip("clients/typescript is not built (its `npm ci` has not finished): run `npm ci` there")
    return [node, str(CLIENT / "scripts" / "generate.mjs")]


def test_generated_types_are_up_to_date() -> None:
    proc = subprocess.run([*_generator(), "--check"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr


def test_the_check_sees_a_stale_file(tmp_path: Path) -> None:
    """On a copy of the package beside the real schemas (the generator finds them at
    `../../schemas`), so the checked-in src/methods.ts is never touched: another test (or xdist
    worker) may be reading it, or building the client from it, at the same time."""
    node, script = _generator()
    package = tmp_path / "clients" / "typescript"
    (package / "scripts").mkdir(parents=True)
    shutil.copyfile(script, package / "scripts" / "generate.mjs")
    shutil.copytree(CLIENT / "src", package / "src")
    (package / "node_modules").symlink_to(CLIENT / "node_modules", target_is_directory=True)
    (tmp_path / "schemas").symlink_to(CLIENT.parents[1] / "schemas", target_is_directory=True)
    copy = [node, str(package / "scripts" / "generate.mjs"), "--check"]
    fresh = subprocess.run(copy, capture_output=True, text=True, timeout=120)
    assert fresh.returncode == 0, fresh.stderr  # the copy is current, as the checked-in files are
    methods = package / "src" / "methods.ts"
    methods.write_text(
        methods.read_text(encoding="utf-8").replace("'session/open'", "'session/opened'"), encoding="utf-8"
    )
    proc = subprocess.run(copy, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1 and "src/methods.ts differs" in proc.stderr


def test_every_client_method_is_a_method_of_the_typescript_client() -> None:
    """The TypeScript names follow the Python rule in camelCase (the npm test checks the class)."""
    source = (CLIENT / "src" / "client.ts").read_text(encoding="utf-8")
    for spec in client_methods():
        words = python_name(spec.name).split("_")
        name = words[0] + "".join(w.capitalize() for w in words[1:])
        assert f"  {name}(" in source or f"  async {name}(" in source, (
            f"{spec.name}: no {name}() in client.ts"
        )
