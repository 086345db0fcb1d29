"""Wire models of the checkpoint writer kit: checkpoint/prepare and checkpoint/commit
(behavior.md#writer-kit). The handshake (checkpoint/writerStarted, /writerFinished) is in `session`."""

from __future__ import annotations

from pydantic import Field

from .common import MessageId, Params, SessionId
from .rebuild import BuildResult, CacheParam, FormatParam, HostViewParam, SidecarToolsParam, TargetParam
from .session import WriterFinishedResult

# ---------------------------------------------------------------------------------------------
# checkpoint/prepare
# ---------------------------------------------------------------------------------------------


class PrepareParams(Params):
    session_id: SessionId
    watermark: MessageId | None = Field(
        None,
        description="With no writer in flight: the watermark the writer registered now covers (a message "
        "of the main view); absent: the one `rebuild/compute` reports. With a writer in flight: absent, "
        "or that writer's watermark (error 1006 otherwise).",
    )
    format: FormatParam = "ai-sdk"
    target: TargetParam = None
    cache: CacheParam = None
    sidecar_tools: SidecarToolsParam = None
    host_view: HostViewParam = False


class PrepareResult(BuildResult):
    """`request/build purpose: "writer"`'s result, with the instructions as the last user content of
    `messages`, and what the host needs to commit the reply."""

    watermark: str = Field(
        description="The in-flight writer's watermark: the last message the writer sees and the checkpoint "
        "covers. Pass it to `checkpoint/commit`."
    )
    started: bool = Field(
        description="True when this call registered the writer (none was in flight); false when it prepared "
        "the writer already in flight."
    )
    stored_watermark: str | None = Field(
        None, description="What the previous successful writer covered (absent: no writer has succeeded yet)."
    )
    checkpoint_path: str = Field(description="The absolute path of the session's checkpoint.md.")
    current: str | None = Field(
        None,
        description="checkpoint.md as it is now (the instructions include it); absent when it is missing or "
        "cannot be read (`warnings` says why).",
    )
    instructions: str = Field(
        description="The writer's instructions, already the last user content of `messages` (given again for "
        "hosts that log them or place them elsewhere)."
    )
    instructions_tokens: int = Field(
        description="Estimated tokens of `instructions` (not counted in `estimatedTokens`)."
    )


# ---------------------------------------------------------------------------------------------
# checkpoint/commit
# ---------------------------------------------------------------------------------------------


class CommitParams(Params):
    session_id: SessionId
    content: str = Field(
        description="The whole new checkpoint.md (the model's reply): text without NUL, not blank, at most "
        "`checkpoint.commit_max_bytes` bytes of UTF-8 (default 1 MiB)."
    )
    watermark: MessageId | None = Field(
        None,
        description="The watermark `checkpoint/prepare` returned. When given it must be the in-flight "
        "writer's (error 1006 otherwise): a late reply of an older writer is never committed.",
    )


class CommitResult(WriterFinishedResult):
    """`checkpoint/writerFinished` success's result, with what was written."""

    path: str = Field(description="The checkpoint.md written.")
    bytes_written: int = Field(description="Bytes written: the content in UTF-8.")
    created: bool = Field(description="There was no checkpoint.md before.")
    warnings: list[str] = Field(
        default_factory=list,
        description="What the readers will make of the content: over the push_caps.checkpoint budget, no "
        "`Topic:` line, still the bare template.",
    )
