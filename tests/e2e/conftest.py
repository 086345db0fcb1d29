"""pytest-lsp fixtures: a real sidecar process per test module, driven like an IDE would drive it.

- `client_factory()` builds a pytest-lsp `LanguageClient` that keeps params/results as plain JSON
  (the sidecar's raw converter) and collects `rebuild/status` notifications in `status_events`
  (`window/logMessage` ones land in `log_messages`, as pytest-lsp does by default).
- `client` (module scope): an initialized client with a fresh temporary memory root. Modules using
  it run their tests on the module's event loop:
  `pytestmark = pytest.mark.asyncio(loop_scope="module")`.
- `rb` (module scope): the same with short writer waits and work-done progress (rebuild tests).
- `fresh_client` (function scope): a client whose server has not been initialized yet.
- `memory_root` (module scope): a fresh temporary memory root; `sidecar` (module scope): the typed
  client (`mimo_sidecar.client.Sidecar`) of one sidecar process initialized on it; `raw_sidecar`
  (module scope): the same with the JSON client (`SidecarClient`: plain dicts in and out). Tests
  sharing one open their own sessions, and close them.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient
from pytest_lsp.client import register_lsp_features
from pytest_lsp.protocol import LanguageClientProtocol

from mimo_sidecar.client import Sidecar, SidecarClient
from mimo_sidecar.rpc.protocol import raw_converter_factory

from .rawclient import hook_env


class RawClientProtocol(LanguageClientProtocol):
    """Only the top-level object of a frame is a JSON-RPC message (nested `jsonrpc` keys are data)."""

    def structure_message(self, data: Any) -> Any:
        return data

    def handle_message(self, message: Any) -> Any:
        if isinstance(message, dict):
            message = LanguageClientProtocol.structure_message(self, message)
        return super().handle_message(message)


def client_factory() -> LanguageClient:
    client = LanguageClient(converter_factory=raw_converter_factory, protocol_cls=RawClientProtocol)
    register_lsp_features(client)
    client.status_events = []  # type: ignore[attr-defined]

    @client.feature("rebuild/status")
    def on_status(params: Any) -> None:
        client.status_events.append(params)  # type: ignore[attr-defined]

    return client


SERVER = ClientServerConfig(
    server_command=[sys.executable, "-m", "mimo_sidecar", "--stdio"],
    client_factory=client_factory,
    server_env=hook_env(),
)


def init_params(memory_root: Path | str, config: dict | None = None, **extra: Any) -> types.InitializeParams:
    options: dict[str, Any] = {"memoryRoot": str(memory_root), **extra}
    if config is not None:
        options["config"] = config
    return types.InitializeParams(capabilities=types.ClientCapabilities(), initialization_options=options)


@pytest_lsp.fixture(scope="module", config=SERVER)
async def client(lsp_client: LanguageClient, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[None]:
    root = tmp_path_factory.mktemp("memory")
    lsp_client.memory_root = root  # type: ignore[attr-defined]
    await lsp_client.initialize_session(init_params(root))
    yield
    await lsp_client.shutdown_session()


# Writer-wait bounds shortened for the rebuild tests, so a writer that never finishes costs 1.5 s.
WAIT_MS = 1500
SHORT_WAITS = {"checkpoint": {"writer_wait_ms": {"with_watermark": WAIT_MS, "without_watermark": WAIT_MS}}}


@pytest_lsp.fixture(scope="module", config=SERVER)
async def rb(lsp_client: LanguageClient, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[None]:
    """An initialized client for the rebuild tests: a fresh memory root, `SHORT_WAITS`, and
    `window.workDoneProgress`, so the sidecar reports `$/progress` (in `progress_reports`)."""
    root = tmp_path_factory.mktemp("memory")
    lsp_client.memory_root = root  # type: ignore[attr-defined]
    params = init_params(root, SHORT_WAITS)
    params.capabilities = types.ClientCapabilities(
        window=types.WindowClientCapabilities(work_done_progress=True)
    )
    await lsp_client.initialize_session(params)
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=SERVER)
async def fresh_client(lsp_client: LanguageClient) -> AsyncIterator[None]:
    lsp_client.capabilities = types.ClientCapabilities()
    yield
    if lsp_client._server is not None and lsp_client._server.returncode is None:
        lsp_client.exit(None)


@pytest.fixture(scope="module")
def memory_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("memory")


@pytest.fixture(scope="module")
def sidecar(memory_root: Path) -> Iterator[Sidecar]:
    """One sidecar for the module's tests, driven through the typed client."""
    with Sidecar.spawn(stderr=subprocess.DEVNULL) as client:
        client.initialize(memory_root=str(memory_root))
        yield client


@pytest.fixture(scope="module")
def raw_sidecar(memory_root: Path) -> Iterator[SidecarClient]:
    """One sidecar for the module's tests, driven with plain JSON."""
    with SidecarClient.spawn(stderr=subprocess.DEVNULL) as client:
        client.initialize(memory_root=str(memory_root))
        yield client
