"""Wire models of the session methods: session/*, checkpoint/writerStarted, checkpoint/writerFinished.

Host data (message `info`, parts, tasks, actors, the request prefix) keeps the host's field names
(behavior.md#data-model: `sessionID`, `messageID`, `callID`, `parent_task_id`, `actorID`...); only the method
params around it are camelCase.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, ModelWrapValidatorHandler, PrivateAttr, ValidationError, model_validator
from pydantic_core import ErrorDetails, InitErrorDetails, PydanticCustomError

from ..core.tool_pointers import ToolPointers as CoreToolPointers
from ..core.words import WriterOutcome, WriterStartState
from .common import (
    MessageId,
    NonEmptyStr,
    Params,
    Result,
    Revision,
    SessionId,
    ToolNameMap,
    ToolPrefix,
)
from .host_data import HostActors, HostInfo, HostParts, HostRequestPrefix, HostStreamedPart, HostTasks

# ---------------------------------------------------------------------------------------------
# Host data
# ---------------------------------------------------------------------------------------------


class Message(Params):
    """One message: the host's `info` and its parts in creation order."""

    info: HostInfo
    parts: HostParts | None = Field(
        None,
        description="The message's parts in creation order. In `session/sync`, absent means "
        "'keep the stored parts' (an info-only update); in `session/open`, absent means no parts.",
    )
    seq: Annotated[int, Field(ge=0)] | None = Field(
        None,
        description="Optional host creation sequence number (behavior.md#creation-order, sequence mode). "
        "Absent: the sidecar's arrival counter.",
    )


# ---------------------------------------------------------------------------------------------
# session/open
# ---------------------------------------------------------------------------------------------


class ParentContext(Params):
    """The session this one was created from, and how much of it it inherits (behavior.md#inherited-context).
    """

    session_id: SessionId = Field(description="An open session: its main view is inherited.")
    watermark: MessageId | None = Field(
        None,
        description="Inherit the parent's view up to and including this message; absent or not found "
        "there: the whole view.",
    )


ToolName = Annotated[NonEmptyStr, Field(description="A tool name as the model's request declares it.")]


class SidecarToolsDeclared(Params):
    prefix: ToolPrefix = ""


class ToolPointers(Params):
    """Which of the model's tools serve the pointers of the rebuilt text (behavior.md#d18). Each
    pointer names the host's own tool when one is given here, else the sidecar's tool of that kind
    when `sidecarTools` says the model has them, else it is left out. Absent: the reference's
    wording, which names MiMo's tools."""

    read: ToolName | None = Field(
        None, description="The host's tool that reads a file by its absolute path (named in prose)."
    )
    grep: ToolName | None = Field(None, description="The host's tool that searches files (named in prose).")
    memory: ToolName | None = Field(
        None, description="A tool of MiMo's `memory` kind, called as `memory(operation=\"search\", query=…)`."
    )
    task: ToolName | None = Field(
        None, description="A tool of MiMo's `task` kind, called as `task(operation=\"list\")`."
    )
    history: ToolName | None = Field(
        None,
        description="A tool of MiMo's history kind, called as `history(operation=\"around\", messageID=…)`.",
    )
    actor: ToolName | None = Field(
        None, description="A tool of MiMo's `actor` kind, called as `actor(operation=\"status\", id=…)`."
    )
    sidecar_tools: SidecarToolsDeclared | None = Field(
        None,
        description="The model has the sidecar's model tools (`tools/list`), named with this prefix: in "
        "`requestPrefix.tools`, or added by `request/build`'s `sidecarTools`.",
    )

    def pointers(self) -> CoreToolPointers:
        return CoreToolPointers(
            self.read,
            self.grep,
            self.memory,
            self.task,
            self.history,
            self.actor,
            self.sidecar_tools.prefix if self.sidecar_tools is not None else None,
        )


class OpenParams(Params):
    session_id: SessionId = Field(
        description="The host's session ID. It names the session's memory directory, "
        "`<memoryRoot>/sessions/<sessionId>/` (behavior.md#memory-layout), so it must be usable as one "
        "directory name: not `.` or `..`, no `/` (nor `\\` on Windows), no NUL; any other character, a "
        "space included, is fine. Error 1005 otherwise."
    )
    project_id: NonEmptyStr | None = Field(
        None,
        description="The project's ID: its memory is `<memoryRoot>/projects/<projectId>/` "
        "(behavior.md#memory-layout). The rule of `sessionId` applies (error 1005).",
    )
    messages: list[Message] = Field(
        default_factory=list,
        description="The session's history, registered in list order, which must be creation order "
        "(behavior.md#ordering).",
    )
    tasks: HostTasks = Field(
        default_factory=list, description="Task ledger entries (behavior.md#session-state), kept verbatim."
    )
    actors: HostActors = Field(
        default_factory=list, description="Actor registry entries (behavior.md#session-state), verbatim."
    )
    watermark: MessageId | None = Field(None, description="The stored watermark from an earlier run, if any.")
    request_prefix: HostRequestPrefix | None = Field(
        None,
        description="The host's frozen request prefix (system prompt parts, tool definitions; "
                    "behavior.md#request-prefix), "
        "kept verbatim.",
    )
    parent: ParentContext | None = Field(
        None,
        description="Created from another session (behavior.md#inherited-context): its main view, up to the "
                    "context "
        "watermark, comes before this session's own until this session has a boundary of its own.",
    )
    ids_ascending: bool = Field(
        False,
        description="Declare that this session's message IDs sort in creation order as plain strings "
        "(ID mode, behavior.md#creation-order).",
    )
    tool_name_map: ToolNameMap = Field(
        default_factory=dict,
        description="The host's tool names onto MiMo's, for microcompaction (behavior.md#compactable-tools): "
        "`{\"Read\": \"read\", \"Bash\": \"bash\"}`. A name mapped onto one of the 12 compactable names has "
        "its old results cleared; a name mapped onto any other name is kept (and not reported as unmapped). "
        "Every `rebuild/insert` of the session uses it; an insert's own `toolNameMap` entries win.",
    )
    tool_pointers: ToolPointers | None = Field(
        None,
        description="The model's tools that the rebuilt text may name (behavior.md#d18). Absent: the "
        "reference's wording, which names MiMo's tools (`memory`, `task`, `read`, Grep, the history tool).",
    )
    create_checkpoint: bool = Field(
        False,
        description="Create the session's checkpoint.md from the template when it is missing (never "
        "replaces one). A file that cannot be written fails the open (1009) and nothing is kept.",
    )


class OpenResult(Result):
    session_id: SessionId
    revision: Revision
    checkpoint_created: bool | None = Field(
        None,
        description="With `createCheckpoint`: true when this open created checkpoint.md from the template, "
        "false when one existed. Absent otherwise.",
    )


# ---------------------------------------------------------------------------------------------
# session/sync
# ---------------------------------------------------------------------------------------------


class PartUpsert(Params):
    """`{messageId, part}`. A bare part carrying `messageID` is accepted in place of the wrapper."""

    message_id: MessageId | None = Field(None, description="Owning message; defaults to `part.messageID`.")
    part: HostStreamedPart
    _bare: bool = PrivateAttr(False)

    @model_validator(mode="wrap")
    @classmethod
    def _accept_bare_part(cls, data: Any, handler: ModelWrapValidatorHandler[PartUpsert]) -> PartUpsert:
        if not (isinstance(data, dict) and "part" not in data and "type" in data):
            return handler(data)
        try:
            upsert = handler({"part": data})
        except ValidationError as err:  # the paths of what the host sent: no `part` key in between
            unwrapped = [_unwrapped(e) for e in err.errors()]
            raise ValidationError.from_exception_data(err.title, unwrapped) from None
        upsert._bare = True
        return upsert

    @model_validator(mode="after")
    def _resolve_message_id(self) -> PartUpsert:
        carried = self.part.get("messageID")
        if self.message_id is None and carried is None:
            raise PydanticCustomError(
                "message_id_missing", "messageId is required when part.messageID is absent"
            )
        if self.message_id is not None and carried is not None and carried != self.message_id:
            raise PydanticCustomError(
                "message_id_mismatch",
                "messageId '{message_id}' differs from part.messageID '{carried}'",
                {"message_id": self.message_id, "carried": carried},
            )
        return self

    @property
    def target(self) -> str:
        return self.message_id if self.message_id is not None else str(self.part.get("messageID"))

    @property
    def part_field(self) -> tuple[str, ...]:
        """Where the part is within the item: under `part`, or the item itself (a bare part)."""
        return () if self._bare else ("part",)

    @property
    def message_id_field(self) -> tuple[str, ...]:
        """The key within the item that named the message: the wrapper's, else the part's."""
        return ("messageId",) if self.message_id is not None else (*self.part_field, "messageID")


def _unwrapped(error: ErrorDetails) -> InitErrorDetails:
    """A bare part's validation error with the `part` key the sidecar wrapped it in taken out of
    its path."""
    loc = error["loc"][1:] if error["loc"][:1] == ("part",) else error["loc"]
    return {
        "type": PydanticCustomError(error["type"], error["msg"]),
        "loc": loc,
        "input": error["input"],
    }


class PartRef(Params):
    message_id: MessageId
    part_id: NonEmptyStr


class SyncParams(Params):
    session_id: SessionId
    base_revision: Revision | None = Field(
        None,
        description="Apply only if the session is still at this revision; otherwise error 1002 and "
        "nothing changes.",
    )
    upsert_messages: list[Message] = Field(default_factory=list, description="Messages to add or replace.")
    upsert_parts: list[PartUpsert] = Field(
        default_factory=list, description="Parts to add or replace one at a time (streaming)."
    )
    remove_messages: list[MessageId] = Field(default_factory=list, description="Message IDs to forget.")
    remove_parts: list[PartRef] = Field(default_factory=list, description="Parts to forget.")
    tasks: HostTasks | None = Field(None, description="Replaces the whole task list when present.")
    actors: HostActors | None = Field(None, description="Replaces the whole actor list when present.")
    tool_name_map: ToolNameMap | None = Field(
        None, description="Replaces the session's whole tool-name map when present (`{}` clears it)."
    )
    tool_pointers: ToolPointers | None = Field(
        None,
        description="Replaces the session's `toolPointers` when present; `null` removes them (the texts "
        "name MiMo's tools again, as without a declaration). Applies to the next rebuild and request (a "
        "boundary keeps the wording it was rendered with).",
    )


class SyncResult(Result):
    revision: Revision


# ---------------------------------------------------------------------------------------------
# session/get, session/close
# ---------------------------------------------------------------------------------------------


class SessionRef(Params):
    session_id: SessionId


class WriterInfo(Result):
    in_flight: bool = Field(description="A checkpoint writer is running for this session.")
    end_message_id: str | None = Field(None, description="Watermark candidate of the in-flight writer.")
    queued_end_message_id: str | None = Field(None, description="Watermark of the queued start request.")
    settlements: int = Field(description="Number of writers that have settled so far.")
    last_outcome: WriterOutcome | None = Field(None, description="Outcome of the last settled writer.")
    last_retryable: bool | None = Field(None, description="Classification of the last failure, if given.")


class SessionInfo(Result):
    session_id: SessionId
    project_id: str | None = None
    revision: Revision
    message_count: int = Field(description="Messages held, all agent slices included.")
    watermark: str | None = Field(None, description="Stored watermark; absent when none.")
    writer: WriterInfo
    estimated_tokens: int = Field(description="Sum of the part estimates of every message "
                                              "(behavior.md#message-estimate).")
    id_mode: bool = Field(description="True in ID mode, false in sequence mode (behavior.md#creation-order).")
    parent_id: str | None = Field(None, description="The session it inherits context from "
                                                    "(behavior.md#inherited-context).")


class CloseResult(Result):
    closed: Literal[True] = True


# ---------------------------------------------------------------------------------------------
# checkpoint/writerStarted, checkpoint/writerFinished (behavior.md#writer-registry)
# ---------------------------------------------------------------------------------------------


class WriterStartedParams(Params):
    session_id: SessionId
    watermark: MessageId | None = Field(
        None,
        description="The watermark the writer covers (a registered message ID). Absent: the sidecar "
        "computes it (behavior.md#watermark); error 1007 if it cannot.",
    )


class WriterStartedResult(Result):
    state: WriterStartState = Field(
        description="`in-flight`: run the writer now. `queued`: another writer is running; this request "
        "replaces any older queued one and is promoted when that writer settles."
    )
    watermark: str


class WriterFinishedParams(Params):
    session_id: SessionId
    outcome: WriterOutcome
    retryable: bool | None = Field(None, description="For `failure`: whether the failure is transient.")


class WriterFinishedResult(Result):
    watermark: str | None = Field(None, description="The stored watermark after this settlement.")
    promoted: str | None = Field(
        None,
        description="Present when a queued request was promoted: it is now the in-flight writer with this "
        "watermark; the host runs it and reports it with checkpoint/writerFinished.",
    )
    writer: WriterInfo
