"""The provider rules hold for any session, in every shape and every format, before and after a rebuild.

Hypothesis generates sessions in the four host shapes (inline MiMo/OpenCode, Claude Code's split
Anthropic records, OpenAI Chat, Codex's Responses items) with the traps real transcripts hold:
entries of one response split around the carrier of a parallel call, missing, orphan, duplicate and
late results, thinking and reasoning items, images in results, empty text, text after a call, call
IDs that are too long or have odd characters, steps of another model, in-flight tools. Each session
is built in every format and checked with `formats.rules.check`; then rebuilt (`engine.insert`) and
checked again. The benchmark generator's sessions get the same treatment.
"""

from __future__ import annotations

import itertools
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchmarks.generator import generate_session
from mimo_sidecar.core import engine
from mimo_sidecar.core.config import RebuildConfig
from mimo_sidecar.core.formats import FORMATS, Target
from mimo_sidecar.core.formats.rules import check
from mimo_sidecar.core.memory.files import MemoryRoot
from mimo_sidecar.core.rebuild.collapse import _newest_checkpoint_boundary
from mimo_sidecar.core.session.ids import IdMinter
from mimo_sidecar.core.session.session import Session, batch_from_messages
from tests.fuzz import examples

Json = dict[str, Any]
SHAPES = ("inline", "anthropic", "chat", "responses")
PNG = "iVBORw0KGgo="
SID = "ses_prop"

call_ids = st.one_of(
    st.from_regex(r"call_[A-Za-z0-9]{4,10}", fullmatch=True),
    st.from_regex(r"toolu_[A-Za-z0-9]{80}", fullmatch=True),  # over every length limit
    st.from_regex(r"tool:[a-z]{2,6}\.[0-9]{1,3}", fullmatch=True),  # odd characters
)
prose = st.sampled_from(["", "\n\n", "ok", "reading the file", "done  \n", "第二步", "x" * 300])
results = st.sampled_from(["ok", "error", "missing", "interrupted", "image", "late", "duplicate"])
calls = st.lists(st.tuples(call_ids, st.sampled_from(["read", "bash", "edit"]), results), max_size=3)
steps = st.one_of(
    st.tuples(st.just("user"), prose, st.booleans()),
    st.tuples(
        st.just("assistant"),
        st.fixed_dictionaries(
            {
                "calls": calls,
                "text": prose,
                "text_after": st.booleans(),
                "reasoning": st.sampled_from(["none", "signed", "unsigned", "encrypted"]),
                "split": st.booleans(),  # Claude Code: one entry per block, carriers in between
                "model": st.sampled_from(["m-1", "m-1", "m-2"]),
                "finish": st.sampled_from(["tool-calls", "stop", None]),
            }
        ),
    ),
    st.tuples(st.just("orphan"), call_ids),
)


class _Writer:
    """Turns generated steps into stored messages of one shape."""

    def __init__(self, shape: str) -> None:
        self.shape = shape
        self.messages: list[Json] = []
        self.n = itertools.count(1)
        self.late: list[Json] = []
        self.used: set[str] = set()

    def add(self, role: str, parts: list[Json], **info: Any) -> Json:
        k = next(self.n)
        msg = {
            "info": {"id": f"m{k:04d}", "role": role, "time": {"created": 1_000 + k}, **info},
            "parts": parts,
        }
        self.messages.append(msg)
        return msg

    def user(self, words: str, with_image: bool) -> None:
        parts: list[Json] = [{"type": "text", "text": words}]
        if with_image:
            parts.append(
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}}
            )
        self.add("user", parts)
        for late in self.late:
            self.messages.append(late)
        self.late = []

    def reasoning(self, kind: str) -> list[Json]:
        if kind == "signed":
            if self.shape == "inline":
                return [{"type": "reasoning", "text": "hmm", "metadata": {"anthropic": {"signature": "S"}}}]
            return [{"type": "thinking", "thinking": "hmm", "signature": "S"}]
        if kind == "unsigned":
            return [{"type": "reasoning", "text": "hmm"}]
        if kind == "encrypted" and self.shape == "responses":
            return [{"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "E"}]
        return []

    def assistant(self, spec: Json) -> None:
        calls = [(cid, name, how) for cid, name, how in spec["calls"] if cid not in self.used]
        self.used.update(cid for cid, _, _ in calls)
        text = [{"type": "text", "text": spec["text"]}]
        info = {"providerID": "p", "modelID": spec["model"], "finish": spec["finish"]}
        head = self.reasoning(spec["reasoning"]) + ([] if spec["text_after"] else text)
        tail = text if spec["text_after"] else []
        if self.shape == "inline":
            self.add(
                "assistant", [{"type": "step-start"}, *head, *[self.inline(c) for c in calls], *tail], **info
            )
            return
        uses = [self.use(cid, name) for cid, name, _ in calls]
        if spec["split"] and self.shape == "anthropic" and uses:
            info["providerMessageID"] = f"pm{len(self.messages)}"
            self.add("assistant", [*head, uses[0]], **{**info, "finish": None})
            self.carriers(calls[:1])
            self.add("assistant", [*uses[1:], *tail], **info)
            self.carriers(calls[1:])
        else:
            self.add("assistant", [*head, *uses, *tail], **info)
            self.carriers(calls)

    def inline(self, call: tuple[str, str, str]) -> Json:
        cid, name, how = call
        state: Json = {
            "status": "completed",
            "input": {"path": "a"},
            "output": "out",
            "time": {"start": 0, "end": 1},
        }
        if how == "error":
            state = {"status": "error", "input": {}, "error": "boom", "time": {"start": 0, "end": 1}}
        elif how in ("missing", "late"):
            state = {"status": "running", "input": {}, "time": {"start": 0}}
        elif how == "interrupted":
            state = {"status": "error", "input": {}, "error": "aborted", "metadata": {"interrupted": True}}
        elif how == "image":
            state["attachments"] = [
                {"type": "file", "mime": "image/png", "url": f"data:image/png;base64,{PNG}"}
            ]
        return {"type": "tool", "callID": cid, "tool": name, "state": state}

    def use(self, cid: str, name: str) -> Json:
        if self.shape == "anthropic":
            return {"type": "tool_use", "id": cid, "name": name, "input": {"path": "a"}}
        if self.shape == "chat":
            return {"type": "function", "id": cid, "function": {"name": name, "arguments": '{"path":"a"}'}}
        if name == "edit":
            return {"type": "custom_tool_call", "call_id": cid, "name": name, "input": "*** Begin Patch"}
        return {"type": "function_call", "call_id": cid, "name": name, "arguments": "{}"}

    def result(self, cid: str, how: str) -> Json:
        content: Any = [
            {"type": "text", "text": "shot"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
        ]
        if self.shape == "anthropic":
            part = {
                "type": "tool_result",
                "tool_use_id": cid,
                "content": content if how == "image" else "out",
            }
        else:
            part = {"type": "function_call_output", "call_id": cid, "output": "out"}
        if how in ("error", "interrupted"):
            part["is_error"] = True
        if how == "interrupted":
            part["interrupted"] = True
        return part

    def carriers(self, calls: list[tuple[str, str, str]]) -> None:
        answered = [(cid, how) for cid, _, how in calls if how != "missing"]
        if not answered:
            return
        if self.shape == "chat":
            for cid, how in answered:
                msg = {
                    "info": {"id": "", "role": "tool", "tool_call_id": cid, "is_error": how == "error"},
                    "parts": [{"type": "text", "text": "out"}],
                }
                self.place(msg, how)
            return
        role = "user" if self.shape == "anthropic" else "tool"
        parts = [self.result(cid, how) for cid, how in answered if how != "late"]
        parts += [self.result(cid, how) for cid, how in answered if how == "duplicate"]
        if parts:
            self.add(role, parts)
        for cid, how in answered:
            if how == "late":
                self.place({"info": {"id": "", "role": role}, "parts": [self.result(cid, how)]}, how)

    def place(self, msg: Json, how: str) -> None:
        if how == "late":
            self.late.append(msg)
        else:
            self.messages.append(msg)

    def orphan(self, cid: str) -> None:
        if self.shape == "inline":
            return
        role = "user" if self.shape == "anthropic" else "tool"
        self.add(role, [self.result(cid + "_orphan", "ok")])

    def finish(self) -> list[Json]:
        self.messages += self.late
        for k, msg in enumerate(self.messages):  # ids and times in final list order
            msg["info"]["id"] = f"m{k:04d}"
            msg["info"]["time"] = {"created": 1_000 + 10 * k}
        return self.messages


def session_messages(shape: str, generated: list[tuple[Any, ...]]) -> list[Json]:
    w = _Writer(shape)
    for step in generated:
        if step[0] == "user":
            w.user(step[1], step[2])
        elif step[0] == "assistant":
            w.assistant(step[1])
        else:
            w.orphan(step[1])
    return w.finish()


def check_all(session: Session, agent: str = "main", **build: Any) -> None:
    memory = MemoryRoot(str(MEMORY))
    for fmt in FORMATS:
        res = engine.build(session, memory, RebuildConfig(), agent_id=agent, now_ms=10**13, fmt=fmt, **build)
        target = build.get("target")
        violations = check(
            fmt,
            res.request.messages,
            prefix=res.prefix.request,
            overrides=res.request.overrides,
            thinking=target.thinking if target else None,
            # A history that ends on the model's turn is completed by the host's next user turn.
            open_end=_ends_on_model(res.request.messages),
        )
        assert violations == [], (fmt, violations)


def assert_boundary_found_without_a_walk(session: Session) -> None:
    """The boundary the session names for collapse is the one a walk over the view finds."""
    for agent in {m.agent_id for m in session.messages()} | {"main"}:
        named = session.view_checkpoint_boundary(agent)
        assert named is not ...  # not a forked session
        assert named is _newest_checkpoint_boundary(list(session.context_view(agent))), agent


def _ends_on_model(messages: list[Json]) -> bool:
    last = messages[-1] if messages else {}
    return last.get("role") in ("assistant", "model")


def rebuild(session: Session) -> bool:
    wm = engine.writer_watermark(session)
    if wm is None:
        return False
    session.watermark = wm.id
    res = engine.insert(
        session,
        MemoryRoot(str(MEMORY)),
        RebuildConfig(),
        watermark=wm.id,
        reason="auto",
        now_ms=10**13,
        minter=IdMinter(),
    )
    return res.outcome == "rebuilt"


MEMORY = Path(tempfile.mkdtemp(prefix="mimo-formats-"))
(MEMORY / "sessions" / SID).mkdir(parents=True, exist_ok=True)
(MEMORY / "sessions" / SID / "checkpoint.md").write_text(
    "# Checkpoint\nTopic: t\n\n## §1 Active intent\n\nx\n"
)
PREFIX = {
    "system": ["You are a coding agent."],
    "tools": [{"name": "read", "input_schema": {"type": "object"}}],
}
targets = st.one_of(
    st.none(),
    st.builds(
        Target,
        model_id=st.sampled_from([None, "m-1", "m-2"]),
        thinking=st.sampled_from([None, True, False]),
        images=st.booleans(),
        tool_result_media=st.sampled_from([None, True, False]),
        given=st.just(True),
    ),
)


@settings(max_examples=examples(50), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    shape=st.sampled_from(SHAPES),
    generated=st.lists(steps, min_size=1, max_size=12),
    target=targets,
    cache=st.sampled_from([None, "5m"]),
)
def test_any_session_is_valid_in_every_format_before_and_after_a_rebuild(
    shape: str, generated: list[tuple[Any, ...]], target: Target | None, cache: str | None
) -> None:
    session = Session(SID, "p", request_prefix=PREFIX)
    session.apply(batch_from_messages(session_messages(shape, generated)))
    check_all(session, target=target, cache_ttl=cache)
    assert_boundary_found_without_a_walk(session)
    if rebuild(session):
        check_all(session, target=target, cache_ttl=cache)
        assert_boundary_found_without_a_walk(session)


@pytest.mark.parametrize("shape", ["inline", "anthropic", "openai"])
def test_generated_benchmark_sessions_are_valid_in_every_format(shape: str) -> None:
    data = generate_session(300, 11, shape, session_id=SID, bytes_per_message=500)
    session = Session(SID, data["projectId"], request_prefix=PREFIX)
    session.apply(batch_from_messages(data["messages"]))
    for agent in ("main", "explore-1"):
        check_all(session, agent)
    assert rebuild(session)
    check_all(session, cache_ttl="1h")
    assert_boundary_found_without_a_walk(session)
    assert session.view_checkpoint_boundary() is not None
