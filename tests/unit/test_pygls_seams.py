"""pygls sits behind one adapter (rpc/protocol.py, rpc/server.py): every pygls hook the sidecar
overrides is listed in `PYGLS_OVERRIDES` with the end-to-end tests that pin its behaviour, and
docs/architecture.md says why it exists. A new override without a listed test fails here."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol

from mimo_sidecar.rpc.protocol import PYGLS_OVERRIDES, SidecarProtocol
from mimo_sidecar.rpc.server import SidecarServer

REPO = Path(__file__).resolve().parents[2]


def overridden(ours: type, base: type) -> set[str]:
    """Names our class defines that pygls's class (or its bases) already has."""
    pygls_names = {name for klass in base.__mro__ for name in vars(klass)}
    return {
        f"{ours.__name__}.{name}" for name in vars(ours) if name in pygls_names and not name.startswith("__")
    }


def e2e_test_names() -> set[str]:
    names: set[str] = set()
    for path in (REPO / "tests" / "e2e").glob("test_*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names |= {
            node.name
            for node in tree.body
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test_")
        }
    return names


def test_every_override_is_listed_with_its_e2e_tests() -> None:
    found = overridden(SidecarProtocol, LanguageServerProtocol) | overridden(SidecarServer, LanguageServer)
    listed = {name for name in PYGLS_OVERRIDES if "." in name}
    assert found == listed, f"unlisted overrides: {found - listed}; listed but gone: {listed - found}"


def test_every_listed_e2e_test_exists() -> None:
    existing = e2e_test_names()
    for hook, tests in PYGLS_OVERRIDES.items():
        assert tests, hook
        missing = [t for t in tests if t not in existing]
        assert missing == [], f"{hook}: no e2e test named {missing}"


def test_architecture_doc_explains_every_override() -> None:
    doc = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    for hook in PYGLS_OVERRIDES:
        assert f"`{hook}`" in doc, f"docs/architecture.md does not say why {hook} is overridden"


def test_the_pygls_signatures_we_override_are_the_ones_we_were_written_against() -> None:
    """The private hooks take the arguments our overrides expect (a pygls upgrade that changes
    them fails here before it fails on the wire)."""
    expected = {
        "_send_handler_result": ["self", "future", "msg_id"],
        "_send_response": ["self", "msg_id", "result", "error"],
        "_send_data": ["self", "data"],
        "structure_message": ["self", "data"],
        "handle_message": ["self", "message"],
    }
    for name, params in expected.items():
        got = list(inspect.signature(getattr(LanguageServerProtocol, name)).parameters)
        assert got == params, (name, got)
