"""Session state: atomic batches, revisions, incremental estimates, ordering modes, tasks, actors
(behavior.md#data-model). The service's sessions and writer registry: tests/unit/test_service_sessions.py."""

from __future__ import annotations

import pytest

from mimo_sidecar.core.errors import DomainError
from mimo_sidecar.core.session import message as message_mod
from mimo_sidecar.core.session.message import part_tokens
from mimo_sidecar.core.session.session import (
    DAY_MS,
    MessageUpsert,
    PartUpsert,
    Session,
    SyncBatch,
    batch_from_messages,
)


def mid(n: int) -> str:
    """A MiMo v2 message ID; ascending with n."""
    return f"msg_g{n:016x}AbCdEfGhJ"


def msg(message_id: str, role: str = "user", created: int = 1000, parts: list | None = None, **info) -> dict:
    return {
        "info": {"id": message_id, "role": role, "time": {"created": created}, **info},
        "parts": parts if parts is not None else [text_part(message_id, "p1", "hello")],
    }


def text_part(message_id: str, part_id: str, text: str) -> dict:
    return {"id": part_id, "messageID": message_id, "type": "text", "text": text}


def opened(*messages: dict, **kw) -> Session:
    s = Session("s1", **kw)
    s.apply(batch_from_messages(messages))
    return s


def snapshot(s: Session) -> tuple:
    return (
        s.revision,
        [(m.id, m.seq, [dict(p) for p in m.parts], m.tokens) for m in s.messages()],
        s.total_tokens,
        list(s.tasks),
        list(s.actors),
        dict(s.tool_name_map),
        s.id_mode,
    )


# -- atomic batches ----------------------------------------------------------------------------


def test_batch_with_a_bad_second_item_changes_nothing() -> None:
    s = opened(msg(mid(1)), msg(mid(2), "assistant", 2000))
    before = snapshot(s)
    bad = SyncBatch(
        upsert_messages=[MessageUpsert(**{"info": {"id": mid(3), "role": "user"}, "parts": []})],
        upsert_parts=[
            PartUpsert(mid(1), text_part(mid(1), "p1", "changed")),
            PartUpsert("msg_unknown", text_part("msg_unknown", "p9", "x")),
        ],
        remove_messages=[mid(2)],
        tasks=[{"id": "T1"}],
    )
    with pytest.raises(DomainError) as exc:
        s.apply(bad)
    assert exc.value.code.value == "message-not-found"
    assert exc.value.path == "upsertParts.1.messageId"
    assert snapshot(s) == before


@pytest.mark.parametrize(
    ("batch", "code", "field"),
    [
        (
            SyncBatch(
                upsert_messages=[
                    MessageUpsert({"id": mid(5), "role": "user"}),
                    MessageUpsert({"id": mid(5), "role": "user"}),
                ]
            ),
            "invalid-session-data",
            "upsertMessages.1.info.id",
        ),
        (
            SyncBatch(
                upsert_messages=[MessageUpsert({"id": mid(5), "role": "user", "time": {"created": "x"}})]
            ),
            "invalid-session-data",
            "upsertMessages.0.info.time.created",
        ),
        (SyncBatch(remove_messages=[mid(1), "nope"]), "message-not-found", "removeMessages.1"),
        (
            SyncBatch(upsert_parts=[PartUpsert(mid(1), {"type": "text"})]),
            "invalid-session-data",
            "upsertParts.0.part.id",
        ),
        (
            SyncBatch(
                upsert_parts=[PartUpsert(mid(1), text_part(mid(1), "p2", "x"))], remove_messages=[mid(1)]
            ),
            "invalid-session-data",
            "upsertParts.0.messageId",
        ),
        (
            SyncBatch(upsert_parts=[PartUpsert("nope", text_part("nope", "p2", "x"))]),
            "message-not-found",
            "upsertParts.0.messageId",
        ),
        (
            SyncBatch(
                upsert_parts=[PartUpsert("nope", text_part("nope", "p2", "x"), (), ("messageID",))]
            ),  # a bare part naming its message
            "message-not-found",
            "upsertParts.0.messageID",
        ),
        (
            SyncBatch(upsert_parts=[PartUpsert(mid(1), {"type": "text"}, ())]),
            "invalid-session-data",
            "upsertParts.0.id",
        ),
        (
            SyncBatch(remove_parts=[(mid(1), "p1"), ("nope", "p1")]),
            "message-not-found",
            "removeParts.1.messageId",
        ),
        (
            SyncBatch(tasks=[{"id": "T2"}], tool_name_map={"Read": "read", "Bash": ""}),
            "invalid-session-data",
            "toolNameMap.Bash",
        ),
    ],
)
def test_invalid_batches_are_rejected_whole(batch: SyncBatch, code: str, field: str) -> None:
    s = opened(msg(mid(1)))
    before = snapshot(s)
    with pytest.raises(DomainError) as exc:
        s.apply(batch)
    assert (exc.value.code.value, exc.value.path) == (code, field)
    assert exc.value.message.startswith(f"{field}: ")  # the message names the same field
    assert snapshot(s) == before


@pytest.mark.parametrize(
    ("created", "problem"),
    [
        (0, None),
        (1_767_225_600_000, None),
        (1_767_225_600_000.0, None),  # the same integer, written with a fraction
        (2**53 - 1, None),
        ("x", "type"),
        (True, "type"),
        ([1], "type"),
        (1.5, "fraction"),
        (-5, "negative"),
        (-0.5, "fraction"),
        (2**53, "too-large"),
        (1e300, "too-large"),
    ],
)
def test_time_created_is_a_non_negative_integer_of_milliseconds(created: object, problem: str | None) -> None:
    """behavior.md#messages; over the wire the same rule answers -32602 (tests/e2e/test_sessions.py),
    in process the session refuses what it is given (1005) and applies nothing."""
    assert message_mod.created_problem(created) == problem
    s = opened(msg(mid(1)))
    before = snapshot(s)
    info = {"id": mid(2), "role": "user", "time": {"created": created}}
    batch = SyncBatch(upsert_messages=[MessageUpsert(info)])
    if problem is None:
        s.apply(batch)
        added = s.get(mid(2))
        assert added is not None and added.created == created and added.info is info
        return
    with pytest.raises(DomainError) as exc:
        s.apply(batch)
    assert exc.value.path == "upsertMessages.0.info.time.created" and snapshot(s) == before


def test_each_applied_batch_bumps_the_revision() -> None:
    s = Session("s1")
    assert s.revision == 0
    assert s.apply(batch_from_messages([msg(mid(1))])) == 1
    assert s.apply(SyncBatch()) == 2  # an empty batch still counts
    assert s.apply(SyncBatch(upsert_parts=[PartUpsert(mid(1), text_part(mid(1), "p2", "more"))])) == 3
    assert s.revision == 3


def test_a_part_may_target_a_message_added_by_the_same_batch() -> None:
    s = opened(msg(mid(1)))
    s.apply(
        SyncBatch(
            upsert_messages=[
                MessageUpsert({"id": mid(2), "role": "assistant", "time": {"created": 2000}}, [])
            ],
            upsert_parts=[PartUpsert(mid(2), text_part(mid(2), "a1", "streaming"))],
        )
    )
    assert [p["id"] for p in s.get(mid(2)).parts] == ["a1"]


def test_info_only_update_keeps_parts_and_empty_list_clears_them() -> None:
    s = opened(msg(mid(1)))
    s.apply(
        SyncBatch(
            upsert_messages=[MessageUpsert({"id": mid(1), "role": "user", "time": {"created": 1000}, "x": 1})]
        )
    )
    assert s.get(mid(1)).info["x"] == 1
    assert len(s.get(mid(1)).parts) == 1
    s.apply(SyncBatch(upsert_messages=[MessageUpsert({"id": mid(1), "role": "user"}, [])]))
    assert s.get(mid(1)).parts == [] and s.total_tokens == 0


def test_remove_parts_and_messages() -> None:
    s = opened(
        msg(mid(1), parts=[text_part(mid(1), "a", "x" * 40), text_part(mid(1), "b", "y")]), msg(mid(2))
    )
    s.apply(SyncBatch(remove_parts=[(mid(1), "a"), (mid(1), "missing")], remove_messages=[mid(2)]))
    assert [p["id"] for p in s.get(mid(1)).parts] == ["b"]
    assert s.get(mid(2)) is None
    assert s.total_tokens == part_tokens(text_part(mid(1), "b", "y"))


# -- estimates ---------------------------------------------------------------------------------


def test_estimates_cover_every_field_the_host_sent() -> None:
    part = {"id": "p1", "type": "text", "text": "hi", "unknownField": {"nested": ["kept", 1.5]}}
    s = opened(msg(mid(1), parts=[part]))
    assert s.get(mid(1)).parts[0] is part  # kept as sent, not copied or annotated
    assert s.total_tokens == part_tokens(part)
    assert part_tokens(part) > part_tokens({"id": "p1", "type": "text", "text": "hi"})


def test_streaming_part_upserts_reestimate_only_that_part(monkeypatch: pytest.MonkeyPatch) -> None:
    parts = [text_part(mid(1), f"p{i}", "z" * (100 * i)) for i in range(1, 21)]
    s = opened(msg(mid(1), parts=parts), *[msg(mid(n), created=1000 + n) for n in range(2, 50)])
    calls: list[object] = []

    measured = message_mod.js_json_length_and_plain

    def counting(part: object) -> tuple[int | None, bool]:
        calls.append(part)
        return measured(part)

    total = s.total_tokens
    expected = total - part_tokens(parts[6]) + part_tokens(text_part(mid(1), "p7", "The build fails because"))
    monkeypatch.setattr(message_mod, "js_json_length_and_plain", counting)  # what a part costs
    for chunk in ("The", "The build", "The build fails because"):
        streamed = text_part(mid(1), "p7", chunk)
        s.apply(SyncBatch(upsert_parts=[PartUpsert(mid(1), streamed)]))
    assert len(calls) == 3
    assert all(c["id"] == "p7" for c in calls)  # type: ignore[index]
    assert s.total_tokens == expected
    assert [p["id"] for p in s.get(mid(1)).parts][6] == "p7"  # replaced in place
    s.apply(SyncBatch(upsert_parts=[PartUpsert(mid(1), text_part(mid(1), "p99", "new"))]))
    assert len(calls) == 4 and s.get(mid(1)).parts[-1]["id"] == "p99"  # appended


# -- ordering (behavior.md#creation-order, D3) -------------------------------------------------


def test_listing_order_is_time_created_then_creation_order() -> None:
    s = opened(msg(mid(3), created=500), msg(mid(1), created=2000), msg(mid(2), created=2000))
    assert [m.id for m in s.messages()] == [mid(3), mid(1), mid(2)]
    s.apply(
        SyncBatch(upsert_messages=[MessageUpsert({"id": mid(1), "role": "user", "time": {"created": 100}})])
    )
    assert [m.id for m in s.messages()] == [mid(1), mid(3), mid(2)]


def test_id_mode_switches_to_sequence_mode_for_good() -> None:
    s = opened(msg(mid(2), created=1000), msg(mid(1), created=1000))
    assert s.id_mode is True
    assert [m.id for m in s.messages()] == [mid(1), mid(2)]  # ID order within one millisecond
    s.apply(batch_from_messages([msg("host-uuid-1", created=1000)]))
    assert s.id_mode is False
    # sequence mode: arrival order breaks the tie (mid(2) arrived first)
    assert [m.id for m in s.messages()] == [mid(2), mid(1), "host-uuid-1"]
    assert [s.ordering().key(x) for x in (mid(2), mid(1), "host-uuid-1", "unknown")] == [1, 2, 3, None]
    s.apply(SyncBatch(remove_messages=["host-uuid-1"]))
    assert s.id_mode is False  # permanent


def test_declared_ascending_ids_stay_in_id_mode() -> None:
    s = opened(msg("b", created=1), msg("a", created=1), ids_ascending=True)
    assert s.id_mode is True
    assert [m.id for m in s.messages()] == ["a", "b"]


def test_host_seq_is_used_in_sequence_mode() -> None:
    s = Session("s1")
    s.apply(
        SyncBatch(
            upsert_messages=[
                MessageUpsert({"id": "x", "role": "user"}, [], seq=10),
                MessageUpsert({"id": "y", "role": "user"}, [], seq=5),
            ]
        )
    )
    assert [m.id for m in s.messages()] == ["y", "x"]
    s.apply(batch_from_messages([msg("z", created=0)]))
    assert s.get("z").seq == 11  # the counter continues above the largest host seq


# -- tasks and actors --------------------------------------------------------------------------


def test_listed_tasks_skip_archived_and_sort_by_created_at() -> None:
    now = 100 * DAY_MS
    tasks = [
        {"id": "T2", "status": "open", "created_at": 20},
        {"id": "T1", "status": "done", "created_at": 10, "ended_at": now - 8 * DAY_MS},  # archived (7 days)
        {"id": "T3", "status": "abandoned", "created_at": 5, "ended_at": now - 1 * DAY_MS},
        {"id": "T4", "status": "done", "created_at": 30, "cleanup_after": now},  # archived at now
        {"id": "T5", "status": "in_progress", "created_at": 1, "cleanup_after": now + 1},
    ]
    s = Session("s1")
    s.apply(SyncBatch(tasks=tasks))
    assert [t["id"] for t in s.listed_tasks(now, 7)] == ["T5", "T3", "T2"]
    assert [t["id"] for t in s.listed_tasks(now, 10)] == ["T5", "T3", "T1", "T2"]


def test_the_tool_name_map_is_replaced_whole_or_kept() -> None:
    s = Session("s1")
    s.apply(SyncBatch(tool_name_map={"Read": "read", "Bash": "bash"}))
    s.apply(SyncBatch(tasks=[]))  # absent: kept
    assert s.tool_name_map == {"Read": "read", "Bash": "bash"}
    s.apply(SyncBatch(tool_name_map={"Grep": "grep"}))  # present: replaces, no merge
    assert s.tool_name_map == {"Grep": "grep"}
    s.apply(SyncBatch(tool_name_map={}))
    assert s.tool_name_map == {}


def test_active_actors_are_this_sessions_background_pending_or_running() -> None:
    actors = [
        {"actorID": "a1", "sessionID": "s1", "status": "running", "background": True},
        {"actorID": "a2", "sessionID": "s1", "status": "done", "background": True},
        {"actorID": "a3", "sessionID": "s1", "status": "pending", "background": False},
        {"actorID": "a4", "sessionID": "other", "status": "running", "background": True},
        {"actorID": "a5", "status": "pending", "background": True},
    ]
    s = Session("s1")
    s.apply(SyncBatch(actors=actors))
    assert [a["actorID"] for a in s.active_actors()] == ["a1", "a5"]
