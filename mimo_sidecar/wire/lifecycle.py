"""Wire models of the lifecycle: `initialize` options, `sidecar/configure`, and the standard LSP
messages the sidecar uses (documented here so protocol.md can show their schema)."""

from __future__ import annotations

import os
import sys
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, ConfigDict, Field
from pydantic_core import PydanticCustomError

from .common import Params, Result
from .config import SidecarConfig


def _memory_root(value: str) -> str:
    if not os.path.isabs(value):
        raise PydanticCustomError("memory_root", "must be an absolute path, got '{value}'", {"value": value})
    if not os.path.isdir(value):
        raise PydanticCustomError("memory_root", "'{value}' is not an existing directory", {"value": value})
    return os.path.normpath(value)


class InitializationOptions(Params):
    """`initialize.params.initializationOptions`."""

    memory_root: Annotated[str, AfterValidator(_memory_root)] = Field(
        description="Absolute path of an existing directory: the memory root (behavior.md#memory-layout) "
                    "holding "
        "sessions/<sid>/, projects/<projectID>/ and global/."
    )
    config: SidecarConfig = Field(
        default_factory=SidecarConfig, description="MiMo Code config keys (snake_case); all optional."
    )


# The largest process id of the platform: a signed 32-bit pid_t on POSIX, a DWORD on Windows.
PROCESS_ID_MAX = 2**32 - 1 if sys.platform == "win32" else 2**31 - 1


class InitializeParams(Params):
    """`initialize` params: standard LSP. The sidecar reads the three below; the other LSP members
    (`clientInfo`, `rootUri`, `trace`...) are accepted and not used."""

    model_config = ConfigDict(extra="allow")

    process_id: Annotated[int, Field(ge=0, le=PROCESS_ID_MAX)] | None = Field(
        None,
        description="A process to watch: the sidecar exits when it is gone. null, 0 or absent: none. "
        "Outside the platform's process ids (negative, or over 2147483647 on Linux and macOS) it is "
        "refused.",
    )
    capabilities: dict[str, Any] = Field(
        description="LSP client capabilities, an object (`{}` is fine). Only `window.workDoneProgress` "
        "is read."
    )
    initialization_options: InitializationOptions


class ConfigureParams(Params):
    """`sidecar/configure`: replaces the whole config (absent keys return to their defaults)."""

    config: SidecarConfig


class ConfigureResult(Result):
    warnings: list[str] = Field(
        default_factory=list, description="Unknown or unused keys, also sent as window/logMessage."
    )


class InitializeResult(Result):
    """The `initialize` result (standard LSP; only the fields a sidecar client needs are shown)."""

    capabilities: dict[str, Any] = Field(
        description="LSP server capabilities; nothing a sidecar client needs."
    )
    server_info: dict[str, str] = Field(description='{"name": "mimo-sidecar", "version": "<version>"}')


class LogMessageParams(Params):
    """`window/logMessage` (server to client): 1 error, 2 warning, 3 info, 4 log."""

    type: Literal[1, 2, 3, 4]
    message: str


class CancelParams(Params):
    """`$/cancelRequest` (client to server): the ID of the request to cancel."""

    id: int | str
