"""Codex CLI rollout JSONL (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-…-<uuid>.jsonl`).

A rollout is a flat list of Responses-API items (`response_item`) and UI events (`event_msg`).
Items become messages (docs/importers.md has the full table):

- model output items (`reasoning`, assistant `message`, `function_call`, `custom_tool_call`,
  `local_shell_call`, `web_search_call`, ...) -> one assistant message per provider response,
  items kept as parts in order (`output_text` as a MiMo `text` part). A response ends at its
  `token_count` event, whose `last_token_usage` becomes the message's `tokens`. A tool output
  written before the response ended splits it into several stored entries sharing
  `providerMessageID`, as Claude Code does;
- tool outputs (`function_call_output`, `custom_tool_call_output`, ...) -> a `tool`-role carrier;
- `user` messages -> user messages; `developer` messages -> user messages whose text is synthetic,
  `info.providerRole = "developer"`. Injected context (`<environment_context>`, AGENTS.md
  instructions...) is synthetic too, and so is any user item no `user_message` event matches;
- `compacted` -> a user message with a `compaction` part (view boundary): with
  `replacement_history`, followed by that history; without, carrying the summary and the recent
  user messages Codex re-injects, as synthetic text;
- `thread_rolled_back` drops the last N user turns; `event_msg` copies of items, `turn_context`,
  `session_meta` (its instructions become the request prefix) and other bookkeeping are counted.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import tool_names, usage
from .errors import TranscriptError
from .fields import Json, as_count, as_dict, as_list, as_str, epoch_ms, nonempty_str
from .harness import CODEX_MARKERS, starts_with_marker, synthetic
from .report import ImportReport
from .session_builder import Draft, SessionDraft
from .source import Record, jsonl_records, read_bytes

FORMAT = "codex"
ENVELOPES = frozenset({"session_meta", "response_item", "event_msg", "turn_context", "compacted"})
MODEL_ITEMS = frozenset(
    {
        "reasoning",
        "function_call",
        "custom_tool_call",
        "local_shell_call",
        "web_search_call",
        "tool_search_call",
        "image_generation_call",
    }
)
CALL_ITEMS = frozenset({"function_call", "custom_tool_call", "local_shell_call"})
OUTPUT_ITEMS = frozenset({"function_call_output", "custom_tool_call_output", "tool_search_output"})
COMPACTION_ITEMS = frozenset({"compaction", "compaction_summary"})
TURN_EVENTS = frozenset({"task_started", "task_complete", "turn_aborted"})
HARNESS_METADATA = "internal_chat_message_metadata_passthrough"  # per-item harness data, not content
COMPACT_USER_TOKENS = 20_000  # Codex re-injects the newest user messages up to this many tokens
CARRIER_ROLE = "tool"


def read_codex(path: Path, report: ImportReport, *, tolerate_bad_lines: bool) -> SessionDraft:
    records = list(jsonl_records(path, read_bytes(path), report, tolerate_bad_lines=tolerate_bad_lines))
    reader = _Rollout(path, report, SessionDraft(session_id=_session_id(records, path)))
    reader.prescan(records)
    for rec in records:
        reader.record(rec)
    reader.session.tool_name_map = tool_names.codex_map(_calls(reader.session))
    return reader.session


def _calls(session: SessionDraft) -> list[tuple[str, object]]:
    """The name and arguments of every `function_call` imported (what `wait` is depends on them)."""
    return [
        (str(part.get("name")), part.get("arguments"))
        for drafts in session.slices.values()
        for draft in drafts
        for part in draft.parts
        if part.get("type") == "function_call"
    ]


def _session_id(records: list[Record], path: Path) -> str:
    for rec in records:
        meta = _meta_payload(rec.data)
        if meta is not None:
            sid = nonempty_str(meta.get("id")) or nonempty_str(meta.get("session_id"))
            if sid is not None:
                return sid
    return path.name.removesuffix(".jsonl")


def _meta_payload(data: Json) -> Json | None:
    if data.get("type") == "session_meta":
        return as_dict(data.get("payload"))
    if "type" not in data and "payload" not in data and nonempty_str(data.get("id")) and "timestamp" in data:
        return data  # bare era: the first line is the metadata itself
    return None


def _text_of(content: Any) -> str:
    return "\n".join(
        b["text"] for b in as_list(content) or [] if isinstance(b, dict) and isinstance(b.get("text"), str)
    )


@dataclass
class _Rollout:
    path: Path
    report: ImportReport
    session: SessionDraft
    model: str | None = None
    provider: str = "openai"
    context_window: int | None = None
    has_token_counts: bool = False
    asked: Counter[str] = field(default_factory=Counter)  # texts of `user_message` events
    has_user_events: bool = False
    meta_seen: bool = False
    assistant: Draft | None = None  # the stored entry model output is appended to
    carrier: Draft | None = None
    response: str | None = None  # key of the open provider response

    @property
    def out(self) -> list[Draft]:
        return self.session.slice()

    # -- pass 1: what the whole file says -------------------------------------------------------
    def prescan(self, records: list[Record]) -> None:
        for rec in records:
            payload = as_dict(rec.data.get("payload")) or {}
            if rec.data.get("type") != "event_msg":
                continue
            if payload.get("type") == "token_count" and as_dict(payload.get("info")) is not None:
                self.has_token_counts = True
            elif payload.get("type") == "user_message":
                self.has_user_events = True
                self.asked[(as_str(payload.get("message")) or "").strip()] += 1

    # -- pass 2 -----------------------------------------------------------------------------------
    def record(self, rec: Record) -> None:
        data = rec.data
        kind = as_str(data.get("type"))
        payload = as_dict(data.get("payload"))
        meta = _meta_payload(data)
        if meta is not None:
            self._session_meta(meta)
        elif kind in ENVELOPES and payload is None:
            raise TranscriptError(self.path, f"{kind} record without a payload object", line=rec.line)
        elif kind == "response_item" and payload is not None:
            self._item(payload, rec, f"{self.session.session_id}.L{rec.line}", copy=False)
        elif kind == "event_msg" and payload is not None:
            self._event(payload, rec)
        elif kind == "turn_context" and payload is not None:
            self.model = nonempty_str(payload.get("model")) or self.model
            self.report.skip("turn_context record (model read from it)")
        elif kind == "compacted" and payload is not None:
            self._compacted(payload, rec)
        elif (
            kind is not None
            and "payload" not in data
            and (kind in MODEL_ITEMS or kind in OUTPUT_ITEMS or kind == "message")
        ):
            self._item(data, rec, f"{self.session.session_id}.L{rec.line}", copy=False)  # bare era
        elif data.get("record_type") is not None:
            self.report.skip("record_type line (legacy bookkeeping)")
        else:
            self.report.skip(f"{kind or '(no type)'} record")

    def _session_meta(self, meta: Json) -> None:
        if self.meta_seen:
            self.report.skip("session_meta of a parent session (fork)")
            return
        self.meta_seen = True
        self.provider = nonempty_str(meta.get("model_provider")) or self.provider
        self.context_window = as_count(meta.get("context_window")) or self.context_window
        instructions = as_dict(meta.get("base_instructions"))
        text = as_str(instructions.get("text")) if instructions else as_str(meta.get("instructions"))
        if text:
            self.session.request_prefix = {"system": [text]}
        self.report.skip("session_meta record (session ID and instructions read from it)")

    # -- items ------------------------------------------------------------------------------------
    def _item(self, item: Json, rec: Record, mid: str, *, copy: bool) -> None:
        itype = as_str(item.get("type")) or "(no type)"
        if itype == "message":
            role = as_str(item.get("role"))
            if role == "assistant":
                self._model_output(item, rec, mid)
            else:
                self._user(item, rec, mid, copy=copy)
        elif itype in MODEL_ITEMS:
            self._model_output(item, rec, mid)
        elif itype in OUTPUT_ITEMS:
            self._output(item, rec, mid)
        elif itype in COMPACTION_ITEMS:
            self._boundary(rec, mid, encrypted=item.get("encrypted_content"))
        elif itype == "ghost_snapshot":
            self._skip("ghost_snapshot item (undo data, not model content)", copy=copy)
        else:
            self._skip(f"response_item {itype} (not a known model item)", copy=copy)

    def _skip(self, reason: str, *, copy: bool) -> None:
        """Count a record left out; an item of a replacement history is part of its `compacted`
        record, which is imported, so leaving it out is an adjustment."""
        if copy:
            self.report.adjust(f"replacement history: {reason}")
        else:
            self.report.skip(reason)

    def _user(self, item: Json, rec: Record, mid: str, *, copy: bool) -> None:
        self._end_response()
        role = as_str(item.get("role")) or "user"
        parts = [_input_part(block, self.path, rec.line) for block in as_list(item.get("content")) or []]
        text = _text_of(item.get("content"))
        if copy or role != "user" or not self._genuine(text):
            parts = [synthetic(p) for p in parts]
        if not parts:
            self._skip("message item without content", copy=copy)
            return
        info: Json = {"id": mid, "role": "user"}
        if role != "user":
            info["providerRole"] = role
        self.out.append(_draft(info, parts, rec))

    def _genuine(self, text: str) -> bool:
        """User text the user typed: not a harness injection. When the rollout has `user_message`
        events (what the UI showed as typed), tag-like text that none of them matches is injected
        context too (new wrappers appear between Codex versions)."""
        if starts_with_marker(text, CODEX_MARKERS):
            return False
        key = text.strip()
        if self.asked[key] > 0:
            self.asked[key] -= 1
            return True
        return not (self.has_user_events and key.startswith(("<", "#")))

    def _model_output(self, item: Json, rec: Record, mid: str) -> None:
        if self.response is None or (self.assistant is None and not self.has_token_counts):
            self._end_response()
            self.response = mid
        if self.assistant is None:
            info: Json = {"id": mid, "role": "assistant", "providerMessageID": self.response}
            info["providerID"] = self.provider
            if self.model:
                info["modelID"] = self.model
            if self.context_window:
                info["limit"] = {"context": self.context_window}
            self.assistant = _draft(info, [], rec, response=self.response, records=0)
            self.out.append(self.assistant)
            self.carrier = None
        self.assistant.records += 1
        self.assistant.parts.extend(_output_parts(item, self.path, rec.line))
        self.assistant.calls = self.assistant.calls or as_str(item.get("type")) in CALL_ITEMS
        self._turn_id(self.assistant, item)

    def _output(self, item: Json, rec: Record, mid: str) -> None:
        if not nonempty_str(item.get("call_id")):
            raise TranscriptError(self.path, f"{item.get('type')} without a call_id", line=rec.line)
        self.assistant = None  # model output after this belongs to a new stored entry
        if self.carrier is None:
            self.carrier = _draft({"id": mid, "role": CARRIER_ROLE}, [], rec, records=0)
            self.out.append(self.carrier)
        self.carrier.records += 1
        self.carrier.parts.append(_strip_metadata(item))
        self._turn_id(self.carrier, item)

    def _turn_id(self, draft: Draft, item: Json) -> None:
        turn = nonempty_str((as_dict(item.get(HARNESS_METADATA)) or {}).get("turn_id"))
        if turn is not None:
            draft.info.setdefault("turnID", turn)

    def _end_response(self) -> None:
        self.response = None
        self.assistant = None
        self.carrier = None

    # -- events -------------------------------------------------------------------------------
    def _event(self, payload: Json, rec: Record) -> None:
        etype = as_str(payload.get("type")) or "(no type)"
        if etype == "token_count":
            self._usage(payload, rec)
            return
        if etype in TURN_EVENTS:
            self.context_window = as_count(payload.get("model_context_window")) or self.context_window
            self._end_response()
        if etype == "thread_rolled_back":
            self._roll_back(as_count(payload.get("num_turns")) or 0)
            self.report.skip("event_msg thread_rolled_back (applied)")
            return
        if etype in ("user_message", "agent_message", "agent_reasoning"):
            self.report.skip(f"event_msg {etype} (UI copy of a response item)")
            return
        self.report.skip(f"event_msg {etype}")

    def _usage(self, payload: Json, rec: Record) -> None:
        info = as_dict(payload.get("info"))
        tokens = _tokens_of(as_dict(info.get("last_token_usage")) if info else None)
        if info is not None:
            self.context_window = as_count(info.get("model_context_window")) or self.context_window
        entries = self._latest_response()
        if self.context_window:
            for entry in entries:
                entry.info.setdefault("limit", {"context": self.context_window})
        if tokens is None or not entries or any(e.usage is not None for e in entries):
            self.report.skip("event_msg token_count (no step to attach it to)")
        else:
            entries[-1].usage = tokens
            entries[-1].records += 1
        if info is not None:
            self._end_response()

    def _latest_response(self) -> list[Draft]:
        """The stored entries of the newest provider response since the last user message (its
        entries are contiguous but for tool carriers between them)."""
        entries: list[Draft] = []
        for draft in reversed(self.out):
            if draft.role == "user" or (
                entries and draft.role == "assistant" and draft.response != entries[0].response
            ):
                break
            if draft.role == "assistant":
                entries.insert(0, draft)
        return entries

    def _roll_back(self, turns: int) -> None:
        self._end_response()
        starts = [i for i, d in enumerate(self.out) if _is_genuine_user(d)]
        if turns <= 0 or not starts:
            return
        cut = starts[-turns] if turns <= len(starts) else starts[0]
        removed = self.out[cut:]
        del self.out[cut:]
        self.report.skip("rolled back by thread_rolled_back", sum(d.records for d in removed))
        self.report.adjust("message removed by thread_rolled_back", len(removed))

    # -- compaction ---------------------------------------------------------------------------
    def _compacted(self, payload: Json, rec: Record) -> None:
        mid = f"{self.session.session_id}.L{rec.line}"
        summary = as_str(payload.get("message")) or ""
        history = as_list(payload.get("replacement_history"))
        if history is None:
            recent = _recent_user_texts(self.out, COMPACT_USER_TOKENS)
            texts = [*recent, summary] if summary else recent
            self._boundary(rec, mid, texts=texts)
            return
        encrypted = next(
            (
                i.get("encrypted_content")
                for i in history
                if isinstance(i, dict) and as_str(i.get("type")) in COMPACTION_ITEMS
            ),
            None,
        )
        self._boundary(rec, mid, encrypted=encrypted, texts=[summary] if summary else [])
        for index, item in enumerate(history):
            item = as_dict(item)
            if item is None or as_str(item.get("type")) in COMPACTION_ITEMS:
                continue
            self._item(item, rec, f"{mid}.{index}", copy=True)
        for draft in self.out:
            if draft.id.startswith(mid + ".") and draft.records:
                draft.records = 0  # the compacted record is counted once, on its boundary
        self._end_response()

    def _boundary(
        self, rec: Record, mid: str, *, encrypted: Any = None, texts: list[str] | None = None
    ) -> None:
        self._end_response()
        part: Json = {"type": "compaction"}
        if isinstance(encrypted, str) and encrypted:
            part["encrypted_content"] = encrypted
        parts = [part] + [synthetic({"type": "text", "text": t}) for t in texts or [] if t]
        self.out.append(_draft({"id": mid, "role": "user"}, parts, rec))


def _draft(
    info: Json, parts: list[Json], rec: Record, *, response: str | None = None, records: int = 1
) -> Draft:
    return Draft(
        info,
        parts,
        line=rec.line,
        created=epoch_ms(rec.data.get("timestamp")),
        response=response,
        records=records,
        provider_items=True,
    )


def _is_genuine_user(draft: Draft) -> bool:
    return draft.role == "user" and any(
        p.get("type") == "text" and not p.get("synthetic") and p.get("text") for p in draft.parts
    )


def _recent_user_texts(drafts: list[Draft], budget_tokens: int) -> list[str]:
    """The newest genuine user texts fitting in `budget_tokens` (4 characters a token), oldest first."""
    chosen: list[str] = []
    remaining = budget_tokens
    for draft in reversed(drafts):
        if not _is_genuine_user(draft):
            continue
        text = "\n".join(
            p["text"] for p in draft.parts if p.get("type") == "text" and isinstance(p.get("text"), str)
        )
        cost = math.ceil(len(text) / 4)
        if cost > remaining:
            break
        chosen.append(text)
        remaining -= cost
    return chosen[::-1]


def _strip_metadata(item: Json) -> Json:
    return {k: v for k, v in item.items() if k != HARNESS_METADATA}


def _input_part(block: Any, path: Path, line: int) -> Json:
    """A user/developer content block: `input_text` as a MiMo text part, others as they are."""
    part = as_dict(block)
    if part is None or not nonempty_str(part.get("type")):
        raise TranscriptError(path, "message content items must be objects with a type", line=line)
    if part["type"] == "input_text":
        return {"type": "text", "text": part.get("text", "")}
    return part


def _output_parts(item: Json, path: Path, line: int) -> list[Json]:
    """An output item as parts: an assistant message gives one text part per `output_text`."""
    if item.get("type") != "message":
        if as_str(item.get("type")) in CALL_ITEMS and not nonempty_str(item.get("call_id")):
            raise TranscriptError(path, f"{item.get('type')} without a call_id", line=line)
        return [_strip_metadata(item)]
    blocks = as_list(item.get("content"))
    if blocks is None:
        raise TranscriptError(path, "assistant message without a content list", line=line)
    openai: Json = {}  # MiMo's place for provider data on a text part (metadata.openai.itemId)
    if (item_id := nonempty_str(item.get("id"))) is not None:
        openai["itemId"] = item_id
    if (phase := nonempty_str(item.get("phase"))) is not None:
        openai["phase"] = phase
    parts = []
    for block in blocks:
        part = as_dict(block)
        if part is None or not nonempty_str(part.get("type")):
            raise TranscriptError(path, "message content items must be objects with a type", line=line)
        if part["type"] == "output_text":
            extra = {k: v for k, v in part.items() if k not in ("type", "text") and v not in (None, [], {})}
            meta = {**openai, **extra}
            part = {"type": "text", "text": part.get("text", "")}
            if meta:
                part["metadata"] = {"openai": meta}
        parts.append(part)
    return parts


def _tokens_of(last: Json | None) -> Json | None:
    """`token_count.info.last_token_usage`: the usage of the response it ends."""
    if last is None:
        return None
    return usage.from_openai_counts(
        last.get("input_tokens"),
        last.get("output_tokens"),
        last.get("cached_input_tokens"),
        last.get("reasoning_output_tokens"),
        last.get("total_tokens"),
    )
