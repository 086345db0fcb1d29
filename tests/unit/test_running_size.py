"""The request size's running sum (`core.request.running_size`) equals a full recount after any sequence of
changes: new prompts and steps, streamed parts, removed parts and messages, usage that arrives late,
entries of one provider response, compaction marks, checkpoint boundaries with a digested range,
late results of digested calls, other agents' slices, a switch to sequence mode (D3) and moved
creation times. Every counting is checked: reasoning of the current turn only or of every turn,
each provider family."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from mimo_sidecar.core.estimate.provider_count import GENERIC, Counting
from mimo_sidecar.core.request.running_size import view_request_tokens
from mimo_sidecar.core.request.size import request_tokens
from mimo_sidecar.core.session.message import Json
from mimo_sidecar.core.session.session import MessageUpsert, PartUpsert, Session, SyncBatch
from mimo_sidecar.core.words import ANTHROPIC, GOOGLE, MAIN_AGENT, OPENAI
from tests.fuzz import examples

COUNTINGS = [
    Counting(ANTHROPIC),
    Counting(ANTHROPIC, keeps_all_reasoning=True),
    Counting(OPENAI),
    Counting(OPENAI, keeps_all_reasoning=True, reasoning_input=False),
    Counting(GOOGLE),
    Counting(GENERIC),
]
AGENTS = [MAIN_AGENT, "explore-1"]


class Model:
    """A session and the host-side bookkeeping that random changes need."""

    def __init__(self) -> None:
        self.session = Session("s")
        self.ids: list[str] = []
        self.calls: list[tuple[str, str]] = []  # (issuing message, call ID)
        self.n = 0
        self.clock = 1_000

    def next_id(self, kind: str = "msg") -> str:
        self.n += 1
        # MiMo-v2-like IDs ascend; "legacy" ones switch the session to sequence mode (D3).
        return f"msg_{self.n:012d}abcdefghijklmn" if kind == "msg" else f"legacy-{self.n}"

    def add(self, info: Json, parts: list[Json]) -> None:
        self.session.apply(SyncBatch(upsert_messages=[MessageUpsert(info, parts)]))
        self.ids.append(info["id"])


def _info(model: Model, role: str, agent: str, created: int | None = None, **extra: Any) -> Json:
    model.clock += 1_000
    info: Json = {"id": extra.pop("id", None) or model.next_id(), "role": role}
    info["time"] = {"created": model.clock if created is None else created}
    if agent != MAIN_AGENT:
        info["agentID"] = agent
    info.update(extra)
    return info


def _reasoning(text: str, family: str) -> Json:
    if family == "anthropic":
        return {"type": "reasoning", "text": text, "metadata": {"anthropic": {"signature": "sig" * 20}}}
    return {
        "type": "reasoning",
        "text": text,
        "metadata": {"openai": {"itemId": "rs_1", "reasoningEncryptedContent": "e" * 90}},
    }


def _usage(output: int, reasoning: int) -> Json:
    return {"input": 1000, "output": output, "reasoning": reasoning, "cache": {"read": 0, "write": 0}}


texts = st.text(alphabet="ab cd\n🙂中", min_size=0, max_size=40)
ops = st.one_of(
    st.tuples(st.just("prompt"), st.sampled_from(AGENTS), texts),
    st.tuples(
        st.just("step"),
        st.sampled_from(AGENTS),
        texts,
        st.booleans(),
        st.sampled_from(["anthropic", "openai"]),
        st.integers(0, 3),
    ),
    st.tuples(st.just("split-step"), st.sampled_from(AGENTS), texts, st.booleans()),
    st.tuples(st.just("result"), st.integers(0, 50), texts),
    st.tuples(st.just("stream"), st.integers(0, 50), texts),
    st.tuples(st.just("usage"), st.integers(0, 50), st.integers(0, 500), st.integers(0, 300)),
    st.tuples(st.just("remove-part"), st.integers(0, 50)),
    st.tuples(st.just("remove"), st.integers(0, 50)),
    st.tuples(st.just("mark"), st.integers(0, 50)),
    st.tuples(st.just("boundary"), st.integers(0, 50), st.integers(0, 50)),
    st.tuples(st.just("legacy-id"), texts),
    st.tuples(st.just("move"), st.integers(0, 50), st.integers(-5_000, 5_000)),
)


def _pick(model: Model, index: int) -> str | None:
    live = [i for i in model.ids if model.session.get(i) is not None]
    return live[index % len(live)] if live else None


def apply(model: Model, op: tuple[Any, ...]) -> None:
    kind, s = op[0], model.session
    if kind == "prompt":
        model.add(_info(model, "user", op[1]), [{"id": "p1", "type": "text", "text": op[2] or "go"}])
    elif kind == "step":
        _, agent, text, with_usage, family, entries = op
        response = f"resp-{model.n}"
        for k in range(max(1, entries)):
            call = f"call-{model.n}-{k}"
            parts: list[Json] = [
                _reasoning(text, family),
                {"id": "t", "type": "text", "text": text or "ok"},
                {
                    "id": "c",
                    "type": "tool",
                    "callID": call,
                    "tool": "bash",
                    "state": {"status": "completed", "input": {"cmd": text}, "output": text * 3},
                },
            ]
            extra: Json = {"providerMessageID": response, "finish": "tool-calls"}
            if with_usage and k == max(1, entries) - 1:
                extra["tokens"] = _usage(50 + len(text), 40)
            model.add(_info(model, "assistant", agent, **extra), parts)
    elif kind == "split-step":
        _, agent, text, answered = op
        call = f"split-{model.n}"
        info = _info(model, "assistant", agent, finish="tool-calls", tokens=_usage(10, 0))
        model.add(
            info,
            [
                {"id": "u", "type": "tool_use", "id_": call, "name": "read", "input": {"p": text}}
                | {"id": call}
            ],
        )
        model.calls.append((info["id"], call))
        if answered:
            model.add(
                _info(model, "user", agent),
                [{"id": "r", "type": "tool_result", "tool_use_id": call, "content": text}],
            )
    elif kind == "result":
        if model.calls:
            _, call = model.calls[op[1] % len(model.calls)]
            model.add(
                _info(model, "user", MAIN_AGENT),
                [{"id": "r", "type": "tool_result", "tool_use_id": call, "content": op[2]}],
            )
    elif kind == "stream":
        mid = _pick(model, op[1])
        if mid is not None:
            s.apply(
                SyncBatch(upsert_parts=[PartUpsert(mid, {"id": "t", "type": "text", "text": op[2] or "x"})])
            )
    elif kind == "usage":
        mid = _pick(model, op[1])
        m = s.get(mid) if mid else None
        if m is not None and m.role == "assistant":
            info = {**m.info, "tokens": _usage(op[2], op[3])}
            s.apply(SyncBatch(upsert_messages=[MessageUpsert(info)]))
    elif kind == "remove-part":
        mid = _pick(model, op[1])
        m = s.get(mid) if mid else None
        if m is not None and m.parts:
            s.apply(SyncBatch(remove_parts=[(mid, m.parts[0].get("id", "t"))]))
    elif kind == "remove":
        mid = _pick(model, op[1])
        if mid is not None and s.get(mid) is not None:
            s.apply(SyncBatch(remove_messages=[mid]))
    elif kind == "mark":
        mid = _pick(model, op[1])
        m = s.get(mid) if mid else None
        if m is not None:
            for i, part in enumerate(m.parts):
                if part.get("type") == "tool" and isinstance(part.get("state"), dict):
                    part["state"]["time"] = {"compacted": 5}
                    s.refresh_part(m, i)
                elif part.get("type") == "tool_result":
                    part["time"] = {"compacted": 5}
                    s.refresh_part(m, i)
    elif kind == "boundary":
        covered, digested = _pick(model, op[1]), _pick(model, op[2])
        if covered is None or digested is None:
            return
        order = s.ordering()
        if order.key(covered) is None or order.key(digested) is None:
            return
        if order.key(covered) > order.key(digested):
            covered, digested = digested, covered
        checkpoint = {
            "id": "cp",
            "type": "checkpoint",
            "coveredUpTo": covered,
            "digestUpTo": digested,
            "interruptedCalls": [c for _, c in model.calls[-2:]],
        }
        # Back-dated right after the watermark, as an inserted boundary is: the steps after it
        # are listed after it, and the digested ones among them are left out by the collapse.
        watermark = s.get(covered)
        assert watermark is not None
        info = _info(model, "user", MAIN_AGENT, created=watermark.created + 1, id=covered + "~")
        model.add(info, [checkpoint, {"id": "txt", "type": "text", "text": "rebuilt"}])
    elif kind == "legacy-id":
        model.add(
            _info(model, "user", MAIN_AGENT, id=model.next_id("legacy")),
            [{"id": "p", "type": "text", "text": op[1] or "q"}],
        )
    elif kind == "move":
        mid = _pick(model, op[1])
        m = s.get(mid) if mid else None
        if m is not None:
            info = {**m.info, "time": {"created": max(0, m.created + op[2])}}
            s.apply(SyncBatch(upsert_messages=[MessageUpsert(info)]))


def assert_recount_equal(s: Session, counting: Counting) -> None:
    assert view_request_tokens(s, MAIN_AGENT, counting) == request_tokens(
        s.context_view(), s.ordering(), counting
    )


def check(model: Model) -> None:
    s = model.session
    for agent in AGENTS:
        for counting in COUNTINGS:
            expected = request_tokens(s.context_view(agent), s.ordering(), counting)
            assert view_request_tokens(s, agent, counting) == expected, (agent, counting)


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(st.lists(ops, min_size=1, max_size=4), min_size=1, max_size=25))
def test_running_sum_equals_a_full_recount_after_any_changes(batches: list[list[tuple[Any, ...]]]) -> None:
    model = Model()
    for batch in batches:
        for op in batch:
            apply(model, op)
        check(model)


def test_a_step_after_a_prompt_counts_only_the_new_turns_reasoning() -> None:
    """The turn in progress moves with a new prompt: reasoning of earlier turns stops counting for a
    provider that drops it, and the running sum follows without a recount."""
    model = Model()
    counting = Counting(ANTHROPIC)
    apply(model, ("prompt", MAIN_AGENT, "first"))
    apply(model, ("step", MAIN_AGENT, "thinking hard", True, "anthropic", 1))
    before = view_request_tokens(model.session, MAIN_AGENT, counting)
    apply(model, ("prompt", MAIN_AGENT, "second"))
    after = view_request_tokens(model.session, MAIN_AGENT, counting)
    full = request_tokens(model.session.context_view(), model.session.ordering(), counting)
    assert after == full
    # The first step's hidden reasoning (output 63 less its visible text) no longer counts.
    prompt_share = request_tokens(model.session.context_view()[-1:], model.session.ordering(), counting)
    assert after < before + prompt_share


def test_a_change_is_followed_without_walking_the_view(monkeypatch: Any) -> None:
    """After the first count, a streamed part re-counts that message only (a recount would call
    `collapse`, which the follow path never does)."""
    import mimo_sidecar.core.request.running_size as running

    model = Model()
    for i in range(30):
        apply(model, ("prompt", MAIN_AGENT, f"q{i}"))
        apply(model, ("step", MAIN_AGENT, f"a{i}", True, "openai", 2))
    counting = Counting(OPENAI)
    view_request_tokens(model.session, MAIN_AGENT, counting)
    calls = []
    real = running.collapse
    monkeypatch.setattr(running, "collapse", lambda *a: calls.append(a) or real(*a))
    apply(model, ("stream", len(model.ids) - 1, "streamed text"))
    apply(model, ("prompt", MAIN_AGENT, "next"))
    assert view_request_tokens(model.session, MAIN_AGENT, counting) == request_tokens(
        model.session.context_view(), model.session.ordering(), counting
    )
    assert calls == []


def _rebuilt(model: Model) -> tuple[str, str]:
    """A main view whose boundary digested a split step (its call unanswered): (issuer, call)."""
    apply(model, ("prompt", MAIN_AGENT, "start"))
    apply(model, ("step", MAIN_AGENT, "before", True, "anthropic", 1))
    watermark = model.ids[-1]
    apply(model, ("split-step", MAIN_AGENT, "digested", False))
    issuer, call = model.calls[-1]
    apply(model, ("boundary", model.ids.index(watermark), model.ids.index(issuer)))
    return issuer, call


def test_a_late_result_of_a_digested_call_is_counted_with_its_step() -> None:
    """D20: a result arriving after the rebuild for a call the digest covered brings the step back;
    the running sum recounts rather than counting the carrier alone."""
    model = Model()
    _rebuilt(model)
    counting = Counting(ANTHROPIC)
    s = model.session
    view_request_tokens(s, MAIN_AGENT, counting)
    apply(model, ("result", len(model.calls) - 1, "the late output"))
    assert_recount_equal(s, counting)


def test_entries_of_one_response_are_counted_in_listing_order() -> None:
    """A response's hidden reasoning is the usage record's less the visible reasoning of the entries
    listed up to the one holding it: moving an entry after it changes the figure."""
    model = Model()
    apply(model, ("prompt", MAIN_AGENT, "start"))
    apply(model, ("step", MAIN_AGENT, "long visible reasoning text", True, "anthropic", 3))
    s, counting = model.session, Counting(ANTHROPIC)
    view_request_tokens(s, MAIN_AGENT, counting)
    first, holder = s.get(model.ids[-3]), s.get(model.ids[-1])
    assert first is not None and holder is not None
    before = view_request_tokens(s, MAIN_AGENT, counting)
    # The entry holding the usage record now sorts first: no visible reasoning is listed before it.
    s.apply(
        SyncBatch(upsert_messages=[MessageUpsert({**holder.info, "time": {"created": first.created - 1}})])
    )
    assert view_request_tokens(s, MAIN_AGENT, counting) > before
    assert_recount_equal(s, counting)


def test_a_digested_step_changed_after_the_rebuild_stays_left_out() -> None:
    model = Model()
    issuer, _ = _rebuilt(model)
    s, counting = model.session, Counting(ANTHROPIC)
    view_request_tokens(s, MAIN_AGENT, counting)
    s.apply(
        SyncBatch(upsert_parts=[PartUpsert(issuer, {"id": "late", "type": "text", "text": "more " * 50})])
    )
    assert_recount_equal(s, counting)


def test_prompts_edited_or_listed_inside_the_turn() -> None:
    """An older prompt edited leaves the turn where it is; one listed inside the turn in progress
    splits it (the reasoning before it stops counting)."""
    model = Model()
    s, counting = model.session, Counting(ANTHROPIC)
    apply(model, ("prompt", MAIN_AGENT, "old"))
    apply(model, ("step", MAIN_AGENT, "x", True, "anthropic", 1))
    apply(model, ("prompt", MAIN_AGENT, "current"))
    apply(model, ("step", MAIN_AGENT, "y", True, "anthropic", 1))
    apply(model, ("step", MAIN_AGENT, "z", True, "anthropic", 1))
    view_request_tokens(s, MAIN_AGENT, counting)
    apply(model, ("stream", 0, "the old prompt, edited"))
    assert_recount_equal(s, counting)
    between = s.get(model.ids[-1])
    assert between is not None
    model.add(
        _info(model, "user", MAIN_AGENT, created=between.created - 1),
        [{"id": "p", "type": "text", "text": "wait"}],
    )
    assert_recount_equal(s, counting)
