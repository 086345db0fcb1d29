"""Every model-facing and user-facing text of the rebuild, in one place.

Strings marked VERBATIM are quoted by the mission article and must stay byte-exact (spec
conventions). Everything else is the team's own wording of what behavior.md requires a text to say;
the docstring of each notes the numbers it must carry.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from .words import InsertOutcome, NoticeKind

# --------------------------------------------------------------------------------------------- VERBATIM
# (behavior.md#render-time-wait, behavior.md#preamble, behavior.md#closing-sentence,
# behavior.md#part-conversion)
# ---------------------------------------------------------------------------------------------
PREPARING_STATUS = "Preparing conversation context\u2026"

PREAMBLE = (
    "The sections below are auto-loaded session context already in this message. File-backed "
    "sections list their path on a `File:` line \u2014 Grep that path for specific facts; do not Read "
    "the whole file again."
)

CLOSING_WITH_ACTIVITY = (
    "This session is continued from a checkpoint. The blocks above cover earlier history and the "
    "recent activity list. Resume the last task from that list and any live messages after it. "
    "Do not recap this dump."
)
CLOSING_WITHOUT_ACTIVITY = (
    "This session is continued from a checkpoint. The blocks above cover earlier history. Resume the "
    "last task from the most recent live messages. Do not recap this dump."
)

AUTONOMOUS_LOOP_REMINDER = "\n".join(
    [
        "<system-reminder>",
        "You are mid-loop in an autonomous task. Continue your work loop:",
        "respond to the tool results below and proceed to the next iteration.",
        "</system-reminder>",
    ]
)

CHECKPOINT_LABEL = "Summary of previous conversation from checkpoint files:"
CLEARED_TOOL_RESULT = "[Old tool result content cleared]"

HEADING_TASKS = "Tasks ledger"
HEADING_CHECKPOINT = "Session checkpoint"
HEADING_ACTORS = "Active actors"
HEADING_RECENT_USER = "Recent user input (verbatim)"
HEADING_PROJECT_MEMORY = "Project durable knowledge"
HEADING_GLOBAL_MEMORY = "Global memory"
HEADING_NOTES = "Session notes"
HEADING_MEMORY_KEYS = "Memory keys index"
HEADING_ACTIVITY = "Recent activity"
INDEX_HEADING = "## Checkpoint"
ACTORS_BLOCK_HEADING = "## Active Actors"
FILE_LINE_PREFIX = "File: "
DIGEST_ERROR_SUFFIX = " \u2192 error: "
DIGEST_INTERRUPTED_SUFFIX = " \u2192 interrupted"

# ---------------------------------------------------------------------------------------------
# Team wording (spec marks these ⟨…⟩)
# ---------------------------------------------------------------------------------------------
STOP_REMINDER = "\n".join(
    [
        "<system-reminder>",
        "Your previous turn ended with a stop. Before you stop again, open the head section of the "
        "progress.md of the task you worked on most recently and compare that task's specification "
        "with its newest progress entries. If any work remains, carry on with the next concrete step. "
        "Stop only when the specification is fully met, or when you need information from the user "
        "that you cannot work out yourself.",
        "</system-reminder>",
    ]
)

# The {tool} reminder (behavior.md#reminders). The step stays live after the boundary (D19): its
# results are below; digested with the tail (`checkpoint.keep_newest_step: false`), they are not.
TOOL_REMINDER = "\n".join(
    [
        "<system-reminder>",
        "The tool results below really happened in your autonomous loop; they are not a recap. Act on "
        "them and carry on with the next iteration instead of stopping to write a summary.",
        "</system-reminder>",
    ]
)
TOOL_REMINDER_DIGESTED = "\n".join(
    [
        "<system-reminder>",
        "The tool calls at the end of the activity list above really happened in your autonomous loop; "
        "they are not a recap. Act on them and carry on with the next iteration instead of stopping to "
        "write a summary.",
        "</system-reminder>",
    ]
)

NO_TASKS = "(no tasks)"
SUBTASKS_LABEL = "subtasks: "
# At most 59 UTF-16 units so a truncated ledger never exceeds its cap (behavior.md#section-tasks).
LEDGER_TRUNCATED = "\u2026 ledger truncated; run the task list tool for all tasks"
TASK_SEPARATOR = " \u2014 "
STATUS_GLYPHS = {
    "open": "\U0001f535",
    "in_progress": "\U0001f504",
    "blocked": "\U0001f7e1",
    "done": "\u2705",
    "abandoned": "\u274c",
}

DIGEST_INTERRUPTED_BANNER = (
    "\u26a0 The rebuild cut off a tool loop in progress: run again any tool whose result you still need."
)
UNSERIALIZABLE_ARG = "[unserializable]"


def user_elision_marker(elided_tokens: int, message_id: str) -> str:
    """One line: the elided token count, the message ID and how to fetch the full text."""
    return (
        f"[\u2026 {elided_tokens} tokens elided from message {message_id}; fetch the full text with the "
        f"history tool, operation=around, messageID={message_id} \u2026]"
    )


def proportional_hint(budget: int, path: str, total_tokens: int, offset: int) -> str:
    """One line: budget, path, total tokens and the offset to continue reading from
    (behavior.md#proportional-read)."""
    return (
        f"\u26a0 Truncated to a {budget}-token budget: {path} holds {total_tokens} tokens in all. "
        f"Read the rest of the file from character offset {offset}."
    )


def skeleton_warning(total_tokens: int, budget: int, path: str) -> str:
    """Two lines: far over budget, outline only; the second starts with three spaces
    (behavior.md#section-aware-read)."""
    return (
        f"\u26a0 This file holds {total_tokens} tokens, far over its {budget}-token budget: only its "
        f"outline (headings, italic notes and index lines) is included.\n"
        f"   Read {path} for the full content."
    )


def section_aware_hint(budget: int, path: str, total_tokens: int) -> str:
    """One line: budget, path and total tokens; read the file for the full content
    (behavior.md#section-aware-read)."""
    return (
        f"\u26a0 Trimmed to a {budget}-token budget: {path} holds {total_tokens} tokens in all. "
        f"Read that file for the full content."
    )


NO_CHECKPOINT_INDEX = "No checkpoints have been written for this session yet."
UNKNOWN_TOPIC = "(unknown)"


def index_directory_line(session_dir_with_sep: str, root_relative: bool = False) -> str:
    if root_relative:  # behavior.md#d22
        return f"Session memory directory (relative to the memory root): {session_dir_with_sep}"
    return f"Session memory directory: {session_dir_with_sep}"


def index_topic_line(topic: str) -> str:
    return (
        f"Current checkpoint topic: {topic}. "
        "Its content is in the \u201c# Session checkpoint\u201d section below."
    )


def actors_count_line(n: int) -> str:
    return f"{n} background actor(s) registered; operate them through the `actor` tool."


def format_idle(ms: int) -> str:
    """`floor(ms/1000)s` below a minute, else `floor(ms/60000)m` (behavior.md#actors-block)."""
    ms = max(0, ms)
    return f"{ms // 1000}s" if ms < 60000 else f"{ms // 60000}m"


def actor_block_lines(actor_id: str, status: str, idle: str, description: str, agent: str) -> list[str]:
    return [f"- {actor_id} [{status}] last active {idle} ago", f"  {description}", f"  agent: {agent}"]


def actor_ledger_line(actor_id: str, status: str, description: str, agent: str) -> str:
    """One `- ` line: ID, status, description in double quotes (unescaped), agent
    (behavior.md#section-actors)."""
    return f'- {actor_id} ({status}) "{description}" agent={agent}'


COMPACTION_LABEL = "Summary of the previous conversation (compacted):"
INTERRUPTED_TOOL_RESULT = "Tool execution was interrupted before it produced a result."


def memory_reminder(session_dir: str, *, shell_style: bool, has_actor_tool: bool) -> str:
    """The per-turn memory reminder (behavior.md#memory-reminder), about 120 tokens."""
    if shell_style:
        usages = [
            '  memory search "<keyword>"',
            f"  cat {session_dir}/notes.md",
            "  task list",
        ]
        if has_actor_tool:
            usages.append("  actor status <actorID>")
    else:
        usages = [
            '  memory(operation="search", query="<keyword>")',
            f'  read(path="{session_dir}/notes.md")',
            '  task(operation="list")',
        ]
        if has_actor_tool:
            usages.append('  actor(operation="status", id="<actorID>")')
    return "\n".join(
        [
            "<system-reminder>",
            f"Session memory lives in {session_dir}; anything missing from the current context can be "
            "looked up with:",
            *usages,
            "",
            "Consult memory before asking the user for information it may already hold.",
            "</system-reminder>",
        ]
    )


MANUAL_REBUILD_STATUS = "Rebuilding the conversation context from the checkpoint\u2026"
# The title of the work-done progress a rebuild shows while busy.
REBUILD_PROGRESS_TITLE = "Rebuilding conversation context"
OUTCOME_TEXTS: dict[InsertOutcome, str] = {
    "rebuilt": (
        "Context rebuilt: the conversation now continues from the most recent checkpoint. Recent "
        "messages were kept; older context is represented by the checkpoint summary."
    ),
    "writer-failed": (
        "The checkpoint writer failed, so no checkpoint exists. Compaction was applied instead: older "
        "messages were removed rather than summarised from a checkpoint."
    ),
    "insert-failed": (
        "A checkpoint exists but rebuilding from it failed. Nothing changed and no compaction happened. "
        "Run /rebuild again, and report the problem if it keeps happening."
    ),
    "no-gain": (
        "The context was not rebuilt: the checkpoint summary plus the recent messages would not be "
        "smaller than the conversation as it is. Nothing changed; a later checkpoint will cover more."
    ),
}
NOTICE_MEMORY_WRITE_OFF = (
    "Memory writing is disabled, so this session cannot have a checkpoint and its context was compacted "
    "instead of rebuilt; compaction drops older turns with no summary, which can hurt continuity in long "
    "tasks. This is not an error and the session continues. To re-enable, set memory.disable_write to false."
)
NOTICE_CHECKPOINT_OFF = (
    "Checkpointing is disabled, so the context was compacted instead of rebuilt from a checkpoint; older "
    "turns leave the model's view with no checkpoint summary, which can hurt continuity. This is not an "
    "error. To re-enable, unset the checkpoint-disable setting or set it to false."
)
NOTICES: dict[NoticeKind, str] = {
    "memory-write-off": NOTICE_MEMORY_WRITE_OFF,
    "checkpoint-off": NOTICE_CHECKPOINT_OFF,
}
# Why an insert ended without inserting, for the outcomes that stop before rendering
# (behavior.md#rebuild-outcomes).
OUTCOME_DETAILS: dict[InsertOutcome, str] = {
    "no-checkpoint": (
        "the session has no checkpoint.md under the memory root, and no checkpoint writer is in flight "
        "to write one"
    ),
    "no-watermark": (
        "no watermark is stored and no checkpoint writer is in flight: a checkpoint writer must succeed first"
    ),
    "not-main-agent": "only the main agent rebuilds; sub-agents use compaction",
    "writer-failed": "the checkpoint writer did not succeed within the wait",
}

# ---------------------------------------------------------------------------------------------
# Digest line prefixes (VERBATIM, behavior.md#digest; "assistant" is the message's role)
# ---------------------------------------------------------------------------------------------
DIGEST_ASSISTANT_PREFIX = "- assistant: "
DIGEST_SUBTASK_PREFIX = "- subtask: "

# ---------------------------------------------------------------------------------------------
# Diagnostics (team wording; reported to the host, never sent to the model)
# ---------------------------------------------------------------------------------------------


def budget_ignored_warning(model_key: str, raw_json: str, problem: str) -> str:
    """behavior.md#window-budget: an invalid or too small `max_context` budget is ignored; once per (model,
    value)."""
    return (
        f"compaction.max_context {raw_json} for model {model_key} is ignored ({problem}); "
        "the full window is used."
    )


# Fidelity report reasons (team wording; reported to the host, never sent to the model)
ASK_OUTSIDE_WINDOW = "outside the window of the newest 200 messages"
ASK_OVER_SECTION_CAP = "its entry did not fit the section's recent_user cap"
ASK_SECTION_CAP_TOO_SMALL = "recent_user is too small to hold even a truncated entry"
ASK_DISABLED = "Recent user input is disabled (recent_user = 0)"
NOT_RENDERED = "nothing was rendered"
TASK_CUT_BY_CAP = "cut by the ledger's tasks_ledger cap"
TASK_NESTED = "a subtask of a subtask: the ledger shows two levels"
TASK_PARENT_UNLISTED = "its parent task is not in the list (archived or unknown)"
ERROR_AFTER_DIGEST = "after digestUpTo: it stays in the live messages after the boundary"
ERROR_NO_ACTIVITY = "no activity list was rendered"
ERROR_LINE_CAP = "cut by the activity list's 200-line cap"


def user_ask_appended(reason: str) -> str:
    """Section report: D13 appended the newest ask to Recent user input."""
    return f"newest user ask appended (D13): {reason}"


def no_gain(before: int, after: int) -> str:
    """rebuild/insert outcome no-gain: the inflation guard refused the rebuild."""
    return (
        f"The rebuild would not make the request smaller (about {before} tokens now, {after} with the "
        "boundary), so nothing was inserted. Continue without a rebuild; a later checkpoint with a "
        "newer watermark covers more and will gain."
    )


def boundary_id_required(newest_host_id: str) -> str:
    """rebuild/insert without boundaryMessageId where the sidecar cannot mint a sortable ID."""
    return (
        "required for this session: its message IDs are declared ascending but "
        f"are not MiMo v2 or legacy v1 IDs (newest: {newest_host_id!r}), so the sidecar cannot mint "
        "a boundary ID that sorts after them and before the host's next ones; pass a new ID from "
        "the host's own scheme."
    )


def usage_from_earlier_step(finished_id: str, step_id: str) -> str:
    """The trigger counted an earlier step's usage: the newest finished step carries none."""
    return (
        f"The newest finished step {finished_id} carries no usage: the trigger counts the usage of "
        f"{step_id}, the newest step since the last boundary that has one."
    )


def usage_estimated(finished_id: str, tokens: int) -> str:
    """The trigger counted the estimated request: no step since the last boundary has usage."""
    return (
        f"No step since the last boundary carries usage (the newest finished step is {finished_id}): "
        f"the trigger counts the estimated size of the request instead, {tokens} tokens."
    )


def collapse_unknown_endpoint_warning(field: str, message_id: object) -> str:
    """behavior.md#creation-order/behavior.md#collapse: sequence mode cannot order an endpoint it never
    registered, so nothing collapses."""
    return (
        f"Collapse skipped: the boundary's {field} {message_id!r} is not a registered message, so the "
        "digested tail cannot be located; the request keeps the whole tail."
    )


# ---------------------------------------------------------------------------------------------
# Request assembly (team wording, behavior.md#part-conversion: "a subtask part contributes host text")
# ---------------------------------------------------------------------------------------------
def subtask_request_text(agent: str, description: str) -> str:
    """The user-turn text standing for a `subtask` part: which agent was delegated what."""
    return f"[Delegated a subtask to the {agent} agent: {description}]"


# ---------------------------------------------------------------------------------------------
# Rebuild diagnostics (team wording): insert details and warnings reported to the host
# ---------------------------------------------------------------------------------------------
NO_MODEL_LIMITS = "no model limits known: overflow handling is off"
RENDERED_EMPTY = "the rebuild text rendered empty"
MICROCOMPACTION_SKIPPED = "microcompaction skipped: the watermark message is unknown"


def watermark_followed_writer(before: str, after: str) -> str:
    """D21: the insert waited for a writer that succeeded, and its boundary follows that writer."""
    return (
        f"the checkpoint writer this insertion waited for stored the watermark {after!r}: the boundary "
        f"follows it (D21; the watermark before the wait was {before!r}, which "
        "checkpoint.follow_writer_watermark: false keeps, D4)"
    )


def watermark_kept_before_wait(used: str, stored: str) -> str:
    """D4 (`checkpoint.follow_writer_watermark: false`): the stored watermark moved during the wait."""
    return (
        f"the stored watermark advanced to {stored!r} during the writer wait: this insertion uses the "
        f"watermark read before the wait, {used!r} (checkpoint.follow_writer_watermark: false, D4)"
    )


def digest_point_moved(requested: str, call_ids: Sequence[str]) -> str:
    """D20: the host's digestUpTo would digest a step still waiting for results."""
    return (
        f"digestUpTo {requested!r} moved before the newest step: its calls {_call_list(call_ids)} have no "
        "result yet, and a digest would record them as interrupted (D20); the step stays live"
    )


def steps_restated(call_ids: Sequence[str]) -> str:
    """D20: results that arrived after the boundary had digested their calls."""
    return (
        f"the results of {_call_list(call_ids)} arrived after the boundary digested their calls as "
        "interrupted: their step is sent again after the boundary, with the results (D20)"
    )


def _call_list(call_ids: Sequence[str]) -> str:
    return ", ".join(json.dumps(c, ensure_ascii=False) for c in call_ids)


def unmapped_tool_results(counts: Mapping[str, int]) -> str:
    """Completed results after W that microcompaction left only because their tool names are neither
    compactable nor mapped (behavior.md#compactable-tools): how many, and each name with its count,
    most first; and what the host can do about it."""
    named = ", ".join(
        f"{json.dumps(name, ensure_ascii=False)} \u00d7{n}"
        for name, n in sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    )
    total = sum(counts.values())
    results, their = ("result", "its tool name is") if total == 1 else ("results", "their tool names are")
    return (
        f"microcompaction left {total} completed tool {results} after the watermark uncleared: {their} "
        f"neither compactable nor in toolNameMap: {named} (map a name onto a "
        "compactable tool to clear its results, or onto any other name to keep them without this warning)"
    )


def activity_slice_skipped(endpoint: str) -> str:
    return f"activity slice skipped: unknown endpoint ({endpoint})"


def rendering_failed(exc: Exception) -> str:
    return f"rendering failed: {exc}"


def companion_text_omitted(what: str, exc: Exception) -> str:
    return f"{what} omitted: {exc}"


# ---------------------------------------------------------------------------------------------
# Domain error details (team wording). The RPC edge prefixes each with "<method>: <field>: ".
# ---------------------------------------------------------------------------------------------
# Host data the schema accepts but the session cannot (error 1005, 1003), after the field path.
NON_EMPTY_STRING_REQUIRED = "a non-empty string is required"
OBJECT_REQUIRED = "an object is required"
STRING_REQUIRED = "a string is required"
ROLE_REQUIRED = "must be 'user', 'assistant' or 'tool'"
MILLISECONDS_REQUIRED = "a non-negative integer number of milliseconds is required"
PART_ID_REQUIRED = "a non-empty string is required to upsert a part"


# The problems of a declared host field (core/session/data_types.py), in pydantic's own words, so that a
# -32602 reads the same whichever check found it, and an importer's TranscriptError says the same.
FIELD_REQUIRED = "Field required"
STRING_TYPE = "Input should be a valid string"
STRING_UNICODE = "Input should be a valid string, unable to parse raw data as a unicode string"
BOOL_TYPE = "Input should be a valid boolean"
INT_TYPE = "Input should be a valid integer"
INT_FROM_FLOAT = "Input should be a valid integer, got a number with a fractional part"
NUMBER_TYPE = "Input should be a valid number"
FINITE_NUMBER = "Input should be a finite number"
DICT_TYPE = "Input should be a valid dictionary"
LIST_TYPE = "Input should be a valid list"


def string_too_short(min_length: int) -> str:
    return f"String should have at least {min_length} character{'s' if min_length != 1 else ''}"


def at_least(bound: float) -> str:
    return f"Input should be greater than or equal to {bound}"


def at_most(bound: float) -> str:
    return f"Input should be less than or equal to {bound}"


def one_of(choices: list[str]) -> str:
    """`Input should be 'a', 'b' or 'c'` (each choice already quoted, or a noun such as `a list`)."""
    listed = choices[0] if len(choices) == 1 else ", ".join(choices[:-1]) + " or " + choices[-1]
    return f"Input should be {listed}"


# `compaction.max_context` values refused by the config's schema (-32602; wire/config.py).
BUDGET_TYPE = "must be a number or a string"
GLOB_TYPE = "a model glob must be a string"


def budget_number_out_of_range(largest: int) -> str:
    return f"a number must be finite, from 0 to {largest}"


def budget_text_too_long(longest: int) -> str:
    return f"a string must be at most {longest} characters"


def budget_or_map(problem: str) -> str:
    return f"{problem}, or an object mapping model globs to numbers or strings"


def message_twice_in_batch(message_id: str) -> str:
    return f"message {message_id!r} appears twice in the batch"


def message_also_removed(message_id: str) -> str:
    return f"message {message_id!r} is also removed"


def no_message(message_id: str) -> str:
    return f"no message {message_id!r}"


def no_open_session(session_id: str) -> str:
    return f"no open session {session_id!r}"


def session_already_open(session_id: str) -> str:
    return f"session {session_id!r} is already open; call session/close first"


def unusable_directory_name(value: str) -> str:
    return f"{value!r} is not usable as a directory name (empty, '.', '..', a path separator or NUL)"


def stale_revision(base_revision: int, session_id: str, revision: int) -> str:
    return f"{base_revision} is stale, session {session_id!r} is at revision {revision}"


def watermark_not_computable(session_id: str) -> str:
    return (
        f"absent, and no watermark can be computed for session {session_id!r} yet; "
        "send the watermark message ID"
    )


def no_message_in_session(message_id: str, session_id: str) -> str:
    return f"no message {message_id!r} in session {session_id!r}"


def no_writer_in_flight(session_id: str) -> str:
    return (
        f"no checkpoint writer is in flight for session {session_id!r} "
        "(checkpoint/prepare or checkpoint/writerStarted must come first)"
    )


def closed_during_writer_wait(session_id: str) -> str:
    return f"session {session_id!r} was closed while waiting for its writer"


def not_in_main_view(message_id: str | None) -> str:
    return f"message {message_id!r} is not in the main view"


def writer_end_not_in_main_view(message_id: str | None) -> str:
    return f"the in-flight writer's watermark {message_id!r} is not in the main view"


def writer_watermark_mismatch(given: str, in_flight: str | None) -> str:
    return (
        f"{given!r} is not the watermark of the writer in flight ({in_flight!r}); "
        "a writer is settled by the request that covers its own range"
    )


# ---------------------------------------------------------------------------------------------
# The checkpoint writer kit (team wording): commit refusals and warnings, writes, prepare warnings
# ---------------------------------------------------------------------------------------------
CHECKPOINT_BLANK = (
    "is blank; an empty checkpoint would replace the current one with nothing "
    "(report the writer with checkpoint/writerFinished failure instead)"
)


def checkpoint_has_nul(index: int) -> str:
    return f"is not text: it holds a NUL character (U+0000) at index {index}"


def checkpoint_has_surrogate(index: int) -> str:
    return f"is not text: it holds a lone UTF-16 surrogate at index {index}"


def checkpoint_too_large(size: int, limit: int) -> str:
    return f"is {size} bytes of UTF-8, over checkpoint.commit_max_bytes ({limit})"


CHECKPOINT_IS_TEMPLATE = "checkpoint.md: the content is the bare template: no section has a body yet"
CHECKPOINT_NO_TOPIC = "checkpoint.md: no `Topic:` line: the checkpoint index will show the topic as (unknown)"


def checkpoint_over_budget(tokens: int, budget: int) -> str:
    return (
        f"checkpoint.md: {tokens} tokens, over push_caps.checkpoint ({budget}): a rebuild reads it "
        "section-aware and leaves out what does not fit"
    )


WRITE_PROBLEMS = {
    "no-root": "the memory root is not an existing directory",
    "outside-root": "the path would leave the memory root",
    "not-a-directory": "a directory on the path is not a directory",
    "not-a-file": "the file is not a regular file",
    "os-error": "the system refused the write",
    "memory-write-off": "memory writing is disabled (memory.disable_write)",
    "no-memory-root": "no memory root is configured",
}


def memory_write_refused(path: str, problem: str, detail: str = "") -> str:
    reason = WRITE_PROBLEMS.get(problem, problem)
    return f"{path} was not written: {reason}" + (f" ({detail})" if detail else "") + "; nothing changed"


def empty_request(agent_id: str, fmt: str, view_messages: int) -> str:
    """Why `request/build` refuses a request with no message (error 1012)."""
    if view_messages == 0:
        return f"no message to send: agent {agent_id!r} has no message in its view yet"
    return (
        f"no message to send: none of the {view_messages} messages in agent {agent_id!r}'s view gives a "
        f"{fmt} message (data.warnings says what was left out: parts no format carries, text flagged "
        "ignored or blank, ...)"
    )


def current_checkpoint_unusable(path: str, problem: str) -> str:
    return (
        f"checkpoint.md: {path}: {problem}; the writer instructions treat it as absent, and a commit "
        "replaces it"
    )


def current_checkpoint_invalid_utf8(path: str) -> str:
    return f"checkpoint.md: {path}: invalid UTF-8, replaced by U+FFFD in the writer instructions"


# ---------------------------------------------------------------------------------------------
# Configuration warnings (team wording), shown to the host as one window/logMessage per load
# ---------------------------------------------------------------------------------------------
def config_warnings_message(warnings: list[str]) -> str:
    """The `window/logMessage` text: the warnings, each a `path: problem`, as protocol.md shows."""
    return "; ".join(warnings)


# ---------------------------------------------------------------------------------------------
# Pointers that name the model's own tools (team wording, behavior.md#d18). The session declares
# them with `toolPointers`; without it the reference's wording above is used, byte for byte.
# A `how` argument is a way to reach a tool, already written out by `core.tool_pointers`.
# ---------------------------------------------------------------------------------------------
POINTER_PREAMBLE_HEAD = (
    "The sections below are auto-loaded session context already in this message. File-backed "
    "sections list their path on a `File:` line"
)


def tool_call(name: str, **arguments: str | int) -> str:
    """A call written as the model would make it: `name(key="value", n=3)` (strings as JSON)."""
    args = ", ".join(
        f"{key}={json.dumps(value, ensure_ascii=False) if isinstance(value, str) else value}"
        for key, value in arguments.items()
    )
    return f"{name}({args})"


def host_tool(name: str) -> str:
    """A host tool named in prose (its arguments are the host's: the text cannot spell them)."""
    return f"the `{name}` tool"


def pointer_preamble(search: str | None, can_read: bool) -> str:
    """The preamble with a way to search a file-backed section's file (`search`), or none."""
    if search is not None:
        return (
            f"{POINTER_PREAMBLE_HEAD} \u2014 {search} for specific facts; do not read the whole file again."
        )
    return POINTER_PREAMBLE_HEAD + ("; do not read the whole file again." if can_read else ".")


def search_file_with_host(tool: str) -> str:
    return f"search that path with {host_tool(tool)}"


def search_file_with_call(call: str) -> str:
    return f"search that path with {call}"


def pointer_elision_marker(elided_tokens: int, message_id: str, fetch: str | None) -> str:
    """The elision marker naming the tool that fetches the full text (`fetch`), or none."""
    how = f"; fetch the full text with {fetch}" if fetch is not None else ""
    return f"[\u2026 {elided_tokens} tokens elided from message {message_id}{how} \u2026]"


LEDGER_TRUNCATED_BARE = "\u2026 ledger truncated"


def pointer_ledger_note(call: str | None) -> str:
    """The ledger's cut note (at most 59 UTF-16 units, behavior.md#section-tasks): the call that lists
    every task when it fits, else the bare note."""
    if call is None:
        return LEDGER_TRUNCATED_BARE
    note = f"{LEDGER_TRUNCATED_BARE}; {call} lists all"
    return note if len(note.encode("utf-16-le")) // 2 <= 59 else LEDGER_TRUNCATED_BARE


def read_rest_with_host(tool: str, offset: int) -> str:
    """The proportional hint's last sentence, for the host's own reader."""
    return f" Read the rest of the file with {host_tool(tool)}, from character offset {offset}."


def read_rest_with_call(call: str) -> str:
    """The proportional hint's last sentence, for a call that carries the offset."""
    return f" Read the rest of the file with {call}."


def pointer_proportional_hint(budget: int, path: str, total_tokens: int, rest: str) -> str:
    return f"\u26a0 Truncated to a {budget}-token budget: {path} holds {total_tokens} tokens in all.{rest}"


def pointer_skeleton_warning(total_tokens: int, budget: int, read_whole: str | None) -> str:
    """The outline warning; its second line (three spaces first, `read_whole` from
    `skeleton_read_with_host` or `skeleton_read_with_call`) only when a tool can read the file."""
    first = (
        f"\u26a0 This file holds {total_tokens} tokens, far over its {budget}-token budget: only its "
        f"outline (headings, italic notes and index lines) is included."
    )
    return first if read_whole is None else f"{first}\n   {read_whole} for the full content."


def skeleton_read_with_host(tool: str, path: str) -> str:
    return f"Read {path} with {host_tool(tool)}"


def skeleton_read_with_call(call: str) -> str:
    return f"Read it with {call}"


def pointer_section_aware_hint(budget: int, path: str, total_tokens: int, how: str | None) -> str:
    rest = f" Read it with {how} for the full content." if how is not None else ""
    return f"\u26a0 Trimmed to a {budget}-token budget: {path} holds {total_tokens} tokens in all.{rest}"


def pointer_stop_reminder(how: str) -> str:
    """The stop reminder (behavior.md#reminders) with the way to open a task's progress.md (`how`)."""
    return "\n".join(
        [
            "<system-reminder>",
            "Your previous turn ended with a stop. Before you stop again, open the head section of the "
            f"progress.md of the task you worked on most recently ({how}) and compare that task's "
            "specification with its newest progress entries. If any work remains, carry on with the next "
            "concrete step. Stop only when the specification is fully met, or when you need information "
            "from the user that you cannot work out yourself.",
            "</system-reminder>",
        ]
    )


def progress_with_host_reader(tool: str, path_pattern: str) -> str:
    return f"read {path_pattern} with {host_tool(tool)}"


def pointer_actors_count_line(n: int, tool: str | None) -> str:
    how = f"; operate them through {host_tool(tool)}" if tool is not None else ""
    return f"{n} background actor(s) registered{how}."


def search_memory_with_host_grep(tool: str, memory_root: str) -> str:
    return f'{host_tool(tool)} on {memory_root}, for "<keyword>"'


def read_with_host(tool: str, path: str) -> str:
    return f"{host_tool(tool)} on {path}"


def pointer_memory_reminder(session_dir: str, usages: list[str], root_relative: bool = False) -> str:
    """The per-turn memory reminder (behavior.md#memory-reminder) with the usages the model's tools
    serve (at least one); `root_relative`: `session_dir` is relative to the memory root (D22)."""
    where = f"{session_dir} (paths relative to the memory root)" if root_relative else session_dir
    return "\n".join(
        [
            "<system-reminder>",
            f"Session memory lives in {where}; anything missing from the current context can be "
            "looked up with:",
            *("  " + usage for usage in usages),
            "",
            "Consult memory before asking the user for information it may already hold.",
            "</system-reminder>",
        ]
    )


def named_tools_missing(where: str, names: list[str]) -> str:
    """`warnings`: the text names tools that the request's tools do not hold (behavior.md#d18)."""
    listed = ", ".join(f"`{n}`" for n in names)
    return (
        f"{where} names {listed}, which the request's tools do not hold: declare the model's own tools in "
        "toolPointers, or add the sidecar's with sidecarTools"
    )


# ---------------------------------------------------------------------------------------------
# The sidecar's model tools (team wording, behavior.md#d18): definitions and answers. Every answer
# is read by the model; a refusal says what to send instead.
# ---------------------------------------------------------------------------------------------
HISTORY_TOOL_DESCRIPTION = (
    "The conversation's stored history, in full, including what a context rebuild removed from your "
    "view: tool results shown as \"[Old tool result content cleared]\", steps summed up in the "
    "\"Recent activity\" list, the middle of a long user message elided as \"[\u2026 N tokens elided "
    "\u2026]\". operation=around: one stored message by messageID, every part in full, then its "
    "neighbours (before/after, 2 each by default). operation=search: find query (plain text, any case; "
    "with regex=true an RE2 regular expression) in every stored message; lists message IDs, roles, "
    "times and snippets, newest first. operation=result: one tool call by callID, with its input and "
    "its whole result. A long answer ends with the offset to call again with."
)
MEMORY_TOOL_DESCRIPTION = (
    "The session's memory files: its checkpoint.md, notes.md and task progress files, the project's "
    "and the global MEMORY.md, and the other notes the \"Memory keys index\" lists. operation=search: "
    "find query (plain text, any case; with regex=true an RE2 regular expression) in every memory "
    "file, or only in path; lists file, line number and line. operation=read: one file by path, "
    "relative to the memory root as the \"File:\" lines and the Memory keys index show it (never an "
    "absolute path), from character offset. A long answer ends with the offset to call again with."
)
TASK_TOOL_DESCRIPTION = (
    "The session's task ledger. operation=list: every task with its ID, status and summary, subtasks "
    "under their parent, and whether it has a progress.md. operation=get: one task by id, with its "
    "progress.md from character offset. A long answer ends with the offset to call again with."
)
ARG_OPERATION = "What to do."
ARG_OFFSET = "Where to continue a long answer: the offset its last line gave (default 0)."
ARG_QUERY = "search: the text to find (any case), or with regex=true an RE2 regular expression."
ARG_REGEX = "search: read query as an RE2 regular expression (default false: plain text)."
ARG_MESSAGE_ID = "around: the ID of the stored message to show, as the context writes it (msg_…)."
ARG_BEFORE = "around: how many earlier messages of its agent to show too (default 2, at most 20)."
ARG_AFTER = "around: how many later messages of its agent to show too (default 2, at most 20)."
ARG_CALL_ID = "result: the ID of the tool call, as the context writes it."
ARG_PATH = (
    "read: the file, by its path relative to the memory root (sessions/<session>/notes.md), as File: "
    "lines show it; search: look only in this file."
)
ARG_TASK_ID = "get: the task's ID (T1, T1.2, 3, …)."


def unknown_tool(name: str, names: list[str]) -> str:
    return f"{name!r} is not one of the sidecar's model tools ({', '.join(names)})"


def bad_operation(tool: str, value: object, choices: list[str]) -> str:
    got = "none was given" if value is None else f"got {json.dumps(value, ensure_ascii=False)}"
    return f"{tool}: operation must be one of {', '.join(choices)} ({got}). Call again with one of them."


def unknown_arguments(where: str, extra: list[str], allowed: list[str]) -> str:
    return (
        f"{where} does not take {', '.join(extra)}; its arguments are {', '.join(allowed)} "
        "(names are case-sensitive). Call again without the others."
    )


def argument_required(where: str, key: str) -> str:
    return f"{where} needs {key}. Call again with it."


def argument_type(where: str, key: str, expected: str, value: object) -> str:
    shown = json.dumps(value, ensure_ascii=False, default=str)
    return f"{where}: {key} must be {expected}, not {shown}. Call again with a valid value."


def argument_over(where: str, key: str, value: int, maximum: int) -> str:
    return f"{where}: {key} is at most {maximum} (got {value}). Call again with a smaller value."


def offset_past_end(offset: int, total: int) -> str:
    return (
        f"offset {offset} is past the end: this text holds {total} characters. Use an offset below {total}."
    )


def answer_continues(remaining: int, next_offset: int) -> str:
    return f"[\u2026 {remaining} more characters: call again with offset={next_offset} to read on]"


QUERY_EMPTY = "search needs a non-empty query. Call again with the text to find."


def query_too_long(length: int, maximum: int) -> str:
    return f"the query is {length} characters long, over the limit of {maximum}. Use a shorter one."


def bad_pattern(reason: str) -> str:
    return (
        f"query is not a regular expression RE2 accepts: {reason}. RE2 has no backreferences or "
        "look-around; fix the pattern, or call again with regex=false to search for the plain text."
    )


def message_header(message_id: str, role: str, created: str, agent: str, finish: object) -> str:
    stop = f" \u00b7 finish {finish}" if isinstance(finish, str) and finish else ""
    return f"\u2500\u2500 {message_id} \u00b7 {role} \u00b7 {created} \u00b7 agent {agent}{stop}"


def asked_message_heading(message_id: str) -> str:
    return f"Message {message_id}, as stored, every part in full:"


def neighbours_before(n: int) -> str:
    return f"The {n} message(s) before it:"


def neighbours_after(n: int) -> str:
    return f"The {n} message(s) after it:"


def no_stored_message(message_id: str) -> str:
    return (
        f"no stored message has the ID {message_id!r}. Copy the ID as the context writes it (msg_\u2026), "
        "or find it with operation=search."
    )


def call_label(name: str, call_id: str) -> str:
    return f"[tool call {name} \u00b7 {call_id}]"


INPUT_LABEL = "input: "
PARTIAL_OUTPUT_LABEL = "[its output up to the interruption]"
NO_RESULT_YET = "[no result stored: the call has not finished, or it was interrupted]"
REASONING_LABEL = "[reasoning]"
COMPACTION_PART_LABEL = "[compaction boundary: the conversation before it was summarised]"
CLEARED_NOTE = " \u00b7 cleared from the model's requests; the full output follows"


def result_label(call_id: str, status: str, cleared: bool) -> str:
    return f"[tool result \u00b7 {call_id} \u00b7 {status}{CLEARED_NOTE if cleared else ''}]"


def result_of(call_id: str) -> str:
    return f"result of {call_id}"


def flagged_text_label(flags: list[str]) -> str:
    return f"[{' '.join(flags)} text]"


def file_label(filename: object, mime: object) -> str:
    name = filename if isinstance(filename, str) and filename else "(unnamed)"
    kind = f" ({mime})" if isinstance(mime, str) and mime else ""
    return f"[attached file {name}{kind}: not shown]"


def checkpoint_label(covered: object, digest: object) -> str:
    more = f", its activity list digests up to {digest}" if isinstance(digest, str) else ""
    return f"[rebuild boundary: the checkpoint covers up to {covered}{more}]"


def subtask_label(agent: object, description: object) -> str:
    return f"[subtask delegated to the {agent or '?'} agent: {description or ''}]"


def other_part_label(ptype: str) -> str:
    return f"[{ptype} part]"


def call_heading(name: str, call_id: str, issuer: str, created: str) -> str:
    return f"Tool call {call_id}: {name}, issued in message {issuer} at {created}"


def result_heading(carrier: str, status: str, cleared: bool) -> str:
    return f"Result ({status}), in message {carrier}{CLEARED_NOTE if cleared else ''}:"


def no_stored_call(call_id: str) -> str:
    return (
        f"no stored tool call has the ID {call_id!r}. Copy the call ID as the context writes it, or find "
        "it with operation=search."
    )


def history_hit(message_id: str, role: str, created: str, where: str, snippet: str) -> str:
    return f"- {message_id} \u00b7 {role} \u00b7 {created} \u00b7 {where}\n  {snippet}"


def hits_heading(total: int, offset: int, shown: int) -> str:
    if total == 0:
        return "No stored message matches."
    return f"{total} match(es), newest first; {_showing(offset, shown)}:"


def _showing(offset: int, shown: int) -> str:
    return f"showing {offset + 1}\u2013{offset + shown}" if shown else "none shown here"


def hit_offset_past_end(offset: int, total: int) -> str:
    return f"offset {offset} is past the last match: there are {total}. Use an offset below {total}."


def more_hits(remaining: int, next_offset: int) -> str:
    return f"[\u2026 {remaining} more match(es): call again with offset={next_offset}]"


MEMORY_PROBLEMS = {
    "outside-root": (
        "it must name a file under the memory root by its path relative to the root "
        "(sessions/<session>/notes.md), not an absolute path; \"..\" and \".\" are not allowed"
    ),
    "outside-scope": (
        "it is not a memory file of this session: those are under sessions/<this session>/, "
        "projects/<this project>/ and global/"
    ),
    "symlink": "a symbolic link is on its path, and memory files are read only through real directories",
    "missing": "there is no such file (the Memory keys index lists the memory files)",
    "not-a-file": "it is not a regular file",
    "binary": "it holds binary data, not text",
    "too-large": "it is larger than the 64 MiB a memory file may be",
    "unreadable": "it cannot be read",
}


def memory_refused(key: str, problem: str) -> str:
    return f"{key!r} cannot be read: {MEMORY_PROBLEMS.get(problem, problem)}."


def memory_absolute_path(key: str, relative: str) -> str:
    """An absolute path inside the memory root given to the memory tool (behavior.md#d22)."""
    return (
        f"{key!r} is an absolute path: the memory tool takes paths relative to the memory root, as the "
        f"File: lines and the Memory keys index show them. Call again with path={json.dumps(relative)}."
    )


def memory_unreadable(key: str, reason: str) -> str:
    return f"{key!r} cannot be read: {reason}."


def memory_read_heading(key: str, start: int, end: int, total: int) -> str:
    return f"File {key}, characters {start}\u2013{end} of {total}:"


def memory_hit(key: str, line: int, snippet: str) -> str:
    return f"- {key}:{line}: {snippet}"


def memory_hits_heading(total: int, files: int, offset: int, shown: int) -> str:
    if total == 0:
        return f"No line of the {files} memory file(s) matches."
    return f"{total} matching line(s) in {files} memory file(s); {_showing(offset, shown)}:"


def tasks_heading(listed: int, archived: int) -> str:
    more = f" ({archived} archived task(s) not shown)" if archived else ""
    return f"{listed} task(s){more}:"


def task_line(depth: int, task_id: str, status: str, summary: str, has_progress: bool) -> str:
    progress = " \u00b7 has progress.md" if has_progress else ""
    return f"{'  ' * depth}- {task_id} [{status}] {summary}{progress}"


def no_task(task_id: str, ids: list[str]) -> str:
    known = ", ".join(ids) if ids else "none"
    return f"no task has the ID {task_id!r} (the tasks are: {known}). Call again with one of them."


def task_fields(
    task_id: str, status: str, summary: str, parent: str | None, created: str, ended: str | None
) -> str:
    lines = [f"Task {task_id} [{status}]: {summary}", f"created {created}"]
    if parent:
        lines.append(f"subtask of {parent}")
    if ended:
        lines.append(f"ended {ended}")
    return "\n".join(lines)


def no_progress(problem: str) -> str:
    reason = MEMORY_PROBLEMS.get(problem, problem) if problem != "missing" else "none is written yet"
    return f"No progress.md to show: {reason}."


def progress_heading(key: str, start: int, end: int, total: int) -> str:
    return f"Its progress.md ({key}), characters {start}\u2013{end} of {total}:"


# ------------------------------------------------------------------------------------------ importers
# Texts an imported session carries where the source recorded nothing (docs/importers.md, "Aider"):
# the model reads them, so each says what is missing and why, and nothing more.
AIDER_CHAT_CLEARED = (
    "The user cleared the chat with Aider's /clear: the conversation before this point was no longer "
    "sent to the model, and no summary of it was kept."
)


def aider_command_output(lines_added: int | None, added: bool | None) -> str:
    """The result of a command Aider ran: Aider prints a command's output to the terminal but never
    writes it to its chat history, so only what happened to it is known (its line count when the
    user added it to the chat)."""
    missing = "[The output is not recorded: Aider does not write command output to its chat history."
    if lines_added is not None:
        return f"{missing} {lines_added} lines of it were added to the chat.]"
    if added is False:
        return f"{missing} The user did not add it to the chat.]"
    return missing + "]"
