"""The view in the host's shape (`hostView`, protocol.md "The view in the host's shape") over stdio.

A host whose own converter sends its stored messages (OpenCode: the sidecar's data model is its
message shape) asks `request/build` and `checkpoint/prepare` for `view`, the `{info, parts}`
messages a request is built from. On an inline session rebuilt once, with results cleared and
steps collapsed, the view must be exactly what the converted request says: the same stored
messages in the same order (`sources`), nothing the collapse left out, the compaction marks the
insert reported, every text and every call of `messages` and nothing more, the boundary's label
where its `checkpoint` part was and the memory reminder at the end of the newest user message. The
stored copies stay as they were (a second build answers the same), and without `hostView` there is
no `view`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from mimo_sidecar.client import SidecarClient

pytestmark = pytest.mark.e2e
Json = dict[str, Any]
SID = "ses_e2e_host_view"
LABEL = "Summary of previous conversation from checkpoint files:"
PLACEHOLDER = "[Old tool result content cleared]"
T0 = 1_760_000_000_000


def message(mid: str, role: str, created: int, parts: list[Json], **info: Any) -> Json:
    return {
        "info": {"id": mid, "sessionID": SID, "role": role, "time": {"created": created}, **info},
        "parts": [
            {"id": f"{mid}-p{i}", "sessionID": SID, "messageID": mid, **p} for i, p in enumerate(parts)
        ],
    }


def read_step(n: int) -> Json:
    """An assistant step that says something and reads a large file."""
    at = T0 + n * 1000
    tool = {
        "type": "tool",
        "callID": f"call_{n}",
        "tool": "read",
        "state": {
            "status": "completed",
            "input": {"filePath": f"src/f{n}.ts"},
            "output": f"FILE-{n} " + "export const x = 1\n" * 600,
            "title": f"src/f{n}.ts",
            "metadata": {},
            "time": {"start": at, "end": at + 1},
        },
    }
    tokens = {"input": 40_000 * n, "output": 100, "reasoning": 0, "cache": {"read": 0, "write": 0}}
    return message(f"m{n:02d}", "assistant", at, [{"type": "text", "text": f"Reading f{n}."}, tool],
                   finish="tool-calls", tokens=tokens)


def history() -> list[Json]:
    ask = message("m00", "user", T0, [{"type": "text", "text": "Find why the build fails in src/."}])
    later = message("m03", "user", T0 + 3000, [
        {"type": "text", "text": "Also check f4 and f5, please."},
        {"type": "text", "text": "(a note the host shows the user only)", "ignored": True},
    ])
    return [ask, read_step(1), read_step(2), later, read_step(4), read_step(5)]


def texts_and_calls(view: list[Json]) -> list[tuple[str, str]]:
    """What a host converter like OpenCode's sends of a view: each text (not `ignored`, not empty)
    and each call, in order."""
    out: list[tuple[str, str]] = []
    for m in view:
        for p in m["parts"]:
            if p["type"] == "text" and not p.get("ignored") and p["text"]:
                out.append(("text", p["text"]))
            elif p["type"] == "tool":
                out.append(("call", p["callID"]))
    return out


def request_texts_and_calls(messages: list[Json]) -> list[tuple[str, str]]:
    """The same of an `ai-sdk` request: its texts and its calls (not the results)."""
    out: list[tuple[str, str]] = []
    for m in messages:
        content = m["content"] if isinstance(m["content"], list) else [{"type": "text", "text": m["content"]}]
        for item in content:
            if item["type"] == "text":
                out.append(("text", item["text"]))
            elif item["type"] == "tool-call":
                out.append(("call", item["toolCallId"]))
    return out


@pytest.fixture(scope="module")
def rebuilt(raw_sidecar: SidecarClient) -> Iterator[tuple[SidecarClient, Json]]:
    """The session after one rebuild with a writer: the insert's answer."""
    raw_sidecar.request("session/open", {
        "sessionId": SID, "messages": history(), "createCheckpoint": True, "idsAscending": True,
        "toolPointers": {"sidecarTools": {"prefix": "mimo_"}},
    })
    computed = raw_sidecar.request("rebuild/compute", {"sessionId": SID, "model": {"contextWindow": 200_000}})
    assert computed["trigger"]["shouldRebuild"]
    prepared = raw_sidecar.request("checkpoint/prepare", {"sessionId": SID, "watermark": "m02"})
    raw_sidecar.request("checkpoint/commit", {
        "sessionId": SID, "watermark": prepared["watermark"],
        "content": "# Session checkpoint\n\nTopic: the failing build\n\n## §1 Active intent\n- Fix it.\n",
    })
    inserted = raw_sidecar.request(
        "rebuild/insert", {"sessionId": SID, "reason": "auto", "boundaryMessageId": "m06"}
    )
    assert inserted["outcome"] == "rebuilt"
    yield raw_sidecar, inserted
    raw_sidecar.request("session/close", {"sessionId": SID})


def test_the_view_is_the_request_in_the_hosts_shape(rebuilt: tuple[SidecarClient, Json]) -> None:
    sidecar, inserted = rebuilt
    built = sidecar.request("request/build", {"sessionId": SID, "hostView": True})
    view = built["view"]
    ids = [m["info"]["id"] for m in view]
    # the stored messages the request comes from, in its order, each once; the collapsed ones absent
    assert ids == list(dict.fromkeys(s for group in built["sourceGroups"] for s in group))
    assert ids[0] == inserted["message"]["info"]["id"]
    assert not set(ids) & set(built["collapsedMessageIds"])
    assert "m03" in ids and built["collapsedMessageIds"]  # a user message stays, an assistant one went
    # every text and call of the request, and nothing else (the ignored note is the host's to drop)
    assert texts_and_calls(view) == request_texts_and_calls(built["messages"])
    # the boundary: its label where the checkpoint part was, with that part's IDs; the rest as stored
    stored = inserted["message"]["parts"]
    boundary = view[0]["parts"]
    assert boundary[0] == {"id": stored[0]["id"], "sessionID": SID, "messageID": ids[0], "type": "text",
                           "text": LABEL, "synthetic": True}
    assert boundary[1:] == stored[1:]
    # the memory reminder, at the end of the newest user message in the view's order (the ask after
    # the boundary, which is back-dated to just after its watermark), never stored
    assert built["reminderAdded"]
    newest_user = [m for m in view if m["info"]["role"] == "user"][-1]
    assert newest_user["info"]["id"] == "m03" == ids[1]
    stored_ask = history()[3]["parts"]
    *kept, reminder = newest_user["parts"]
    assert kept == stored_ask and "id" not in reminder
    assert reminder["synthetic"] and reminder["text"].startswith("<system-reminder>")
    assert reminder["messageID"] == "m03" and "mimo_memory" in reminder["text"]
    assert sum(p.get("text", "").startswith("<system-reminder>") for m in view for p in m["parts"]) == 1


def test_the_marks_are_the_inserts(rebuilt: tuple[SidecarClient, Json]) -> None:
    sidecar, inserted = rebuilt
    view = sidecar.request("request/build", {"sessionId": SID, "hostView": True})["view"]
    marked = {(mark["messageId"], mark["callId"]): mark["compactedAt"] for mark in inserted["compacted"]}
    assert marked, "the rebuild cleared no result"
    seen = {
        (m["info"]["id"], p["callID"]): p["state"]["time"].get("compacted")
        for m in view for p in m["parts"] if p["type"] == "tool"
    }
    for key, compacted in seen.items():
        assert compacted == marked.get(key)
    # the output stays stored: a host converter puts the placeholder in, the view keeps the text
    outputs = [p["state"]["output"] for m in view for p in m["parts"] if p["type"] == "tool"]
    assert outputs and all(out.startswith("FILE-") for out in outputs)


def test_the_stored_messages_stay_as_they_were(rebuilt: tuple[SidecarClient, Json]) -> None:
    sidecar, inserted = rebuilt
    first = sidecar.request("request/build", {"sessionId": SID, "hostView": True})
    again = sidecar.request("request/build", {"sessionId": SID, "hostView": True})
    assert again["view"] == first["view"]
    plain = sidecar.request("request/build", {"sessionId": SID})
    assert "view" not in plain and plain["messages"] == first["messages"]
    # the history tool reads the boundary as it is stored: its checkpoint part, no reminder
    around = sidecar.request("tools/call", {"sessionId": SID, "name": "mimo_history",
                                            "arguments": {"operation": "search", "query": "FILE-1"}})
    assert not around["isError"] and "call_1" in around["content"][0]["text"]
    assert inserted["message"]["parts"][0]["type"] == "checkpoint"


def test_the_writers_view_is_its_history_up_to_the_watermark(rebuilt: tuple[SidecarClient, Json]) -> None:
    sidecar, _ = rebuilt
    computed = sidecar.request("rebuild/compute", {"sessionId": SID, "model": {"contextWindow": 200_000}})
    watermark = computed["watermark"]["messageId"]
    built = sidecar.request("request/build", {"sessionId": SID, "purpose": "writer", "hostView": True})
    prepared = sidecar.request("checkpoint/prepare", {"sessionId": SID, "hostView": True})
    try:
        assert prepared["watermark"] == watermark
        assert prepared["view"] == built["view"]
        ids = [m["info"]["id"] for m in prepared["view"]]
        assert ids[-1] == watermark and len(ids) == len(set(ids))
        # no reminder, and the instructions are the host's to send (they are no stored message)
        assert not prepared["reminderAdded"]
        texts = [p.get("text", "") for m in prepared["view"] for p in m["parts"]]
        assert texts and all(prepared["instructions"] not in text for text in texts)
        sent = texts_and_calls(prepared["view"]) + [("text", prepared["instructions"])]
        assert sent == request_texts_and_calls(prepared["messages"])
    finally:
        sidecar.request("checkpoint/writerFinished", {"sessionId": SID, "outcome": "cancelled"})
